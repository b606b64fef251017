"""``thunder evaluate``: leak rate, over-redaction and the paper's token metrics of a model on annotated data."""

from __future__ import annotations

import dataclasses
import datetime
import itertools
import json as jsonlib
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import thunder
from thunder.commands.data import config_data_section
from thunder.deid.pipeline import PipelineOptions
from thunder.deid.policy import PublicationPolicy
from thunder.deid.triage import TriageRule
from thunder.evaluation.report import EvaluationReport
from thunder.synthesis.synthesizer import SynthesizedDocument

if TYPE_CHECKING:
    from thunder.data import Recipe


@dataclass
class RecipeOptions:
    """Where the evaluation documents come from: the training recipe stored with ``--model`` (a checkpoint's data
    module state, an export's ``thunder.json``), or the one of ``config``, or the packaged demo; each other option
    given replaces that recipe's setting.

    Args:
        config: a training config (LightningCLI YAML) whose ``data.init_args`` is the recipe (instead of the model's);
            its relative paths are read from its folder.
        data: a directory of annotated judgments (instead of the recipe's corpus) or a JSONL file of
            ``{"text", "spans": [[start, end, label], ...], "id"}`` (used as it is).
        mention_dirs: mention list directories for the fillings.
        alias_files: extra ``{raw tag: label}`` files, e.g. the corpus's ``tag_aliases.json``.
        generators: per-label generators (``{label: name or {class_path, init_args}}``); ``{}``: none.
        split_fractions: train/val/test fractions of the split.
        split_seed: seed of the split and of the mention holdout.
        mention_holdout: share of every mention list training never saw (needed for ``--mentions unseen``).
        head_nouns: gold spans of filled mentions: ``inside`` covers the whole mention; ``corpus`` keeps a generic
            head noun ending it (``래미안아파트``) outside the span where the training split's annotators mostly write
            it after the placeholder (quasi labels only).
        seed: filling seed (one fixed filling, epoch 0; the recipe's seed fills as ``thunder test`` does).
    """

    GROUP: ClassVar[str] = "evaluation documents"
    ADVANCED: ClassVar[tuple[str, ...]] = ("generators", "split_fractions", "split_seed", "mention_holdout", "head_nouns")

    config: str | None = None
    data: str | None = None
    mention_dirs: list[str] | None = None
    alias_files: list[str] | None = None
    generators: dict[str, str | dict] | None = None
    split_fractions: tuple[float, float, float] | None = None
    split_seed: int | None = None
    mention_holdout: float | None = None
    head_nouns: Literal["inside", "corpus"] | None = None
    seed: int | None = None

    def recipe(self, model: str | None, verify: str | None = None) -> tuple[Recipe, str]:
        """The recipe these options give with ``model``'s stored one (read once its signature verifies with
        ``verify``, when given), its paths found; and where it comes from."""
        from thunder.data import Recipe  # Lightning and torch: imported here, not for --help
        from thunder.model.loader import Artefact

        if self.config is not None:
            init_args = config_data_section(self.config).get("init_args") or {}
            base, source = Recipe.from_dict(init_args), self.config
            bases = [Path(self.config).resolve().parent]  # as thunder fit reads it: from the config's folder
        elif (model is not None and Path(model).exists()
              and (stored := Artefact.open(model, verify).recipe()) is not None):  # fmt: skip
            base, source = Recipe.from_dict(stored), model
            bases = [*([base.root] if base.root else []), Path.cwd(), *Path(model).resolve().parents]
        else:
            base, bases = Recipe(), []
            source = "the packaged demo" + (f" ({model} stores no recipe: --config names one)" if model else "")
        given = {name: value for name, value in self._overrides().items() if value is not None}
        # replaced settings are not looked for: --data replaces the corpus and every explicit split directory, and a
        # model brings its own taxonomy
        reset = set(given) | ({"train_dirs", "val_dirs", "test_dirs"} if self.data is not None else set())
        reset |= {"taxonomy"} if model is not None else set()
        defaults = {f.name: f.default for f in dataclasses.fields(Recipe) if f.name in reset}
        located = dataclasses.replace(base, **defaults).located(bases, f"recipe of {source}")
        return dataclasses.replace(located, **given), source

    def _overrides(self) -> dict[str, Any]:
        return {
            "data_dir": self.data, "mention_dirs": self.mention_dirs, "alias_files": self.alias_files,
            "generators": self.generators, "split": self.split_fractions, "split_seed": self.split_seed,
            "mention_holdout": self.mention_holdout, "head_nouns": self.head_nouns, "seed": self.seed,
        }  # fmt: skip


