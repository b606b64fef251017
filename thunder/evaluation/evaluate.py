"""Evaluation harness: what leaks, what is over-redacted, and the paper's token metrics.

``evaluate(deidentifier, documents)`` runs a de-identifier (anything that maps a text to a
:class:`~thunder.deid.pipeline.DeidResult`) over documents with gold entity spans and returns an
:class:`EvaluationReport`; ``thunder evaluate`` is the command around it.

Definitions (all computed from the replaced character intervals the pipeline reports, never by
searching the output text):

- **Leak rate**: the share of gold entity mentions of which at least one non-whitespace character is
  not covered by a replaced interval. A partially replaced mention is a leak. Reported overall, per
  tier 1 (direct / quasi identifiers), per category (tier 2) and per label (tier 3).
- **Over-redaction**: the share of non-whitespace characters outside every gold span that are covered
  by a replaced interval; also by the source of the replaced span (``model``, ``propagated``: another occurrence
  of a detected text, ``officials``, each recognizer), so over-redaction that propagation spreads shows apart.
- **Legal text replaced**: of the non-whitespace characters outside gold spans that are legal text
  (:class:`thunder.language.legal.LegalText` with the built-in lexicon, whatever the pipeline's options: statute references,
  statutes, courts, procedural terms, exhibits, precedents, case numbers) or a published official's name
  (:func:`thunder.language.legal.official_names`, every role), how many were replaced, by kind.
- **Token metrics** (Thunder-DeID paper): every token gets the entity type of the gold span it overlaps
  most (``O`` if none), and likewise the predicted type from the detected spans. Binary P/R/F1 scores
  identifier vs ``O``; micro P/R/F1 pools all entity types (a token counts as correct only with the
  right type). Tokens come from the model's tokenizer; where there is none (the recognizers-only
  baseline) from ``--tokenizer`` if given, else every non-whitespace character is one token
  (``tokenization: "chars"``). Only figures with the same tokenization are comparable. The predictions are the
  pipeline's final replaced spans (model ∪ recognizers, widened and propagated), not raw model tags.

Input (:mod:`thunder.evaluation.gold`): the annotated judgments of a training recipe (:class:`~thunder.data.Recipe`, optionally
only the ``--split`` that training held out), filled once as the data module fills its test set, or a JSONL file of
``{"text": ..., "spans": [[start, end, label], ...], "id": ...}``. The report and its tables:
:mod:`thunder.evaluation.report`. Examples::

    thunder evaluate --recognizers_only                     # the no-model baseline on the packaged demo corpus
    thunder evaluate --model runs/small/finetune/checkpoints/last.ckpt --split test --mentions both   # its recipe
    thunder evaluate --model runs/export --config configs/small.yaml --split test     # a config's recipe
"""

from __future__ import annotations

import itertools
import math
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import torch

from thunder.deid.pipeline import Deidentifier, DeidResult
from thunder.deid.triage import REASONS, Triage, TriagedResult, TriageRule
from thunder.evaluation.report import (
    LEGAL_KINDS,
    OFFICIAL_NAME,
    EvaluationReport,
    LeakCount,
    LeakedMention,
    Replacements,
    Scores,
    TriageCurve,
)
from thunder.language.legal import OFFICIAL_ROLES, LegalText, official_names
from thunder.model.metrics import TokenMetrics
from thunder.synthesis.synthesizer import SynthesizedDocument
from thunder.taxonomy import BINARY_TYPE, GRANULARITIES, Label, Taxonomy

CHAR_TOKENIZATION = "chars"
REVIEWED_SHARES = (0.05, 0.1, 0.2, 0.5)  # the triage curve: the riskiest 5%, 10%, 20%, 50% of documents reviewed


class TokenizerLike(Protocol):
    """Anything with ``encode(text).offsets`` (a :class:`~thunder.language.tokenizer.ThunderTokenizer`)."""

    def encode(self, text: str) -> Any: ...


def _covered(length: int, intervals: Iterable[tuple[int, int]]) -> bytearray:
    """Per-character flags: 1 where some interval covers the character."""
    flags = bytearray(length)
    for start, end in intervals:
        start, end = max(start, 0), min(end, length)
        if end > start:
            flags[start:end] = b"\x01" * (end - start)
    return flags


