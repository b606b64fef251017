"""thunder.documents.corpus: streaming documents out of text / JSONL / annotated files, cut into work items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thunder.documents.corpus import documents, iter_documents, plan
from thunder.language.morphemes import cut

TEXT = "첫 문서의 첫 줄입니다.\n둘째 줄 — 한자 法院 😀\n\n둘째 문서\n\n\n셋째 문서 끝\n"


def test_spans_cut_anywhere_give_whole_paragraphs(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text((TEXT + "\n") * 7 + "\n\n 마지막\n", encoding="utf-8")
    whole = list(iter_documents([path]))
    for split_bytes in (1, 5, 17, 64, 10_000):
        spans = plan([path], split_bytes=split_bytes)
        assert spans[0].start == 0 and spans[-1].end == path.stat().st_size
        cut_up = [doc for span in spans for doc in documents(span)]
        assert cut_up == whole  # every paragraph exactly once, whole, in order
    assert whole[:3] == ["첫 문서의 첫 줄입니다.\n둘째 줄 — 한자 法院 😀\n", "둘째 문서\n", "셋째 문서 끝\n"]


def test_jsonl_records_and_annotated_files(tmp_path: Path) -> None:
    (tmp_path / "b.jsonl").write_text(
        json.dumps({"text": "평문 기록"}, ensure_ascii=False) + "\n\n"
        + json.dumps({"text": "피고인 <<<내국인이름>>>A<<</내국인이름>>>는"}, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    (tmp_path / "c.md").write_text("피해자 <<<내국인이름>>>B<<</내국인이름>>>에게\n", encoding="utf-8")
    (tmp_path / "ignored.csv").write_text("x", encoding="utf-8")
    assert list(iter_documents([tmp_path])) == ["평문 기록", "피고인 A는", "피해자 B에게\n"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"text": "ok"}\n{"text": broken\n', "b.jsonl: byte 15: invalid JSON"),
        ('{"body": "no text"}\n', "b.jsonl: byte 0: no string field 'text'"),
    ],
)
def test_bad_jsonl_names_file_and_byte(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "b.jsonl").write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        list(iter_documents([tmp_path]))


def test_bad_inputs_fail_with_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "bad.txt").write_bytes("좋은 줄\n".encode() + b"\xff\xfe\n")
    with pytest.raises(ValueError, match=r"bad.txt: not UTF-8 at byte 11"):
        list(iter_documents([tmp_path / "bad.txt"]))
    with pytest.raises(FileNotFoundError, match="not found"):
        plan([tmp_path / "missing"])
    (tmp_path / "x.csv").write_text("a", encoding="utf-8")
    with pytest.raises(ValueError, match="unsupported corpus file type"):
        plan([tmp_path / "x.csv"])


def test_cut_keeps_every_character_within_the_limit() -> None:
    text = "가" * 25 + "\n" + "짧은 줄\n" * 10 + "끝"
    for max_chars in (1, 7, 10, 1000):
        pieces = list(cut(text, max_chars))
        assert "".join(pieces) == text
        assert all(0 < len(piece) <= max_chars for piece in pieces)
