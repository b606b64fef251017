"""thunder.deid.protection: the model's spans over protected text (legal text, protected words, the published officials'
names, the upper levels of addresses) are dropped or trimmed; spans of every other source never are."""

from __future__ import annotations

import pytest

from thunder.deid.pipeline import Deidentifier, PipelineOptions
from thunder.deid.policy import PROTECTED_WORDS, PublicationPolicy
from thunder.deid.protection import Protection
from thunder.identifiers.base import ScoredSpan
from thunder.language.regions import upper_units
from thunder.model.decoding import TokenPredictions

TEXT = "피고인은 KTX 역 CCTV를 통해 피해자 홍길동을 보았고, 성명불상자에게 010-1234-5678로 전화하였다."


def span(word: str, source: str = "model", label: str = "내국인이름", text: str = TEXT, score: float = 0.9) -> ScoredSpan:
    start = text.index(word)
    return ScoredSpan(start, start + len(word), label, score, source)


def protection(**policy) -> Protection:
    """The protection of a publication policy; the upper levels of addresses are replaced unless ``keep_regions``."""
    return Protection(PublicationPolicy(**{"keep_regions": False, **policy}))


def texts(spans: list[ScoredSpan], text: str) -> list[str]:
    return [text[s.start : s.end] for s in spans]


def test_protected_words_drop_only_model_spans_of_them() -> None:
    words = protection(legal_text=False, protected_words=True, keep_officials=[])
    spans = [span("KTX"), span("CCTV를"), span("홍길동"), span("성명불상자"), span("010-1234-5678", "phone_number", "전화번호")]
    assert texts(words.filter(TEXT, spans), TEXT) == ["홍길동", "010-1234-5678"]
    recognizer_span = span("KTX", "my_recognizer")
    assert words.filter(TEXT, [recognizer_span]) == [recognizer_span]  # never a recognizer's
    nothing = protection(legal_text=False, keep_officials=[])
    assert not nothing and nothing.filter(TEXT, spans) == spans
    one = protection(legal_text=False, protected_words=["홍"], keep_officials=[])
    assert one.filter(TEXT, [span("홍길동")]) == [span("홍길동")]  # whole words only
    room = "피고인은 증인대기실 앞에서"  # "증인" tagged alone is part of a longer name: it stays a span
    assert words.filter(room, [span("증인", text=room), span("대기실", text=room)]) == [
        span("증인", text=room), span("대기실", text=room)]  # fmt: skip
    quoted = "피고인은 'KTX'에서"
    assert words.filter(quoted, [span("'KTX'", text=quoted)]) == []


def test_the_policy_is_checked_once_when_made() -> None:
    assert PublicationPolicy().protected == frozenset() and PublicationPolicy(protected_words=False).protected == frozenset()
    assert {"CCTV", "KTX", "ATM", "신원미상"} <= PublicationPolicy(protected_words=True).protected == frozenset(PROTECTED_WORDS)
    assert PublicationPolicy(protected_words=["중앙지검"]).protected == frozenset({"중앙지검"})
    for bad in ("CCTV", [""], [3]):
        with pytest.raises(ValueError, match="protected_words"):
            PublicationPolicy(protected_words=bad)  # type: ignore[arg-type]
    assert PublicationPolicy().legal_words == () and PublicationPolicy(legal_text=False).legal_words is None
    assert PublicationPolicy(legal_text=[" 특수목적법 "]).legal_words == ("특수목적법",)
    for bad in ("형법", [""]):
        with pytest.raises(ValueError, match="legal_text"):
            PublicationPolicy(legal_text=bad)  # type: ignore[arg-type]
    for bad in (["clerk"], "judge"):
        with pytest.raises(ValueError, match="keep_officials"):
            PublicationPolicy(keep_officials=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="keep_regions"):
        PublicationPolicy(keep_regions="no")  # type: ignore[arg-type]
    for bad in (-0.1, 1.5, True, "0.5"):
        with pytest.raises(ValueError, match="propagate_threshold"):
            PublicationPolicy(propagate_threshold=bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="propagate_share"):
            PublicationPolicy(propagate_share=bad)  # type: ignore[arg-type]
    assert PublicationPolicy(keep_officials=["counsel", "judge"]).kept_officials == ("judge", "counsel")
    assert PublicationPolicy(keep_officials=["counsel"]).replaced_officials == ("judge", "prosecutor")


JUDGMENT = """피 고 인 홍길동 (900101-1234568), 회사원
등록기준지 충남 논산시 연무읍 동산리 12
검 사 윤서진(기소), 한지오(공판)
변 호 인 법무법인 새솔 담당변호사 곽윤재

피고인은 2024. 6. 8. 형법 제62조의2, 도로교통법 제148조의2 제1항 제3호를 위반하였고, 원심은 이 사건 변론에서
원고의 청구를 받아들였다. 갑 제1호증의 기재와 대법원 2010. 1. 14. 선고 2009다67429 판결에 따르면 그렇다.
피고인 홍길동은 서울중앙지방법원 2024고단3187 사건에서 재판을 받았다.

판사 오현석"""


