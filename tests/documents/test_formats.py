"""Document formats: DOCX and HWPX read in reading order with a location map and written back with every
replacement inside the runs that held the text, nothing else changed, no replaced text left in any part, and restored
from a mapping the same way; PDF read from its text layer; every unsafe or unreadable file refused with one line.
Fixtures are built with python-docx and python-hwpx, and saved by Word and Hancom Office (``files/``, its README says
where each comes from); identifiers are found by the recognizers alone (no model). HWP 5: ``test_hwp.py``."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import docx
import pytest
from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import Part
from docx.oxml import parse_xml as docx_xml
from hwp_files import judgment_hwp
from hwpx import HwpxDocument
from lxml import etree

from thunder.cli import main
from thunder.deid import Deidentifier
from thunder.deid.mapping import replacing_edits
from thunder.documents.formats import FormatError, Replacement, read_document, render

FILES = Path(__file__).parent / "files"
W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
W = f"{{{W_NS}}}"
IDENTIFIERS = ("홍길동", "010-1234-5678", "900101-1234567", "김철수")
FOOTNOTES = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:footnotes xmlns:w="{W_NS}">'
             '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
             '<w:footnote w:id="1"><w:p><w:r><w:t xml:space="preserve">피고인 홍길동의 휴대전화 010-1234-5678</w:t>'
             "</w:r></w:p></w:footnote></w:footnotes>")  # fmt: skip
XXE = (b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
       b'<w:document xmlns:w="' + W_NS.encode() + b'"><w:body><w:p><w:r><w:t>&x;</w:t></w:r></w:p></w:body></w:document>')
DELETION = (f'<w:del xmlns:w="{W_NS}" w:id="90" w:author="김철수" w:date="2024-03-01T00:00:00Z"><w:r>'
            "<w:delText>피고인 홍길동</w:delText></w:r></w:del>")  # fmt: skip


def judgment_docx(path: Path) -> Path:
    """A judgment as DOCX: a header, a name split across a bold and an italic run, a parties table, a footnote, a
    comment, a tracked deletion and document properties naming the defendant."""
    document = docx.Document()
    properties = document.core_properties
    properties.author = properties.last_modified_by = "홍길동"
    properties.title = "피고인 홍길동 판결"
    document.sections[0].header.paragraphs[0].text = "서울중앙지방법원 2024고단1234 피고인 홍길동"
    body = document.add_paragraph("피고인 ")
    body.add_run("홍").bold = True
    body.add_run("길동").italic = True
    body.add_run("은 피해자에게 전화(010-1234-5678)하였다.")
    body._p.append(docx_xml(f'<w:r xmlns:w="{W_NS}"><w:footnoteReference w:id="1"/></w:r>'))
    table = document.add_table(rows=2, cols=2)
    for row, (key, value) in enumerate((("피고인", "피고인 홍길동"), ("주민등록번호", "900101-1234567"))):
        table.cell(row, 0).text, table.cell(row, 1).text = key, value
    remark = document.add_paragraph("증인 김철수의 진술은 믿기 어렵다.")
    document.add_comment(remark.runs[0], text="증인 김철수의 주소 확인", author="김철수", initials="김")
    document.add_paragraph("판사 이판사")._p.append(docx_xml(DELETION))
    footnotes = Part(PackURI("/word/footnotes.xml"), CT.WML_FOOTNOTES, FOOTNOTES.encode(), document.part.package)
    document.part.relate_to(footnotes, RT.FOOTNOTES)
    document.save(path)
    return path


def judgment_hwpx(path: Path) -> Path:
    """A judgment as HWPX: a header, a name split across two runs of different character shapes, a parties table,
    a footnote, a memo, a tracked deletion, and document properties naming the defendant."""
    document = HwpxDocument.new()
    document.page.set_header(text="서울중앙지방법원 2024고단1234 피고인 홍길동")
    body = document.add_paragraph("피고인 ")
    body.add_run("홍", bold=True)
    body.add_run("길동", italic=True)
    body.add_run("은 피해자에게 전화(010-1234-5678)하였다.")
    document.notes.add_footnote("피고인 홍길동의 휴대전화 010-1234-5678", body)
    table = document.add_table(2, 2)
    for row, (key, value) in enumerate((("피고인", "피고인 홍길동"), ("주민등록번호", "900101-1234567"))):
        table.set_cell_text(row, 0, key)
        table.set_cell_text(row, 1, value)
    remark = document.add_paragraph("증인 김철수의 진술은 믿기 어렵다.")
    document.add_memo_with_anchor("증인 김철수의 주소 확인", paragraph=remark, author="김철수")
    deleted = document.add_paragraph("판사 이판사 피고인 홍길동")
    document.add_tracked_delete(deleted, match="피고인 홍길동", author="김철수")
    data = document.to_bytes()
    parts = _parts(data)
    properties = parts["Contents/content.hpf"].replace(b"synthetic-fixture-author", "홍길동".encode())
    parts["Contents/content.hpf"] = properties.replace(b"<opf:title/>", "<opf:title>피고인 홍길동 판결</opf:title>".encode())
    path.write_bytes(_zip(parts, data))
    return path


def _parts(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def _zip(parts: dict[str, bytes], like: bytes | None = None) -> bytes:
    """A ZIP of ``parts``, each stored with the compression of ``like``'s part of that name."""
    kinds = {}
    if like is not None:
        with zipfile.ZipFile(io.BytesIO(like)) as archive:
            kinds = {info.filename: info.compress_type for info in archive.infolist()}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in parts.items():
            archive.writestr(name, content, kinds.get(name, zipfile.ZIP_DEFLATED))
    return out.getvalue()


