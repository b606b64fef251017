"""Views of a text: the text rewritten for reading, with the way back to the original characters.

A judgment may be written decomposed (NFD, as some Mac and HWP exports write Hangul: ``한`` as ``ᄒ ᅡ ᆫ``); every
reader of Thunder (the recognizers, Mecab-ko, the tokenizer, the model, the publication policy) reads composed
Hangul, and would take the letters of a decomposed text for symbols it does not know. :func:`composed` gives the
text composed (NFC) as a :class:`TextView`: what is found in it maps back to the original characters
(:meth:`TextView.original_span`), and what replaces it is written back in the original's own form
(:meth:`TextView.written`: decomposed where the original is). The recognizers' normalised view
(:mod:`thunder.identifiers.normalize`) is a :class:`TextView` too.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping, Sequence

# the Hangul medial vowels and final consonants (conjoining jamo): composed with the jamo before them
_HANGUL_VOWELS, _HANGUL_FINALS = range(0x1161, 0x1176), range(0x11A8, 0x11C3)


@dataclass(frozen=True)
class TextView:
    """A text rewritten (``text``) and the way back to the ``original``.

    ``changes`` lists, in order, ``(view_start, original_start, view_length, original_length)`` of every stretch the
    view rewrote (``view_length`` 0: removed); between changes, view and original advance together. A character of
    a rewritten stretch comes from the whole stretch.
    """

    original: str
    text: str
    changes: tuple[tuple[int, int, int, int], ...] = ()
    _view_starts: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _original_starts: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_view_starts", tuple(change[0] for change in self.changes))
        object.__setattr__(self, "_original_starts", tuple(change[1] for change in self.changes))

    @classmethod
    def of_edits(cls, original: str, edits: Mapping[int, tuple[int, str]]) -> "TextView":
        """The view of ``original`` where each edit ``start -> (end, becomes)`` rewrites ``original[start:end]`` as
        ``becomes`` (an edit starting inside an earlier one is left out)."""
        parts, changes, shift, last = [], [], 0, 0
        for start in sorted(edits):
            end, becomes = edits[start]
            if start < last:
                continue
            parts += (original[last:start], becomes)
            changes.append((start + shift, start, len(becomes), end - start))
            shift += len(becomes) - (end - start)
            last = end
        if not changes:
            return cls(original, original)
        parts.append(original[last:])
        return cls(original, "".join(parts), tuple(changes))

    def _origin(self, position: int) -> tuple[int, int]:
        """The original characters ``[start, end)`` that view character ``position`` comes from."""
        i = bisect.bisect_right(self._view_starts, position) - 1
        if i < 0:
            return position, position + 1
        view_start, original_start, view_length, original_length = self.changes[i]
        if position < view_start + view_length:
            return original_start, original_start + original_length
        start = original_start + original_length + position - (view_start + view_length)
        return start, start + 1

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the view's span ``[start, end)``: every original character that made it, removed
        ones between them included (an empty span: the place before view character ``start``)."""
        if not self.changes:
            return start, end
        first = self._origin(start)[0] if start < len(self.text) else len(self.original)
        return (first, first) if end <= start else (first, self._origin(end - 1)[1])

    def view_span(self, start: int, end: int) -> tuple[int, int]:
        """The view's span of the original span ``[start, end)``: every view character made from one of its
        characters (an original span that only removed characters made: an empty span)."""
        if not self.changes:
            return start, end
        i = bisect.bisect_right(self._original_starts, start) - 1
        first = start if i < 0 else _to_view(self.changes[i], start, False)
        if end <= start:
            return first, first
        i = bisect.bisect_right(self._original_starts, end - 1) - 1
        last = end if i < 0 else _to_view(self.changes[i], end - 1, True)
        return first, max(first, last)

    def view_scores(self, scores: Sequence[float]) -> list[float]:
        """Per-character ``scores`` of the original as scores of the view's characters (the highest of the original
        characters each comes from)."""
        if not self.changes:
            return list(scores)
        return [max(scores[a:b], default=0.0) for a, b in map(self._origin, range(len(self.text)))]

    def written(self, start: int, end: int, new: str) -> str:
        """``new`` in place of the view's ``[start, end)``, in the original's own form there: what ``new`` keeps of
        the view's text at its two ends as the original writes it, the rest decomposed (NFD) where the original
        writes that stretch decomposed."""
        old = self.text[start:end]
        if not self.changes:
            return new
        head = 0
        while head < min(len(old), len(new)) and old[head] == new[head]:
            head += 1
        tail = 0
        while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
            tail += 1
        a, b = self.original_span(start, start + head)
        c, d = self.original_span(end - tail, end)
        middle = new[head : len(new) - tail]
        replaced = self.original[b:c]
        if replaced != self.text[start + head : end - tail] and unicodedata.is_normalized("NFD", replaced):
            middle = unicodedata.normalize("NFD", middle)  # the original writes it decomposed there
        return self.original[a:b] + middle + self.original[c:d]


