"""Pattern recognizers: true positives, scores, and the look-alikes of court judgments they must leave alone."""

from __future__ import annotations

import re

import pytest

from thunder.deid.pipeline import Deidentifier
from thunder.deid.recognizers.registry import RECOGNIZERS, PatternRecognizer, load_recognizers, recognize
from thunder.identifiers import resident_registration_number as rrn
from thunder.identifiers.card_number import luhn_valid


def found(text: str, name: str | None = None) -> list[tuple[str, str, float]]:
    spans = recognize(text, load_recognizers([name] if name else None))
    return [(s.source, text[s.start : s.end], s.score) for s in spans]


def texts(text: str, name: str | None = None) -> list[str]:
    return [t for _, t, _ in found(text, name)]


@pytest.mark.parametrize(
    ("text", "expected", "score"),
    [
        ("주민등록번호 900101-1234568 인", "900101-1234568", 0.95),  # valid check digit
        ("주민등록번호 900101-1234567 인", "900101-1234567", 0.7),  # invalid check digit: still found
        ("주민등록번호: 021231-4123456,", "021231-4123456", None),
        ("(900101 - 1234568)", "900101 - 1234568", 0.95),
        ("900101-1******", "900101-1******", 0.6),
        ("번호 9001011234568 입니다", "9001011234568", 0.9),  # bare 13 digits need a valid check digit
    ],
)
def test_resident_registration_numbers(text: str, expected: str, score: float | None) -> None:
    result = found(text, "resident_registration_number")
    assert [t for _, t, _ in result] == [expected]
    if score is not None:
        assert result[0][2] == score


def test_rrn_check_digit() -> None:
    assert rrn.check_digit_valid("900101-1234568")
    assert not rrn.check_digit_valid("900101-1234567")


def test_rrn_requires_a_date_and_a_boundary() -> None:
    assert texts("901301-1234568", "resident_registration_number") == []  # month 13
    assert texts("900132-1234568", "resident_registration_number") == []  # day 32
    assert texts("9002291234567", "resident_registration_number") == []  # bare, bad check digit, 1990 not leap
    assert texts("0002293234567", "resident_registration_number") == ["0002293234567"]  # 2000 is a leap year
    assert texts("1900101-12345689", "resident_registration_number") == []  # inside a longer number


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("휴대전화 010-1234-5678로", "010-1234-5678"),
        ("전화(01012345678)", "01012345678"),
        ("011.123.4567", "011.123.4567"),
        ("사무실 02-123-4567", "02-123-4567"),
        ("(031) 123-4567", "(031) 123-4567"),
        ("051-1234-5678", "051-1234-5678"),
        ("010-****-5678", "010-****-5678"),
        ("고객센터(1588-1234)", "1588-1234"),
    ],
)
def test_phone_numbers(text: str, expected: str) -> None:
    assert texts(text, "phone_number") == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("피해자 명의 국민은행 계좌(123456-01-123456)로", "123456-01-123456"),
        ("신한은행 110-123-456789", "110-123-456789"),
        ("농협 계좌 352-1234-5678-93", "352-1234-5678-93"),
        ("계좌번호 1002123456789로 송금", "1002123456789"),
    ],
)
def test_bank_accounts(text: str, expected: str) -> None:
    assert texts(text) == [expected]


def test_cards_luhn() -> None:
    assert luhn_valid("4111-1111-1111-1111") and not luhn_valid("4111-1111-1111-1112")
    assert found("카드 4111-1111-1111-1111로", "card_number")[0][1:] == ("4111-1111-1111-1111", 0.95)
    assert found("카드 4111 1111 1111 1112", "card_number")[0][2] < 0.95
    assert texts("4111111111111111", "card_number") == ["4111111111111111"]
    assert texts("4111111111111112", "card_number") == []  # 16 bare digits need the checksum
    assert texts("카드(1234-56**-****-3456)", "card_number") == ["1234-56**-****-3456"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12가3456 승용차", "12가3456"),
        ("342사3468호 택시", "342사3468"),  # 호 as a counter after the plate
        ("서울고등법원 98노1234 판결", None),  # a case number of the same shape
        ("123허 4567 차량", "123허 4567"),
        ("서울12가3456", "서울12가3456"),
        ("경기 1 가 1234", "경기 1 가 1234"),
        ("경기1가1234 화물차", "경기1가1234"),
    ],
)
def test_vehicle_plates(text: str, expected: str | None) -> None:
    assert texts(text, "vehicle_plate") == ([expected] if expected else [])