@pytest.mark.parametrize(
    "word",
    ["제62조의2", "제62", "제148조의2 제1항 제3호", "형법 제62조의2", "원심", "변론", "원고", "서울중앙지방법원",
     "갑 제1호증의", "2009다67429", "2024고단3187", "등록기준지", "판 결", "오현석", "윤서진", "곽윤재", "새솔"],
)  # fmt: skip
def test_a_model_span_only_over_legal_text_or_a_kept_official_is_dropped(word: str) -> None:
    text = JUDGMENT.replace("판 결", "") + "\n판 결"
    assert protection().filter(text, [span(word, text=text)]) == []
    assert protection(legal_text=False, keep_officials=[]).filter(text, [span(word, text=text)]) == [span(word, text=text)]


def test_a_span_partly_over_legal_text_is_trimmed_only_where_that_is_safe() -> None:
    kept = protection()
    trimmed = kept.filter(JUDGMENT, [span("등록기준지 충남", label="주소", text=JUDGMENT)])
    assert texts(trimmed, JUDGMENT) == ["충남"]  # a field label before the entity
    address = span("등록기준지 충남 논산시 연무읍 동산리 12", label="주소", text=JUDGMENT)
    published = protection(keep_regions=True).filter(JUDGMENT, [address])
    assert texts(published, JUDGMENT) == ["연무읍 동산리 12"]  # and the published levels, where kept
    trimmed = kept.filter(JUDGMENT, [span("피고인 홍길동", text=JUDGMENT)])
    assert texts(trimmed, JUDGMENT) == ["홍길동"]
    court = "서울중앙지방법원 2024고단3187"
    assert kept.filter(JUDGMENT, [span(court, text=JUDGMENT)]) == []
    firm = "서울 새솔아파트 입주자대표회의와"  # a term after the entity may be part of its name: kept whole
    assert kept.filter(firm, [span("새솔아파트 입주자대표회의", text=firm)]) == [span("새솔아파트 입주자대표회의", text=firm)]
    inside = "원고건설 주식회사와 원고은은 만났다."  # legal text inside a word, or a particle that does not agree
    spans = [span("원고건설", text=inside), span("원고은", text=inside)]
    assert kept.filter(inside, spans) == spans
    recognizer = span("2024고단3187", "my_recognizer", text=JUDGMENT)
    assert kept.filter(JUDGMENT, [recognizer]) == [recognizer]


def test_the_plural_of_a_term_is_legal_text_too() -> None:
    text = "피신청인들은 원고들에게 지급하라. 원고들 김철수, 원고김들은 만났다."
    for word in ("피신청인들은", "청인들", "원고들에게", "원고들"):
        assert protection().filter(text, [span(word, text=text)]) == [], word
    assert texts(protection().filter(text, [span("원고들 김철수", text=text)]), text) == ["김철수"]
    assert protection().filter(text, [span("원고김들은", text=text)]) == [span("원고김들은", text=text)]


def test_officials_kept_by_role() -> None:
    only_judges = protection(legal_text=False, keep_officials=["judge"])
    spans = [span(name, text=JUDGMENT) for name in ("오현석", "윤서진", "곽윤재", "홍길동")]
    assert texts(only_judges.filter(JUDGMENT, spans), JUDGMENT) == ["윤서진", "곽윤재", "홍길동"]


class _FixedSpans(Deidentifier):
    """A de-identifier whose "model" finds fixed words (no weights needed)."""

    words = ("KTX", "CCTV", "홍길동", "원심", "제62")

    def model_spans(self, text: str, prediction: TokenPredictions) -> list[ScoredSpan]:
        return [span(word, text=text) for word in self.words if word in text]


def test_the_pipeline_keeps_protected_text_and_still_replaces_identifiers() -> None:
    plain = _FixedSpans(recognizers=None, policy=PublicationPolicy(legal_text=False))(TEXT).text
    assert "KTX" not in plain and "CCTV" not in plain
    protected = _FixedSpans(recognizers=None, policy=PublicationPolicy(protected_words=True))(TEXT)
    assert "KTX 역 CCTV를" in protected.text
    assert "홍길동" not in protected.text and "010-1234-5678" not in protected.text  # model and recognizer spans
    assert PipelineOptions(recognizers_only=True).build(PublicationPolicy(protected_words=["KTX"])).policy.protected == frozenset({"KTX"})
    judgment = _FixedSpans(recognizers=None)(JUDGMENT).text
    assert "원심은" in judgment and "형법 제62조의2" in judgment and "판사 오현석" in judgment
    assert "홍길동" not in judgment and "900101-1234568" not in judgment
    assert "원심" not in _FixedSpans(recognizers=None, policy=PublicationPolicy(legal_text=False))(JUDGMENT).text


