"""Parser of annotated judgments: quirks, errors with file:line:column, exact offsets, corpus reading."""

from __future__ import annotations

import json
import logging
import re
import string
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thunder.documents import annotation
from thunder.documents.annotation import (
    AnnotatedDocument,
    AnnotationError,
    Placeholder,
    iter_corpus,
    parse_annotated,
    read_annotated,
    scan_tags,
)


def spans(doc: AnnotatedDocument) -> list[tuple[str, str, str]]:
    return [(p.tag, doc.text[p.start : p.end], p.entity) for p in doc.placeholders]


def test_basic_placeholder_offsets_and_position() -> None:
    doc = parse_annotated("피해자 <<<내국인이름>>>F<<</내국인이름>>>에게서 돈을", source="a.md", doc_id="a")
    assert doc.text == "피해자 F에게서 돈을"
    assert doc.placeholders == (Placeholder(4, 5, "내국인이름", "F", 1, 5),)
    assert (doc.doc_id, doc.source) == ("a", "a.md")


def test_positions_on_later_lines_and_multiple_tags() -> None:
    raw = "첫 줄\n수원시 팔달구 <<<구아래주소>>>G<<</구아래주소>>> 일대\n  <<<은행>>>RA<<</은행>>>은행"
    doc = parse_annotated(raw)
    assert doc.text == "첫 줄\n수원시 팔달구 G 일대\n  RA은행"
    (address, bank) = doc.placeholders
    assert (address.line, address.column) == (2, 9)
    assert (bank.line, bank.column) == (3, 3)
    assert doc.text[bank.start : bank.end] == "RA" and bank.entity == "RA"


@pytest.mark.parametrize(
    "raw, text, expected",
    [
        # content is the tag itself or a word
        ("<<<은행>>>은행<<</은행>>>에서", "은행에서", [("은행", "은행", "은행")]),
        # a letter code followed by the tag word: entity is the code, span the whole content
        ("<<<모텔>>>E모텔<<</모텔>>> 객실", "E모텔 객실", [("모텔", "E모텔", "E")]),
        ("<<<은행>>>SC은행<<</은행>>>", "SC은행", [("은행", "SC은행", "SC")]),
        # a code followed by something else is its own entity
        ("<<<조합>>>G조합원<<</조합>>>", "G조합원", [("조합", "G조합원", "G조합원")]),
        # suffix repeated after the placeholder stays in the text
        ("<<<주식회사>>>D<<</주식회사>>> 주식회사", "D 주식회사", [("주식회사", "D", "D")]),
        # redaction notes inside and after tags
        ("(<<<차량번호>>>차량번호 1 생략<<</차량번호>>>) 승용차", "(차량번호 1 생략) 승용차",
         [("차량번호", "차량번호 1 생략", "차량번호 1 생략")]),
        ("(<<<차량번호>>>차량번호<<</차량번호>>> 1 생략)", "(차량번호 1 생략)", [("차량번호", "차량번호", "차량번호")]),
        # quotes and surrounding spaces stay in the text, outside the span
        ("<<<식당>>>'C'<<</식당>>>에서", "'C'에서", [("식당", "C", "C")]),
        ("<<<식당>>>‘D'<<</식당>>>", "‘D'", [("식당", "D", "D")]),
        ("<<<주소>>> B <<</주소>>>", " B ", [("주소", "B", "B")]),
        # a bracketed word as content
        ("<<<주소>>><주소><<</주소>>>에 있는", "<주소>에 있는", [("주소", "<주소>", "<주소>")]),
        # noisy raw tags are kept as written for the taxonomy
        ("<<<(주)>>>D<<</(주)>>>", "D", [("(주)", "D", "D")]),
        ("<<<앞 노상>>>D<<</앞 노상>>> 앞 노상에서", "D 앞 노상에서", [("앞 노상", "D", "D")]),
        # repairs: extra '>' after a tag, an opening tag written twice, complete two-bracket tags
        ("구 <<<구아래주소>>>>B<<</구아래주소>>>,", "구 B,", [("구아래주소", "B", "B")]),
        ("<<<버스번호>>>Q<<</버스번호>>>>번 버스", "Q번 버스", [("버스번호", "Q", "Q")]),
        ("피해자 <<<내국인이름>>><<<내국인이름>>>K<<</내국인이름>>> 소유", "피해자 K 소유", [("내국인이름", "K", "K")]),
        ("보은군 <<면>>00<</면>> <<리>>11<</리>>에서", "보은군 00 11에서", [("면", "00", "00"), ("리", "11", "11")]),
    ],
)
def test_corpus_quirks(raw: str, text: str, expected: list[tuple[str, str, str]]) -> None:
    doc = parse_annotated(raw)
    assert doc.text == text
    assert spans(doc) == expected


