"""Shared fixtures."""

from __future__ import annotations

import importlib.resources
import json
import shutil
from pathlib import Path

import pytest
import torch
from helpers import TOKENIZER_32K, release_tags

from thunder.data import DEMO_TOKENIZER, Recipe
from thunder.evaluation.gold import load_documents
from thunder.language.tokenizer import ThunderTokenizer
from thunder.synthesis.synthesizer import SynthesizedDocument
from thunder.taxonomy import LabelSet, Taxonomy

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_CORPUS = REPO_ROOT.parent / "shared" / "data" / "snu-thunder-deid"
PRECEDENTS = REPO_ROOT / "benchmarks" / "precedents" / "precedents.jsonl"


@pytest.fixture(scope="session")
def shared_corpus() -> Path:
    """The SNU Thunder-DeID working copy beside the clone; skips the test where it is absent."""
    if not (SHARED_CORPUS / "annotated").is_dir():
        pytest.skip(f"shared corpus not found at {SHARED_CORPUS} (place the SNU Thunder-DeID release there)")
    return SHARED_CORPUS


@pytest.fixture(scope="session")
def taxonomy() -> Taxonomy:
    """The packaged default taxonomy."""
    return Taxonomy.load()


@pytest.fixture(scope="session")
def tokenizer_dir() -> Path:
    """The packaged demo tokenizer (Mecab-ko + BPE trained on the demo corpus); read only."""
    return DEMO_TOKENIZER


@pytest.fixture(scope="session")
def tokenizer(tokenizer_dir: Path) -> ThunderTokenizer:
    return ThunderTokenizer.from_pretrained(tokenizer_dir)


@pytest.fixture(scope="session")
def label_set(taxonomy: Taxonomy) -> LabelSet:
    """Category-level BIO tags of the default taxonomy."""
    return LabelSet(taxonomy, granularity="category", scheme="BIO")


@pytest.fixture()
def one_thread():
    """Tiny models run faster on one thread, and the CI machine is shared."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def packaged_judgments(taxonomy: Taxonomy) -> list[SynthesizedDocument]:
    """The packaged whole judgments with gold spans, filled as the default recipe fills them."""
    root = Path(str(importlib.resources.files("thunder") / "resources" / "judgments" / "annotated"))
    return list(load_documents(Recipe(data_dir=str(root)), taxonomy))


@pytest.fixture(scope="session")
def precedent_texts() -> list[str]:
    """The texts of the published precedents (already de-identified by the court: a name span there is an error)."""
    lines = PRECEDENTS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines if line.strip()]


@pytest.fixture(scope="session")
def release_dir(tmp_path_factory) -> Path:
    """A small random DebertaV2ForTokenClassification in the release's layout: 595 labels, the 32k tokenizer."""
    from transformers import DebertaV2Config, DebertaV2ForTokenClassification

    tags = release_tags()
    path = tmp_path_factory.mktemp("release")
    config = DebertaV2Config(
        vocab_size=32000, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=512, relative_attention=True, position_buckets=32, pos_att_type=["p2c", "c2p"],
        position_biased_input=False, type_vocab_size=0, pad_token_id=0,
        id2label=dict(enumerate(tags)), label2id={tag: i for i, tag in enumerate(tags)},
    )  # fmt: skip
    torch.manual_seed(0)
    model = DebertaV2ForTokenClassification(config).eval()
    with torch.no_grad():  # O against 내국인이름 and 호 (an alias of 호실), decided by the hidden state
        model.classifier.weight.zero_()
        model.classifier.bias.fill_(-20.0)
        model.classifier.bias[[tags.index("O"), tags.index("내국인이름"), tags.index("호")]] = 0.0
        model.classifier.weight[tags.index("내국인이름")] = torch.randn(32) * 3
        model.classifier.weight[tags.index("호")] = torch.randn(32) * 3
    model.save_pretrained(path, safe_serialization=True)
    for file in TOKENIZER_32K.iterdir():
        shutil.copy(file, path / file.name)
    return path