def test_no_path_of_the_pipeline_spreads_a_model_span_into_legal_text() -> None:
    """A lone item (``제20호``) is no statute reference, an article (``제20조``) is: the model's ``제20`` of the item
    neither propagates into the article nor comes back through the check that no replaced text survives."""
    text = "다만, 제20호에 해당하면 취소한다.\n제20조(제소기간) 취소소송은 90일 이내에 제기한다. 제20호의 경우도 같다."
    model = span("제20", text=text)
    result = Deidentifier(recognizers=[]).apply(text, [model])
    assert result.text == "다만, A호에 해당하면 취소한다.\n제20조(제소기간) 취소소송은 90일 이내에 제기한다. A호의 경우도 같다."
    assert [s.source for s in result.spans] == ["model", "propagated"]
    recognized = Deidentifier(recognizers=[]).apply(text, [span("제20", "my_recognizer", text=text)])
    assert "제20" not in recognized.text  # a recognizer's text spreads everywhere


def test_officials_of_the_roles_not_kept_are_replaced_whatever_the_model_says() -> None:
    result = Deidentifier(recognizers=[], policy=PublicationPolicy(keep_officials=["counsel"]))(JUDGMENT)
    assert "오현석" not in result.text and "윤서진" not in result.text and "한지오" not in result.text
    assert "곽윤재" in result.text and "새솔" in result.text
    assert {s.source for s in result.spans} == {"officials"} and {s.label for s in result.spans} == {"내국인이름"}
    counsel = Deidentifier(recognizers=[], policy=PublicationPolicy(keep_officials=[]))(JUDGMENT)
    assert "곽윤재" not in counsel.text and "새솔" not in counsel.text
    assert {s.label for s in counsel.spans if s.text == "새솔"} == {"법무법인"}
    with pytest.raises(ValueError, match="keep_officials"):
        PublicationPolicy(keep_officials="judge")  # type: ignore[arg-type]


def test_the_policy_is_an_option_of_the_command_line(tmp_path) -> None:
    from thunder.cli import main

    judgment = tmp_path / "judgment.txt"
    judgment.write_text("검 사 윤서진(기소)\n변 호 인 변호사 문태경(국선)\n판사 오현석\n", encoding="utf-8")
    main(["deid", "--recognizers_only", str(judgment), "--out", str(tmp_path / "out"), "--keep_officials", "[counsel]"])
    assert (tmp_path / "out" / "judgment.txt").read_text(encoding="utf-8") == (
        "검 사 A(기소)\n변 호 인 변호사 문태경(국선)\n판사 B\n")  # fmt: skip


@pytest.mark.parametrize(
    ("text", "units"),
    [
        ("서울 마포구 월드컵로 12", ["서울", "마포구"]),
        ("경남 김해시 진영읍 진영로 5에서", ["경남", "김해시"]),  # a town goes with the rest of the address
        ("강원특별자치도 강릉시 사천면 산대월리 3", ["강원특별자치도", "강릉시"]),
        ("창원시 마산회원구 양덕동에서", ["창원시", "마산회원구"]),
        ("마포구에서 만났다", ["마포구"]),  # the name without its particles
        ("마포구청 앞 부산은행 계좌", []),  # names inside longer words are no units
        ("피해자 김동구는", []),
        ("세종 보람동 654", []),  # a lone two-syllable name may be a name or a word (and 보람동 is below 세종)
        ("서울 테헤란로 152, 부산 해운대구에서 울산 남구로", ["부산", "해운대구", "울산", "남구"]),
        ("화성시 동탄", ["화성시"]),
    ],
)
def test_upper_units_are_the_published_levels_of_an_address(text: str, units: list[str]) -> None:
    assert [text[start:end] for start, end in upper_units(text)] == units


def test_the_upper_levels_of_an_address_stay_where_the_policy_keeps_them() -> None:
    text = "피고는 서울 마포구 월드컵로 12에 살며 화성시에서 일한다. 서울 마포구 월드컵로 12는 그의 집이다."
    address, city = "서울 마포구 월드컵로 12", "화성시"
    spans = [span(address, label="구아래주소", text=text), span(city, label="구아래주소", text=text)]
    kept = Deidentifier(recognizers=[]).apply(text, spans)  # by default
    assert kept.text == "피고는 서울 마포구 A에 살며 화성시에서 일한다. 서울 마포구 A는 그의 집이다."
    replaced = Deidentifier(recognizers=[], policy=PublicationPolicy(keep_regions=False)).apply(text, spans)
    assert replaced.text == "피고는 A에 살며 B에서 일한다. A는 그의 집이다."
    recognized = span("서울 마포구 월드컵로 12", "my_recognizer", "구아래주소", text)
    kept_recognized = Deidentifier(recognizers=[]).apply(text, [recognized])
    assert kept_recognized.text.startswith("피고는 A에 살며")  # a recognizer's span is never trimmed
    assert PipelineOptions(recognizers_only=True).build().protection.regions is True
    assert PipelineOptions(recognizers_only=True).build(PublicationPolicy(keep_regions=False)).protection.regions is False
    with pytest.raises(ValueError, match="keep_regions"):
        PublicationPolicy(keep_regions="no")  # type: ignore[arg-type]
