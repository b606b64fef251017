"""The annotated corpus and its train/val/test split: by document, stratified by case type, from a fixed seed."""

from __future__ import annotations

import math
import random
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Sequence

from thunder.documents.annotation import AnnotatedDocument, iter_corpus
from thunder.seeds import stable_seed

SPLITS = ("train", "val", "test")


def check_split(split: Sequence[float]) -> None:
    """Refuse fractions that are not three non-negative shares (train, val, test) summing to 1."""
    if len(split) != 3 or any(f < 0 for f in split) or not math.isclose(sum(split), 1.0, abs_tol=1e-6):
        raise ValueError(f"split must be three non-negative fractions (train, val, test) summing to 1, got {split}")


def split_documents(
    documents: Sequence[AnnotatedDocument], fractions: Sequence[float], seed: int
) -> dict[str, list[AnnotatedDocument]]:
    """Split by document into train/val/test, stratified by ``case_type``, reproducible from ``seed``.

    Within each case type documents are ordered by ``doc_id``, shuffled with ``seed`` and cut by ``fractions``
    (rounded, the test share taking the remainder), so every case type keeps its share in every split.
    """
    groups: dict[str, list[AnnotatedDocument]] = defaultdict(list)
    for doc in documents:
        groups[doc.case_type or ""].append(doc)
    result: dict[str, list[AnnotatedDocument]] = {name: [] for name in SPLITS}
    for case_type in sorted(groups):
        docs = sorted(groups[case_type], key=lambda doc: doc.doc_id)
        random.Random(stable_seed("split", seed, case_type)).shuffle(docs)
        n_train = round(fractions[0] * len(docs))
        n_val = min(round(fractions[1] * len(docs)), len(docs) - n_train)
        if fractions[2] == 0:
            n_val = len(docs) - n_train
        result["train"] += docs[:n_train]
        result["val"] += docs[n_train : n_train + n_val]
        result["test"] += docs[n_train + n_val :]
    return result


def read_corpus(dirs: Sequence[str | Path]) -> list[AnnotatedDocument]:
    """Every annotated judgment under ``dirs`` (see :func:`thunder.documents.annotation.iter_corpus`); errors name the path."""
    documents: list[AnnotatedDocument] = []
    for directory in dirs:
        if not Path(directory).exists():
            raise FileNotFoundError(f"corpus directory {directory} does not exist")
        documents.extend(iter_corpus(directory))
    seen: dict[str, AnnotatedDocument] = {}
    for doc in documents:
        if doc.doc_id in seen and seen[doc.doc_id].text != doc.text:
            warnings.warn(
                f"two different documents share doc_id {doc.doc_id!r} ({seen[doc.doc_id].source} and {doc.source}):"
                " synthesis seeds depend on doc_id, so they get the same mention choices",
                stacklevel=2,
            )
        seen[doc.doc_id] = doc
    return documents
