"""Decoding: from a token classifier's probabilities to character spans.

Every rule that turns model output into what gets replaced lives here, each step named, so a caller says which
policy it uses (as transformers' token-classification ``AggregationStrategy`` and Presidio's conflict resolution
do):

1. **Decision rule** (:func:`entity_tags`): a token is an identifier when ``1 - P(O)`` exceeds the operating
   point's ``threshold``; it then takes its most likely entity tag. Validation and test metrics use the same rule.
2. **Windows merged once** (:func:`merge_windows`): a long document is run as overlapping windows; every token keeps
   the prediction of the window where it is most central (overlaps are split halfway).
3. **Token spans** (:func:`token_spans`): consecutive tokens of one type form a span (IO); under BIO a ``B`` tag
   starts a new one.
4. **Aggregation** (:class:`Aggregation`, :func:`aggregate`): token spans of two types that touch inside a word
   are one (:func:`joined_in_words`); token spans become character spans widened to whole Mecab morphemes (a
   particle ending the last one stays out), and the particles after a span stay out too, tagged or not, unless they
   may be a name's last syllable (:func:`without_final_particles`), and one syllable short of the word's end that is
   no particle, suffix or bound noun is taken (:func:`with_last_syllable`); under ``HYSTERESIS`` a span first grows over the
   untagged tokens touching it inside the same word whose ``1 - P(O)`` exceeds the lower ``grow_threshold``; a span
   that cuts a run of Latin letters and digits joined by ``. _ -`` (``raye.6``) covers all of it.

:class:`OperatingPoint` is the pair of thresholds a model was validated at; it is stored in the checkpoint and the
export and is the default of every command that runs the model.
"""

from __future__ import annotations

import bisect
import re
import string
from array import array
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal, Mapping, Sequence

from thunder.identifiers.base import ScoredSpan
from thunder.language.morphemes import final_particles, morpheme_pieces, word_analysis
from thunder.language.particles import (ENTITY_FINAL_PARTICLES, PARTICLE_RUN, starts_with_particle,
                                       trailing_particle)  # fmt: skip

if TYPE_CHECKING:
    from torch import Tensor

    from thunder.taxonomy import LabelSet

THRESHOLD = 0.5  # the decision threshold of a model that stores no operating point
GROW_THRESHOLD = 0.1  # the low threshold of span growing (docs/results.md, "Unseen mentions: an honest test")


FULL_NAME = 3  # characters a model span keeps at least when a particle the model tagged is cut off it


def check_threshold(threshold: Any, name: str = "threshold") -> None:
    """Refuse a threshold outside ``(0, 1)`` (``ValueError`` naming the option)."""
    if isinstance(threshold, float) and threshold != threshold:
        raise ValueError(f"{name} is not a number: {threshold!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold < 1:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {threshold!r}")


class Aggregation(str, Enum):
    """How the tagged tokens of a span become the characters that are replaced."""

    SIMPLE = "simple"  # the tagged tokens' characters, widened to whole morphemes
    HYSTERESIS = "hysteresis"  # first grown over touching same-word tokens above grow_threshold, then as SIMPLE


