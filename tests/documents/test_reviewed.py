"""Reviewed judgments as training data (thunder.documents.reviewed, the data module's ``reviewed`` source)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thunder.data import DeIdDataModule, Filler, Recipe
from thunder.documents.reviewed import ReviewError, read_records, read_reviewed, shape

NAME, PHONE, BANK = "탁옥순", "010-3141-5926", "무지개은행"
TEXT = f"피고인 {NAME}은 {BANK} 계좌로 송금한 뒤 {PHONE}로 전화하였다. {NAME}의 진술은 믿기 어렵다."


def spans_of(text: str, *pieces: tuple[str, str]) -> list[list]:
    """``[start, end, label]`` of the first occurrence of each piece (after the previous one's start)."""
    out, cursor = [], 0
    for piece, label in pieces:
        start = text.index(piece, cursor)
        out.append([start, start + len(piece), label])
        cursor = start
    return out


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def review_page_record(doc_id: str = "case-1", text: str = TEXT) -> dict:
    """A record as the review page's "download reviewed spans" writes it (a rejected span is text)."""
    spans = spans_of(text, (NAME, "내국인이름"), (BANK, "사업체"), (PHONE, "전화번호"))
    second = text.index(NAME, spans[0][1])
    spans.append([second, second + len(NAME), "내국인이름"])
    return {"id": doc_id, "text": text, "spans": spans, "rejected": [[0, 3, "내국인이름"]]}


def test_every_span_becomes_a_placeholder_of_its_label(tmp_path: Path, taxonomy) -> None:
    path = write_jsonl(tmp_path / "reviews" / "a.jsonl", [review_page_record()])
    (doc,) = read_reviewed([tmp_path / "reviews"], taxonomy)
    assert NAME not in doc.text and PHONE not in doc.text and BANK not in doc.text
    assert doc.text.startswith("피고인 A은 B 계좌로 송금한 뒤 C로 전화하였다. A의")
    assert [(p.tag, p.entity, doc.text[p.start : p.end]) for p in doc.placeholders] == [
        ("내국인이름", "A", "A"), ("사업체", "B", "B"), ("전화번호", "C", "C"), ("내국인이름", "A", "A"),
    ]  # fmt: skip
    assert [p.shape for p in doc.placeholders] == ["가가가", "가가가가가", "000-0000-0000", "가가가"]
    assert {p.line for p in doc.placeholders} == {1} and doc.source == str(path)


def test_a_span_may_name_its_entity(tmp_path: Path, taxonomy) -> None:
    record = review_page_record()
    record["spans"] = [[*span, "x"] if span[2] == "내국인이름" else [*span, span[2]] for span in record["spans"]]
    record["spans"][-1][3] = "y"  # the second name is another person in the gold file
    (doc,) = read_reviewed([write_jsonl(tmp_path / "g.jsonl", [record])], taxonomy)
    assert [p.entity for p in doc.placeholders] == ["A", "B", "C", "D"]


@pytest.mark.parametrize(
    ("spans", "reason"),
    [
        ([[4, 7, "내국인이름"], [5, 9, "사업체"]], "overlaps [4, 7) 내국인이름"),
        ([[4, 7, "사람이름같은것"]], "'사람이름같은것' is not a label, alias, normalisable variant or category"),
        ([[4, 700, "내국인이름"]], "is not a range inside the text"),
        ([[7, 4, "내국인이름"]], "is not a range of characters"),
        ([[3, 4, "내국인이름"]], "holds only whitespace"),
        ([[4, 7]], "is not [start, end, label]"),
    ],
)
def test_bad_spans_name_file_and_line(tmp_path: Path, taxonomy, spans: list, reason: str) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", [review_page_record("ok"), {"id": "bad", "text": TEXT, "spans": spans}])
    with pytest.raises(ReviewError) as error:
        read_reviewed([path], taxonomy)
    assert str(error.value).startswith(f"{path}:2: ") and reason in str(error.value)


def test_lines_that_are_not_reviewed_documents_are_refused(tmp_path: Path, taxonomy) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "x", "words": "글"}\n', encoding="utf-8")
    with pytest.raises(ReviewError, match=rf"^{path}:1: neither a reviewed document"):
        read_reviewed([path], taxonomy)
    path.write_text('{"id": "y", "text": "글"}\n', encoding="utf-8")  # no spans: a judgment without identifiers
    assert [(doc.text, doc.placeholders) for doc in read_reviewed([path], taxonomy)] == [("글", ())]
    with pytest.raises(ReviewError, match="absent: no such file or directory"):
        read_reviewed([tmp_path / "absent"], taxonomy)


