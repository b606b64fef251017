"""Loading recognizers (built-in names, ``module.Class`` paths, ``{class_path, init_args}``) and merging their spans.

The recognizers themselves are the catalogue :mod:`thunder.identifiers` (one module per identifier); the types
they share (:class:`ScoredSpan`, :class:`Recognizer`, :class:`PatternRecognizer`) live in
:mod:`thunder.identifiers.base` and are re-exported here.
"""

from __future__ import annotations

import bisect
from typing import Sequence

from thunder.identifiers import CATALOGUE
from thunder.identifiers.base import PatternRecognizer, Recognizer, ScoredSpan
from thunder.plugins import load_part
from thunder.taxonomy import Taxonomy

__all__ = ["RECOGNIZERS", "PatternRecognizer", "Recognizer", "ScoredSpan", "load_recognizers", "recognize", "register"]

RECOGNIZERS: dict[str, type[Recognizer]] = {
    identifier.recognizer.name: identifier.recognizer for identifier in CATALOGUE.values() if identifier.recognizer
}


def register(cls: type[Recognizer]) -> type[Recognizer]:
    """Class decorator adding a recognizer to :data:`RECOGNIZERS` under its ``name``."""
    RECOGNIZERS[cls.name] = cls
    return cls


def load_recognizers(
    specs: Sequence[str | dict | Recognizer] | None = None, taxonomy: Taxonomy | None = None
) -> list[Recognizer]:
    """Recognizers from names in :data:`RECOGNIZERS`, ``module.Class`` paths, ``{"class_path", "init_args"}``
    dicts or instances (:func:`thunder.plugins.load_part`); ``None`` gives all built-in recognizers. Classes that take
    a ``taxonomy`` get ``taxonomy``, from which they read the label they emit (see :class:`PatternRecognizer`)."""
    return [
        load_part(spec, "recognizer", Recognizer, RECOGNIZERS, context={"taxonomy": taxonomy})
        for spec in (list(RECOGNIZERS) if specs is None else specs)
    ]


def recognize(text: str, recognizers: Sequence[Recognizer]) -> list[ScoredSpan]:
    """Spans of all recognizers; overlapping spans keep the highest score (then the longest)."""
    found = sorted(
        (span for recognizer in recognizers for span in recognizer.find(text)),
        key=lambda s: (-s.score, -(s.end - s.start), s.start),
    )
    kept: list[ScoredSpan] = []  # disjoint, sorted by start
    starts: list[int] = []
    for span in found:
        i = bisect.bisect_right(starts, span.start)
        if (i and kept[i - 1].end > span.start) or (i < len(kept) and kept[i].start < span.end):
            continue
        starts.insert(i, span.start)
        kept.insert(i, span)
    return kept
