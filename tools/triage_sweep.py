"""Calibrate the triage rule (thunder.deid.triage) on the validation split: the model runs once, then every rule of a grid
triages the same outputs and is scored as ``thunder evaluate`` scores it (share of the leaking documents in the
riskiest 20%, share of the leaked mentions a possible miss covers, share of the characters marked). The test split is
refused: the rule is never tuned on it.

    .venv/bin/python tools/triage_sweep.py --model CKPT [--config configs/small.yaml] [--split val]
        [--grid '{"near_margin": [3, 4.6, 6], "near_power": [0.5, 0.9, 2]}'] [--limit N] [--cache FILE] [--signals]

``--cache FILE`` keeps the model's token outputs (``tools/prediction_cache.py``: JSON, with the model's path and
threshold and each document's text hash) so that later sweeps of the same model and documents skip the model; a cache
of another model or other documents is refused.
``--signals`` also scores other document-level signals than the risk, alone and combined by a logistic regression
(5-fold cross-validated on the split, so that its figure is not fitted to the documents it ranks).

The documents are ``thunder evaluate --split val --mentions unseen``'s: the recipe stored with the model, or the
one of ``--config`` (as ``thunder evaluate --config``); the first row of the table is the grid's first rule.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
from prediction_cache import cached_predictions  # tools/prediction_cache.py

from thunder.commands.evaluate import RecipeOptions
from thunder.deid.pipeline import PipelineOptions
from thunder.deid.triage import Triage, TriageRule
from thunder.evaluation.evaluate import evaluate
from thunder.evaluation.gold import load_documents


class _Replay:
    """Triages the de-identifier's stored outputs with one rule (what :class:`~thunder.deid.triage.Triage` would give)."""

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
    parser.add_argument("--signals", action="store_true", help="also score other document-level signals")
    parser.add_argument("--cache", type=Path, default=None, help="JSON file of the model's outputs (made if absent)")
    args = parser.parse_args()
    grid = json.loads(args.grid)
    deidentifier = PipelineOptions(model=args.model).build()
    recipe, _ = RecipeOptions(config=args.config, generators={}).recipe(args.model)
    taxonomy = deidentifier.taxonomy
    if recipe.alias_files:
        taxonomy = taxonomy.with_alias_files(recipe.alias_files)
    documents = list(load_documents(recipe, taxonomy, split=args.split, mentions="unseen", limit=args.limit))
    key = {"model": args.model, "threshold": deidentifier.operating_point.threshold}
    predictions = cached_predictions(deidentifier, [d.text for d in documents], key, args.cache)
    outputs = {d.text: (p, deidentifier.finish(d.text, p)) for d, p in zip(documents, predictions)}
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
    if args.signals:
        _signals(Triage(deidentifier, TriageRule(**dict(zip(grid, next(itertools.product(*grid.values())))))),
                 documents, outputs, taxonomy)  # fmt: skip


def _signals(triage: Triage, documents: list, outputs: dict, taxonomy) -> None:
    """Print, per document-level signal, the leaking documents among the 20% of documents it ranks highest."""
    report = evaluate(_Replay(triage, outputs), documents, taxonomy=taxonomy)
    leaking = {leak.doc_id for leak in report.leaked}
    persons = {label.category for label in taxonomy.labels.values()
               if label.subcategory in triage.rule.person_subcategories}  # fmt: skip
    threshold = triage.deidentifier.operating_point.threshold
    signals: dict[str, Callable] = {
        "risk (the rule)": lambda text, p, r, t: t.risk,
        "expected missed mentions (sum of the marks' probabilities)": lambda text, p, r, t: sum(
            m.score for m in t.suggestions),
        "identifier probability left in (sum of 1 - P(O) of the tokens left in)": lambda text, p, r, t: sum(
            score for (start, end), score in zip(p.offsets, p.scores)
            if not any(s.start < end and start < s.end for s in r.spans)),
        "tokens left in above 0.1": lambda text, p, r, t: sum(
            1 for (start, end), score in zip(p.offsets, p.scores)
            if 0.1 < score <= threshold and not any(s.start < end and start < s.end for s in r.spans)),
        "rests of cut words (marks)": lambda text, p, r, t: sum(1 for m in t.suggestions if m.reason == "cut_word"),
        "detected entities": lambda text, p, r, t: len({s.placeholder for s in r.spans}),
        "detected entities other than persons": lambda text, p, r, t: len(
            {s.placeholder for s in r.spans if s.category not in persons}),
        "detected person names of two syllables with a syllable after them": lambda text, p, r, t: sum(
            1 for s in r.spans if s.category in persons and len(s.text) == 2 and s.end < len(text)
            and "가" <= text[s.end] <= "힣"),
        "characters": lambda text, p, r, t: len(text),
    }  # fmt: skip
    rows, marked = [], 0  # marked: leaking documents with a mark on one of their leaks
    for doc in documents:
        prediction, result = outputs[doc.text]
        triaged = triage.triage(doc.text, prediction, result)
        rows.append([signal(doc.text, prediction, result, triaged) for signal in signals.values()])
        marked += any(leak.doc_id == doc.doc_id and m.start < leak.end and leak.start < m.end
                      for leak in report.leaked for m in triaged.suggestions)  # fmt: skip
    features, leaks = np.log1p(np.array(rows, dtype=float)), np.array([d.doc_id in leaking for d in documents])
    print(f"\n| document signal ({len(documents)} documents, {leaks.sum()} leaking) | leaking documents in the "
          "riskiest 20% |\n|---|---|")  # fmt: skip
    for column, name in enumerate(signals):
        print(f"| {name} | {_top(features[:, column], leaks)}/{leaks.sum()} |")
    found = []
    for shuffle in range(5):
        order, scores = np.random.default_rng(shuffle).permutation(len(documents)), np.zeros(len(documents))
        for fold in range(5):
            held = order[fold::5]
            kept = np.setdiff1d(order, held)
            scores[held] = _design(features[held]) @ _logistic(_design(features[kept]), leaks[kept])
        found.append(_top(scores, leaks))
    fitted = _top(_design(features) @ _logistic(_design(features), leaks), leaks)
    print(f"| logistic regression of all of them, log(1 + x): 5-fold cross-validated (5 shuffles) | "
          f"{np.mean(found):.1f}/{leaks.sum()} (fitted on all, ranking the same documents: {fitted}) |")
    print(f"| a perfect judge of the marks would rank first the leaking documents with a mark on a leak | "
          f"{marked}/{leaks.sum()} |")  # fmt: skip


def _top(scores: np.ndarray, leaks: np.ndarray, share: float = 0.2) -> int:
    """Leaking documents among the ``share`` of documents scored highest (ties in input order, as evaluate's)."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    return int(leaks[order[: math.ceil(share * len(order))]].sum())


def _design(features: np.ndarray) -> np.ndarray:
    return np.hstack([np.ones((len(features), 1)), features])


def _logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 50) -> np.ndarray:
    """Weights of an L2-regularised logistic regression (Newton's method; the intercept is not penalised)."""
    penalty = l2 * np.diag([0.0] + [1.0] * (x.shape[1] - 1))
    weights = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ weights))
        hessian = (x * (p * (1 - p))[:, None]).T @ x + penalty
        weights -= np.linalg.solve(hessian, x.T @ (p - y) + penalty @ weights)
    return weights


if __name__ == "__main__":
    main()
