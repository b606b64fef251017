"""Reversible mapping: per-document entity <-> placeholder tables, encrypted and authenticated (AES-GCM).

A mapping file is JSON Lines, one sealed record per de-identified document::

    {"format": "thunder-mapping", "version": 1, "key_id": "…", "lookup": "…", "nonce": "…", "ciphertext": "…"}

Only the key id (a fingerprint of the key), the nonce and a keyed lookup tag (HMAC of the de-identified text, so
that ``thunder reidentify`` finds a document's record without decrypting every record) are in the clear; the
header fields are the AES-GCM associated data, so altering any of them, or the ciphertext, is detected. The
plaintext holds the document id, the entity table (placeholder, label, mentions), the spans with their texts, and
the edits ``(start, end, original)`` that turn the de-identified text back into the original byte for byte,
checked against SHA-256 digests of both texts.

A key file holds one line ``thunder-mapping-key:v1:<base64 of 32 random bytes>`` (created mode 0600); the
encryption key, the lookup key and the key id are derived from it with HKDF-SHA256.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import hmac
import json
import logging
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Collection, Iterator, Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from thunder.documents.outputs import JsonlAppender, write_atomic
from thunder.language.particles import particle_length

FORMAT, VERSION = "thunder-mapping", 1
KEY_PREFIX = "thunder-mapping-key:v1:"
_HEADER_FIELDS = ("format", "version", "key_id", "lookup")
log = logging.getLogger(__name__)


class MappingError(ValueError):
    """A mapping or key file that cannot be used; the message names the file (and line)."""


class WrongKeyError(MappingError):
    """The record was written with another key."""


class TamperedError(MappingError):
    """The record fails authentication: it was altered or damaged."""


# ----------------------------------------------------------------------------------------------- keys


def _read_text(path: Path, encoding: str, what: str) -> str:
    """``path``'s text; a missing or unreadable file raises :class:`MappingError` naming it and ``what`` it is."""
    try:
        return path.read_text(encoding=encoding)
    except FileNotFoundError:
        raise MappingError(f"{path}: {what} not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise MappingError(f"{path}: cannot read the {what} ({error})") from None


def _derive(master: bytes, purpose: str, length: int = 32) -> bytes:
    return HKDF(hashes.SHA256(), length, salt=None, info=f"thunder-mapping/{purpose}".encode()).derive(master)


@dataclass(frozen=True, repr=False)
class MappingKey:
    """The keys derived from a 32-byte master key; ``key_id`` is a public fingerprint."""

    cipher: AESGCM
    lookup_key: bytes
    key_id: str
    source: str = "<key>"

    @classmethod
    def from_bytes(cls, master: bytes, source: str = "<key>") -> "MappingKey":
        if len(master) != 32:
            raise MappingError(f"{source}: a mapping key has 32 bytes, got {len(master)}")
        return cls(AESGCM(_derive(master, "aes-gcm")), _derive(master, "lookup"), _derive(master, "key-id", 6).hex(),
                   source)  # fmt: skip

    @classmethod
    def load(cls, path: str | Path) -> "MappingKey":
        """Read a key file; a missing or malformed file raises :class:`MappingError` naming it."""
        path = Path(path)
        try:
            line = path.read_bytes().decode("ascii").strip()
        except UnicodeDecodeError:  # random bytes, another program's key: not ours
            raise MappingError(f"{path}: not a Thunder mapping key (expected a line starting {KEY_PREFIX!r})") from None
        except FileNotFoundError:
            raise MappingError(f"{path}: key file not found") from None
        except OSError as error:
            raise MappingError(f"{path}: cannot read the key file ({error.strerror or error})") from None
        if not line.startswith(KEY_PREFIX):
            raise MappingError(f"{path}: not a Thunder mapping key (expected a line starting {KEY_PREFIX!r})")
        try:
            master = base64.urlsafe_b64decode(line[len(KEY_PREFIX) :].encode())
        except ValueError:
            raise MappingError(f"{path}: the key is not valid base64") from None
        if os.name == "posix" and path.stat().st_mode & 0o077:
            log.warning("%s: key file is readable by other users; chmod 600 it", path)
        return cls.from_bytes(master, str(path))

    @classmethod
    def generate(cls, path: str | Path) -> "MappingKey":
        """Write a new random key to ``path`` (mode 0600), whole or not at all (a full disk leaves no key file);
        refuses to overwrite an existing file."""
        path = Path(path)
        master = secrets.token_bytes(32)
        try:
            write_atomic(path, KEY_PREFIX + base64.urlsafe_b64encode(master).decode() + "\n", sync=True, exclusive=True)
        except FileExistsError:
            raise MappingError(f"{path}: exists already; not overwriting a key") from None
        return cls.from_bytes(master, str(path))

    @classmethod
    def load_or_create(cls, path: str | Path, mapping: str | Path | None = None) -> "MappingKey":
        """The key in ``path``, generated there first when the file does not exist, unless ``mapping`` (the file the
        key will seal records into) already holds records, which another key sealed: a mistyped key file is refused
        and none is created."""
        if Path(path).exists():
            return cls.load(path)
        if mapping is not None and first_record(Path(mapping)) is not None:
            raise MappingError(f"--key_file {path} does not exist, but --mapping {mapping} holds records sealed with a "
                               "key: give that key file (no new key was created)")  # fmt: skip
        key = cls.generate(path)
        log.warning("%s: created a new mapping key; keep it safe: without it the mapping cannot be read", path)
        return key

    def lookup(self, output_text: str) -> str:
        """Keyed tag of a de-identified text (reveals nothing about it without the key)."""
        return hmac.new(self.lookup_key, output_text.encode("utf-8"), hashlib.sha256).hexdigest()[:32]

    # -- records ----------------------------------------------------------------------------------------------

    def seal(self, doc_id: str, original: str, result: Any) -> dict:
        """The sealed mapping record of one document (``result`` is its :class:`thunder.deid.pipeline.DeidResult`)."""
        header = {"format": FORMAT, "version": VERSION, "key_id": self.key_id, "lookup": self.lookup(result.text)}
        nonce = secrets.token_bytes(12)
        plain = json.dumps(_plain_record(doc_id, original, result), ensure_ascii=False).encode("utf-8")
        ciphertext = self.cipher.encrypt(nonce, plain, _aad(header))
        return {**header, "nonce": _b64(nonce), "ciphertext": _b64(ciphertext)}

    def open(self, record: Any, where: str = "<record>") -> dict:
        """The decrypted content of a sealed record; a wrong key or an altered record is refused."""
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            raise MappingError(f"{where}: not a Thunder mapping record")
        if record.get("version") != VERSION:
            raise MappingError(f"{where}: mapping format version {record.get('version')!r}, expected {VERSION}")
        if record.get("key_id") != self.key_id:
            raise WrongKeyError(f"{where}: written with key id {record.get('key_id')!r}, but {self.source} has key id "
                                f"{self.key_id!r}: wrong key file")  # fmt: skip
        try:
            nonce, ciphertext = _unb64(record["nonce"]), _unb64(record["ciphertext"])
            plain = self.cipher.decrypt(nonce, ciphertext, _aad(record))
        except (KeyError, TypeError, ValueError, InvalidTag):
            raise TamperedError(f"{where}: authentication failed: the record was altered or damaged") from None
        return json.loads(plain.decode("utf-8"))


def _aad(header: dict) -> bytes:
    return json.dumps([header.get(name) for name in _HEADER_FIELDS], ensure_ascii=True).encode("ascii")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: Any) -> bytes:
    if not isinstance(text, str):
        raise TypeError(f"expected base64 text, got {type(text).__name__}")
    return base64.b64decode(text.encode("ascii"), validate=True)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ----------------------------------------------------------------------------------------------- content