def deidentified(path: Path, out_format: str | None = None) -> tuple[str, bytes]:
    """The document's text and its output file, de-identified by the recognizers as ``thunder deid`` does it."""
    extracted = read_document(path)
    result = Deidentifier(model=None)(extracted.text)
    edits = [Replacement(*edit) for edit in replacing_edits(extracted.text, result.text, result.spans)]
    return extracted.text, render(extracted, edits, out_format, {s.text: s.placeholder for s in result.spans})


def assert_no_identifier(data: bytes) -> None:
    """No identifier in any part, as UTF-8 or UTF-16, XML-escaped or not."""
    for name, content in _parts(data).items():
        for identifier in IDENTIFIERS:
            for encoded in (identifier.encode(), identifier.encode("utf-16-le")):
                assert encoded not in content, f"{identifier} survives in {name}"


def texts_blanked(xml: bytes) -> bytes:
    """An XML part with the text of its text elements and its authors removed: its structure and formatting."""
    root = etree.fromstring(xml)
    for element in root.iter():
        for key in [key for key in element.attrib if etree.QName(key).localname == "author"]:
            del element.attrib[key]
        if element.get("name") == "Author":  # an HWPX memo's author
            element.text = None
        if isinstance(element.tag, str) and etree.QName(element).localname in ("t", "delText"):
            element.text = None
            for child in element:
                child.tail = None
            element.attrib.pop("{http://www.w3.org/XML/1998/namespace}space", None)
    return etree.tostring(root, method="c14n")


# ----------------------------------------------------------------------------------------------- DOCX


def test_docx_reads_every_place_in_reading_order_with_a_location_map(tmp_path: Path) -> None:
    extracted = read_document(judgment_docx(tmp_path / "j.docx"))
    text = extracted.text
    places = ["피고인 홍길동은 피해자에게", "피고인\n피고인 홍길동\n주민등록번호\n900101-1234567", "증인 김철수의 진술",
              "서울중앙지방법원 2024고단1234 피고인 홍길동", "피고인 홍길동의 휴대전화",
              "증인 김철수의 주소 확인"]  # fmt: skip
    found = [text.index(place) for place in places]
    assert found == sorted(found), "body, table, header, footnote, comment: in that order"
    assert "피고인 홍길동" in text[text.index("판사 이판사") :]  # the tracked deletion
    name = text.index("홍길동은")
    first, second = extracted.location(name), extracted.location(name + 1)
    assert (first.part, first.offset) == ("word/document.xml", 0)
    assert (second.part, second.run, second.offset) == ("word/document.xml", first.run + 1, 0)  # the italic run
    assert extracted.location(text.index("\n")) is None  # a paragraph break lives nowhere


