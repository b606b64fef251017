"""Triage: where the reviewer of a de-identified document should look first.

A court publishes a judgment only after a person has read it; triage tells that person where to start. Every
document gets **possible misses**, places the pipeline left in the text that look like identifiers, and a **risk**,
the chance by the rule below that at least one of them is an identifier. Possible misses are never replaced: they
travel beside the replaced spans (:class:`TriagedResult`; ``suggestions`` in the service's answers, dashed on the
review page, one key to accept), and ``thunder deid --review_queue`` ranks documents by risk.

A possible miss is one of (each switched off by a weight of 0 in :class:`TriageRule`):

- ``near_threshold``: characters left in whose token's identifier probability ``1 - P(O)`` came within
  ``near_margin`` (log-odds) of the threshold without passing it: at the default threshold 0.5 and margin 2, every
  token above 0.12. Touching characters form one mark, labelled with the model's most likely entity type there;
  a run that is only particles, a lone syllable, text the policy keeps (legal text, courts, kept officials, upper
  address levels) or a head noun left after a replacement (``A아파트``, ``B은행``: ``cut_word_keep``) is none:
  accepting it could only damage the text. A run that begins or ends inside a word left in is widened to the whole
  word, its particles aside (``처인`` of ``거래처인``, ``신호`` of ``신호등``): no mark is a part of a word.
- ``cut_word``: the rest of a word that a replaced span cuts (``증평송산지구칸타빌|단지``, ``구|늑힌쳔``): the letters
  and digits touching the span, less the particles after it, labelled as the span, unless it is a generic word that
  follows an identifier (``cut_word_keep``: ``101동 1001|호``, ``칸타빌|아파트``, ``국민|은행``, ``역삼|지점``); after a detected person name
  shorter than a full name (two syllables), the syllable after it even when it reads as a particle (``박갬|에``,
  ``강쑨|으로``: the model took the name's last syllable for a particle), unless the document shows the name whole
  (a mention followed by no letter, or mentions followed by different syllables: ``오숿은``, ``오숿의``).
- ``entity_part``: a part of a detected entity left elsewhere as a word of its own: a person's given name, or the
  surname with a title (``홍길동`` replaced, ``길동`` or ``홍씨`` left), and the lower part of a detected entity of
  several words, itself of several words or with a digit (``서울 강남구 테헤란로 123`` replaced, ``테헤란로 123`` or
  ``강남구 테헤란로 123`` left; a last word alone such as ``방송국`` of ``YTN 방송국`` is too often a common noun).

Overlapping marks merge into one, named by its most probable member. A mark is a leak with probability
``near_weight * min(1, score / threshold) ** near_power`` (``near_threshold``; ``score`` its highest token), or
``cut_word_weight``, or ``entity_part_weight``. A document also holds leaks no mark points at (identifiers the model
gave no sign of), the more the longer it is: none with probability ``exp(-unmarked_rate * characters / 10,000)``.
A document's risk, the probability that it still holds an identifier, is one minus the chance of neither, the marks
taken as independent: ``1 - exp(-unmarked_rate * characters / 10,000) * prod(1 - p)``; it is recomputed as a reviewer
decides the marks (``TriagedResult.unmarked_risk`` is the part no decision changes). The defaults are fitted to
the leaking documents of the shared corpus's validation split by maximum likelihood (``tools/triage_sweep.py
--fit``; docs/experiments/2026-12-05-windows-and-risk.md).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from thunder.deid.operators import entity_key
from thunder.deid.pipeline import Deidentifier, DeidResult, DetectedSpan, find_keys
from thunder.deid.protection import covered
from thunder.documents.outputs import JsonlAppender, write_atomic
from thunder.language.particles import PARTICLE_RUN
from thunder.language.views import composed
from thunder.model.decoding import TokenPredictions, token_spans
from thunder.synthesis.names import DOUBLE_SURNAMES
from thunder.taxonomy import Taxonomy

POSSIBLE_MISS = "possible_miss"  # the source of a possible miss (the review page draws it dashed)
PARTIAL_SUFFIX = ".partial"  # a review queue's journal of finished documents, beside it until the run ends
REASONS = {
    "near_threshold": "near the threshold",
    "cut_word": "rest of a word cut by a replacement",
    "entity_part": "part of a detected entity",
}
_HANGUL_NAME = re.compile(r"[가-힣]{2,5}")


@dataclass(frozen=True)
class TriageRule:
    """What counts as a possible miss and how much it weighs (how the risk is computed: docs/serving.md).

    Args:
        near_margin: a token left in is a possible miss when its identifier probability lies within this many
            log-odds (natural log) below the threshold: 2 means odds down to 1/7.4 of the threshold's (0: none).
            On the validation split 2 covers half of the leaked mentions with a third of the marks of 4.6 (odds down
            to 1/100), twice as many of them on a leak (docs/experiments/2026-12-04-legal-corpus.md).
        near_weight: probability that a near-threshold mark at the threshold is a leak.
        near_power: how fast that probability falls with the score: ``min(1, score / threshold) ** near_power``.
        cut_word_weight: probability that the rest of a cut word is a leak (0: no such marks).
        cut_word_keep: rests that are no mark: words that follow an identifier without being part of it
            (``101동 1001|호``, ``국민은행 계좌``, the head nouns ``A아파트``, ``B은행``, ``C지점``, ``D모텔``); a
            near-threshold run that is one of them right after a replaced span is none either.
        full_name_syllables: a detected person name of fewer Hangul syllables may be cut short: the syllable after it
            is a rest even when it reads as a particle (0: never).
        part_weight: probability that a part of a detected entity left elsewhere is a leak (0: no such marks).
        part_titles: what may follow a detected person's surname alone (``홍씨``, ``홍 씨``, ``홍모``).
        part_min_chars: the shortest lower part of a several-word entity looked for, in non-space characters.
        person_subcategories: taxonomy subcategories of person names (their given names and surnames are parts).
        unmarked_rate: expected leaks no mark points at per 10,000 characters (0: a document without marks has no
            risk).
    """

    GROUP: ClassVar[str] = "advanced: triage"

    near_margin: float = 2.0
    near_weight: float = 0.277
    near_power: float = 0.544
    cut_word_weight: float = 0.035
    cut_word_keep: tuple[str, ...] = ("호", "동", "층", "번", "실", "건물", "회사", "계좌", "아파트", "은행", "지점", "모텔")
    full_name_syllables: int = 3
    part_weight: float = 0.3
    part_titles: tuple[str, ...] = ("씨", "모", "군", "양")
    part_min_chars: int = 3
    person_subcategories: tuple[str, ...] = ("인명",)
    unmarked_rate: float = 2.23

    def __post_init__(self) -> None:
        for name in ("near_margin", "near_power", "unmarked_rate"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise ValueError(f"{name} must be a number of at least 0, got {value!r}")
        for name in ("near_weight", "cut_word_weight", "part_weight"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
                raise ValueError(f"{name} must lie in [0, 1), got {value!r}")
        for name, least in (("part_min_chars", 2), ("full_name_syllables", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be a whole number of at least {least}, got {value!r}")
        object.__setattr__(self, "cut_word_keep", tuple(self.cut_word_keep))
        object.__setattr__(self, "part_titles", tuple(self.part_titles))
        object.__setattr__(self, "person_subcategories", tuple(self.person_subcategories))

    def near_floor(self, threshold: float) -> float | None:
        """The lowest identifier probability of a near-threshold mark (``None``: no such marks)."""
        if not self.near_margin or not self.near_weight:
            return None
        return 1 / (1 + math.exp(self.near_margin - math.log(threshold / (1 - threshold))))


@dataclass(frozen=True)
class PossibleMiss:
    """A place left in the text that may be an identifier (offsets into the original, as for replaced spans)."""

    start: int
    end: int
    text: str
    label: str  # what it would be replaced as when accepted
    category: str | None
    tier1: str | None
    score: float  # probability that it is a leak, by the rule
    reason: str  # near_threshold | cut_word | entity_part
    placeholder: str = ""  # the letter of the detected entity it belongs to ("" for near_threshold)
    model_score: float | None = None  # near_threshold: the highest identifier probability 1 - P(O) of its tokens
    source: str = POSSIBLE_MISS


NO_MODEL_RISK = "no model: the recognizers alone cannot judge whether names, addresses or places are left in"

@dataclass(frozen=True)
class TriagedResult(DeidResult):
    """A de-identified document with its possible misses (not replaced) and its risk: the chance that an identifier
    was left in, as its marks give it; ``risk_reason`` says why that is no judgment of the document (no model: the
    answers and the review queue then give the risk as null). ``near_tokens`` counts the tokens left in whose
    identifier probability came within the margin below the threshold: the plain count a risk has to rank better
    than (``thunder evaluate`` ranks by both)."""

    risk: float = 0.0
    suggestions: tuple[PossibleMiss, ...] = ()
    risk_reason: str | None = None
    near_tokens: int = 0
    unmarked_risk: float = 0.0  # the part of the risk no mark carries: what is left when every mark is decided

    def reasons(self, top: int = 3) -> list[str]:
        """The ``top`` reasons to look, strongest first, without quoting the text (``3 near the threshold, highest
        0.41``, ``1 part of a detected entity (A)``)."""
        groups: dict[tuple[str, str], list[PossibleMiss]] = {}
        for miss in self.suggestions:
            groups.setdefault((miss.reason, miss.placeholder), []).append(miss)
        ranked = sorted(groups.items(), key=lambda item: -max(m.score for m in item[1]))
        lines = []
        for (reason, placeholder), misses in ranked[:top]:
            line = f"{len(misses)} {REASONS[reason]}"
            if reason == "near_threshold":
                line += f", highest {max(m.model_score for m in misses):.2f}"
            elif placeholder:
                line += f" ({placeholder})"
            lines.append(line)
        return lines


# ----------------------------------------------------------------------------------------------- the marks


def _replaced(length: int, spans: Iterable[DetectedSpan]) -> bytearray:
    flags = bytearray(length)
    for span in spans:
        flags[span.start : span.end] = b"\x01" * (span.end - span.start)
    return flags


def near_threshold(
    text: str,
    prediction: TokenPredictions,
    types: Sequence[str | None],
    replaced: bytearray,
    floor: float,
    threshold: float,
) -> list[tuple[int, int, float, str | None]]:
    """Runs ``(start, end, score, type)`` of characters left in whose token scored in ``(floor, threshold]``;
    ``types`` gives each token's most likely entity type, ``score`` is the run's highest."""
    best = [0.0] * len(text)
    kind: list[str | None] = [None] * len(text)
    for (start, end), score, entity_type in zip(prediction.offsets, prediction.scores, types):
        if not floor < score <= threshold:
            continue
        for i in range(start, end):
            if not replaced[i] and not text[i].isspace() and score > best[i]:
                best[i], kind[i] = score, entity_type
    runs, i = [], 0
    while i < len(text):
        if not best[i]:
            i += 1
            continue
        start = i
        while i < len(text) and best[i]:
            i += 1
        top = max(range(start, i), key=best.__getitem__)
        if any(c.isalnum() for c in text[start:i]):
            runs.append((start, i, best[top], kind[top]))
    return runs


def worth_a_look(
    text: str, start: int, end: int, protected: bytearray, replaced: bytearray | None = None, keep: Iterable[str] = ()
) -> bool:
    """Whether a near-threshold run ``text[start:end]`` could be an identifier a reviewer would accept: not only
    particles (``은``, ``와``), not text the policy keeps (legal text, courts, kept officials, upper address levels:
    ``protected`` is :meth:`~thunder.deid.protection.Protection.coverage` of ``text``), not a lone Hangul syllable;
    with ``replaced`` (the characters replaced), not a word of ``keep`` right after a replaced span (``A아파트``,
    particles after it aside)."""
    core = text[start:end].strip()
    if not core or PARTICLE_RUN.fullmatch(core) or covered(text, start, end, protected):
        return False
    if len(core) == 1 and _is_syllable(core):
        return False
    if replaced is None:
        return True
    while start < end and text[start].isspace():
        start += 1
    if start and replaced[start - 1]:  # right after a replaced span: a head noun of keep is none (A아파트)
        word = text[start:end].rstrip()
        cut = next((i for i in range(1, len(word)) if PARTICLE_RUN.fullmatch(word, i)), len(word))
        return word[:cut] not in set(keep)
    return True


def whole_word(text: str, start: int, end: int, replaced: bytearray) -> tuple[int, int]:
    """``[start, end)`` widened to the word it lies in, as far as letters and digits are left in (not ``replaced``),
    less the particles ending the word (``처인`` of ``거래처인에게``: ``거래처인``; ``신호`` of ``신호등``: ``신호등``)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    while start and text[start - 1].isalnum() and not replaced[start - 1]:
        start -= 1
    after = end
    while after < len(text) and text[after].isalnum() and not replaced[after]:
        after += 1
    if after > end and not PARTICLE_RUN.fullmatch(text, end, after):  # ends inside the word: to its particles
        end = next((i for i in range(end + 1, after) if PARTICLE_RUN.fullmatch(text, i, after)), after)
    return start, end