def _plain_record(doc_id: str, original: str, result: Any) -> dict:
    spans = sorted(result.spans, key=lambda s: s.start)
    entities: dict[str, dict] = {}
    for span in spans:
        entity = entities.setdefault(span.placeholder, {"placeholder": span.placeholder, "label": span.label,
                                                        "category": span.category, "tier1": span.tier1,
                                                        "mentions": []})  # fmt: skip
        if span.text not in entity["mentions"]:
            entity["mentions"].append(span.text)
    return {
        "doc": doc_id,
        "original_sha256": _sha256(original),
        "output_sha256": _sha256(result.text),
        "edits": [list(edit) for edit in restoring_edits(original, result.text, spans)],
        "entities": list(entities.values()),
        "spans": [asdict(span) for span in spans],
    }


def apply_edits(output: str, edits: Sequence[Sequence[Any]]) -> str:
    """``output`` with each ``(start, end, text)`` (sorted, disjoint, in ``output`` offsets) replaced by ``text``."""
    parts, position = [], 0
    for start, end, text in edits:
        if not (isinstance(start, int) and isinstance(end, int) and position <= start <= end <= len(output)):
            raise MappingError(f"edit {start}:{end} does not fit a text of {len(output)} characters")
        parts += [output[position:start], text]
        position = end
    return "".join(parts) + output[position:]


