"""Loading recognizers (built-in names, ``module.Class`` paths, ``{class_path, init_args}``) and merging their spans.

The recognizers themselves are the catalogue :mod:`thunder.identifiers` (one module per identifier); the types
they share (:class:`ScoredSpan`, :class:`Recognizer`, :class:`PatternRecognizer`) live in
:mod:`thunder.identifiers.base` and are re-exported here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from thunder.deid.overlaps import Overlap, resolve_overlaps
from thunder.deid.recognizers.masked_name import MaskedNameRecognizer
from thunder.deid.recognizers.named_in_role import NamedInRoleRecognizer
from thunder.deid.recognizers.named_in_table import NamedInTableRecognizer
from thunder.identifiers import CATALOGUE
from thunder.identifiers.base import PatternRecognizer, Recognizer, ScoredSpan
from thunder.model.decoding import widen_to_latin_runs
from thunder.plugins import load_part
from thunder.taxonomy import Taxonomy

__all__ = ["RECOGNIZERS", "PatternRecognizer", "Recognizer", "ScoredSpan", "load_recognizers", "recognize", "register"]

RECOGNIZERS: dict[str, type[Recognizer]] = {
    **{identifier.recognizer.name: identifier.recognizer for identifier in CATALOGUE.values() if identifier.recognizer},
    NamedInRoleRecognizer.name: NamedInRoleRecognizer,  # names where a judgment's wording says one stands
    NamedInTableRecognizer.name: NamedInTableRecognizer,  # names in a table's column of people
    MaskedNameRecognizer.name: MaskedNameRecognizer,  # names masked in part (김○○)
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
    """Spans of all recognizers, each grown over a run of Latin letters and digits it cuts (``010-1234-0001kd12``:
    the letters glued to a number go with it; :func:`~thunder.model.decoding.widen_to_latin_runs`); of overlapping
    ones the highest score (then the longest) stays (``Overlap.HIGHEST_SCORE``: one reading of a digit run, never
    two)."""
    found = []
    for span in (span for recognizer in recognizers for span in recognizer.find(text)):
        start, end = widen_to_latin_runs(text, span.start, span.end)
        found.append(span if (start, end) == (span.start, span.end) else replace(span, start=start, end=end))
    return resolve_overlaps(found, Overlap.HIGHEST_SCORE)
