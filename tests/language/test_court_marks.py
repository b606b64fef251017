"""The courts' de-identification marks: each family found with its span and label, and what is no mark left alone."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from thunder.language.court_marks import KINDS, court_marks, masked_entities
from thunder.taxonomy import Taxonomy

LEGAL_KO = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "legal-ko" / "precedents.jsonl.xz"


def marks(text: str) -> list[tuple[str, str, str]]:
    """``(mark text, label, kind)`` of every mark of ``text``."""
    return [(text[m.start : m.end], m.label, m.kind) for m in court_marks(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("피고인 1은 피해자 공소외 2에게 전화하였다.", [("1", "내국인이름", "id"), ("공소외 2", "내국인이름", "id")]),
        ("원고 1, 2의 청구", [("1", "내국인이름", "id"), ("2", "내국인이름", "id")]),
        ("피고 1 주식회사는 항소하였다.", [("1", "주식회사", "id")]),
        ("소외인은 그 자리에 없었다.", [("소외인", "내국인이름", "id")]),
        ("피해자 김○○의 진술", [("김○○", "내국인이름", "id")]),
        ("○○병원에 입원하였다.", [("○○", "병원", "id")]),
        ("서울 강남구 (주소 1 생략) 소재 건물", [("(주소 1 생략)", "구아래주소", "id")]),
        ("주민등록번호 000000-0000000", [("000000-0000000", "주민등록번호", "id")]),
        ("甲 주식회사와 乙은 계약을 맺었다.", [("甲", "주식회사", "id"), ("乙", "내국인이름", "id")]),
        ("피고인 C는 범행을 부인하였다.", [("C", "내국인이름", "id")]),
        ("○○세무서장이 부과처분을 하였다.", [("○○", "행정시", "plain")]),
        ("서울 서초구 (아파트 이름 생략) 102동", [("(아파트 이름 생략)", "아파트", "id")]),
    ],
)
def test_each_family_is_found_with_its_span_and_label(text: str, expected: list[tuple[str, str, str]]) -> None:
    assert marks(text) == expected


@pytest.mark.parametrize(
    "text",
    ["갑 제1호증의 기재", "甲 제1호증", "원고 1. 청구취지", "○ 원고는 주장한다.", "소외 3인과 함께", "피고 1명이 출석하였다.",
     "(별지 목록 생략)", "(이하 생략)",
     "소송비용 중 원고 65%, 피고 35%를 각 부담한다.", "소송비용은 피고 30 퍼센트", "(단기생년월일 생략)생인 원고"],
)  # fmt: skip
def test_what_is_no_mark_is_left_alone(text: str) -> None:
    assert [m for m in court_marks(text) if m.kind == "id"] == []


def test_one_entity_has_one_label_in_a_decision() -> None:
    """``공소외 1 주식회사`` makes every ``공소외 1`` of the decision a company; ``△△△`` is one entity throughout."""
    text = "공소외 1 주식회사의 대표이사는 공소외 1에게 돈을 보냈다. 증인 △△△은 진술하였고, △△△의 말은 이렇다."
    found = court_marks(text)
    assert [(text[m.start : m.end], m.label) for m in found if m.family == "NONPARTY_NUMBER"] == [
        ("공소외 1", "주식회사"), ("공소외 1", "주식회사")]  # fmt: skip
    triangles = [m for m in found if text[m.start : m.end] == "△△△"]
    assert len(triangles) == 2 and {m.entity for m in triangles} == {"sym:△△△"}
    assert {(m.label, m.kind) for m in triangles} == {("내국인이름", "id")}


def test_marks_never_overlap_and_have_known_kinds() -> None:
    text = "피고인 1은 (주소 1 생략)에 사는 공소외 2, 3과 ○○은행 000000-0000000 계좌로 거래하였다. 甲 토지와 乙 살균제"
    found = court_marks(text)
    assert all(a.end <= b.start for a, b in zip(found, found[1:]))
    assert {m.kind for m in found} <= set(KINDS)
    assert [(text[m.start : m.end], m.kind) for m in found if m.family == "HANJA_PARTY"] == [("甲", "ignore"),
                                                                                             ("乙", "ignore")]


@pytest.mark.shared_data
def test_every_label_on_the_published_decisions_is_the_taxonomys() -> None:
    if not LEGAL_KO.is_file():
        pytest.skip(f"{LEGAL_KO} not found (the legal-ko corpus beside the clone)")
    labels = Taxonomy.load().labels
    found = set()
    with lzma.open(LEGAL_KO, "rt", encoding="utf-8") as file:
        for number, line in enumerate(file):
            if number % 20 == 0:
                found |= {m.label for m in court_marks(json.loads(line)["text"]) if m.kind == "id"}
    assert found and found <= set(labels)


@pytest.mark.parametrize(
    ("text", "entities"),
    [("직접 □□사 납골당 사업을 가지고", ["□□사 납골당"]), ("○○대학교병원에 입원하였다", ["○○대학교병원에"]),
     ("♤♤♤ 사모펀드는", ["♤♤♤ 사모펀드는"]), ("소재지 ○○리 126-4", ["○○리"]), ("피해자 ○○○, 이문 등", ["○○○,"]),
     ("○○○ 정미래와", ["○○○"]), ("○○ KFD개발", ["○○"]), ("김철수 홍길동", [])],
)  # fmt: skip
def test_masked_entities_are_the_masks_and_the_common_words_they_name(text: str, entities: list[str]) -> None:
    """Issue 66: what the court masked is no identifier to replace again; digits, names and unknown words beside a
    mask are not part of it."""
    assert [text[a:b] for a, b in masked_entities(text)] == entities
