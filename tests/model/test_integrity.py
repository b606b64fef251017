"""A model is what it claims (issue 57): fingerprints, recorded self-test answers and what they let through."""

from __future__ import annotations

import copy

import pytest
import torch
from helpers import build_tiny_model, small_tokenizer

from thunder.model import integrity
from thunder.model.decoding import OperatingPoint
from thunder.model.inference import TorchRuntime
from thunder.model.loader import tokenizer_fingerprint
from thunder.taxonomy import LabelSet, Taxonomy


@pytest.fixture(scope="module")
def parts():
    tokenizer = small_tokenizer()
    label_set = LabelSet(Taxonomy.load(), "label", "IO")
    return build_tiny_model(tokenizer, label_set), tokenizer, label_set


def test_the_fingerprint_covers_every_part(parts) -> None:
    model, tokenizer, label_set = parts
    state, point = model.state_dict(), OperatingPoint().to_dict()
    printed = tokenizer_fingerprint(tokenizer)
    base = integrity.fingerprint(state, point, label_set.to_dict(), printed)
    assert base == integrity.fingerprint(copy.deepcopy(state), dict(point), label_set.to_dict(), dict(printed))
    flipped = {**state, "classifier.bias": state["classifier.bias"].clone()}
    flipped["classifier.bias"][3] = torch.nextafter(flipped["classifier.bias"][3], torch.tensor(1.0))  # one bit
    renamed = {("x." + k if k == "classifier.bias" else k): v for k, v in state.items()}
    others = [
        integrity.fingerprint(flipped, point, label_set.to_dict(), printed),
        integrity.fingerprint(renamed, point, label_set.to_dict(), printed),
        integrity.fingerprint({k: v.half() for k, v in state.items()}, point, label_set.to_dict(), printed),
        integrity.fingerprint(state, {**point, "threshold": 0.51}, label_set.to_dict(), printed),
        integrity.fingerprint(state, point, LabelSet(Taxonomy.load(), "category", "IO").to_dict(), printed),
        integrity.fingerprint(state, point, label_set.to_dict(), {**printed, "sha256": "0" * 64}),
    ]
    assert len({base, *others}) == 1 + len(others)


def test_recorded_answers_tolerate_rounding_not_changes(parts) -> None:
    model, tokenizer, _ = parts
    point = OperatingPoint()
    recorded = integrity.self_test(TorchRuntime(model), tokenizer, point)
    integrity.check_self_test(recorded, recorded, integrity.SCORE_TOLERANCE, "m")
    nudged = copy.deepcopy(recorded)
    nudged["scores"][0][0] += integrity.SCORE_TOLERANCE / 2  # GPU-written, CPU-read: within the tolerance
    integrity.check_self_test(recorded, nudged, integrity.SCORE_TOLERANCE, "m")
    moved = copy.deepcopy(recorded)
    moved["scores"][1][2] -= 3 * integrity.SCORE_TOLERANCE
    with pytest.raises(integrity.IntegrityError, match=r"differently from when it was written \(1 of \d+ tokens\)"):
        integrity.check_self_test(recorded, moved, integrity.SCORE_TOLERANCE, "m")
    flipped = copy.deepcopy(recorded)
    flipped["tags"][0][0] = 0  # a token no longer an identifier, its score far from the threshold
    with pytest.raises(integrity.IntegrityError, match="differently"):
        integrity.check_self_test(recorded, flipped, integrity.SCORE_TOLERANCE, "m")
    with pytest.raises(integrity.IntegrityError, match="answered at the operating point"):
        integrity.check_self_test(recorded, integrity.self_test(TorchRuntime(model), tokenizer, OperatingPoint(0.9)),
                                  integrity.SCORE_TOLERANCE, "m")  # fmt: skip
    with pytest.warns(UserWarning, match="no self-test answers recorded"):
        integrity.check_self_test(None, recorded, integrity.SCORE_TOLERANCE, "m")


def test_a_switched_off_model_finds_no_self_test_identifier(parts) -> None:
    model, tokenizer, _ = parts
    total = sum(len(s["mentions"]) for s in integrity.sentences())
    answers = integrity.self_test(TorchRuntime(model), tokenizer, OperatingPoint())
    assert integrity.detection_note(answers).startswith(f"finds {total} of the {total}")  # random: tags everything
    off = copy.deepcopy(model)
    with torch.no_grad():
        off.classifier.bias[0] = 1e30
    answers = integrity.self_test(TorchRuntime(off), tokenizer, OperatingPoint())
    assert integrity.detection_note(answers).startswith(f"finds 0 of the {total} identifiers") and "misses" in (
        integrity.detection_note(answers)
    )


def test_non_finite_weights_are_named() -> None:
    state = {"a": torch.zeros(2), "b.weight": torch.tensor([1.0, float("inf")]), "ids": torch.tensor([1, 2])}
    with pytest.raises(integrity.IntegrityError, match="b.weight holds non-finite"):
        integrity.check_finite(state, "m")
    integrity.check_finite({"a": torch.zeros(2), "ids": torch.tensor([1, 2])}, "m")


def test_the_self_test_sentences_hold_their_mentions() -> None:
    for sentence in integrity.sentences():
        assert sentence["mentions"] and all(m in sentence["text"] for m in sentence["mentions"])
