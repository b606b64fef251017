"""``thunder evaluate``: leak rate, over-redaction and the paper's token metrics of a model on annotated data."""

from __future__ import annotations

import dataclasses
import datetime
import json as jsonlib
from pathlib import Path
from typing import Literal

import thunder
from thunder.deid import PipelineOptions
from thunder.evaluate import EvaluationReport, evaluate, load_documents


def evaluate_command(
    data: str | None = None,
    pipeline: PipelineOptions = PipelineOptions(),
    recognizers_only: bool = False,
    seed: int = 0,
    mention_dirs: list[str] | None = None,
    alias_files: list[str] | None = None,
    tokenizer: str | None = None,
    granularity: Literal["label", "category", "binary"] | None = None,
    show_leaks: bool = False,
    json: str | None = None,
    split: Literal["train", "val", "test"] | None = None,
    split_fractions: tuple[float, float, float] = (0.8, 0.1, 0.1),
    split_seed: int = 0,
    limit: int | None = None,
    context: int = 30,
    name: str | None = None,
    mentions: Literal["seen", "unseen", "both"] = "seen",
    mention_holdout: float = 0.0,
    generators: dict[str, str | dict] | None = None,
    head_nouns: Literal["inside", "corpus"] = "inside",
) -> EvaluationReport | dict[str, EvaluationReport]:
    """Score a de-identification model (or the recognizers alone) on documents with gold spans.

    Prints Markdown tables: binary and micro token P/R/F1, leak rates (all, direct/quasi, per category,
    per direct label) and over-redaction. The model, recognizers, operators, windows and threshold are the
    options of ``thunder deid``, so a custom recognizer or operator is evaluated exactly as it will run.

    Args:
        data: directory of annotated judgments (filled in with ``--seed``) or JSONL of
            ``{"text", "spans": [[start, end, label], ...], "id"}``. Default: the packaged demo corpus.
        recognizers_only: the no-model baseline: pattern recognizers alone (instead of --model).
        seed: synthesis seed for annotated input (one fixed filling, epoch 0).
        mention_dirs: mention list directories for synthesis (default: the packaged demo lists).
        alias_files: extra ``{raw tag: label}`` files, e.g. the corpus's ``tag_aliases.json`` (as in training).
        tokenizer: ThunderTokenizer directory for the token metrics; default the model's tokenizer, or
            one token per non-whitespace character without a model.
        granularity: entity types for the micro metrics: label | category | binary (default: the model's).
        show_leaks: list every leaked mention with document id and context.
        json: write the full report (with per-category figures and run metadata) to this file.
        split: evaluate one split of the annotated directory, cut as in training (``DeIdDataModule``).
        split_fractions: train/val/test fractions of that split (the training config's ``split``).
        split_seed: the training config's ``split_seed``.
        limit: evaluate only the first N documents.
        context: characters of context each side of a leaked mention.
        name: system name in the tables (default: the model path, or "recognizers").
        mentions: fill annotated judgments with the mentions training saw (``seen``), only with those it never saw
            (``unseen``: the held-back share of every mention list and the unseen person-name family), or ``both``
            (two reports and a comparison table; ``--json`` then holds ``{"seen": ..., "unseen": ...}``).
        mention_holdout: the training data module's ``mention_holdout`` (required for ``unseen``); the holdout is
            keyed by ``--split_seed`` as in training.
        generators: the training data module's ``generators`` (``{label: name or {class_path, init_args}}``).
        head_nouns: gold spans of filled mentions: ``inside`` covers the whole mention; ``corpus`` keeps a generic
            head noun ending it (``래미안아파트``) outside the span where the corpus's annotators mostly write it after
            the placeholder (quasi labels only; read from the training split).
    """
    if (pipeline.model is None) == (not recognizers_only):
        raise ValueError("give exactly one of --model DIR_OR_CKPT and --recognizers_only true")
    deidentifier = pipeline.build()
    tax = deidentifier.taxonomy
    if alias_files:
        tax = tax.with_alias_files(alias_files)
    token_source = None
    if tokenizer is not None:
        from thunder.tokenizer import ThunderTokenizer

        token_source = ThunderTokenizer.from_pretrained(tokenizer)
    if data is None:
        from thunder.data import DEMO_CORPUS

        data = str(DEMO_CORPUS)
    if mentions not in ("seen", "unseen", "both"):
        raise ValueError(f"--mentions must be seen, unseen or both, got {mentions!r}")
    if mentions != "seen" and not mention_holdout:
        raise ValueError("--mentions unseen|both needs --mention_holdout (the training data module's, e.g. 0.1)")
    reports: dict[str, EvaluationReport] = {}
    for part in ("seen", "unseen") if mentions == "both" else (mentions,):
        documents = load_documents(
            data, tax, seed=seed, mention_dirs=mention_dirs, split=split, split_fractions=split_fractions,
            split_seed=split_seed, limit=limit, mentions=part, mention_holdout=mention_holdout, generators=generators,
            head_nouns=head_nouns,
        )  # fmt: skip
        reports[part] = evaluate(
            deidentifier, documents, taxonomy=tax, tokenizer=token_source, granularity=granularity, context=context,
            batch_size=pipeline.batch_size, progress=True,
        )  # fmt: skip
    model = pipeline.model
    system = name or (model if model else "recognizers")
    meta = {
        "system": system,
        "model": model,
        "recognizers_only": recognizers_only,
        "pipeline": dataclasses.asdict(pipeline),
        "data": data,
        "seed": seed,
        "mention_dirs": mention_dirs,
        "alias_files": alias_files,
        "generators": generators,
        "head_nouns": head_nouns,
        "mention_holdout": mention_holdout,
        "taxonomy": tax.name,
        "split": split,
        "split_fractions": list(split_fractions) if split else None,
        "split_seed": split_seed if split or mention_holdout else None,
        "limit": limit,
        "threshold": pipeline.threshold if model else None,
        "thunder_version": thunder.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    for part, report in reports.items():
        report.meta.update({**meta, "mentions": part})
        print(report.format(show_leaks=show_leaks, name=f"{system} ({part} mentions)" if mention_holdout else None))
    if len(reports) > 1:
        header, _ = reports["seen"].summary_row("")
        print("\n".join([header, *(r.summary_row(f"{system}, {p} mentions")[1] for p, r in reports.items())]))
    if json:
        content = reports[mentions].to_dict() if len(reports) == 1 else {p: r.to_dict() for p, r in reports.items()}
        Path(json).parent.mkdir(parents=True, exist_ok=True)
        Path(json).write_text(jsonlib.dumps(content, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return reports[mentions] if len(reports) == 1 else reports
