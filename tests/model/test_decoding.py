"""Decoding: the decision rule, window merging, span growing, the operating point."""

from __future__ import annotations

import pytest
import torch
from helpers import NAME, KeywordModel

from thunder.deid.pipeline import Deidentifier
from thunder.model.decoding import (
    Aggregation,
    OperatingPoint,
    TokenPredictions,
    entity_tags,
    grow_within_word,
    joined_in_words,
    widen_to_latin_runs,
    with_last_syllable,
)
from thunder.taxonomy import LabelSet, Taxonomy


def test_entity_tags_decide_identifier_against_outside_first() -> None:
    probs = torch.tensor([
        [0.4, 0.3, 0.3],  # identifier probability 0.6, spread over two types: argmax would say O
        [0.6, 0.1, 0.3],  # O wins
        [0.1, 0.2, 0.7],  # clear identifier: its most likely type
    ])  # fmt: skip
    assert probs.argmax(-1).tolist() == [0, 0, 2]
    assert entity_tags(probs).tolist() == [1, 0, 2]
    assert entity_tags(probs, threshold=0.35).tolist() == [1, 2, 2]  # lower threshold: more recall
    assert entity_tags(probs, threshold=0.8).tolist() == [0, 0, 2]
    assert entity_tags(probs[None], outside_id=2)[0].tolist() == [0, 0, 2]  # O is tag 2 here


def test_grow_within_word_stops_at_whitespace_and_tagged_tokens() -> None:
    # tokens: "부산" "은행" " 계좌" "에서" ; only "부산" tagged
    prediction = TokenPredictions([(0, 2), (2, 4), (5, 7), (7, 9)], [1, 0, 0, 0], [0.9, 0.3, 0.3, 0.3])
    assert grow_within_word(prediction, 0, 1, 0.2) == (0, 2)  # not over the space before 계좌
    assert grow_within_word(prediction, 0, 1, 0.5) == (0, 1)
    prediction = TokenPredictions([(0, 1), (1, 2), (2, 3)], [0, 2, 0], [0.3, 0.9, 0.01])
    assert grow_within_word(prediction, 1, 2, 0.2) == (0, 2)  # leftwards too; the particle (0.01) stays out


@pytest.mark.parametrize(
    ("text", "tagged", "replaced"),
    [("텔레그램 아이디 'raye.6'를 사용하는", "raye", "raye.6"),  # Mecab-ko cuts the handle at its dot
     ("아이디 kim_88 으로", "88", "kim_88"),  # leftwards too
     ("계정 sky-blue.7 에서", "blue", "sky-blue.7"),
     ("아이디는 raye. 그는", "raye", "raye"),  # a sentence's full stop is not part of it
     ("홍길동A와", "홍길동", "홍길동"),  # a run the span does not touch stays
     ("2020.3.5. 생", "3", "3")],  # no letter: a date or an amount is left as it is
)
def test_a_span_cutting_a_latin_handle_covers_all_of_it(text: str, tagged: str, replaced: str) -> None:
    start = text.index(tagged)
    widened = widen_to_latin_runs(text, start, start + len(tagged))
    assert text[widened[0] : widened[1]] == replaced


def test_operating_point_is_validated_and_names_its_aggregation() -> None:
    assert OperatingPoint() == OperatingPoint(0.5, 0.1) == OperatingPoint.from_dict(None)  # old artefacts
    assert OperatingPoint(0.3, 0.05).aggregation is Aggregation.HYSTERESIS
    assert OperatingPoint(0.3, None).aggregation is Aggregation.SIMPLE
    assert OperatingPoint(0.3, 0.3).aggregation is Aggregation.SIMPLE  # at the threshold nothing can grow
    point = OperatingPoint(0.3, 0.05)
    assert OperatingPoint.from_dict(point.to_dict()) == point
    with pytest.raises(ValueError, match="grow_threshold must lie strictly between 0 and 1"):
        OperatingPoint.from_dict({"threshold": 0.3, "grow_threshold": 2})
    with pytest.raises(ValueError, match="is not {threshold, grow_threshold}"):
        OperatingPoint.from_dict({"threshold": 0.3, "temperature": 2})


