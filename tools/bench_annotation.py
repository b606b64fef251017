"""Benchmark of the annotated-judgment parser: seconds for N tags on one line (each tag shape), and the whole
shared corpus (documents, placeholders, failures, seconds) when it is present.

    .venv/bin/python tools/bench_annotation.py [--tags 10000 40000] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from thunder.documents.annotation import AnnotationError, iter_corpus, parse_annotated

SHAPES = {
    "three-bracket": "피해자 <<<내국인이름>>>A<<</내국인이름>>>는 ",
    "two-bracket": "보은군 <<면>>00<</면>> ",
    "mixed": "<<면>>00<</면>> <<<X>>>A<<</X>>> ",
    "doubled opener": "<<<X>>> <<<X>>>A<<</X>>> ",
}
DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "snu-thunder-deid" / "annotated"


def best_of(runs: int, function) -> float:
    """Fastest of ``runs`` timings of ``function()`` in seconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tags", type=int, nargs="+", default=[10_000, 40_000])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    for shape, unit in SHAPES.items():
        seconds = [best_of(args.runs, lambda: parse_annotated(unit * n)) for n in args.tags]
        figures = ", ".join(f"{n} tags {s:.3f} s" for n, s in zip(args.tags, seconds))
        print(f"{shape:<15} {figures}  (ratio {seconds[-1] / seconds[0]:.1f} for {args.tags[-1] / args.tags[0]:.0f}x tags)")
    if args.corpus.is_dir():
        failures: list[AnnotationError] = []
        start = time.perf_counter()
        docs = list(iter_corpus(args.corpus, errors="skip", failures=failures))
        seconds = time.perf_counter() - start
        placeholders = sum(len(d.placeholders) for d in docs)
        print(f"corpus {args.corpus}: {len(docs)} documents, {placeholders} placeholders, {len(failures)} failures, {seconds:.2f} s")
        for failure in failures:
            print(f"  {failure}")


if __name__ == "__main__":
    main()
