"""Fixtures of the de-identification tests: a tokenizer of their own texts and label-level IO tags (the shared ones
are the demo tokenizer and category-level BIO tags)."""

from __future__ import annotations

import pytest
from helpers import small_tokenizer

from thunder.language.tokenizer import ThunderTokenizer
from thunder.taxonomy import LabelSet, Taxonomy


@pytest.fixture(scope="session")
def tokenizer() -> ThunderTokenizer:
    return small_tokenizer()


@pytest.fixture(scope="session")
def label_set(taxonomy: Taxonomy) -> LabelSet:
    return LabelSet(taxonomy, "label", "IO")
