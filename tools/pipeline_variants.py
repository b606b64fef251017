"""Evaluate several pipeline options on one model run: the model's token predictions are computed once (and cached),
then every variant's spans, propagation and replacement are scored as ``thunder evaluate`` scores them.

Variants are pipeline options (:class:`thunder.deid.pipeline.PipelineOptions`) and publication policy options
(:class:`thunder.deid.policy.PublicationPolicy`) by name; those that change the model's forward pass (``threshold``,
``max_length``, ``stride``) are the same for all. Documents are loaded as ``thunder evaluate`` loads them, from the
model's stored recipe (or ``--config``'s), ``--data`` replacing its corpus:

    PYTHONPATH=. python tools/pipeline_variants.py --model runs/small/finetune/checkpoints/last.ckpt \\
        --data thunder/resources/judgments/annotated --cache /tmp/judgments.json \\
        --variants '{"layer off": {"legal_text": false, "propagate_threshold": 0, "genre_words": false},
                     "default": {}}'
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from prediction_cache import cached_predictions  # tools/prediction_cache.py

from thunder.commands.evaluate import RecipeOptions
from thunder.deid.pipeline import Deidentifier, PipelineOptions
from thunder.deid.policy import PublicationPolicy
from thunder.evaluation.evaluate import evaluate
from thunder.evaluation.gold import load_documents
from thunder.evaluation.report import EvaluationReport, percent
from thunder.identifiers import CATALOGUE

FORWARD = ("threshold", "max_length", "stride", "batch_size", "device", "model", "taxonomy")


def build(options: PipelineOptions, policy: PublicationPolicy, loaded: Deidentifier) -> Deidentifier:
    """The pipeline ``options`` and ``policy`` describe around the model ``loaded`` already holds, at its windows and
    operating point (``grow_threshold`` as given)."""
    return Deidentifier(
        loaded.model, loaded.tokenizer, loaded.label_set, recognizers=options.recognizers, operator=options.operator,
        operators=options.operators, max_length=loaded.windowing.max_length, stride=loaded.windowing.stride,
        batch_size=loaded.batch_size, operating_point=loaded.operating_point.given(None, options.grow_threshold),
        runtime=loaded.runtime, policy=policy,
    )  # fmt: skip


def row(name: str, report: EvaluationReport, structured_labels: set[str]) -> str:
    tiers, sources = report.leaks_by_tier, report.replacements.by_source
    names = report.leaks_by_label.get("내국인이름")
    structured = sum(c.leaked for label, c in report.leaks_by_label.items() if label in structured_labels)
    legal = report.replacements.legal_replaced
    return (
        f"| {name} | {percent(report.leaks.rate)} ({report.leaks.leaked}) | {percent(names.rate) if names else '–'} | "
        f"{percent(tiers['quasi'].rate) if 'quasi' in tiers else '–'} | {structured} | {percent(report.over_redaction)} | "
        f"{sources['model']} / {sources['propagated']} / {sources['officials']} | {legal['statute reference']} | "
        f"{legal['procedural term']} | {legal['official name']} | {sum(legal.values())} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--config", help="a training config whose recipe fills the documents (default: the model's)")
    parser.add_argument("--data", help="a directory of annotated judgments instead of the recipe's corpus")
    parser.add_argument("--variants", required=True, help="JSON: {name: {pipeline option: value}}")
    parser.add_argument("--cache", type=Path, help="JSON file for the model's token predictions")
    parser.add_argument("--json", type=Path, help="write every variant's full report here")
    parser.add_argument("--split", choices=("train", "val", "test"))
    parser.add_argument("--mentions", choices=("seen", "unseen"), default="seen")
    parser.add_argument("--seed", type=int, help="filling seed, as thunder evaluate's (default: the recipe's)")
    parser.add_argument("--threshold", type=float, default=PipelineOptions.threshold)
    args = parser.parse_args(argv)
    variants = json.loads(args.variants)
    if any(key in FORWARD for options in variants.values() for key in options):
        raise SystemExit(f"pipeline_variants: the options {FORWARD} are shared by all variants")
    base = PipelineOptions(model=args.model, threshold=args.threshold)
    model = base.build()
    recipe, _ = RecipeOptions(config=args.config, data=args.data, seed=args.seed).recipe(args.model)
    taxonomy = model.taxonomy.with_alias_files(recipe.alias_files) if recipe.alias_files else model.taxonomy
    documents = list(load_documents(recipe, taxonomy, split=args.split, mentions=args.mentions))
    texts = [doc.text for doc in documents]
    structured = {label.name for name in CATALOGUE for label in taxonomy.filled_by(name)}
    key = {"model": args.model, "threshold": model.operating_point.threshold}
    cached = dict(zip(texts, cached_predictions(model, texts, key, args.cache, model.batch_size)))
    print("| pipeline | leak all | names | quasi | structured leaked | over-redaction | model / propagated / officials"
          " chars | statute refs replaced | procedural terms replaced | officials' names replaced"
          " | legal text replaced |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    reports = {}
    policy_names = {f.name for f in dataclasses.fields(PublicationPolicy)}
    for name, options in variants.items():
        policy = PublicationPolicy(**{k: v for k, v in options.items() if k in policy_names})
        pipeline = dataclasses.replace(base, **{k: v for k, v in options.items() if k not in policy_names})
        variant = build(pipeline, policy, model)
        report = evaluate(lambda text: variant.finish(text, cached[text]), documents, taxonomy=taxonomy,
                          tokenizer=model.tokenizer, granularity=model.label_set.granularity)  # fmt: skip
        reports[name] = report.to_dict()
        print(row(name, report, structured), flush=True)
    if args.json:
        args.json.write_text(json.dumps(reports, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
