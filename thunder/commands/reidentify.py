"""``thunder reidentify``: restore original texts from de-identified ones with an encrypted mapping file; a de-identified
DOCX or HWPX gets its original texts back inside the runs that hold the replacements."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from thunder.deid.mapping import Mapping, MappingError, MappingKey, reidentify
from thunder.documents.formats import FormatError, Replacement, restore
from thunder.documents.outputs import write_atomic
from thunder.runs.names import escaped
from thunder.documents.sources import (DOCUMENT_SUFFIXES, JSONL_SUFFIXES, TEXT_SUFFIXES, Document, InputError, Listing,
                                      list_inputs, read_documents)  # fmt: skip


def reidentify_command(mapping: str, key_file: str, inputs: list[str] = [], out: str | None = None) -> None:
    """Restore the original text of documents de-identified by ``thunder deid --mapping`` (or the service).

    Args:
        mapping: the mapping file written by ``thunder deid --mapping`` (JSONL of sealed records).
        key_file: the key the mapping was written with; a wrong key or an altered file is refused.
        inputs: de-identified text files, documents (.docx, .hwpx), directories or JSONL files as ``thunder deid``
            wrote them; stdin when none.
        out: output directory (each input keeps its relative path; JSONL outputs one {"id", "text"} line per
            document; a document in its own format, each original text written into the runs that hold its
            replacement; its document properties stay as they were written); stdout when omitted: the text itself
            for stdin or a single text file, else JSON lines.
    """
    try:
        listing = list_inputs(inputs, TEXT_SUFFIXES + JSONL_SUFFIXES + DOCUMENT_SUFFIXES)
        out_dir = Path(out) if out else None
        _check_out(listing, out_dir)
        store = Mapping(mapping, MappingKey.load(key_file))
    except (InputError, MappingError) as error:
        raise SystemExit(f"thunder reidentify: error: {error}") from None
    plain = listing.stdin or (len(listing.files) == 1 and not listing.files[0].jsonl)
    errors: list[str] = []
    jsonl_outputs: dict[str, list[str]] = {}
    restored = 0
    for doc in read_documents(listing):
        if doc.error is not None:
            errors.append(f"{doc.where}: {doc.error}")
            continue
        try:
            record = store.find(doc.text, _doc_id(doc))
            original = reidentify(doc.text, record)
            restored_document = None
            if doc.extracted is not None and out_dir is not None:  # the document itself, in its own format
                restored_document = restore(doc.extracted, [Replacement(*edit) for edit in record["edits"]])
        except (MappingError, FormatError) as error:
            errors.append(f"{doc.where}: {error}")
            continue
        restored += 1
        line = json.dumps({"id": doc.id, "text": original}, ensure_ascii=False) + "\n"
        if out_dir is None:
            sys.stdout.write(original if plain else line)
        elif doc.file is not None and doc.file.jsonl:
            jsonl_outputs.setdefault(doc.file.relative, []).append(line)
        else:
            content = original if restored_document is None else restored_document
            write_atomic(out_dir / (doc.file.relative if doc.file else "stdin.txt"), content)
    sys.stdout.flush()
    for relative, lines in jsonl_outputs.items():
        write_atomic(out_dir / relative, "".join(lines))  # type: ignore[operator]
    for message in errors:
        print(f"thunder reidentify: error: {escaped(message)}", file=sys.stderr)
    for line in listing.skipped:
        print(f"thunder reidentify: {escaped(line)}", file=sys.stderr)
    print(f"thunder reidentify: {restored} restored, {len(errors)} failed", file=sys.stderr)
    if not restored and not errors and not listing.stdin:
        raise SystemExit(f"thunder reidentify: error: nothing to restore: the inputs hold no text file, document or "
                         f"JSONL file ({len(listing.skipped)} skipped, named above)")  # fmt: skip
    if errors:
        raise SystemExit(1)


def _doc_id(doc: Document) -> str:
    """The id ``thunder deid`` recorded: a JSONL record's id, else the file's path (matched by its tail)."""
    return doc.file.relative if doc.file is not None and not doc.file.jsonl else doc.id


def _check_out(listing: Listing, out: Path | None) -> None:
    """Refuse an output directory that would put restored originals over (or among) the inputs."""
    if out is None:
        return
    real = out.resolve()
    for directory in listing.directories:
        if real == directory or directory in real.parents:
            raise InputError(f"--out {out} is inside the input directory {directory}; choose another directory")
    inputs = {f.path.resolve() for f in listing.files}
    for file in listing.files:
        if (real / file.relative).resolve() in inputs:
            raise InputError(f"--out {out}: would write over the input {file.path}")
