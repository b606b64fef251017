"""Evaluation harness: what leaks, what is over-redacted, and the paper's token metrics.

``evaluate(deidentifier, documents)`` runs a de-identifier (anything that maps a text to a
:class:`~thunder.deid.DeidResult`) over documents with gold entity spans and returns an
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
  (:class:`thunder.legal.LegalText` with the built-in lexicon, whatever the pipeline's options: statute references,
  statutes, courts, procedural terms, exhibits, precedents, case numbers) or a published official's name
  (:func:`thunder.legal.official_names`, every role), how many were replaced, by kind.
- **Token metrics** (Thunder-DeID paper): every token gets the entity type of the gold span it overlaps
  most (``O`` if none), and likewise the predicted type from the detected spans. Binary P/R/F1 scores
  identifier vs ``O``; micro P/R/F1 pools all entity types (a token counts as correct only with the
  right type). Tokens come from the model's tokenizer; where there is none (the recognizers-only
  baseline) from ``--tokenizer`` if given, else every non-whitespace character is one token
  (``tokenization: "chars"``). Only figures with the same tokenization are comparable. The predictions are the
  pipeline's final replaced spans (model ∪ recognizers, widened and propagated), not raw model tags.

Input: the annotated judgments of a training recipe (:class:`~thunder.data.Recipe`, optionally only the ``--split``
that training held out), filled once as the data module fills its test set, or a JSONL file of
``{"text": ..., "spans": [[start, end, label], ...], "id": ...}``. Examples::

    thunder evaluate --recognizers_only true                # the no-model baseline on the packaged demo corpus
    thunder evaluate --model runs/small/finetune/checkpoints/last.ckpt --split test --mentions both   # its recipe
    thunder evaluate --model runs/export --config configs/small.yaml --split test     # a config's recipe
"""

from __future__ import annotations

import itertools
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch

from thunder.data import SPLITS, Filler, Recipe, read_corpus
from thunder.deid import DeidResult, Deidentifier
from thunder.legal import KINDS, LegalText, official_names
from thunder.metrics import TokenMetrics
from thunder.sources import jsonl_records
from thunder.synthesis import EntitySpan, SynthesizedDocument
from thunder.taxonomy import BINARY_TYPE, GRANULARITIES, Label, Taxonomy, UnknownTagError

CHAR_TOKENIZATION = "chars"
OVER_REDACTED_SHOWN = 30  # over-redacted texts listed with --show_leaks
OFFICIAL_NAME = "official name"  # the kind of legal text of a published official's name
LEGAL_KINDS = (*KINDS, OFFICIAL_NAME)


class TokenizerLike(Protocol):
    """Anything with ``encode(text).offsets`` (a :class:`~thunder.tokenizer.ThunderTokenizer`)."""

    def encode(self, text: str) -> Any: ...


# ----------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Scores:
    """Precision, recall and F1 (0.0 where undefined)."""

    precision: float
    recall: float
    f1: float


@dataclass
class LeakCount:
    """Mentions seen and leaked (``partial``: leaked mentions of which some characters were replaced)."""

    mentions: int = 0
    leaked: int = 0
    partial: int = 0

    @property
    def rate(self) -> float | None:
        """Leaked / mentions; ``None`` where there are no mentions."""
        return self.leaked / self.mentions if self.mentions else None

    def add(self, leaked: bool, partial: bool) -> None:
        self.mentions += 1
        self.leaked += leaked
        self.partial += partial

    def to_dict(self) -> dict[str, Any]:
        return {"mentions": self.mentions, "leaked": self.leaked, "partial": self.partial, "rate": self.rate}


@dataclass(frozen=True)
class LeakedMention:
    """A gold mention that survived (in part) in the output, with context from the input text."""

    doc_id: str
    start: int
    end: int
    label: str
    category: str
    tier1: str
    text: str
    survived: str  # the surviving parts, joined by "…"
    partial: bool  # some characters were replaced
    left: str
    right: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Replacements:
    """The replaced characters outside gold spans: by the source of the span that replaced them (``by_source``; per
    over-redacted text in ``text_sources``), and the characters of legal text, per kind of :data:`LEGAL_KINDS`,
    there were (``legal_chars``) and were replaced (``legal_replaced``)."""

    by_source: Counter[str] = field(default_factory=Counter)
    text_sources: dict[str, Counter[str]] = field(default_factory=dict)
    legal_chars: Counter[str] = field(default_factory=Counter)
    legal_replaced: Counter[str] = field(default_factory=Counter)