def _type_per_char(length: int, spans: Iterable[tuple[int, int, int]]) -> list[int]:
    """Per-character entity-type ids (0 = none); later spans win on overlap."""
    types = [0] * length
    for start, end, type_id in spans:
        start, end = max(start, 0), min(end, length)
        types[start:end] = [type_id] * max(end - start, 0)
    return types


def _token_types(offsets: Sequence[tuple[int, int]], char_types: Sequence[int]) -> list[int]:
    """The entity type covering most characters of each token (0 if it overlaps none)."""
    out = []
    for start, end in offsets:
        counts = Counter(t for t in char_types[start:end] if t)
        out.append(counts.most_common(1)[0][0] if counts else 0)
    return out


def _char_offsets(text: str) -> list[tuple[int, int]]:
    return [(i, i + 1) for i, ch in enumerate(text) if not ch.isspace()]


def _survived(text: str, start: int, end: int, covered: bytearray) -> str:
    """The parts of ``text[start:end]`` no interval covers, whitespace-only parts dropped, joined by "…"."""
    runs, run = [], ""
    for i in range(start, end):
        if covered[i]:
            runs.append(run.strip())
            run = ""
        else:
            run += text[i]
    runs.append(run.strip())
    return "…".join(r for r in runs if r)


class _TypeIndex:
    """The tag vocabulary of the token metrics at a granularity: ``O``, the taxonomy's types, ``<other>``.

    A predicted type the taxonomy does not know maps to ``<other>`` (always a wrong type).
    """

    OTHER = "<other>"

    def __init__(self, taxonomy: Taxonomy, granularity: str) -> None:
        if granularity not in GRANULARITIES:
            raise ValueError(f"granularity must be one of {GRANULARITIES}, got {granularity!r}")
        self.taxonomy, self.granularity = taxonomy, granularity
        if granularity == "label":
            names = sorted(taxonomy.labels)
            groups = [taxonomy.labels[n].category for n in names]
        elif granularity == "category":
            names = groups = sorted(taxonomy.categories)
        else:
            names = groups = [BINARY_TYPE]
        self.tags = ["O", *names, self.OTHER]
        self.groups = ["O", *groups, self.OTHER]
        self.ids = {name: i for i, name in enumerate(self.tags)}

    def gold(self, label: Label) -> int:
        return self.ids[{"label": label.name, "category": label.category, "binary": BINARY_TYPE}[self.granularity]]

    def predicted(self, span: Any) -> int:
        if self.granularity == "binary":
            return self.ids[BINARY_TYPE]
        name = span.label
        if self.granularity == "category":
            known = self.taxonomy.labels.get(span.label)
            name = known.category if known else (getattr(span, "category", None) or span.label)
        return self.ids.get(name, self.ids[self.OTHER])


class _TriageTally:
    """Per document: risk, near-threshold tokens, leaked mentions, marks; the curve at the end."""

    def __init__(self) -> None:
        self.ranked: list[tuple[float, int, int]] = []  # (risk, near tokens, leaked mentions) per document, in order
        self.marks = self.marks_on_leaks = self.found = self.marked_chars = self.chars = 0
        self.by_reason: Counter[str] = Counter({reason: 0 for reason in REASONS})

    def add(self, text: str, leaked: Sequence[tuple[int, int]], result: TriagedResult) -> None:
        marked = _covered(len(text), ((m.start, m.end) for m in result.suggestions))
        self.ranked.append((result.risk, result.near_tokens, len(leaked)))
        self.found += sum(1 for start, end in leaked if any(marked[start:end]))
        self.marks += len(result.suggestions)
        self.by_reason.update(m.reason for m in result.suggestions)
        self.marks_on_leaks += sum(1 for m in result.suggestions if any(m.start < e and s < m.end for s, e in leaked))
        self.marked_chars += sum(1 for i, ch in enumerate(text) if marked[i] and not ch.isspace())
        self.chars += sum(1 for ch in text if not ch.isspace())

    def curve(self) -> TriageCurve:
        leaks = [k for _, _, k in self.ranked]
        by_risk = _ranked(leaks, [risk for risk, _, _ in self.ranked])
        by_near = _ranked(leaks, [near for _, near, _ in self.ranked])
        rows = []
        for share in REVIEWED_SHARES:
            n = math.ceil(share * len(leaks))
            rows.append({"share": share, "documents": n, "leaked_mentions": sum(by_risk[:n]),
                         "leaking_documents": sum(1 for k in by_risk[:n] if k),
                         "leaking_documents_by_near_tokens": sum(1 for k in by_near[:n] if k)})  # fmt: skip
        return TriageCurve(
            documents=len(leaks), leaked_mentions=sum(leaks), leaking_documents=sum(1 for k in leaks if k), rows=rows,
            marks=self.marks, marks_on_leaks=self.marks_on_leaks, marks_by_reason=dict(self.by_reason),
            found_by_marks=self.found, marked_chars=self.marked_chars, chars=self.chars,
            calibration=calibration([risk for risk, _, _ in self.ranked], [k > 0 for k in leaks]),
        )  # fmt: skip


