"""Fill the placeholders of an annotated judgment with sampled mentions: training text with gold spans.

Every entity (label + letter) of a document gets one mention, drawn from its label's source with the text
around all its occurrences as context; the mention is the same at each occurrence. The draw is seeded from
``(seed, epoch, doc_id, label, entity)`` through ``hashlib``, so it does not depend on call order, worker or
rank; with ``replacement="single"`` the epoch is ignored and a document always reads the same.

A tag names a label (through the taxonomy's aliases and normalisation) or a category: a category's placeholder is
filled as one of its labels that have a mention source, drawn per (seed, epoch, document, entity), and its gold span
carries that label. A placeholder of a reviewed judgment (:mod:`thunder.documents.reviewed`) knows the shape of the identifier
it stood for; where its label has no mention source it is filled with a random string of that shape.

Placeholder quirks of the corpus are handled where the text allows it:

* a code with a word (``E모텔`` under ``<<<모텔>>>``) keeps the word: ``E`` is replaced, ``모텔`` stays;
  content that is no code at all (the tag itself, ``계좌번호 1 생략``, ``김○○``) is replaced as a whole;
* a generic word written again beside the placeholder (``D 주식회사``, ``N은행``, ``주식회사 E``) is cut from
  the mention when the mention has it too, so the result reads ``한빛건설 주식회사``, not
  ``한빛건설 주식회사 주식회사``;
* a redaction note the annotators left after the placeholder (``<<<차량번호>>>차량번호<<</차량번호>>> 1 생략)``)
  is dropped with the placeholder content, so the text reads ``(12가3456)``;
* a generic head noun that ends a mention (``래미안아파트`` under 아파트) stays outside the span for the labels in
  ``head_outside``: the corpus's own convention where its annotators mostly wrote it after the placeholder
  (``<<<아파트>>>E<<</아파트>>>아파트``); :func:`head_outside_labels` reads that convention from the documents;
* a particle after the placeholder that the mention does not agree with (mentions are drawn to agree, but a
  list may have no agreeing entry) is corrected (``은`` -> ``는``).

Each :class:`EntitySpan` covers exactly the inserted mention (with a kept inner word such as ``모텔``, without a
head noun kept outside); quotes and spaces that the parser left outside the placeholder stay outside the span.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from thunder.documents.annotation import AnnotatedDocument, Placeholder
from thunder.language.particles import fixed_particle
from thunder.seeds import stable_seed
from thunder.synthesis.mentions import MentionBank, MentionContext, particle_after
from thunder.synthesis.names import random_shape
from thunder.taxonomy import Taxonomy, UnknownTagError, head_noun

__all__ = [
    "REPLACEMENTS",
    "EntitySpan",
    "SynthesisError",
    "SynthesizedDocument",
    "Synthesizer",
    "head_outside_labels",
    "leftovers",
    "stable_seed",
]

REPLACEMENTS = ("per_epoch", "single")
CONTEXT_CHARS = 40
_CODE_WITH_WORD = re.compile(r"([A-Z]{1,3})([가-힣]+)")
_BETWEEN = " \t'\"‘’“”"  # what may stand between a mention and a repeated generic word
_NOTE_AFTER = re.compile(r"[ \t]*(?:\d+[ \t]*)?생략(?=[ \t]*\))")  # "… 1 생략)" after a placeholder


class SynthesisError(ValueError):
    """A document cannot be synthesized (unknown tag, overlapping placeholders); names file and position."""


@dataclass(frozen=True)
class EntitySpan:
    """Characters ``[start, end)`` of a synthesized text that hold one mention of ``entity``."""

    start: int
    end: int
    label: str  # canonical tier-3 label
    entity: str


@dataclass(frozen=True)
class SynthesizedDocument:
    """A filled judgment: its text and the gold span of every inserted mention, in text order."""

    doc_id: str
    text: str
    spans: tuple[EntitySpan, ...]


def _kept_word(core: str, entity: str) -> str:
    """The word of a code-with-word placeholder that stays in the text (``모텔`` of ``E모텔``), else ``""``."""
    match = None if core == entity else _CODE_WITH_WORD.fullmatch(core)
    return match.group(2) if match else ""


def _trim(mention: str, left: str, right: str, words: tuple[str, ...]) -> str:
    """``mention`` without a generic word (a part of the label or raw tag) that the text repeats right after
    (``한빛 주식회사`` + `` 주식회사``) or right before (``주식회사 `` + ``주식회사 한빛``) it."""
    after = right.lstrip(_BETWEEN)
    for k in range(len(mention) - 1, 0, -1):
        word = mention[-k:].strip()
        if word and after.startswith(word) and any(w.endswith(word) for w in words) and mention[:-k].strip():
            mention = mention[:-k].rstrip()
            break
    before = left.rstrip(_BETWEEN)
    for k in range(len(mention) - 1, 0, -1):
        word = mention[:k].strip()
        if len(word) > 1 and before.endswith(word) and any(word in w for w in words) and mention[k:].strip():
            mention = mention[k:].lstrip()
            break
    return mention


def head_outside_labels(
    documents: Iterable[AnnotatedDocument], taxonomy: Taxonomy, min_share: float = 0.5
) -> frozenset[str]:
    """Quasi-identifier labels whose placeholders the documents follow with a head noun of the label or raw tag
    (``<<<병원>>>C<<</병원>>>병원``, ``<<<호>>>D<<</호>>>호`` under 호실) at least ``min_share`` of the time; tags
    the taxonomy does not know are skipped."""
    if not 0 < min_share <= 1:
        raise ValueError(f"min_share must be in (0, 1], got {min_share}")
    total: Counter[str] = Counter()
    followed: Counter[str] = Counter()
    for doc in documents:
        for p in doc.placeholders:
            try:
                label = taxonomy.resolve(p.tag).label
            except UnknownTagError:
                continue
            if label.tier1 != "quasi":
                continue
            total[label.name] += 1
            after = doc.text[p.end : p.end + CONTEXT_CHARS].lstrip(_BETWEEN)
            words = (label.name, "".join(p.tag.split()))
            followed[label.name] += any(after.startswith(w[-size:]) for w in words for size in range(1, len(w) + 1))
    return frozenset(label for label, count in total.items() if followed[label] >= min_share * count)


def _head(mention: str, words: tuple[str, ...]) -> str:
    """The longest head noun of any of ``words`` (label, raw tag) that ends ``mention``."""
    return max((head_noun(mention, w) for w in words), key=len)


class Synthesizer:
    """``AnnotatedDocument`` -> :class:`SynthesizedDocument`, seeded per (seed, epoch, document).

    ``head_outside``: labels whose head noun ending a mention stays outside its span (:func:`head_outside_labels`);
    ``substitution``: a last step over the filled document (:class:`thunder.synthesis.vocabulary.NounSubstitution`).
    """

    def __init__(
        self,
        taxonomy: Taxonomy,
        mentions: MentionBank,
        seed: int = 0,
        replacement: str = "per_epoch",
        head_outside: Collection[str] = frozenset(),
        substitution: Callable[[SynthesizedDocument, int], SynthesizedDocument] | None = None,
    ) -> None:
        if replacement not in REPLACEMENTS:
            raise ValueError(f"replacement must be one of {REPLACEMENTS}, got {replacement!r}")
        self.taxonomy = taxonomy
        self.mentions = mentions
        self.seed = seed
        self.replacement = replacement
        self.head_outside = frozenset(head_outside)
        self.substitution = substitution
        self._choices: dict[str, tuple[str, ...]] = {}

    def _label(self, doc: AnnotatedDocument, placeholder: Placeholder, epoch: int) -> str:
        """The label a placeholder is filled as: its tag's, or (a category's name) one of the category's labels
        that have a mention source, drawn per entity and epoch."""
        choices = self._choices.get(placeholder.tag)
        if choices is None:
            try:
                labels = [label.name for label in self.taxonomy.labels_of(placeholder.tag)]
            except UnknownTagError as error:
                where = f"{doc.source or doc.doc_id}:{placeholder.line}:{placeholder.column}"
                raise SynthesisError(f"{where}: {error}") from None
            choices = tuple(name for name in labels if name not in self.mentions.missing) or (labels[0],)
            self._choices[placeholder.tag] = choices
        if len(choices) == 1:
            return choices[0]
        rng = random.Random(stable_seed(self.seed, epoch, doc.doc_id, placeholder.tag, placeholder.entity))
        return rng.choice(choices)

    def __call__(self, doc: AnnotatedDocument, epoch: int = 0) -> SynthesizedDocument:
        text = doc.text
        placeholders = sorted(doc.placeholders, key=lambda p: (p.start, p.end))
        for before, after in zip(placeholders, placeholders[1:]):
            if after.start < before.end:
                where = f"{doc.source or doc.doc_id}:{after.line}:{after.column}"
                raise SynthesisError(f"{where}: placeholder overlaps the one at {before.line}:{before.column}")
        epoch_key = epoch if self.replacement == "per_epoch" else 0
        labels = [self._label(doc, p, epoch_key) for p in placeholders]
        groups: dict[tuple[str, str], list[int]] = {}
        for index, (p, label) in enumerate(zip(placeholders, labels)):
            groups.setdefault((label, p.entity), []).append(index)

        parts: list[str] = []
        spans: list[EntitySpan] = []
        chosen: dict[tuple[str, str], str] = {}
        length = cursor = 0
        tail = ""  # the last characters written, the left context of the next placeholder

        def write(piece: str) -> None:
            nonlocal length, tail
            parts.append(piece)
            length += len(piece)
            tail = (tail + piece)[-CONTEXT_CHARS:]

        for index, (p, label) in enumerate(zip(placeholders, labels)):
            write(text[cursor : p.start])
            word = _kept_word(text[p.start : p.end], p.entity)
            key = (label, p.entity)
            if key not in chosen:
                occurrences = []
                for other in groups[key]:
                    q = placeholders[other]
                    left = tail if other == index else text[max(0, q.start - CONTEXT_CHARS) : q.start]
                    q_word = _kept_word(text[q.start : q.end], q.entity)
                    occurrences.append((left, q_word + text[q.end : q.end + CONTEXT_CHARS]))
                rng = random.Random(stable_seed(self.seed, epoch_key, doc.doc_id, label, p.entity))
                if p.shape and label in self.mentions.missing:  # no source: a random string of the reviewed shape
                    chosen[key] = random_shape(p.shape, rng, label)
                else:
                    chosen[key] = self.mentions.sample(label, rng, MentionContext(label, tuple(occurrences)))
            words = (label, "".join(p.tag.split()), word) if word else (label, "".join(p.tag.split()))
            following = text[p.end : p.end + CONTEXT_CHARS]
            inserted = _trim(chosen[key], tail, word + following, words) + word
            head = "" if word or label not in self.head_outside else _head(inserted, words)
            covered = inserted[: len(inserted) - len(head)].rstrip() if head else inserted
            spans.append(EntitySpan(length, length + len(covered or inserted), label, p.entity))
            write(inserted)
            cursor = p.end
            note = _NOTE_AFTER.match(text, cursor)
            if note is not None:
                cursor = note.end()
            if not word and particle_after(label, following):
                fixed = fixed_particle(inserted, following)
                if fixed is not None:
                    write(fixed[0])
                    cursor += fixed[1]
        write(text[cursor:])
        filled = SynthesizedDocument(doc.doc_id, "".join(parts), tuple(spans))
        return filled if self.substitution is None else self.substitution(filled, epoch)


_LEFTOVER = re.compile(r"<<<|>>>|생략")


def leftovers(doc: AnnotatedDocument, out: SynthesizedDocument) -> list[str]:
    """Placeholder text that survived synthesis (expected: none): a letter code (``F``, ``E모텔``) left as it
    was, a redaction note (``생략``) or mask (``○``) inside a mention, tag markup anywhere in the text."""
    found = []
    for placeholder, span in zip(sorted(doc.placeholders, key=lambda p: (p.start, p.end)), out.spans):
        content = doc.text[placeholder.start : placeholder.end]
        mention = out.text[span.start : span.end]
        masked = "○" in mention and "○" in content  # a generator may write ○ on purpose (홍○동), a kept mask not
        if _LEFTOVER.search(mention) or masked or (mention == content and _CODE_WITH_WORD.fullmatch(content + "가")):
            found.append(mention)
    found += re.findall(r"<<<[^>]*>>>|>>>", out.text)
    return found
