"""Calibrate the triage rule (thunder.triage) on the validation split: the model runs once, then every rule of a grid
triages the same outputs and is scored as ``thunder evaluate`` scores it (share of the leaking documents in the
riskiest 20%, share of the leaked mentions a possible miss covers, share of the characters marked). The test split is
refused: the rule is never tuned on it.

    .venv/bin/python tools/triage_sweep.py --model CKPT [--config configs/small.yaml] [--split val]
        [--grid '{"near_margin": [3, 4.6, 6], "near_power": [0.5, 0.9, 2]}'] [--limit N]

The documents are ``thunder evaluate --split val --mentions unseen``'s: the recipe stored with the model, or the
one of ``--config`` (as ``thunder evaluate --config``); the first row of the table is the grid's first rule.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time

from thunder.commands.evaluate import RecipeOptions
from thunder.deid import PipelineOptions
from thunder.evaluate import evaluate
from thunder.gold import load_documents
from thunder.triage import Triage, TriageRule


class _Replay:
    """Triages the de-identifier's stored outputs with one rule (what :class:`~thunder.triage.Triage` would give)."""

    def __init__(self, triage: Triage, outputs: dict) -> None:
        self.triage, self.outputs = triage, outputs
        self.tokenizer, self.label_set = triage.deidentifier.tokenizer, triage.deidentifier.label_set

    def deidentify_batch(self, texts: list[str]) -> list:
        return [self.triage.triage(text, *self.outputs[text]) for text in texts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--config", default=None, help="a training config whose data: is the recipe")
    parser.add_argument("--split", choices=["train", "val"], default="val")
    parser.add_argument("--grid", default='{"near_margin": [3, 4.6, 6], "near_power": [0.5, 0.9, 2]}',
                        help="JSON: TriageRule field -> values; every combination is scored")  # fmt: skip
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    grid = json.loads(args.grid)
    deidentifier = PipelineOptions(model=args.model).build()
    recipe, _ = RecipeOptions(config=args.config, generators={}).recipe(args.model)
    taxonomy = deidentifier.taxonomy
    if recipe.alias_files:
        taxonomy = taxonomy.with_alias_files(recipe.alias_files)
    documents = list(load_documents(recipe, taxonomy, split=args.split, mentions="unseen", limit=args.limit))
    started, outputs = time.perf_counter(), {}
    for first in range(0, len(documents), 8):
        texts = [d.text for d in documents[first : first + 8]]
        for text, prediction in zip(texts, deidentifier.predict_tokens(texts)):
            outputs[text] = (prediction, deidentifier.finish(text, prediction))
        print(f"model: {len(outputs)}/{len(documents)} documents, {time.perf_counter() - started:.0f} s", flush=True)
    print("| rule | leaking documents in the riskiest 20% | leaked mentions marked | characters marked | marks |")
    print("|---|---|---|---|---|")
    for values in itertools.product(*grid.values()):
        options = dict(zip(grid, values))
        curve = evaluate(_Replay(Triage(deidentifier, TriageRule(**options)), outputs), documents,
                         taxonomy=taxonomy).triage  # fmt: skip
        top = next(row for row in curve.rows if row["share"] == 0.2)
        print(f"| {json.dumps(options)} | {top['leaking_documents'] / max(1, curve.leaking_documents):.1%} "
              f"({top['leaking_documents']}/{curve.leaking_documents}) | {curve.mark_recall or 0:.1%} | "
              f"{curve.marked_share or 0:.2%} | {curve.marks} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