def _ranked(leaks: Sequence[int], scores: Sequence[float]) -> list[int]:
    """``leaks`` in the order of ``scores``, highest first (stable: ties in input order)."""
    return [leaks[i] for i in sorted(range(len(leaks)), key=lambda i: -scores[i])]


RISK_BINS = (0.0, 0.1, 0.3, 0.6, 1.0)  # the reliability table's bins of risk (the last one closed)


def calibration(risks: Sequence[float], leaking: Sequence[bool]) -> dict[str, Any]:
    """How well the risk gives the probability that a document still holds an identifier: the Brier score (mean
    squared difference between the risk and 1 for a leaking document, 0 for a clean one), the Brier score of
    giving every document the share of leaking documents (what a risk that knows nothing scores), and per bin of
    :data:`RISK_BINS` the documents, their mean risk and the share of them that leak."""
    n = len(risks)
    if not n:
        return {"brier": None, "brier_of_the_share": None, "mean_risk": None, "bins": []}
    share = sum(leaking) / n
    bins = []
    for low, high in zip(RISK_BINS, RISK_BINS[1:]):
        inside = [i for i, risk in enumerate(risks) if low <= risk < high or (high == RISK_BINS[-1] and risk == high)]
        if inside:
            bins.append({"low": low, "high": high, "documents": len(inside),
                         "mean_risk": sum(risks[i] for i in inside) / len(inside),
                         "leaking_share": sum(leaking[i] for i in inside) / len(inside)})  # fmt: skip
    return {"brier": sum((risk - leak) ** 2 for risk, leak in zip(risks, leaking)) / n,
            "brier_of_the_share": share * (1 - share), "mean_risk": sum(risks) / n, "bins": bins}  # fmt: skip