def cut_words(
    text: str,
    spans: Sequence[DetectedSpan],
    replaced: bytearray,
    keep: Iterable[str] = (),
    cut_short: Callable[[DetectedSpan], bool] = lambda span: False,
) -> list[tuple[int, int, DetectedSpan]]:
    """The letters and digits left in that touch a replaced span inside its word, as ``(start, end, span)``; after
    a span, the particles ending the rest are left out (``홍길동이``: nothing; ``칸타빌아파트에서``: ``아파트``), but
    not the first syllable after a span for which ``cut_short`` is true (``박갬에게``: ``에``), and a rest in ``keep``
    is none."""
    keep = set(keep)
    found = []
    for span in spans:
        start = span.start
        while start > 0 and text[start - 1].isalnum() and not replaced[start - 1]:
            start -= 1
        if start < span.start and text[start : span.start] not in keep:
            found.append((start, span.start, span))
        end = span.end
        while end < len(text) and text[end].isalnum() and not replaced[end]:
            end += 1
        rest = text[span.end : end]
        cut = next((i for i in range(len(rest)) if PARTICLE_RUN.fullmatch(rest, i)), len(rest))
        if not cut and rest and _is_syllable(rest[0]) and cut_short(span):
            cut = 1
        if cut and rest[:cut] not in keep:
            found.append((span.end, span.end + cut, span))
    return found


