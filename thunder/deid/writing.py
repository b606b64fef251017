"""The de-identified text written out: each replacement in its place, the particle after it made to agree (also after
closing tags and after a parenthetical that follows it), and the original's own writing kept around it (decomposed
Hangul stays decomposed: :meth:`thunder.language.views.TextView.written`)."""

from __future__ import annotations

import itertools
import os
from typing import Sequence

from thunder.identifiers.base import ScoredSpan
from thunder.language.markup import closing_markup
from thunder.language.particles import fix_particle, particle_choice
from thunder.language.views import TextView


def common_suffix(a: str, b: str) -> int:
    """The length of the longest common end of ``a`` and ``b``."""
    return len(os.path.commonprefix([a[::-1], b[::-1]]))


def fix_following(replacement: str, following: str) -> str:
    """``following`` with the particle after the replacement made to agree, after the closing tags between them too
    (``</b>는``)."""
    closing = closing_markup(following)
    return following[:closing] + fix_particle(replacement, following[closing:]) if following else following


def fix_after_parentheses(gaps: list[str], replacements: Sequence[str]) -> list[str]:
    """The particle after a parenthetical that follows a replacement made to agree with that replacement
    (``A(주민등록번호 B)은`` -> ``A(주민등록번호 B)는``, ``A(남, 35세)은`` -> ``A(남, 35세)는``); the gaps (gap ``i``
    follows replacement ``i - 1``), the one with that particle corrected."""
    gaps = list(gaps)
    for i in range(1, len(gaps)):
        if not gaps[i].startswith("(") or particle_choice(gaps[i]):  # (으)로: a particle for either ending
            continue
        depth = 0
        for j in range(i, len(gaps)):
            for position, char in enumerate(gaps[j]):
                depth += {"(": 1, ")": -1}.get(char, 0)
                if depth == 0:
                    cut = position + 1
                    gaps[j] = gaps[j][:cut] + fix_following(replacements[i - 1], gaps[j][cut:])
                    break
            else:
                continue
            break
    return gaps


def written_text(view: TextView, spans: Sequence[ScoredSpan], gaps: Sequence[str], replacements: Sequence[str]) -> str:
    """The output: gap ``i`` (before span ``i``) and the replacements in their places, each written as
    ``view.original`` writes that place (:meth:`~thunder.language.views.TextView.written`)."""
    if not view.changes:
        return assemble(gaps, replacements)[0]
    parts, position = [], 0
    for gap, span, replacement in itertools.zip_longest(gaps, spans, replacements):
        end = span.start if span is not None else len(view.text)
        parts.append(view.written(position, end, gap))
        if span is not None:
            parts.append(view.written(span.start, span.end, replacement))
            position = span.end
    return "".join(parts)


def assemble(gaps: Sequence[str], replacements: Sequence[str]) -> tuple[str, list[tuple[str, int, int, int]]]:
    """The output text and its segments ``(kind, index, start, end)``: gap ``i`` follows replacement ``i - 1``."""
    parts, segments, position = [], [], 0
    for i, gap in enumerate(gaps):
        if i:
            replacement = replacements[i - 1]
            parts.append(replacement)
            segments.append(("replacement", i - 1, position, position + len(replacement)))
            position += len(replacement)
        parts.append(gap)
        segments.append(("gap", i, position, position + len(gap)))
        position += len(gap)
    return "".join(parts), segments

