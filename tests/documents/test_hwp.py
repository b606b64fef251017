"""HWP 5 (binary): read from the OLE compound file's record streams in reading order with a location map, written
only as a new HWPX (the default), DOCX or text, never as HWP; every protected, damaged or unreachable file refused
with one line naming the reason. Files saved by Hancom Office are in ``files/`` (its README says where each comes
from); judgments are built by ``hwp_files`` from the published record format."""

from __future__ import annotations

import io
import re
import struct
import zipfile
from pathlib import Path

import docx
import olefile
import pytest
from hwp_files import (COMPRESSED, CTRL_HEADER, DISTRIBUTION, EQEDIT, JUDGMENT_TEXT, PARA_HEADER, PARA_TEXT, PASSWORD,
                       TRACKED_CHANGES, BIN_DATA, Control, compound_file, deflated, file_header, hwp_file, judgment_hwp,
                       paragraph, record, table)  # fmt: skip
from test_formats import _parts, _written, assert_no_identifier, deidentified

from thunder.cli import main
from thunder.deid import Deidentifier
from thunder.documents.formats import FormatError, Replacement, output_name, read_document, render

FILES = Path(__file__).parent / "files"


def test_hwp_reads_every_place_in_reading_order_with_a_location_map(tmp_path: Path) -> None:
    extracted = read_document(judgment_hwp(tmp_path / "j.hwp"))
    text = extracted.text
    # header, body, the footnote where it stands, table cells row by row, an empty paragraph, a name across a field,
    # a tab, a line break, the hidden comment after its paragraph
    assert text == JUDGMENT_TEXT
    name = extracted.location(text.index("홍길동은"))
    assert (name.part, name.offset) == ("BodyText/Section0", 4)
    footnote = extracted.location(text.index("피고인 홍길동의 휴대전화"))
    assert footnote.paragraph == name.paragraph + 1 and footnote.run == name.run + 1
    first, second = extracted.location(text.index("김철수")), extracted.location(text.index("김철수") + 1)
    assert first.paragraph == second.paragraph and second.run == first.run + 1 and second.offset == 0  # the field
    assert extracted.location(text.index("\t")) is None and extracted.location(text.index("\n")) is None


def test_paragraphs_anywhere_in_a_section_are_read(tmp_path: Path) -> None:
    """A control whose character the text lacks, and a paragraph below a paragraph outside any control: read after
    the paragraph's text, never dropped."""
    cells = table(0, [["900101-1234567"]])
    orphan = record(CTRL_HEADER, 1, cells.ctrl_id[::-1] + cells.data) + cells.records
    section = paragraph(0, "피고인 홍길동") + orphan + paragraph(1, "증인 김철수") + paragraph(0, "끝", last=True)
    assert read_document(_written(tmp_path / "s.hwp", hwp_file([section]))).text == (
        "피고인 홍길동\n900101-1234567\n증인 김철수\n끝")  # fmt: skip


def test_an_hwp_saved_by_hancom_reads_as_the_hwpx_it_saved_and_as_its_own_preview() -> None:
    hwp_text = read_document(FILES / "hancom-anthem.hwp").text
    hwpx_text = read_document(FILES / "hancom-anthem.hwpx").text
    lines = [line for line in hwp_text.split("\n") if line]
    assert len(lines) == 12 and lines == [line for line in hwpx_text.split("\n") if line]
    with olefile.OleFileIO(str(FILES / "hancom-anthem.hwp")) as ole:
        preview = ole.openstream("PrvText").read().decode("utf-16-le")  # Hancom's own text: table cells in <...>
    assert preview.replace("<", " ").replace(">", " ").split() == hwp_text.split()


def test_an_hwp_is_written_as_a_new_hwpx_by_default_or_as_docx_or_text_never_as_hwp(tmp_path: Path) -> None:
    assert (output_name("a/j.hwp", None), output_name("j.HWP", "docx"), output_name("j.hwp", "text")) == (
        "a/j.hwpx", "j.docx", "j.txt")  # fmt: skip
    source = judgment_hwp(tmp_path / "j.hwp")
    text, data = deidentified(source)
    expected = Deidentifier(model=None)(text).text
    assert expected.startswith("서울중앙지방법원 2024고단1234 피고인 A\n판결\n피고인 A는 피해자에게\n")
    assert "\n증인 D의 진술은\t믿기 어렵다.\n" in expected
    assert zipfile.ZipFile(io.BytesIO(data)).read("mimetype") == b"application/hwp+zip"
    assert_no_identifier(data)  # the preview text of the .hwp named the defendant: nothing of it travels
    assert read_document(_written(tmp_path / "out.hwpx", data)).text == expected
    _, as_docx = deidentified(source, "docx")
    assert_no_identifier(as_docx)
    assert "\n".join(p.text for p in docx.Document(io.BytesIO(as_docx)).paragraphs) == expected
    assert deidentified(source, "text")[1] == expected.encode()


def test_a_hancom_hwp_written_as_hwpx_keeps_nothing_of_its_binary_file(tmp_path: Path) -> None:
    extracted = read_document(FILES / "hancom-anthem.hwp")
    mountain = [Replacement(at, at + 3, "A") for at in (extracted.text.index("백두산"),)]
    data = render(extracted, mountain)
    written = read_document(_written(tmp_path / "anthem.hwpx", data)).text
    assert written == extracted.text.replace("백두산", "A")
    for name, content in _parts(data).items():  # the title and the author live in the .hwp's summary properties
        for text in ("백두산", "alfal"):
            assert text.encode() not in content and text.encode("utf-16-le") not in content, f"{text} in {name}"