def test_duplicate_opener_keeps_first_position() -> None:
    doc = parse_annotated("ab <<<X>>><<<X>>>B<<</X>>>")
    assert (doc.placeholders[0].line, doc.placeholders[0].column) == (1, 4)


@pytest.mark.parametrize(
    "raw, text, expected",
    [
        # a doubled opening tag is dropped, the whitespace around it kept (outside the span)
        ("피해자 <<<X>>>\t<<<X>>>K<<</X>>> 소유", "피해자 \tK 소유", [("X", "K", "K")]),
        ("<<<X>>> <<<X>>> K<<</X>>>", "  K", [("X", "K", "K")]),
        # invisible characters and whitespace inside quotes stay in the text, outside the span
        ("<<<X>>>\u200bA\u200b<<</X>>>", "\u200bA\u200b", [("X", "A", "A")]),
        ("<<<식당>>>' C '<<</식당>>>", "' C '", [("식당", "C", "C")]),
        # an unbalanced quote is content
        ("<<<X>>>'A<<</X>>>", "'A", [("X", "'A", "'A")]),
        # single brackets inside two-bracket content
        ("<<면>><면><</면>>", "<면>", [("면", "<면>", "<면>")]),
    ],
)
def test_whitespace_and_quotes_around_content(raw: str, text: str, expected: list[tuple[str, str, str]]) -> None:
    doc = parse_annotated(raw)
    assert doc.text == text
    assert spans(doc) == expected


def test_text_outside_tags_is_kept_exactly() -> None:
    raw = "\ufeff앞\r\n  <<<X>>>A<<</X>>>\t뒤 \n\n<<<Y>>> 'B' <<</Y>>>끝"
    doc = parse_annotated(raw)
    assert doc.text == "\ufeff앞\r\n  A\t뒤 \n\n 'B' 끝"