def _to_view(change: tuple[int, int, int, int], position: int, end: bool) -> int:
    """Where original character ``position``, at or after ``change``, stands in the view: its first view position,
    or (``end``) the view position after it."""
    view_start, original_start, view_length, original_length = change
    if position < original_start + original_length:
        return view_start + view_length if end else view_start
    return view_start + view_length + position - (original_start + original_length) + end


@lru_cache(maxsize=1)
def _composing() -> frozenset[str]:
    """The characters of combining class 0 that compose with the character before them in NFC (the second halves of
    the canonical compositions: Hangul medial vowels and final consonants, a few Indic vowel signs) or that
    decompose into a combining mark first: no composition boundary stands before them."""
    found = {chr(code) for code in (*_HANGUL_VOWELS, *_HANGUL_FINALS)}
    for code in range(0x110000):
        char = chr(code)
        decomposition = unicodedata.decomposition(char)
        if not decomposition or decomposition.startswith("<"):
            continue
        parts = [chr(int(part, 16)) for part in decomposition.split()]
        if len(parts) == 2 and unicodedata.normalize("NFC", "".join(parts)) == char:
            found.add(parts[1])
        if unicodedata.combining(unicodedata.normalize("NFD", char)[0]):
            found.add(char)
    return frozenset(char for char in found if not unicodedata.combining(char))


def composed(text: str) -> TextView:
    """``text`` composed (NFC), with the way back; ``text`` itself (no changes) where it is composed already.

    The text is composed piece by piece between composition boundaries (before a character of combining class 0
    that composes with nothing before it), so each composed character maps back to the characters it was made of.
    """
    if unicodedata.is_normalized("NFC", text):
        return TextView(text, text)
    composing = _composing()
    edits: dict[int, tuple[int, str]] = {}
    start = 0
    for position in range(1, len(text) + 1):
        if position < len(text) and (unicodedata.combining(text[position]) or text[position] in composing):
            continue
        piece = text[start:position]
        if not unicodedata.is_normalized("NFC", piece):
            edits[start] = (position, unicodedata.normalize("NFC", piece))
        start = position
    return TextView.of_edits(text, edits)


_LETTER_SPACED = re.compile(r"(?<![가-힣 ])[가-힣](?: [가-힣]){3,}(?![가-힣])")  # 서 울 중 앙 지 방 법 원


def letter_spaced_runs(text: str) -> list[tuple[str, list[int]]]:
    """The letter-spaced runs of Hangul in ``text`` (a judgment's headings space every syllable: ``서 울 중 앙 지 방 법
    원``; four syllables or more, one space between each), each as its syllables joined and where each one stands."""
    runs = []
    for match in _LETTER_SPACED.finditer(text):
        positions = [match.start() + i for i, char in enumerate(match.group()) if char != " "]
        runs.append(("".join(text[i] for i in positions), positions))
    return runs