@dataclass(frozen=True)
class OperatingPoint:
    """The thresholds a model was validated at: what :func:`entity_tags` and :func:`aggregate` use by default.

    ``grow_threshold`` None turns span growing off; at or above ``threshold`` it can grow nothing (a token above
    ``threshold`` is tagged already), so the aggregation is :attr:`Aggregation.SIMPLE` then too.
    """

    threshold: float = THRESHOLD
    grow_threshold: float | None = GROW_THRESHOLD

    def __post_init__(self) -> None:
        check_threshold(self.threshold)
        if self.grow_threshold is not None:
            check_threshold(self.grow_threshold, "grow_threshold")

    @property
    def aggregation(self) -> Aggregation:
        grows = self.grow_threshold is not None and self.grow_threshold < self.threshold
        return Aggregation.HYSTERESIS if grows else Aggregation.SIMPLE

    def given(self, threshold: float | None = None, grow_threshold: float | Literal["off"] | None = None) -> OperatingPoint:
        """This operating point with the thresholds a user gave (None: this one's; ``grow_threshold`` ``off``: no
        growing), checked like any other."""
        changes: dict[str, Any] = {} if threshold is None else {"threshold": threshold}
        if grow_threshold is not None:
            changes["grow_threshold"] = None if grow_threshold == "off" else grow_threshold
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form stored in checkpoints and exports."""
        return asdict(self)

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any] | None) -> "OperatingPoint":
        """The stored operating point (``None``: an artefact written before it was stored: the defaults)."""
        if stored is None:
            return cls()
        if not isinstance(stored, Mapping) or set(stored) - {"threshold", "grow_threshold"}:
            raise ValueError(f"the stored operating point {stored!r} is not {{threshold, grow_threshold}}")
        return cls(**stored)


# ----------------------------------------------------------------------------------------------- tokens


def entity_tags(probs: "Tensor", threshold: float = THRESHOLD, outside_id: int = 0) -> "Tensor":
    """Tag ids from class probabilities (..., tags): a token is an identifier when its identifier probability
    ``1 - P(O)`` exceeds ``threshold``, and then gets its most likely entity tag; otherwise ``O``.

    At 0.5 this differs from the argmax where the identifier probability is the larger but is spread over several
    entity types (``O`` 0.4, person 0.3, company 0.3 is an identifier). Lower thresholds trade precision for recall.
    """
    import torch

    entity_probs = probs.clone()
    entity_probs[..., outside_id] = -1
    best_entity = entity_probs.argmax(dim=-1)
    return torch.where(probs[..., outside_id] < 1 - threshold, best_entity, torch.full_like(best_entity, outside_id))


@dataclass
class TokenPredictions:
    """Per-token model output of one document after merging its windows."""

    offsets: list[tuple[int, int]]
    tags: list[int] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)  # 1 - P(O)
    morphemes: list[tuple[int, int]] | None = None  # the text's morpheme_pieces when the tokenizer gave them
    types: list[int] = field(default_factory=list)  # the most likely entity tag, whatever its probability (triage)


def character_scores(prediction: TokenPredictions, length: int) -> array:
    """Per character of a document of ``length`` characters, the ``1 - P(O)`` of the token holding it (0 outside
    every token): the model's evidence at any place of the text, whatever was decided there."""
    scores = array("f", bytes(4 * length))
    for (start, end), score in zip(prediction.offsets, prediction.scores):
        scores[start:end] = array("f", [score]) * (end - start)
    return scores


def merge_windows(
    n_docs: int, windows: Sequence, outputs: Sequence[tuple[list[int], list[float], list[int]]]
) -> list[TokenPredictions]:
    """Concatenate each window's own tokens (every token comes from the window where it is most central)."""
    merged = [TokenPredictions([]) for _ in range(n_docs)]
    for window, (tags, scores, types) in zip(windows, outputs):
        doc = merged[window.doc]
        own = slice(1 + window.own_start - window.start, 1 + window.own_end - window.start)
        doc.offsets.extend(window.offsets[own])
        doc.tags.extend(tags)
        doc.scores.extend(scores)
        doc.types.extend(types)
    return merged


def token_spans(tag_ids: Sequence[int], label_set: "LabelSet") -> list[tuple[int, int, str]]:
    """Token spans ``[start, end)`` with their entity type. IO: consecutive tokens of one type merge; BIO: B starts
    a new span and an I that does not continue a span of its type starts one too."""
    spans: list[tuple[int, int, str]] = []
    start, current = 0, None
    for index, tag_id in enumerate(tag_ids):
        tag_id = int(tag_id)
        if not 0 <= tag_id < len(label_set.names):
            raise ValueError(f"tag id {tag_id} at position {index} is outside 0..{len(label_set.names) - 1}")
        tag = label_set.tag(tag_id)
        if tag is not None and tag[0] == current and not tag[1]:
            continue
        if current is not None:
            spans.append((start, index, current))
        start, current = index, (tag[0] if tag is not None else None)
    if current is not None:
        spans.append((start, len(tag_ids), current))
    return spans


# ----------------------------------------------------------------------------------------------- characters


