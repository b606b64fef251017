"""The non-identifier step: text the model's spans may never replace, in one place.

Five kinds of text are never an identifier, whatever the model says:

- **legal text** (:class:`thunder.language.legal.LegalText`, on by default): statute references and names, courts, procedural
  roles and terms, exhibits, precedent citations, case numbers, plus any words a user adds;
- **protected words** (off by default): common words a model may mistake for an identifier (CCTV, KTX, ATM, legal
  terms such as 신원미상), after the Thunder-DeID release's fixed list (its ``processing.py``) plus legal terms of
  judgments that stand where a name stands (``성명불상``, ``공소외``); the release's rule that protects every
  capitalised Latin word is not taken, since it would keep brand and company names;
- **the published officials' names** whose roles the policy keeps (:func:`thunder.language.legal.official_names`: judges,
  prosecutors, counsel; all three by default, as courts publish them);
- **the upper levels of addresses** (:func:`thunder.language.regions.upper_units`: provinces, cities, counties and districts,
  ``서울 마포구``; kept by the pipeline's default, as courts mostly publish them: ``서울 마포구 A``), trimmed off a
  span's start only;
- **what the court already masked** (:func:`thunder.language.court_marks.masked_entities`: ``□□사 납골당``,
  ``○○대학교병원``): its masks stand for the identifier, the words around them say what it was.

:meth:`Protection.filter` drops a model span whose every letter lies in such text (a plural 들 and particles after it
aside) and trims one that only starts with such a word, or starts or ends with legal text other than a procedural
term (``등록기준지 충남`` -> ``충남``; a term after the entity may be part of its name, ``○○아파트 입주자대표회의``, and
stays); a span with such text inside a word is kept whole. Spans of every other source (recognizers, reviewers) are
never touched.
:meth:`Protection.coverage` gives the same text to propagation, which never spreads a model span into it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from thunder.deid.policy import PublicationPolicy
from thunder.identifiers.base import ScoredSpan
from thunder.language.court_marks import masked_entities
from thunder.language.legal import LegalText, official_names
from thunder.language.particles import PARTICLE_RUN, run_agrees
from thunder.language.regions import upper_units
from thunder.language.views import letter_spaced_runs

__all__ = ["Protection", "covered"]

_LEADING_ONLY = "procedural term"  # may be trimmed off the start of a span, never off its end


class Protection:
    """What a model span may not replace under ``policy``: legal text (with the words it adds), protected words, the
    names of the kept officials and, with ``keep_regions``, the upper levels of addresses."""

    def __init__(self, policy: PublicationPolicy | None = None) -> None:
        policy = policy or PublicationPolicy()
        self.regions, self.kept_officials = policy.keep_regions, policy.kept_officials
        legal_words = policy.legal_words
        words_to_find = (legal_words or ()) + tuple(sorted(policy.protected))
        builtin = legal_words is not None
        self.legal = LegalText(words_to_find, builtin=builtin) if builtin or words_to_find else None

    def __bool__(self) -> bool:
        return self.legal is not None or bool(self.kept_officials) or self.regions

    def coverage(self, text: str) -> bytearray:
        """Per character of ``text``: 0 outside protected text, 1 in text trimmable off a span's start only
        (procedural terms, protected words, upper levels of addresses), 2 in text trimmable off either end."""
        flags = bytearray(len(text))
        legal = self.legal.find(text) if self.legal else []
        found = [(s.start, s.end, 1 if s.kind == _LEADING_ONLY else 2) for s in legal]
        for letters, positions in letter_spaced_runs(text) if self.legal else ():  # a heading's 서 울 중 앙 지 방 법 원
            found += [(positions[s.start], positions[s.end - 1] + 1, 1 if s.kind == _LEADING_ONLY else 2)
                      for s in self.legal.find(letters)]  # fmt: skip
        found += [(start, end, 1) for start, end in (upper_units(text) if self.regions else ())]
        found += [(o.start, o.end, 2) for o in official_names(text, self.kept_officials)]
        found += [(start, end, 2) for start, end in masked_entities(text)]
        for start, end, flag in found:
            for i in range(start, end):
                flags[i] = max(flags[i], flag)
        return flags

    def filter(self, text: str, spans: Iterable[ScoredSpan], coverage: bytearray | None = None) -> list[ScoredSpan]:
        """``spans`` with the model's spans over protected text dropped or trimmed (see the module); ``coverage``:
        :meth:`coverage` of ``text`` where the caller has it."""
        spans = list(spans)
        if not self or not any(span.source == "model" for span in spans):
            return spans
        coverage = self.coverage(text) if coverage is None else coverage
        kept = []
        for span in spans:
            if span.source == "model":
                span = _trimmed(text, span, coverage)
            if span is not None:
                kept.append(span)
        return kept


def covered(text: str, start: int, end: int, coverage: bytearray) -> bool:
    """Whether every letter and digit of ``text[start:end]`` lies in protected text, a plural 들 and particles after
    it aside."""
    return _word_flag(text, start, end, coverage) > 0


def _word_flag(text: str, start: int, end: int, coverage: bytearray) -> int:
    """The weakest protection over the letters of ``text[start:end]`` (0: some letter unprotected); the plural
    ``들`` and a run of particles that agrees with the protected text before it (``원고는``, ``CCTV를``,
    ``피신청인들은``) count as protected."""
    weakest = 3
    for i in range(start, end):
        if not text[i].isalnum():
            continue
        if not coverage[i]:
            word_end = _letters_end(text, i, end)
            rest = i + 1 if weakest < 3 and text[i] == "들" else i
            particles = PARTICLE_RUN.match(text, rest, word_end)
            if weakest < 3 and (rest == word_end or particles and particles.end() == word_end):
                if rest == word_end or run_agrees(text[start:rest], text[rest:word_end]):
                    return weakest
            return 0
        weakest = min(weakest, coverage[i])
    return 2 if weakest == 3 else weakest  # no letter at all: punctuation, removable from either end


def _letters_end(text: str, start: int, end: int) -> int:
    while end > start and not text[end - 1].isalnum():
        end -= 1
    return end


def _trimmed(text: str, span: ScoredSpan, coverage: bytearray) -> ScoredSpan | None:
    """``span`` without its protected words at the edges (``None`` when every word is protected)."""
    words = _words(text, span.start, span.end)
    flags = [_word_flag(text, a, b, coverage) for a, b in words]
    if all(flags):
        return None
    first = next(i for i, flag in enumerate(flags) if not flag)
    last = len(flags) - 1
    while flags[last] == 2:
        last -= 1
    if (first, last) == (0, len(words) - 1):
        return span
    return replace(span, start=words[first][0], end=words[last][1])


def _words(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Whitespace-separated words of ``text[start:end]`` as ``(start, end)``."""
    words, word_start = [], None
    for i in range(start, end):
        if text[i].isspace():
            if word_start is not None:
                words.append((word_start, i))
                word_start = None
        elif word_start is None:
            word_start = i
    if word_start is not None:
        words.append((word_start, end))
    return words
