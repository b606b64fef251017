"""Shared fixtures."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

import pytest
import torch

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
