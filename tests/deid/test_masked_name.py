"""Names masked in part (thunder.deid.recognizers.masked_name), alone, on the packaged corpora and in the pipeline."""

from __future__ import annotations

import random
import re

import pytest

from thunder.deid.pipeline import Deidentifier
from thunder.deid.recognizers.masked_name import MaskedNameRecognizer
from thunder.deid.recognizers.registry import load_recognizers
from thunder.identifiers.context import MentionContext
from thunder.language.particles import PARTICLE_RUN
from thunder.synthesis.names import PersonNames
from thunder.synthesis.synthesizer import SynthesizedDocument


def masked(text: str) -> list[str]:
    return [text[s.start : s.end] for s in MaskedNameRecognizer().find(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("진료기록 감정의 이○○(신경과 전문의)는", ["이○○"]),
        ("2. 진술조서(참고인 금OOO)", ["금OOO"]),
        ("피고인의 누나 김***가 피해 회복을", ["김***"]),
        ("증인 홍○동은 법정에서", ["홍○동"]),
        ("피해자 남궁○○의 진술", ["남궁○○"]),  # a double surname
        ("피고 김○", ["김○"]),
        ("김OO씨는 그 자리에", ["김OO"]),  # 씨 and a particle after it
        ("박ＸＸ와 최＊＊", ["박ＸＸ", "최＊＊"]),  # full-width forms
    ],
)
def test_it_finds_masked_names(text: str, expected: list[str]) -> None:
    assert masked(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "○○법 제3조 위반",  # a mask opening a word has no surname
        "각 의안별로 '제○호 의안'이라 한다",  # 제: numbering, not a surname
        "원고* 주장에 의하면",  # one asterisk after a word: a footnote
        "이OS 장비를 설치",  # Latin letters after it
        "김○○○○",  # too many masks
        "이○○동 123",  # a place name after it, not particles
        "A○○, 3○○",  # a letter or a digit before it
        "부△△",  # not a mask of this recognizer
    ],
)
def test_it_leaves_what_is_no_masked_name(text: str) -> None:
    assert masked(text) == []


def test_it_is_on_by_default_and_replaces_masked_names_without_a_model() -> None:
    assert "masked_name" in [r.name for r in load_recognizers()]
    pipeline = Deidentifier()
    assert "masked in part" in pipeline.coverage()
    result = pipeline("참고인 금OOO의 진술과 금OOO 작성의 진술서, 이○○의 진단서")
    assert "OOO" not in result.text and "○" not in result.text
    assert [s.source for s in result.spans] == ["masked_name"] * 3
    assert len({s.placeholder for s in result.spans}) == 2
    assert "masked in part" not in Deidentifier(recognizers=["resident_registration_number"]).coverage()


def test_it_replaces_nothing_in_the_packaged_judgments_and_precedents_but_identifiers(
    packaged_judgments: list[SynthesizedDocument], precedent_texts: list[str]
) -> None:
    """Precision on realistic text: the packaged whole judgments, filled, and the 62 published precedents (which the
    court de-identified with letters, so a span there is an error)."""
    recognizer = MaskedNameRecognizer()
    found = [(doc, span) for doc in packaged_judgments for span in recognizer.find(doc.text)]
    off = [doc.text[span.start : span.end] for doc, span in found
           if not any(g.start <= span.start and span.end <= g.end for g in doc.spans)]  # fmt: skip
    assert off == []
    assert len(precedent_texts) >= 50
    assert [t[s.start : s.end] for t in precedent_texts for s in recognizer.find(t)] == []


def test_it_finds_the_masked_forms_the_name_generator_writes() -> None:
    """Every part-masked name of :class:`thunder.synthesis.names.PersonNames`, in a sentence and before a particle, but those
    left alone on purpose: one Latin ``O`` or ``*`` alone, two syllables after the mask, a syllable after the mask
    that reads as a particle (``김○을``)."""
    names = PersonNames(foreign=0, masked=1, spaced=0)
    rng = random.Random(0)
    samples = {names.sample(rng, MentionContext("내국인이름")) for _ in range(400)}
    shapes = re.compile(r"(?!제)[가-힣]{1,2}(?:[○◯●]|[○◯●O*]{2,3}|[○◯●O*][가-힣])")
    expected = {s for s in samples if shapes.fullmatch(s) and not PARTICLE_RUN.fullmatch(s[-1])}
    assert len(expected) > 200
    assert [s for s in expected if masked(f"증인 {s}의 진술") != [s]] == []
