"""Overlaps and conflict resolution: spans from every source become one disjoint set of entity mentions.

As Presidio keeps its ``ConflictResolutionStrategy`` apart from scoring, every rule that decides between spans that
meet lives here, named:

1. **Overlaps** (:class:`Overlap`, :func:`resolve_overlaps`): ``UNION`` merges overlapping spans into one (the
   pipeline's rule for model and recognizer spans: nothing detected is left out), ``HIGHEST_SCORE`` keeps the best
   of overlapping readings (the recognizers' rule among themselves).
2. **Trimming** (:func:`trim`): surrounding spaces leave a span; a span without a letter or digit goes.
3. **Particle variants** (:func:`particle_variants`): mentions of one entity that differ by a particle agree
   (``홍길동`` and ``홍길동이``), so they get one placeholder.
4. **Propagation** (:func:`find_keys`, :func:`propagate`): every further occurrence of a seed's text that cuts no
   morpheme, is glued to the word before it only where that is a role word (``증인김영수``, not ``연체이자율``) and,
   for a reviewer's text or the model's common vocabulary, is a word of its own (``신호`` leaves ``신호등`` and
   ``신호대기`` alone, ``캄보디아`` leaves ``캄보디아어``) is a mention of its entity (an
   occurrence holding spans of its own takes their place); which spans seed is the publication policy's
   (:meth:`thunder.deid.policy.PublicationPolicy.spreads`, given :func:`marked_shares`), and a model seed never
   spreads into protected text (:mod:`thunder.deid.protection`) nor where the model's evidence does not carry it
   (:meth:`~thunder.deid.policy.PublicationPolicy.spreads_to`).
5. **Survivors** (:func:`check_no_name_survives`): with ``spread_names``, a text replaced as a person's name that
   stays in clear as a word of its own fails the document (:class:`NameSurvives`).
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import replace
from enum import Enum
from typing import Callable, Iterable, Mapping, Sequence

from thunder.deid.operators import Entity, entity_key
from thunder.deid.protection import covered
from thunder.identifiers.base import ScoredSpan
from thunder.language.particles import (
    PARTICLE_RUN,
    final_particles,
    leading_particle,
    run_agrees,
    written_into_word,
)
from thunder.language.legal import ROLE_WORDS
from thunder.language.morphemes import common_words, counted_number, dictionary_noun, holds_proper_noun, inside_word
from thunder.language.regions import address_spellings

_WORD = re.compile(r"\w")
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")
_NON_SPACE = re.compile(r"\S")
_FEW_KEYS = 32
_HANGUL = re.compile(r"[가-힣]+")
Evidence = Callable[[ScoredSpan, int, int], bool]  # whether a model seed's text spreads to text[start:end]


class Overlap(str, Enum):
    """How overlapping spans become disjoint ones."""

    UNION = "union"  # one span over each group of overlapping spans, labelled by its most confident (then longest)
    HIGHEST_SCORE = "highest_score"  # the most confident (then longest, then first) span stays, those it overlaps go


def resolve_overlaps(spans: Iterable[ScoredSpan], strategy: Overlap) -> list[ScoredSpan]:
    """Disjoint spans sorted by start, overlaps resolved by ``strategy``."""
    return _RESOLVERS[Overlap(strategy)](spans)


def _union(spans: Iterable[ScoredSpan]) -> list[ScoredSpan]:
    ordered = sorted(spans, key=lambda s: (s.start, -s.end))
    merged: list[ScoredSpan] = []
    group: list[ScoredSpan] = []
    group_end = 0

    def close() -> None:
        best = max(group, key=lambda s: (s.score, s.end - s.start))
        merged.append(replace(best, start=group[0].start, end=group_end))

    for span in ordered:
        if group and span.start >= group_end:
            close()
            group = []
        group.append(span)
        group_end = max(group_end, span.end) if len(group) > 1 else span.end
    if group:
        close()
    return merged


def _highest_score(spans: Iterable[ScoredSpan]) -> list[ScoredSpan]:
    kept: list[ScoredSpan] = []  # disjoint, sorted by start
    starts: list[int] = []
    for span in sorted(spans, key=lambda s: (-s.score, -(s.end - s.start), s.start)):
        i = bisect.bisect_right(starts, span.start)
        if (i and kept[i - 1].end > span.start) or (i < len(kept) and kept[i].start < span.end):
            continue
        starts.insert(i, span.start)
        kept.insert(i, span)
    return kept


_RESOLVERS = {Overlap.UNION: _union, Overlap.HIGHEST_SCORE: _highest_score}


REVIEWER = "reviewer"  # the source of a span a person decided: replaced whatever its characters


def trim(text: str, span: ScoredSpan) -> ScoredSpan | None:
    """``span`` without surrounding whitespace, or ``None`` when nothing is left, or when it holds no letter or
    digit and no reviewer decided it (a reviewer's span of symbols or emoji, ``🐯🦁``, is replaced as it is)."""
    start, end = span.start, span.end
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start == end or span.source != REVIEWER and (not _WORD.search(text[start:end]) or not text[start:end].strip("_")):
        return None
    return replace(span, start=start, end=end)


def particle_variants(text: str, spans: list[ScoredSpan]) -> list[ScoredSpan]:
    """Make the mentions of one entity that differ by a particle agree, so that they get one placeholder.

    A mention that is another mention's text plus a particle (``홍길동`` and ``홍길동이``) is cut to the shorter text,
    unless the document shows the longer one is the name: somewhere its last letters are followed by further
    particles that agree with it (``심륭이의``, ``심륭이는``: ``이`` is no particle there), or a detected mention (not a
    reviewer's) is followed by letters that the writing shows are no particle (``강요|가에게``, ``'반|도'``,
    ``이헐|나(43세)``: :func:`~thunder.language.particles.written_into_word`). Then every mention of the shorter text
    followed by those letters grows to the longer one (``심륭|이`` in ``1. 심륭이``), but a reviewer's, whose bounds
    are the reviewer's.
    """
    keys = {entity_key(text[s.start : s.end]) for s in spans}
    cuts: dict[int, int] = {}  # span index -> length of the shorter mention it may be cut to
    names: set[str] = set()  # longer texts the document shows to be whole
    for span in spans:
        more = 0 if span.source == REVIEWER else written_into_word(text, span.start, span.end)
        if more:
            names.add(entity_key(text[span.start : span.end + more]))
    for index, span in enumerate(spans):
        mention = text[span.start : span.end]
        for cut in range(len(mention) - 1, 0, -1):
            if entity_key(mention[:cut]) not in keys or not leading_particle(mention[cut:]):
                continue
            particle = leading_particle(text[span.start + cut : span.start + cut + 16])
            run = PARTICLE_RUN.match(text, span.end)
            if particle and len(particle[0]) > len(mention) - cut:  # one particle that goes on (홍길동|이나, |이라는)
                cuts[index] = cut
            elif run and not text[run.end() : run.end() + 1].isalnum() and run_agrees(mention, run.group()):
                names.add(entity_key(mention))  # particles follow the whole mention: its last letters are no particle
            elif span.source != REVIEWER and written_into_word(text, span.start, span.start + cut) >= len(mention) - cut:
                names.add(entity_key(mention))  # the writing shows its last letters are no particle (이헐나(43세))
            else:
                cuts[index] = cut
            break
    result = []
    for index, span in enumerate(spans):
        mention = entity_key(text[span.start : span.end])
        if index in cuts and mention not in names:
            span = replace(span, end=span.start + cuts[index])
        elif names and span.source != REVIEWER:  # a reviewer's bounds are the reviewer's
            following = spans[index + 1].start if index + 1 < len(spans) else len(text)
            longer = [n for n in names if n.startswith(mention) and text.startswith(n[len(mention) :], span.end)]
            grown = span.end + max((len(n) - len(mention) for n in longer), default=0)
            if grown <= following:
                span = replace(span, end=grown)
        result.append(span)
    return result


def _key_pattern(key: str) -> re.Pattern:
    """Occurrences of an entity text, whitespace-insensitive, at a word boundary on ASCII letters and digits."""
    body = r"\s*".join(map(re.escape, key))
    before = r"(?<![A-Za-z0-9])" if _ASCII_ALNUM.match(key[0]) else ""
    after = r"(?![A-Za-z0-9])" if _ASCII_ALNUM.match(key[-1]) else ""
    return re.compile(before + body + after)


def find_keys(text: str, keys: Iterable[str]) -> list[tuple[int, int, str]]:
    """Occurrences ``(start, end, key)`` in ``text`` of entity texts of two or more characters, whitespace-
    insensitive, at a word boundary where a key starts or ends with an ASCII letter or digit; sorted by start.

    A few keys are searched one regular expression each; many keys (long documents) in one pass per key length
    over the text without whitespace, so the cost does not grow with the number of entities. An address key is
    found under every spelling of its province (:func:`thunder.language.regions.address_spellings`: ``서울특별시강남구…`` also
    as ``서울시 강남구 …`` and ``서울 강남구 …``).
    """
    forms = {form: key for key in keys if len(key) >= 2 for form in address_spellings(key)}  # written form -> key
    if len(forms) <= _FEW_KEYS:
        found = [(m.start(), m.end(), key) for form, key in forms.items() for m in _key_pattern(form).finditer(text)]
        return sorted(found)
    positions = [m.start() for m in _NON_SPACE.finditer(text)]
    compact = "".join(text[i] for i in positions)
    by_length: dict[int, set[str]] = {}
    for form in forms:
        by_length.setdefault(len(form), set()).add(form)
    found = []
    for length, group in by_length.items():
        for i in range(len(compact) - length + 1):
            piece = compact[i : i + length]
            if piece not in group:
                continue
            start, end = positions[i], positions[i + length - 1] + 1
            if _ASCII_ALNUM.match(piece[0]) and start and _ASCII_ALNUM.match(text[start - 1]):
                continue
            if _ASCII_ALNUM.match(piece[-1]) and end < len(text) and _ASCII_ALNUM.match(text[end]):
                continue
            found.append((start, end, forms[piece]))
    return sorted(found)


def held_back(
    seed: ScoredSpan, text: str, start: int, end: int, protected: bytearray | None, evidence: Evidence | None = None
) -> bool:
    """Whether ``seed``'s text stays at ``text[start:end]``: no seed spreads into a cut morpheme (``김철`` leaves
    ``김철수`` alone); a reviewer's text and the model's text that Mecab-ko reads as the common vocabulary of its
    dictionary (one noun, :func:`~thunder.language.morphemes.dictionary_noun`; or words of it,
    :func:`~thunder.language.morphemes.common_words`, but where it holds a proper noun, before a noun of two
    syllables or more: ``부산은행통장``, not ``신원보증계약``)
    or as a number and its counter (:func:`~thunder.language.morphemes.counted_number`: ``3개`` leaves ``3개사``)
    only to words of their own (:func:`~thunder.language.morphemes.inside_word`: ``신호`` leaves ``신호등``,
    ``신호대기`` alone, not ``신호가``; ``캄보디아`` leaves ``캄보디아어``); any other text (a name, an unknown word)
    spreads glued to the noun after it too (``홍길동피고인``: tables and old decisions write them so), and to the
    noun before it only where that is a role word (``증인김영수``, never ``연체이자율``, ``사원상호간``); a model
    seed never spreads into ``protected`` text, nor to an occurrence that ``evidence`` (given the seed and the
    occurrence) does not take."""
    key = entity_key(text[seed.start : seed.end]) if seed.source == "model" else ""
    whole = seed.source == REVIEWER or seed.source == "model" and (
        dictionary_noun(key) or counted_number(key)
        or common_words(key) and not (holds_proper_noun(key) and _noun_word_after(text, end))
    )
    if not word_of_its_own(text, start, end, compounds=whole):
        return True
    if seed.source != "model":
        return False
    if protected is not None and covered(text, start, end, protected):
        return True
    return evidence is not None and not evidence(seed, start, end)


def word_of_its_own(text: str, start: int, end: int, compounds: bool = False) -> bool:
    """Whether ``text[start:end]`` stands as a word of its own: not inside a longer word
    (:func:`~thunder.language.morphemes.inside_word`, ``compounds``: nor glued to a noun after it), and not glued to
    the word before it unless that is a role word (``증인김영수``)."""
    if inside_word(text, start, end, compounds=compounds):
        return False
    return not (start and _HANGUL.fullmatch(text, start - 1, start + 1) and not _role_before(text, start))


def _noun_word_after(text: str, end: int) -> bool:
    """Whether the Hangul glued after ``text[:end]`` holds two syllables or more before its particles: a word of its
    own written without its space (``통장`` in ``부산은행통장을``), not a one-syllable suffix (``어`` in
    ``캄보디아어로``, ``권`` in ``후순위채권의``)."""
    run = _HANGUL.match(text, end)
    return run is not None and run.end() - end - final_particles(text, end, run.end(), entity_finals=()) >= 2


def _role_before(text: str, start: int) -> bool:
    """Whether the Hangul run that ``text[start:]`` is glued to is a role word (``증인김영수``, ``피고인인김영수``)."""
    word_start = start
    while word_start and _HANGUL.match(text[word_start - 1]):
        word_start -= 1
    before = text[word_start:start]
    return before in ROLE_WORDS or before.removesuffix("인") in ROLE_WORDS


def marked_shares(
    text: str, spans: Sequence[ScoredSpan], occurrences: Iterable[tuple[int, int, str]], protected: bytearray | None
) -> dict[str, float]:
    """Per text of ``occurrences`` (:func:`find_keys`'s), the share of its occurrences outside ``protected`` text that
    meet one of ``spans`` (disjoint, sorted): how often the detection itself took the text it would spread (a text
    with no such occurrence is left out)."""
    starts, ends = [s.start for s in spans], [s.end for s in spans]
    found: dict[str, int] = {}
    marked: dict[str, int] = {}
    for start, end, key in occurrences:
        if protected is not None and covered(text, start, end, protected):
            continue
        found[key] = found.get(key, 0) + 1
        i = bisect.bisect_left(ends, start + 1)  # the first span ending after ``start``
        marked[key] = marked.get(key, 0) + (i < len(spans) and starts[i] < end)
    return {key: marked.get(key, 0) / count for key, count in found.items()}


def propagate(
    text: str,
    spans: list[ScoredSpan],
    seeds: Mapping[str, ScoredSpan],
    occurrences: Iterable[tuple[int, int, str]],
    protected: bytearray | None,
    evidence: Evidence | None = None,
) -> list[ScoredSpan]:
    """Add every further occurrence of a seed's text (among ``occurrences``, :func:`find_keys`'s; those of other texts
    are skipped) as a span of the same entity, with ``origin`` the seed's offsets, longer texts first, except where
    :func:`held_back` keeps it (inside a longer word, glued after a word that is no role word; for a model seed,
    protected text or no ``evidence``). An
    occurrence that holds spans of its own
    takes their place (``올가·소콜로프`` found where the model took only ``소콜로프``), so no part of a detected
    entity's text is left beside them; one that crosses a span's edge is left as it is."""
    current = list(spans)  # disjoint, sorted
    starts, ends = [s.start for s in current], [s.end for s in current]
    for start, end, key in sorted((o for o in occurrences if o[2] in seeds), key=lambda f: (-len(f[2]), f[0])):
        seed = seeds[key]
        if held_back(seed, text, start, end, protected, evidence):
            continue
        first = bisect.bisect_left(starts, start)
        last = bisect.bisect_left(starts, end, lo=first)  # spans first..last-1 start inside the occurrence
        if (first and ends[first - 1] > start) or (last > first and ends[last - 1] > end):
            continue  # inside a span, or crossing one's edge
        if last - first == 1 and (starts[first], ends[first]) == (start, end):
            continue  # the occurrence is a span already
        span = replace(seed, start=start, end=end, source="propagated", origin=(seed.start, seed.end))
        current[first:last], starts[first:last], ends[first:last] = [span], [start], [end]
    return current


class Ranges:
    """Disjoint-or-not ``[start, end)`` ranges, asked whether they cover a stretch of text."""

    def __init__(self, ranges: Iterable[tuple[int, int]]) -> None:
        self.ranges = sorted((start, end) for start, end in ranges if end > start)
        self.starts = [start for start, _ in self.ranges]
        self.reach = list(itertools.accumulate((end for _, end in self.ranges), max))  # furthest end so far

    def overlap(self, start: int, end: int) -> bool:
        """Whether ``[start, end)`` overlaps one of the ranges."""
        i = bisect.bisect_left(self.starts, end)  # ranges 0..i-1 start before ``end``
        return i > 0 and self.reach[i - 1] > start


class NameSurvives(ValueError):
    """A text replaced as a person's name that stays in clear elsewhere in the same document."""


def check_no_name_survives(text: str, spans: Sequence[ScoredSpan], names: Mapping[str, ScoredSpan],
                            entities: Mapping[str, Entity], kept_as_written: Ranges) -> None:  # fmt: skip
    """Refuse a document in which a text replaced as a person's name (``names``: its seed by text) stays in clear as
    a word of its own where no reviewer kept it: the check after propagation, which replaces such a name in text the
    policy keeps too (legal text, a kept official's name, a protected word)."""
    replaced = Ranges((s.start, s.end) for s in spans)
    for start, end, key in find_keys(text, names.keys() & entities.keys()):
        if replaced.overlap(start, end) or kept_as_written.overlap(start, end):
            continue
        if held_back(names[key], text, start, end, None):  # inside a longer word, glued to one: not the name
            continue
        raise NameSurvives(f"the name replaced as {entities[key].placeholder} stays in clear at character {start}; "
                           "not written")  # fmt: skip
