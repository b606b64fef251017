"""De-identification: text -> windows -> model -> spans ∪ recognizer spans -> entities -> operator -> particle fix.

:class:`Deidentifier` is the Python API (:class:`PipelineOptions` builds one from the options that ``thunder deid``,
``thunder evaluate`` and ``thunder predict`` share), and :mod:`thunder.prediction` runs the same steps over a corpus
with Lightning.

Steps for one document:

1. The tokenizer gives token ids with character offsets; a document of any length is cut into overlapping windows
   of ``max_length`` ids (``stride`` tokens of overlap). Every token takes its tag from the window where it is most
   central (overlaps are split halfway), so nothing is truncated and window edges get full context.
2. Token tags -> character spans as :mod:`thunder.decoding` says (the decision rule at the model's operating point,
   hysteresis growing inside a word, widening to whole Mecab morphemes: a particle is a morpheme of its own, so it
   never enters a span).
3. Recognizer spans (:mod:`thunder.recognizers`) are added, and the names of the officials whose roles the
   policy does not keep (``keep_officials``); the model's spans over legal text, protected words, the kept
   officials' names or the upper levels of addresses (``keep_regions``) are dropped or trimmed
   (:mod:`thunder.protected`); overlapping spans merge into their union
   (``Overlap.UNION``), labelled by the most confident one. Spans without a letter or digit are dropped, surrounding
   spaces trimmed.
4. Mentions are grouped into entities by their whitespace-free text, an address's leading province written in
   full (:func:`thunder.operators.entity_key`: ``서울특별시 강남구 …``, ``서울시 강남구 …`` and ``서울 강남구 …`` are one
   entity; a province name is normalised only where a lower administrative unit follows it); a mention that is
   another entity's text plus a particle (``홍길동이`` beside ``홍길동``) is shrunk to that entity. Every further
   occurrence of an entity's text (two or more characters; at a word boundary where it starts or ends with a Latin
   letter or digit; an address under every spelling of its province) is replaced too (``origin``: the span it
   repeats), so a detected identifier never survives elsewhere in the document: the text of a recognizer's, the
   officials' rule's or a reviewer's span always, a model span's only from ``propagate_threshold`` and when it is
   not a common word of the genre (:mod:`thunder.genre`) or a general noun of Korean (:mod:`thunder.vocabulary`)
   nor a short number, and never into protected text.
5. Entities get placeholders A, B, ..., Z, AA, ... in order of first appearance, skipping capital letters that
   occur in any detected text and placeholders that already stand alone in the text (a partly de-identified
   judgment); the operator chosen for the entity's label, category or tier 1 (:mod:`thunder.operators`) makes each mention's replacement and the
   particle after it is made to agree (``홍길동이`` -> ``A가``, ``김철수는`` -> ``L은``).

Guarantees (tested): every character outside the replaced spans is kept, except a particle directly after a
replacement that is corrected; the output never contains the text of a propagating span (step 4) of two or more
characters (at a word boundary as in step 4; a model span's text stays where it is protected text), nor such an
address under another spelling of its province — a particle correction that would recreate one is not made.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Sequence

from thunder.annotation import placeholder_sequence
from thunder.decoding import (
    GROW_THRESHOLD,
    THRESHOLD,
    OperatingPoint,
    Overlap,
    TokenPredictions,
    aggregate,
    entity_tags,
    merge_windows,
    resolve_overlaps,
)
from thunder.inference import RUNTIMES, Runtime, TorchRuntime, check_device, load_runtime
from thunder.operators import Entity, OperatorChoice, OperatorSpec, entity_key, mask_character
from thunder.particles import PARTICLE_RUN, fix_particle, leading_particle, run_agrees
from thunder.genre import load_genre_words
from thunder.legal import OFFICIAL_ROLES, official_names
from thunder.protected import Protection, covered, load_protected
from thunder.masked_name import MaskedNameRecognizer
from thunder.named_in_role import NamedInRoleRecognizer
from thunder.named_in_table import NamedInTableRecognizer
from thunder.recognizers import Recognizer, ScoredSpan, load_recognizers, recognize
from thunder.regions import address_spellings
from thunder.taxonomy import TIER1, Taxonomy
from thunder.tokenizer import check_windows
from thunder.vocabulary import load_general_nouns


@dataclass(frozen=True)
class DetectedSpan:
    """One replaced span of the input text (offsets into the original)."""

    start: int
    end: int
    text: str
    label: str
    category: str | None
    tier1: str | None
    placeholder: str  # the entity's letter in the document
    score: float
    source: str  # "model", a recognizer name, "officials", "reviewer" or "propagated"
    origin: tuple[int, int] | None = None  # a propagated span: the span whose text it repeats


@dataclass(frozen=True)
class DeidResult:
    """De-identified text and the spans that were replaced."""

    text: str
    spans: tuple[DetectedSpan, ...]


PROPAGATE_THRESHOLD = 0.5  # a model span spreads to its text's other occurrences from this score (docs/pipeline.md)
SPREADING_NUMBER = 6  # a model span of digits and punctuation only spreads from this many characters
_WORD = re.compile(r"\w")
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")
_NON_SPACE = re.compile(r"\S")
_FEW_KEYS = 32
_STANDING_LETTERS = re.compile(r"(?<![A-Za-z0-9])[A-Z]{1,3}(?![A-Za-z0-9])")


# ----------------------------------------------------------------------------------------------- span steps


def _trim(text: str, span: ScoredSpan) -> ScoredSpan | None:
    """``span`` without surrounding whitespace, or ``None`` when it holds no letter or digit."""
    start, end = span.start, span.end
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if not _WORD.search(text[start:end]) or text[start:end].strip("_") == "":
        return None
    return replace(span, start=start, end=end)


def _particle_variants(text: str, spans: list[ScoredSpan]) -> list[ScoredSpan]:
    """Make the mentions of one entity that differ by a particle agree, so that they get one placeholder.

    A mention that is another mention's text plus a particle (``홍길동`` and ``홍길동이``) is cut to the shorter text,
    unless the document shows the longer one is the name: somewhere its last letters are followed by further
    particles that agree with it (``심륭이의``, ``심륭이는``: ``이`` is no particle there). Then every mention of the
    shorter text followed by those letters grows to the longer one (``심륭|이`` in ``1. 심륭이``).
    """
    keys = {entity_key(text[s.start : s.end]) for s in spans}
    cuts: dict[int, int] = {}  # span index -> length of the shorter mention it may be cut to
    names: set[str] = set()  # longer texts the document shows to be whole
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
            else:
                cuts[index] = cut
            break
    result = []
    for index, span in enumerate(spans):
        mention = entity_key(text[span.start : span.end])
        if index in cuts and mention not in names:
            span = replace(span, end=span.start + cuts[index])
        elif names:
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
    found under every spelling of its province (:func:`thunder.regions.address_spellings`: ``서울특별시강남구…`` also
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


def _held_back(seed: ScoredSpan, text: str, start: int, end: int, protected: bytearray | None) -> bool:
    """Whether ``seed``'s text stays at ``text[start:end]``: a model seed never spreads into ``protected`` text."""
    return seed.source == "model" and protected is not None and covered(text, start, end, protected)


