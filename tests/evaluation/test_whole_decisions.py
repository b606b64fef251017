"""tools/whole_decisions.py: published held-out decisions replaced per kind (propagation, words cut inside), and the
same decisions with their court marks filled: names and organisations leaked, on a tiny random model."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from pathlib import Path

import pytest
from helpers import small_tokenizer, build_tiny_model

from thunder.data import Recipe
from thunder.documents.corpus import held_out
from thunder.model.export import write_export
from thunder.taxonomy import LabelSet, Taxonomy

TOOLS = Path(__file__).resolve().parents[2] / "tools"
sys.path.insert(0, str(TOOLS))  # the tools import their shared helpers as scripts do
_SPEC = importlib.util.spec_from_file_location("whole_decisions", TOOLS / "whole_decisions.py")
assert _SPEC is not None and _SPEC.loader is not None
tool = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(tool)

CRIMINAL = ("【피 고 인】 피고인 1\n피고인 1은 공소외 2와 함께 ○○병원 앞 신호등에서 만났다. 공소외 2는 010-1234-5678로 "
            "전화하였다.\n판사 김철수")
CIVIL = "원고 甲은 피고 ○○○에게 돈을 빌려주었다. 소외 1은 그 자리에 있었다."


def _export(tmp_path: Path, holdout: float) -> Path:
    tokenizer, label_set = small_tokenizer(), LabelSet(Taxonomy.load(), "label", "IO")
    recipe = dataclasses.replace(Recipe(), mention_holdout=holdout).to_dict()
    return write_export(tmp_path / f"export-{holdout}", build_tiny_model(tokenizer, label_set), tokenizer, label_set,
                        "token-classification", recipe=recipe)  # fmt: skip


def test_published_and_filled_figures_per_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = [i for i in (f"2020고단{n}" for n in range(500)) if held_out(i)]
    records = [{"id": ids[0], "kind": "criminal", "date": "2020-05-01", "text": CRIMINAL},
               {"id": ids[1], "kind": "civil", "date": "2021-05-01", "text": CIVIL},
               {"id": "2020가단0", "kind": "civil", "date": "2021-05-01", "text": CIVIL}]  # fmt: skip
    corpus = tmp_path / "decisions.jsonl"
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    assert not held_out("2020가단0")  # the training share: never read here
    out, cache = tmp_path / "figures.json", tmp_path / "cache"
    model = str(_export(tmp_path, 0.1))
    args = ["--model", model, "--corpus", str(corpus), "--precedents", str(corpus), "--cache", str(cache)]
    assert tool.main([*args, "--json", str(out)]) == 0
    figures = json.loads(out.read_text(encoding="utf-8"))
    held = figures["published"]["legal-ko held-out"]
    assert held["all"]["documents"] == 2 and set(held) == {"all", "civil", "criminal"}
    assert figures["published"]["precedents (tuned on)"]["all"]["documents"] == 3
    assert held["criminal"]["replaced"] >= len("010-1234-5678")  # the phone number's recognizer at least
    assert held["criminal"].get("names", 0) == 0  # the judge's name stays, as courts publish it
    filled = figures["filled"]["all"]
    # 피고인 1, 공소외 2 (one entity each, two marks), ○○○, 甲, 소외 1 are names; ○○병원 an institution
    assert filled["names"]["mentions"] == 7 and filled["organisations"]["mentions"] == 1
    assert len(filled["leaked_names"]) == filled["names"]["leaked"]  # each leak listed with its text
    assert len(filled["leaked_organisations"]) == filled["organisations"]["leaked"]
    assert set(figures["filled"]) == {"all", "civil", "criminal"}
    printed = capsys.readouterr().out
    assert "| legal-ko held-out | criminal | 1 |" in printed and "names leaked" in printed
    assert sorted(p.name for p in cache.iterdir()) == ["filled.json", "legal-ko.json", "precedents.json"]
    policy = '{"propagate_evidence": 0, "keep_officials": []}'  # a policy variant, read from the cache
    assert tool.main([*args, "--policy", policy, "--json", str(out)]) == 0
    named = json.loads(out.read_text(encoding="utf-8"))["published"]["legal-ko held-out"]["criminal"]
    assert named["names"] == len("김철수")  # the judge's name, a person's name by Mecab-ko, now replaced
    assert "| legal-ko held-out | criminal | 1 |" in capsys.readouterr().out
    assert tool.main([*args, "--development", "5", "--json", str(out)]) == 0  # the training share instead
    development = json.loads(out.read_text(encoding="utf-8"))
    assert development["published"]["legal-ko training sample"]["all"]["documents"] == 1  # 2020가단0 alone
    assert development["filled"]["all"]["names"]["mentions"] == 3  # its 甲, ○○○ and 소외 1
    assert "Decisions of the training sample with filled marks (1 decisions)" in capsys.readouterr().out
    assert {"filled-train5.json", "legal-ko-train5.json"} <= {p.name for p in cache.iterdir()}
    assert tool.main([*args, "--development", "0"]) == 2
    assert "--development must be a number of decisions of 1 or more" in capsys.readouterr().err


def test_a_model_without_unseen_mentions_or_a_bad_policy_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = str(_export(tmp_path, 0.0))
    assert tool.main(["--model", model]) == 2
    assert "holds back no mentions" in capsys.readouterr().err
    assert tool.main(["--model", model, "--policy", '{"propagate_evidence": 2}']) == 2
    assert "propagate_evidence must lie in [0, 1]" in capsys.readouterr().err


def test_names_whose_last_syllable_reads_as_a_verb() -> None:
    assert tool.verb_like("정미하") and not tool.verb_like("김철수")
