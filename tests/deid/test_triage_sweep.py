"""tools/triage_sweep.py and tools/prediction_cache.py: the model's outputs cached and read back as they were, a cache
of another model or other documents refused, and the document-signal helpers ranking as ``thunder evaluate`` ranks."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from thunder.model.decoding import TokenPredictions

TOOLS = Path(__file__).resolve().parents[2] / "tools"
sys.path.insert(0, str(TOOLS))  # the tools import their shared helpers as scripts do

from prediction_cache import cached_predictions  # noqa: E402


@pytest.fixture(scope="module")
def sweep():
    spec = importlib.util.spec_from_file_location("triage_sweep", TOOLS / "triage_sweep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Model:
    """Stands in for a de-identifier's ``predict_tokens``, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def predict_tokens(self, texts):
        self.calls += 1
        return [TokenPredictions([(0, 1), (1, len(t))], [0, 1], [0.01, 0.75], [(0, len(t))], [0, 3]) for t in texts]


KEY = {"model": "m.ckpt", "threshold": 0.5}


def test_cache_gives_back_the_outputs_without_the_model(tmp_path):
    model, cache = _Model(), tmp_path / "outputs.json"
    first = cached_predictions(model, ["홍길동은", "서울 강남구"], KEY, cache)
    again = cached_predictions(model, ["홍길동은", "서울 강남구"], KEY, cache)
    assert model.calls == 1  # the second time from the cache
    assert again == first and again[1].offsets == [(0, 1), (1, 6)] and again[1].morphemes == [(0, 6)]


@pytest.mark.parametrize("key, texts", [({**KEY, "model": "other.ckpt"}, ["홍길동은", "서울 강남구"]),
                                        ({**KEY, "threshold": 0.3}, ["홍길동은", "서울 강남구"]),
                                        (KEY, ["홍길동은"])])  # fmt: skip
def test_cache_of_another_model_or_other_documents_is_refused(tmp_path, key, texts):
    cache = tmp_path / "outputs.json"
    cached_predictions(_Model(), ["홍길동은", "서울 강남구"], KEY, cache)
    with pytest.raises(SystemExit, match="outputs.json: the outputs of another model or other documents"):
        cached_predictions(_Model(), texts, key, cache)


def test_top_counts_leaking_documents_in_the_riskiest_fifth_ties_in_input_order(sweep):
    leaks = np.array([False, False, True, True, True, False, False, False, False, False])
    assert sweep._top(np.array([0.9, 0.5, 0.5, 0.1, 0, 0, 0, 0, 0, 0]), leaks) == 0  # 0.9, then the tie's first: no
    assert sweep._top(np.array([0.1, 0.2, 0.5, 0.8, 0, 0, 0, 0, 0, 0]), leaks) == 2


def test_logistic_regression_separates_what_a_feature_separates(sweep):
    x = sweep._design(np.array([[0.0], [0.1], [0.2], [1.0], [1.1], [1.2]]))
    weights = sweep._logistic(x, np.array([0, 0, 0, 1, 1, 1], dtype=float))
    assert weights[1] > 0 and sweep._top(x @ weights, np.array([0, 0, 0, 0, 0, 1], dtype=bool)) == 1


@pytest.mark.usefixtures("one_thread")
def test_fit_rule_recovers_the_weights_that_made_the_leaks(sweep):
    """Documents drawn from the risk's own model (near marks leak with 0.3 whatever their score, cut-word rests with
    0.1, 0.5 unmarked leaks per 10,000 characters): the fit finds them back; two entity parts are too few to fit."""
    from thunder.deid.triage import TriageRule

    rng, rows = np.random.default_rng(0), []
    for _ in range(1500):
        chars = int(rng.integers(1000, 5000))
        marks = [("near_threshold", float(rng.uniform(0.3, 1)))] * int(rng.integers(0, 3))
        marks += [("cut_word", 0.0)] * int(rng.integers(0, 3))
        clean = math.exp(-0.5 * chars / 10_000) * 0.7 ** sum(r == "near_threshold" for r, _ in marks) * 0.9 ** sum(
            r == "cut_word" for r, _ in marks)
        rows.append((chars, bool(rng.random() > clean), marks))
    rows[0] = (rows[0][0], rows[0][1], rows[0][2] + [("entity_part", 0.0)] * 2)
    fitted, counts = sweep.fit_rule(TriageRule(part_weight=0.3), rows, steps=800)
    assert counts["entity_part"] == 2 and fitted.part_weight == 0.3  # kept
    assert fitted.near_weight == pytest.approx(0.3, abs=0.05) and fitted.near_power < 0.3
    assert fitted.cut_word_weight == pytest.approx(0.1, abs=0.05)
    assert fitted.unmarked_rate == pytest.approx(0.5, abs=0.2)


def test_mark_features_read_the_mark_and_its_surroundings(sweep) -> None:
    from thunder.deid.pipeline import DetectedSpan
    from thunder.deid.triage import PossibleMiss

    text = "피해자 홍길동은 '해마루' 커피숍과 주차장 8층에서"
    replaced = [DetectedSpan(4, 7, "홍길동", "내국인이름", "사건관계인특정정보", "direct", "A", 0.9, "model")]
    def mark(word: str, reason: str = "near_threshold", score: float | None = 0.3) -> PossibleMiss:
        start = text.index(word)
        return PossibleMiss(start, start + len(word), word, "상호", None, None, 0.1, reason, model_score=score)
    names = sweep.MARK_FEATURES
    quoted = dict(zip(names, sweep.mark_features(text, mark("해마루"), replaced)))
    common = dict(zip(names, sweep.mark_features(text, mark("주차장"), replaced)))
    floor = dict(zip(names, sweep.mark_features(text, mark("8", "cut_word", None), replaced)))
    assert quoted["quoted"] and not common["quoted"]
    assert common["only common words"] and not quoted["only common words"]
    assert quoted["within 12 characters of one"] and not common["within 12 characters of one"]
    assert floor["only digits"] and floor["before 층/호/동/번"] and floor["rest of a cut word"]
    assert floor["log-odds of the score"] == 0 and quoted["log-odds of the score"] == pytest.approx(math.log(0.3 / 0.7))
