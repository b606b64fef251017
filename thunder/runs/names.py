"""What outputs are called: one :class:`Slot` per document, under names and ids that carry no identifier.

A court publishes an output's name with its text, and a run's spans file and review queue name documents by the
same ids. By default (``--keep_names`` keeps the inputs' own):

- a name or id in which the recognizers find an identifier (a folder, a file stem, a JSONL id) is replaced whole
  before any document is read (:func:`hide_identifying`);
- once a document is de-identified, a name or id holding any text replaced in it (as written, with ``_`` read as a
  space, or its letters and digits alone, or a Hangul word of it inside a replaced text) is replaced the same way
  (:func:`holds_replaced`, ``OutputPlan.named``).

The replacement is the input's digest (:attr:`Slot.hidden`: ``doc-`` and 20 hex digits of the SHA-256 over the
input's relative name and its file's bytes): the same from run to run, different for two inputs, and never to be
guessed from a name, since the bytes it covers are the original document. A hidden file's output goes to the top of
the output directory (``OUT/doc-….txt``, the suffix kept). A text file's id is its path as given, every folder of it
checked (``case-800101-1234567/a.txt`` is hidden).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, replace
from enum import Enum
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Callable

from thunder.deid.pipeline import PipelineOptions
from thunder.deid.policy import PublicationPolicy
from thunder.documents.sources import InputError, Listing, read_jsonl
from thunder.runs.settings import files_sha256

HIDDEN_PREFIX = "doc-"
HIDDEN_DIGITS = 20
MIN_REPLACED = 2  # replaced texts shorter than this (one letter) are not looked for in names
MIN_SQUEEZED = 6  # a replaced text's letters and digits alone are looked for from this length (010-1234-5678)
_HANGUL_WORD = re.compile(r"[가-힣]{2,}")  # a name's Hangul words, which a replaced name may stand in
_LETTER_DASH = re.compile(r"(?<=[^\W\d_])-(?=\d)|(?<=\d)-(?=[^\W\d_])")


class Layout(str, Enum):
    """Where each document's output goes under the output directory."""

    MIRROR = "mirror"  # the input's relative path; a JSONL input gives a JSONL output; one spans file
    PER_DOCUMENT = "per_document"  # one text file per document (JSONL records too), its spans file beside it


@dataclass(frozen=True)
class Slot:
    """Where one document's output goes: the file ``name`` under the output directory, or (``record``) the line
    with the document's id inside the JSONL file ``name``."""

    name: str  # relative to the output directory (the input's relative path under MIRROR)
    doc: str  # the document id (a text file's: its path), as the mapping records name it
    record: bool = False
    where: str = ""  # the input, for messages: FILE or FILE:LINE
    source: Path | None = None  # the input file (``in_place`` writes over it)
    out_id: str | None = None  # the id written in the output, the spans file and the queue; None: ``doc``
    key: str = ""  # the input's relative name (a record's: with its id): what the digest covers beside the bytes

    @property
    def output_id(self) -> str:
        """The id the output, the spans file and the review queue name the document by."""
        return self.doc if self.out_id is None else self.out_id

    @cached_property
    def hidden(self) -> str:
        """``doc-`` and the digest of the input (its relative name and its file's bytes)."""
        digest = hashlib.sha256(self.key.encode("utf-8", "surrogateescape") + b"\0")
        if self.source is not None and self.source.is_file():
            status = self.source.stat()
            digest.update(_file_digest(str(self.source), status.st_mtime_ns, status.st_size))
        return HIDDEN_PREFIX + digest.hexdigest()[:HIDDEN_DIGITS]

    @property
    def hidden_name(self) -> str:
        """The output file under the digest (a JSONL record stays in its JSONL output, under a hidden id)."""
        return self.name if self.record else self.hidden + name_pieces(self.name)[1]

    def hiding(self) -> Slot:
        """This slot under its digest: name and id (written over its input, ``in_place`` writes to ``source``)."""
        if self.record:
            return replace(self, out_id=self.hidden)
        return replace(self, name=self.hidden_name, out_id=self.hidden_name)


@lru_cache(maxsize=None)
def _file_digest(path: str, modified: int, size: int) -> bytes:
    """The SHA-256 of a file's bytes (cached while it keeps its time and size: many records share one file, and a
    run plans its outputs twice)."""
    return bytes.fromhex(files_sha256(path))


