"""Published decisions as training documents: court marks become placeholders, the held-out share and what would
read as "no identifier" wrongly stay out."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from thunder.documents.corpus import held_out
from thunder.documents.published import CHUNK_CHARS, chunks, read_published
from thunder.taxonomy import Taxonomy

DECISION = ("【피 고 인】 피고인 1\n【주    문】 피고인을 징역 1년에 처한다.\n【이    유】 피고인 1은 서울 강남구 (주소 1 생략)에서 "
            "공소외 2에게 전화하였다.\n판사 오현석\n")  # fmt: skip


def write_corpus(path: Path, records: list[dict]) -> Path:
    with lzma.open(path, "wt", encoding="utf-8") as file:
        file.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    return path


def training_ids(count: int) -> list[str]:
    """Record ids of the training part (the held-out share is chosen by a hash of the id)."""
    ids = (f"2020고단{n}" for n in range(10_000))
    return [i for i in ids if not held_out(i)][:count]


def test_marks_become_placeholders_and_the_rest_stays_text(tmp_path: Path, taxonomy: Taxonomy) -> None:
    (first,) = training_ids(1)
    path = write_corpus(tmp_path / "decisions.jsonl.xz", [{"id": first, "kind": "criminal", "date": "2021-03-04",
                                                           "text": DECISION}])  # fmt: skip
    (document,) = read_published([path], taxonomy, keep_marks=0.0)
    assert document.doc_id == f"{first}#0" and document.case_type == "criminal"
    found = [(document.text[p.start : p.end], p.tag) for p in document.placeholders]
    assert [tag for _, tag in found] == ["내국인이름", "내국인이름", "구아래주소", "내국인이름"]
    assert found[0][0] == found[1][0] != found[3][0]  # 피고인 1 is one entity, 공소외 2 another
    assert "판사 오현석" in document.text and "서울 강남구" in document.text and "공소외" not in document.text
    (kept,) = read_published([path], taxonomy, keep_marks=1.0)
    assert kept.placeholders == () and kept.text == DECISION  # every mark as the court wrote it


def test_held_out_old_statute_and_company_decisions_stay_out(tmp_path: Path, taxonomy: Taxonomy) -> None:
    train = training_ids(4)
    held = next(f"2020고단{n}" for n in range(10_000) if held_out(f"2020고단{n}"))
    records = [
        {"id": held, "kind": "criminal", "date": "2021-01-01", "text": DECISION},
        {"id": train[0], "kind": "criminal", "date": "1984-05-01", "text": DECISION},
        {"id": train[1], "kind": "statute", "date": "2021-01-01", "text": "제1조(목적) 이 법은 ..."},
        {"id": train[2], "kind": "civil", "date": "2021-01-01", "text": "원고는 주식회사 한빛건설에 돈을 빌려주었다.\n"},
        {"id": train[3], "kind": "civil", "date": "2021-01-01", "text": "원고 1은 피고 주식회사에게 청구하였다.\n"},
    ]
    path = write_corpus(tmp_path / "decisions.jsonl.xz", records)
    assert [d.doc_id for d in read_published([path], taxonomy)] == [f"{train[3]}#0"]
    assert [d.doc_id for d in read_published([path], taxonomy, part="held_out")] == [f"{held}#0"]
    with pytest.raises(ValueError, match="keep_marks"):
        read_published([path], taxonomy, keep_marks=1.5)


def test_chunks_cut_at_line_ends_and_keep_every_character() -> None:
    text = "".join(f"{n}번째 줄입니다.\n" for n in range(500)) + "마지막 줄" + "가" * (CHUNK_CHARS + 10)
    pieces = list(chunks(text))
    assert "".join(piece for _, piece in pieces) == text
    assert all(text[offset : offset + len(piece)] == piece for offset, piece in pieces)
    assert all(len(piece) <= CHUNK_CHARS or "\n" not in piece for _, piece in pieces)
    assert all(piece.endswith("\n") for _, piece in pieces[:-1])
