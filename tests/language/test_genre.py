"""thunder.language.genre: common words of the judgment genre, by document frequency, and the packaged list."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from thunder.language.genre import GENRE_WORDS_FILE, common_words, document_frequencies, load_genre_words, words_of

TOOL = Path(__file__).resolve().parents[2] / "tools" / "genre_words.py"


def test_words_are_counted_with_and_without_their_particles() -> None:
    assert words_of("피해자에게 피고인은 A는 원고와의 김 2024. 원고은") == {
        "피해자에게", "피해자", "피고인은", "피고인", "원고와의", "원고", "원고은"}  # fmt: skip
    counts, documents = document_frequencies(["피해자가 울었다", "피해자는 웃었다 피해자", "원심"])
    assert documents == 3 and counts["피해자"] == 2 and counts["원심"] == 1
    texts = ["피해자 원심"] * 5 + ["피해자"] * 45 + ["홍길동"] * 2
    assert common_words(texts, min_share=0.05, min_documents=3) == [("피해자", 50), ("원심", 5)]
    assert common_words(texts, min_share=0.5) == [("피해자", 50)]
    with pytest.raises(ValueError, match="min_share"):
        common_words(texts, min_share=0)


def test_load_genre_words(tmp_path: Path) -> None:
    packaged = load_genre_words(True)
    assert {"피해자", "범행", "징역"} <= packaged and len(packaged) > 300
    assert load_genre_words(False) == load_genre_words(None) == frozenset()
    assert load_genre_words(["원 심", "하자보수"]) == frozenset({"원심", "하자보수"})
    mine = tmp_path / "words.txt"
    mine.write_text("# mine\n원심\t12\n대표회의\n", encoding="utf-8")
    assert load_genre_words(str(mine)) == frozenset({"원심", "대표회의"})
    with pytest.raises(ValueError, match="cannot read"):
        load_genre_words(str(tmp_path / "missing.txt"))
    with pytest.raises(ValueError, match="genre words"):
        load_genre_words([""])


def test_the_packaged_list_is_what_the_tool_measures_on_the_demo_corpus(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("genre_words", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    demo = Path(__file__).resolve().parents[2] / "thunder" / "resources" / "demo" / "annotated"
    out = tmp_path / "genre_words.txt"
    assert tool.main(["--input", str(demo), "--out", str(out)]) == 0
    measured = out.read_text(encoding="utf-8").splitlines()[2:]
    assert measured == GENRE_WORDS_FILE.read_text(encoding="utf-8").splitlines()[2:]