class _Tally:
    """Accumulates leaks, over-redaction and the token confusion matrix document by document."""

    def __init__(self, taxonomy: Taxonomy, types: _TypeIndex, tokenizer: TokenizerLike | None, context: int) -> None:
        self.taxonomy, self.types, self.tokenizer, self.context = taxonomy, types, tokenizer, context
        self.metric = TokenMetrics(types.tags, groups=types.groups)
        self.leaks, self.by_tier, self.by_category, self.by_label = LeakCount(), {}, {}, {}
        self.leaked: list[LeakedMention] = []
        self.over_redacted_texts: Counter[str] = Counter()
        self.replacements = Replacements()
        self.legal_text = LegalText()
        self.documents = self.characters = self.tokens = self.non_identifier = self.over_redacted = 0
        self.triage: _TriageTally | None = None

    def add(self, doc: SynthesizedDocument, result: DeidResult) -> None:
        text = doc.text
        replaced = _covered(len(text), ((s.start, s.end) for s in result.spans))
        sources: list[str | None] = [None] * len(text)
        for span in result.spans:  # a de-identifier that names no source is a model
            sources[span.start : span.end] = [getattr(span, "source", "model")] * (span.end - span.start)
        labels = [_label(self.taxonomy, s.label, doc.doc_id) for s in doc.spans]
        leaked = [(s.start, s.end) for s, label in zip(doc.spans, labels) if self._add_mention(doc, s, label, replaced)]
        if isinstance(result, TriagedResult):
            self.triage = self.triage or _TriageTally()
            self.triage.add(text, leaked, result)

        gold = _covered(len(text), ((s.start, s.end) for s in doc.spans))
        legal = self._legal_kinds(text)
        run_start = None
        for i, ch in enumerate(text):
            over = replaced[i] and not gold[i]
            if not gold[i] and not ch.isspace():
                self.non_identifier += 1
                self.over_redacted += over
                if over:
                    self.replacements.by_source[sources[i]] += 1
                if legal[i] is not None:
                    self.replacements.legal_chars[legal[i]] += 1
                    self.replacements.legal_replaced[legal[i]] += over
            if over and run_start is None:
                run_start = i
            elif not over and run_start is not None:
                self._add_over_redacted(text[run_start:i], sources[run_start:i])
                run_start = None
        if run_start is not None:
            self._add_over_redacted(text[run_start:], sources[run_start:])

        self._add_tokens(doc, labels, result)
        self.documents += 1
        self.characters += len(text)

    def _add_over_redacted(self, run: str, sources: Sequence[str | None]) -> None:
        if stripped := run.strip():
            self.over_redacted_texts[stripped] += 1
            counts = self.replacements.text_sources.setdefault(stripped, Counter())
            counts.update(source for ch, source in zip(run, sources) if not ch.isspace())

    def _legal_kinds(self, text: str) -> list[str | None]:
        """Per character: the kind of legal text it belongs to (the first of :data:`LEGAL_KINDS` where several
        apply), or ``None``."""
        kinds: list[str | None] = [None] * len(text)
        rank = {kind: i for i, kind in enumerate(LEGAL_KINDS)}
        found = [(s.start, s.end, s.kind) for s in self.legal_text.find(text)]
        found += [(o.start, o.end, OFFICIAL_NAME) for o in official_names(text, OFFICIAL_ROLES)]
        for start, end, kind in sorted(found, key=lambda f: -rank[f[2]]):  # the first kind written last
            kinds[start:end] = [kind] * (end - start)
        return kinds

    def _add_mention(self, doc: SynthesizedDocument, span: Any, label: Label, replaced: bytearray) -> bool:
        """Count one gold mention; whether it leaked."""
        text = doc.text
        if text[span.start : span.end].isspace():
            return False
        survived = _survived(text, span.start, span.end, replaced)
        is_leak = bool(survived)
        partial = is_leak and any(replaced[span.start : span.end])
        self.leaks.add(is_leak, partial)
        tables = ((label.tier1, self.by_tier), (label.category, self.by_category), (label.name, self.by_label))
        for key, table in tables:
            table.setdefault(key, LeakCount()).add(is_leak, partial)
        if is_leak:
            self.leaked.append(
                LeakedMention(
                    doc_id=doc.doc_id,
                    start=span.start,
                    end=span.end,
                    label=label.name,
                    category=label.category,
                    tier1=label.tier1,
                    text=text[span.start : span.end],
                    survived=survived,
                    partial=partial,
                    left=text[max(span.start - self.context, 0) : span.start],
                    right=text[span.end : span.end + self.context],
                )
            )
        return is_leak

    def _add_tokens(self, doc: SynthesizedDocument, labels: list[Label], result: DeidResult) -> None:
        text, types = doc.text, self.types
        offsets = self.tokenizer.encode(text).offsets if self.tokenizer is not None else _char_offsets(text)
        gold_chars = _type_per_char(len(text), ((s.start, s.end, types.gold(lb)) for s, lb in zip(doc.spans, labels)))
        pred_chars = _type_per_char(len(text), ((s.start, s.end, types.predicted(s)) for s in result.spans))
        gold, pred = _token_types(offsets, gold_chars), _token_types(offsets, pred_chars)
        self.metric.update(torch.tensor(pred, dtype=torch.long), torch.tensor(gold, dtype=torch.long))
        self.tokens += len(offsets)

    def report(self, seconds: float) -> EvaluationReport:
        scores = {k: v.item() for k, v in self.metric.compute().items()}
        labels = self.taxonomy.labels
        return EvaluationReport(
            documents=self.documents,
            characters=self.characters,
            tokenization=_tokenization_name(self.tokenizer),
            granularity=self.types.granularity,
            tokens=self.tokens,
            binary=Scores(scores["binary_precision"], scores["binary_recall"], scores["binary_f1"]),
            micro=Scores(scores["micro_precision"], scores["micro_recall"], scores["micro_f1"]),
            token_by_category=self.metric.table() if self.types.granularity != "binary" else [],
            leaks=self.leaks,
            leaks_by_tier=self.by_tier,
            leaks_by_category=self.by_category,
            leaks_by_label=self.by_label,
            label_tiers={k: (labels[k].tier1, labels[k].category) for k in self.by_label},
            non_identifier_chars=self.non_identifier,
            over_redacted_chars=self.over_redacted,
            over_redacted_texts=self.over_redacted_texts,
            leaked=self.leaked,
            replacements=self.replacements,
            seconds=seconds,
            meta={"taxonomy": self.taxonomy.name, "taxonomy_fingerprint": self.taxonomy.fingerprint()},
            triage=self.triage.curve() if self.triage is not None else None,
        )


