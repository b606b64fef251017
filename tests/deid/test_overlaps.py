"""Overlaps and conflict resolution: the named overlap strategies."""

from __future__ import annotations

import pytest

from thunder.deid.overlaps import Overlap, resolve_overlaps
from thunder.identifiers.base import ScoredSpan


def test_overlap_strategies_are_named_and_differ() -> None:
    spans = [
        ScoredSpan(0, 6, "전화번호", 0.9, "phone_number"),
        ScoredSpan(4, 12, "계좌번호", 0.95, "bank_account_number"),  # overlaps the first, more confident
        ScoredSpan(20, 24, "이름", 0.5, "model"),
    ]
    union = resolve_overlaps(spans, Overlap.UNION)
    assert [(s.start, s.end, s.label) for s in union] == [(0, 12, "계좌번호"), (20, 24, "이름")]  # nothing left out
    best = resolve_overlaps(reversed(spans), Overlap.HIGHEST_SCORE)
    assert [(s.start, s.end, s.label) for s in best] == [(4, 12, "계좌번호"), (20, 24, "이름")]  # one reading
    assert resolve_overlaps(spans, "union") == union  # the strategy's name works too
    with pytest.raises(ValueError, match="'first' is not a valid Overlap"):
        resolve_overlaps(spans, "first")
