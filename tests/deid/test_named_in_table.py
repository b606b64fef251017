"""Person names in a table's column of people (thunder.deid.recognizers.named_in_table), alone, on the packaged corpora and in the
pipeline."""

from __future__ import annotations

import pytest

from thunder.deid.pipeline import Deidentifier
from thunder.deid.recognizers.named_in_table import NamedInTableRecognizer
from thunder.deid.recognizers.registry import load_recognizers
from thunder.synthesis.synthesizer import SynthesizedDocument

CRIME_TABLE = """[별지] 범죄일람표
순번 / 범행일시 / 범행장소 / 피해자 / 피해품(시가)
1 / 2024. 3. 14. 19:50경 / 대전 서구 둔산로 12 앞 / 김원슬 / 산악자전거 1대(250,000원)
2 / 2024. 3. 18. 11:05경 / 대전 중구 '맛집' 출입문 앞 / 엄·뒷뷾 / 가방 1개
3 / 2024. 3. 21. 16:40경 / 미용실 대기석 / 박민수, 이영희 / 현금 30,000원
합계 / / / / 280,000원
그 뒤 김원슬은 피고인을 고소하였다."""


def names(text: str) -> list[str]:
    return [text[s.start : s.end] for s in NamedInTableRecognizer().find(text)]


def test_the_cells_of_a_column_of_people_are_names() -> None:
    assert names(CRIME_TABLE) == ["김원슬", "엄·뒷뷾", "박민수", "이영희"]  # the sentence after it is no row


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("순번 | 사고 일시 | 피고인 측 차량 | 상대 차량 운전자 | 보험회사\n1 | 2021. 9. 14. | 12가3456 아반떼 | 제임스 존슨 | "
         "AIG손해보험\n2 | 2021. 12. 2. | 같은 차량 | 윤말판 | 라이나생명", ["제임스 존슨", "윤말판"]),  # fmt: skip
        ("| 순번 | 명의 | 재산 | 가액 |\n| 1 | 피고 | 아파트 | 100 |\n| 2 | 남궁 민 | 예금 | 50 |", ["남궁 민"]),
        ("번호 | 입원자(관계) | 기간\n1 | 김철수·이영희 | 3일", ["김철수", "이영희"]),  # a parenthesis after the header
    ],
)
def test_columns_whose_header_ends_with_a_person(table: str, expected: list[str]) -> None:
    assert names(table) == expected


@pytest.mark.parametrize(
    "table",
    [
        "순번 | 피해자 | 금액\n1 | 미상 | 100\n2 | 성명불상 | 100\n3 | 본인 | 100\n4 | 소계 | 100\n5 | 해당 없음 | 0\n"
        "6 | 피고인 | 100\n7 | 주식회사 한빛 | 100\n8 | A | 100\n9 | 위와 같음 | 100",  # no names in a column of people
        "순번 | 일시 | 장소 | 피해품\n1 | 2024. 3. 1. | 김천시 | 김철수",  # no column of people
        "피해자 | 김철수",  # one line is no table
        "피해자 / 김철수 / 박민수",  # ... nor a header alone
        "원고/피고 김철수, 이영희",  # a slash without spaces splits no cells
        "순번 | 발명의\n1 | 김철수",  # a header that ends in a person's word but not with it (명의)
    ],
)
def test_what_is_no_name_in_a_column_of_people(table: str) -> None:
    assert names(table) == []


def test_it_is_on_by_default_and_replaces_every_occurrence_without_a_model() -> None:
    assert "named_in_table" in [r.name for r in load_recognizers()]
    pipeline = Deidentifier()
    assert "in a table's column of people" in pipeline.coverage()
    result = pipeline(CRIME_TABLE)
    assert not any(name in result.text for name in ("김원슬", "엄·뒷뷾", "박민수", "이영희"))
    found = [(CRIME_TABLE[s.start : s.end], s.source) for s in result.spans]
    assert found == [("김원슬", "named_in_table"), ("엄·뒷뷾", "named_in_table"), ("박민수", "named_in_table"),
                     ("이영희", "named_in_table"), ("김원슬", "propagated")]  # the sentence after the table too


def test_every_name_it_finds_in_the_packaged_judgments_lies_on_an_identifier_and_none_in_the_precedents(
    packaged_judgments: list[SynthesizedDocument], precedent_texts: list[str]
) -> None:
    """Precision on realistic text: the packaged whole judgments (filled, their crime and insurance tables) and the
    62 published precedents (de-identified by the court with letters, so a span there is an error)."""
    recognizer = NamedInTableRecognizer()
    found = [(doc, span) for doc in packaged_judgments for span in recognizer.find(doc.text)]
    assert len(found) >= 10  # it does find names there (18 to 22 per filling at the time of writing)
    off = [doc.text[span.start : span.end] for doc, span in found
           if not any(g.start <= span.start and span.end <= g.end for g in doc.spans)]  # fmt: skip
    assert off == []
    assert [t[s.start : s.end] for t in precedent_texts for s in recognizer.find(t)] == []