def names_shown_whole(text: str, spans: Sequence[DetectedSpan]) -> set[str]:
    """The texts of ``spans`` that the document shows end where their spans end: a mention followed by no letter or
    digit, or mentions followed by different syllables (``오숿은``, ``오숿의``, ``오숿에``: the name is ``오숿``; a
    name ``오숿은`` would be followed by ``은`` every time)."""
    following: dict[str, set[str]] = {}
    for span in spans:
        after = text[span.end : span.end + 1]
        following.setdefault(entity_key(span.text), set()).add(after if after.isalnum() else "")
    return {key for key, found in following.items() if "" in found or len(found) > 1}


def entity_parts(
    text: str, spans: Sequence[DetectedSpan], replaced: bytearray, rule: TriageRule, is_person: Callable[[str], bool]
) -> list[tuple[int, int, DetectedSpan]]:
    """Parts of detected entities left in as words of their own, as ``(start, end, first mention)``: a person's
    given name and surname with a title, the lower parts of an entity of several words (see the module docstring)."""
    firsts: dict[str, DetectedSpan] = {}
    for span in spans:
        firsts.setdefault(span.placeholder, span)
    parts: dict[str, DetectedSpan] = {}
    for span in firsts.values():
        compact = entity_key(span.text)
        if is_person(span.label) and _HANGUL_NAME.fullmatch(compact):
            surname = compact[:2] if compact[:2] in DOUBLE_SURNAMES and len(compact) > 3 else compact[0]
            given = compact[len(surname) :]
            for part in ([given] if len(given) >= 2 else []) + [surname + title for title in rule.part_titles]:
                parts.setdefault(part, span)
        words = span.text.split()
        for first in range(1, len(words)):  # a lower part: several words, or one with a digit (테헤란로 123, 1001호)
            part = "".join(words[first:])
            if len(part) >= rule.part_min_chars and any(c.isalpha() for c in part) and (
                first < len(words) - 1 or any(c.isdigit() for c in part)
            ):
                parts.setdefault(entity_key(part), span)
    return [(start, end, parts[key]) for start, end, key in find_keys(text, parts)
            if not any(replaced[start:end]) and _is_word(text, start, end)]  # fmt: skip


