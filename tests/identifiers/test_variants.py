"""Identifiers as a clerk may type them: full-width forms, dash and space variants, invisible characters, another
case. The recognizers match on a normalised view of the text and report spans of the original characters."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thunder.deid.recognizers.registry import load_recognizers, recognize
from thunder.identifiers import CATALOGUE
from thunder.identifiers.context import MentionContext
from thunder.identifiers.normalize import AT_WORDS, DASHES, DIGIT_DASHES, INVISIBLE, normal_view

ALL = load_recognizers()
RECOGNIZED = sorted(name for name, identifier in CATALOGUE.items() if identifier.recognizer)
SPACES = " \u00a0\u2002\u2009\u202f\u3000"  # the space, no-break, en, thin, narrow no-break, ideographic spaces
FULL_WIDTH = {chr(code): chr(code + 0xFEE0) for code in range(0x21, 0x7F)} | {" ": "\u3000"}


# ------------------------------------------------------------------------------------------------ the view


@settings(deadline=None)
@given(st.text(st.sampled_from("0123456789-@. 가나A" + DASHES + INVISIBLE + SPACES
                               + "".join(c for c in FULL_WIDTH.values() if c not in DIGIT_DASHES))))
def test_every_view_character_comes_from_the_original_characters_it_maps_to(text: str) -> None:
    """Character by character, but for what reads by its context (``～`` between digits is a dash, ``0～0`` ->
    ``0-0``; alone it is ``~``: :func:`test_a_dash_typed_between_digits_is_a_dash`)."""
    view = normal_view(text)
    assert "".join(normal_view(c).text for c in text) == view.text  # the view is character by character
    for position, char in enumerate(view.text):
        start, end = view.original_span(position, position + 1)
        assert normal_view(text[start:end]).text == char
    if view.text:
        start, end = view.original_span(0, len(view.text))
        assert normal_view(text[start:end]).text == view.text  # whole spans cover the invisible characters inside


def test_a_dash_typed_between_digits_is_a_dash() -> None:
    for dash in DIGIT_DASHES:  # ㅡ, ー, ~, 〜, ～ ...: a dash between digits only
        view = normal_view(f"0{dash}0")
        assert view.text == "0-0" and view.original_span(1, 2) == (1, 2), dash
        assert "-" not in normal_view(f"가{dash}가").text, dash


def test_the_view_keeps_hangul_and_enclosed_forms() -> None:
    text = "① ㈜한빛 ㎡ ² ﾊ ㄱ 한글 Ⅻ"
    assert normal_view(text).text == text  # no ASCII character of their own
    assert normal_view("０１０－１２３４\u200b－５６７８\u3000ｋｉｍ＠ｅｘａｍｐｌｅ．ｃｏｍ").text == "010-1234-5678 kim@example.com"


# ------------------------------------------------------------------------------------------------ variants


def _full_width(data: st.DataObject, mention: str) -> str:
    chosen = data.draw(st.lists(st.booleans(), min_size=len(mention), max_size=len(mention)))
    return "".join(FULL_WIDTH.get(c, c) if pick else c for c, pick in zip(mention, chosen))


def _dashes(data: st.DataObject, mention: str) -> str:
    return "".join(data.draw(st.sampled_from(DASHES)) if c == "-" else c for c in mention)


def _invisible(data: st.DataObject, mention: str) -> str:
    positions = data.draw(st.lists(st.integers(1, max(1, len(mention) - 1)), min_size=1, max_size=3))
    chars = list(mention)
    for position in sorted(positions, reverse=True):
        chars.insert(position, data.draw(st.sampled_from(INVISIBLE)))
    return "".join(chars)


def _spaces(data: st.DataObject, mention: str) -> str:
    """Spaces where a clerk types them: instead of the hyphens, around ``@``, after a passport's type letter,
    between digits and a plate's letter; any space written as one of its variants."""
    space = lambda: data.draw(st.sampled_from(SPACES))  # noqa: E731
    if data.draw(st.booleans()):  # every hyphen, in any form, becomes a space
        separator = space()
        mention = "".join(separator if normal_view(c).text == "-" else c for c in mention)
    mention = mention.replace("@", f"{space()}@{space()}")
    chars = []
    for i, char in enumerate(mention):
        previous = mention[i - 1] if i else ""
        between = previous.isdigit() and "가" <= char <= "힣" or "가" <= previous <= "힣" and char.isdigit()
        if between or i == 1 and previous.isalpha() and previous.isascii() and char.isdigit():
            chars.append(space())
        chars.append(space() if char == " " else char)
    return "".join(chars)


