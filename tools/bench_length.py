"""How de-identification scales with the length of one document: characters/s at each length, beside the packaged
demo judgments de-identified one by one, and the seconds of each step.

The long documents are the demo judgments (placeholders filled by ``thunder.synthesis.synthesizer``) joined one after
another and cut at a line end, so every length holds the same kind of text with ever more entities. Each step of
``Deidentifier.deidentify_batch`` is timed on its own: ``model`` (tokenizer, Mecab and the model's windows),
``spans`` (the model's spans, the recognizers, the officials) and ``apply`` (overlaps, propagation, placeholders,
particles). Linear time shows as characters/s that stay level as the length grows (issue 57: within 2x of the demo
judgments' at every length).

    .venv/bin/python tools/bench_length.py MODEL_DIR_OR_CKPT [--sizes 10000 100000 1000000 5000000]
    .venv/bin/python tools/bench_length.py                     # recognizers only (no model)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_deid import demo_documents  # noqa: E402

from thunder.deid.pipeline import Deidentifier  # noqa: E402
from thunder.deid.recognizers.registry import recognize  # noqa: E402


def long_document(documents: list[str], size: int) -> str:
    """The documents joined (blank line between), repeated as needed, cut at the last line end before ``size``."""
    joined = "\n\n".join(documents)
    text = (joined + "\n\n") * (size // (len(joined) + 2) + 1)
    cut = text.rfind("\n", 0, size)
    return text[: cut if cut > 0 else size]


def timed(deid: Deidentifier, texts: list[str]) -> dict[str, float]:
    """Seconds of each step of de-identifying ``texts`` in one batch."""
    started = time.perf_counter()
    predictions = deid.predict_tokens(texts)
    model = time.perf_counter()
    spans = [deid.model_spans(t, p) + recognize(t, deid.recognizers) + deid.official_spans(t)
             for t, p in zip(texts, predictions)]  # fmt: skip
    found = time.perf_counter()
    for text, chosen in zip(texts, spans):
        deid.apply(text, chosen)
    done = time.perf_counter()
    return {"model": model - started, "spans": found - model, "apply": done - found, "all": done - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", help="an export, a .ckpt or a release directory (default: no model)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000, 5_000_000])
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--runtime", default="auto", choices=("auto", "torch", "onnx"))
    parser.add_argument("--max-length", type=int, help="window length in tokens (default: the model's training windows)")
    parser.add_argument("--stride", type=int, help="tokens shared by consecutive windows (default: the model's)")
    args = parser.parse_args()
    if args.model:
        deid = Deidentifier.from_pretrained(args.model, runtime=args.runtime, batch_size=args.batch_size,
                                            max_length=args.max_length, stride=args.stride)
    else:
        deid = Deidentifier(batch_size=args.batch_size)
    documents = demo_documents()
    timed(deid, documents[:2])  # warm up (Mecab, the model's first pass)
    demo = timed(deid, documents)
    demo_rate = sum(map(len, documents)) / demo["all"]
    print(f"model: {args.model or 'none (recognizers only)'}; runtime {deid.runtime.name if deid.runtime else '-'}; "
          f"batch size {args.batch_size}; windows of {deid.windowing.max_length} tokens with stride {deid.windowing.stride}")
    print(f"{'document':>24} {'seconds':>9} {'chars/s':>10} {'vs demo':>8} {'model s':>8} {'spans s':>8} {'apply s':>8}")
    print(f"{f'{len(documents)} demo judgments':>24} {demo['all']:9.2f} {demo_rate:10,.0f} {1:8.2f} "
          f"{demo['model']:8.2f} {demo['spans']:8.2f} {demo['apply']:8.2f}")
    for size in args.sizes:
        text = long_document(documents, size)
        steps = timed(deid, [text])
        rate = len(text) / steps["all"]
        print(f"{f'one of {len(text):,} chars':>24} {steps['all']:9.2f} {rate:10,.0f} {rate / demo_rate:8.2f} "
              f"{steps['model']:8.2f} {steps['spans']:8.2f} {steps['apply']:8.2f}", flush=True)


if __name__ == "__main__":
    main()
