"""Token-level de-identification metrics as defined in the Thunder-DeID paper (torchmetrics).

All figures come from one confusion matrix ``C[gold, pred]`` over the tag ids of a label set, counted on the
tokens whose gold tag is not ``-100`` (special tokens, padding and overlap tokens of other windows are ignored).
Tag ``outside_id`` (``"O"``, id 0 in every :class:`thunder.taxonomy.LabelSet`) means "not an identifier".

Binary token P/R/F1 (identifier vs not): a token is positive when its tag is not O.
    TP = #{gold != O and pred != O}, FP = #{gold == O and pred != O}, FN = #{gold != O and pred == O}.

Token micro P/R/F1 over labels (micro average over the entity tags, the O class excluded):
    TP = #{pred == gold != O}, FP = #{pred != O and pred != gold}, FN = #{gold != O and pred != gold}.
    A token predicted with the wrong entity tag is both a false positive (of the predicted tag) and a false
    negative (of the gold tag). This is scikit-learn's ``precision_recall_fscore_support(average="micro",
    labels=<all tags but O>)`` on the token sequences.

Per-type table: the same per entity type (``B-X`` and ``I-X`` merged into ``X``, or any grouping given as
``groups``, e.g. the tier-2 category of each tag): TP = #{gold in X and pred in X},
FP = #{pred in X and gold not in X}, FN = #{gold in X and pred not in X}.

Precision, recall and F1 are 0 where their denominator is 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor
from torchmetrics import Metric

IGNORE_INDEX = -100


def _prf(tp: Tensor, fp: Tensor, fn: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    tp, fp, fn = tp.double(), fp.double(), fn.double()
    precision = torch.where(tp + fp > 0, tp / (tp + fp).clamp(min=1), torch.zeros_like(tp))
    recall = torch.where(tp + fn > 0, tp / (tp + fn).clamp(min=1), torch.zeros_like(tp))
    f1 = torch.where(precision + recall > 0, 2 * precision * recall / (precision + recall).clamp(min=1e-12),
                     torch.zeros_like(tp))
    return precision, recall, f1


def entity_type_of(tag: str) -> str:
    """``"B-내국인이름"`` / ``"I-내국인이름"`` -> ``"내국인이름"``; other tags unchanged."""
    return tag[2:] if tag[:2] in ("B-", "I-") else tag


def scores_from_confusion(confmat: Tensor, outside_id: int = 0) -> dict[str, float]:
    """Binary and micro token precision/recall/F1 (see the module docstring) from ``confmat[gold, pred]``."""
    entity = torch.ones(confmat.shape[0], dtype=torch.bool, device=confmat.device)
    entity[outside_id] = False
    bin_tp = confmat[entity][:, entity].sum()
    bin_fp = confmat[outside_id, entity].sum()
    bin_fn = confmat[entity, outside_id].sum()
    micro_tp = confmat.diagonal()[entity].sum()
    micro_fp = confmat[:, entity].sum() - micro_tp
    micro_fn = confmat[entity, :].sum() - micro_tp
    out: dict[str, float] = {}
    for prefix, counts in (("binary", (bin_tp, bin_fp, bin_fn)), ("micro", (micro_tp, micro_fp, micro_fn))):
        p, r, f = _prf(*counts)
        out.update({f"{prefix}_precision": p.item(), f"{prefix}_recall": r.item(), f"{prefix}_f1": f.item()})
    return out


def per_type_table(confmat: Tensor, groups: Sequence[str], outside_id: int = 0) -> list[dict[str, float | int | str]]:
    """One row per group (entity type) with ``type, support, precision, recall, f1``, sorted by support."""
    names = sorted({g for i, g in enumerate(groups) if i != outside_id})
    index = {name: k for k, name in enumerate(names)}
    member = torch.zeros(len(names), confmat.shape[0], dtype=confmat.dtype, device=confmat.device)
    for i, g in enumerate(groups):
        if i != outside_id:
            member[index[g], i] = 1
    grouped = member @ confmat @ member.T  # [gold group, pred group] counts, O rows/columns dropped
    gold_total = member @ confmat.sum(dim=1)
    pred_total = member @ confmat.sum(dim=0)
    tp = grouped.diagonal()
    p, r, f = _prf(tp, pred_total - tp, gold_total - tp)
    rows = [
        {"type": name, "support": int(gold_total[k]), "precision": p[k].item(), "recall": r[k].item(),
         "f1": f[k].item()}
        for k, name in enumerate(names)
    ]
    return sorted(rows, key=lambda row: (-row["support"], row["type"]))


def format_table(rows: Sequence[dict[str, float | int | str]]) -> str:
    """Plain-text (and Markdown-compatible) table of :func:`per_type_table` rows."""
    lines = ["| type | support | precision | recall | f1 |", "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['type']} | {r['support']} | {r['precision']:.4f} | {r['recall']:.4f} | {r['f1']:.4f} |"
              for r in rows]
    return "\n".join(lines)


class TokenMetrics(Metric):
    """Accumulates ``confmat[gold, pred]`` over token tag ids; :meth:`compute` gives the paper's token metrics.

    Args:
        tags: tag names by id (``LabelSet.names``); ``tags[outside_id]`` is ``"O"``.
        groups: group name per tag id for :meth:`table` (default: the entity type, ``B-``/``I-`` stripped).
        outside_id: id of the O tag.

    ``update(preds, target)`` takes predicted tag ids (or logits with a trailing class dimension) and gold tag ids
    of the same shape; gold ``-100`` is ignored. ``compute()`` returns a dict of 0-dim tensors:
    ``binary_precision, binary_recall, binary_f1, micro_precision, micro_recall, micro_f1``.
    """

    full_state_update = False
    higher_is_better = True

    def __init__(self, tags: Sequence[str], groups: Sequence[str] | None = None, outside_id: int = 0) -> None:
        super().__init__()
        if groups is not None and len(groups) != len(tags):
            raise ValueError(f"groups has {len(groups)} entries but there are {len(tags)} tags")
        self.tags = list(tags)
        self.groups = list(groups) if groups is not None else [entity_type_of(t) for t in self.tags]
        self.outside_id = outside_id
        n = len(self.tags)
        self.add_state("confmat", default=torch.zeros(n, n, dtype=torch.long), dist_reduce_fx="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        if preds.is_floating_point() and preds.dim() == target.dim() + 1:
            preds = preds.argmax(dim=-1)
        if preds.shape != target.shape:
            raise ValueError(f"preds {tuple(preds.shape)} and target {tuple(target.shape)} differ in shape")
        keep = target != IGNORE_INDEX
        gold, pred = target[keep].long(), preds[keep].long()
        n = len(self.tags)
        if gold.numel() and (gold.min() < 0 or gold.max() >= n or pred.min() < 0 or pred.max() >= n):
            raise ValueError(f"tag ids must lie in [0, {n}) or be {IGNORE_INDEX} in the target")
        self.confmat += torch.bincount(gold * n + pred, minlength=n * n).view(n, n)

    def compute(self) -> dict[str, Tensor]:
        return {k: torch.tensor(v) for k, v in scores_from_confusion(self.confmat, self.outside_id).items()}

    def table(self) -> list[dict[str, float | int | str]]:
        """Per-group precision/recall/F1 rows (see :func:`per_type_table`)."""
        return per_type_table(self.confmat, self.groups, self.outside_id)