def test_docx_round_trip_replaces_in_the_runs_and_changes_nothing_else(tmp_path: Path) -> None:
    source = judgment_docx(tmp_path / "j.docx")
    text, data = deidentified(source)
    before, after = _parts(source.read_bytes()), _parts(data)
    assert_no_identifier(data)
    assert set(after) == set(before) - {"docProps/thumbnail.jpeg"}  # the thumbnail shows the text: dropped
    assert b"thumbnail" not in after["_rels/.rels"] + after["[Content_Types].xml"]
    changed = {name for name in after if before[name] != after[name]}
    assert changed == {"word/document.xml", "word/header1.xml", "word/footnotes.xml", "word/comments.xml",
                       "docProps/core.xml", "_rels/.rels"}  # fmt: skip
    for name in changed - {"docProps/core.xml", "_rels/.rels"}:
        assert texts_blanked(before[name]) == texts_blanked(after[name]), f"{name}: structure or formatting changed"
    runs = docx.Document(io.BytesIO(data)).paragraphs[0].runs
    assert [(r.text, r.bold, r.italic) for r in runs[:3]] == [("피고인 ", None, None), ("A는", True, None), ("", None, True)]
    reread = read_document(_written(tmp_path / "out.docx", data)).text
    assert reread.startswith("피고인 A는 피해자에게 전화(B)하였다.")
    assert "주민등록번호\nC" in reread and "증인 D의 주소 확인" in reread
    core = after["docProps/core.xml"].decode()
    assert "<dc:creator>A</dc:creator>" in core and "<dc:title>피고인 A 판결</dc:title>" in core
    assert 'w:author="D"' in after["word/comments.xml"].decode()


def test_docx_written_as_hwpx_and_text(tmp_path: Path) -> None:
    source = judgment_docx(tmp_path / "j.docx")
    _, hwpx_data = deidentified(source, "hwpx")
    assert_no_identifier(hwpx_data)
    assert "피고인 A는 피해자에게" in read_document(_written(tmp_path / "out.hwpx", hwpx_data)).text
    _, text = deidentified(source, "text")
    assert text.decode().startswith("피고인 A는 피해자에게 전화(B)하였다.\n")