@pytest.mark.parametrize(
    "raw, line, column, reason",
    [
        ("피해자 <<<내국인이름>>>F", 1, 5, "unclosed tag"),
        ("a <<<X>>>A\n<<</X>>>", 1, 3, "unclosed tag"),
        ("ab\ncd <<<X>>>A<<</Y>>>", 2, 12, "does not match <<<X>>> opened at 2:4"),
        ("a <<</X>>> b", 1, 3, "without an opening tag"),
        ("<<<X>>>a<<<Y>>>b<<</Y>>><<</X>>>", 1, 9, "nested tag <<<Y>>> inside <<<X>>> opened at 1:1"),
        ("x <<<X>>><<</X>>>", 1, 3, "empty placeholder"),
        ("x <<<X>>>  <<</X>>>", 1, 3, "empty placeholder"),
        ("x <<<>>>A<<</>>>", 1, 3, "empty tag name"),
        ("x <<< >>>A<<</ >>>", 1, 3, "empty tag name"),
        ("a\nb /X>>> c", 2, 5, "stray '>>>'"),
        ("a <<<<<X>>><<<</X>>>/Y>>>", 1, 4, "too many '<'"),
        ("a <<<X>>>A<<</X>>> <<<Y", 1, 20, "stray '<<<'"),
        ("<<<X>>>A>>B<<</X>>>", 1, 9, "stray '>>' inside <<<X>>>"),
        ("", 1, 1, "empty document"),
        (" \n\t", 1, 1, "empty document"),
        # content of only whitespace, quotes or invisible characters is no identifier
        ("x <<<X>>>''<<</X>>>", 1, 3, "empty placeholder <<<X>>>"),
        ("x <<<X>>>' '<<</X>>>", 1, 3, "empty placeholder"),
        ("x <<<X>>>'<<</X>>>", 1, 3, "empty placeholder"),
        ('x <<<X>>>"\u200b"<<</X>>>', 1, 3, "empty placeholder"),
        ("x <<<X>>>\u200b<<</X>>>", 1, 3, "empty placeholder"),
        ("x <<<X>>>\ufeff \u2060<<</X>>>", 1, 3, "empty placeholder"),
        ("x <<<\u200b>>>A<<</\u200b>>>", 1, 3, "empty tag name"),
        ("<<면>> <</면>>", 1, 1, "empty placeholder <<면>>"),
        # incomplete or malformed two-bracket tags
        ("보은군 <<면>>00 이후", 1, 5, "unclosed tag <<면>>"),
        ("보은군 <<면>>00\n<</면>>", 1, 5, "unclosed tag <<면>>"),
        ("<<면>>00<</면> 이후", 1, 8, "stray '<<' inside <<면>>"),
        ("<<면>>00<</리>>", 1, 8, "closing tag <</리>> does not match <<면>> opened at 1:1"),
        ("보은군 00<</면>>에", 1, 7, "closing tag <</면>> without an opening tag"),
        ("<<면>>>00<</면>>", 1, 1, "2 '<' but 3 '>'"),
        ("a <<d>> e", 1, 3, "unclosed tag <<d>>"),
        ("a << b", 1, 3, "stray '<<' that is not part of a tag"),
        ("a >> b", 1, 3, "stray '>>' that is not part of a tag"),
        ("<<<X>>>a<<Y>>b<</Y>><<</X>>>", 1, 9, "nested tag <<Y>> inside <<<X>>>"),
        ("<<<X>>>A<</X>>", 1, 9, "does not match <<<X>>>"),
        # three-bracket slips that are not repaired
        ("x <<<X>>A<<</X>>>", 1, 3, "3 '<' but 2 '>'"),
        ("<<<X>>>A<<<X>>>B<<</X>>>", 1, 9, "nested tag <<<X>>> inside <<<X>>>"),
        ("<<<X>>> <<<Y>>>B<<</Y>>>", 1, 9, "nested tag <<<Y>>> inside <<<X>>>"),
    ],
)
def test_malformed_input_names_file_line_column(raw: str, line: int, column: int, reason: str) -> None:
    with pytest.raises(AnnotationError) as caught:
        parse_annotated(raw, source="doc.md")
    error = caught.value
    assert (error.source, error.line, error.column) == ("doc.md", line, column)
    assert str(error).startswith(f"doc.md:{line}:{column}: ")
    assert reason in str(error)


def test_non_utf8_file_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.md"
    path.write_bytes("첫 줄\n가나 ".encode() + b"\xff\xfe" + "<<<X>>>A<<</X>>>".encode())
    with pytest.raises(AnnotationError) as caught:
        read_annotated(path)
    assert (caught.value.line, caught.value.column) == (2, 4)
    assert str(caught.value).startswith(f"{path}:2:4: not UTF-8")


def test_read_annotated_empty_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "empty.md").write_bytes(b"")
    with pytest.raises(AnnotationError, match=r"empty\.md:1:1: empty document"):
        read_annotated(tmp_path / "empty.md")
    with pytest.raises(AnnotationError, match="cannot read"):
        read_annotated(tmp_path / "missing.md")


