"""Throughput and peak memory of the de-identification pipeline (``thunder.deid.Deidentifier``).

Prints documents/s and characters/s for each batch size (windows per forward pass = documents per call) and the
peak memory: the process's peak RSS on CPU (``resource.getrusage``), ``torch.cuda.max_memory_allocated`` on a GPU.

    .venv/bin/python tools/bench_deid.py MODEL_DIR_OR_CKPT [--batch-sizes 1 4 8 16] [--docs 64]
    .venv/bin/python tools/bench_deid.py --preset tiny --preset small          # no trained model needed
    .venv/bin/python tools/bench_deid.py --preset 370m --device cuda --dtype bf16

Without a model path, a randomly initialised DeBERTa-v3 token classifier of each ``--preset`` size is built, with a
tokenizer trained on the benchmark documents (speed does not depend on training). Its classifier is biased towards
"O", so it finds no spans of its own and the spans replaced are those of the recognizers. Documents are the
packaged demo judgments with their placeholders filled by ``thunder.synthesis`` (or ``--inputs`` text files).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import torch

from thunder.deid import Deidentifier


def demo_documents() -> list[str]:
    """The packaged demo judgments, placeholders filled with demo mentions."""
    from thunder.annotation import iter_corpus
    from thunder.mentions import DEMO_MENTIONS, MentionBank
    from thunder.synthesis import Synthesizer
    from thunder.taxonomy import Taxonomy

    root = Path(__file__).resolve().parents[1] / "thunder" / "resources" / "demo" / "annotated"
    taxonomy = Taxonomy.load()
    synthesizer = Synthesizer(taxonomy, MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS]), seed=0)
    return [synthesizer(doc).text for doc in iter_corpus(root, errors="skip")]


def random_model(preset: str, texts: list[str], max_length: int):
    """A randomly initialised token classifier of a preset size, with a tokenizer trained on ``texts``."""
    from transformers import AutoModelForTokenClassification

    from thunder.models import PRESETS, apply_tokenizer, backbone_config
    from thunder.taxonomy import LabelSet, Taxonomy
    from thunder.tokenizer import ThunderTokenizer

    label_set = LabelSet(Taxonomy.load(), "label", "IO")
    tokenizer = ThunderTokenizer.train(texts, vocab_size=min(PRESETS[preset]["vocab_size"], 8000), min_frequency=2)
    config = backbone_config(preset, {"num_labels": len(label_set), "max_position_embeddings": max(max_length, 512)})
    apply_tokenizer(config, tokenizer)
    torch.manual_seed(0)
    model = AutoModelForTokenClassification.from_config(config)
    with torch.no_grad():  # untrained logits are near zero: favour "O" so spans are rare, as with a trained model
        model.classifier.bias[0] = 4.0
    return model, tokenizer, label_set


def peak_memory(device: torch.device) -> str:
    if device.type == "cuda":
        return f"{torch.cuda.max_memory_allocated(device) / 2**20:,.0f} MiB GPU (max_memory_allocated)"
    return f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB RSS (process peak)"


def bench(deid: Deidentifier, docs: list[str], batch_sizes: list[int], device: torch.device) -> None:
    chars = sum(map(len, docs))
    print(f"{'batch':>5} {'docs/s':>9} {'chars/s':>11} {'s':>7}  peak memory")
    for batch_size in batch_sizes:
        deid.batch_size = batch_size
        deid.deidentify_batch(docs[:batch_size])  # warm-up
        if device.type == "cuda":
            torch.cuda.synchronize(device)
            torch.cuda.reset_peak_memory_stats(device)
        start = time.perf_counter()
        for first in range(0, len(docs), batch_size):
            deid.deidentify_batch(docs[first : first + batch_size])
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        seconds = time.perf_counter() - start
        rates = f"{len(docs) / seconds:>9.2f} {chars / seconds:>11,.0f} {seconds:>7.2f}"
        print(f"{batch_size:>5} {rates}  {peak_memory(device)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", nargs="?", help="export directory or .ckpt (default: random models of --preset)")
    parser.add_argument("--preset", action="append", help="preset size(s) without a model path (default: tiny, small)")
    parser.add_argument("--inputs", nargs="*", help="text files to use instead of the demo judgments")
    parser.add_argument("--docs", type=int, default=64, help="documents per measurement (the inputs are cycled)")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 4, 8, 16])
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--stride", type=int, default=128)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", choices=["fp32", "bf16", "fp16"], default="fp32")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args(argv)

    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
    texts = [Path(p).read_text(encoding="utf-8") for p in args.inputs] if args.inputs else demo_documents()
    docs = [texts[i % len(texts)] for i in range(args.docs)]
    print(f"{len(docs)} documents, {sum(map(len, docs)):,} characters (mean {sum(map(len, docs)) // len(docs):,}); "
          f"device {device}, {args.dtype}, {torch.get_num_threads()} CPU threads, "
          f"windows of {args.max_length} tokens with stride {args.stride}; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs")
    if args.model:
        runs = [(args.model, lambda: Deidentifier.from_pretrained(args.model, device=args.device))]
    else:
        runs = [
            (f"randomly initialised '{preset}' preset (untrained: speed only)",
             lambda preset=preset: Deidentifier(*random_model(preset, texts, args.max_length), device=args.device))
            for preset in args.preset or ["tiny", "small"]
        ]  # fmt: skip
    for name, build in runs:
        deid = build()
        deid.max_length, deid.stride = args.max_length, args.stride
        deid.model.to(device=device, dtype=dtype)
        parameters = sum(p.numel() for p in deid.model.parameters())
        print(f"\nmodel: {name}; {parameters / 1e6:,.1f}M parameters, vocabulary {deid.tokenizer.vocab_size:,}")
        with torch.inference_mode():
            bench(deid, docs, args.batch_sizes, device)


if __name__ == "__main__":
    sys.exit(main())