def evaluate(
    deidentifier: Callable[[str], DeidResult] | None,
    documents: Iterable[SynthesizedDocument],
    *,
    taxonomy: Taxonomy | None = None,
    tokenizer: TokenizerLike | None = None,
    granularity: str | None = None,
    context: int = 30,
    batch_size: int = 8,
    progress: bool = False,
    triage: TriageRule | None = None,
) -> EvaluationReport:
    """Run ``deidentifier`` on every document and score its replaced spans against the gold spans.

    Args:
        deidentifier: any callable ``text -> DeidResult`` (a :class:`~thunder.deid.pipeline.Deidentifier`; its
            ``deidentify_batch`` is used where present); ``None``: the recognizers alone (:func:`recognizer_baseline`).
        documents: objects with ``doc_id``, ``text`` and ``spans`` (``start``/``end``/``label``, a tier-3 label of
            the taxonomy), e.g. :class:`~thunder.synthesis.synthesizer.SynthesizedDocument`.
        taxonomy: gives tier 1 and category of every label; default the de-identifier's, else the packaged one.
        tokenizer: tokens for the token metrics; default the de-identifier's ``tokenizer``, else one token per
            non-whitespace character.
        granularity: entity types the micro metrics compare (label | category | binary); default the
            de-identifier's label set granularity, else ``label``.
        context: characters of context kept each side of a leaked mention.
        batch_size: documents per ``deidentify_batch`` call.
        progress: show a progress bar on stderr (when it is a terminal).
        triage: with a :class:`~thunder.deid.pipeline.Deidentifier`, triage its results by this rule and report the curve
            (:class:`~thunder.evaluation.report.TriageCurve`); a de-identifier returning
            :class:`~thunder.deid.triage.TriagedResult` is reported without it.
    """
    if deidentifier is None:
        deidentifier = recognizer_baseline()
    taxonomy = taxonomy or _taxonomy_of(deidentifier) or Taxonomy.load()
    tokenizer = tokenizer or getattr(deidentifier, "tokenizer", None)
    types = _TypeIndex(taxonomy, granularity or _granularity_of(deidentifier) or "label")
    tally = _Tally(taxonomy, types, tokenizer, context)
    if triage is not None and isinstance(deidentifier, Deidentifier):
        deidentifier = Triage(deidentifier, triage)
    run_batch = getattr(deidentifier, "deidentify_batch", None) or (lambda texts: [deidentifier(t) for t in texts])
    started = time.perf_counter()
    iterator = iter(_progress(documents, progress))
    while batch := list(itertools.islice(iterator, batch_size)):
        for doc, result in zip(batch, run_batch([doc.text for doc in batch])):
            tally.add(doc, result)
    return tally.report(time.perf_counter() - started)


def _label(taxonomy: Taxonomy, name: str, doc_id: str) -> Label:
    try:
        return taxonomy.labels[name]
    except KeyError:
        raise KeyError(f"{doc_id}: gold label {name!r} is not in taxonomy {taxonomy.name!r}") from None


def _taxonomy_of(deidentifier: object) -> Taxonomy | None:
    return getattr(getattr(deidentifier, "label_set", None), "taxonomy", None)


def _granularity_of(deidentifier: object) -> str | None:
    label_set = getattr(deidentifier, "label_set", None)
    return getattr(label_set, "granularity", None)


def _tokenization_name(tokenizer: object | None) -> str:
    if tokenizer is None:
        return CHAR_TOKENIZATION
    path = getattr(getattr(tokenizer, "hf", None), "name_or_path", None)
    return f"{type(tokenizer).__name__}({path})" if path else type(tokenizer).__name__


def _progress(documents: Iterable[Any], enabled: bool) -> Iterable[Any]:
    if not enabled:
        return documents
    from tqdm.auto import tqdm

    return tqdm(documents, desc="evaluate", unit="doc", file=sys.stderr, disable=None)


# ------------------------------------------------------------------------------------- baselines


def recognizer_baseline() -> Callable[[str], DeidResult]:
    """The no-model baseline: the full pipeline (entities, operator, particles) with the built-in recognizers alone."""
    return Deidentifier(model=None)
