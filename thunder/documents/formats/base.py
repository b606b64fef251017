"""The one interface of every document format: a reader gives the text in reading order with a map from each
character back to where it lives; a writer takes replacements of character spans of that text and gives the
document back in its own format.

Offsets count Unicode code points of :attr:`Extracted.text`, as the pipeline's do. A :class:`Segment` is a run of
characters that lives in one place of the document (a text node of an XML part, a line of a PDF page); the
characters between segments (paragraph breaks, tabs) live nowhere and are never written back.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

MIN_SECRET = 2  # shorter replaced texts are not searched for after writing (a single character is everywhere)


class FormatError(ValueError):
    """A document that cannot be read or written safely; the message is one line giving the reason."""


@dataclass(frozen=True)
class Location:
    """Where one character lives: the package part (``word/document.xml``, ``page 3``), the paragraph (or line)
    within the part, the run (text node) within the part and the offset within that run."""

    part: str
    paragraph: int
    run: int
    offset: int


@dataclass(frozen=True)
class Segment:
    """Characters ``[start, end)`` of the text that live in one run of one part."""

    start: int
    end: int
    part: str
    paragraph: int
    run: int


@dataclass(frozen=True)
class Replacement:
    """Characters ``[start, end)`` of the extracted text replaced by ``text``."""

    start: int
    end: int
    text: str


@dataclass
class Extracted:
    """A document read by its format's reader: its text in reading order and where each character lives."""

    path: Path
    format: str  # the suffix of the format that read it: ".docx", ".hwpx", ".pdf"
    data: bytes  # the file as read: the writer works from these bytes, never from the file again
    text: str
    segments: list[Segment] = field(default_factory=list)

    def location(self, index: int) -> Location | None:
        """Where character ``index`` lives; ``None`` for a separator (paragraph break, tab) that lives nowhere."""
        k = bisect.bisect_right([s.start for s in self.segments], index) - 1
        if k < 0 or index >= self.segments[k].end:
            return None
        s = self.segments[k]
        return Location(s.part, s.paragraph, s.run, index - s.start)


def run_edits(extracted: Extracted, replacements: Sequence[Replacement]) -> dict[tuple[str, int], list[Replacement]]:
    """Each replacement made inside the runs that held its characters, as edits per ``(part, run)`` in run offsets.

    The replacement text goes into the run holding the first replaced character (its formatting is kept); the
    replaced characters of every later run are removed, so a name split across runs is replaced whole. A
    replacement of separators only changes nothing. Raises :class:`FormatError` for overlapping or out-of-range
    replacements.
    """
    edits: dict[tuple[str, int], list[Replacement]] = {}
    starts = [s.start for s in extracted.segments]
    previous = 0
    for rep in sorted(replacements, key=lambda r: (r.start, r.end)):
        if not previous <= rep.start <= rep.end <= len(extracted.text):
            raise FormatError(f"replacement {rep.start}:{rep.end} overlaps another or lies outside the text")
        previous = rep.end
        first = max(bisect.bisect_right(starts, rep.start) - 1, 0)
        placed = False
        for segment in extracted.segments[first:]:
            if segment.start > rep.end:
                break
            if rep.end > rep.start:
                inside = segment.start < rep.end and segment.end > rep.start
            else:  # an insertion: into the first run that touches its place
                inside = not placed and segment.start <= rep.start <= segment.end
            if not inside:
                continue
            local = (max(rep.start, segment.start) - segment.start, min(rep.end, segment.end) - segment.start)
            edits.setdefault((segment.part, segment.run), []).append(Replacement(*local, "" if placed else rep.text))
            placed = True
    return edits


def apply(text: str, edits: Iterable[Replacement]) -> str:
    """``text`` with disjoint ``edits`` (in its own offsets) made."""
    pieces, position = [], 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        pieces += [text[position : edit.start], edit.text]
        position = edit.end
    return "".join(pieces) + text[position:]


def secrets_of(text: str, replacements: Sequence[Replacement], extra: Mapping[str, str]) -> dict[str, str]:
    """The texts that must not survive anywhere in the written document, each with what replaces it where it is
    found outside the mapped text (document properties, attributes): the replaced texts, a suffix the original and
    the replacement share (an unchanged particle) left off, then ``extra`` (the spans' own texts); longest first.
    A text the de-identified text itself still holds is none: the pipeline kept it there on purpose (legal text, a
    common noun where the model saw no identifier, inside a longer word: ``신호`` in ``신호등``)."""
    kept = apply(text, replacements)
    found: dict[str, str] = {}
    for rep in replacements:
        original, new = text[rep.start : rep.end], rep.text
        while original and new and original[-1] == new[-1]:
            original, new = original[:-1], new[:-1]
        if len(original.strip()) >= MIN_SECRET:
            found.setdefault(original, new)
    for original, new in extra.items():
        if len(original.strip()) >= MIN_SECRET:
            found.setdefault(original, new)
    return dict(sorted(((s, new) for s, new in found.items() if s not in kept), key=lambda item: -len(item[0])))


def scrub(value: str, secrets: Mapping[str, str]) -> str:
    """``value`` with every secret replaced (longest first)."""
    for original, new in secrets.items():
        if original in value:
            value = value.replace(original, new)
    return value


def survivor(value: str, secrets: Iterable[str]) -> str | None:
    """The first secret still in ``value``, or ``None``."""
    return next((s for s in secrets if s in value), None)