def _is_syllable(char: str) -> bool:
    return "가" <= char <= "힣"


def _is_word(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a word of its own: no letter or digit before it, none after it but particles."""
    if start and text[start - 1].isalnum():
        return False
    particles = PARTICLE_RUN.match(text, end)
    after = particles.end() if particles else end
    return after == len(text) or not text[after].isalnum()


# ----------------------------------------------------------------------------------------------- the rule


class Triage:
    """A :class:`~thunder.deid.pipeline.Deidentifier` whose results carry possible misses and a risk: ``Triage(deid)(text)
    -> TriagedResult``, with exactly the de-identifier's replaced spans and text."""

    def __init__(self, deidentifier: Deidentifier, rule: TriageRule | None = None) -> None:
        self.deidentifier, self.rule = deidentifier, rule or TriageRule()
        persons = set(self.rule.person_subcategories)
        taxonomy: Taxonomy = deidentifier.taxonomy
        self._persons = {name for name, label in taxonomy.labels.items() if label.subcategory in persons}
        self._persons |= {label.category for label in taxonomy.labels.values() if label.subcategory in persons}

    def __call__(self, text: str) -> TriagedResult:
        return self.deidentify_batch([text])[0]

    def _short_name(self, span: DetectedSpan) -> bool:
        """Whether ``span`` is a person name of fewer syllables than a full name (it may have been cut short)."""
        name = span.text
        short = len(name) < self.rule.full_name_syllables
        return short and span.label in self._persons and all(map(_is_syllable, name))

    def deidentify_batch(self, texts: Sequence[str]) -> list[TriagedResult]:
        """De-identify ``texts`` as the de-identifier does, and triage each result."""
        deid = self.deidentifier
        predictions = deid.predict_tokens(texts)
        return [self.triage(text, p, deid.finish(text, p)) for text, p in zip(texts, predictions)]

    def triage(self, text: str, prediction: TokenPredictions, result: DeidResult) -> TriagedResult:
        """``result`` (the pipeline's for ``text`` and the model's ``prediction``) with its possible misses and risk.
        A text written decomposed (NFD) is judged composed, as the model read it, its marks in its own characters."""
        view = composed(text)
        if not view.changes:
            return self._triage(text, prediction, result)
        spans = []
        for span in result.spans:
            start, end = view.view_span(span.start, span.end)
            spans.append(replace(span, start=start, end=end, text=view.text[start:end]))
        triaged = self._triage(view.text, prediction, DeidResult(result.text, tuple(spans)))
        marks = []
        for mark in triaged.suggestions:
            start, end = view.original_span(mark.start, mark.end)
            marks.append(replace(mark, start=start, end=end, text=text[start:end]))
        return replace(triaged, spans=result.spans, suggestions=tuple(marks))

    def _triage(self, text: str, prediction: TokenPredictions, result: DeidResult) -> TriagedResult:
        rule = self.rule
        replaced = _replaced(len(text), result.spans)
        marks = self._near_marks(text, prediction, replaced)
        if rule.cut_word_weight:
            whole = names_shown_whole(text, result.spans)
            found = cut_words(text, result.spans, replaced, rule.cut_word_keep,
                              lambda span: self._short_name(span) and entity_key(span.text) not in whole)  # fmt: skip
            marks += [_mark(text, start, end, span, rule.cut_word_weight, "cut_word") for start, end, span in found]
        if rule.part_weight:
            found = entity_parts(text, result.spans, replaced, rule, self._persons.__contains__)
            marks += [_mark(text, start, end, span, rule.part_weight, "entity_part") for start, end, span in found]
        merged = merge_marks(text, marks)
        unmarked = 1 - math.exp(-rule.unmarked_rate * len(text) / 10_000)
        risk = 1 - (1 - unmarked) * math.prod(1 - mark.score for mark in merged)
        unjudged = NO_MODEL_RISK if self.deidentifier.model is None else None  # names, addresses, places unknown
        near = self._near_tokens(text, prediction, replaced)
        return TriagedResult(result.text, result.spans, round(risk, 4), tuple(merged), unjudged, near,
                             round(unmarked, 4))  # fmt: skip

    def _near_tokens(self, text: str, prediction: TokenPredictions, replaced: bytearray) -> int:
        threshold = self.deidentifier.operating_point.threshold
        floor = self.rule.near_floor(threshold)
        if floor is None:
            return 0
        return sum(1 for (start, end), score in zip(prediction.offsets, prediction.scores)
                   if floor < score <= threshold and any(not replaced[i] and not text[i].isspace()
                                                         for i in range(start, end)))  # fmt: skip

    def _near_marks(self, text: str, prediction: TokenPredictions, replaced: bytearray) -> list[PossibleMiss]:
        rule, threshold, label_set = self.rule, self.deidentifier.operating_point.threshold, self.deidentifier.label_set
        floor = rule.near_floor(threshold)
        if floor is None or not prediction.scores:
            return []
        types = _token_types(prediction.types, label_set) if prediction.types else [None] * len(prediction.scores)
        runs = near_threshold(text, prediction, types, replaced, floor, threshold)
        protection = self.deidentifier.protection
        protected = protection.coverage(text) if protection and runs else bytearray(len(text))  # only when needed
        marks = []
        for start, end, score, entity_type in runs:
            if not worth_a_look(text, start, end, protected):  # the run itself: not only particles, not one syllable
                continue
            start, end = whole_word(text, start, end, replaced)  # no mark is a part of a word (처인 of 거래처인)
            if not worth_a_look(text, start, end, protected, replaced, rule.cut_word_keep):
                continue
            info = label_set.describe(entity_type) if entity_type is not None else None
            probability = rule.near_weight * min(1.0, score / threshold) ** rule.near_power
            marks.append(PossibleMiss(start, end, text[start:end], (info.label if info else None) or entity_type or "",
                                      info.category if info else None, info.tier1 if info else None,
                                      round(probability, 4), "near_threshold", model_score=round(score, 4)))  # fmt: skip
        return marks


def _token_types(tags: Sequence[int], label_set) -> list[str | None]:
    types: list[str | None] = [None] * len(tags)
    for first, last, entity_type in token_spans(tags, label_set):
        types[first:last] = [entity_type] * (last - first)
    return types


def _mark(text: str, start: int, end: int, span: DetectedSpan, probability: float, reason: str) -> PossibleMiss:
    return PossibleMiss(start, end, text[start:end], span.label, span.category, span.tier1, probability, reason,
                        span.placeholder)  # fmt: skip


def merge_marks(text: str, marks: Iterable[PossibleMiss]) -> list[PossibleMiss]:
    """Overlapping or touching marks as one, named by the most probable member (ties: the earlier reason)."""
    merged: list[PossibleMiss] = []
    group: list[PossibleMiss] = []
    for mark in sorted(marks, key=lambda m: (m.start, m.end)):
        if group and mark.start > max(m.end for m in group):
            merged.append(_union(text, group))
            group = []
        group.append(mark)
    if group:
        merged.append(_union(text, group))
    return merged


def _union(text: str, group: list[PossibleMiss]) -> PossibleMiss:
    best = max(group, key=lambda m: m.score)
    start, end = group[0].start, max(m.end for m in group)
    return replace(best, start=start, end=end, text=text[start:end])


# ----------------------------------------------------------------------------------------------- the review queue


class ReviewQueue:
    """The documents of a run ranked by risk: a JSONL file of ``{"id", "file", "risk", "possible_misses",
    "reasons"}``, riskiest first (ties in the order the documents were done), the reasons never quoting the text.

    Each document's record is appended and flushed to ``PATH.partial`` as the document is done; :meth:`close`
    writes ``PATH`` at once (atomically) from an earlier run's queue, a killed run's ``.partial`` and this run's
    records, then removes ``.partial``. Records for which ``keep`` is false (documents not done, to be done again)
    are dropped at the start; a document done again replaces its record.
    """

    def __init__(self, path: str | Path, keep: Callable[[dict], bool] = lambda record: False) -> None:
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.name + PARTIAL_SUFFIX)
        earlier = _read_queue(self.path) if self.path.exists() else []
        self.journal = JsonlAppender(self.partial, ours=0)  # every record of the journal is ours
        self.records = {_key(r): r for r in earlier + self.journal.records if keep(r)}

    def add(self, doc_id: str, file: str | None, result: TriagedResult) -> None:
        """Note one document's triage (before its output is written: the output marks it done)."""
        record: dict[str, Any] = {"id": doc_id}
        if file is not None:
            record["file"] = file
        risk = None if result.risk_reason else result.risk
        record.update(risk=risk, possible_misses=len(result.suggestions), reasons=result.reasons())
        self.records.pop(_key(record), None)
        self.records[_key(record)] = record
        self.journal.write([record])

    def close(self) -> None:
        """Write the ranked queue and remove the journal."""
        self.journal.close()
        ranked = sorted(self.records.values(), key=lambda r: -math.inf if r["risk"] is None else -r["risk"])
        write_atomic(self.path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ranked))
        self.partial.unlink(missing_ok=True)


def _key(record: dict) -> tuple[str | None, str]:
    return record.get("file"), str(record.get("id"))


def _read_queue(path: Path) -> list[dict]:
    """The records of an existing review queue; anything else is refused (``ValueError`` naming file and line)."""
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            record = json.loads(line)
            risk = record.get("risk", "") if isinstance(record, dict) else ""
            if not isinstance(risk, (int, float, type(None))) or "id" not in record:
                raise ValueError
        except ValueError:
            raise ValueError(f"{path}:{number}: not a line of a review queue; give another --review_queue") from None
        records.append(record)
    return records
