"""The de-identification pipeline: placeholders, particles, merging, windows, invariants, and ``thunder deid``."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import sys
from pathlib import Path

import pytest
import torch
from helpers import (
    FILLER,
    NAME,
    KeywordModel,
    build_tiny_model,
    check_invariants,
    first_span,
    spans_of,
    write_tiny_export,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thunder.commands.deid import deid_command
from thunder.deid.operators import entity_key
from thunder.deid.overlaps import _key_pattern, find_keys
from thunder.deid import pipeline
from thunder.deid.overlaps import NameSurvives
from thunder.deid.pipeline import Deidentifier, DeidResult, PipelineOptions
from thunder.deid.policy import PublicationPolicy
from thunder.deid.recognizers.registry import ScoredSpan, recognize
from thunder.model.decoding import OperatingPoint
from thunder.taxonomy import LabelSet

# ----------------------------------------------------------------------------------------------- placeholders


@pytest.fixture(scope="module")
def deid() -> Deidentifier:
    return Deidentifier(recognizers=[])


@pytest.fixture(scope="module")
def whole_addresses() -> Deidentifier:
    """The policy that replaces an address whole, its province and city with it (``keep_regions=False``)."""
    return Deidentifier(recognizers=[], policy=PublicationPolicy(keep_regions=False))


def test_placeholders_and_particles(deid: Deidentifier) -> None:
    text = "피고인 홍길동이 피해자 김철수를 폭행하였고, 김철수는 홍길동에게 돈을 주었다."
    result = deid.apply(text, spans_of(text, "홍길동", "김철수"))
    assert result.text == "피고인 A가 피해자 B를 폭행하였고, B는 A에게 돈을 주었다."
    assert [(s.text, s.placeholder) for s in result.spans] == [
        ("홍길동", "A"), ("김철수", "B"), ("김철수", "B"), ("홍길동", "A"),
    ]  # fmt: skip
    assert {s.category for s in result.spans} == {"사건관계인특정정보"} and {s.tier1 for s in result.spans} == {"direct"}
    check_invariants(text, result)


def test_letters_read_in_english(deid: Deidentifier) -> None:
    names = ["가나다", "라마바", "사아자", "차카타", "파하거", "너더러", "머버서", "어저처", "커터퍼", "허고노", "도로모"]
    text = " ".join(f"{n}와" for n in names) + " 김철수는 김철수를 김철수과 김철수로 김철수이라는"
    result = deid.apply(text, spans_of(text, *names, "김철수"))
    assert result.text.endswith(" L은 L을 L과 L로 L이라는")  # L (엘) ends in ㄹ: 으로 -> 로
    assert result.text.startswith("A와 B와")
    text = "김철수는 " + " ".join(f"{n}는" for n in names[:12]) + " 홍길동이 홍길동은 홍길동으로"
    result = deid.apply(text, spans_of(text, "김철수", *names, "홍길동"))
    assert result.text.endswith(" M이 M은 M으로")  # M (엠) ends in a consonant


def test_letter_sequence_past_z(deid: Deidentifier) -> None:
    names = [f"{chr(0xAC00 + 28 * 21 * i)}{chr(0xAC00 + 28 * 21 * i + 28)}산" for i in range(19)]
    names += [f"{chr(0xAC00 + 28 * i)}{chr(0xB098 + 28 * i)}봉" for i in range(10)]
    assert len(set(names)) == 29
    text = " ".join(f"{n}에게" for n in names)
    result = deid.apply(text, spans_of(text, *names))
    letters = [s.placeholder for s in sorted(result.spans, key=lambda s: s.start)]
    assert letters[:3] == ["A", "B", "C"] and letters[25:] == ["Z", "AA", "AB", "AC"]


def test_same_entity_across_spacing_and_particles(deid: Deidentifier) -> None:
    text = "피고인 홍길동은 ... 홍 길동이 ... 홍길동이 ... 박영희 그리고 홍길동"
    spans = [first_span(text, "홍길동"), first_span(text, "홍 길동"), first_span(text, "홍길동이"),
             first_span(text, "박영희")]  # fmt: skip
    result = deid.apply(text, spans)
    # the model's "홍길동이" is shrunk to the entity and its particle fixed; the undetected last mention too
    assert result.text == "피고인 A는 ... A가 ... A가 ... B 그리고 A"
    assert {s.placeholder for s in result.spans if "길동" in s.text} == {"A"}
    assert [s.source for s in result.spans][-1] == "propagated"
    check_invariants(text, result)


def test_an_occurrence_holding_a_smaller_span_takes_its_place(deid: Deidentifier) -> None:
    # the whole name found once, elsewhere the model took only its last part, or a syllable less
    text = ("물리치료사 올가·소콜로프가 휴가였다. 기본값으로 올가·소콜로프의 이름이 입력되었고, "
            "원고 김려륭유는 김려륭유의 남편이다.")
    spans = [first_span(text, "올가·소콜로프"), first_span(text, "김려륭유"), first_span(text, "소콜로프의")]
    spans += [ScoredSpan(s.start, s.start + 3, NAME, 0.9, "model") for s in spans_of(text, "김려륭유의")]
    spans[2] = dataclasses.replace(spans[2], end=spans[2].end - 1)  # 소콜로프
    result = deid.apply(text, spans)
    assert result.text == "물리치료사 A가 휴가였다. 기본값으로 A의 이름이 입력되었고, 원고 B는 B의 남편이다."
    assert [s.source for s in result.spans] == ["model", "propagated", "model", "propagated"]
    check_invariants(text, result)
    crossing = "원고 김려륭유는 김려륭유진의 남편이다."  # an occurrence crossing a span's edge is left as it is
    result = deid.apply(crossing, [first_span(crossing, "김려륭유"), first_span(crossing, "유진")])
    assert result.text == "원고 A는 김려륭B의 남편이다."


def test_a_name_ending_in_a_particle_letter_stays_whole(deid: Deidentifier) -> None:
    # the model has "심륭" at the head and in the last mention, "심륭이" before 의: 이의 shows 이 is part of the name
    text = "피고\n 1. 심륭이\n 2. 허숭득\n피고 심륭이의 휴대전화로 보냈고, 피고 심륭이는 답하였다."
    head, middle, last = (m.start() for m in re.finditer("심륭", text))
    spans = [ScoredSpan(head, head + 2, NAME, 0.9, "model"), first_span(text, "허숭득"),
             ScoredSpan(middle, middle + 3, NAME, 0.9, "model"), ScoredSpan(last, last + 2, NAME, 0.9, "model")]  # fmt: skip
    result = deid.apply(text, spans)
    assert result.text == "피고\n 1. A\n 2. B\n피고 A의 휴대전화로 보냈고, 피고 A는 답하였다."
    check_invariants(text, result)
    # without such evidence a particle stays a particle: "홍길동이 말했다" is 홍길동 + 이
    text = "피고인 홍길동이 말했다. 홍길동은 피해자이고, 피해자 홍길동이다."
    second = text.index("홍길동", 10)
    result = deid.apply(text, [first_span(text, "홍길동이"), ScoredSpan(second, second + 3, NAME, 0.9, "model")])
    assert result.text == "피고인 A가 말했다. A는 피해자이고, 피해자 A다."
    # nor where the letters and what follows are one particle (이나: "or")
    text = "피고인 홍길동이나 김철수는 모두 홍길동을 안다."
    last = text.rindex("홍길동")
    spans = [first_span(text, "홍길동이"), first_span(text, "김철수"), ScoredSpan(last, last + 3, NAME, 0.9, "model")]
    assert deid.apply(text, spans).text == "피고인 A나 B는 모두 A를 안다."


def test_letters_the_writing_shows_are_no_particle_join_the_name(deid: Deidentifier) -> None:
    # the model took 가 for a particle; 가에게 is no Korean: 강요가 is the name, in every mention
    text = "피해자 강요가에게 돈을 빌렸고, 피해자 강요가로부터 받았다. 강요가 말했다."
    spans = [ScoredSpan(m.start(), m.start() + 2, NAME, 0.9, "model") for m in re.finditer("강요", text)]
    result = deid.apply(text, spans)
    assert result.text == "피해자 A에게 돈을 빌렸고, 피해자 A로부터 받았다. A 말했다."
    check_invariants(text, result)
    # the model found the whole name once and took 나 for a particle elsewhere: a particle before "(" is no Korean
    text = "피해자 이헐나(이헐나, 43세)을 상대로 전화하였다. 이헐나는 돈을 보냈다."
    spans = [ScoredSpan(4, 7, NAME, 0.9, "model")] + [
        ScoredSpan(m.start(), m.start() + 2, NAME, 0.9, "model") for m in list(re.finditer("이헐", text))[1:]]
    assert deid.apply(text, spans).text == "피해자 A(A, 43세)를 상대로 전화하였다. A는 돈을 보냈다."
    text = "피해자 이헐나(여, 43세)는 '반도' 식당에서 일한다."
    spans = [ScoredSpan(4, 6, NAME, 0.9, "model"), ScoredSpan(text.index("반"), text.index("반") + 1, NAME, 0.9, "model")]
    assert deid.apply(text, spans).text == "피해자 A(여, 43세)는 'B' 식당에서 일한다."
    # a reviewer's span is replaced as the reviewer drew it
    text = "피해자 강요가에게 돈을 빌렸다."
    assert deid.apply(text, spans_of(text, "강요", source="reviewer")).text == "피해자 A가에게 돈을 빌렸다."


def test_placeholder_letters_never_coincide_with_detected_text(deid: Deidentifier) -> None:
    text = "피고인 A는 피해자 B에게 C에서 만났다. 피고인 홍길동은"
    result = deid.apply(text, spans_of(text, "A", "B", "C", "홍길동"))
    assert [s.placeholder for s in result.spans] == ["D", "E", "F", "G"]
    assert result.text == "피고인 D는 피해자 E에게 F에서 만났다. 피고인 G는"


def test_overlapping_spans_merge_and_recognizers_join() -> None:
    deid = Deidentifier()  # all built-in recognizers
    text = "홍길동(900101-1234568, 010-1234-5678)은 kim@example.com으로 연락하였다."
    model = [first_span(text, "홍길동"), ScoredSpan(4, 10, "출생연도", 0.4, "model")]  # part of the RRN
    assert deid(text).text == "홍길동(A, B)은 C로 연락하였다."  # recognizers only
    result = deid.apply(text, model + recognize(text, deid.recognizers))
    assert result.text == "A(B, C)는 D로 연락하였다."  # the particle agrees with A, before the parenthesis
    rrn = result.spans[1]
    assert (rrn.text, rrn.label, rrn.source) == ("900101-1234568", "주민등록번호", "resident_registration_number")
    merged = deid.apply(text, model + [ScoredSpan(4, 18, "주민등록번호", 0.95, "resident_registration_number")])
    assert [(s.text, s.label, s.source) for s in merged.spans] == [
        ("홍길동", NAME, "model"), ("900101-1234568", "주민등록번호", "resident_registration_number"),
    ]  # fmt: skip
    assert merged.text == "A(B, 010-1234-5678)는 kim@example.com으로 연락하였다."  # only the given spans


def test_operators_in_the_pipeline() -> None:
    text = "피고인 홍길동은 피해자 김철수를 때렸다."
    spans = spans_of(text, "홍길동", "김철수")
    assert Deidentifier(recognizers=[], operator="tag").apply(text, spans).text == (
        "피고인 [내국인이름]은 피해자 [내국인이름]을 때렸다."
    )
    assert Deidentifier(recognizers=[], operator="mask").apply(text, spans).text == "피고인 ***은 피해자 ***를 때렸다."
    surrogate = Deidentifier(recognizers=[], operator="surrogate").apply(text, spans).text
    assert "홍길동" not in surrogate and "김철수" not in surrogate and surrogate.endswith("때렸다.")


def test_nothing_detected_and_empty(deid: Deidentifier) -> None:
    assert deid("") == DeidResult("", ())
    assert deid(FILLER) == DeidResult(FILLER, ())
    # spaces around a span are trimmed; a span without a letter or digit is dropped
    result = deid.apply("  a  ", [ScoredSpan(1, 4, NAME, 1.0, "model"), ScoredSpan(3, 5, NAME, 1.0, "model")])
    assert [(s.start, s.end) for s in result.spans] == [(2, 3)] and result.text == "  A  "


def test_recognizers_alone_leave_judgment_text_alone() -> None:
    text = "서울중앙지방법원 2020고단1234 사기\n피고인은 2021. 3. 4. 피해자로부터 1,000,000원을 송금받아 형법 제347조 제1항을 위반하였다."
    assert Deidentifier()(text).text == text


def test_many_entities_in_a_long_document(deid: Deidentifier) -> None:
    names = [chr(0xAC00 + 7 * i) + chr(0xAC00 + 13 * i + 5) + chr(0xAC00 + 3 * i + 900) for i in range(60)]
    text = "".join(f"{i}. 피고인 {names[i % 60]}은 ID{i % 60}와 A{i % 7} 만났다.\n" for i in range(600))
    spans = [first_span(text, name) for name in names] + [first_span(text, f"ID{i}", "아이디") for i in range(60)]
    result = deid.apply(text, spans)
    assert len(result.spans) == 1200  # every further mention found
    check_invariants(text, result)
    keys = [entity_key(s.text) for s in result.spans]
    # the one-pass search for many keys agrees with the per-key regular expressions
    per_key = sorted((m.start(), m.end(), k) for k in set(keys) for m in _key_pattern(k).finditer(text))
    assert find_keys(text, keys) == per_key
    assert "ID1" not in result.text and "ID10와" not in result.text and "A1 만났다" in result.text


# ----------------------------------------------------------------------------------------------- address spellings


@pytest.mark.parametrize(
    "spellings, rest",
    [
        (("서울특별시", "서울시", "서울"), "강남구 역삼동 123"),
        (("부산광역시", "부산시", "부산"), "해운대구 우동 45-6"),
        (("경기도", "경기"), "성남시 분당구 정자동 12"),
        (("충청북도", "충북"), "청주시 상당구 용암동 7"),
        (("전라남도", "전남"), "여수시 학동 88"),
        (("제주특별자치도", "제주도", "제주"), "서귀포시 중문동 3"),
        (("세종특별자치시", "세종시", "세종"), "보람동 654"),  # 세종 has no city or county, only 읍/면/동
        (("서울특별시", "서울시", "서울"), "테헤란로 152"),  # a road and its number right after the province
        (("강원특별자치도", "강원도", "강원"), "춘천시 효자동 9"),
        (("전북특별자치도", "전라북도", "전북"), "전주시 완산구 중앙동 1"),
    ],
)
def test_address_spellings_are_one_entity_and_propagate(whole_addresses: Deidentifier, spellings, rest) -> None:
    written = [f"{province} {rest}" for province in spellings]
    text = "피고인은 " + "에 살았고, 피해자는 ".join(written) + "에서 만났다."
    result = whole_addresses.apply(text, [first_span(text, written[0], "주소")])  # detected under one spelling only
    assert result.text == "피고인은 " + "에 살았고, 피해자는 ".join("A" * len(spellings)) + "에서 만났다."
    assert [s.source for s in result.spans] == ["model"] + ["propagated"] * (len(spellings) - 1)
    check_invariants(text, result)
    detected = whole_addresses.apply(text, spans_of(text, *written, label="주소"))  # detected under every spelling
    assert {s.placeholder for s in detected.spans} == {"A"} and detected.text == result.text
    published = Deidentifier(recognizers=[]).apply(text, [first_span(text, written[0], "주소")])
    assert {s.placeholder for s in published.spans} == {"A"}  # by default, the rest below the published levels
    assert not any(c.isdigit() for c in published.text) and published.text.count("A") == len(spellings)


def test_address_spellings_found_among_many_keys() -> None:
    names = [chr(0xAC00 + 7 * i) + chr(0xAC00 + 13 * i + 5) + chr(0xAC00 + 3 * i + 900) for i in range(40)]
    text = " ".join(names) + " 서울특별시 강남구 역삼동 123, 서울시 강남구역삼동 123, 서울 강남구 역삼동 123."
    key = entity_key("서울 강남구 역삼동 123")
    assert key == entity_key("서울특별시 강남구 역삼동 123") == entity_key("서울시강남구 역삼동 123") == "서울특별시강남구역삼동123"
    few = find_keys(text, [key])
    assert [text[a:b] for a, b, _ in few] == ["서울특별시 강남구 역삼동 123", "서울시 강남구역삼동 123", "서울 강남구 역삼동 123"]
    assert [f for f in find_keys(text, [*names, key]) if f[2] == key] == few  # the one-pass search for many keys


@pytest.mark.parametrize(
    "text",
    ["서울", "서울특별시", "경기도중", "경기도 중", "광주시 오포읍 신현리 12", "부산진구 서면로 12", "제주시 연동 12",
     "서울중앙지방법원", "부산은행", "서울 목동", "대구지방법원 서부지원", "서울시민생활협동조합", "서울동구로초등학교"],
)  # fmt: skip
def test_a_province_name_is_normalised_only_before_a_lower_unit(text: str) -> None:
    assert entity_key(text) == re.sub(r"\s", "", text)  # a person, a court, 광주시 of 경기도, 부산진구: as written


def test_a_province_alone_does_not_spread_to_its_other_spellings(whole_addresses: Deidentifier) -> None:
    text = "피해자는 서울특별시에 살았다. 그 무렵 서울 시내에서 서울시청 직원 경기를 만났고 경기도중 다쳤다."
    spans = [first_span(text, "서울특별시", "주소"), first_span(text, "경기", NAME)]
    result = whole_addresses.apply(text, spans)
    assert result.text.startswith("피해자는 A에 살았다. 그 무렵 서울 시내에서 서울시청 직원 B를")  # 서울 stays
    check_invariants(text, result)
    published = Deidentifier(recognizers=[]).apply(text, spans)  # by default a lone province is published,
    assert published.text.startswith("피해자는 서울특별시에 살았다. 그 무렵 서울 시내에서 서울시청 직원 A를")  # not 경기


def test_a_short_number_found_by_the_model_does_not_spread(deid: Deidentifier) -> None:
    text = "피고인은 2011. 11. 1. 서울 마포구 11동에서 1102-33445호 계약서를 썼고, 11월에 1102-33445호를 다시 썼다."
    short = ScoredSpan(text.index("11동"), text.index("11동") + 2, "주소", 0.95, "model")
    result = deid.apply(text, [short])
    assert result.text.startswith("피고인은 2011. 11. 1. 서울 마포구 A동에서") and "11월" in result.text  # 11 stays
    long = first_span(text, "1102-33445", "계좌번호")  # six characters or more: spreads like any other span
    result = deid.apply(text, [long])
    assert "1102-33445" not in result.text and result.text.count("A호") == 2
    check_invariants(text, result)


def test_a_general_noun_found_by_the_model_does_not_spread(deid: Deidentifier) -> None:
    text = "원고는 왜곡된 보도라고 주장하나, 피고의 왜곡 보도는 없었다. 홍길동은 왜곡을 부인하고 김영수는 홍길동을 만났다."
    spans = [first_span(text, "왜곡", NAME), first_span(text, "홍길동", NAME)]
    result = deid.apply(text, spans)
    assert result.text == "원고는 A된 보도라고 주장하나, 피고의 왜곡 보도는 없었다. B는 왜곡을 부인하고 김영수는 B를 만났다."
    check_invariants(text, result)
    spreading = Deidentifier(recognizers=[], policy=PublicationPolicy(genre_words=False)).apply(text, spans)  # no list: every word spreads
    assert "왜곡" not in spreading.text


def test_a_text_the_detection_took_at_few_of_its_occurrences_does_not_spread(deid: Deidentifier) -> None:
    text = "피고인 홍길동은 저축은행 대표였다. " + "예금자는 저축은행에 돈을 맡겼다. " * 10 + "홍길동은 김영수를 만났다."
    bank, name = first_span(text, "저축은행", "금융회사"), first_span(text, "홍길동", NAME)
    result = deid.apply(text, [bank, name])  # 저축은행 taken at 1 of 11 occurrences, 홍길동 at 1 of 2
    assert result.text.count("저축은행") == 10 and "홍길동" not in result.text
    check_invariants(text, result, [bank, name])
    again = text.index("저축은행에")
    taken_twice = deid.apply(text, [bank, name, dataclasses.replace(bank, start=again, end=again + 4)])
    assert "저축은행" not in taken_twice.text  # 2 of 11: over the default share, spreads
    everywhere = Deidentifier(recognizers=[], policy=PublicationPolicy(propagate_share=0)).apply(text, [bank, name])
    assert "저축은행" not in everywhere.text
    recognized = deid.apply(text, [dataclasses.replace(bank, source="phone_number")])  # a recognizer's span always spreads
    assert "저축은행" not in recognized.text


def _scores(text: str, *evidence: tuple[str, int, float]) -> list[float]:
    """Per-character model scores: 0 everywhere but the ``(word, occurrence, score)`` given."""
    scores = [0.0] * len(text)
    for word, occurrence, score in evidence:
        start = [m.start() for m in re.finditer(re.escape(word), text)][occurrence]
        scores[start : start + len(word)] = [score] * len(word)
    return scores


def test_a_detected_text_never_spreads_inside_a_longer_word(deid: Deidentifier) -> None:
    """Issue 66: the nickname 신호, a dictionary noun the model or a reviewer took, is replaced where it is a word
    (with its particles), never inside 신호등, 신호대기, 신호위반; a recognizer's text (an identifier by its
    pattern or place) spreads between the nouns of a compound (홍길동피고인), never into a cut morpheme (신호등)."""
    text = "피고인은 별명이 신호인 사람을 신호등 앞에서 만났다. 신호는 신호대기 중이었고 신호위반 등으로 입건되었다. 신호의 차."
    scores = _scores(text, *(("신호", i, 0.9) for i in range(6)))
    for source in ("model", "reviewer"):
        span = dataclasses.replace(first_span(text, "신호"), source=source)
        result = deid.apply(text, [span], scores)
        assert result.text == "피고인은 별명이 A인 사람을 신호등 앞에서 만났다. A는 신호대기 중이었고 신호위반 등으로 입건되었다. A의 차.", source
        check_invariants(text, result, [span])
    recognized = deid.apply(text, [dataclasses.replace(first_span(text, "신호"), source="named_in_role")], scores)
    assert recognized.text == "피고인은 별명이 A인 사람을 신호등 앞에서 만났다. A는 A대기 중이었고 A위반 등으로 입건되었다. A의 차."
    glued = "피고인 홍길동은 홍길동피고인과 김철수를 만났다. 증인 김철이 왔다."
    name, other = ScoredSpan(4, 7, NAME, 1.0, "named_in_role"), glued.rindex("김철")
    spans = [name, ScoredSpan(other, other + 2, NAME, 1.0, "named_in_role")]
    assert deid.apply(glued, spans).text == "피고인 A는 A피고인과 김철수를 만났다. 증인 B가 왔다."


def test_a_model_text_spreads_into_a_compound_only_as_a_name_does(deid: Deidentifier) -> None:
    """Issue 66: the model's common vocabulary (a known place) spreads only to words of its own (캄보디아어 stays),
    a compound of it with a proper noun also before a noun of its own (부산은행통장), one of common nouns not
    (신원보증계약);
    no text spreads glued to the word before it (대출이자율, 사원상호간), but after a role word (증인김영수); a name,
    as a table or an old decision writes it, also glued to the noun after it (이진경앞으로, 김영수피고인), never
    into a cut morpheme (김영수진); a number and its counter only as a word of its own (3개사, 350호상)."""
    text = ("이자율은 연 8%이고 대출이자율은 20%이다. 캄보디아에서 캄보디아어로 썼다. 이진경은 이진경앞으로 등기하였다."
            " 부산은행에서 부산은행통장을 만들었다. 신원보증은 신원보증계약과 다르다.")
    spans = [first_span(text, "이자율", "번호"), first_span(text, "캄보디아", "해외주소"), first_span(text, "이진경"),
             first_span(text, "부산은행", "은행"), first_span(text, "신원보증", "기업명")]
    scores = [0.9] * len(text)
    result = deid.apply(text, spans, scores)
    assert result.text == ("A는 연 8%이고 대출이자율은 20%이다. B에서 캄보디아어로 썼다. C는 C앞으로 등기하였다."
                           " D에서 D통장을 만들었다. E는 신원보증계약과 다르다.")
    check_invariants(text, result, spans, scores=scores)
    glued = "피고인 김영수는 김영수피고인과 김영수진, 증인김영수, 그김영수를 만났다."
    for source in ("model", "named_in_role"):
        name = dataclasses.replace(first_span(glued, "김영수"), source=source)
        result = deid.apply(glued, [name], [0.9] * len(glued))
        assert result.text == "피고인 A는 A피고인과 김영수진, 증인A, 그김영수를 만났다.", source
    counted = "SPC 3개는 3개사와 달리 3개를 두었고 350호는 350호상의 구조물이다."  # a number and its counter
    spans = [first_span(counted, "3개", "기업명"), first_span(counted, "350호", "호실")]
    result = deid.apply(counted, spans, [0.9] * len(counted))
    assert result.text == "SPC A는 3개사와 달리 A를 두었고 B는 350호상의 구조물이다."


def test_a_dictionary_noun_spreads_only_where_the_model_gives_it_some_probability(deid: Deidentifier) -> None:
    """Issue 66: a model span on a common noun (조합원) spreads to the occurrences the model scores at least
    ``propagate_evidence``; a name spreads everywhere it is a word; without scores (a reviewer's re-apply) as before."""
    text = "조합원 김영수는 조합원들에게 말했다. 조합원은 김영수를 믿었다. 조합원의 권리."
    spans = [first_span(text, "조합원", "단체명"), first_span(text, "김영수")]
    scores = _scores(text, ("조합원", 0, 0.6), ("조합원", 2, 0.2), ("김영수", 0, 0.9))
    result = deid.apply(text, spans, scores)
    assert result.text == "A B는 조합원들에게 말했다. A는 B를 믿었다. 조합원의 권리."
    assert [s.source for s in result.spans] == ["model", "model", "propagated", "propagated"]
    check_invariants(text, result, spans, scores=scores)
    strict = Deidentifier(recognizers=[], policy=PublicationPolicy(propagate_evidence=0.3))
    assert strict.apply(text, spans, scores).text.count("조합원") == 3
    assert "조합원" not in Deidentifier(recognizers=[], policy=PublicationPolicy(propagate_evidence=0)).apply(
        text, spans, scores).text
    assert "조합원" not in deid.apply(text, spans).text  # no model output known: spreads as a reviewer's span does


def test_common_vocabulary_spreads_by_evidence_and_a_name_the_dictionary_does_not_know_everywhere(
    deid: Deidentifier,
) -> None:
    """Issue 66: a model span Mecab-ko reads as common words (a compound noun, a known place) spreads only where the
    model scores it; a name read as one-syllable pieces (정미|하) spreads everywhere, evidence or not."""
    text = "계열은행 정미하는 계열은행에서 일했다. 캄보디아에서 정미하를 만났다. 계열은행과 캄보디아 그리고 정미하."
    spans = [first_span(text, "계열은행", "기업명"), first_span(text, "정미하"), first_span(text, "캄보디아", "해외주소")]
    scores = _scores(text, ("계열은행", 0, 0.6), ("계열은행", 1, 0.2), ("정미하", 0, 0.9), ("캄보디아", 0, 0.7))
    result = deid.apply(text, spans, scores)
    assert result.text == "A B는 A에서 일했다. C에서 B를 만났다. 계열은행과 캄보디아 그리고 B."
    check_invariants(text, result, spans, scores=scores)


def test_a_found_persons_name_never_survives_as_a_word(deid: Deidentifier, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 79: a text replaced as a person's name is replaced at every occurrence that is a word of its own, in a
    defined term's quotes too, whatever Mecab-ko reads (이주|이: common words), the model's score there or the span's
    own (under ``propagate_threshold``), and in text the policy keeps (a kept judge of the same name); glued inside a
    longer word it stays, and so does a compound of common nouns a model gave a person's label (``성전환자``). Should
    one stay all the same (propagation failing), the document fails in one line. ``spread_names`` false: as any
    text."""
    names = Deidentifier(recognizers=[], policy=PublicationPolicy(spread_names=True))
    text = "피고 조합원 공소외 이주이(이하 ‘공소외 이주이 등’이라 한다)는 항소하였다. 공소외 이주이 등의 항소와 이주이민자."
    spans = [dataclasses.replace(first_span(text, "이주이"), score=0.4)]
    scores = _scores(text, ("이주이", 0, 0.4))
    result = names.apply(text, spans, scores)
    assert result.text == "피고 조합원 공소외 A(이하 ‘공소외 A 등’이라 한다)는 항소하였다. 공소외 A 등의 항소와 이주이민자."
    check_invariants(text, result, spans, scores=scores)
    as_any_text = Deidentifier(recognizers=[], policy=PublicationPolicy(spread_names=False))
    assert as_any_text.apply(text, spans, scores).text.count("이주이") == 3
    compound = "원고 성전환자는 청구하였다. 성전환자의 성별 정정은 허가된다."
    found = [dataclasses.replace(first_span(compound, "성전환자"), score=0.9)]
    assert names.apply(compound, found, [0.0] * len(compound)).text == "원고 A는 청구하였다. 성전환자의 성별 정정은 허가된다."
    judged = "피고인 김영수는 항소하였다.\n판사 김영수"
    assert names.apply(judged, [first_span(judged, "김영수")], [0.9] * len(judged)).text == "피고인 A는 항소하였다.\n판사 A"
    with monkeypatch.context() as patch:
        patch.setattr(pipeline, "propagate", lambda text, spans, *rest: spans)  # a propagation that fails
        with pytest.raises(NameSurvives, match="the name replaced as A stays in clear at character 19"):
            names.apply(judged, [first_span(judged, "김영수")], [0.9] * len(judged))
    with pytest.raises(ValueError, match="spread_names must be true or false, got 1"):
        PublicationPolicy(spread_names=1)


def test_a_letter_spaced_court_in_a_heading_is_legal_text(deid: Deidentifier) -> None:
    """A judgment's heading spaces every syllable (서 울 중 앙 지 방 법 원): a model span over one of them is over the
    court's name, legal text, and dropped; a name after a letter-spaced role is still replaced."""
    text = "서 울 중 앙 지 방 법 원\n\n판 결\n\n피 고 인 김철수 (800101-1234567)\n"
    spans = [first_span(text, "앙"), first_span(text, "김철수")]
    result = deid.apply(text, spans, [0.9] * len(text))
    assert result.text.startswith("서 울 중 앙 지 방 법 원\n") and "김철수" not in result.text


def test_what_the_court_masked_is_not_replaced_again(deid: Deidentifier) -> None:
    """Issue 66: a model span over a court's masked entity and the common words naming it (□□사 납골당) is dropped,
    never spread; a masked name still goes through its recognizer."""
    text = "피고인은 □□사 납골당 사업을 하였고, □□사 납골당에 돈을 냈다. 최○○은 증언하였다."
    spans = [first_span(text, "□□사 납골당", "기업명")]
    assert deid.apply(text, spans, [0.9] * len(text)).text == text
    recognized = PipelineOptions(recognizers_only=True).build()(text)
    assert recognized.text == "피고인은 □□사 납골당 사업을 하였고, □□사 납골당에 돈을 냈다. A는 증언하였다."


def test_identifiers_spread_beside_digits_and_latin_letters(deid: Deidentifier) -> None:
    """Only a Hangul syllable joined to another makes an occurrence part of a longer word."""
    text = "전화 010-1234-5678로 연락하였고 010-1234-5678번으로도 걸었다. 김영수A 김영수1과"
    spans = [first_span(text, "010-1234-5678", "전화번호"), first_span(text, "김영수")]
    result = deid.apply(text, spans, [0.0] * len(text))
    assert "010-1234-5678" not in result.text and "김영수" not in result.text


_ALPHABET = list("홍길동김철수이가은는을를과와로으의 AB12-.\n")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(alphabet=_ALPHABET, max_size=60),
    raw=st.lists(st.tuples(st.integers(0, 60), st.integers(1, 8), st.sampled_from([NAME, "주소", "아이디"]),
                           st.sampled_from([(0.5, "model"), (0.9, "model"), (0.6, "phone_number")])), max_size=6),
)  # fmt: skip
def test_invariants_hold_for_any_spans(text: str, raw: list[tuple[int, int, str, tuple[float, str]]]) -> None:
    spans = [ScoredSpan(min(s, len(text)), min(s + n, len(text)), label, score, source)
             for s, n, label, (score, source) in raw]  # fmt: skip
    result = Deidentifier(recognizers=[]).apply(text, spans)
    check_invariants(text, result, spans)


# ----------------------------------------------------------------------------------------------- with a model


def test_long_document_windows_lose_nothing(tokenizer, label_set: LabelSet) -> None:
    text = "".join(f"{i}번째 문장에서 피고인 홍길동은 {FILLER}" for i in range(40))
    encoding = tokenizer.encode(text)
    positive = {
        i for i, (s, e) in zip(encoding.ids, encoding.offsets) if "홍길동" in text[s - 2 : e + 2] and text[s:e] in "홍길동"
    }
    model = KeywordModel(tokenizer.vocab_size, len(label_set), positive, label_set.inside_id(NAME))
    deid = Deidentifier(model, tokenizer, label_set, recognizers=[], max_length=32, stride=8, batch_size=5)
    assert len(deid.windows([text])) > 20
    (prediction,) = deid.predict_tokens([text])
    assert prediction.offsets == encoding.offsets  # every token exactly once, in order
    result = deid(text)
    assert result.text == text.replace("홍길동은", "A는")
    assert sum(s.source == "model" for s in result.spans) == 40
    check_invariants(text, result)
    # the same text in one window gives the same tags (the fake model ignores context)
    whole = Deidentifier(model, tokenizer, label_set, recognizers=[], max_length=len(encoding.ids) + 2, stride=0)
    assert whole.predict_tokens([text])[0].tags == prediction.tags


def test_threshold_decides_uncertain_tokens(tokenizer, label_set: LabelSet) -> None:
    text = "피고인 홍길동은 " + FILLER
    encoding = tokenizer.encode(text)
    positive = {i for i, (s, e) in zip(encoding.ids, encoding.offsets) if text[s:e] in "홍길동"}
    model = KeywordModel(tokenizer.vocab_size, len(label_set), positive, label_set.inside_id(NAME))
    with torch.no_grad():  # the name's tokens: O and the name tag equally likely, so 1 - P(O) is just above 0.5
        model.table.weight[sorted(positive), label_set.inside_id(NAME)] = 10.0
    default = Deidentifier(model, tokenizer, label_set, recognizers=[])
    assert default(text).text == text.replace("홍길동은", "A는")
    strict = Deidentifier(model, tokenizer, label_set, recognizers=[], operating_point=OperatingPoint(0.6))
    assert strict(text).text == text
    with pytest.raises(ValueError, match="threshold must lie strictly between 0 and 1, got 1"):
        Deidentifier(model, tokenizer, label_set, operating_point=OperatingPoint(1))


def test_grow_threshold_replaces_a_word_the_model_marks_in_part(tokenizer, label_set: LabelSet) -> None:
    text = "피해자 박초시을 폭행하였다. " + FILLER  # a name the tokenizer never saw: several tokens
    encoding = tokenizer.encode(text)
    name = [(token, s) for token, (s, e) in zip(encoding.ids, encoding.offsets) if 4 <= s < 7]
    assert len(name) >= 2, "the test needs a name split into several tokens"
    (first, _), rest = name[0], [token for token, _ in name[1:] if token != name[0][0]]
    model = KeywordModel(tokenizer.vocab_size, len(label_set), {first}, label_set.inside_id(NAME))
    with torch.no_grad():  # the rest of the name: 1 - P(O) about 0.3, below the threshold of 0.5
        model.table.weight[rest, label_set.inside_id(NAME)] = 10 - 0.85
    plain = Deidentifier(model, tokenizer, label_set, recognizers=[], operating_point=OperatingPoint(grow_threshold=None))
    assert plain(text).text != text.replace("박초시을", "A를")  # only part of the name is replaced: a leak
    grown = Deidentifier(model, tokenizer, label_set, recognizers=[], operating_point=OperatingPoint(grow_threshold=0.2))
    assert grown(text).text == text.replace("박초시을", "A를")  # whole name; the particle stays out and is fixed
    assert Deidentifier(model, tokenizer, label_set, recognizers=[], operating_point=OperatingPoint(grow_threshold=0.4))(text).text == plain(text).text
    assert Deidentifier(model, tokenizer, label_set, recognizers=[])(text).text == grown(text).text  # the default
    # above the threshold, growing is the threshold's own rule: nothing more
    assert Deidentifier(model, tokenizer, label_set, recognizers=[], operating_point=OperatingPoint(grow_threshold=0.9))(text).text == plain(text).text
    assert PipelineOptions(recognizers_only=True, grow_threshold=0.2).build().operating_point.grow_threshold == 0.2
    for bad in (0, 1, True):
        with pytest.raises(ValueError, match="grow_threshold must lie strictly between 0 and 1"):
            Deidentifier(model, tokenizer, label_set, operating_point=OperatingPoint(grow_threshold=bad))


def test_a_particle_mecab_keeps_with_a_rare_syllable_stays_out(tokenizer, label_set: LabelSet) -> None:
    text = "피해자 김철냘에 대하여 " + FILLER  # Mecab: 김철 | 냘에 (one unknown morpheme)
    encoding = tokenizer.encode(text)
    name = {token for token, (s, e) in zip(encoding.ids, encoding.offsets) if 4 <= s and e <= 7}
    assert (7, 8) in encoding.offsets, "the test needs 에 as a token of its own"
    model = KeywordModel(tokenizer.vocab_size, len(label_set), name, label_set.inside_id(NAME))
    for grow in (None, 0.1):
        deid = Deidentifier(model, tokenizer, label_set, recognizers=[], operating_point=OperatingPoint(grow_threshold=grow))
        assert deid(text).text == text.replace("김철냘에", "A에")  # widened to the morpheme, not over its particle


@pytest.fixture(scope="module")
def tiny_model(tokenizer, label_set: LabelSet):
    return build_tiny_model(tokenizer, label_set)


def test_random_deberta_pipeline(tokenizer, label_set: LabelSet, tiny_model) -> None:
    deid = Deidentifier(tiny_model, tokenizer, label_set, max_length=24, stride=6, batch_size=3)
    texts = ["", FILLER * 5 + "주민등록번호 900101-1234568", "피고인 홍길동은 김철수에게 전화하였다."]
    results = deid.deidentify_batch(texts)
    assert results[0] == DeidResult("", ())
    assert "900101-1234568" not in results[1].text
    for text, result in zip(texts, results):
        check_invariants(text, result)
        assert deid(text) == result  # batching does not change the result
        assert all(s.label in label_set.taxonomy.labels for s in result.spans)


def test_from_pretrained_matches_the_model_in_memory(tmp_path: Path, capsys) -> None:
    export = write_tiny_export(tmp_path / "export")
    deid = Deidentifier.from_pretrained(export, max_length=16, stride=4)
    from transformers import AutoModelForTokenClassification

    same = Deidentifier(AutoModelForTokenClassification.from_pretrained(export), deid.tokenizer, deid.label_set,
                        max_length=16, stride=4)  # fmt: skip
    text = FILLER * 3 + "피고인 홍길동은 010-1234-5678로 전화하였다."
    result = deid(text)
    assert result == same(text) and "010-1234-5678" not in result.text
    check_invariants(text, result)
    source = tmp_path / "doc.txt"
    source.write_text(text, encoding="utf-8")
    code, stdout, _ = run(capsys, model=str(export), inputs=[str(source)], max_length=16, stride=4)
    assert (code, stdout) == (0, result.text)


# ----------------------------------------------------------------------------------------------- the command


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("연락처 010-1234-5678로 전화하였다.\n", encoding="utf-8")
    (root / "sub" / "b.md").write_text("메일 kim@example.com 끝", encoding="utf-8")
    (root / "skip.csv").write_text("010-1234-5678", encoding="utf-8")
    (root / "empty.txt").write_text("", encoding="utf-8")
    return root


def run(capsys, **kwargs) -> tuple[int, str, str]:
    fields = {f.name for f in dataclasses.fields(PipelineOptions)}
    kwargs.setdefault("recognizers_only", "model" not in kwargs)  # the recognizers alone unless a model is named
    pipeline = PipelineOptions(**{k: kwargs.pop(k) for k in list(kwargs) if k in fields})
    try:
        deid_command(**kwargs, pipeline=pipeline)
        code = 0
    except SystemExit as error:
        code = error.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_command_directory_to_out_with_spans(inputs: Path, tmp_path: Path, capsys) -> None:
    out, spans = tmp_path / "out", tmp_path / "spans.jsonl"
    code, stdout, _ = run(capsys, inputs=[str(inputs)], out=str(out), spans=str(spans))
    assert code == 0 and stdout == ""
    assert (out / "a.txt").read_text(encoding="utf-8") == "연락처 A로 전화하였다.\n"
    assert (out / "sub" / "b.md").read_text(encoding="utf-8") == "메일 A 끝"
    assert (out / "empty.txt").read_text(encoding="utf-8") == ""
    assert not (out / "skip.csv").exists()
    assert not [p for p in out.rglob("*.tmp")]  # temporary files renamed
    records = [json.loads(line) for line in spans.read_text(encoding="utf-8").splitlines()]
    assert [(r["doc"].endswith("a.txt"), r["text"], r["label"], r["placeholder"], r["source"]) for r in records] == [
        (True, "010-1234-5678", "전화번호", "A", "phone_number"),
        (False, "kim@example.com", "이메일주소", "A", "email"),
    ]
    assert set(records[0]) == {"doc", "file", "start", "end", "text", "label", "category", "tier1", "placeholder",
                               "score", "source", "origin"}  # fmt: skip
    assert records[0]["file"] == "a.txt"
    assert records[0]["tier1"] == "direct" and 0 < records[0]["score"] <= 1


def test_command_single_file_and_stdin(inputs: Path, capsys, monkeypatch) -> None:
    code, stdout, _ = run(capsys, inputs=[str(inputs / "a.txt")])
    assert (code, stdout) == (0, "연락처 A로 전화하였다.\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("전화 010-1234-5678은".encode())))
    code, stdout, _ = run(capsys)
    assert (code, stdout) == (0, "전화 A는")


def test_command_jsonl(tmp_path: Path, capsys) -> None:
    source = tmp_path / "docs.jsonl"
    lines = [{"id": "d1", "text": "번호 010-1234-5678이다"}, {"id": "d2", "text": "없음"}]
    source.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n\n", encoding="utf-8")
    code, stdout, _ = run(capsys, inputs=[str(source)])
    assert code == 0
    records = [json.loads(line) for line in stdout.splitlines()]
    assert records == [{"id": "d1", "text": "번호 A다"}, {"id": "d2", "text": "없음"}]
    code, _, _ = run(capsys, inputs=[str(source)], out=str(tmp_path / "out"))
    written = (tmp_path / "out" / "docs.jsonl").read_text(encoding="utf-8").splitlines()
    assert code == 0 and [json.loads(line)["id"] for line in written] == ["d1", "d2"]


def test_command_bad_inputs_reported_others_processed(inputs: Path, tmp_path: Path, capsys) -> None:
    bad = inputs / "bad.txt"
    bad.write_bytes("정상 텍스트 ".encode() + b"\xff\xfe" + "끝".encode())
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "ok", "text": "010-1234-5678"}\nnot json\n', encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = run(capsys, inputs=[str(inputs), str(broken)], out=str(out))
    assert code == 1
    assert f"{bad}: not valid UTF-8 at byte 17 (invalid start byte)\n" in err  # no encoding it reads as
    assert f"{broken}:2: bad JSONL record" in err
    assert "4 written, 2 failed, of 6 documents" in err
    assert (out / "in" / "a.txt").read_text(encoding="utf-8") == "연락처 A로 전화하였다.\n"  # the inputs' layout
    assert not (out / "in" / "bad.txt").exists()
    assert json.loads((out / "broken.jsonl").read_text(encoding="utf-8")) == {"id": "ok", "text": "A"}
    code, _, err = run(capsys, inputs=[str(inputs), str(tmp_path / "missing.txt")], out=str(out))
    assert "missing.txt: no such file or directory" in str(code) and "written" not in err  # refused before any work


def test_command_line_entry_point(inputs: Path, capsys) -> None:
    from thunder.cli import main

    main(["deid", "--recognizers_only", str(inputs / 'a.txt'), "--operator", "tag"])
    assert capsys.readouterr().out == "연락처 [전화번호]로 전화하였다.\n"


def test_a_cp949_file_is_refused_with_the_command_that_converts_it(tmp_path: Path, capsys) -> None:
    legacy = tmp_path / "legacy.txt"
    legacy.write_bytes("피고인 홍길동의 연락처는 010-1234-5678이다.".encode("cp949"))
    code, _, err = run(capsys, inputs=[str(legacy)], out=str(tmp_path / "out"))
    assert code == 1 and not (tmp_path / "out" / "legacy.txt").exists()
    assert f"{legacy}: not valid UTF-8 at byte 0 (invalid continuation byte); it reads as CP949 (EUC-KR): " \
           "convert it first, e.g. iconv -f cp949 -t utf-8" in err


@pytest.mark.parametrize(
    ("text", "words", "expected"),
    [
        ("홍길동(주민등록번호 900101-1234568)은 말했다", ["홍길동", "900101-1234568"], "A(주민등록번호 B)는 말했다"),
        ("홍길동(남, 35세)은 말했다", ["홍길동"], "A(남, 35세)는 말했다"),
        ("홍길동(김철수의 형)을 만났다", ["홍길동", "김철수"], "A(B의 형)를 만났다"),
    ],
)
def test_the_particle_after_a_parenthetical_agrees_with_the_replacement_before_it(
    text: str, words: list[str], expected: str
) -> None:
    result = Deidentifier(recognizers=[]).apply(text, spans_of(text, *words, source="reviewer"))
    assert result.text == expected


# ----------------------------------------------------------------------------------------------- reviewed spans
# (issue 56): an edit never touches text the clerk did not select

REVIEWABLE = ("신호", "홍길동", "김영희")
OTHER_WORDS = ("신호등", "신호대기", "교통신호", "피고인", "피해자", "교차로", "정차")
PARTICLES = ("", "이", "가", "은", "는", "을", "를", "의", "에게", "와", "과", "씨는")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(REVIEWABLE + OTHER_WORDS), st.sampled_from(PARTICLES)), min_size=1,
                max_size=14), st.data())  # fmt: skip