def _written(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# ----------------------------------------------------------------------------------------------- HWPX


def test_hwpx_reads_every_place_with_a_location_map(tmp_path: Path) -> None:
    extracted = read_document(judgment_hwpx(tmp_path / "j.hwpx"))
    text = extracted.text
    for place in ("서울중앙지방법원 2024고단1234 피고인 홍길동", "피고인 홍길동은 피해자에게", "피고인 홍길동의 휴대전화",
                  "주민등록번호\n900101-1234567", "증인 김철수의 주소 확인"):  # fmt: skip
        assert place in text
    name = text.index("홍길동은")
    first, second = extracted.location(name), extracted.location(name + 1)
    assert first.part == second.part == "Contents/section0.xml" and second.run == first.run + 1


def test_hwpx_round_trip_replaces_in_the_runs_and_changes_nothing_else(tmp_path: Path) -> None:
    source = judgment_hwpx(tmp_path / "j.hwpx")
    _, data = deidentified(source)
    before, after = _parts(source.read_bytes()), _parts(data)
    assert_no_identifier(data)
    assert set(after) == set(before) - {"Preview/PrvImage.png"}
    assert list(after)[0] == "mimetype" and zipfile.ZipFile(io.BytesIO(data)).infolist()[0].compress_type == 0
    changed = {name for name in after if before[name] != after[name]}
    assert changed == {"Contents/section0.xml", "Contents/header.xml", "Contents/content.hpf", "Preview/PrvText.txt"}
    assert texts_blanked(before["Contents/section0.xml"]) == texts_blanked(after["Contents/section0.xml"])
    assert "<opf:title>피고인 A 판결</opf:title>" in after["Contents/content.hpf"].decode()
    assert after["Preview/PrvText.txt"].decode().startswith("서울중앙지방법원 2024고단1234 피고인 A")
    section = etree.fromstring(after["Contents/section0.xml"])
    hp = "{http://www.hancom.co.kr/hwpml/2011/paragraph}"
    body = next(p for p in section.iter(f"{hp}p") if "".join(p.itertext()).startswith("피고인 A는"))
    runs = [(run.get("charPrIDRef"), "".join(t.text or "" for t in run.iter(f"{hp}t")))
            for run in body.iter(f"{hp}run")]  # fmt: skip
    shapes = {run.get("charPrIDRef") for run in etree.fromstring(before["Contents/section0.xml"]).iter(f"{hp}run")}
    assert [text for _, text in runs[:3]] == ["피고인 ", "A는", ""] and len({shape for shape, _ in runs[:3]}) == 3
    assert all(shape in shapes for shape, _ in runs)
    reread = HwpxDocument.open(data)
    assert "증인 D의 주소 확인" in read_document(_written(tmp_path / "out.hwpx", data)).text
    reread.close()


def test_hwpx_spaces_written_as_elements_keep_words_apart(tmp_path: Path) -> None:
    """A non-breaking or fixed-width space Hancom writes as an element (``<hp:nbSpace/>``) reads as a space, so the
    words around it are not read as one, and the name before it is replaced."""
    source = judgment_hwpx(tmp_path / "j.hwpx")
    hp = "{http://www.hancom.co.kr/hwpml/2011/paragraph}"
    with zipfile.ZipFile(source) as package:
        parts = {info.filename: package.read(info) for info in package.infolist()}
    section = etree.fromstring(parts["Contents/section0.xml"])
    text = next(t for t in section.iter(f"{hp}t") if t.text and "김철수의 주소" in t.text)
    before, after = text.text.split("김철수의 ", 1)
    text.text = before + "김철수의"
    etree.SubElement(text, f"{hp}nbSpace").tail = after
    parts["Contents/section0.xml"] = etree.tostring(section, xml_declaration=True, encoding="UTF-8", standalone=True)
    spaced = tmp_path / "spaced.hwpx"
    with zipfile.ZipFile(spaced, "w") as package:
        for name, data in parts.items():
            package.writestr(name, data, zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED)
    assert "증인 김철수의\u00a0주소 확인" in read_document(spaced).text
    _, data = deidentified(spaced)
    assert "김철수" not in read_document(_written(tmp_path / "out.hwpx", data)).text


def test_a_new_hwpx_carries_nothing_of_the_template() -> None:
    """A document written new (an HWP 5 or a text as HWPX) names no author and no dates of python-hwpx's template,
    shows no template preview image, and its preview text is its own start."""
    from thunder.documents.formats import hwpx as hwpx_format

    data = hwpx_format.create("피고인 A는\n무죄.")
    parts = _parts(data)
    assert not any(name.startswith("Preview/PrvImage") for name in parts)
    assert b"synthetic-fixture-author" not in b"".join(parts.values()) and b"2025-09-17" not in parts["Contents/content.hpf"]
    assert parts["Preview/PrvText.txt"].decode() == "피고인 A는\r\n무죄."
    assert HwpxDocument.open(data).paragraphs[0].text == "피고인 A는"


def test_hwpx_written_as_docx(tmp_path: Path) -> None:
    _, data = deidentified(judgment_hwpx(tmp_path / "j.hwpx"), "docx")
    assert_no_identifier(data)
    assert any(p.text.startswith("피고인 A는") for p in docx.Document(io.BytesIO(data)).paragraphs)


# ----------------------------------------------------------------------------------------------- PDF


def pdf_bytes(content: bytes) -> bytes:
    """A one-page PDF drawing ``content`` (a content stream) in Helvetica."""
    objects = [b"<</Type/Catalog/Pages 2 0 R>>", b"<</Type/Pages/Kids[3 0 R]/Count 1>>",
               b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>",
               b"<</Length %d>>stream\n%s\nendstream" % (len(content), content),
               b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>"]  # fmt: skip
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 6\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return out + b"trailer<</Size 6/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % xref


def test_pdf_text_layer_is_written_as_text_or_docx(tmp_path: Path) -> None:
    source = _written(tmp_path / "j.pdf", pdf_bytes(b"BT /F1 12 Tf 72 720 Td (Tel 010-1234-5678, RRN 900101-1234567) Tj ET"))
    extracted = read_document(source)
    at = extracted.text.index("010")
    assert extracted.location(at).part == "page 1" and extracted.location(at).offset == 4
    _, text = deidentified(source)
    assert text.decode().startswith("Tel A, RRN B")
    _, data = deidentified(source, "docx")
    assert_no_identifier(data)


# ----------------------------------------------------------------------------------------------- fail closed


def _docx_with(tmp_path: Path, name: str, **parts: bytes) -> Path:
    data = judgment_docx(tmp_path / "base.docx").read_bytes()
    return _written(tmp_path / name, _zip({**_parts(data), **parts}, data))


@pytest.mark.parametrize(
    "make, reason",
    [
        (lambda t: _written(t / "cut.docx", judgment_docx(t / "j.docx").read_bytes()[:3000]), "corrupt or truncated"),
        (lambda t: _written(t / "locked.docx", bytes.fromhex("d0cf11e0a1b11ae1") + bytes(600)), "encrypted"),
        (lambda t: _written(t / "macro.docm", judgment_docx(t / "j.docx").read_bytes()), "macro-enabled"),
        (lambda t: _docx_with(t, "vba.docx", **{"word/vbaProject.bin": b"\0" * 10}), "macro-enabled"),
        (lambda t: _docx_with(t, "ole.docx", **{"word/embeddings/oleObject1.bin": b"\0"}), "embedded object"),
        (lambda t: _docx_with(t, "bomb.docx", **{"word/media/zeros.bin": bytes(4 << 20)}), "zip bomb"),
        (lambda t: _docx_with(t, "many.docx", **{f"customXml/i{n}.xml": b"<a/>" for n in range(10_001)}), "too many parts"),
        (lambda t: _docx_with(t, "xxe.docx", **{"word/document.xml": XXE}), "DTD"),
        (lambda t: _written(t / "scan.pdf", pdf_bytes(b"0 0 m 100 100 l S")), "no text layer"),
        (lambda t: _written(t / "cut.pdf", pdf_bytes(b"BT ET")[:40]), "corrupt or truncated"),
        (lambda t: _written(t / "old.hwp", bytes.fromhex("d0cf11e0a1b11ae1")), "corrupt or truncated"),
    ],
)
def test_unsafe_or_unreadable_documents_are_refused_with_one_line(tmp_path: Path, make, reason: str) -> None:
    with pytest.raises(FormatError, match=reason) as error:
        read_document(make(tmp_path))
    assert "\n" not in str(error.value)


def test_a_document_in_which_a_replaced_text_survives_is_not_written(tmp_path: Path, monkeypatch) -> None:
    """A writer that leaves a replaced text in a run is caught by the check after writing; a text the de-identified
    text keeps on purpose (one mention left, as the pipeline leaves a word inside a longer one) is no secret."""
    source = judgment_docx(tmp_path / "j.docx")
    extracted = read_document(source)
    mentions = [Replacement(m.start(), m.end(), "A") for m in re.finditer("홍길동", extracted.text)]
    render(extracted, mentions[:1])  # the others stay in the de-identified text: written as it says
    from thunder.documents.formats import docx as docx_format

    write = docx_format.write
    monkeypatch.setattr(docx_format, "write", lambda extracted, replacements, secrets: write(extracted, [], secrets))
    with pytest.raises(FormatError, match="survives"):
        render(extracted, mentions)


def test_thunder_deid_writes_each_format_and_refuses_a_bad_file(tmp_path: Path, capsys) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    judgment_docx(inputs / "a.docx")
    judgment_hwpx(inputs / "b.hwpx")
    _written(inputs / "c.pdf", pdf_bytes(b"BT /F1 12 Tf 72 720 Td (Tel 010-1234-5678) Tj ET"))
    (inputs / "d.txt").write_text("피고인 홍길동은 010-1234-5678", encoding="utf-8")
    _written(inputs / "e.docx", b"PK\x03\x04 cut")
    judgment_hwp(inputs / "f.hwp")
    with pytest.raises(SystemExit) as exit_code:
        main(["deid", "--recognizers_only", str(inputs), "--out", str(tmp_path / "out")])
    assert exit_code.value.code == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if "e.docx" in line]
    assert len(lines) == 1 and "corrupt or truncated" in lines[0]
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["a.docx", "b.hwpx", "c.txt", "d.txt",
                                                                                  "f.hwpx"]  # fmt: skip
    for name in ("a.docx", "b.hwpx", "f.hwpx"):
        assert_no_identifier((out / name).read_bytes())
    assert (out / "c.txt").read_text(encoding="utf-8").startswith("Tel A")
    main(["deid", "--recognizers_only", str(inputs / "a.docx"), "--out", str(tmp_path / "as_hwpx"), "--out_format", "hwpx"])
    assert "피고인 A는" in read_document(tmp_path / "as_hwpx" / "a.hwpx").text


def test_thunder_reidentify_restores_each_document_in_its_own_format(tmp_path: Path, capsys) -> None:
    inputs, out, restored = tmp_path / "in", tmp_path / "out", tmp_path / "restored"
    inputs.mkdir()
    sources = {"a.docx": judgment_docx(inputs / "a.docx"), "b.hwpx": judgment_hwpx(inputs / "b.hwpx"),
               "c.hwpx": judgment_hwp(inputs / "c.hwp")}  # fmt: skip
    keys = ["--mapping", str(tmp_path / "m.jsonl"), "--key_file", str(tmp_path / "k.key")]
    main(["deid", "--recognizers_only", str(inputs), "--out", str(out), *keys])
    main(["reidentify", *keys, str(out), "--out", str(restored)])
    for name, source in sources.items():
        assert read_document(restored / name).text == read_document(source).text, name
    original, back = _parts((inputs / "a.docx").read_bytes()), _parts((restored / "a.docx").read_bytes())
    assert texts_blanked(back["word/document.xml"]) == texts_blanked(original["word/document.xml"])
    runs = docx.Document(restored / "a.docx").paragraphs[0].runs
    assert [(r.text, r.bold, r.italic) for r in runs[:3]] == [("피고인 ", None, None), ("홍길동은", True, None), ("", None, True)]
    assert "<dc:creator>A</dc:creator>" in back["docProps/core.xml"].decode()  # properties stay as written
    _written(out / "p.pdf", pdf_bytes(b"BT /F1 12 Tf 72 720 Td (Tel A) Tj ET"))
    _written(out / "z.docx", judgment_docx(tmp_path / "z.docx").read_bytes())  # never de-identified
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["reidentify", *keys, str(out / "p.pdf"), str(out / "z.docx"), "--out", str(tmp_path / "r2")])
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(errors) == 2 and all("no mapping record" in line for line in errors)
    assert not (tmp_path / "r2").exists()


