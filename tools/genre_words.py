"""Measure the common words of the judgment genre (document frequency) and write them as a genre-words list.

Annotated judgments (``*.md`` with ``<<<label>>>A<<</label>>>`` placeholders) are read without their placeholders;
plain ``*.txt`` files (published, already de-identified judgments) as they are. The packaged list is measured over
Thunder's own demo corpus:

    PYTHONPATH=. python tools/genre_words.py --input thunder/resources/demo/annotated \
        --out thunder/resources/legal/genre_words.txt
    thunder deid --model M --genre_words my_words.txt judgments/      # a list measured over a court's own judgments
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from thunder.documents.annotation import AnnotationError, read_annotated
from thunder.language.genre import common_words


def texts(inputs: list[Path]) -> Iterator[str]:
    """Each judgment's text, placeholders blanked out."""
    for root in inputs:
        for path in sorted(root.rglob("*") if root.is_dir() else [root]):
            if path.suffix == ".md":
                doc = read_annotated(path)
                text = list(doc.text)
                for placeholder in doc.placeholders:
                    text[placeholder.start : placeholder.end] = " " * (placeholder.end - placeholder.start)
                yield "".join(text)
            elif path.suffix == ".txt":
                yield path.read_text(encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", type=Path, nargs="+", required=True, help="files or directories of judgments")
    parser.add_argument("--out", type=Path, required=True, help="the list to write")
    parser.add_argument("--min_share", type=float, default=0.02, help="share of documents a word must occur in")
    parser.add_argument("--min_documents", type=int, default=3, help="documents a word must occur in")
    args = parser.parse_args(argv)
    try:
        documents = list(texts(args.input))
        words = common_words(documents, args.min_share, args.min_documents)
    except (OSError, ValueError, AnnotationError) as error:
        print(f"genre_words: {error}", file=sys.stderr)
        return 2
    inputs = " ".join(str(path) for path in args.input)
    header = [
        "# Common words of the judgment genre: words in at least "
        f"{args.min_share:g} of the documents (and {args.min_documents}), with their document counts.",
        f"# Measured by tools/genre_words.py over {len(documents)} documents: {inputs}",
    ]
    args.out.write_text("\n".join(header + [f"{word}\t{count}" for word, count in words]) + "\n", encoding="utf-8")
    print(f"{len(words)} words from {len(documents)} documents -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