def joined_in_words(
    spans: Sequence[tuple[int, int, str]], offsets: Sequence[tuple[int, int]]
) -> list[tuple[int, int, str]]:
    """Token spans of different types that follow each other with no character between (one word the model tagged
    with two types: ``시바|이|누`` as 금융서비스, 사업체, 금융서비스) joined into one span, of the type that tags most
    of its characters (the first of equals): one entity, one placeholder, where each type would have made one of its
    own. Spans of one type stay apart (under BIO, a ``B`` tag's)."""
    joined: list[tuple[int, int, dict[str, int], str]] = []  # first, last, characters per type, the last type
    for first, last, entity_type in spans:
        chars = offsets[last - 1][1] - offsets[first][0]
        touching = joined and joined[-1][1] == first and offsets[first - 1][1] >= offsets[first][0]
        if touching and joined[-1][3] != entity_type:
            start, _, types, _ = joined[-1]
            types[entity_type] = types.get(entity_type, 0) + chars
            joined[-1] = (start, last, types, entity_type)
        else:
            joined.append((first, last, {entity_type: chars}, entity_type))
    return [(first, last, max(types, key=types.__getitem__)) for first, last, types, _ in joined]


def grow_within_word(prediction: TokenPredictions, first: int, last: int, threshold: float) -> tuple[int, int]:
    """Token span ``[first, last)`` grown over the untagged tokens touching it inside the same word (no whitespace
    between) whose entity score ``1 - P(O)`` exceeds ``threshold``: the low threshold of a hysteresis, so a word the
    model marks in part (``부산|은행``, ``이|깜히|전``) is replaced whole while particles (scores near 0) stay."""
    offsets, tags, scores = prediction.offsets, prediction.tags, prediction.scores
    # touching: no character between (the bytes of one character share its offsets)
    while first > 0 and tags[first - 1] == 0 and scores[first - 1] > threshold:
        if offsets[first - 1][1] < offsets[first][0]:
            break
        first -= 1
    while last < len(tags) and tags[last] == 0 and scores[last] > threshold:
        if offsets[last][0] > offsets[last - 1][1]:
            break
        last += 1
    return first, last


def widen_to_morphemes(
    pieces: Sequence[tuple[int, int]], piece_ends: Sequence[int], text: str, start: int, end: int
) -> tuple[int, int]:
    """``[start, end)`` widened to the morphemes it touches (the space a piece starts with stays out), except a
    particle ending the last one past ``end``: Mecab keeps a rare syllable and its particle in one unknown
    morpheme (``김|냘라의``) where the model tagged only the name's tokens (``김냘라``)."""
    for index in range(bisect.bisect_right(piece_ends, start), len(pieces)):  # no slice: a copy per span is quadratic
        piece_start, piece_end = pieces[index]
        if piece_start >= end:
            break
        while piece_start < piece_end and text[piece_start].isspace():
            piece_start += 1
        if piece_start < start and piece_start < piece_end:
            start = piece_start
        if piece_end > end:
            end = piece_end - len(trailing_particle(text[end:piece_end]))
    return start, end


# The last syllables a model span keeps though they read as its particle (ENTITY_FINAL_PARTICLES), but ``랑``: where
# Mecab-ko reads it as no noun's syllable and a full name remains (``김영희|랑``; ``김|하랑`` keeps it), the particle
MODEL_ENTITY_FINALS = ENTITY_FINAL_PARTICLES - {"랑"}


def without_final_particles(
    pieces: Sequence[tuple[int, int]], piece_ends: Sequence[int], text: str, start: int, end: int, tagged_end: int = 0
) -> int:
    """The end of ``[start, end)`` short of the particles after it, so the particle after the replacement is
    corrected, not lost: those that Mecab-ko reads as morphemes of their own (``홍길동|은``, ``5678|로``) where the
    model did not tag them (they start at or after ``tagged_end``: reached by growing or widening), then, tagged or
    not, those :func:`~thunder.language.morphemes.final_particles` finds (``정미래는``: a particle Mecab-ko joins to
    the name's last syllable, ``정미|래는``) where :data:`FULL_NAME` characters remain (a Korean name is mostly a
    surname and two syllables: ``김수와``, ``김뒥이`` stay whole). The last syllable of a name the model took stays
    the name's where it cannot be the particle after it (``성가|이``, ``이별|와``: the particle would be ``가``,
    ``과``) or is a common last syllable of names (``김하랑``; ``랑`` after a full name is the particle: ``김영희|랑``).
    A vocative ending the word before a comma or the like is the particle (``홍길동|아,``). A particle inside a
    morpheme (``김지은``) is part of the word and stays, and so does one the word goes on after with more than
    particles (``청주리버파크자|이|아파트``: a name's last syllable)."""
    word_end = end
    while word_end < len(text) and text[word_end].isalnum():
        word_end += 1
    index = bisect.bisect_left(piece_ends, end)
    while index > 0 and index < len(pieces) and pieces[index][1] == end:
        piece_start = pieces[index][0]
        if piece_start <= start or piece_start < tagged_end or not PARTICLE_RUN.fullmatch(text, piece_start, word_end):
            break
        end, index = piece_start, index - 1
    cut = final_particles(text, start, end, MODEL_ENTITY_FINALS)
    return end - cut if len(text[start : end - cut].replace(" ", "")) >= FULL_NAME else end