def _section(*records: bytes) -> bytes:
    return paragraph(0, "피고인 홍길동", last=True) + b"".join(records)


def _raw_sections(section: bytes, flags: int = COMPRESSED) -> bytes:
    """An HWP file whose only section stream is ``section`` as given (not compressed by us)."""
    info = record(0x10, 0, struct.pack("<H", 1) + bytes(24))
    info = deflated(info) if flags & COMPRESSED else info
    return compound_file({"FileHeader": file_header(flags), "DocInfo": info, "BodyText/Section0": section})


def _deep(levels: int) -> bytes:
    return b"".join(record(PARA_HEADER, level, bytes(24)) for level in range(levels))


REFUSED = [  # (name, file bytes (made in tmp_path), the reason's words)
    ("password", lambda: hwp_file([_section()], COMPRESSED | PASSWORD), "encrypted (password-protected)"),
    ("password, saved by Hancom", lambda: (FILES / "hancom-password.hwp").read_bytes(), "password-protected"),
    ("distribution", lambda: hwp_file([_section()], COMPRESSED | DISTRIBUTION), "distribution document (배포용 문서)"),
    ("DRM", lambda: hwp_file([_section()], COMPRESSED | 0x10), "DRM-protected"),
    ("tracked changes", lambda: hwp_file([_section()], COMPRESSED | TRACKED_CHANGES), "tracked changes"),
    ("truncated, saved by Hancom", lambda: (FILES / "hancom-anthem.hwp").read_bytes()[:25000], "corrupt or truncated"),
    ("cut in half", lambda: hwp_file([_section()])[:1200], "corrupt or truncated"),
    ("not deflate", lambda: _raw_sections(b"\xff" * 64), "does not decompress"),
    ("deflate cut off", lambda: _raw_sections(deflated(_section())[:-4]), "corrupt or truncated"),
    ("record past the end", lambda: _raw_sections(record(PARA_TEXT, 1, bytes(40))[:20], 0), "runs past its end"),
    ("a section missing", lambda: hwp_file([_section()], section_count=2), "names 2 sections"),
    ("equation", lambda: hwp_file([_section(record(EQEDIT, 1, bytes(8)))]), "an equation"),
    ("덧말", lambda: hwp_file([paragraph(0, "피고인", Control(23, b"tdut"), last=True)]), "덧말"),
    ("embedded OLE object", lambda: hwp_file([_section()], doc_info=record(BIN_DATA, 1, b"\x02\x00" + bytes(4))),
     "embedded OLE object"),
    ("HWPX named .hwp", lambda: b"PK\x03\x04" + bytes(100), "suffix .hwpx"),
    ("HWP 3", lambda: b"HWP Document File V3.00 \x1a\x01\x02\x03\x04\x05" + bytes(100), "HWP 3"),
    ("not HWP 5", lambda: compound_file({"FileHeader": file_header(COMPRESSED, 0x04000000)}), "version 4"),
    ("a bomb", lambda: hwp_file([_section(record(PARA_TEXT, 1, bytes(4 << 20)))]), "expands"),
    ("nested too deep", lambda: hwp_file([_deep(200)]), "levels deep"),
    ("lone surrogate", lambda: _raw_sections(record(PARA_HEADER, 0, bytes(24)) + record(PARA_TEXT, 1, b"\x00\xd8\r\x00"),
                                             0), "not valid UTF-16"),
    ("control cut off", lambda: _raw_sections(record(PARA_HEADER, 0, bytes(24)) + record(PARA_TEXT, 1, b"\x0b\x00"), 0),
     "control character is cut off"),
]  # fmt: skip


@pytest.mark.parametrize("name, make, reason", REFUSED, ids=[case[0] for case in REFUSED])
def test_a_protected_damaged_or_unreachable_hwp_is_refused_with_one_line(
    name: str, make, reason: str, tmp_path: Path
) -> None:
    with pytest.raises(FormatError, match=re.escape(reason)) as error:
        read_document(_written(tmp_path / "x.hwp", make()))
    assert "\n" not in str(error.value)


def test_thunder_deid_writes_an_hwp_as_hwpx_or_docx_and_refuses_a_locked_one(tmp_path: Path, capsys) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    judgment_hwp(inputs / "judgment.hwp")
    _written(inputs / "locked.hwp", (FILES / "hancom-password.hwp").read_bytes())
    (inputs / "note.txt").write_text("피고인 홍길동은 010-1234-5678", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_code:
        main(["deid", "--recognizers_only", str(inputs), "--out", str(tmp_path / "out")])
    assert exit_code.value.code == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if "locked.hwp" in line]
    assert len(lines) == 1 and "encrypted (password-protected)" in lines[0]
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["judgment.hwpx", "note.txt"]
    assert_no_identifier((out / "judgment.hwpx").read_bytes())
    main(["deid", "--recognizers_only", str(inputs / "judgment.hwp"), "--out", str(tmp_path / "as_docx"), "--out_format", "docx"])
    assert read_document(tmp_path / "as_docx" / "judgment.docx").text.startswith("서울중앙지방법원 2024고단1234 피고인 A\n")
    with pytest.raises(SystemExit, match="would be written as judgment.hwpx: give --out"):
        main(["deid", "--recognizers_only", str(inputs / "judgment.hwp"), "--in_place"])
