"""Final-consonant rules and particle agreement."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thunder.language.particles import (
    PARTICLE_RUN,
    agrees,
    ends_with_rieul,
    final_consonant,
    final_particles,
    fix_particle,
    has_final_consonant,
    leading_particle,
    particle_length,
    trailing_particle,
    written_into_word,
)


@pytest.mark.parametrize(
    ("text", "final", "rieul"),
    [
        ("홍길동", True, False),
        ("김철수", False, False),
        ("서울", True, True),
        ("박하늘", True, True),
        ("ㄱ", True, False),  # 기역
        ("ㄹ", True, True),  # 리을
        ("ㅏ", False, False),
        ("한빛(주)", False, False),  # brackets and quotes are not pronounced
        ("'김민준'", True, False),
        ("김민준  ", True, False),
        ("Ａ", False, False),  # full-width letters are normalised
        ("ＫＢ국민", True, False),
    ],
)
def test_hangul_and_jamo(text: str, final: bool, rieul: bool) -> None:
    assert has_final_consonant(text) is final
    assert ends_with_rieul(text) is rieul


@pytest.mark.parametrize(
    ("number", "final", "rieul"),
    [
        ("0", True, False),  # 영
        ("1", True, True),  # 일
        ("2", False, False),  # 이
        ("3", True, False),  # 삼
        ("4", False, False),  # 사
        ("5", False, False),  # 오
        ("6", True, False),  # 육
        ("7", True, True),  # 칠
        ("8", True, True),  # 팔
        ("9", False, False),  # 구
        ("10", True, False),  # 십
        ("12", False, False),  # 십이
        ("100", True, False),  # 백
        ("1000", True, False),  # 천
        ("3,000", True, False),  # 삼천
        ("10000", True, False),  # 만
        ("500000", True, False),  # 오십만
        ("100000000", True, False),  # 억
        ("1000000000000", False, False),  # 조
        ("1207", True, True),  # 천이백칠
        ("2.5", False, False),  # 이점오
        ("010-1234-5670", True, False),  # ...칠공 (or 칠십): consonant either way
        ("0010", True, False),  # read digit by digit: 공공일공
        ("제3", True, False),
        ("123가4567", True, True),
    ],
)
def test_numbers_are_read_in_korean(number: str, final: bool, rieul: bool) -> None:
    assert has_final_consonant(number) is final
    assert ends_with_rieul(number) is rieul


@pytest.mark.parametrize("letter", "ABCDEFGHIJKOPQSTUVWXYZ")
def test_latin_letters_without_final_consonant(letter: str) -> None:
    assert has_final_consonant(letter) is False
    assert has_final_consonant(letter.lower()) is False


@pytest.mark.parametrize(("letter", "rieul"), [("L", True), ("M", False), ("N", False), ("R", True)])
def test_latin_letters_with_final_consonant(letter: str, rieul: bool) -> None:
    assert has_final_consonant(letter) is True
    assert ends_with_rieul(letter) is rieul
    assert has_final_consonant(f"user_{letter.lower()}") is True


@pytest.mark.parametrize("text", ["", "  ", "漢字", "○○", "#", "%", "→", "()"])
def test_undecidable(text: str) -> None:
    assert has_final_consonant(text) is None
    assert ends_with_rieul(text) is None
    assert final_consonant(text) is None


@pytest.mark.parametrize(
    ("previous", "following", "expected"),
    [
        # 은/는
        ("홍길동", "는 피해자", "은 피해자"),
        ("김철수", "은 피해자", "는 피해자"),
        ("김철수", "는", "는"),
        ("A", "은,", "는,"),
        ("홍길동", "은커녕", "은커녕"),
        ("김철수", "은커녕", "는커녕"),
        # 이/가
        ("홍길동", "가 말했다", "이 말했다"),
        ("김철수", "이 말했다", "가 말했다"),
        ("M", "가", "이"),
        # 을/를
        ("홍길동", "를 때렸다", "을 때렸다"),
        ("김철수", "을 때렸다", "를 때렸다"),
        # 과/와
        ("홍길동", "와 함께", "과 함께"),
        ("김철수", "과의 관계", "와의 관계"),
        ("10", "와", "과"),
        # 으로/로, ㄹ takes 로
        ("홍길동", "로부터", "으로부터"),
        ("김철수", "으로부터", "로부터"),
        ("서울", "으로 갔다", "로 갔다"),
        ("박하늘", "으로서", "로서"),
        ("7", "으로", "로"),
        ("3", "로", "으로"),
        ("L", "으로써", "로써"),
        # 이라는/라는, 이라고/라고, 이나/나, 이며/며, 이랑/랑
        ("김철수", "이라는 사람", "라는 사람"),
        ("홍길동", "라는 사람", "이라는 사람"),
        ("김철수", "이라고 소개", "라고 소개"),
        ("홍길동", "라고는", "이라고는"),
        ("김철수", "이나 B", "나 B"),
        ("홍길동", "나 B", "이나 B"),
        ("김철수", "이며 ", "며 "),
        ("홍길동", "며,", "이며,"),
        ("김철수", "이랑 ", "랑 "),
        ("홍길동", "랑 ", "이랑 "),
        # vocative 아/야
        ("영희", "아,", "야,"),
        ("민준", "야!", "아!"),
        # copula
        ("김철수", "이다.", "다."),
        ("홍길동", "다.", "이다."),
        ("김철수", "이었다.", "였다."),
        ("홍길동", "였고 ", "이었고 "),
        ("김철수", "이에요", "예요"),
        ("홍길동", "예요", "이에요"),
        # after closing quotes the particle agrees with the quoted word; the quotes stay
        ("A", "'이라는 상호로", "'라는 상호로"),
        ("해오름한의원", "'라는", "'이라는"),
        ("B", "”은 ", "”는 "),
        ("한빛", "」을", "」을"),
    ],
)
def test_fix_particle(previous: str, following: str, expected: str) -> None:
    assert fix_particle(previous, following) == expected
    assert agrees(previous, expected.lstrip("'”」")) is True
    assert fix_particle(previous, expected) == expected


@pytest.mark.parametrize(
    ("previous", "following"),
    [
        ("김수", "이후에"),  # 이후 is a word, not 이 + 후
        ("홍길동", "가방을"),
        ("김민준", "로비에서"),
        ("홍길동", "다방에서"),
        ("김철수", "이미 "),
        ("홍길동", "나이가"),
        ("홍길동", "과장으로"),
        ("김철수", "은행 계좌"),
        ("홍길동", " 는"),  # a particle is written without a space
        ("홍길동", ""),
        ("홍길동", "에게"),  # 에게 has one form
        ("홍길동", "의"),
        ("○○", "는"),  # undecidable previous: unchanged
        ("", "는"),
    ],
)
def test_words_that_only_start_like_particles_are_untouched(previous: str, following: str) -> None:
    assert fix_particle(previous, following) == following


@pytest.mark.parametrize(
    ("following", "length"),
    [("이라는 상호", 3), ("'이라는 상호", 4), ("\"”가", 3), ("' 는", 0), ("'이후", 0), (")는", 0), ("", 0)],
)
def test_particle_length_counts_closing_quotes_before_a_particle(following: str, length: int) -> None:
    assert particle_length(following) == length


def test_trailing_particle() -> None:
    assert trailing_particle("냘라의") == "의"
    assert trailing_particle("수에게") == "에게"  # the longest, not 게
    assert trailing_particle("이라는") == "이라는"
    assert trailing_particle("냘라") == ""
    assert trailing_particle("배비이") == trailing_particle("엉가") == trailing_particle("서은") == ""  # name-final
    assert trailing_particle("") == ""
    assert PARTICLE_RUN.fullmatch("에게는") and PARTICLE_RUN.fullmatch("이랑") and not PARTICLE_RUN.fullmatch("가방")


@pytest.mark.parametrize(
    ("text", "span", "kept"),
    [
        ("피고인 정미래는 전화하였다", "정미래는", "정미래"),  # 는 agrees with 래
        ("피해자 이씨는 다투었다", "이씨는", "이씨"),
        ("피해자 홍길동에게는 말하였다", "홍길동에게는", "홍길동"),  # several particles
        ("홍길동이랑 만났다", "홍길동이랑", "홍길동"),
        ("피고인 홍길동이 말하였다", "홍길동이", "홍길동"),
        ("원고 최을의 청구", "최을의", "최을"),  # 을 after 최 would be 를: only 의 is a particle
        ("이별와의 집", "이별와의", "이별와"),  # 와 after 이별 would be 과
        ("이별와의 집", "이별와", "이별와"),
        ("성가이 명의", "성가이", "성가이"),  # 이 after 가 would be 가
        ("김서은 명의", "김서은", "김서은"),
        ("청주리버파크자이아파트", "청주리버파크자이", "청주리버파크자이"),  # the word goes on past particles
        ("경기도 수원시", "경기도", "경기도"),  # common last syllables of names and places, even agreeing
        ("세종대로 175", "세종대로", "세종대로"),
        ("을지로3가 12", "을지로3가", "을지로3가"),
        ("한빛신경과 의원", "한빛신경과", "한빛신경과"),
        ("김하랑 명의", "김하랑", "김하랑"),
        ("김유나 명의", "김유나", "김유나"),
        ("는 것", "는", "는"),  # something of the span remains
    ],
)
def test_final_particles_are_the_particles_after_a_span(text: str, span: str, kept: str) -> None:
    start = text.index(span)
    assert text[start : start + len(span) - final_particles(text, start, start + len(span))] == kept


def test_leading_particle() -> None:
    assert leading_particle("으로부터 돈을") == ("으로", ("으로", "로"))
    assert leading_particle("이었다.") == ("이었다", ("이었다", "였다"))
    assert leading_particle("이후") is None
    assert agrees("홍길동", "이후") is None
    assert agrees("○", "은") is None
    assert agrees("김철수", "은") is False


@pytest.mark.parametrize(
    ("text", "word", "grown"),
    [
        ("피해자 강요가에게 돈을 빌렸다", "강요", 1),  # 가 takes no particle after it: it is the name's
        ("김뉴가로부터 4,000원을", "김뉴", 1),
        ("원고와 최을의는 혼인하였다", "최", 2),  # 을 then 의 before 는: both letters are the name's
        ("최찬을과 협의하였다", "최찬", 1),
        ("최엥에와 통화를 해봐라", "최엥", 1),  # no 와 or 를 after 에: it is the name's
        ("최엥에를 돌려보내주겠다", "최엥", 1),
        ("학교에는 갔다", "학교", 0),  # 에 may take 는, 도, 만, 서, 게
        ("홍길동에게를", "홍길동", 0),  # 에게 is one particle
        ("피해자 이헐나(여, 43세)에게", "이헐", 1),  # the particle goes after the parenthetical
        ("'반도' 식당에서", "반", 1),  # and after the closing quote
        ("‘바다로’ 가게 앞", "바다", 1),
        ("피고인 홍길동이 말했다", "홍길동", 0),  # one particle: nothing shows it is not one
        ("홍길동에게는 말했다", "홍길동", 0),  # 에게 may take 는
        ("홍길동과의 관계", "홍길동", 0),
        ("홍길동이나 김철수", "홍길동", 0),  # 이나 is one particle
        ("홍길동이라는 사람", "홍길동", 0),
        ("'반도체' 공장", "반도", 0),  # the word goes on: no particle
        ("‘반도’라는 식당", "반", 1),
        ("'큰 반도' 식당", "반", 0),  # a quotation that does not open with the word
        ("홍길동이(가명) 말했다", "홍길", 0),  # 동이: two syllables before the parenthesis
        ("홍길동이(가) 말했다", "홍길동", 0),  # a form's choice of particle: 이(가), 을(를)
        ("홍길동은", "홍길동", 0),
    ],
)
def test_written_into_word_follows_the_writing(text: str, word: str, grown: int) -> None:
    start = text.index(word)
    assert written_into_word(text, start, start + len(word)) == grown


_SYLLABLES = st.integers(0xAC00, 0xD7A3).map(chr)


@given(st.text(_SYLLABLES, min_size=1, max_size=4))
def test_jongseong_decides(word: str) -> None:
    has_final = (ord(word[-1]) - 0xAC00) % 28 != 0
    assert has_final_consonant(word) is has_final
    assert fix_particle(word, "은 ") == ("은 " if has_final else "는 ")
    assert fix_particle(word, "를 ") == ("을 " if has_final else "를 ")
    assert agrees(word, fix_particle(word, "이 ")) is True


@given(st.integers(0, 10**15))
def test_every_number_is_decidable(number: int) -> None:
    assert has_final_consonant(str(number)) is not None
    assert has_final_consonant(f"{number:,}") == has_final_consonant(str(number))


@given(st.text(max_size=6), st.text(max_size=8))
def test_fix_changes_at_most_the_particle(previous: str, following: str) -> None:
    fixed = fix_particle(previous, following)
    found = leading_particle(following)
    if found is None:
        assert fixed == following
    else:
        assert fixed.endswith(following[len(found[0]) :])
        assert fixed[: len(fixed) - len(following) + len(found[0])] in found[1]
