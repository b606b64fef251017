"""thunder.protected: model spans that are only a protected word are dropped; recognizer spans never are."""

from __future__ import annotations

import pytest

from thunder.decoding import TokenPredictions
from thunder.deid import Deidentifier, PipelineOptions
from thunder.identifiers.base import ScoredSpan
from thunder.protected import PROTECTED_WORDS, load_protected, protect

TEXT = "피고인은 KTX 역 CCTV를 통해 피해자 홍길동을 보았고, 성명불상자에게 010-1234-5678로 전화하였다."


def span(word: str, source: str = "model", label: str = "내국인이름", text: str = TEXT) -> ScoredSpan:
    start = text.index(word)
    return ScoredSpan(start, start + len(word), label, 0.9, source)


def test_protect_drops_only_model_spans_of_protected_words() -> None:
    words = load_protected(True)
    spans = [span("KTX"), span("CCTV를"), span("홍길동"), span("성명불상자"), span("010-1234-5678", "phone_number", "전화번호")]
    kept = protect(TEXT, spans, words)
    assert [TEXT[s.start : s.end] for s in kept] == ["홍길동", "010-1234-5678"]
    recognizer_span = span("KTX", "my_recognizer")
    assert protect(TEXT, [recognizer_span], words) == [recognizer_span]  # never a recognizer's
    assert protect(TEXT, spans, frozenset()) == spans
    assert protect(TEXT, [span("홍길동")], frozenset({"홍"})) == [span("홍길동")]  # whole words only
    room = "피고인은 증인대기실 앞에서"  # "증인" tagged alone is part of a longer name: it stays a span
    assert protect(room, [span("증인", text=room), span("대기실", text=room)], words) == [
        span("증인", text=room), span("대기실", text=room)]  # fmt: skip
    quoted = "피고인은 'KTX'에서"
    assert protect(quoted, [span("'KTX'", text=quoted)], words) == []


def test_load_protected_options() -> None:
    assert load_protected(None) == load_protected(False) == frozenset()
    assert {"CCTV", "KTX", "ATM", "신원미상"} <= load_protected(True) == frozenset(PROTECTED_WORDS)
    assert load_protected(["중앙지검"]) == frozenset({"중앙지검"})
    for bad in ("CCTV", [""], [3]):
        with pytest.raises(ValueError, match="protected words"):
            load_protected(bad)  # type: ignore[arg-type]


class _FixedSpans(Deidentifier):
    """A de-identifier whose "model" finds fixed words (no weights needed)."""

    words = ("KTX", "CCTV", "홍길동")

    def model_spans(self, text: str, prediction: TokenPredictions) -> list[ScoredSpan]:
        return [span(word, text=text) for word in self.words if word in text]


def test_the_pipeline_keeps_protected_words_and_still_replaces_identifiers() -> None:
    plain = _FixedSpans(recognizers=None)(TEXT).text
    assert "KTX" not in plain and "CCTV" not in plain
    protected = _FixedSpans(recognizers=None, protected_words=True)(TEXT)
    assert "KTX 역 CCTV를" in protected.text
    assert "홍길동" not in protected.text and "010-1234-5678" not in protected.text  # model and recognizer spans
    assert PipelineOptions(protected_words=["KTX"]).build().protected_words == frozenset({"KTX"})