def name_pieces(name: str) -> tuple[list[str], str]:
    """The folders and the file stem of a relative output name (or a path), and its suffix (``.txt``)."""
    *folders, last = name.replace(os.sep, "/").split("/")
    folders = [folder for folder in folders if folder]
    stem, dot, suffix = last.rpartition(".") if "." in last.lstrip(".") else (last, "", "")
    return [*folders, stem], dot + suffix


def mirror_slots(listing: Listing, rename: Callable[[str], str] | None = None) -> list[Slot]:
    """The slots of ``thunder deid``'s inputs (``rename``: a file's output name from its relative path, e.g. another
    format's suffix); two records of one JSONL file with one id are refused."""
    slots = []
    for file in listing.files:
        if not file.jsonl:
            name = rename(file.relative) if rename else file.relative
            slots.append(Slot(name, str(file.path), where=str(file.path), source=file.path, key=name))
            continue
        first: dict[str, int] = {}
        for doc in read_jsonl(file):
            if doc.error is None and doc.id in first:
                raise InputError(f"{file.path}:{doc.line}: id {doc.id!r} repeats line {first[doc.id]}")
            first.setdefault(doc.id, doc.line or 0)
            slots.append(Slot(file.relative, doc.id, True, doc.where, file.path, key=f"{file.relative}\0{doc.id}"))
    return slots


def hide_identifying(slots: list[Slot], identifying: Callable[[list[str]], list[bool]]) -> list[Slot]:
    """``slots`` with those whose folders, file stem or record id hold an identifier (``identifying``: texts ->
    whether each holds one) under their digests (:meth:`Slot.hiding`)."""
    texts = list(dict.fromkeys(text for slot in slots for text in _named(slot)))
    found = {text for text, holds in zip(texts, identifying([readable(t) for t in texts])) if holds}
    return [slot.hiding() if found.intersection(_named(slot)) else slot for slot in slots]


def readable(name: str) -> str:
    """A name as the recognizers read text: ``_`` and a dash between a letter and a digit as spaces
    (``case-800101-1234567``: the number's own dash stays)."""
    return _LETTER_DASH.sub(" ", name.replace("_", " "))


def identifying_names(pipeline: PipelineOptions, policy: PublicationPolicy) -> Callable[[list[str]], list[bool]] | None:
    """Whether the pipeline's recognizers, alone (names have no sentence around them for a model to read, and must
    stay the same from run to run), find an identifier in each of some names; None when it runs no recognizer."""
    if pipeline.recognizers == []:
        return None
    deidentifier = replace(pipeline, model=None, verify=None, recognizers_only=True).build(policy)

    def identifying(names: list[str]) -> list[bool]:
        found = []
        for i in range(0, len(names), pipeline.batch_size):  # as deidentify_batch, which counts the documents' batches
            texts = names[i : i + pipeline.batch_size]
            found += [bool(deidentifier.finish(t, p).spans) for t, p in zip(texts, deidentifier.predict_tokens(texts))]
        return found

    return identifying


def _named(slot: Slot) -> list[str]:
    """The texts that name a slot's output: the folders and stem of its file, and its id (a record's, or a text
    file's path as given, every folder of it)."""
    return [*name_pieces(slot.name)[0], *([slot.doc] if slot.record else name_pieces(slot.doc)[0])]


def holds_replaced(name: str, replaced: set[str]) -> bool:
    """Whether ``name`` holds one of the ``replaced`` texts (as written, with ``_`` read as a space, or, a text of
    :data:`MIN_SQUEEZED` letters and digits or more, its letters and digits alone), or one of its Hangul words stands
    in one (``홍길동`` in a replaced ``홍길동은 010-…``: a span may take more than the name)."""
    spaced, squeezed = name.replace("_", " "), _squeezed(name)
    words = _HANGUL_WORD.findall(name)
    for text in replaced:
        text = text.strip()
        if len(text) < MIN_REPLACED:
            continue
        letters = _squeezed(text)
        if text in name or text in spaced or (len(letters) >= MIN_SQUEEZED and letters in squeezed):
            return True
        if any(word in text for word in words):
            return True
    return False


def _squeezed(text: str) -> str:
    return "".join(c for c in text.casefold() if c.isalnum())


def replaced_texts(result: Any) -> set[str]:
    """The texts a de-identification result replaced."""
    return {span.text for span in result.spans}


def escaped(text: str) -> str:
    """``text`` on one line: control characters (a line break in a file name) written as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