def test_documents_saved_by_word_and_hancom_round_trip(tmp_path: Path) -> None:
    """A footer text across two runs of a Word file and the author its properties name; a word of a Hancom HWPX,
    its title and preview: replaced, every other part and all formatting untouched."""
    source = read_document(FILES / "word-header-footer.docx")
    at = source.text.index("section 1")
    data = render(source, [Replacement(at, at + len("section 1"), "A")], spans={"Steve Canny": "B"})
    before, after = _parts(source.data), _parts(data)
    assert {name for name in after if before[name] != after[name]} == {"word/footer2.xml", "docProps/core.xml"}
    assert texts_blanked(before["word/footer2.xml"]) == texts_blanked(after["word/footer2.xml"])
    assert [t.text or "" for t in etree.fromstring(after["word/footer2.xml"]).iter(f"{W}t")] == ["Footer for A", ""]
    core = after["docProps/core.xml"].decode()
    assert "Steve Canny" not in core and "<dc:creator>B</dc:creator>" in core
    assert read_document(_written(tmp_path / "w.docx", data)).text == source.text.replace("section 1", "A")
    source = read_document(FILES / "hancom-anthem.hwpx")
    at = source.text.index("백두산")
    data = render(source, [Replacement(at, at + 3, "A")])
    before, after = _parts(source.data), _parts(data)
    assert set(after) == set(before) - {"Preview/PrvImage.png"} and list(after)[0] == "mimetype"
    changed = {name for name in after if before[name] != after[name]}
    assert changed == {"Contents/section0.xml", "Contents/content.hpf", "Preview/PrvText.txt"}
    assert texts_blanked(before["Contents/section0.xml"]) == texts_blanked(after["Contents/section0.xml"])
    hpf = after["Contents/content.hpf"].decode()
    assert "<opf:title>동해 물과 A이 마르고 닳도록</opf:title>" in hpf and ">alfal<" in hpf and "PrvImage" not in hpf
    assert after["Preview/PrvText.txt"].decode().startswith("동해 물과 A이 마르고 닳도록\r\n")
    assert read_document(_written(tmp_path / "h.hwpx", data)).text == source.text.replace("백두산", "A")
