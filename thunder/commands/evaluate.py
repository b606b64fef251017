"""``thunder evaluate``: leak rate, over-redaction and the paper's token metrics of a model on annotated data."""

from __future__ import annotations

import datetime
import json as jsonlib
from pathlib import Path
from typing import Literal

import thunder
from thunder.evaluate import EvaluationReport, _taxonomy_of, evaluate, load_deidentifier, load_documents
from thunder.taxonomy import Taxonomy


def evaluate_command(
    model: str | None = None,
    data: str | None = None,
    seed: int = 0,
    mention_dirs: list[str] | None = None,
    taxonomy: str | None = None,
    alias_files: list[str] | None = None,
    recognizers_only: bool = False,
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
    device: str | None = None,
    batch_size: int = 8,
    threshold: float = 0.5,
) -> EvaluationReport:
    """Score a de-identification model (or the recognizers alone) on documents with gold spans.

    Prints Markdown tables: binary and micro token P/R/F1, leak rates (all, direct/quasi, per category,
    per direct label) and over-redaction.

    Args:
        model: exported model directory or ``.ckpt`` (``Deidentifier.from_pretrained``).
        data: directory of annotated judgments (filled in with ``--seed``) or JSONL of
            ``{"text", "spans": [[start, end, label], ...], "id"}``. Default: the packaged demo corpus.
        seed: synthesis seed for annotated input (one fixed filling, epoch 0).
        mention_dirs: mention list directories for synthesis (default: the packaged demo lists).
        taxonomy: taxonomy file (default: the model's, else the packaged one).
        alias_files: extra ``{raw tag: label}`` files, e.g. the corpus's ``tag_aliases.json`` (as in training).
        recognizers_only: the no-model baseline: pattern recognizers alone.
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
        device: torch device for the model (``cuda``, ``cpu``; default: where it loads).
        batch_size: windows per forward pass, and documents per pipeline call.
        threshold: a token is an identifier when the model's 1 - P(O) exceeds this.
    """
    if (model is None) == (not recognizers_only):
        raise ValueError("give exactly one of --model DIR_OR_CKPT and --recognizers_only true")
    deidentifier = load_deidentifier(model, device=device, batch_size=batch_size, threshold=threshold)
    tax = Taxonomy.load(taxonomy) if taxonomy else _taxonomy_of(deidentifier) or Taxonomy.load()
    if alias_files:
        tax = tax.with_alias_files(alias_files)
    token_source = None
    if tokenizer is not None:
        from thunder.tokenizer import ThunderTokenizer

        token_source = ThunderTokenizer.from_pretrained(tokenizer)
    if data is None:
        from thunder.data import DEMO_CORPUS

        data = str(DEMO_CORPUS)
    documents = load_documents(
        data,
        tax,
        seed=seed,
        mention_dirs=mention_dirs,
        split=split,
        split_fractions=split_fractions,
        split_seed=split_seed,
        limit=limit,
    )
    report = evaluate(
        deidentifier,
        documents,
        taxonomy=tax,
        tokenizer=token_source,
        granularity=granularity,
        context=context,
        batch_size=batch_size,
        progress=True,
    )
    report.meta.update(
        {
            "system": name or (model if model else "recognizers"),
            "model": model,
            "recognizers_only": recognizers_only,
            "data": data,
            "seed": seed,
            "mention_dirs": mention_dirs,
            "alias_files": alias_files,
            "taxonomy_path": taxonomy,
            "split": split,
            "split_fractions": list(split_fractions) if split else None,
            "split_seed": split_seed if split else None,
            "limit": limit,
            "threshold": threshold if model else None,
            "thunder_version": thunder.__version__,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }
    )
    print(report.format(show_leaks=show_leaks))
    if json:
        Path(json).parent.mkdir(parents=True, exist_ok=True)
        Path(json).write_text(jsonlib.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return report