def _case(data: st.DataObject, mention: str) -> str:
    return mention.upper() if data.draw(st.booleans()) else mention.lower()


TRANSFORMS = {"full_width": _full_width, "dashes": _dashes, "invisible": _invisible, "spaces": _spaces,
              "case": _case}  # fmt: skip


def check_variant_is_replaced(name: str, seed: int, transforms: list[str], data: st.DataObject) -> None:
    recognizer = next(r for r in ALL if getattr(r, "identifier", None) == name)
    left = f"피고인의 {recognizer.context[0]} " if recognizer.context else "피고인의 "
    mention = CATALOGUE[name].generate(random.Random(seed), MentionContext(recognizer.label, ((left, " 입니다."),)))
    variant = mention
    for transform in transforms:
        variant = TRANSFORMS[transform](data, variant)
    text = f"{left}{variant} 입니다."
    visible = [len(left) + i for i, c in enumerate(variant) if c not in INVISIBLE]
    first, last = visible[0], visible[-1]
    spans = [s for s in recognize(text, ALL) if s.start <= last and first < s.end]
    covered = {i for s in spans for i in range(s.start, s.end)}
    assert set(range(first, last + 1)) <= covered, (variant, [(text[s.start : s.end], s.source) for s in spans])
    assert all(len(left) <= s.start and s.end <= len(left) + len(variant) for s in spans), variant


VARIANTS = dict(
    name=st.sampled_from(RECOGNIZED),
    seed=st.integers(0, 2**32 - 1),
    transforms=st.lists(st.sampled_from(sorted(TRANSFORMS)), min_size=1, max_size=3, unique=True),
    data=st.data(),
)


@settings(max_examples=150, deadline=None)
@given(**VARIANTS)
def test_every_generator_variant_is_replaced(name: str, seed: int, transforms: list[str], data) -> None:
    check_variant_is_replaced(name, seed, transforms, data)


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**VARIANTS)
def test_every_generator_variant_is_replaced_many(name: str, seed: int, transforms: list[str], data) -> None:
    check_variant_is_replaced(name, seed, transforms, data)


@pytest.mark.parametrize(
    ("text", "view"),
    [
        ("번호 900101-\n1234568 끝", "번호 900101-1234568 끝"),
        ("010-\r\n 1234", "010-1234"),
        ("hong(at)naver.com", "hong@naver.com"),
        ("hong [ at ] naver [dot] com", "hong@naver.com"),
        ("hong at naver dot com", "hong@naver.com"),
        ("010-1234-<br>\n5678", "010-1234-5678"),
        ("010-1234-\n\n5678", "010-1234-5678"),
        ("010ㅡ1234ー5678~9", "010-1234-5678-9"),
        ("blog.naver.\ncom/hong1234", "blog.naver.com/hong1234"),
        ("회의는 at 3 dot\n5 -", "회의는 at 3 dot\n5 -"),  # no address, no digit group: unchanged
        ("hong 골뱅이 naver 닷컴", "hong@naver.com"),  # a run written as one maps back whole
        ("hong골뱅이naver 점 com", "hong@naver.com"),
        ("hong 앳 naver 닷 컴", "hong@naver.com"),
        ("공일공 일이삼사 오육칠팔", "010 1234 5678"),
        ("영일영-일이삼사-오육칠팔", "010-1234-5678"),
    ],
)
def test_runs_of_characters_become_one_and_map_back_to_all_of_them(text: str, view: str) -> None:
    normal = normal_view(text)
    assert normal.text == view
    assert normal.original_span(0, len(view)) == (0, len(text))
    at = view.find("@")
    if at >= 0:  # the @ and the letter after it cover the whole written-out form
        start, end = normal.original_span(at, at + 2)
        assert text[start : end - 1].strip().strip("[]()").strip() in ("at", *AT_WORDS)
