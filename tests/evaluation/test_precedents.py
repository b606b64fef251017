"""The published-precedent evaluation set stays whole: enough decisions, several kinds, unique ids, whole texts
with their provenance, and ``thunder evaluate`` reads it as documents without identifiers."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from thunder.evaluation.gold import read_gold
from thunder.taxonomy import Taxonomy

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "precedents" / "precedents.jsonl"
KINDS = {"civil", "criminal", "administrative", "family", "tax", "patent"}
SOURCE = re.compile(r"^[\w.-]+/[\w.-]+:[^@]+\.(?:md|txt)@[0-9a-f]{40}$")


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


def test_at_least_fifty_whole_decisions_of_several_kinds(records: list[dict]) -> None:
    assert len(records) >= 50
    kinds = Counter(record["kind"] for record in records)
    assert set(kinds) <= KINDS
    assert sum(count >= 2 for count in kinds.values()) >= 5, kinds
    assert min(len(record["text"]) for record in records) >= 1000
    ids = [record["id"] for record in records]
    assert len(set(ids)) == len(ids)


def test_every_record_names_its_court_date_and_source(records: list[dict]) -> None:
    for record in records:
        assert record["court"] and record["title"], record["id"]
        date.fromisoformat(record["date"])
        assert SOURCE.match(record["source"]), record["source"]
        text = record["text"]
        assert "\r" not in text and not re.search(r"</?[a-zA-Z]+[^>]*>", text), record["id"]  # no markup left
        assert text == text.strip() and "【" in text, record["id"]
    assert len({record["source"].split(":")[0] for record in records}) >= 2  # two independent sources


def test_evaluate_reads_the_set_as_judgments_without_identifiers(records: list[dict]) -> None:
    documents = list(read_gold(DATA, Taxonomy.load()))
    assert [d.doc_id for d in documents] == [r["id"] for r in records]
    assert all(d.spans == () for d in documents)