def restoring_edits(original: str, output: str, spans: Sequence[Any]) -> list[tuple[int, int, str]]:
    """Edits that turn ``output`` (the de-identified text) back into ``original``, checked to do so.

    From the spans: the text between replacements is kept except a particle right after one, so each edit runs
    from a replacement to the kept rest of the following gap. Where that reading is ambiguous (a replacement that
    contains the following text), a character diff is used instead.
    """
    edits = _edits_from_spans(original, output, sorted(spans, key=lambda s: (s.start, s.end)))  # in text order
    if edits is None or apply_edits(output, edits) != original:
        edits = _diff(output, original)
    if apply_edits(output, edits) != original:  # cannot happen for a valid diff; never write a wrong mapping
        raise RuntimeError("could not derive edits restoring the original text")
    return edits


def _diff(output: str, original: str) -> list[tuple[int, int, str]]:
    """The edits turning ``output`` into ``original`` by a diff of lines, then of characters inside each changed line
    (line by line where a changed block keeps its number of lines): a character diff of a whole judgment is
    quadratic (seconds for 30 pages)."""
    edits: list[tuple[int, int, str]] = []
    ours, theirs = output.splitlines(keepends=True), original.splitlines(keepends=True)
    starts = [0]
    for line in ours:
        starts.append(starts[-1] + len(line))
    matcher = difflib.SequenceMatcher(None, ours, theirs, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag != "replace":
            edits.append((starts[i1], starts[i2], "".join(theirs[j1:j2])))
            continue
        pairs = (list(zip(range(i1, i2), range(j1, j2))) if i2 - i1 == j2 - j1
                 else [(None, None)])  # fmt: skip
        for i, j in pairs:
            base = starts[i1] if i is None else starts[i]
            a = "".join(ours[i1:i2]) if i is None else ours[i]
            b = "".join(theirs[j1:j2]) if j is None else theirs[j]
            same = len(os.path.commonprefix([a, b]))  # the line's unchanged start and end are not diffed
            end = min(len(os.path.commonprefix([a[same:][::-1], b[same:][::-1]])), len(a) - same, len(b) - same)
            a, b, base = a[same : len(a) - end], b[same : len(b) - end], base + same
            chars = difflib.SequenceMatcher(None, a, b, autojunk=len(a) > 20000)
            edits += [(base + k1, base + k2, b[l1:l2]) for op, k1, k2, l1, l2 in chars.get_opcodes() if op != "equal"]
    return edits


def replacing_edits(original: str, output: str, spans: Sequence[Any]) -> list[tuple[int, int, str]]:
    """The edits ``(start, end, replacement)``, in ``original`` offsets, that turn ``original`` into ``output`` (the
    de-identified text): :func:`restoring_edits` turned around, each covering a replaced span and its particle."""
    edits, shift = [], 0
    for start, end, text in restoring_edits(original, output, spans):
        edits.append((start + shift, start + shift + len(text), output[start:end]))
        shift += len(text) - (end - start)
    return edits


def _edits_from_spans(original: str, output: str, spans: Sequence[Any]) -> list[tuple[int, int, str]] | None:
    if not spans:
        return []
    if not output.startswith(original[: spans[0].start]):
        return None
    position, edits = spans[0].start, []
    for k, span in enumerate(spans):
        gap_end = spans[k + 1].start if k + 1 < len(spans) else len(original)
        kept_from = span.end + particle_length(original[span.end : gap_end])
        tail = original[kept_from:gap_end]
        if k + 1 == len(spans):
            found = len(output) - len(tail) if output.endswith(tail) else -1
        else:
            found = output.find(tail, position + 1) if tail else -1
        if found < position:
            return None
        edits.append((position, found, original[span.start : kept_from]))
        position = found + len(tail)
    return edits


def reidentify(output_text: str, record: dict) -> str:
    """The original text of a de-identified document from its opened mapping record, byte for byte."""
    if _sha256(output_text) != record.get("output_sha256"):
        raise MappingError(f"document {record.get('doc')!r}: the text differs from the de-identified output this "
                           "mapping record was written for")  # fmt: skip
    original = apply_edits(output_text, record["edits"])
    if _sha256(original) != record.get("original_sha256"):
        raise MappingError(f"document {record.get('doc')!r}: restored text does not match the original's digest")
    return original


# ----------------------------------------------------------------------------------------------- files


def read_records(path: str | Path) -> Iterator[tuple[str, dict]]:
    """``(where, record)`` of every line of a mapping file, ``where`` = ``FILE:LINE``."""
    path = Path(path)
    lines = _read_text(path, "utf-8", "mapping file").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as error:
            raise MappingError(f"{path}:{number}: not a mapping record ({error.args[0]})") from None
        yield f"{path}:{number}", record


class Mapping:
    """Every record of a mapping file, opened (so a wrong key or any altered record is refused up front)."""

    def __init__(self, path: str | Path, key: MappingKey) -> None:
        self.key = key
        self.records: dict[str, list[dict]] = {}
        for where, record in read_records(path):
            self.records.setdefault(record.get("lookup"), []).append(key.open(record, where))

    def __len__(self) -> int:
        return sum(len(found) for found in self.records.values())

    def find(self, output_text: str, doc_id: str | None = None) -> dict:
        """The record of a de-identified text; among several with different originals, the one for ``doc_id``."""
        found = self.records.get(self.key.lookup(output_text), [])
        if len({record["original_sha256"] for record in found}) > 1 and doc_id is not None:
            found = [record for record in found if _same_doc(record["doc"], doc_id)] or found
        name = "this de-identified text" if doc_id is None else f"document {doc_id!r}"
        if not found:
            raise MappingError(f"no mapping record for {name} (not written with this mapping, or edited since)")
        if len({record["original_sha256"] for record in found}) > 1:
            raise MappingError(f"{len(found)} mapping records with different originals match {name}; give the "
                               "document id it was de-identified under")  # fmt: skip
        return found[-1]


def _same_doc(recorded: str, given: str) -> bool:
    """Ids are equal, or one is a path ending in the other (``in/sub/a.txt`` and ``sub/a.txt``)."""
    shorter, longer = sorted((recorded.replace("\\", "/").split("/"), given.replace("\\", "/").split("/")), key=len)
    return longer[len(longer) - len(shorter) :] == shorter


def first_record(path: Path) -> tuple[str, dict] | None:
    """The first complete record of a mapping file and where it is (``FILE:LINE``); None for a file that holds none
    (missing, empty, or a cut-off first line); a line that is no Thunder mapping record is a :class:`MappingError`."""
    data = path.read_bytes() if path.is_file() else b""
    cut = data.rfind(b"\n") + 1
    number, first = next(((n, line) for n, line in enumerate(data[:cut].split(b"\n"), 1) if line.strip()), (0, b""))
    if not first:
        return None
    where = f"{path}:{number}"
    try:
        record = json.loads(first)
    except ValueError as error:
        raise MappingError(f"{where}: not a mapping record ({error.args[0]})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise MappingError(f"{where}: not a Thunder mapping record; a mapping is appended to a mapping file or a new "
                           "one")  # fmt: skip
    return where, record


class MappingWriter:
    """Appends one sealed record per document to a mapping file (created 0600), flushed and synced per document.

    ``MappingWriter(path, key).add(doc_id, original_text, result)``; an existing file is appended to when it was
    written with the same key, after dropping a last record cut off by an interrupted run. ``ours`` is
    :class:`thunder.documents.outputs.JsonlAppender`'s: a resumed run drops its own records of the documents it writes again
    (:meth:`drop_unfinished`).
    """

    def __init__(self, path: str | Path, key: MappingKey, ours: int | None = None) -> None:
        self.path, self.key = Path(path), key
        self._appender = JsonlAppender(self.path, self._check_existing(ours), sync=True)

    def drop_unfinished(self, pending: Collection[str], known: Collection[str]) -> None:
        """Drop our records of the documents written again (see :meth:`thunder.documents.outputs.JsonlAppender.drop_unfinished`;
        documents by id)."""
        self._appender.drop_unfinished(lambda record: self.key.open(record, str(self.path))["doc"], pending, known)

    @property
    def start(self) -> int:
        """Where the records of this run's output begin (see :class:`thunder.documents.outputs.JsonlAppender`)."""
        return self._appender.start

    def _check_existing(self, ours: int | None) -> int | None:
        """Refuse a file written with another key; a cut-off last record (only ever ours) is from then on ours."""
        data = self.path.read_bytes() if self.path.is_file() else b""
        cut = data.rfind(b"\n") + 1
        found = first_record(self.path)
        if found is not None:
            where, record = found
            if record.get("key_id") != self.key.key_id:
                raise WrongKeyError(f"{where}: written with key id {record.get('key_id')!r}, but {self.key.source} "
                                    f"has key id {self.key.key_id!r}; use that key or a new mapping file")  # fmt: skip
        if cut == len(data):
            return ours
        log.warning("%s: dropping an incomplete last record left by an interrupted run", self.path)
        return cut if ours is None else min(ours, cut)

    def add(self, doc_id: str, original_text: str, result: Any) -> dict:
        """Seal and append the record of one document; returns the record."""
        record = self.key.seal(doc_id, original_text, result)
        self._appender.write([record])
        return record

    def close(self) -> None:
        self._appender.close()

    def __enter__(self) -> "MappingWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