def test_a_span_the_model_tagged_over_a_particle_leaves_the_particle() -> None:
    """The model tagged ``홍길동은``, ``5678로`` and ``정미래는``: the particles stay in the text (so they are corrected
    after the replacement, never eaten); ``김지은`` keeps its last syllable."""
    from thunder.language.morphemes import morpheme_pieces
    from thunder.model.decoding import without_final_particles

    text = "피고인 홍길동은 010-1234-5678로 연락하였고 김지은은 답했다"
    pieces = morpheme_pieces(text)
    ends = [end for _, end in pieces]
    for tagged, kept in (("홍길동은", "홍길동"), ("010-1234-5678로", "010-1234-5678"), ("김지은은", "김지은"), ("김지은", "김지은")):
        start = text.index(tagged)
        assert text[start : without_final_particles(pieces, ends, text, start, start + len(tagged))] == kept
    text = "부산 청주리버파크자이아파트 앞에서 서강쌍용예가아파트를 지나 홍길동이라는 사람을 만났다"
    pieces = morpheme_pieces(text)
    ends = [end for _, end in pieces]
    for tagged, kept in (("청주리버파크자이", "청주리버파크자이"),  # the word goes on: 이 is the name's, not a particle
                         ("서강쌍용예가", "서강쌍용예가"),
                         ("홍길동이", "홍길동")):  # 이라는: the word ends in particles  # fmt: skip
        start = text.index(tagged)
        assert text[start : without_final_particles(pieces, ends, text, start, start + len(tagged))] == kept
    text = "피고인 정미래는 피해자에게 전화하였다"  # Mecab-ko: 정미|래는, so the model tagged 는 with 래
    pieces = morpheme_pieces(text)
    ends = [end for _, end in pieces]
    assert text[4 : without_final_particles(pieces, ends, text, 4, 8, tagged_end=8)] == "정미래"
    text = "피해자 성가이 명의 계좌와 이별와의 집"
    pieces = morpheme_pieces(text)
    ends = [end for _, end in pieces]
    for word, tagged, kept in (("성가이", "성가이", "성가이"),  # the model tagged 이: the name's last syllable
                               ("성가이", "성가", "성가"),  # 이 only reached by growing: a particle
                               ("이별와의", "이별와", "이별와"),  # 와 tagged, 의 not
                               ("이별와의", "이별", "이별")):  # fmt: skip
        start = text.index(word)
        tagged_end = start + len(tagged)
        assert text[start : without_final_particles(pieces, ends, text, start, start + len(word), tagged_end)] == kept


def test_token_spans_of_two_types_inside_one_word_are_one_span() -> None:
    # "시바이누" tagged 금융서비스, 사업체, 금융서비스 token by token; " 코인" after a space; "홍길동김철수" two B-tagged names
    offsets = [(0, 2), (2, 3), (3, 4), (5, 7), (8, 11), (11, 14)]
    spans = [(0, 1, "금융서비스"), (1, 2, "사업체"), (2, 3, "금융서비스"), (3, 4, "사업체"), (4, 5, "이름"), (5, 6, "이름")]
    assert joined_in_words(spans, offsets) == [(0, 3, "금융서비스"), (3, 4, "사업체"), (4, 5, "이름"), (5, 6, "이름")]
    assert joined_in_words([(0, 1, "사업체"), (1, 3, "금융서비스")], [(0, 1), (1, 2), (2, 4)]) == [(0, 3, "금융서비스")]
    assert joined_in_words([(0, 1, "a"), (1, 2, "b")], [(0, 2), (2, 4)]) == [(0, 2, "a")]  # equals: the first


def test_a_particle_the_model_tagged_with_the_name_is_kept_and_fixed(tokenizer, taxonomy: Taxonomy) -> None:
    """A model whose span takes the particle (``정미래는``) leaves it, fixed, after the placeholder."""
    label_set = LabelSet(taxonomy, "label", "IO")
    text = "피고인 정미래는 피해자에게 전화하였다."
    encoding = tokenizer.encode(text)
    name = {token for token, (s, e) in zip(encoding.ids, encoding.offsets) if 4 <= s and e <= 8}
    model = KeywordModel(tokenizer.vocab_size, len(label_set), name, label_set.inside_id(NAME))
    result = Deidentifier(model, tokenizer, label_set, recognizers=[])(text)
    assert result.text == "피고인 A는 피해자에게 전화하였다."
    assert [span.text for span in result.spans] == ["정미래"]


def test_a_three_syllable_name_keeps_a_last_syllable_that_reads_as_a_particle() -> None:
    """김수와, 김뒥이: a tagged last syllable that agrees as a particle stays where cutting it would leave two."""
    from thunder.model.decoding import without_final_particles

    for text in ("피고인 김수와 만났다", "피고인 김뒥이 왔다"):
        start = text.index("김")
        assert without_final_particles([], [], text, start, start + 3, start + 3) == start + 3
    text = "피고인 정미래는 갔다"
    start = text.index("정")
    assert without_final_particles([], [], text, start, start + 4, start + 4) == start + 3


@pytest.mark.parametrize(
    ("text", "tagged", "replaced"),
    [
        ("상속인인 박산로뭐 및 윤지혁", "박산로", "박산로뭐"),  # a name's last syllable the model stopped short of
        ("담당의사 심인강하는 소견서에서", "심인강", "심인강하"),  # ... with the particle after it left out
        ("피고인 홍길동측 변호인", "홍길동", "홍길동"),  # a bound noun
        ("피고인 김철수님은", "김철수", "김철수"),  # a suffix
        ("피고인 홍길동씨는", "홍길동", "홍길동"),
        ("피고인 김철수는 왔다", "김철수", "김철수"),  # a particle
        ("청주리버파크아파트 101동", "청주리버파크", "청주리버파크"),  # more than one syllable left: a head noun
    ],
)  # fmt: skip
def test_a_name_the_model_stopped_one_syllable_short_of_is_replaced_whole(text: str, tagged: str, replaced: str) -> None:
    """Issue 66: a syllable left between a span and its word's end that is no particle, suffix or bound noun is the
    name's, or it would stand beside the replacement (``A뭐``)."""
    start = text.index(tagged)
    assert text[start : with_last_syllable(text, start, start + len(tagged))] == replaced
