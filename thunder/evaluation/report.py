"""What ``thunder evaluate`` reports: leaks (overall, per tier 1, category and label), over-redaction (by the source
that replaced, and legal text replaced by kind), the paper's token metrics, the leaked mentions; as JSON
(:meth:`EvaluationReport.to_dict`) and as Markdown tables (:meth:`EvaluationReport.format`). The definitions are in
:mod:`thunder.evaluation.evaluate`, which fills the report."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from thunder.deid.triage import REASONS
from thunder.language.legal import KINDS

OVER_REDACTED_SHOWN = 30  # over-redacted texts listed with --show_leaks
OFFICIAL_NAME = "official name"  # the kind of legal text of a published official's name
LEGAL_KINDS = (*KINDS, OFFICIAL_NAME)


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
class TriageCurve:
    """What reviewing the riskiest documents first finds (:mod:`thunder.deid.triage`), and what the possible-miss marks
    cover. Documents are ranked by risk, ties in input order, and side by side by their count of near-threshold tokens
    (the plain signal the risk has to beat); a mark finds a leaked mention it overlaps; ``calibration`` says how close
    the risk comes to the share of documents that leak (:func:`thunder.evaluation.evaluate.calibration`)."""

    documents: int
    leaked_mentions: int
    leaking_documents: int
    rows: list[dict[str, Any]]  # per reviewed share: documents, leaked mentions and leaking documents found (by risk;
    # leaking_documents_by_near_tokens: ranked by the count of near-threshold tokens)
    marks: int
    marks_on_leaks: int  # marks that overlap a leaked mention
    marks_by_reason: dict[str, int]
    found_by_marks: int  # leaked mentions a mark overlaps
    marked_chars: int  # non-whitespace characters inside a mark
    chars: int  # non-whitespace characters of the documents
    calibration: dict[str, Any] = field(default_factory=dict)  # brier, brier_of_the_share, mean_risk, bins

    @property
    def mark_recall(self) -> float | None:
        return self.found_by_marks / self.leaked_mentions if self.leaked_mentions else None

    @property
    def marked_share(self) -> float | None:
        return self.marked_chars / self.chars if self.chars else None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "mark_recall": self.mark_recall, "marked_share": self.marked_share}

    def format(self) -> list[str]:
        """Markdown lines: the curve, then the marks."""
        lines = [
            f"Triage: {self.leaking_documents} of {self.documents} documents leak ({self.leaked_mentions} leaked "
            "mentions); reviewing the riskiest documents first finds",
            "",
            "| documents reviewed | leaked mentions found | leaking documents found | leaking documents found, ranked by "
            "near-threshold tokens instead |",
            "|---|---|---|---|",
        ]
        for row in self.rows:
            lines.append(
                f"| {row['share']:.0%} ({row['documents']}) | {_share(row['leaked_mentions'], self.leaked_mentions)}"
                f" | {_share(row['leaking_documents'], self.leaking_documents)}"
                f" | {_share(row['leaking_documents_by_near_tokens'], self.leaking_documents)} |"
            )
        lines += self._calibration_lines()
        reasons = ", ".join(f"{count} {REASONS[reason]}" for reason, count in self.marks_by_reason.items() if count)
        lines += [
            "",
            f"Possible misses: {self.marks} marks ({reasons or 'none'}) on {percent(self.marked_share)} of the "
            f"characters cover {_share(self.found_by_marks, self.leaked_mentions)} of the leaked mentions; "
            f"{_share(self.marks_on_leaks, self.marks)} of the marks are on a leak",
        ]
        return lines

    def _calibration_lines(self) -> list[str]:
        c = self.calibration
        if not c or c.get("brier") is None:
            return []
        lines = ["", f"Calibration: mean risk {c['mean_risk']:.3f} against {self.leaking_documents / max(1, self.documents):.3f}"
                 f" of the documents leaking; Brier score {c['brier']:.4f} ({c['brier_of_the_share']:.4f} giving every "
                 "document that share)", "", "| risk | documents | mean risk | leaking |", "|---|---|---|---|"]  # fmt: skip
        for b in c["bins"]:
            lines.append(f"| {b['low']:g}-{b['high']:g} | {b['documents']} | {b['mean_risk']:.3f} | "
                         f"{b['leaking_share']:.3f} |")  # fmt: skip
        return lines


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
    triage: TriageCurve | None = None

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
            "triage": self.triage.to_dict() if self.triage is not None else None,
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
            f"{_leak(tiers.get('quasi'))} | {_leak(self.leaks)} | {percent(self.over_redaction)} |"
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
            f"Over-redaction: {percent(self.over_redaction)} "
            f"({self.over_redacted_chars} of {self.non_identifier_chars} non-identifier characters replaced)",
        ]
        lines += self._replacement_tables()
        if self.triage is not None:
            lines += ["", *self.triage.format()]
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
            lines += [f"| {source} | {count} | {percent(count / self.non_identifier_chars)} |"
                      for source, count in replaced.by_source.most_common()]  # fmt: skip
        chars, legal = replaced.legal_chars, replaced.legal_replaced
        lines += ["", f"Legal text replaced: {sum(legal.values())} of {sum(chars.values())} characters of legal text "
                      f"outside identifiers (statute references: {legal['statute reference']})"]  # fmt: skip
        lines += ["", "| legal text | characters | replaced | share |", "|---|---|---|---|"]
        shares = {kind: legal[kind] / chars[kind] if chars[kind] else None for kind in LEGAL_KINDS}
        lines += [f"| {kind} | {chars[kind]} | {legal[kind]} | {percent(shares[kind])} |" for kind in LEGAL_KINDS]
        return lines


def _num(value: float) -> str:
    return f"{value:.4f}"


def percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.2f}%"


def _share(part: int, whole: int) -> str:
    return f"{percent(part / whole if whole else None)} ({part}/{whole})"


def _leak(count: LeakCount | None) -> str:
    return "–" if count is None else f"{percent(count.rate)} ({count.leaked}/{count.mentions})"


def _sources(counts: Counter[str] | None) -> str:
    return f" ({', '.join(f'{source} {n}' for source, n in counts.most_common())} characters)" if counts else ""


def _leak_row(name: str, count: LeakCount) -> str:
    return f"| {name} | {count.mentions} | {count.leaked} | {count.partial} | {percent(count.rate)} |"


def _token_cells(row: dict[str, Any] | None) -> str:
    if row is None:
        return " – | – | – |"
    return f" {_num(row['precision'])} | {_num(row['recall'])} | {_num(row['f1'])} |"


def _format_leak(m: LeakedMention) -> str:
    flat = [" ".join(s.split()) for s in (m.left, m.text, m.right)]
    kind = f"partial, survived {m.survived!r}" if m.partial else "full"
    return f"- {m.doc_id} [{m.start}:{m.end}] {m.label} ({m.tier1}, {kind}): …{flat[0]}⟦{flat[1]}⟧{flat[2]}…"