@dataclass
class EvaluationReport:
    """Everything ``thunder evaluate`` reports; ``to_dict`` is the JSON written with ``--json``."""

    documents: int
    characters: int
    tokenization: str
    granularity: str
    tokens: int
    binary: Scores
    micro: Scores
    token_by_category: list[dict[str, Any]]  # per-category token P/R/F1 rows (metrics.per_type_table)
    leaks: LeakCount
    leaks_by_tier: dict[str, LeakCount]
    leaks_by_category: dict[str, LeakCount]
    leaks_by_label: dict[str, LeakCount]
    label_tiers: dict[str, tuple[str, str]]  # label -> (tier1, category), for the labels seen
    non_identifier_chars: int
    over_redacted_chars: int
    over_redacted_texts: Counter[str]  # each run of replaced non-identifier characters (whitespace-trimmed), counted
    leaked: list[LeakedMention]
    seconds: float
    meta: dict[str, Any] = field(default_factory=dict)
    replacements: Replacements = field(default_factory=Replacements)

    @property
    def over_redaction(self) -> float | None:
        """Share of non-identifier (non-whitespace) characters that were replaced."""
        return self.over_redacted_chars / self.non_identifier_chars if self.non_identifier_chars else None

    def to_dict(self) -> dict[str, Any]:
        replaced = self.replacements
        return {
            "meta": self.meta,
            "documents": self.documents,
            "characters": self.characters,
            "seconds": round(self.seconds, 3),
            "token_metrics": {
                "tokenization": self.tokenization,
                "granularity": self.granularity,
                "tokens": self.tokens,
                "binary": asdict(self.binary),
                "micro": asdict(self.micro),
                "by_category": self.token_by_category,
            },
            "leaks": {
                "all": self.leaks.to_dict(),
                "by_tier1": {k: v.to_dict() for k, v in self.leaks_by_tier.items()},
                "by_category": {k: v.to_dict() for k, v in self.leaks_by_category.items()},
                "by_label": {
                    k: {"tier1": self.label_tiers[k][0], "category": self.label_tiers[k][1], **v.to_dict()}
                    for k, v in self.leaks_by_label.items()
                },
            },
            "over_redaction": {
                "non_identifier_chars": self.non_identifier_chars,
                "replaced": self.over_redacted_chars,
                "rate": self.over_redaction,
                "by_source": dict(replaced.by_source.most_common()),
                "texts": dict(self.over_redacted_texts.most_common()),
                "text_sources": {t: dict(c) for t, c in replaced.text_sources.items()},
            },
            "legal_text": {
                kind: {"chars": replaced.legal_chars[kind], "replaced": replaced.legal_replaced[kind]}
                for kind in LEGAL_KINDS
            },
            "leaked_mentions": [m.to_dict() for m in self.leaked],
        }

    def summary_row(self, name: str) -> tuple[str, str]:
        """A Markdown header and one row, for comparison tables (README)."""
        header = (
            "| system | token binary F1 | token micro F1 | leak direct | leak quasi | leak all | over-redaction |\n"
            "|---|---|---|---|---|---|---|"
        )
        tiers = self.leaks_by_tier
        row = (
            f"| {name} | {_num(self.binary.f1)} | {_num(self.micro.f1)} | {_leak(tiers.get('direct'))} | "
            f"{_leak(tiers.get('quasi'))} | {_leak(self.leaks)} | {_pct(self.over_redaction)} |"
        )
        return header, row

    def format(self, show_leaks: bool = False, name: str | None = None) -> str:
        """Markdown tables for the terminal (paste-able into a README)."""
        meta = self.meta
        name = name or meta.get("system") or "system"
        token = {row["type"]: row for row in self.token_by_category}
        lines = [
            f"## thunder evaluate: {name}",
            f"data: {meta.get('data', '?')} | documents: {self.documents} | characters: {self.characters} | "
            f"mentions: {self.leaks.mentions} | seed: {meta.get('seed', '?')} | {self.seconds:.1f} s",
            "",
            *self.summary_row(name),
            "",
            f"Token metrics ({self.tokens} tokens, tokenization: {self.tokenization}, "
            f"types: {self.granularity})",
            "",
            "| metric | precision | recall | F1 |",
            "|---|---|---|---|",
            f"| binary token | {_num(self.binary.precision)} | {_num(self.binary.recall)} | {_num(self.binary.f1)} |",
            f"| token micro | {_num(self.micro.precision)} | {_num(self.micro.recall)} | {_num(self.micro.f1)} |",
            "",
            "Leaks (a mention leaks if any non-whitespace character of it is not replaced)",
            "",
            "| identifiers | mentions | leaked | partial | leak rate |",
            "|---|---|---|---|---|",
            _leak_row("all", self.leaks),
            *(_leak_row(tier, count) for tier, count in sorted(self.leaks_by_tier.items())),
            "",
            "| category | mentions | leaked | partial | leak rate | token P | token R | token F1 |",
            "|---|---|---|---|---|---|---|---|",
            *(
                _leak_row(cat, count) + _token_cells(token.get(cat))
                for cat, count in sorted(self.leaks_by_category.items())
            ),
        ]
        direct = {k: v for k, v in self.leaks_by_label.items() if self.label_tiers[k][0] == "direct"}
        if direct:
            lines += [
                "",
                "| direct identifier | mentions | leaked | partial | leak rate |",
                "|---|---|---|---|---|",
                *(_leak_row(label, count) for label, count in sorted(direct.items())),
            ]
        lines += [
            "",
            f"Over-redaction: {_pct(self.over_redaction)} "
            f"({self.over_redacted_chars} of {self.non_identifier_chars} non-identifier characters replaced)",
        ]
        lines += self._replacement_tables()
        if show_leaks:
            lines += ["", f"Leaked mentions ({len(self.leaked)}):"]
            lines += [_format_leak(m) for m in self.leaked]
            common = self.over_redacted_texts.most_common(OVER_REDACTED_SHOWN)
            lines += ["", f"Over-redacted texts, most frequent first ({len(common)} of {len(self.over_redacted_texts)}):"]
            lines += [f"- {text!r} × {count}{_sources(self.replacements.text_sources.get(text))}"
                      for text, count in common]  # fmt: skip
        return "\n".join(lines)

    def _replacement_tables(self) -> list[str]:
        """Over-redaction by source, and legal text replaced by kind."""
        replaced, lines = self.replacements, []
        if replaced.by_source:
            lines += ["", "| replaced by | non-identifier characters | share of non-identifier characters |",
                      "|---|---|---|"]  # fmt: skip
            lines += [f"| {source} | {count} | {_pct(count / self.non_identifier_chars)} |"
                      for source, count in replaced.by_source.most_common()]  # fmt: skip
        chars, legal = replaced.legal_chars, replaced.legal_replaced
        lines += ["", f"Legal text replaced: {sum(legal.values())} of {sum(chars.values())} characters of legal text "
                      f"outside identifiers (statute references: {legal['statute reference']})"]  # fmt: skip
        lines += ["", "| legal text | characters | replaced | share |", "|---|---|---|---|"]
        shares = {kind: legal[kind] / chars[kind] if chars[kind] else None for kind in LEGAL_KINDS}
        lines += [f"| {kind} | {chars[kind]} | {legal[kind]} | {_pct(shares[kind])} |" for kind in LEGAL_KINDS]
        return lines