def test_reviewed_spans_change_only_whole_word_occurrences_of_their_text(words, data) -> None:
    from thunder.language.morphemes import whole_word

    text, starts = "", []
    for word, particle in words:
        starts.append(len(text))
        text += word + particle + " "
    reviewable = [i for i, (word, _) in enumerate(words) if word in REVIEWABLE]
    chosen = data.draw(st.lists(st.sampled_from(reviewable), unique=True)) if reviewable else []
    reviewed = [ScoredSpan(starts[i], starts[i] + len(words[i][0]), "내국인이름", 1.0, "reviewer") for i in chosen]
    result = Deidentifier(recognizers=[]).apply(text, reviewed)
    keys = {words[i][0] for i in chosen}
    found = {(s.start, s.end) for s in result.spans}
    assert {text[s.start : s.end] for s in result.spans} <= keys
    assert all(whole_word(text, s.start, s.end) for s in result.spans)  # never inside 신호등, 신호대기, 교통신호
    expected = {(m.start(), m.end()) for key in keys for m in re.finditer(re.escape(key), text)
                if whole_word(text, m.start(), m.end())}  # fmt: skip
    assert found == expected  # and every whole-word occurrence of what was reviewed
    for word in OTHER_WORDS:
        assert result.text.count(word) == text.count(word) - sum(
            text[s.start : s.end] == word for s in result.spans
        ), word  # the words nobody selected are all still there


def test_a_range_a_reviewer_kept_stays_as_written(deid: Deidentifier) -> None:
    """Issue 67: ``rejected`` ranges (occurrences a reviewer rejected) are never replaced by spreading, and the output
    keeps them while the same text is replaced elsewhere."""
    text = "홍길동은 홍길동 선생의 책을 읽었다. 홍길동이 말했다."
    second = text.index("홍길동", 1)
    spans = [ScoredSpan(0, 3, NAME, 1.0, "reviewer")]
    assert deid.apply(text, spans).text == "A는 A 선생의 책을 읽었다. A가 말했다."
    result = deid.apply(text, spans, rejected=[(second, second + 3)])
    assert result.text == "A는 홍길동 선생의 책을 읽었다. A가 말했다."
    assert [(s.start, s.source) for s in result.spans] == [(0, "reviewer"), (text.rindex("홍길동"), "propagated")]
