"""Write the README's example judgments (examples/judgments/): two of the packaged whole judgments
(thunder/resources/judgments, written for Thunder, Apache-2.0) filled with fictitious mentions from the packaged demo
lists as ``thunder evaluate`` fills them (seed 0), as plain text and as an HWP 5 file (paragraph by paragraph, by the
record writer the HWP tests use):

    python tools/make_examples.py            # writes examples/judgments/*.txt, *.hwp
"""

from __future__ import annotations

import sys
from pathlib import Path

from thunder.data import Recipe
from thunder.evaluation.gold import load_documents
from thunder.taxonomy import Taxonomy

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "documents"))
from hwp_files import hwp_file, paragraph  # noqa: E402  (the tests' HWP 5 writer)

JUDGMENTS = REPO / "thunder" / "resources" / "judgments" / "annotated"
EXAMPLES = {"criminal/01_drunk-driving.md": "criminal-drunk-driving.txt", "civil/01_loan.md": "civil-loan.hwp"}


def main() -> None:
    out = REPO / "examples" / "judgments"
    out.mkdir(parents=True, exist_ok=True)
    taxonomy = Taxonomy.load()
    documents = {doc.doc_id: doc for doc in load_documents(Recipe(data_dir=str(JUDGMENTS)), taxonomy)}
    for source, name in EXAMPLES.items():
        doc = next(d for key, d in documents.items() if key.endswith(Path(source).stem))
        path = out / name
        if path.suffix == ".hwp":
            lines = doc.text.split("\n")
            section = b"".join(paragraph(0, line, last=k == len(lines) - 1) for k, line in enumerate(lines))
            path.write_bytes(hwp_file([section]))
        else:
            path.write_text(doc.text, encoding="utf-8")
        print(f"{path.relative_to(REPO)}: {len(doc.text):,} characters, {len(doc.spans)} identifiers ({source})")


if __name__ == "__main__":
    main()