def evaluate_command(
    pipeline: PipelineOptions = PipelineOptions(),
    policy: PublicationPolicy = PublicationPolicy(),
    recipe: RecipeOptions = RecipeOptions(),
    split: Literal["train", "val", "test"] | None = None,
    mentions: Literal["seen", "unseen", "both"] = "seen",
    tokenizer: str | None = None,
    granularity: Literal["label", "category", "binary"] | None = None,
    show_leaks: bool = False,
    json: str | None = None,
    limit: int | None = None,
    context: int = 30,
    name: str | None = None,
    triage: TriageRule = TriageRule(),
    allow_unverified: bool = False,
) -> EvaluationReport | dict[str, EvaluationReport]:
    """Score a de-identification model (or the recognizers alone) on documents with gold spans.

    Prints Markdown tables: binary and micro token P/R/F1, leak rates (all, direct/quasi, per category,
    per direct label), over-redaction and the triage curve (what reviewing the riskiest 5/10/20/50% of documents
    first finds, and what the possible-miss marks cover). The model, recognizers, operators, windows and threshold
    are the options of ``thunder deid``, so a custom recognizer or operator is evaluated exactly as it will run.
    The documents are the training recipe's (see the recipe options), filled as ``thunder test`` fills them.

    Args:
        policy: the publication policy, as ``thunder deid`` applies it.
        split: evaluate one split of the recipe's judgments, as training cut it (default: every judgment).
        mentions: fill the judgments with the mentions training saw (``seen``), only with those it never saw
            (``unseen``: the held-back share of every mention list and the unseen person-name family), or ``both``
            (two reports and a comparison table; ``--json`` then holds ``{"seen": ..., "unseen": ...}``).
        tokenizer: a tokenizer directory for the token metrics; default the model's tokenizer, or
            one token per non-whitespace character without a model.
        granularity: entity types for the micro metrics: label | category | binary (default: the model's).
        show_leaks: list every leaked mention with document id and context.
        json: write the full report (with per-category figures and run metadata) to this file.
        limit: evaluate only the first N documents.
        context: characters of context each side of a leaked mention.
        name: system name in the tables (default: the model path, or "recognizers").
        triage: the triage rule (--near_margin, --near_weight, --near_power, --cut_word_weight, --part_weight, ...;
            see thunder.deid.triage), as ``thunder deid --review_queue`` applies it.
        allow_unverified: evaluate a model that records no fingerprint or self-test answers (refused otherwise);
            the report says so.
    """
    pipeline = pipeline.resolved()  # the shipped model without --model; none with --recognizers_only
    if mentions not in ("seen", "unseen", "both"):
        raise ValueError(f"--mentions must be seen, unseen or both, got {mentions!r}")
    settings, source = recipe.recipe(pipeline.model, pipeline.verify)
    if mentions != "seen" and not settings.mention_holdout:
        raise ValueError(f"--mentions {mentions} needs a mention_holdout: the recipe of {source} has none"
                         " (--mention_holdout, the training data module's, e.g. 0.1)")  # fmt: skip
    if pipeline.model is None and pipeline.taxonomy is None:  # the recognizers look labels up in the recipe's
        pipeline = dataclasses.replace(pipeline, taxonomy=settings.taxonomy)
    from thunder.evaluation.evaluate import evaluate  # torch, Lightning: not for --help
    from thunder.evaluation.gold import load_documents, read_gold
    from thunder.language.release_tokenizer import load_tokenizer
    from thunder.model.integrity import unverified_allowed

    with unverified_allowed(allow_unverified):
        deidentifier = pipeline.build(policy)
    gold = recipe.data is not None and Path(recipe.data).is_file()
    if gold and split is not None:
        raise ValueError(f"--split applies to a directory of annotated judgments, not to {recipe.data}")
    print(f"thunder evaluate: {f'gold spans of {recipe.data}' if gold else f'recipe of {source}'}", file=sys.stderr)
    tax = deidentifier.taxonomy.with_alias_files(settings.alias_files) if settings.alias_files else deidentifier.taxonomy
    token_source = load_tokenizer(tokenizer) if tokenizer is not None else None
    reports: dict[str, EvaluationReport] = {}
    for part in ("seen", "unseen") if mentions == "both" else (mentions,):
        if gold:
            documents: Iterable[SynthesizedDocument] = itertools.islice(read_gold(str(recipe.data), tax), limit)
        else:
            documents = load_documents(settings, tax, split=split, mentions=part, limit=limit)
        reports[part] = evaluate(
            deidentifier, documents, taxonomy=tax, tokenizer=token_source, granularity=granularity, context=context,
            batch_size=pipeline.batch_size, progress=True, triage=triage,
        )  # fmt: skip
    model = pipeline.model
    system = name or (model if model else "recognizers")
    meta = {
        "system": system,
        "model": model,
        "recognizers_only": pipeline.recognizers_only,
        "unverified": allow_unverified and model is not None,
        "pipeline": dataclasses.asdict(pipeline),
        "data": recipe.data if gold else settings.corpus,
        "recipe": settings.to_dict(),
        "recipe_from": source,
        "seed": settings.seed,
        "mention_dirs": list(settings.mention_lists),
        "alias_files": list(settings.alias_files),
        "generators": settings.generators,
        "head_nouns": settings.head_nouns,
        "mention_holdout": settings.mention_holdout,
        "taxonomy": tax.name,
        "split": split,
        "split_fractions": list(settings.split) if split else None,
        "split_seed": settings.split_seed if split or settings.mention_holdout else None,
        "limit": limit,
        "operating_point": deidentifier.operating_point.to_dict() if model else None,  # the model's unless given
        "triage": dataclasses.asdict(triage),
        "thunder_version": thunder.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    for part, report in reports.items():
        report.meta.update({**meta, "mentions": part})
        label = f"{system} ({part} mentions)" if settings.mention_holdout else None
        print(report.format(show_leaks=show_leaks, name=label))
    if len(reports) > 1:
        header, _ = reports["seen"].summary_row("")
        print("\n".join([header, *(r.summary_row(f"{system}, {p} mentions")[1] for p, r in reports.items())]))
    if json:
        content = reports[mentions].to_dict() if len(reports) == 1 else {p: r.to_dict() for p, r in reports.items()}
        Path(json).parent.mkdir(parents=True, exist_ok=True)
        Path(json).write_text(jsonlib.dumps(content, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return reports[mentions] if len(reports) == 1 else reports
