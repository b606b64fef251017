"""``thunder deid``: de-identify text files, directories, JSONL or stdin."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from thunder.deid import Deidentifier
from thunder.outputs import span_record, write_atomic


@dataclass(frozen=True)
class _Doc:
    id: str
    text: str
    out_path: str | None  # relative output path for text inputs; None for JSONL lines
    group: str  # the input the document came from (JSONL inputs are written as one file)


class InputError(Exception):
    """An input that cannot be read; the message names the file and position."""


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: not valid UTF-8 at byte {error.start} ({error.reason})") from None


def iter_inputs(inputs: Sequence[str], errors: list[str]) -> Iterator[_Doc]:
    """Documents of text files, directories (``*.txt``/``*.md`` recursively), JSONL files or stdin; problems are
    appended to ``errors`` and the remaining inputs still read."""
    if not inputs:
        data = sys.stdin.buffer.read()
        try:
            yield _Doc("<stdin>", data.decode("utf-8"), "stdin.txt", "<stdin>")
        except UnicodeDecodeError as error:
            errors.append(f"<stdin>: not valid UTF-8 at byte {error.start} ({error.reason})")
        return
    for name in inputs:
        path = Path(name)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix in (".txt", ".md") and p.is_file())
            pairs = [(p, p.relative_to(path).as_posix()) for p in files]
        elif path.is_file() or not path.exists():
            pairs = [(path, path.name)]
        else:
            errors.append(f"{path}: not a file or directory")
            continue
        for file, relative in pairs:
            try:
                if file.suffix == ".jsonl":
                    yield from _read_jsonl(file, errors)
                else:
                    yield _Doc(str(file), _read_text(file), relative, str(file))
            except InputError as error:
                errors.append(str(error))
            except OSError as error:
                errors.append(f"{file}: cannot read ({error.strerror or error})")


def _read_jsonl(path: Path, errors: list[str]) -> Iterator[_Doc]:
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            text = record["text"]
            if not isinstance(text, str):
                raise TypeError("'text' is not a string")
        except (ValueError, KeyError, TypeError) as error:
            errors.append(f"{path}:{number}: bad JSONL record ({error})")
            continue
        yield _Doc(str(record.get("id", f"{path.name}:{number}")), text, None, str(path))


def _batched(items: Iterable[_Doc], size: int) -> Iterator[list[_Doc]]:
    batch: list[_Doc] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def deid_command(
    model: str | None = None,
    inputs: list[str] = [],
    out: str | None = None,
    spans: str | None = None,
    operator: str = "placeholder",
    recognizers: list[str] | None = None,
    batch_size: int = 8,
    max_length: int = 512,
    stride: int = 128,
    device: str | None = None,
    threshold: float = 0.5,
) -> None:
    """De-identify text files, directories (*.txt, *.md recursively), JSONL ({"id", "text"} per line) or stdin.

    Args:
        model: export directory or .ckpt of a trained Thunder model (omit to use only the pattern recognizers).
        inputs: files, directories or .jsonl files; stdin when none.
        out: output directory (files written atomically; JSONL inputs keep their name); stdout when omitted: the
            text itself for stdin or a single text file, otherwise one {"id", "text"} JSON line per document.
        spans: write the replaced spans as JSONL (doc, start, end, text, label, category, tier1, placeholder, score,
            source) to this file.
        operator: placeholder (A, B, ...), tag ([label]), mask (***), surrogate, or a module.Class path.
        recognizers: pattern recognizers by name or module.Class path (default: all built-in; [] for none).
        batch_size: windows per forward pass (and documents per step).
        max_length: window length in tokens, special tokens included.
        stride: overlap between consecutive windows in tokens.
        device: torch device for the model (default: where it was loaded).
        threshold: a token is an identifier when the model's 1 - P(O) exceeds this (lower: fewer leaks, more
            over-redaction).
    """
    options = dict(recognizers=recognizers, operator=operator, max_length=max_length, stride=stride,
                   batch_size=batch_size, device=device, threshold=threshold)  # fmt: skip
    deidentifier = Deidentifier.from_pretrained(model, **options) if model else Deidentifier(**options)
    errors: list[str] = []
    span_lines: list[str] = []
    jsonl_outputs: dict[str, list[str]] = {}
    out_dir = Path(out) if out else None
    plain = not inputs or (len(inputs) == 1 and Path(inputs[0]).is_file() and Path(inputs[0]).suffix != ".jsonl")
    for batch in _batched(iter_inputs(inputs, errors), batch_size):
        for doc, result in zip(batch, deidentifier.deidentify_batch([d.text for d in batch])):
            span_lines += [json.dumps(span_record(doc.id, s), ensure_ascii=False) for s in result.spans]
            if out_dir is None:
                line = json.dumps({"id": doc.id, "text": result.text}, ensure_ascii=False) + "\n"
                sys.stdout.write(result.text if plain else line)
            elif doc.out_path is None:
                line = json.dumps({"id": doc.id, "text": result.text}, ensure_ascii=False)
                jsonl_outputs.setdefault(doc.group, []).append(line)
            else:
                write_atomic(out_dir / doc.out_path, result.text)
        sys.stdout.flush()
    for group, lines in jsonl_outputs.items():
        write_atomic(out_dir / Path(group).name, "".join(line + "\n" for line in lines))
    if spans:
        write_atomic(Path(spans), "".join(line + "\n" for line in span_lines))
    for message in errors:
        print(f"thunder deid: error: {message}", file=sys.stderr)
    if errors:
        raise SystemExit(1)