def _propagate(
    text: str, spans: list[ScoredSpan], seeds: Mapping[str, ScoredSpan], protected: bytearray | None
) -> list[ScoredSpan]:
    """Add every further occurrence of a seed's text (two or more characters) as a span of the same entity, with
    ``origin`` the seed's offsets, longer texts first; a model seed never spreads into ``protected`` text
    (:mod:`thunder.protected`). An occurrence that holds spans of its own takes their place (``올가·소콜로프`` found
    where the model took only ``소콜로프``), so no part of a detected entity's text is left beside them; one that
    crosses a span's edge is left as it is."""
    current = list(spans)  # disjoint, sorted
    starts, ends = [s.start for s in current], [s.end for s in current]
    for start, end, key in sorted(find_keys(text, seeds), key=lambda f: (-len(f[2]), f[0])):
        seed = seeds[key]
        if _held_back(seed, text, start, end, protected):
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


# ----------------------------------------------------------------------------------------------- the pipeline


class Deidentifier:
    """A trained token classifier plus recognizers and operators: ``Deidentifier(...)(text) -> DeidResult``.

    ``model`` may be ``None`` (recognizers only). ``recognizers`` are names/paths/instances for
    :func:`thunder.recognizers.load_recognizers` (``None``: all built-in, ``[]``: none); ``operator`` is a name,
    path, ``{class_path, init_args}`` or :class:`~thunder.operators.Operator`, and ``operators`` maps a label,
    category or tier 1 to another one (:class:`~thunder.operators.OperatorChoice`). ``batch_size`` counts windows
    per forward pass. A token is an identifier when the model gives it ``1 - P(O) > threshold``
    (:func:`thunder.decoding.entity_tags`); ``grow_threshold`` is the low threshold of span growing (None: off).
    :meth:`from_pretrained` defaults both to the operating point stored with the model. ``runtime`` turns padded
    window batches into probabilities (:mod:`thunder.inference`; default: the model in PyTorch). The model's spans
    never replace legal text (``legal_text``), protected words, the names of the officials of ``keep_officials`` or
    (``keep_regions``) the upper levels of addresses (:class:`~thunder.protected.Protection`); the officials
    of the other roles are replaced (source ``officials``). A model span's text is propagated to its other
    occurrences only when its score is at least ``propagate_threshold`` and it is not one of the ``genre_words``
    (:func:`thunder.genre.load_genre_words`; by default also the general nouns of Korean); spans of every other
    source always propagate. Options out of range raise ``ValueError`` before anything runs.
    """

    def __init__(
        self,
        model: Any = None,
        tokenizer: Any = None,
        label_set: Any = None,
        recognizers: Sequence[str | dict | Recognizer] | None = None,
        operator: OperatorSpec = "placeholder",
        operators: Mapping[str, OperatorSpec] | None = None,
        max_length: int = 512,
        stride: int = 128,
        batch_size: int = 8,
        device: str | None = None,
        threshold: float = THRESHOLD,
        taxonomy: Taxonomy | None = None,
        protected_words: bool | Sequence[str] | None = None,
        grow_threshold: float | None = GROW_THRESHOLD,
        runtime: Runtime | None = None,
        legal_text: bool | Sequence[str] | None = True,
        keep_officials: Sequence[str] = OFFICIAL_ROLES,
        propagate_threshold: float = PROPAGATE_THRESHOLD,
        genre_words: bool | str | Sequence[str] | None = True,
        keep_regions: bool = True,
    ) -> None:
        if model is not None and (tokenizer is None or label_set is None):
            raise ValueError("a model needs its tokenizer and label_set")
        check_device(device)
        OperatingPoint(threshold, grow_threshold)  # refuses thresholds outside (0, 1)
        if isinstance(propagate_threshold, bool) or not isinstance(propagate_threshold, (int, float)) or not (
            0 <= propagate_threshold <= 1
        ):
            raise ValueError(f"propagate_threshold must lie in [0, 1], got {propagate_threshold!r}")
        check_windows(max_length, stride)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a whole number of at least 1, got {batch_size!r}")
        self.threshold, self.grow_threshold = threshold, grow_threshold
        if isinstance(keep_officials, str):
            raise ValueError(f"keep_officials must be a list of roles among {list(OFFICIAL_ROLES)}, "
                             f"got {keep_officials!r}")  # fmt: skip
        self.protection = Protection(legal_text, load_protected(protected_words), keep_officials, keep_regions)
        self.replaced_officials = tuple(role for role in OFFICIAL_ROLES if role not in self.protection.kept_officials)
        general_nouns = frozenset(load_general_nouns()) if genre_words is True else frozenset()
        self.propagate_threshold = float(propagate_threshold)
        self.genre_words = load_genre_words(genre_words) | general_nouns
        self.model, self.tokenizer, self.label_set = model, tokenizer, label_set
        self.taxonomy: Taxonomy = label_set.taxonomy if label_set is not None else taxonomy or _default_taxonomy()
        self.recognizers = load_recognizers(recognizers, taxonomy=self.taxonomy)  # labels from the taxonomy
        self.operators = OperatorChoice(operator, operators, self.taxonomy)
        self.operators.check(self.taxonomy.labels, self.taxonomy.categories, TIER1)
        self.max_length, self.stride, self.batch_size = max_length, stride, batch_size
        if model is not None:
            if device is not None:
                model.to(device)
            model.eval()
        self.runtime = runtime or (TorchRuntime(model) if model is not None else None)

    @property
    def operating_point(self) -> OperatingPoint:
        """The thresholds the model runs at."""
        return OperatingPoint(self.threshold, self.grow_threshold)

    @classmethod
    def from_pretrained(
        cls, path: str | Path, taxonomy: str | Path | None = None, runtime: str = "auto", **options: Any
    ) -> "Deidentifier":
        """Load an export directory or a ``.ckpt`` (see :func:`thunder.checkpoint.load_exported`); an explicit
        ``taxonomy`` must be the one the model was trained with. ``threshold`` and ``grow_threshold`` default to the
        operating point stored with the model. ``runtime``: ``auto`` runs the export's ONNX graph when it has one,
        else PyTorch; ``torch`` or ``onnx`` choose (:func:`thunder.inference.load_runtime`)."""
        from thunder.checkpoint import load_exported

        loaded = load_exported(path, taxonomy)
        options = {**loaded.operating_point.to_dict(), **options}
        runtime_ = load_runtime(path, loaded.model, runtime)
        return cls(loaded.model, loaded.tokenizer, loaded.label_set, runtime=runtime_, **options)

    def __call__(self, text: str) -> DeidResult:
        return self.deidentify_batch([text])[0]

    def coverage(self) -> str | None:
        """Without a model, one line saying what is replaced and what is not (``None`` with a model)."""
        if self.model is not None:
            return None
        places = {NamedInRoleRecognizer: "right after a role word or before a resident number",
                  NamedInTableRecognizer: "in a table's column of people", MaskedNameRecognizer: "masked in part (김○○)"}
        found = [place for kind, place in places.items() if any(isinstance(r, kind) for r in self.recognizers)]
        structured = [r for r in self.recognizers if not isinstance(r, tuple(places))]
        labels = ", ".join(dict.fromkeys(r.label for r in structured)) or "none"
        named = f" and names {', or '.join(found)}" if found else ""
        return (f"no --model: only the structured identifiers of {len(structured)} pattern recognizers are replaced "
                f"({labels}){named}; other names, addresses, places and the other labels are NOT "
                f"(give --model)")  # fmt: skip

    def deidentify_batch(self, texts: Sequence[str]) -> list[DeidResult]:
        """De-identify many documents, batching windows of all of them through the model."""
        predictions = self.predict_tokens(texts)
        return [self.finish(text, prediction) for text, prediction in zip(texts, predictions)]

    # -- model step -------------------------------------------------------------------------------------------

    def windows(self, texts: Sequence[str]) -> list:
        """Overlapping windows of every document (``Window.doc`` = index in ``texts``)."""
        return self.tokenizer.encode_windows(list(texts), self.max_length, self.stride)

    def forward_windows(self, windows: Sequence) -> list[tuple[list[int], list[float], list[int]]]:
        """Tags, entity scores (1 - P(O)) and most likely entity tags of each window's own tokens, ``batch_size``
        windows of similar length per pass (:func:`thunder.inference.length_batches`), in the order of ``windows``."""
        from thunder.inference import length_batches

        outputs: list[tuple[list[int], list[float], list[int]]] = [([], [], [])] * len(windows)
        for rows in length_batches([len(w.ids) for w in windows], self.batch_size):
            chunk = [windows[i] for i in rows]
            probs = self.runtime(self.tokenizer.pad([w.ids for w in chunk]))
            tags = entity_tags(probs, self.threshold).cpu().tolist()
            scores = (1 - probs[..., 0]).cpu().tolist()
            types = (probs[..., 1:].argmax(-1) + 1).cpu().tolist()
            for row, (i, window) in enumerate(zip(rows, chunk)):
                own = slice(1 + window.own_start - window.start, 1 + window.own_end - window.start)
                outputs[i] = (tags[row][own], scores[row][own], types[row][own])
        return outputs

    def predict_tokens(self, texts: Sequence[str]) -> list[TokenPredictions]:
        """Merged per-token predictions of each document (empty when there is no model)."""
        if self.model is None:
            return [TokenPredictions([]) for _ in texts]
        encodings = self.tokenizer.encode_batch(list(texts))
        windows = self.tokenizer.windows_of(encodings, self.max_length, self.stride)
        predictions = merge_windows(len(texts), windows, self.forward_windows(windows))
        for prediction, encoding in zip(predictions, encodings):
            prediction.morphemes = encoding.morphemes  # Mecab ran once per document
        return predictions

    # -- spans, entities, replacement -------------------------------------------------------------------------

    def model_spans(self, text: str, prediction: TokenPredictions) -> list[ScoredSpan]:
        """Character spans of the model's entities (:func:`thunder.decoding.aggregate`)."""
        return aggregate(text, prediction, self.label_set, self.operating_point)

    def finish(self, text: str, prediction: TokenPredictions) -> DeidResult:
        """Spans of one document from its token predictions, the recognizers and the officials replaced by policy,
        then replacement."""
        spans = self.model_spans(text, prediction) + recognize(text, self.recognizers)
        return self.apply(text, spans + self.official_spans(text))

    def official_spans(self, text: str) -> list[ScoredSpan]:
        """The names (and law firms) of the officials whose roles are not kept, as spans of source ``officials``."""
        if not self.replaced_officials:
            return []
        person = next(iter(self.taxonomy.filled_by("korean_name")), None)
        firm = self.taxonomy.labels.get("법무법인", person)
        if person is None:
            raise ValueError(f"replacing officials' names needs a person-name label (source generator:korean_name)"
                             f" in taxonomy {self.taxonomy.name!r}")  # fmt: skip
        return [
            ScoredSpan(o.start, o.end, (firm if o.firm else person).name, 1.0, "officials")
            for o in official_names(text, self.replaced_officials)
        ]

    def spreads(self, key: str, span: ScoredSpan) -> bool:
        """Whether ``span`` (text ``key``) is propagated: always, unless a model span below ``propagate_threshold``,
        on a common word of the genre, or a short number (no letter, under :data:`SPREADING_NUMBER` characters:
        ``11`` would spread into every date and amount that holds it); a propagated span itself is no seed."""
        if span.source == "model":
            short_number = len(key) < SPREADING_NUMBER and not any(c.isalpha() for c in key)
            return span.score >= self.propagate_threshold and key not in self.genre_words and not short_number
        return span.source != "propagated"

    def apply(self, text: str, spans: Iterable[ScoredSpan]) -> DeidResult:
        """Drop or trim the model's spans over protected text, group ``spans`` into entities, assign placeholders,
        apply the operator and fix particles.

        Labels found in the taxonomy get its category and tier 1 (those of the taxonomy win over a recognizer's).
        """
        labels = self.taxonomy.labels
        protected = self.protection.coverage(text) if self.protection else None
        kept = self.protection.filter(text, spans, protected)
        spans = [
            replace(s, category=labels[s.label].category, tier1=labels[s.label].tier1) if s.label in labels else s
            for s in (_trim(text, span) for span in kept if span.end > span.start)
            if s is not None
        ]
        spans = _particle_variants(text, resolve_overlaps(spans, Overlap.UNION))
        seeds: dict[str, ScoredSpan] = {}
        for span in spans:
            key = entity_key(text[span.start : span.end])
            if key not in seeds and self.spreads(key, span):
                seeds[key] = span
        spans = _propagate(text, spans, seeds, protected)
        if not spans:
            return DeidResult(text, ())
        entities = self._entities(text, spans)
        mentions = [text[s.start : s.end] for s in spans]
        owners = [entities[entity_key(m)] for m in mentions]
        replacements = [self.operators(entity).replace(entity, m) for entity, m in zip(owners, mentions)]
        gap_starts = [0] + [s.end for s in spans]
        gaps = [text[a:b] for a, b in zip(gap_starts, [s.start for s in spans] + [len(text)])]
        fixed = [gaps[0]] + [_fix(rep, gap) for rep, gap in zip(replacements, gaps[1:])]
        keys = [key for key in entities if len(key) >= 2 and key in seeds]
        mask = mask_character("*", entities)  # a character no detected text holds
        for _ in range(2 * len(spans) + 1):
            output, segments = _assemble(fixed, replacements)
            leak = None
            for start, end, key in find_keys(output, keys):
                hit = [(kind, i, a) for kind, i, a, b in segments if a < b and a < end and start < b]
                kind, i, a = hit[0]
                origin = gap_starts[i] + start - a if kind == "gap" else None  # where a gap's text stood in ``text``
                if (len(hit) == 1 and origin is not None and fixed[i] == gaps[i]
                        and _held_back(seeds[key], text, origin, origin + end - start, protected)):
                    continue  # protected text a model seed's text does not spread into (as in ``_propagate``)
                leak = key, start, end, hit, origin
                break
            if leak is None:
                break
            key, start, end, hit, origin = leak
            corrected = [i for kind, i, _ in hit if kind == "gap" and fixed[i] != gaps[i]]
            replaced = [i for kind, i, _ in hit if kind == "replacement" and set(replacements[i]) != {mask}]
            if corrected:  # a particle correction recreated an entity's text: keep the original particle
                for i in corrected:
                    fixed[i] = gaps[i]
            elif replaced:  # a replacement joins its neighbours into an entity's text: mask it
                for i in replaced:
                    replacements[i] = mask * len(replacements[i])
            elif len(hit) == 1 and hit[0][0] == "gap":  # only became word-bounded after a replacement
                seed = seeds[key]
                added = replace(seed, start=origin, end=origin + end - start, source="propagated",
                                origin=(seed.start, seed.end))  # fmt: skip
                return self.apply(text, [*spans, added])
            else:
                raise RuntimeError(f"cannot remove {key!r} from the de-identified text")
        detected = tuple(
            DetectedSpan(s.start, s.end, m, s.label, s.category, s.tier1, entities[entity_key(m)].placeholder,
                         round(s.score, 4), s.source, s.origin)  # fmt: skip
            for s, m in zip(spans, mentions)
        )
        return DeidResult(_join(fixed, replacements), detected)

    def _entities(self, text: str, spans: list[ScoredSpan]) -> dict[str, Entity]:
        grouped: dict[str, list[ScoredSpan]] = {}
        for span in spans:
            grouped.setdefault(entity_key(text[span.start : span.end]), []).append(span)
        used = {c for key in grouped for c in key}
        alphabet = "".join(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used) or "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
        standing = set(_STANDING_LETTERS.findall(text))  # placeholders of an earlier, partial de-identification
        letters = (letter for letter in placeholder_sequence(alphabet) if letter not in standing)
        avoid = frozenset(grouped)
        entities = {}
        for key, members in grouped.items():  # dicts keep first-appearance order
            label = Counter(s.label for s in members).most_common(1)[0][0]
            typical = next(s for s in members if s.label == label)
            entities[key] = Entity(
                key=key,
                placeholder=next(letters),
                label=label,
                mentions=tuple(text[s.start : s.end] for s in members),
                contexts=tuple((text[max(0, s.start - 40) : s.start], text[s.end : s.end + 40]) for s in members),
                avoid=avoid,
                category=typical.category,
                tier1=typical.tier1,
            )
        return entities


