"""De-identification: text -> windows -> model -> spans ∪ recognizer spans -> entities -> operator -> particle fix.

:class:`Deidentifier` is the Python API (:class:`PipelineOptions` builds one from the options that ``thunder deid``,
``thunder evaluate`` and ``thunder predict`` share), and :mod:`thunder.runs.prediction` runs the same steps over a corpus
with Lightning.

Steps for one document (read composed where it is written decomposed, NFD: :func:`thunder.language.views.composed`;
its spans are reported in its own characters and the output written in its own form):

1. The tokenizer gives token ids with character offsets; a document of any length is cut into overlapping windows
   of ``max_length`` ids (``stride`` tokens of overlap). Every token takes its tag from the window where it is most
   central (overlaps are split halfway), so nothing is truncated and window edges get full context.
2. Token tags -> character spans as :mod:`thunder.model.decoding` says (the decision rule at the model's operating point,
   hysteresis growing inside a word, widening to whole Mecab morphemes: a particle is a morpheme of its own, so it
   never enters a span).
3. Recognizer spans (:mod:`thunder.deid.recognizers.registry`) are added, and the names of the officials whose roles the
   policy does not keep (``keep_officials``); every span is cut at the markup it crosses (HTML or XML tags, markdown
   cell separators: :mod:`thunder.language.markup`); the model's spans over legal text, protected words, the kept
   officials' names or the upper levels of addresses (``keep_regions``) are dropped or trimmed
   (:mod:`thunder.deid.protection`); overlapping spans merge into their union
   (``Overlap.UNION``), labelled by the most confident one. Spans without a letter or digit are dropped, surrounding
   spaces trimmed.
4. Mentions are grouped into entities by their whitespace-free text, an address's leading province written in
   full (:func:`thunder.deid.operators.entity_key`: ``서울특별시 강남구 …``, ``서울시 강남구 …`` and ``서울 강남구 …`` are one
   entity; a province name is normalised only where a lower administrative unit follows it); a mention that is
   another entity's text plus a particle (``홍길동이`` beside ``홍길동``) is shrunk to that entity. Every further
   occurrence of an entity's text that is a word of its own (two or more characters; the text plus particles or a
   suffix, never inside a longer word: ``신호가``, not ``신호등`` nor ``연체이자율``, but a text that is not common
   vocabulary glued to the noun after it or to a role word before it, ``홍길동피고인``, ``증인김영수``; at a word
   boundary where it starts or ends with a Latin letter or digit; an address under every spelling of its province)
   is replaced too (``origin``: the span it repeats), so a detected identifier never survives elsewhere in the
   document: the text of a recognizer's, the officials' rule's or a reviewer's span always, a model span's only from
   ``propagate_threshold``, where the detection took at least ``propagate_share`` of the text's occurrences itself,
   and when it is not a common word of the genre (:mod:`thunder.language.genre`) or a general noun of Korean
   (:mod:`thunder.synthesis.vocabulary`) nor a short number; a text Mecab-ko reads as the dictionary's common
   vocabulary (``조합원``, ``계열은행``) only to the occurrences the model scores at least ``propagate_evidence``;
   never into protected text.
5. Entities get placeholders A, B, ..., Z, AA, ... in order of first appearance, skipping capital letters that
   occur in any detected text and placeholders that already stand alone in the text (a partly de-identified
   judgment); the operator chosen for the entity's label, category or tier 1 (:mod:`thunder.deid.operators`) makes each mention's replacement and the
   particle after it is made to agree (``홍길동이`` -> ``A가``, ``김철수는`` -> ``L은``).

Guarantees (tested): every character outside the replaced spans is kept, except a particle directly after a
replacement that is corrected; the output never contains the text of a propagating span (step 4) of two or more
characters as a word of its own (at a word boundary as in step 4; a model span's text stays where it is protected
text or, for a dictionary noun, where the model gives it no evidence), nor such an
address under another spelling of its province — a particle correction that would recreate one is not made.
"""

from __future__ import annotations

import bisect
import copy
import itertools
import re
from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Iterable, Literal, Mapping, Sequence

