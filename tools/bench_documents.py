"""The cost of a document's path beside its text's: a ~30-page HWPX judgment de-identified as text alone, and as a
document (read + de-identify + write + the check after writing, as ``thunder deid`` does it).

The judgment is built with python-hwpx from repeated judgment text (the packaged demo judgments, placeholders
filled, or a fixed paragraph when those cannot be read) with names, phone numbers, resident numbers and a parties
table every page. Identifiers are found by the recognizers (``--model M``: and the model). Prints the best of
``--rounds`` for each path, the document path's steps, and their ratio (target: the document path within 1.2x of the
text alone).

    .venv/bin/python tools/bench_documents.py                 # recognizers only
    .venv/bin/python tools/bench_documents.py --pages 30 --rounds 3 --model runs/small/finetune/checkpoints/last.ckpt
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))

PAGE_CHARS = 1_400  # about one page of an A4 Korean judgment
FALLBACK = ("피고인 홍길동은 2023. 5. 1. 서울 강남구 테헤란로 123에서 피해자 김철수(010-1234-5678)에게 전화하여 "
            "금원을 요구하였다. 피고인의 주민등록번호는 900101-1234567이고, 증인 이영희(010-9876-5432)는 "
            "피고인이 그 자리에 있었다고 진술하였다.")  # fmt: skip


def paragraphs(pages: int) -> list[str]:
    """Judgment paragraphs of about ``pages`` pages."""
    try:
        from bench_deid import demo_documents

        texts = demo_documents()
    except Exception:  # the demo corpus is optional: a fixed paragraph with identifiers
        texts = [FALLBACK]
    lines = [line for text in texts for line in text.split("\n") if line.strip()]
    lines = [*lines, FALLBACK] if lines else [FALLBACK]
    out, size, i = [], 0, 0
    while size < pages * PAGE_CHARS:
        out.append(lines[i % len(lines)])
        size += len(out[-1])
        i += 1
    return out


def build(path: Path, pages: int) -> Path:
    """A ~``pages``-page HWPX judgment: the paragraphs, a header naming the defendant, a parties table each page."""
    from hwpx import HwpxDocument

    document = HwpxDocument.new()
    document.page.set_header(text="서울중앙지방법원 2024고단1234 피고인 홍길동")
    size = 0
    for line in paragraphs(pages):
        document.add_paragraph(line)
        size += len(line)
        if size >= PAGE_CHARS:
            size = 0
            table = document.add_table(3, 2)
            for row, (key, value) in enumerate((("피고인", "홍길동 (900101-1234567)"), ("연락처", "010-1234-5678"),
                                                ("변호인", "변호사 박민수"))):  # fmt: skip
                table.set_cell_text(row, 0, key)
                table.set_cell_text(row, 1, value)
    path.write_bytes(document.to_bytes())
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model", default=None, help="a model directory or checkpoint (default: recognizers only)")
    args = parser.parse_args()

    from thunder.deid import PipelineOptions
    from thunder.deid.mapping import replacing_edits
    from thunder.documents.formats import Replacement, read_document, render
    from thunder.documents.formats import hwpx as hwpx_format

    deidentifier = PipelineOptions(model=args.model).build()
    with tempfile.TemporaryDirectory() as tmp:
        path = build(Path(tmp) / "judgment.hwpx", args.pages)
        extracted = read_document(path)
        text = extracted.text
        deidentifier(text)  # warm-up: lazy loads (Mecab, the model) counted in neither path
        print(f"{path.stat().st_size:,} bytes, {len(text):,} characters (~{len(text) / PAGE_CHARS:.0f} pages), "
              f"{len(extracted.segments):,} runs; model: {args.model or 'none (recognizers)'}")

        steps: dict[str, list[float]] = {"text": [], "read": [], "deid": [], "write": [], "check": [], "document": []}
        for _ in range(args.rounds):
            start = time.perf_counter()
            deidentifier(text)
            steps["text"].append(time.perf_counter() - start)

            start = time.perf_counter()
            extracted = read_document(path)
            read_done = time.perf_counter()
            result = deidentifier(extracted.text)
            deid_done = time.perf_counter()
            edits = [Replacement(*edit) for edit in replacing_edits(extracted.text, result.text, result.spans)]
            spans = {span.text: span.placeholder for span in result.spans}
            checks: list[float] = []
            check = hwpx_format.check

            def timed_check(*a, **k):  # the check after writing, timed inside the writer
                t = time.perf_counter()
                check(*a, **k)
                checks.append(time.perf_counter() - t)

            hwpx_format.check = timed_check
            try:
                render(extracted, edits, None, spans)
            finally:
                hwpx_format.check = check
            end = time.perf_counter()
            steps["read"].append(read_done - start)
            steps["deid"].append(deid_done - read_done)
            steps["check"].append(sum(checks))
            steps["write"].append(end - deid_done - sum(checks))
            steps["document"].append(end - start)

    best = {name: min(values) for name, values in steps.items()}
    print(f"text alone      {best['text']:.3f} s")
    print(f"document path   {best['document']:.3f} s  (read {best['read']:.3f}, de-identify {best['deid']:.3f}, "
          f"write {best['write']:.3f}, check {best['check']:.3f})")
    print(f"ratio           {best['document'] / best['text']:.2f}x  (target <= 1.20x)")


if __name__ == "__main__":
    main()