@dataclass
class PipelineOptions:
    """The de-identification options shared by ``thunder deid``, ``thunder evaluate`` and ``thunder predict``.

    Args:
        model: export directory or .ckpt of a trained Thunder model (None: the pattern recognizers alone).
        taxonomy: taxonomy file the model must have been trained with (default: the one stored with the model);
            without a model, the taxonomy the recognizers' labels are looked up in (default: the packaged one).
        recognizers: pattern recognizers by name, module.Class path or {class_path, init_args} (default: all
            built-in; [] for none).
        operator: how an entity is replaced: placeholder (A, B, ...), tag ([label]), mask (***), surrogate, a
            module.Class path or {class_path, init_args}.
        operators: another operator per label, category or tier 1 (direct / quasi), e.g.
            {"주소": "mask", "direct": "placeholder"}; the most specific match wins.
        max_length: window length in tokens, special tokens included.
        stride: tokens shared by consecutive windows.
        batch_size: windows per forward pass (and documents per pipeline call).
        threshold: a token is an identifier when the model's 1 - P(O) exceeds this (lower: fewer leaks, more
            over-redaction). Default: the threshold the model was validated at (stored with it; 0.5 for a model
            that stores none).
        device: torch device for the model (default: where it loads, the CPU).
        grow_threshold: a detected span grows over the tokens touching it inside the same word whose 1 - P(O)
            exceeds this lower threshold (``부산|은행`` replaced whole when the model marks only ``부산``); off: no
            growing; at or above ``threshold`` it grows nothing. Default: the model's (0.1 for a model that stores
            none).
        protected_words: drop the model's spans that are only a protected word: true for
            :data:`thunder.protected.PROTECTED_WORDS` (CCTV, KTX, ATM, 신원미상, ...), or a list of words; recognizer
            spans are never dropped.
        runtime: how the model runs: auto (the export's ONNX graph when it has one, written by ``thunder export
            --onnx``, else PyTorch), torch, or onnx (ONNX Runtime; the export must have a graph).
        legal_text: the model's spans never replace legal text (:mod:`thunder.legal`: statute references and names,
            courts, procedural roles and terms, exhibits, precedents, case numbers): true, a list of words to add to
            the lexicon, or false (off); recognizer spans are never dropped.
        keep_officials: the roles whose names stay in the text, as courts publish them: judge (the signature block),
            prosecutor, counsel (defence counsel, attorneys and their firms, the state's litigation officers); the
            names of the roles left out are replaced, whatever the model says.
        propagate_threshold: a model span's text replaces its other occurrences in the document only from this
            score (its tokens' mean 1 - P(O)); recognizer spans always propagate.
        genre_words: common words that a model span never propagates: true for the packaged lists (the judgment
            genre's, :mod:`thunder.genre`, and the general nouns of Korean, :mod:`thunder.vocabulary`), a file (one
            word a line) or a list of words, or false (none).
        keep_regions: true: the upper levels of an address stay in the text, as courts mostly publish them: the
            province, city, county and district names a model span starts with (``서울 마포구 월드컵로 12`` ->
            ``서울 마포구 A``) or that are all it holds (:func:`thunder.regions.upper_units`). Default true; false
            replaces them with the rest, as a court sometimes replaces an address whole (docs/pipeline.md).
    """

    model: str | None = None
    taxonomy: str | None = None
    recognizers: list[str | dict] | None = None
    operator: str | dict = "placeholder"
    operators: dict[str, str | dict] | None = None
    max_length: int = 512
    stride: int = 128
    batch_size: int = 8
    threshold: float | None = None
    device: str | None = None
    grow_threshold: float | Literal["off"] | None = None
    protected_words: bool | list[str] | None = None
    runtime: str = "auto"
    legal_text: bool | list[str] = True
    keep_officials: list[Literal["judge", "prosecutor", "counsel"]] = field(
        default_factory=lambda: list(OFFICIAL_ROLES)
    )
    propagate_threshold: float = PROPAGATE_THRESHOLD
    genre_words: bool | str | list[str] = True
    keep_regions: bool = True

    def build(self) -> "Deidentifier":
        """The :class:`Deidentifier` these options describe; without a model, one with no recognizer (nothing
        would be replaced) is refused."""
        options = dict(recognizers=self.recognizers, operator=self.operator, operators=self.operators,
                       max_length=self.max_length, stride=self.stride, batch_size=self.batch_size,
                       device=self.device, protected_words=self.protected_words, legal_text=self.legal_text,
                       keep_officials=self.keep_officials, propagate_threshold=self.propagate_threshold,
                       genre_words=self.genre_words, keep_regions=self.keep_regions)  # fmt: skip
        if self.threshold is not None:
            options["threshold"] = self.threshold
        if self.grow_threshold is not None:
            options["grow_threshold"] = None if self.grow_threshold == "off" else self.grow_threshold
        if self.runtime not in RUNTIMES:
            raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, got {self.runtime!r}")
        if self.model is not None:
            return Deidentifier.from_pretrained(self.model, taxonomy=self.taxonomy, runtime=self.runtime, **options)
        deidentifier = Deidentifier(**options, taxonomy=Taxonomy.load(self.taxonomy) if self.taxonomy else None)
        if not deidentifier.recognizers:
            raise ValueError("no --model and no recognizers: nothing would be replaced; give --model, or leave "
                             "--recognizers out for the built-in ones")  # fmt: skip
        return deidentifier


@lru_cache(maxsize=1)
def _default_taxonomy() -> Taxonomy:
    return Taxonomy.load()


def _fix(replacement: str, following: str) -> str:
    return fix_particle(replacement, following) if following else following


def _join(gaps: Sequence[str], replacements: Sequence[str]) -> str:
    return _assemble(gaps, replacements)[0]


def _assemble(gaps: Sequence[str], replacements: Sequence[str]) -> tuple[str, list[tuple[str, int, int, int]]]:
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