def test_email_and_url() -> None:
    assert texts("메일 kim.jh92@gmail.com 로", "email") == ["kim.jh92@gmail.com"]
    assert texts("메일kim@example.com으로", "email") == ["kim@example.com"]  # Hangul around it
    assert texts("(https://blog.naver.com/abc_12?x=1).", "url") == ["https://blog.naver.com/abc_12?x=1"]
    assert texts("www.example.co.kr에 접속", "url") == ["www.example.co.kr"]
    assert texts("http://blog.naver.com/abc에서 보았다", "url") == ["http://blog.naver.com/abc"]  # the particle stays
    assert texts("https://www.예시.한국/a?b=1 에", "url") == ["https://www.예시.한국/a?b=1"]  # a Hangul host
    assert Deidentifier()("피고인은 www.예시.kr/a?b=1 에 접속하였다.").text == "피고인은 A 에 접속하였다."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("텔레그램 아이디 'raye.6'를 사용하는 성명불상자", "raye.6"),  # digits after a dot: still one handle
        ("인스타그램 계정 ‘zzang_dong1989’을 이용하여", "zzang_dong1989"),
        ("닉네임 “Kevin7”으로 접속하여", "Kevin7"),
        ("ID: kim_01, PW: 1234", "kim_01"),
        ("아이디는 lee99이고", "lee99"),
        ("전화 010-1234-5678, 아이디 gildong77.", "gildong77"),  # a sentence's full stop ends the handle
        ("아이디 raye.6. 그 후", "raye.6"),
        ("아이디 kim_01... 이라고", "kim_01"),
        ("위챗 아이디 ‘C’로", None),  # a placeholder of a de-identified judgment
        ("계정 AB를", None),
        ("아이디 및 비밀번호", None),
        ("Android ID 123456", None),  # no letter
        ("계정과목 ABC", None),  # 계정과목 is an accounting term
    ],
)
def test_user_ids_after_the_word_that_names_them(text: str, expected: str | None) -> None:
    assert texts(text, "user_id") == ([expected] if expected else [])


def test_user_id_leaves_emails_and_urls_to_their_recognizers() -> None:
    assert found("계정 kim@naver.com 및 아이디 https://x.com/a") == [
        ("email", "kim@naver.com", 0.95), ("url", "https://x.com/a", 0.9)
    ]
    assert texts("아이디 kim@naver.com.", "user_id") == []


def test_an_account_name_ending_a_sentence_after_another_identifier_is_replaced() -> None:
    assert Deidentifier()("전화 010-1234-5678, 아이디 gildong77.").text == "전화 A, 아이디 B."


@pytest.mark.parametrize(
    "text",
    [
        "피고인은 2021. 3. 4. 14:30경 피해자에게",  # dates and times
        "2021-03-04 및 2021.03.04.",
        "합계 1,000,000원을 편취하고 금 35,000,000원",  # amounts
        "피해자 계좌로 1000000000원을 송금하고 은행에 12345678901 달러를",
        "서울중앙지방법원 2020고단1234 판결, 2019노123, 2018도12345",  # case numbers
        "대법원 1998. 2. 10. 선고 98노1234 판결",  # old two-digit-year case number
        "형법 제347조 제1항, 제30조, 도로교통법 제148조의2 제1항 제1호",  # statutes
        "징역 1년 6월에 처한다. 피해자 3명, 12회에 걸쳐",
        "제1항 제2호 가목, 2020. 1. 1.부터 2020. 12. 31.까지",
    ],
)
def test_no_false_positives(text: str) -> None:
    assert found(text) == []


def test_overlaps_keep_the_most_confident() -> None:
    # a mobile number is also shaped like an account number: the phone wins
    assert found("계좌 010-1234-5678") == [("phone_number", "010-1234-5678", 0.9)]


class EmployeeId(PatternRecognizer):
    name = "employee_id"
    label = "관리번호"
    pattern = re.compile(r"EMP-\d{5}")


def test_plugins_by_path_dict_and_instance() -> None:
    path = f"{__name__}.EmployeeId"
    for spec in (path, {"class_path": path, "init_args": {"label": "사번"}}, EmployeeId()):
        (recognizer,) = load_recognizers([spec])
        assert [(s.start, s.end) for s in recognizer.find("사번 EMP-12345")] == [(3, 12)]
    assert load_recognizers([{"class_path": path, "init_args": {"label": "사번"}}])[0].label == "사번"
    assert {type(r).name for r in load_recognizers()} == set(RECOGNIZERS)
    with pytest.raises(ValueError, match="unknown recognizer"):
        load_recognizers(["no_such_recognizer"])


def test_part_paths_written_before_the_folders_still_load() -> None:
    """A recipe stored by an earlier Thunder names ``thunder.names.PersonNames``; it loads from where it is now."""
    from thunder.plugins import import_class
    from thunder.synthesis.names import PersonNames

    assert import_class("thunder.names.PersonNames", object, "generator", ()) is PersonNames
    (recognizer,) = load_recognizers(["thunder.masked_name.MaskedNameRecognizer"])
    assert type(recognizer).__module__ == "thunder.deid.recognizers.masked_name"
