"""Token metrics on hand-made tensors with known precision/recall/F1."""

from __future__ import annotations

import pytest
import torch

from thunder.model.metrics import TokenMetrics, format_table

TAGS = ["O", "I-A", "I-B"]
#         O  A  A  B  O  ignored
GOLD = [[0, 1, 1, 2, 0, -100]]
PRED = [[0, 1, 2, 2, 1, 1]]


def scores(metric: TokenMetrics) -> dict[str, float]:
    return {k: v.item() for k, v in metric.compute().items()}


def test_binary_and_micro_scores_match_hand_counts() -> None:
    metric = TokenMetrics(TAGS)
    metric.update(torch.tensor(PRED), torch.tensor(GOLD))
    result = scores(metric)
    # binary: tokens 1-3 found (TP 3), token 4 over-redacted (FP 1), nothing missed
    assert result["binary_precision"] == pytest.approx(3 / 4)
    assert result["binary_recall"] == pytest.approx(1.0)
    assert result["binary_f1"] == pytest.approx(6 / 7)
    # micro over A/B: tokens 1 and 3 right (TP 2); token 2 wrong type (FP and FN); token 4 FP
    assert result["micro_precision"] == pytest.approx(2 / 4)
    assert result["micro_recall"] == pytest.approx(2 / 3)
    assert result["micro_f1"] == pytest.approx(4 / 7)


def test_per_type_table_and_bio_tags_merge_into_types() -> None:
    metric = TokenMetrics(TAGS)
    metric.update(torch.tensor(PRED), torch.tensor(GOLD))
    rows = {row["type"]: row for row in metric.table()}
    assert rows["A"]["support"] == 2 and rows["A"]["precision"] == pytest.approx(0.5)
    assert rows["A"]["recall"] == pytest.approx(0.5)
    assert rows["B"]["precision"] == pytest.approx(0.5) and rows["B"]["recall"] == pytest.approx(1.0)
    assert [row["type"] for row in metric.table()] == ["A", "B"]  # most support first
    assert "| A | 2 | 0.5000 | 0.5000 | 0.5000 |" in format_table(metric.table())

    bio = TokenMetrics(["O", "B-X", "I-X"])
    bio.update(torch.tensor([2, 2]), torch.tensor([1, 2]))  # B-X predicted as I-X: wrong tag, right type
    assert scores(bio)["micro_precision"] == pytest.approx(0.5)
    assert bio.table()[0]["f1"] == pytest.approx(1.0)


def test_groups_logits_accumulation_and_reset() -> None:
    metric = TokenMetrics(TAGS, groups=["O", "people", "people"])
    logits = torch.nn.functional.one_hot(torch.tensor(PRED).clamp(min=0), 3).float()
    metric.update(logits[:, :3], torch.tensor(GOLD)[:, :3])
    metric.update(logits[:, 3:], torch.tensor(GOLD)[:, 3:])
    assert scores(metric)["micro_f1"] == pytest.approx(4 / 7)
    assert metric.table() == [{"type": "people", "support": 3, "precision": 0.75, "recall": 1.0, "f1": 6 / 7}]
    metric.reset()
    metric.update(torch.tensor([0, 0]), torch.tensor([0, -100]))  # no entities at all: zeros, not NaN
    assert scores(metric) == {k: 0.0 for k in scores(metric)}


def test_bad_input_is_refused() -> None:
    metric = TokenMetrics(TAGS)
    with pytest.raises(ValueError, match="shape"):
        metric.update(torch.tensor([0, 1]), torch.tensor([0]))
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        metric.update(torch.tensor([3]), torch.tensor([0]))
    with pytest.raises(ValueError, match="groups"):
        TokenMetrics(TAGS, groups=["O"])