def _num(value: float) -> str:
    return f"{value:.4f}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.2f}%"


def _leak(count: LeakCount | None) -> str:
    return "–" if count is None else f"{_pct(count.rate)} ({count.leaked}/{count.mentions})"


def _sources(counts: Counter[str] | None) -> str:
    return f" ({', '.join(f'{source} {n}' for source, n in counts.most_common())} characters)" if counts else ""


def _leak_row(name: str, count: LeakCount) -> str:
    return f"| {name} | {count.mentions} | {count.leaked} | {count.partial} | {_pct(count.rate)} |"


def _token_cells(row: dict[str, Any] | None) -> str:
    if row is None:
        return " – | – | – |"
    return f" {_num(row['precision'])} | {_num(row['recall'])} | {_num(row['f1'])} |"


def _format_leak(m: LeakedMention) -> str:
    flat = [" ".join(s.split()) for s in (m.left, m.text, m.right)]
    kind = f"partial, survived {m.survived!r}" if m.partial else "full"
    return f"- {m.doc_id} [{m.start}:{m.end}] {m.label} ({m.tier1}, {kind}): …{flat[0]}⟦{flat[1]}⟧{flat[2]}…"


# ------------------------------------------------------------------------------------- evaluation


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

    def add(self, doc: SynthesizedDocument, result: DeidResult) -> None:
        text = doc.text
        replaced = _covered(len(text), ((s.start, s.end) for s in result.spans))
        sources: list[str | None] = [None] * len(text)
        for span in result.spans:  # a de-identifier that names no source is a model
            sources[span.start : span.end] = [getattr(span, "source", "model")] * (span.end - span.start)
        labels = [_label(self.taxonomy, s.label, doc.doc_id) for s in doc.spans]
        for span, label in zip(doc.spans, labels):
            self._add_mention(doc, span, label, replaced)

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
        found += [(o.start, o.end, OFFICIAL_NAME) for o in official_names(text)]
        for start, end, kind in sorted(found, key=lambda f: -rank[f[2]]):  # the first kind written last
            kinds[start:end] = [kind] * (end - start)
        return kinds

    def _add_mention(self, doc: SynthesizedDocument, span: Any, label: Label, replaced: bytearray) -> None:
        text = doc.text
        if text[span.start : span.end].isspace():
            return
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
) -> EvaluationReport:
    """Run ``deidentifier`` on every document and score its replaced spans against the gold spans.

    Args:
        deidentifier: any callable ``text -> DeidResult`` (a :class:`~thunder.deid.Deidentifier`; its
            ``deidentify_batch`` is used where present); ``None``: the recognizers alone (:func:`recognizer_baseline`).
        documents: objects with ``doc_id``, ``text`` and ``spans`` (``start``/``end``/``label``, a tier-3 label of
            the taxonomy), e.g. :class:`~thunder.synthesis.SynthesizedDocument`.
        taxonomy: gives tier 1 and category of every label; default the de-identifier's, else the packaged one.
        tokenizer: tokens for the token metrics; default the de-identifier's ``tokenizer``, else one token per
            non-whitespace character.
        granularity: entity types the micro metrics compare (label | category | binary); default the
            de-identifier's label set granularity, else ``label``.
        context: characters of context kept each side of a leaked mention.
        batch_size: documents per ``deidentify_batch`` call.
        progress: show a progress bar on stderr (when it is a terminal).
    """
    if deidentifier is None:
        deidentifier = recognizer_baseline()
    taxonomy = taxonomy or _taxonomy_of(deidentifier) or Taxonomy.load()
    tokenizer = tokenizer or getattr(deidentifier, "tokenizer", None)
    types = _TypeIndex(taxonomy, granularity or _granularity_of(deidentifier) or "label")
    tally = _Tally(taxonomy, types, tokenizer, context)
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


