"""Calibrate the triage rule (thunder.deid.triage) on the validation split: the model runs once, then every rule of a grid
triages the same outputs and is scored as ``thunder evaluate`` scores it (share of the leaking documents in the
riskiest 20%, share of the leaked mentions a possible miss covers, share of the characters marked). The test split is
refused: the rule is never tuned on it.

    .venv/bin/python tools/triage_sweep.py --model CKPT [--config configs/small.yaml] [--split val]
        [--grid '{"near_margin": [3, 4.6, 6], "near_power": [0.5, 0.9, 2]}'] [--limit N] [--cache FILE] [--signals]
        [--threshold T]

``--cache FILE`` keeps the model's token outputs (``tools/prediction_cache.py``: JSON, with the model's path and
threshold and each document's text hash) so that later sweeps of the same model and documents skip the model; a cache
of another model or other documents is refused.
``--signals`` also scores other document-level signals than the risk, alone and combined by a logistic regression
(5-fold cross-validated on the split, so that its figure is not fitted to the documents it ranks).
``--fit`` fits the risk's weights (``near_weight``, ``near_power``, ``cut_word_weight``, ``part_weight``,
``unmarked_rate``) to the split's leaking documents by maximum likelihood, the marks those of the grid's first rule (a
kind of mark seen fewer than 10 times keeps its weight), and prints the fitted rule with its Brier score and curve
beside the first rule's: the defaults of :class:`~thunder.deid.triage.TriageRule` come from here.
``--marks`` asks whether the marks of the grid's first rule could be told apart: a logistic regression over each
mark's kind, score, Mecab-ko reading and surroundings (:func:`mark_features`), 5-fold cross-validated by document,
and per cut-off of its probability the marks kept, the share on a leak and the leaked mentions they still cover.

The documents are ``thunder evaluate --split val --mentions unseen``'s: the recipe stored with the model, or the
one of ``--config`` (as ``thunder evaluate --config``); the first row of the table is the grid's first rule.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
from prediction_cache import cached_predictions  # tools/prediction_cache.py

from thunder.commands.evaluate import RecipeOptions
from thunder.deid.pipeline import PipelineOptions
from thunder.deid.triage import REASONS, Triage, TriageRule
from thunder.evaluation.evaluate import evaluate
from thunder.evaluation.gold import load_documents
from thunder.language.morphemes import PARTS_OF_SPEECH, word_analysis


MIN_MARKS = 10  # the fewest marks of a kind whose weight --fit fits


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
    parser.add_argument("--fit", action="store_true", help="fit the risk's weights to the split's leaking documents")
    parser.add_argument("--marks", action="store_true", help="score a cross-validated classifier of the marks")
    parser.add_argument("--max-length", type=int, help="window length in tokens (default: the model's training windows)")
    parser.add_argument("--stride", type=int, help="tokens shared by consecutive windows (default: the model's)")
    parser.add_argument("--threshold", type=float, help="the operating point's threshold (default: the model's)")
    args = parser.parse_args()
    grid = json.loads(args.grid)
    deidentifier = PipelineOptions(model=args.model, max_length=args.max_length, stride=args.stride,
                                   threshold=args.threshold).build()
    recipe, _ = RecipeOptions(config=args.config, generators={}).recipe(args.model)
    taxonomy = deidentifier.taxonomy
    if recipe.alias_files:
        taxonomy = taxonomy.with_alias_files(recipe.alias_files)
    documents = list(load_documents(recipe, taxonomy, split=args.split, mentions="unseen", limit=args.limit))
    key = {"model": args.model, "threshold": deidentifier.operating_point.threshold,
           "windows": deidentifier.windowing.to_dict()}  # fmt: skip
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
    first = TriageRule(**dict(zip(grid, next(itertools.product(*grid.values())))))
    if args.signals:
        _signals(Triage(deidentifier, first), documents, outputs, taxonomy)
    if args.fit:
        _fit(Triage(deidentifier, first), documents, outputs, taxonomy)
    if args.marks:
        _marks(Triage(deidentifier, first), documents, outputs, taxonomy)


def _fit(triage: Triage, documents: list, outputs: dict, taxonomy) -> None:
    """Fit the risk's weights to the documents' leaks (:func:`fit_rule`) and print both rules side by side."""
    report = evaluate(_Replay(triage, outputs), documents, taxonomy=taxonomy)
    leaking = {leak.doc_id for leak in report.leaked}
    threshold = triage.deidentifier.operating_point.threshold
    rows = []
    for doc in documents:
        marks = triage.triage(doc.text, *outputs[doc.text]).suggestions
        rows.append((len(doc.text), doc.doc_id in leaking,
                     [(m.reason, min(1.0, (m.model_score or 0) / threshold)) for m in marks]))  # fmt: skip
    fitted, counts = fit_rule(triage.rule, rows)
    print(f"\nmarks: {counts}; the weight of a kind of fewer than {MIN_MARKS} marks is not fitted")
    print(f"\n| rule ({len(documents)} documents, {len(leaking)} leaking) | near_weight | near_power | cut_word_weight "
          "| part_weight | unmarked_rate | Brier score | mean risk | leaking documents in the riskiest 20% |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, candidate in (("first", triage.rule), ("fitted", fitted)):
        curve = evaluate(_Replay(Triage(triage.deidentifier, candidate), outputs), documents, taxonomy=taxonomy).triage
        top = next(row for row in curve.rows if row["share"] == 0.2)
        c, share = curve.calibration, curve.leaking_documents / curve.documents
        print(f"| {name} | {candidate.near_weight} | {candidate.near_power} | {candidate.cut_word_weight} | "
              f"{candidate.part_weight} | {candidate.unmarked_rate} | {c['brier']:.4f} (share: "
              f"{c['brier_of_the_share']:.4f}) | {c['mean_risk']:.3f} (leaking: {share:.3f}) | "
              f"{top['leaking_documents']}/{curve.leaking_documents} |", flush=True)  # fmt: skip


def fit_rule(rule: TriageRule, rows: list[tuple[int, bool, list[tuple[str, float]]]],
             steps: int = 3000) -> tuple[TriageRule, dict[str, int]]:  # fmt: skip
    """``rule`` with the risk's weights that make the documents' leaks most likely, and the marks of each kind.

    ``rows``: per document its characters, whether it leaks, and its marks as ``(reason, score / threshold)``. The
    risk is the rule's (:mod:`thunder.deid.triage`); the weights are fitted by Adam over unconstrained parameters
    (a weight through a sigmoid, the power and the rate through a softplus); a kind of mark seen fewer than
    :data:`MIN_MARKS` times keeps its weight."""
    import torch

    reasons = list(REASONS)
    chars = torch.tensor([c for c, _, _ in rows], dtype=torch.float64) / 10_000
    leaks = torch.tensor([y for _, y, _ in rows], dtype=torch.float64)
    owner = torch.tensor([i for i, (_, _, marks) in enumerate(rows) for _ in marks], dtype=torch.long)
    kind = torch.tensor([reasons.index(r) for _, _, marks in rows for r, _ in marks], dtype=torch.long)
    score = torch.tensor([x for _, _, marks in rows for _, x in marks], dtype=torch.float64).clamp_min(1e-6)
    counts = torch.bincount(kind, minlength=len(reasons))
    start = torch.logit(torch.tensor([rule.near_weight, rule.cut_word_weight, rule.part_weight],
                                     dtype=torch.float64).clamp(0.01, 0.99))  # fmt: skip
    fitted_kinds = counts >= MIN_MARKS
    weights = start.clone().requires_grad_()
    power = torch.tensor(math.log(math.expm1(max(rule.near_power, 0.05))), dtype=torch.float64, requires_grad=True)
    rate = torch.tensor(math.log(math.expm1(max(rule.unmarked_rate, 0.01))), dtype=torch.float64, requires_grad=True)

    def parts():
        w = torch.sigmoid(torch.where(fitted_kinds, weights, start))
        p, r = torch.nn.functional.softplus(power), torch.nn.functional.softplus(rate)
        near = kind == reasons.index("near_threshold")
        return w, p, r, w[kind] * torch.where(near, score**p, torch.ones_like(score))

    def loss():
        _, _, r, mark = parts()
        clean = -r * chars + torch.zeros_like(chars).index_add(0, owner, torch.log1p(-mark.clamp(max=1 - 1e-9)))
        return -(leaks * torch.log((-torch.expm1(clean)).clamp_min(1e-12)) + (1 - leaks) * clean).mean()

    optimizer = torch.optim.Adam([weights, power, rate], lr=0.05)
    for _ in range(steps):  # a few hundred documents and marks: seconds
        optimizer.zero_grad()
        loss().backward()
        optimizer.step()
    with torch.no_grad():
        w, p, r, _ = parts()
    fitted = replace(rule, near_weight=round(float(w[0]), 3), cut_word_weight=round(float(w[1]), 3),
                     part_weight=round(float(w[2]), 3), near_power=round(float(p), 3), unmarked_rate=round(float(r), 3))
    return fitted, dict(zip(reasons, counts.tolist()))


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


# Mecab-ko readings of ordinary words: every part of speech but names, foreign letters, numbers and unknown words
_COMMON_TAGS = PARTS_OF_SPEECH - {"NNP", "NP", "NR", "SL", "SH", "SN", "UNKNOWN"}
MARK_FEATURES = ("near the threshold", "rest of a cut word", "log-odds of the score", "a proper noun (NNP)",
                 "unknown, foreign or a number", "only common words", "only digits", "touches a replacement",
                 "within 12 characters of one", "quoted", "log of its length", "several morphemes",
                 "before 층/호/동/번")  # fmt: skip


def mark_features(text: str, mark, replaced_spans) -> list[float]:
    """What a mark looks like (:data:`MARK_FEATURES`): its kind and score, Mecab-ko's reading of its text, how near a
    replaced span it sits, quotes around it, its length, a unit after it."""
    tags = [part for _, tag, *_ in word_analysis(mark.text) for part in tag.split("+")]
    score = min(max(mark.model_score if mark.model_score is not None else 0.5, 1e-4), 1 - 1e-4)
    gap = min([abs(mark.start - s.end) for s in replaced_spans if s.end <= mark.start]
              + [abs(s.start - mark.end) for s in replaced_spans if s.start >= mark.end] + [99])  # fmt: skip
    quotes = "'\"‘’“”"
    near = mark.reason == "near_threshold"
    return [near, mark.reason == "cut_word", near * math.log(score / (1 - score)), "NNP" in tags,
            any(t in ("UNKNOWN", "SL", "SH", "SN", "NR") for t in tags), all(t in _COMMON_TAGS for t in tags),
            mark.text.isdigit(), gap <= 1, gap <= 12,
            text[mark.start - 1 : mark.start] in quotes or text[mark.end : mark.end + 1] in quotes,
            math.log(len(mark.text)), len(tags) > 1, text[mark.end : mark.end + 1] in ("층", "호", "동", "번")]  # fmt: skip


def _marks(triage: Triage, documents: list, outputs: dict, taxonomy, folds: int = 5) -> None:
    """Print what a classifier of the marks, cross-validated by document, keeps per cut-off of its probability."""
    report = evaluate(_Replay(triage, outputs), documents, taxonomy=taxonomy)
    leaked: dict[str, list[tuple[int, int]]] = {}
    for leak in report.leaked:
        leaked.setdefault(leak.doc_id, []).append((leak.start, leak.end))
    rows, labels, fold, covers = [], [], [], []
    order = np.random.default_rng(0).permutation(len(documents))
    for position, index in enumerate(order):
        doc = documents[index]
        prediction, result = outputs[doc.text]
        for mark in triage.triage(doc.text, prediction, result).suggestions:
            hit = {(doc.doc_id, s) for s, e in leaked.get(doc.doc_id, []) if mark.start < e and s < mark.end}
            rows.append(mark_features(doc.text, mark, result.spans))
            labels.append(bool(hit))
            fold.append(position % folds)
            covers.append(hit)
    x, y, fold = np.array(rows, dtype=float), np.array(labels, dtype=float), np.array(fold)
    scores = np.zeros(len(y))
    for k in range(folds):
        scores[fold == k] = 1 / (1 + np.exp(-_design(x[fold == k]) @ _logistic(_design(x[fold != k]), y[fold != k])))
    weights = _logistic(_design(x), y)
    print(f"\nmarks: {len(y)}, {int(y.sum())} on a leak; {len(report.leaked)} leaked mentions; weights fitted on all: "
          + ", ".join(f"{name} {w:+.2f}" for name, w in zip(("intercept",) + MARK_FEATURES, weights)))  # fmt: skip
    print("\n| kept when the classifier (5-fold) gives at least | marks | on a leak | leaked mentions covered |")
    print("|---|---|---|---|")
    for cut in (0.0, 0.04, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25):
        kept = scores >= cut
        covered = set().union(*(c for c, k in zip(covers, kept) if k))
        print(f"| {cut} | {int(kept.sum())} | {y[kept].mean() if kept.any() else 0:.1%} | "
              f"{len(covered) / max(1, len(report.leaked)):.1%} ({len(covered)}/{len(report.leaked)}) |")


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
