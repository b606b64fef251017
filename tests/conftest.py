"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from thunder.data import DEMO_TOKENIZER
from thunder.taxonomy import LabelSet, Taxonomy
from thunder.tokenizer import ThunderTokenizer

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_CORPUS = REPO_ROOT.parent / "shared" / "data" / "snu-thunder-deid"


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
