"""Mecab-ko's readings as character flags: which words of a text are proper nouns, foreign letters, unknown words."""

from __future__ import annotations

from thunder.language.morphemes import tagged_chars


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
