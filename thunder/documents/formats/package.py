"""ZIP packages of XML parts (DOCX, HWPX): read within limits, XML parsed without entities, DTDs or network, the
text of chosen elements read in document order with the place of every character, replacements written back into
those elements, every other part scrubbed of the replaced texts, and the written package checked part by part.

A part the writer does not change is written back with the same bytes; changed parts are serialised by lxml.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from lxml import etree

from thunder.documents.formats.base import (Extracted, FormatError, Replacement, Segment, apply, run_edits, scrub,
                                            survivor)  # fmt: skip

MAX_ENTRIES = 10_000  # parts in one package
MAX_EXPANDED = 256 << 20  # bytes of all parts, expanded
MAX_RATIO = 200  # expanded / compressed, for a part over RATIO_FROM bytes
RATIO_FROM = 1 << 20
OLE_SIGNATURE = bytes.fromhex("d0cf11e0a1b11ae1")  # an encrypted OOXML file, or a binary HWP 5 / DOC file
XML_SUFFIXES = (".xml", ".rels", ".hpf", ".rdf")
XML_NS = "http://www.w3.org/XML/1998/namespace"

Slot = tuple[etree._Element, str]  # an element and "text" or "tail": one run of characters


@dataclass(frozen=True)
class XmlText:
    """Which elements of a format's XML hold text: ``text`` elements (their text, and the tails of their children,
    each child giving the separator ``inline`` names), ``paragraph`` elements (a line break between two), and
    ``breaks``: elements that are a separator when a child of a ``run`` element (a tab, a line break)."""

    text: frozenset[str]
    paragraph: str
    run: str = ""
    breaks: Mapping[str, str] = field(default_factory=dict)
    inline: Mapping[str, str] = field(default_factory=dict)
    preserve_space: bool = False  # mark an edited text element xml:space="preserve" when it starts or ends in space


class Package:
    """The parts of a ZIP package, read within the limits; refused (:class:`FormatError`) when encrypted, corrupt,
    truncated, or too large expanded (a zip bomb)."""

    def __init__(self, data: bytes) -> None:
        if data.startswith(OLE_SIGNATURE):
            raise FormatError("encrypted (password-protected), or a binary file under this name: an OLE compound "
                              "file, not a ZIP package")  # fmt: skip
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, OSError, ValueError) as error:
            raise FormatError(f"corrupt or truncated: not a readable ZIP package ({error})") from None
        self.infos = archive.infolist()
        self._check(self.infos)
        self.parts: dict[str, bytes] = {}
        for info in self.infos:
            try:
                self.parts[info.filename] = archive.read(info)
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError) as error:
                raise FormatError(f"corrupt or truncated: part {info.filename} cannot be read ({error})") from None

    @staticmethod
    def _check(infos: list[zipfile.ZipInfo]) -> None:
        if len(infos) > MAX_ENTRIES:
            raise FormatError(f"too many parts ({len(infos):,} > {MAX_ENTRIES:,}): refused as a possible zip bomb")
        if sum(info.file_size for info in infos) > MAX_EXPANDED:
            raise FormatError(f"expands past {MAX_EXPANDED >> 20} MiB: refused as a possible zip bomb")
        names = set()
        for info in infos:
            if info.flag_bits & 0x1:
                raise FormatError(f"part {info.filename} is encrypted (password-protected)")
            if info.file_size > RATIO_FROM and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                raise FormatError(f"part {info.filename} expands {info.file_size // max(info.compress_size, 1):,} "
                                  "times: refused as a possible zip bomb")  # fmt: skip
            if info.filename in names:
                raise FormatError(f"part {info.filename} appears twice")
            names.add(info.filename)

    def xml_names(self) -> list[str]:
        return [name for name in self.parts if name.lower().endswith(XML_SUFFIXES)]

    def check_parts(self, reachable: re.Pattern) -> None:
        """Refuse a part of a kind whose text cannot be reached (not matching ``reachable``), and an XML part that
        is not well-formed or declares a DTD."""
        for name in self.parts:
            if not name.endswith("/") and not reachable.fullmatch(name):
                raise FormatError(f"holds a part whose text cannot be reached ({name})")
        for name in self.xml_names():
            parse_xml(self.parts[name], name)

    def text_parts(self, tags: Sequence[str]) -> list[str]:
        """The XML parts that hold an element of ``tags`` (text the reader maps)."""
        return [name for name in self.xml_names()
                if next(parse_xml(self.parts[name], name).getroot().iter(*tags), None) is not None]  # fmt: skip

    def save(self, changed: Mapping[str, bytes], dropped: frozenset[str] = frozenset()) -> bytes:
        """The package with ``changed`` parts replaced and ``dropped`` ones left out; every other part keeps its
        bytes, and every part its name, order and compression."""
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            for info in self.infos:
                if info.filename not in dropped:
                    archive.writestr(info, changed.get(info.filename, self.parts[info.filename]))
        return out.getvalue()


def drop(package: Package, pattern: re.Pattern[str]) -> frozenset[str]:
    """The parts whose names match ``pattern``, to leave out; every element of an XML part with an attribute that
    names one of them (a relationship, a manifest entry) is removed from ``package.parts``."""
    dropped = frozenset(name for name in package.parts if pattern.fullmatch(name))
    for name in package.xml_names() if dropped else []:
        tree = parse_xml(package.parts[name], name)
        naming = [e for e in tree.getroot().iter() if isinstance(e.tag, str) and e.getparent() is not None
                  and any(value.lstrip("/") in dropped for value in e.attrib.values())]  # fmt: skip
        for element in naming:
            element.getparent().remove(element)
        if naming:
            package.parts[name] = serialise(tree)
    return dropped


def parse_xml(data: bytes, name: str) -> etree._ElementTree:
    """An XML part parsed with no entity expansion, no DTD and no network; a part with a DTD is refused."""
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise FormatError(f"part {name} declares a DTD or entities (refused: XML may not read files or the network)")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        tree = etree.parse(io.BytesIO(data), parser)
    except etree.XMLSyntaxError as error:
        raise FormatError(f"corrupt or truncated: part {name} is not well-formed XML ({error})") from None
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None:
        raise FormatError(f"part {name} declares a DTD (refused: XML may not read files or the network)")
    return tree


def serialise(tree: etree._ElementTree) -> bytes:
    info = tree.docinfo
    return etree.tostring(tree, xml_declaration=True, encoding=info.encoding or "UTF-8", standalone=info.standalone)


def _walk(root: etree._Element, spec: XmlText) -> Iterator[tuple[int, Slot | str]]:
    """``(paragraph, slot or separator)`` in document order."""
    index = {p: i for i, p in enumerate(root.iter(spec.paragraph))}

    def paragraph(element: etree._Element) -> int:
        return next((index[p] for p in element.iterancestors(spec.paragraph)), -1)

    for element in root.iter():
        if element.tag in spec.text:
            where = paragraph(element)
            yield where, (element, "text")
            for child in element:
                yield where, spec.inline.get(child.tag, "")
                yield where, (child, "tail")
        elif element.tag in spec.breaks:
            parent = element.getparent()
            if parent is not None and parent.tag == spec.run:
                yield paragraph(element), spec.breaks[element.tag]


def slots(root: etree._Element, spec: XmlText) -> list[Slot]:
    return [item for _, item in _walk(root, spec) if not isinstance(item, str)]


def read_text(package: Package, names: list[str], spec: XmlText, extracted: Extracted) -> dict[str, etree._ElementTree]:
    """Append the text of the parts ``names`` (in that order) to ``extracted``, one line per paragraph; returns the
    parsed parts."""
    pieces = [extracted.text]
    length = len(extracted.text)
    trees = {}
    for name in names:
        trees[name] = tree = parse_xml(package.parts[name], name)
        last = None
        run = 0
        for where, item in _walk(tree.getroot(), spec):
            if last is not None and where != last or last is None and length:
                pieces.append("\n")
                length += 1
            last = where
            if isinstance(item, str):
                text = item
            else:
                text = getattr(item[0], item[1]) or ""
                if text:
                    extracted.segments.append(Segment(length, length + len(text), name, where, run))
                run += 1
            pieces.append(text)
            length += len(text)
    extracted.text = "".join(pieces)
    return trees


def write_text(package: Package, extracted: Extracted, replacements: list[Replacement], spec: XmlText,
               secrets: Mapping[str, str]) -> dict[str, bytes]:  # fmt: skip
    """The XML parts changed: replacements made in the runs of the mapped parts, every secret scrubbed from the
    other text and the attributes of every XML part."""
    edits = run_edits(extracted, replacements)
    mapped = {segment.part for segment in extracted.segments}
    changed: dict[str, bytes] = {}
    for name in package.xml_names():
        tree = parse_xml(package.parts[name], name)
        held = slots(tree.getroot(), spec) if name in mapped else []
        dirty = False
        for (part, run), run_changes in edits.items():
            if part == name:
                element, attr = held[run]
                new = apply(getattr(element, attr) or "", run_changes)
                setattr(element, attr, new)
                if spec.preserve_space and attr == "text" and new != new.strip():
                    element.set(f"{{{XML_NS}}}space", "preserve")
                dirty = True
        dirty |= _scrub_tree(tree.getroot(), {(id(e), a) for e, a in held}, secrets)
        if dirty:
            changed[name] = serialise(tree)
    return changed


def _scrub_tree(root: etree._Element, held: set[tuple[int, str]], secrets: Mapping[str, str]) -> bool:
    secrets = _present(_values(root), secrets)  # one search of the whole part, then each value for those found
    if not secrets:
        return False
    dirty = False
    for element in root.iter():
        for attr in ("text", "tail"):
            value = getattr(element, attr)
            if value and (id(element), attr) not in held and survivor(value, secrets):
                setattr(element, attr, scrub(value, secrets))
                dirty = True
        if isinstance(element.tag, str):
            for key, value in element.attrib.items():
                if survivor(value, secrets):
                    element.set(key, scrub(value, secrets))
                    dirty = True
    return dirty


def check_written(data: bytes, secrets: Mapping[str, str], reread: Callable[[bytes], Extracted]) -> None:
    """Refuse a written package in which a secret survives: in the text its reader gives (runs joined), in any text
    or attribute of any XML part, or in the bytes of any other part (UTF-8 or UTF-16)."""
    found = survivor(reread(data).text, secrets)
    if found is not None:
        raise FormatError("a replaced text survives in the written document's text")
    for name, content in Package(data).parts.items():
        if name.lower().endswith(XML_SUFFIXES):
            found = next(iter(_present(_values(parse_xml(content, name).getroot()), secrets)), None)
        else:
            found = next((s for s in secrets if s.encode("utf-8") in content or s.encode("utf-16-le") in content), None)
        if found is not None:
            raise FormatError(f"a replaced text survives in part {name} of the written document")


def _present(values: Iterable[str], secrets: Mapping[str, str]) -> dict[str, str]:
    """The secrets found in any of ``values``: one search of each secret in the values joined by NUL (which no XML
    text, hence no secret, holds), not one search of each secret in each value."""
    joined = "\x00".join(values)
    return {secret: new for secret, new in secrets.items() if secret in joined}


def _values(root: etree._Element) -> Iterator[str]:
    """Every text, tail and attribute value of an XML tree."""
    for element in root.iter():
        yield from (value for value in (element.text, element.tail) if value)
        if isinstance(element.tag, str):
            yield from element.attrib.values()