def test_read_annotated_strips_bom_only(tmp_path: Path) -> None:
    path = tmp_path / "doc_7.md"
    path.write_bytes("\ufeff가 <<<X>>>A<<</X>>>".encode())
    doc = read_annotated(path)
    assert doc.text == "가 A" and doc.doc_id == "doc_7" and doc.source == str(path)


def test_scan_tags_finds_every_opening_tag_of_a_broken_document() -> None:
    raw = "<<<X>>>a<<<Y>>>b<<</Y>>><<</X>>>\n<<면>>1<</면>>"
    assert scan_tags(raw) == [("X", 1, 1), ("Y", 1, 9), ("면", 2, 1)]


# ---------------------------------------------------------------------------------------------- property test
_TEXT = st.text(alphabet=st.characters(blacklist_characters="<>", blacklist_categories=("Cs",)), max_size=12)
_TAG_NAME = st.text(alphabet=string.ascii_letters + "가나다라마바사 ()", min_size=1, max_size=6).filter(
    lambda s: s.strip() and not s.startswith("/")
)
_CONTENT = st.text(alphabet=string.ascii_uppercase + "가나다○ 0123456789", min_size=1, max_size=6).filter(
    lambda s: s == s.strip() and s
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_TEXT, _TAG_NAME, _CONTENT), max_size=6), _TEXT)
def test_well_formed_documents_parse_with_exact_offsets(
    pieces: list[tuple[str, str, str]], tail: str
) -> None:
    raw, text, expected = "", "", []
    for before, tag, content in pieces:
        raw += before
        text += before
        line = raw.count("\n") + 1
        column = len(raw) - (raw.rfind("\n") + 1) + 1
        expected.append((len(text), len(text) + len(content), tag, line, column))
        raw += f"<<<{tag}>>>{content}<<</{tag}>>>"
        text += content
    raw += tail
    text += tail
    if not raw.strip():
        return
    doc = parse_annotated(raw)
    assert doc.text == text
    assert [(p.start, p.end, p.tag, p.line, p.column) for p in doc.placeholders] == expected


# ---------------------------------------------------------------------------------------------- corpus reading
def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_iter_corpus_markdown_tree(tmp_path: Path) -> None:
    _write(tmp_path / "fraud" / "doc_1.md", "<<<X>>>A<<</X>>>는")
    _write(tmp_path / "fraud" / "sub" / "doc_2.md", "본문")
    _write(tmp_path / "violence" / "doc_1.md", "<<<Y>>>B<<</Y>>>")
    _write(tmp_path / "notes.txt", "<<<ignored")
    docs = list(iter_corpus(tmp_path))
    assert [(d.doc_id, d.case_type) for d in docs] == [
        ("fraud/doc_1", "fraud"),
        ("fraud/sub/doc_2", "sub"),
        ("violence/doc_1", "violence"),
    ]
    assert docs[0].source == str(tmp_path / "fraud" / "doc_1.md")


def test_iter_corpus_jsonl_layout(tmp_path: Path) -> None:
    records = [
        {"id": "r1", "case_type": "fraud", "annotated": "<<<X>>>A<<</X>>>가"},
        {"annotated": "그냥 본문"},
    ]
    path = tmp_path / "data" / "train.jsonl"
    _write(path, "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n\n")
    docs = list(iter_corpus(tmp_path))
    assert [(d.doc_id, d.case_type, d.text) for d in docs] == [("r1", "fraud", "A가"), ("data/train/2", None, "그냥 본문")]
    assert docs[0].source == f"{path}[line 1]"


