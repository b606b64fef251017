"""Spans and forward work of one model at several window overlaps (``stride``): does less overlap give the same spans?

Documents are loaded as ``thunder evaluate`` loads them (the model's stored recipe, or ``--config``'s; ``--data``
replaces its corpus). For each stride: windows computed, forward seconds, leaks and over-redaction, and against the
first stride the judgments whose spans differ and the tokens whose tag differs:

    PYTHONPATH=. python tools/window_overlap.py --model runs/small/finetune/checkpoints/last.ckpt \\
        --data thunder/resources/judgments/annotated --strides 128 64 32
"""

from __future__ import annotations

import argparse
import sys
import time

from thunder.commands.evaluate import RecipeOptions
from thunder.deid.pipeline import PipelineOptions
from thunder.evaluation.evaluate import evaluate
from thunder.evaluation.gold import load_documents
from thunder.evaluation.report import percent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--config", help="a training config whose recipe fills the documents (default: the model's)")
    parser.add_argument("--data", help="a directory of annotated judgments instead of the recipe's corpus")
    parser.add_argument("--split", choices=("train", "val", "test"))
    parser.add_argument("--mentions", choices=("seen", "unseen"), default="seen")
    parser.add_argument("--strides", type=int, nargs="+", default=[128, 64, 32], help="the first is the reference")
    args = parser.parse_args(argv)
    recipe, _ = RecipeOptions(config=args.config, data=args.data).recipe(args.model)
    first = PipelineOptions(model=args.model, stride=args.strides[0]).build()
    taxonomy = first.taxonomy.with_alias_files(recipe.alias_files) if recipe.alias_files else first.taxonomy
    documents = list(load_documents(recipe, taxonomy, split=args.split, mentions=args.mentions))
    texts = [doc.text for doc in documents]
    print("| stride | windows | forward s | judgments whose spans differ | tokens whose tag differs | leaked mentions"
          " | over-redaction |\n|---|---|---|---|---|---|---|")
    reference = None
    for stride in args.strides:
        deid = first if stride == args.strides[0] else PipelineOptions(model=args.model, stride=stride).build()
        windows = len(deid.tokenizer.encode_windows(texts, deid.windowing.max_length, stride))
        started = time.perf_counter()
        predictions = [p for first in range(0, len(texts), deid.batch_size)
                       for p in deid.predict_tokens(texts[first : first + deid.batch_size])]  # fmt: skip
        forward = time.perf_counter() - started
        results = dict(zip(texts, (deid.finish(text, p) for text, p in zip(texts, predictions))))
        report = evaluate(results.__getitem__, documents, taxonomy=taxonomy, tokenizer=deid.tokenizer,
                          granularity=deid.label_set.granularity)  # fmt: skip
        spans = [sorted((s.start, s.end, s.label) for s in results[text].spans) for text in texts]
        if reference is None:
            reference, differ = (predictions, spans), "– | –"
        else:
            docs = sum(a != b for a, b in zip(spans, reference[1]))
            tags = sum(x != y for p, q in zip(predictions, reference[0]) for x, y in zip(p.tags, q.tags))
            total = sum(len(p.tags) for p in predictions)
            differ = f"{docs} of {len(texts)} | {tags} ({percent(tags / total)})"
        print(f"| {stride} | {windows} | {forward:.0f} | {differ} | {report.leaks.leaked} of {report.leaks.mentions} |"
              f" {percent(report.over_redaction)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
