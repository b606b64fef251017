"""HWP 5 files for tests, written from the published record format (Hancom, 한글 문서 파일 구조 5.0, revision 1.3)
into an OLE compound file (MS-CFB version 3) by a small writer of our own: olefile reads compound files but cannot
create one. Real files saved by Hancom Office are in ``files/`` (see its README)."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path

SECTOR, MINI_SECTOR, MINI_CUTOFF = 512, 64, 4096
FREE, END, FAT_SECTOR, NO_ENTRY = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, 0xFFFFFFFF
COMPRESSED, PASSWORD, DISTRIBUTION, TRACKED_CHANGES = 0x1, 0x2, 0x4, 0x4000
DOCUMENT_PROPERTIES, BIN_DATA = 0x10, 0x12
PARA_HEADER, PARA_TEXT, PARA_CHAR_SHAPE, CTRL_HEADER, LIST_HEADER, TABLE, EQEDIT = 0x42, 0x43, 0x44, 0x47, 0x48, 0x4D, 0x58


# ----------------------------------------------------------------------------------------------- compound file


@dataclass
class _Entry:
    name: str
    kind: int  # 1 storage, 2 stream, 5 root
    data: bytes = b""
    children: list[_Entry] = field(default_factory=list)
    start: int = END
    left: int = NO_ENTRY
    right: int = NO_ENTRY
    child: int = NO_ENTRY


def compound_file(streams: dict[str, bytes]) -> bytes:
    """An OLE compound file (version 3, 512-byte sectors) holding ``streams`` by path (``BodyText/Section0``):
    streams under 4,096 bytes in the mini stream (the root entry's stream), the others in sectors of their own."""
    root = _Entry("Root Entry", 5)
    for path, data in streams.items():
        parent = root
        *storages, name = path.split("/")
        for storage in storages:
            found = next((e for e in parent.children if e.name == storage), None)
            if found is None:
                found = _Entry(storage, 1, start=0)
                parent.children.append(found)
            parent = found
        parent.children.append(_Entry(name, 2, data))
    entries = [root]
    _number(root, entries)
    mini, mini_fat = bytearray(), []
    for entry in entries:
        if entry.kind == 2 and 0 < len(entry.data) < MINI_CUTOFF:
            entry.start = len(mini) // MINI_SECTOR
            count = -(-len(entry.data) // MINI_SECTOR)
            mini_fat += [entry.start + k + 1 for k in range(count - 1)] + [END]
            mini += entry.data.ljust(count * MINI_SECTOR, b"\0")
    root.data = bytes(mini)
    big = [entry for entry in entries if entry.kind == 2 and len(entry.data) >= MINI_CUTOFF]
    chains = [bytes(len(entries) * 128), struct.pack(f"<{len(mini_fat)}I", *mini_fat), root.data, *(e.data for e in big)]
    sizes = [-(-len(chain) // SECTOR) for chain in chains]
    fat_count = 1
    while fat_count * (SECTOR // 4) < fat_count + sum(sizes):
        fat_count += 1
    fat, starts = [FAT_SECTOR] * fat_count, []
    for size in sizes:
        starts.append(fat_count + sum(sizes[: len(starts)]) if size else END)
        fat += [starts[-1] + k + 1 for k in range(size - 1)] + [END] * (size > 0)
    root.start = starts[2]
    for entry, start in zip(big, starts[3:]):
        entry.start = start
    chains[0] = b"".join(_directory_entry(e) for e in entries)
    fat += [FREE] * (fat_count * SECTOR // 4 - len(fat))
    header = struct.pack("<8s16sHHHHH6sIIIIIIIII", bytes.fromhex("d0cf11e0a1b11ae1"), bytes(16), 0x3E, 3, 0xFFFE, 9, 6,
                         bytes(6), 0, fat_count, starts[0], 0, MINI_CUTOFF, starts[1], sizes[1], END, 0)  # fmt: skip
    header += struct.pack("<109I", *range(fat_count), *[FREE] * (109 - fat_count))
    body = b"".join(chain.ljust(size * SECTOR, b"\0") for chain, size in zip(chains, sizes))
    return header + struct.pack(f"<{len(fat)}I", *fat) + body


def _number(storage: _Entry, entries: list[_Entry]) -> None:
    """Number the entries below ``storage`` and link each storage's children as a binary search tree."""
    children = sorted(storage.children, key=lambda e: (len(e.name), e.name.upper()))
    for child in children:
        entries.append(child)
    index = {id(e): len(entries) - len(children) + k for k, e in enumerate(children)}

    def tree(items: list[_Entry]) -> int:
        if not items:
            return NO_ENTRY
        middle = len(items) // 2
        node = items[middle]
        node.left, node.right = tree(items[:middle]), tree(items[middle + 1 :])
        return index[id(node)]

    storage.child = tree(children)
    for child in children:
        if child.kind == 1:
            _number(child, entries)


def _directory_entry(entry: _Entry) -> bytes:
    name = entry.name.encode("utf-16-le")
    return struct.pack("<64sHBBIII16sIQQIQ", name, len(name) + 2, entry.kind, 1, entry.left, entry.right, entry.child,
                       bytes(16), 0, 0, 0, entry.start, len(entry.data))  # fmt: skip


# ----------------------------------------------------------------------------------------------- records


def record(tag: int, level: int, payload: bytes = b"") -> bytes:
    """One data record: its header (a long one past 4,094 bytes) and its payload."""
    if len(payload) < 0xFFF:
        return struct.pack("<I", tag | level << 10 | len(payload) << 20) + payload
    return struct.pack("<II", tag | level << 10 | 0xFFF << 20, len(payload)) + payload


@dataclass
class Control:
    """An extended control character in a paragraph's text (``code`` 11 a table, 16 a header, 17 a footnote, 3 a
    field start, ...) and the records below its CTRL_HEADER (one level down)."""

    code: int
    ctrl_id: bytes
    records: bytes = b""
    data: bytes = bytes(20)  # the rest of the control header


FIELD_END = 4  # an inline control character


def paragraph(level: int, *content: str | Control | int, shapes: tuple[int, ...] = (0,), split: int = 0,
              last: bool = False) -> bytes:  # fmt: skip
    """A paragraph at ``level``: its text from ``content`` (strings, where ``\\n`` is a line break and ``\\t`` a tab;
    extended controls; an inline control character's code), a character shape changing at each of ``shapes``; the
    text in two records, the second from code unit ``split`` (0: one record)."""
    units: list[int] = []
    controls = b""
    for item in content:
        if isinstance(item, Control):
            id_units = struct.unpack("<2H", item.ctrl_id[::-1])
            units += [item.code, *id_units, 0, 0, 0, 0, item.code]
            controls += record(CTRL_HEADER, level + 1, item.ctrl_id[::-1] + item.data) + item.records
        elif isinstance(item, int):
            units += [item, 0, 0, 0, 0, 0, 0, item]
        else:
            for char in item:
                if char == "\n":
                    units.append(10)
                elif char == "\t":
                    units += [9, 0, 0, 0, 0, 0, 0, 9]
                else:
                    units += struct.unpack(f"<{len(char.encode('utf-16-le')) // 2}H", char.encode("utf-16-le"))
    units.append(13)
    header = struct.pack("<IIHBBHHHIH", len(units) | (1 << 31 if last else 0), 0, 0, 0, 0, len(shapes), 0, 1, 0, 0)
    pieces = [units[:split], units[split:]] if split else [units] if len(units) > 1 else []
    text = b"".join(record(PARA_TEXT, level + 1, struct.pack(f"<{len(piece)}H", *piece)) for piece in pieces)
    char_shapes = record(PARA_CHAR_SHAPE, level + 1, b"".join(struct.pack("<II", at, k) for k, at in enumerate(shapes)))
    return record(PARA_HEADER, level, header) + text + char_shapes + controls


def paragraph_list(level: int, paragraphs: list[bytes]) -> bytes:
    """A LIST_HEADER at ``level`` and its paragraphs (built at the same level)."""
    return record(LIST_HEADER, level, struct.pack("<hI", len(paragraphs), 0) + bytes(34)) + b"".join(paragraphs)


def table(level: int, rows: list[list[str]]) -> Control:
    """A table control whose cells hold one paragraph each, row by row."""
    inner = level + 2
    cells = b"".join(paragraph_list(inner, [paragraph(inner, text, last=True)]) for row in rows for text in row)
    shape = struct.pack("<IHH", 0, len(rows), len(rows[0])) + bytes(16)
    return Control(11, b"tbl ", record(TABLE, inner, shape) + cells)


def note_list(code: int, ctrl_id: bytes, level: int, *texts: str) -> Control:
    """A control holding one paragraph list (a header 'head', a footer 'foot', a footnote 'fn  ', a hidden comment
    'tcmt')."""
    inner = level + 2
    paragraphs = [paragraph(inner, text, last=k == len(texts) - 1) for k, text in enumerate(texts)]
    return Control(code, ctrl_id, paragraph_list(inner, paragraphs))


def deflated(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


def file_header(flags: int = COMPRESSED, version: int = 0x05000500) -> bytes:
    """The FileHeader stream: signature, version (5.0.5.0) and properties."""
    return (b"HWP Document File".ljust(32, b"\0") + struct.pack("<II", version, flags)).ljust(256, b"\0")


def hwp_file(sections: list[bytes], flags: int = COMPRESSED, doc_info: bytes = b"", section_count: int | None = None,
             **streams: bytes) -> bytes:  # fmt: skip
    """An HWP 5 file of ``sections`` (record streams), DocInfo naming ``section_count`` sections (default: theirs;
    ``doc_info``: more records), and other ``streams`` by name (``PrvText``; ``__`` for a storage's ``/``)."""
    pack = deflated if flags & COMPRESSED else bytes
    count = len(sections) if section_count is None else section_count
    info = record(DOCUMENT_PROPERTIES, 0, struct.pack("<H", count) + bytes(24)) + doc_info
    files = {"FileHeader": file_header(flags), "DocInfo": pack(info)}
    files |= {f"BodyText/Section{n}": pack(section) for n, section in enumerate(sections)}
    return compound_file(files | {name.replace("__", "/"): data for name, data in streams.items()})


# ----------------------------------------------------------------------------------------------- a judgment


def judgment_hwp(path: Path, flags: int = COMPRESSED) -> Path:
    """A judgment as HWP 5: a header, a defendant's name split across two text records and two character shapes
    (``홍`` | ``길동``) and another across a field's start (a click-here field around ``철수``), a parties table, a
    footnote, a hidden comment, a tab, a line break, an empty paragraph, and the preview text naming the defendant."""
    first = paragraph(0, note_list(16, b"head", 0, "서울중앙지방법원 2024고단1234 피고인 홍길동"), "판결")
    body = paragraph(0, "피고인 홍길동은 피해자에게", note_list(17, b"fn  ", 0, "피고인 홍길동의 휴대전화 010-1234-5678"),
                     " 전화(010-1234-5678)하였다.", shapes=(0, 4, 5), split=5)  # fmt: skip
    parties = paragraph(0, table(0, [["피고인", "피고인 홍길동"], ["주민등록번호", "900101-1234567"]]))
    witness = paragraph(0, "증인 김", Control(3, b"%clk"), "철수", FIELD_END, "의 진술은\t믿기 어렵다.\n(증거기록 12쪽)",
                        note_list(15, b"tcmt", 0, "증인 김철수의 주소 확인"))  # fmt: skip
    section = first + body + parties + paragraph(0) + witness + paragraph(0, "판사 이판사", last=True)
    preview = "<서울중앙지방법원 2024고단1234 피고인 홍길동>\r\n판결\r\n피고인 홍길동은 피해자에게".encode("utf-16-le")
    path.write_bytes(hwp_file([section], flags, PrvText=preview))
    return path


JUDGMENT_TEXT = ("서울중앙지방법원 2024고단1234 피고인 홍길동\n판결\n피고인 홍길동은 피해자에게\n피고인 홍길동의 휴대전화 "
                 "010-1234-5678\n 전화(010-1234-5678)하였다.\n피고인\n피고인 홍길동\n주민등록번호\n900101-1234567\n\n"
                 "증인 김철수의 진술은\t믿기 어렵다.\n(증거기록 12쪽)\n증인 김철수의 주소 확인\n판사 이판사")  # fmt: skip