# ------------------------------------------------------------------------------------------- input


def read_gold(path: str | Path, taxonomy: Taxonomy) -> Iterator[SynthesizedDocument]:
    """Documents with gold spans from a JSONL file of ``{"text": ..., "spans": [[start, end, label], ...], "id": ...}``
    (:func:`thunder.sources.jsonl_records`). Labels may be raw tags; they are resolved through the taxonomy. Errors
    name the file and line."""
    path = Path(path)
    for number, record, reason in jsonl_records(path):
        where = f"{path}:{number}"
        if record is None:
            raise ValueError(f"{where}: {reason}")
        text, spans = record["text"], []
        try:
            for i, raw in enumerate(record.get("spans", [])):
                start, end, tag = raw[:3]
                if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)):
                    raise ValueError(f"span {i} {raw!r} is not a range inside the text (length {len(text)})")
                entity = str(raw[3]) if len(raw) > 3 else f"{tag}:{text[start:end]}"
                spans.append(EntitySpan(start, end, taxonomy.resolve(str(tag)).label.name, entity))
        except UnknownTagError as error:
            raise ValueError(f"{where}: {error}") from None
        except (ValueError, TypeError, AttributeError) as error:
            raise ValueError(f"{where}: {error}") from None
        yield SynthesizedDocument(str(record.get("id", f"{path.stem}:{number}")), text, tuple(spans))


def load_documents(
    recipe: Recipe,
    taxonomy: Taxonomy,
    split: str | None = None,
    mentions: str = "seen",
    limit: int | None = None,
) -> Iterator[SynthesizedDocument]:
    """The judgments of a recipe's ``split`` (None: every one of its ``data_dir``) filled once as the data module fills
    its validation and test sets (:meth:`thunder.data.Filler.synthesizer`), so ``thunder evaluate`` and ``thunder
    test`` read the same documents: from the training part of the mention lists (``seen``) or only from the part
    ``mention_holdout`` held back, with the unseen name family (``unseen``)."""
    if mentions not in ("seen", "unseen"):
        raise ValueError(f"mentions must be 'seen' or 'unseen', got {mentions!r}")
    if mentions == "unseen" and not recipe.mention_holdout:
        raise ValueError("unseen mentions need the training run's mention_holdout (e.g. 0.1): without one, every"
                         " list entry was seen in training")
    filler = Filler(recipe, taxonomy)
    if split is None:
        annotated = read_corpus([recipe.corpus])
        head_outside: frozenset[str] | None = filler.head_outside(annotated)
    else:
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        annotated, head_outside = filler.documents()[split], None
    synthesizer = filler.synthesizer("heldout" if mentions == "unseen" else "train", head_outside)
    for doc in annotated[:limit]:
        yield synthesizer(doc, epoch=0)


# ------------------------------------------------------------------------------------- baselines


def recognizer_baseline() -> Callable[[str], DeidResult]:
    """The no-model baseline: the full pipeline (entities, operator, particles) with the built-in recognizers alone."""
    return Deidentifier(model=None)
