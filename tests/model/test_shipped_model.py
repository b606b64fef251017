"""The model Thunder ships (models/small, installed by the README's set-up command): found by name and by default,
verified as every model is (fingerprint, self-test), small enough for the repository, run on its int8 ONNX graph, and
de-identifying a whole judgment: every person named in it and every structured identifier replaced."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from thunder.cli import main
from thunder.model import packages

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "judgments" / "criminal-drunk-driving.txt"
MAX_BYTES = 50 * 2**20  # the repository's budget for the shipped model

pytestmark = [
    pytest.mark.usefixtures("one_thread"),
    pytest.mark.skipif(packages.DEFAULT_MODEL not in packages.installed(), reason="models/small is not installed"),
]


@pytest.fixture(scope="module")
def shipped():
    from thunder.deid.pipeline import Deidentifier

    return Deidentifier.from_pretrained()


@pytest.fixture(scope="module")
def example_gold():
    """The example judgment's gold spans: it is a packaged whole judgment filled as ``thunder evaluate`` fills it."""
    from thunder.data import Recipe
    from thunder.evaluation.gold import load_documents
    from thunder.taxonomy import Taxonomy

    judgments = REPO / "thunder" / "resources" / "judgments" / "annotated"
    doc = next(d for d in load_documents(Recipe(data_dir=str(judgments)), Taxonomy.load())
               if d.doc_id.endswith("01_drunk-driving"))  # fmt: skip
    assert doc.text == EXAMPLE.read_text(encoding="utf-8"), "examples/ differ: python tools/make_examples.py"
    return doc


def test_the_shipped_model_is_the_default_and_found_by_name() -> None:
    path = Path(packages.resolve(None))
    assert path == Path(packages.resolve("small")) == REPO / "models" / "small" / "thunder_model_small" / "model"
    size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    assert size <= MAX_BYTES, f"the shipped model holds {size / 2**20:.1f} MB"


def test_the_shipped_model_is_verified_and_runs_its_int8_graph(shipped) -> None:
    from thunder.model.inference import OnnxRuntime
    from thunder.model.integrity import missed_mentions, sentences
    from thunder.model.loader import Artefact

    loaded = Artefact.open(packages.resolve(None)).classifier()  # fingerprint and self-test checked, graph too
    total = sum(len(s["mentions"]) for s in sentences())
    # the card's self-test on the int8 graph: 6 of the 9; it misses the two addresses, whose upper levels (서울
    # 마포구) it leaves to the policy, and one name with no role word before it
    assert total - len(missed_mentions(loaded.self_test)) >= 6
    info = json.loads((Path(packages.resolve(None)) / "thunder.json").read_text(encoding="utf-8"))
    assert info["fingerprint_format"] == 2 and info["onnx"]["precision"] == "int8"  # the graph under the fingerprint
    assert isinstance(shipped.runtime, OnnxRuntime)
    assert shipped.operating_point.threshold == 0.35


def test_the_shipped_model_replaces_every_name_and_structured_identifier_of_a_whole_judgment(shipped, example_gold):
    from thunder.taxonomy import Taxonomy

    labels = Taxonomy.load().labels
    result = shipped(example_gold.text)
    leaked = [s for s in example_gold.spans if example_gold.text[s.start : s.end] in result.text
              and (s.label == "내국인이름" or labels[s.label].tier1 == "direct")]  # fmt: skip
    assert leaked == []
    replaced = sum(s.end - s.start for s in result.spans)
    gold = sum(s.end - s.start for s in example_gold.spans)
    assert replaced <= 1.5 * gold  # the judgment's legal text is kept


def test_commands_run_the_shipped_model_without_model(tmp_path: Path, capsys) -> None:
    main(["deid", str(EXAMPLE), "--out", str(tmp_path / "out")])
    written = (tmp_path / "out" / EXAMPLE.name).read_text(encoding="utf-8")
    assert "김현주" not in written and "971007-1544399" not in written
    assert re.search(r"피 고 인 [A-Z]{1,2} \([A-Z]{1,2}\), 택배기사", written)
    assert "recognizers only" not in capsys.readouterr().err