_WORD_ENDS = ("NNB", "XSN", "VCP", "J", "E")  # what may follow an entity inside its word: 등, 측, 들, 이다, particles


def with_last_syllable(text: str, start: int, end: int) -> int:
    """The end of ``[start, end)`` past the one Hangul syllable left between it and the rest of its word when that
    syllable is no particle, suffix or bound noun (Mecab-ko's reading of the word) and only particles follow it: the
    last syllable of a name the model stopped short of (``박산로|뭐``, ``심인강|하는``), which would be left in the
    text beside the replacement (``A뭐``)."""
    word_start, word_end = start, end
    while word_start > 0 and text[word_start - 1].isalnum():
        word_start -= 1
    while word_end < len(text) and text[word_end].isalnum():
        word_end += 1
    if end >= word_end or not "가" <= text[end] <= "힣" or starts_with_particle(text[end:word_end]):
        return end
    if end + 1 < word_end and not PARTICLE_RUN.fullmatch(text, end + 1, word_end):
        return end
    position = word_start
    for surface, tag, _ in word_analysis(text[word_start:word_end]):
        if position <= end < position + len(surface):
            return end if tag.startswith(_WORD_ENDS) else end + 1
        position += len(surface)
    return end


# Latin letters and digits joined by . _ - (an account name, a handle, a code); at least one letter
_LATIN_RUN = re.compile(r"[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*")
_LATIN_RUN_CHARS = frozenset(string.ascii_letters + string.digits + "._-")


def widen_to_latin_runs(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` widened over a run of Latin letters and digits joined by ``.``, ``_`` or ``-`` that it cuts
    (``'raye|.6'``, ``kim|_88``): Mecab-ko splits such a handle at its punctuation, and the model may tag one part
    only, which would leave the rest of an identifier in the text. Runs without a letter (dates, amounts) are left
    as they are."""
    for edge in (start, end - 1):
        left = edge
        while left > 0 and text[left - 1] in _LATIN_RUN_CHARS:
            left -= 1
        for match in _LATIN_RUN.finditer(text, left):
            if match.start() > edge:
                break
            if match.end() > edge and any(c.isalpha() for c in match.group()):
                start, end = min(start, match.start()), max(end, match.end())
    return start, end


def aggregate(
    text: str, prediction: TokenPredictions, label_set: "LabelSet", point: OperatingPoint
) -> list[ScoredSpan]:
    """The model's character spans of one document (source ``"model"``, score the mean ``1 - P(O)`` of their
    tokens), aggregated as ``point.aggregation`` says."""
    if not prediction.tags:
        return []
    pieces = prediction.morphemes if prediction.morphemes is not None else morpheme_pieces(text)
    piece_ends = [piece_end for _, piece_end in pieces]
    spans = []
    for first, last, entity_type in joined_in_words(token_spans(prediction.tags, label_set), prediction.offsets):
        tagged_end = prediction.offsets[last - 1][1]
        if point.aggregation is Aggregation.HYSTERESIS:
            first, last = grow_within_word(prediction, first, last, point.grow_threshold)  # type: ignore[arg-type]
        start, end = prediction.offsets[first][0], prediction.offsets[last - 1][1]
        start, end = widen_to_latin_runs(text, *widen_to_morphemes(pieces, piece_ends, text, start, end))
        end = with_last_syllable(text, start, without_final_particles(pieces, piece_ends, text, start, end, tagged_end))
        info = label_set.describe(entity_type)
        score = sum(prediction.scores[first:last]) / (last - first)
        spans.append(
            ScoredSpan(start, end, info.label or entity_type, score, "model", info.category, info.tier1)
        )
    return spans