from thunder.deid.operators import Entity, OperatorChoice, OperatorSpec, entity_key, mask_character
from thunder.deid.overlaps import (
    Overlap, Ranges, check_no_name_survives, find_keys, held_back, marked_shares, particle_variants,
    propagate, resolve_overlaps, trim,
)
from thunder.deid.policy import PublicationPolicy
from thunder.deid.protection import Protection
from thunder.deid.recognizers.masked_name import MaskedNameRecognizer
from thunder.deid.recognizers.named_in_role import NamedInRoleRecognizer, coordinated_names, surname_first
from thunder.deid.recognizers.named_in_table import NamedInTableRecognizer
from thunder.deid.recognizers.registry import Recognizer, ScoredSpan, load_recognizers, recognize
from thunder.deid.writing import assemble, common_suffix, fix_after_parentheses, fix_following, written_text
from thunder.documents.annotation import placeholder_sequence
from thunder.language.legal import official_names
from thunder.language.markup import Markup
from thunder.language.morphemes import common_vocabulary, dictionary_noun, inside_word, nouns_compound
from thunder.language.tokenizer import Windows
from thunder.language.views import TextView, composed
from thunder.model.packages import resolve as resolve_model
from thunder.model.decoding import OperatingPoint, TokenPredictions, aggregate, character_scores
from thunder.model.inference import Progress, Runtime, TorchRuntime, check_device, predict_windows
from thunder.taxonomy import TIER1, Taxonomy


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


_STANDING_LETTERS = re.compile(r"(?<![A-Za-z0-9])[A-Z]{1,3}(?![A-Za-z0-9])")


# ----------------------------------------------------------------------------------------------- the pipeline


_HANGUL_NAME = re.compile(r"[가-힣]{2,5}")