def test_a_corrected_deid_spans_file_reads_its_documents_again(tmp_path: Path, taxonomy) -> None:
    """`thunder deid --spans` lines after correction: the text comes from the input; an edited input is refused."""
    (tmp_path / "in").mkdir()
    source = tmp_path / "in" / "case.txt"
    source.write_text(TEXT, encoding="utf-8")
    lines = [
        {"doc": "in/case.txt", "start": s, "end": e, "text": TEXT[s:e], "label": label, "score": 1.0}
        for s, e, label in spans_of(TEXT, (NAME, "내국인이름"), (PHONE, "전화번호"))
    ]
    spans_file = write_jsonl(tmp_path / "case.spans.jsonl", lines)
    (record,) = read_records(spans_file)
    assert record.text == TEXT and [TEXT[s.start : s.end] for s in record.spans] == [NAME, PHONE]
    write_jsonl(tmp_path / "bare.jsonl", [{k: v for k, v in lines[0].items() if k != "text"}])  # --no_span_text
    with pytest.raises(ReviewError, match=rf"^{tmp_path / 'bare.jsonl'}:1: the span keeps no text"):
        read_records(tmp_path / "bare.jsonl").__next__()
    source.write_text(TEXT.replace("피고인 ", "피고인  "), encoding="utf-8")  # one character moved every span
    with pytest.raises(ReviewError, match=rf"^{spans_file}:1: document 'in/case.txt' no longer reads .* changed"):
        read_records(spans_file).__next__()


def test_category_labels_fill_from_their_labels_and_unsourced_labels_from_the_shape(tmp_path: Path) -> None:
    record = review_page_record()
    code = "AB-1234"
    text = record["text"] + f" 관리번호 {code}."
    record["text"] = text
    record["spans"].append([text.index(code), text.index(code) + len(code), "관리번호"])
    recipe = Recipe(reviewed=(str(write_jsonl(tmp_path / "r.jsonl", [record])),))
    filler = Filler(recipe, recipe.load_taxonomy())
    (doc,) = filler.reviewed()
    synthesizer = filler.training_synthesizer()
    assert "관리번호" in synthesizer.mentions.missing
    business = {label.name for label in filler.taxonomy.categories["사업체"]}
    fills = [synthesizer(doc, epoch=epoch) for epoch in range(6)]
    for filled in fills:
        labels = [span.label for span in filled.spans]
        assert labels[0] == labels[3] == "내국인이름" and labels[2] == "전화번호" and labels[1] in business
        names = [filled.text[s.start : s.end] for s in filled.spans if s.label == "내국인이름"]
        assert names[0] == names[1] != NAME  # one entity, one mention
        assert shape(filled.text[filled.spans[-1].start : filled.spans[-1].end]) == shape(code)
    assert len({fill.text for fill in fills}) == 6  # other mentions every epoch


def test_reviewed_share_mixes_every_training_epoch(tmp_path: Path, caplog) -> None:
    records = [review_page_record(f"case-{i}") for i in range(3)]
    path = write_jsonl(tmp_path / "r.jsonl", records)
    module = DeIdDataModule(reviewed=[str(path)], reviewed_share=0.5, max_length=128, stride=32, batch_size=4)
    with caplog.at_level("INFO"):
        module.setup("fit")
    train = module.datasets["train"]
    documents = len(module.filler.documents()["train"])
    spans = sum(len(d.placeholders) for d in module.filler.reviewed())
    assert f"training epoch: {documents:,} train-split documents + {documents:,} of 3 reviewed judgments " \
           f"({spans:,} spans)" in caplog.text and spans > 0  # the log says what adaptation reads
    assert len(train) == 2 * documents and len(module.datasets["val"]) == len(module.filler.documents()["val"])
    reviewed = [train.synthesize(documents + j, epoch=0) for j in range(documents)]
    assert {doc.doc_id for doc in reviewed} == {"case-0", "case-1", "case-2"}
    texts = [doc.text for doc in reviewed]
    assert len(set(texts)) == len(texts) and not any(NAME in text or PHONE in text for text in texts)
    windows = train[(1, documents)]  # the first reviewed slot of epoch 1: labelled windows of its judgment
    assert windows and any(any(label != 0 for label in window["labels"]) for window in windows)
    composing = DeIdDataModule(reviewed=[str(path)], reviewed_share=0.5, compose=1.0, max_length=128, stride=32)
    composing.setup("fit")  # whole judgments composed around every paragraph, but a reviewed judgment stays as written
    assert [composing.datasets["train"].synthesize(documents + j, epoch=0).text for j in range(documents)] == texts
    alone = DeIdDataModule(reviewed=[str(path)], reviewed_share=1, max_length=128, stride=32)
    alone.setup("fit")
    assert len(alone.datasets["train"]) == 3
    with pytest.raises(ValueError, match="reviewed_share 0.5 needs reviewed judgments"):
        DeIdDataModule(reviewed_share=0.5)
    with pytest.raises(ValueError, match=r"reviewed_share must be in \(0, 1\]"):
        DeIdDataModule(reviewed=[str(path)], reviewed_share=0)