def test_iter_corpus_reports_every_malformed_document(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    _write(tmp_path / "a" / "bad.md", "ok\n<<<X>>>A")
    _write(tmp_path / "a" / "good.md", "<<<X>>>A<<</X>>>")
    _write(tmp_path / "b.jsonl", '{"annotated": "<<</X>>>"}\nnot json\n{"text": "x"}\n{"annotated": "fine"}\n')
    failures: list[AnnotationError] = []
    with caplog.at_level(logging.WARNING, logger="thunder.documents.annotation"):
        docs = list(iter_corpus(tmp_path, failures=failures))
    assert [d.text for d in docs] == ["A", "fine"]
    assert [str(f).split(": ")[0] for f in failures] == [
        f"{tmp_path / 'a' / 'bad.md'}:2:1",
        f"{tmp_path / 'b.jsonl'}[line 1]:1:1",
        f"{tmp_path / 'b.jsonl'}:2:1",
        f"{tmp_path / 'b.jsonl'}:3:1",
    ]
    assert len([r for r in caplog.records if "skipping malformed document" in r.getMessage()]) == 4
    with pytest.raises(AnnotationError, match="unclosed tag"):
        list(iter_corpus(tmp_path, errors="raise"))


def test_iter_corpus_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        list(iter_corpus(tmp_path / "missing"))
    with pytest.raises(ValueError, match="errors must be"):
        list(iter_corpus(tmp_path, errors="ignore"))


def test_iter_corpus_single_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "case" / "doc_9.md", "<<<X>>>A<<</X>>>")
    (doc,) = iter_corpus(path)
    assert (doc.doc_id, doc.case_type) == ("doc_9", "case")


@pytest.mark.shared_data
def test_shared_corpus_parses(shared_corpus: Path) -> None:
    failures: list[AnnotationError] = []
    docs = list(iter_corpus(shared_corpus / "annotated", errors="skip", failures=failures))
    assert len(docs) + len(failures) == 4050
    # the handful of documents with nested, mismatched, garbled or empty tags are reported, each with a position
    assert len(failures) <= 10
    assert all(f.line >= 1 and f.column >= 1 and Path(f.source).is_file() for f in failures)
    placeholders = [p for d in docs for p in d.placeholders]
    assert len(placeholders) > 24_000
    for doc in docs:
        assert "<<<" not in doc.text and ">>>" not in doc.text, doc.source
        assert all(0 <= p.start < p.end <= len(doc.text) for p in doc.placeholders)


# ---------------------------------------------------------------------------------------------- linear time
class _CountingPattern:
    """A compiled pattern that adds up the characters its searches can have read (from ``pos`` to the match end,
    or to the end of the string when there is no match)."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.scanned = pattern, 0

    def _count(self, string: str, pos: int, endpos: int, found: re.Match[str] | None) -> re.Match[str] | None:
        self.scanned += (found.end() if found else min(endpos, len(string))) - pos
        return found

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self._count(string, pos, endpos, self.pattern.search(string, pos, endpos))

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self._count(string, pos, endpos, self.pattern.match(string, pos, endpos))

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self._count(string, pos, endpos, self.pattern.fullmatch(string, pos, endpos))

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        self.scanned += min(endpos, len(string)) - pos
        return self.pattern.finditer(string, pos, endpos)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pattern, name)


@pytest.mark.parametrize(
    "unit",
    [
        "피해자 <<<내국인이름>>>A<<</내국인이름>>>는 ",
        "보은군 <<면>>00<</면>> ",  # two-bracket tags only: was quadratic (6.5 s for 40k tags on a line)
        "<<면>>00<</면>> <<<X>>>A<<</X>>> ",
        "<<<X>>> <<<X>>>A<<</X>>> ",
    ],
)
def test_parsing_reads_each_character_a_bounded_number_of_times(unit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Linear time, checked by counting: every regular expression of the parser together reads at most a few
    times the document's length, for 40k tags on one line (the speed itself: tools/bench_annotation.py)."""
    counters = []
    for name, value in vars(annotation).items():
        if isinstance(value, re.Pattern):
            counters.append(_CountingPattern(value))
            monkeypatch.setattr(annotation, name, counters[-1])
    raw = unit * 40_000 + "끝"
    doc = annotation.parse_annotated(raw)
    assert len(doc.placeholders) == 40_000 * unit.count("<</")
    assert counters and sum(c.scanned for c in counters) <= 3 * len(raw)
