"""Mecab-ko's readings: which words of a text are proper nouns, foreign letters, unknown words; particles after a name."""

from __future__ import annotations

import pytest

from thunder.language.morphemes import common_words, final_particles, tagged_chars


def flagged(text: str, *tags: str) -> list[str]:
    flags = tagged_chars(text, frozenset(tags))
    words, current = [], ""
    for char, flag in zip(text, flags):
        if flag:
            current += char
        elif current:
            words.append(current)
            current = ""
    return words + ([current] if current else [])


def test_tagged_chars_follow_the_part_of_speech_and_its_class() -> None:
    text = "증인 김철수는 서울에서 집행유예를 선고받았고 K3 승용차를 2023. 1. 5. 【이유】에 따라 팔았다."
    assert flagged(text, "NNP/인명") == ["김철수"]
    assert flagged(text, "NNP/지명") == ["서울"]
    assert "집행유예" in flagged(text, "NNP")  # the dictionary's compound terms are proper nouns without a class
    assert "집행유예" not in flagged(text, "NNP/인명", "NNP/지명")
    assert flagged(text, "UNKNOWN") == ["K"]  # an unknown word holds a letter: no number, no bracket
    assert flagged(text, "NNG/인명") == []
    assert flagged("", "NNP/인명") == []


@pytest.mark.parametrize(
    ("word", "kept"),
    [("김영은", "김영은"), ("이정은", "이정은"), ("박성은이", "박성은"), ("최영이", "최영이"), ("김영은은", "김영은"),
     ("정미래는", "정미래"), ("이씨는", "이씨"), ("윤서연은", "윤서연")],
)  # fmt: skip
def test_a_names_last_syllable_mecab_reads_inside_it_is_no_particle(word: str, kept: str) -> None:
    """Issue 68: the particle after a name is cut off, never the last syllable of a name that looks like one."""
    assert word[: len(word) - final_particles(word, 0, len(word))] == kept


@pytest.mark.parametrize(
    ("word", "common"),
    [("계열은행", True), ("캄보디아", True), ("더군다나", True), ("만났다", True), ("조합원", True),
     ("김철수", False), ("아르키메데스", False), ("정미하", False), ("배냉히", False), ("유추어", False),
     ("KFD도시개발", False), ("123가", False), ("신도시", False)],
)  # fmt: skip
def test_common_words_are_the_dictionarys_vocabulary_read_whole(word: str, common: bool) -> None:
    """Issue 66: a text spreads by the model's evidence only where Mecab-ko reads all of it as common vocabulary;
    a name it does not know, read as pieces of one syllable (정미|하, 배|냉|히), never is."""
    assert common_words(word) is common