class Deidentifier:
    """A trained token classifier plus recognizers and operators: ``Deidentifier(...)(text) -> DeidResult``.

    ``model`` may be ``None`` (recognizers only). ``recognizers`` are names/paths/instances for
    :func:`thunder.deid.recognizers.registry.load_recognizers` (``None``: all built-in, ``[]``: none); ``operator``
    is a name, path, ``{class_path, init_args}`` or :class:`~thunder.deid.operators.Operator`, and ``operators`` maps
    a label, category or tier 1 to another one (:class:`~thunder.deid.operators.OperatorChoice`). ``batch_size``
    counts windows per forward pass. ``operating_point`` (:class:`~thunder.model.decoding.OperatingPoint`) is the
    decision rule: a token is an identifier when the model gives it ``1 - P(O) > threshold``, and spans grow over
    their word's tokens above ``grow_threshold``; :meth:`from_pretrained` defaults it to the one stored with the
    model. ``runtime`` turns padded window batches into probabilities (:mod:`thunder.model.inference`; default: the
    model in PyTorch). ``policy`` (:class:`~thunder.deid.policy.PublicationPolicy`) says what the model's spans never
    replace, which officials' names are replaced (source ``officials``) and how far a model span's text reaches.
    Options out of range raise ``ValueError`` before anything runs.
    """

    def __init__(
        self,
        model: Any = None,
        tokenizer: Any = None,
        label_set: Any = None,
        recognizers: Sequence[str | dict | Recognizer] | None = None,
        operator: OperatorSpec = "placeholder",
        operators: Mapping[str, OperatorSpec] | None = None,
        max_length: int | None = None,
        stride: int | None = None,
        batch_size: int = 8,
        device: str | None = None,
        operating_point: OperatingPoint | None = None,
        taxonomy: Taxonomy | None = None,
        runtime: Runtime | None = None,
        policy: PublicationPolicy | None = None,
    ) -> None:
        if model is not None and (tokenizer is None or label_set is None):
            raise ValueError("a model needs its tokenizer and label_set")
        check_device(device)
        self.windowing = Windows().given(max_length, stride)  # how documents are cut into model inputs
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a whole number of at least 1, got {batch_size!r}")
        self.operating_point = operating_point or OperatingPoint()
        self.policy = policy or PublicationPolicy()
        self.protection = Protection(self.policy)
        self.model, self.tokenizer, self.label_set = model, tokenizer, label_set
        self.taxonomy: Taxonomy = label_set.taxonomy if label_set is not None else taxonomy or _default_taxonomy()
        self.recognizers = load_recognizers(recognizers, taxonomy=self.taxonomy)  # labels from the taxonomy
        self.operators = OperatorChoice(operator, operators, self.taxonomy)
        self.operators.check(self.taxonomy.labels, self.taxonomy.categories, TIER1)
        self.batch_size = batch_size
        self.progress: Progress | None = None  # hears of each pass of the model (a long document's progress)
        if model is not None:
            if device is not None:
                model.to(device)
            model.eval()
        self.runtime = runtime or (TorchRuntime(model) if model is not None else None)

    @classmethod
    def from_pretrained(
        cls,
        path: str | Path | None = None,
        taxonomy: str | Path | None = None,
        runtime: str = "auto",
        verify: str | Path | None = None,
        **options: Any,
    ) -> "Deidentifier":
        """Load a model at ``path`` (an export directory, a ``.ckpt`` or a release directory: see
        :meth:`thunder.model.loader.Artefact.open`; an installed model package by name; the model Thunder ships when
        None: :mod:`thunder.model.packages`); an explicit ``taxonomy`` must be the one the model was trained
        with. ``operating_point`` defaults to the one stored with the model. ``runtime``: ``auto`` runs the export's
        ONNX graph when it has one, else PyTorch; ``torch`` or ``onnx`` choose
        (:meth:`thunder.model.loader.Artefact.runtime`). ``verify``: a PEM public key the model's signature must
        verify with before it is read (:mod:`thunder.model.signing`)."""
        from thunder.model.loader import Artefact

        taxonomy_ = Taxonomy.load(taxonomy) if taxonomy is not None else None
        model = resolve_model(None if path is None else str(path))
        return cls.from_loaded(Artefact.open(model, verify=verify).classifier(taxonomy_, runtime=runtime), **options)

    @classmethod
    def from_loaded(cls, loaded: Any, **options: Any) -> "Deidentifier":
        """A de-identifier over a :class:`~thunder.model.loader.LoadedModel`, at its operating point and with the
        windows it was trained on unless ``operating_point``, ``max_length`` or ``stride`` are given."""
        options.setdefault("operating_point", loaded.operating_point)
        windows = loaded.windows.given(options.pop("max_length", None), options.pop("stride", None))
        options.update(max_length=windows.max_length, stride=windows.stride)
        return cls(loaded.model, loaded.tokenizer, loaded.label_set, runtime=loaded.runtime, **options)

    def at(self, operating_point: OperatingPoint | None = None, operator: OperatorSpec | None = None) -> "Deidentifier":
        """This de-identifier at another operating point or with another operator for every entity, sharing the
        model, the recognizers and the policy."""
        variant = copy.copy(self)
        if operating_point is not None:
            variant.operating_point = operating_point
        if operator is not None:
            variant.operators = OperatorChoice(operator, None, self.taxonomy)
        return variant

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
        return (f"recognizers only, no model: only the structured identifiers of {len(structured)} pattern recognizers "
                f"are replaced ({labels}){named}; other names, addresses, places and the other labels are NOT "
                f"(drop --recognizers_only for the model)")  # fmt: skip

    def deidentify_batch(self, texts: Sequence[str]) -> list[DeidResult]:
        """De-identify many documents, batching windows of all of them through the model."""
        predictions = self.predict_tokens(texts)
        return [self.finish(text, prediction) for text, prediction in zip(texts, predictions)]

    # -- model step -------------------------------------------------------------------------------------------

    def windows(self, texts: Sequence[str]) -> list:
        """Overlapping windows of every document, composed (``Window.doc`` = index in ``texts``)."""
        read = [composed(text).text for text in texts]
        return self.tokenizer.encode_windows(read, self.windowing.max_length, self.windowing.stride)

    def forward(self, windows: Sequence, n_docs: int) -> list[TokenPredictions]:
        """The model's step over the windows of ``n_docs`` documents (:func:`thunder.model.inference.predict_windows`),
        at the operating point."""
        return predict_windows(self.runtime, windows, n_docs, self.batch_size, self.operating_point, self.tokenizer.pad,
                               self.progress)  # fmt: skip

    def predict_tokens(self, texts: Sequence[str]) -> list[TokenPredictions]:
        """Merged per-token predictions of each document (empty when there is no model)."""
        if self.model is None:
            return [TokenPredictions([]) for _ in texts]
        encodings = self.tokenizer.encode_batch([composed(text).text for text in texts])
        windows = self.tokenizer.windows_of(encodings, self.windowing.max_length, self.windowing.stride)
        predictions = self.forward(windows, len(texts))
        for prediction, encoding in zip(predictions, encodings):
            prediction.morphemes = encoding.morphemes  # Mecab ran once per document
        return predictions

    # -- spans, entities, replacement -------------------------------------------------------------------------

    def model_spans(self, text: str, prediction: TokenPredictions) -> list[ScoredSpan]:
        """Character spans of the model's entities (:func:`thunder.model.decoding.aggregate`)."""
        return aggregate(text, prediction, self.label_set, self.operating_point)

    def finish(self, text: str, prediction: TokenPredictions) -> DeidResult:
        """Spans of one document from its token predictions (:meth:`predict_tokens`: of the text composed), the
        recognizers and the officials replaced by policy, then replacement."""
        view = composed(text)
        read = view.text
        spans = self.model_spans(read, prediction) + recognize(read, self.recognizers) + self.official_spans(read)
        spans += self.coordinated_spans(read, spans)
        return self._replace(view, spans, character_scores(prediction, len(read)) if prediction.scores else None)

    def person_names(self, text: str, spans: Iterable[ScoredSpan]) -> frozenset[str]:
        """The texts replaced as a person's name (:attr:`~thunder.deid.policy.PublicationPolicy.spread_names`): spans
        of the person label or its category (a model of categories labels a person so), two to five Hangul syllables
        that start with a surname and are neither one common noun of the dictionary (``변호인``, ``여인숙``: a model of
        categories gives a person's category to more than names) nor a compound of common nouns (``성전|환자``)."""
        person = next(iter(self.taxonomy.filled_by("korean_name")), None)
        if person is None:
            return frozenset()
        return frozenset(key for s in spans if s.label in (person.name, person.category) and s.source != "propagated"
                         for key in [entity_key(text[s.start : s.end])]
                         if _HANGUL_NAME.fullmatch(key) and surname_first(key) and not dictionary_noun(key)
                         and not nouns_compound(key))  # fmt: skip

    def coordinated_spans(self, text: str, spans: list[ScoredSpan]) -> list[ScoredSpan]:
        """Persons' names joined to a found one (a Hangul span of the person label or category; at the ends of a list,
        another occurrence of its text as a word of its own, unless that text reads as common words) by
        ``과``/``와``, a comma or ``및`` (``김잘상과 김뎐던이``), none in protected text (a kept official, legal
        text), found by
        :func:`~thunder.deid.recognizers.named_in_role.coordinated_names` where ``named_in_role`` is on."""
        person = next(iter(self.taxonomy.filled_by("korean_name")), None)
        if person is None or not any(isinstance(r, NamedInRoleRecognizer) for r in self.recognizers):
            return []
        names = [(s.start, s.end) for s in spans  # a model of categories labels a person by the person's category
                 if s.label in (person.name, person.category) and _HANGUL_NAME.fullmatch(text, s.start, s.end)]
        # a list may name a person found elsewhere: the other occurrences of the texts that read as no common words
        elsewhere = [(a, b) for a, b, key in find_keys(text, {text[a:b] for a, b in names})
                     if not (common_vocabulary(key) or inside_word(text, a, b))]  # fmt: skip
        found = coordinated_names(text, names, elsewhere)
        protected = self.protection.coverage(text) if found and self.protection else bytearray(len(text))
        return [ScoredSpan(a, b, person.name, 0.8, NamedInRoleRecognizer.name, person.category, person.tier1)
                for a, b in found if not any(protected[a:b])]  # fmt: skip

    def official_spans(self, text: str) -> list[ScoredSpan]:
        """The names (and law firms) of the officials whose roles are not kept, as spans of source ``officials``."""
        if not self.policy.replaced_officials:
            return []
        person = next(iter(self.taxonomy.filled_by("korean_name")), None)
        firm = self.taxonomy.labels.get("법무법인", person)
        if person is None:
            raise ValueError(f"replacing officials' names needs a person-name label (source generator:korean_name)"
                             f" in taxonomy {self.taxonomy.name!r}")  # fmt: skip
        return [
            ScoredSpan(o.start, o.end, (firm if o.firm else person).name, 1.0, "officials")
            for o in official_names(text, self.policy.replaced_officials)
        ]

    def apply(
        self,
        text: str,
        spans: Iterable[ScoredSpan],
        scores: Sequence[float] | None = None,
        rejected: Sequence[tuple[int, int]] = (),
    ) -> DeidResult:
        """Drop or trim the model's spans over protected text, group ``spans`` into entities, assign placeholders,
        apply the operator and fix particles. ``scores``: the model's ``1 - P(O)`` per character
        (:func:`~thunder.model.decoding.character_scores`), where a model span's text may spread by the policy's
        :meth:`~thunder.deid.policy.PublicationPolicy.spreads_to` (``None``: no model output known). ``rejected``:
        the ``[start, end)`` ranges a reviewer rejected: no text spreads into them, and they stay as written.

        Labels found in the taxonomy get its category and tier 1 (those of the taxonomy win over a recognizer's).
        Offsets count the characters of ``text`` as written; a text written decomposed (NFD) is read composed
        (:func:`~thunder.language.views.composed`) and written back in its own form.
        """
        view = composed(text)
        if view.changes:  # read composed: spans, scores and rejected ranges of the composed text
            spans = [replace(s, start=a, end=b, origin=view.view_span(*s.origin) if s.origin else None)
                     for s in spans for a, b in [view.view_span(s.start, s.end)]]  # fmt: skip
            scores = view.view_scores(scores) if scores is not None else None
            rejected = [view.view_span(start, end) for start, end in rejected]
        return self._replace(view, spans, scores, rejected)

    def _replace(
        self,
        view: TextView,
        spans: Iterable[ScoredSpan],
        scores: Sequence[float] | None = None,
        rejected: Sequence[tuple[int, int]] = (),
    ) -> DeidResult:
        """:meth:`apply` on the composed ``view.text``, the result in the characters of ``view.original``. Every span
        is first cut at the markup it crosses (:class:`~thunder.language.markup.Markup`: HTML or XML tags, markdown
        cell separators), so that no replacement eats markup or joins two cells."""
        text = view.text
        markup = Markup(text)
        if markup:
            spans = [replace(s, start=a, end=b) for s in spans for a, b in markup.outside_markup(s.start, s.end)]
        labels = self.taxonomy.labels
        protected = self.protection.coverage(text) if self.protection else None
        kept = self.protection.filter(text, spans, protected)
        spans = [
            replace(s, category=labels[s.label].category, tier1=labels[s.label].tier1) if s.label in labels else s
            for s in (trim(text, span) for span in kept if span.end > span.start)
            if s is not None
        ]
        spans = particle_variants(text, resolve_overlaps(spans, Overlap.UNION))
        names = self.person_names(text, spans) if self.policy.spread_names else frozenset()
        seeds: dict[str, ScoredSpan] = {}
        for span in spans:
            key = entity_key(text[span.start : span.end])
            if key not in seeds and (key in names or self.policy.spreads(key, span)):
                seeds[key] = span
        occurrences = find_keys(text, seeds)
        shares = marked_shares(text, spans, occurrences, protected)
        seeds = {key: seed for key, seed in seeds.items()
                 if key in names or self.policy.spreads(key, seed, shares.get(key, 1.0))}  # fmt: skip

        def evidence(seed: ScoredSpan, start: int, end: int) -> bool:
            key = entity_key(text[seed.start : seed.end])
            return key in names or self.policy.spreads_to(key, max(scores[start:end]) if scores is not None else None)

        kept_as_written = Ranges(rejected)
        occurrences = [(start, end, key) for start, end, key in occurrences if not kept_as_written.overlap(start, end)]
        spans = propagate(text, spans, seeds, occurrences, _unprotected(protected, occurrences, names), evidence)
        if not spans:
            return DeidResult(view.original, ())
        entities = self._entities(text, spans)
        mentions = [text[s.start : s.end] for s in spans]
        owners = [entities[entity_key(m)] for m in mentions]
        replacements = [self.operators(entity).replace(entity, m) for entity, m in zip(owners, mentions)]
        gap_starts = [0] + [s.end for s in spans]
        gaps = [text[a:b] for a, b in zip(gap_starts, [s.start for s in spans] + [len(text)])]
        fixed = fix_after_parentheses([gaps[0]] + [fix_following(rep, gap) for rep, gap in zip(replacements, gaps[1:])],
                                       replacements)  # fmt: skip
        keys = [key for key in entities if len(key) >= 2 and key in seeds]
        mask = mask_character("*", entities)  # a character no detected text holds
        for _ in range(2 * len(spans) + 1):  # each pass fixes every leak that touches no segment fixed before it
            output, segments = assemble(fixed, replacements)
            bounds = [segment_end for *_, segment_end in segments]
            touched: set[int] = set()  # segments changed in this pass
            added: list[ScoredSpan] = []
            for start, end, key in find_keys(output, keys):
                hit = []
                for kind, i, a, b in itertools.islice(segments, bisect.bisect_right(bounds, start), None):
                    if a >= end:
                        break
                    if a < b:
                        hit.append((kind, i, a, b))
                kind, i, _, b = hit[0]
                # where a gap's text stood in ``text``, counted from the gap's end (a corrected particle opens it)
                origin = gap_starts[i] + len(gaps[i]) - (b - start) if kind == "gap" else None
                if len(hit) == 1 and origin is not None and (
                    b - start <= common_suffix(fixed[i], gaps[i])  # past a corrected particle: as written
                    and held_back(seeds[key], text, origin, origin + end - start, protected, evidence)
                    or kept_as_written.overlap(origin, origin + end - start)
                ):
                    continue  # text a seed does not spread into (as in ``propagate``), or a reviewer kept
                if any((kind, i) in touched for kind, i, *_ in hit):
                    continue  # seen again in the next pass
                touched.update((kind, i) for kind, i, *_ in hit)
                corrected = [i for kind, i, *_ in hit if kind == "gap" and fixed[i] != gaps[i]]
                replaced = [i for kind, i, *_ in hit if kind == "replacement" and set(replacements[i]) != {mask}]
                if corrected:  # a particle correction recreated an entity's text: keep the original particle
                    for i in corrected:
                        fixed[i] = gaps[i]
                elif replaced:  # a replacement joins its neighbours into an entity's text: mask it
                    for i in replaced:
                        replacements[i] = mask * len(replacements[i])
                elif len(hit) == 1 and hit[0][0] == "gap":  # only became word-bounded after a replacement
                    seed = seeds[key]
                    added.append(replace(seed, start=origin, end=origin + end - start, source="propagated",
                                         origin=(seed.start, seed.end)))  # fmt: skip
                else:
                    raise RuntimeError(f"cannot remove {key!r} from the de-identified text")
            if added:
                return self._replace(view, [*spans, *added], scores, rejected)
            if not touched:
                break
        if names:
            check_no_name_survives(text, spans, {key: seeds[key] for key in names & seeds.keys()}, entities,
                                    kept_as_written)  # fmt: skip
        detected = []
        for s, m in zip(spans, mentions):
            start, end = view.original_span(s.start, s.end)
            origin = view.original_span(*s.origin) if s.origin is not None else None
            detected.append(DetectedSpan(start, end, view.original[start:end], s.label, s.category, s.tier1,
                                         entities[entity_key(m)].placeholder, round(s.score, 4), s.source, origin))
        return DeidResult(written_text(view, spans, fixed, replacements), tuple(detected))

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
    """The de-identification options shared by ``thunder deid``, ``thunder evaluate``, ``thunder predict`` and
    ``thunder serve`` (the publication policy is a group of its own: :class:`~thunder.deid.policy.PublicationPolicy`).

    Args:
        model: export directory or .ckpt of a trained Thunder model, or the name of an installed model package
            (:mod:`thunder.model.packages`); default: the model Thunder ships (``small``).
        recognizers_only: no model: the pattern recognizers alone, which replace structured identifiers and names
            right after a role word, and leave other names, addresses and places in clear.
        verify: refuse the model unless its signature verifies with this public key (PEM; signed by ``thunder
            export --sign``): every file unchanged, checked before the model is read.
        taxonomy: taxonomy file the model must have been trained with (default: the one stored with the model);
            without a model, the taxonomy the recognizers' labels are looked up in (default: the packaged one).
        recognizers: pattern recognizers by name, module.Class path or {class_path, init_args} (default: all
            built-in; [] for none).
        operator: how an entity is replaced: placeholder (A, B, ...), tag ([label]), mask (***), surrogate, a
            module.Class path or {class_path, init_args}.
        operators: another operator per label, category or tier 1 (direct / quasi), e.g.
            {"주소": "mask", "direct": "placeholder"}; the most specific match wins.
        max_length: window length in tokens, special tokens included. Default: the length the model was trained on
            (stored with it; 512 for a model that stores none).
        stride: tokens shared by consecutive windows. Default: the model's training stride (128 for a model that
            stores none).
        batch_size: windows per forward pass (and documents per pipeline call).
        threshold: a token is an identifier when the model's 1 - P(O) exceeds this (lower: fewer leaks, more
            over-redaction). Default: the threshold the model was validated at (stored with it; 0.5 for a model
            that stores none).
        grow_threshold: a detected span grows over the tokens touching it inside the same word whose 1 - P(O)
            exceeds this lower threshold (``부산|은행`` replaced whole when the model marks only ``부산``); off: no
            growing; at or above ``threshold`` it grows nothing. Default: the model's (0.1 for a model that stores
            none).
        device: torch device for the model (default: where it loads, the CPU).
        runtime: how the model runs: auto (the export's ONNX graph when it has one, written by ``thunder export
            --onnx``, else PyTorch), torch, or onnx (ONNX Runtime; the export must have a graph).
    """

    GROUP: ClassVar[str] = "model"
    ADVANCED: ClassVar[tuple[str, ...]] = ("taxonomy", "recognizers", "operators", "max_length", "stride",
                                           "batch_size", "grow_threshold", "device", "runtime")  # fmt: skip

    model: str | None = None
    recognizers_only: bool = False
    verify: str | None = None
    taxonomy: str | None = None
    recognizers: list[str | dict] | None = None
    operator: str | dict = "placeholder"
    operators: dict[str, str | dict] | None = None
    max_length: int | None = None
    stride: int | None = None
    batch_size: int = 8
    threshold: float | None = None
    grow_threshold: float | Literal["off"] | None = None
    device: str | None = None
    runtime: Literal["auto", "torch", "onnx"] = "auto"

    def build(self, policy: PublicationPolicy | None = None) -> "Deidentifier":
        """The :class:`Deidentifier` these options describe under ``policy``; without a model, one with no
        recognizer (nothing would be replaced) is refused."""
        options = dict(recognizers=self.recognizers, operator=self.operator, operators=self.operators,
                       max_length=self.max_length, stride=self.stride, batch_size=self.batch_size,
                       device=self.device, policy=policy)  # fmt: skip
        taxonomy = Taxonomy.load(self.taxonomy) if self.taxonomy else None
        loaded = None
        model = self.resolved().model
        if model is not None:
            from thunder.model.loader import Artefact

            loaded = Artefact.open(model, verify=self.verify).classifier(taxonomy, runtime=self.runtime)
        point = (loaded.operating_point if loaded else OperatingPoint()).given(self.threshold, self.grow_threshold)
        if loaded is not None:
            return Deidentifier.from_loaded(loaded, operating_point=point, **options)
        deidentifier = Deidentifier(**options, operating_point=point, taxonomy=taxonomy)
        if not deidentifier.recognizers:
            raise ValueError("--recognizers_only and no recognizers: nothing would be replaced; leave --recognizers "
                             "out for the built-in ones, or drop --recognizers_only for the model")  # fmt: skip
        return deidentifier

    def resolved(self) -> "PipelineOptions":
        """These options with the path of the model they run: ``--model``'s (an installed model package by name),
        the shipped model's without one; no model with ``--recognizers_only``."""
        if not self.recognizers_only:
            return replace(self, model=resolve_model(self.model))
        if self.model is not None:
            raise ValueError("give --model or --recognizers_only, not both")
        if self.verify is not None:
            raise ValueError("--verify checks the signature of a model; --recognizers_only runs none")
        return self


def _unprotected(protected: bytearray | None, occurrences: Sequence[tuple[int, int, str]],
                 names: frozenset[str]) -> bytearray | None:  # fmt: skip
    """``protected`` with the occurrences of a person's name (``names``: ``spread_names``) no longer kept: a name
    replaced in a document is replaced in its legal text, a kept official's name or a protected word too."""
    if protected is None or not names:
        return protected
    opened = bytearray(protected)
    for start, end, key in occurrences:
        if key in names:
            opened[start:end] = bytes(end - start)
    return opened


@lru_cache(maxsize=1)
def _default_taxonomy() -> Taxonomy:
    return Taxonomy.load()
