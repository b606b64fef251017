"""Throughput, peak memory and spans of the de-identification pipeline (``thunder.deid.pipeline.Deidentifier``), one
runtime beside another in the same run.

For each model, every runtime de-identifies the same documents in turn, round after round (``--rounds``), so a
change of load on a shared machine hits them alike; the figures are each runtime's best round, and its ratio to
the first runtime's best round. Runtimes (``--runtimes``):

* ``before``: PyTorch eager fp32 as the pipeline ran before ``thunder.model.inference`` (Mecab run again per document to
  widen spans);
* ``torch``: PyTorch eager fp32 (Mecab once per document; windows batched in order of length);
* ``bf16``: the same in bfloat16 autocast (CPUs with AVX512-BF16 or AMX);
* ``torch-int8``: the same with the linear layers quantized to int8 (``torch.ao.quantization.quantize_dynamic``);
* ``compile``: the same through ``torch.compile(dynamic=True)``;
* ``onnx-fp32`` / ``onnx-int8``: the model exported with ``thunder export --onnx fp32|int8`` and run with ONNX
  Runtime (``thunder deid --model EXPORT`` runs it by default).

Prints documents/s, characters/s, the memory the runtime added when it was loaded and the process's peak RSS while
it ran (reset before each runtime: ``/proc/self/clear_refs``; every runtime of the run stays loaded, so ``--memory``
also measures each runtime alone in a process of its own), milliseconds per document in each step, and how many
documents got other spans than the first runtime's (with the largest difference of a token's ``1 - P(O)``).

    .venv/bin/python tools/bench_deid.py MODEL_DIR_OR_CKPT [--batch-sizes 1 8] [--docs 64]
    .venv/bin/python tools/bench_deid.py --preset small --preset 370m --docs 8     # random models: speed only
    .venv/bin/python tools/bench_deid.py --preset 370m --device cuda --runtimes torch bf16
    .venv/bin/python tools/bench_deid.py --backbone runs/pretrained/klue-roberta-base-shape   # tools/random_backbone.py
    .venv/bin/python tools/bench_deid.py MODEL --ceiling --runtimes torch   # what the machine's arithmetic allows

Without a model path, a randomly initialised DeBERTa-v3 token classifier of each ``--preset`` size is built, with a
tokenizer trained on the benchmark documents (speed does not depend on training); with ``--backbone DIR``, one of a
pretrained model directory's architecture with its own tokenizer behind the Mecab step (``tools/random_backbone.py``
writes random-weight directories of public encoders' shapes). Its classifier is biased towards
"O" (P(O) about 0.98), so it finds no spans of its own and the spans replaced are those of the recognizers.
Documents are the packaged demo judgments with their placeholders filled by ``thunder.synthesis.synthesizer`` (or ``--inputs``
text files).
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

import torch

from thunder.deid.pipeline import Deidentifier
from thunder.language.tokenizer import Windows

RUNTIMES = ("before", "torch", "bf16", "torch-int8", "compile", "onnx-fp32", "onnx-int8")


def demo_documents() -> list[str]:
    """The packaged demo judgments, placeholders filled with demo mentions."""
    from thunder.documents.annotation import iter_corpus
    from thunder.synthesis.mentions import DEMO_MENTIONS, MentionBank
    from thunder.synthesis.synthesizer import Synthesizer
    from thunder.taxonomy import Taxonomy

    root = Path(__file__).resolve().parents[1] / "thunder" / "resources" / "demo" / "annotated"
    taxonomy = Taxonomy.load()
    synthesizer = Synthesizer(taxonomy, MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS]), seed=0)
    return [synthesizer(doc).text for doc in iter_corpus(root, errors="skip")]


def random_model(preset: str, texts: list[str], max_length: int):
    """A randomly initialised token classifier of a preset size, with a tokenizer trained on ``texts``."""
    from thunder.language.tokenizer import ThunderTokenizer
    from thunder.model.backbones import PRESETS

    tokenizer = ThunderTokenizer.train(texts, vocab_size=min(PRESETS[preset]["vocab_size"], 8000), min_frequency=2)
    return untrained_classifier(preset, tokenizer, {"max_position_embeddings": max(max_length, 512)})


def random_pretrained(directory: str):
    """A randomly initialised token classifier of a pretrained model directory's architecture, with its own tokenizer
    behind the Mecab step, its embeddings that tokenizer's ids (as ``thunder fit`` cuts a pretrained model's)."""
    from thunder.language.release_tokenizer import load_tokenizer

    return untrained_classifier(directory, load_tokenizer(directory))


def untrained_classifier(backbone: str, tokenizer, overrides: dict | None = None):
    """A token classifier of ``backbone`` with random weights over the default taxonomy's labels (IO tags)."""
    from transformers import AutoModelForTokenClassification

    from thunder.model.backbones import apply_tokenizer, backbone_config
    from thunder.taxonomy import LabelSet, Taxonomy

    label_set = LabelSet(Taxonomy.load(), "label", "IO")
    config = backbone_config(backbone, {**(overrides or {}), "num_labels": len(label_set),
                                        "id2label": dict(enumerate(label_set.names))})  # fmt: skip
    config.label2id = {name: i for i, name in config.id2label.items()}
    apply_tokenizer(config, tokenizer)
    torch.manual_seed(0)
    model = AutoModelForTokenClassification.from_config(config)
    with torch.no_grad():  # untrained logits are near zero: favour "O" (P(O) ~ 0.98) so spans are rare, as trained
        model.classifier.bias[0] = math.log(len(label_set)) + 4.0
    return model.eval(), tokenizer, label_set


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


def reset_peak() -> None:
    """Reset the process's peak RSS (VmHWM) where Linux allows it."""
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
    except OSError:
        pass


def peak_mib(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Before(Deidentifier):
    """The pipeline as it ran before: Mecab a second time per document to widen the model's spans."""

    def predict_tokens(self, texts):
        predictions = super().predict_tokens(texts)
        for prediction in predictions:
            prediction.morphemes = None
        return predictions


def recorded_precision(path: str | Path | None) -> str | None:
    """The precision of the ONNX graph an export directory records, if any."""
    from thunder.model.loader import EXPORT_FILE, read_export_info

    if path is None or not (Path(path) / EXPORT_FILE).is_file():
        return None
    return (read_export_info(Path(path)).get("onnx") or {}).get("precision")


def build_runtimes(names: list[str], model, tokenizer, label_set, work: Path, device: str, source=None) -> dict:
    """``{name: (Deidentifier, MiB added by loading it, autocast context)}``; an ONNX runtime uses the graph of the
    export directory ``source`` when it records one of that precision, else exports the model."""
    from thunder.model.export import write_export, write_onnx

    built = {}
    for name in names:
        before = rss_mib()
        context = nullcontext
        if name in ("before", "torch", "bf16", "torch-int8", "compile"):
            runs = model
            if name == "torch-int8":
                runs = torch.ao.quantization.quantize_dynamic(copy.deepcopy(model), {torch.nn.Linear}, torch.qint8)
            elif name == "compile":
                runs = torch.compile(copy.deepcopy(model), dynamic=True)
            deid = (Before if name == "before" else Deidentifier)(runs, tokenizer, label_set, device=device)
            if name == "bf16":
                context = lambda: torch.autocast(torch.device(device).type, dtype=torch.bfloat16)  # noqa: E731
        else:
            precision = name.removeprefix("onnx-")
            export = work / precision
            if recorded_precision(source) == precision:
                shutil.copytree(source, export)
            else:
                write_export(export, model, tokenizer, label_set, "token-classification")
                started = time.perf_counter()
                write_onnx(export, precision)
                print(f"  {name}: ONNX export and checks {time.perf_counter() - started:.0f} s", flush=True)
            deid = Deidentifier.from_pretrained(export, runtime="onnx")
        built[name] = (deid, rss_mib() - before, context)
    return built


def replaced(result) -> tuple:
    """What a result replaced and how (span scores aside)."""
    return result.text, [(s.start, s.end, s.label, s.placeholder, s.source) for s in result.spans]


def stage_times(deid: Deidentifier, context, docs: list[str], batch_size: int) -> dict[str, float]:
    """Milliseconds per document in each step of ``Deidentifier.deidentify_batch``: Mecab + BPE, cutting windows,
    the model (padding, runtime, tags), merging windows, and ``finish`` (model spans, recognizers, replacement)."""
    from thunder.model.decoding import merge_windows
    from thunder.model.inference import forward_windows

    totals = dict.fromkeys(("tokenize", "windows", "model", "merge", "finish"), 0.0)
    for first in range(0, len(docs), batch_size):
        texts = docs[first : first + batch_size]
        marks = [time.perf_counter()]
        encodings = deid.tokenizer.encode_batch(texts)
        marks.append(time.perf_counter())
        windows = deid.tokenizer.windows_of(encodings, deid.windowing.max_length, deid.windowing.stride)
        marks.append(time.perf_counter())
        with context():
            outputs = forward_windows(deid.runtime, windows, deid.batch_size, deid.operating_point, deid.tokenizer.pad)
        marks.append(time.perf_counter())
        predictions = merge_windows(len(texts), windows, outputs)
        for prediction, encoding in zip(predictions, encodings):
            prediction.morphemes = None if isinstance(deid, Before) else encoding.morphemes
        marks.append(time.perf_counter())
        for text, prediction in zip(texts, predictions):
            deid.finish(text, prediction)
        marks.append(time.perf_counter())
        for stage, start, end in zip(totals, marks, marks[1:]):
            totals[stage] += end - start
    return {stage: 1000 * seconds / len(docs) for stage, seconds in totals.items()}


def bench(built: dict, docs: list[str], batch_size: int, rounds: int, device: torch.device) -> None:
    chars = sum(map(len, docs))
    seconds: dict[str, list[float]] = {name: [] for name in built}
    peaks: dict[str, float] = {name: 0.0 for name in built}
    results: dict[str, list] = {}
    for name, (deid, _, context) in built.items():  # warm-up (and the spans compared below)
        deid.batch_size = batch_size
        with context():
            results[name] = [deid.predict_tokens(docs[i : i + batch_size]) for i in range(0, len(docs), batch_size)]
    for _ in range(rounds):
        for name, (deid, _, context) in built.items():
            reset_peak()
            if device.type == "cuda":
                torch.cuda.synchronize(device)
                torch.cuda.reset_peak_memory_stats(device)
            start = time.perf_counter()
            with context():
                for first in range(0, len(docs), batch_size):
                    deid.deidentify_batch(docs[first : first + batch_size])
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            seconds[name].append(time.perf_counter() - start)
            peaks[name] = max(peaks[name], peak_mib(device))
    stages = {name: stage_times(deid, context, docs, batch_size) for name, (deid, _, context) in built.items()}
    first = next(iter(built))
    reference = [p for chunk in results[first] for p in chunk]
    spans = {name: [deid.finish(doc, p) for doc, p in zip(docs, (p for c in results[name] for p in c))]
             for name, (deid, _, _) in built.items()}  # fmt: skip
    print(f"batch {batch_size} ({rounds} rounds; ratio: best round against {first}'s best round)")
    print(f"  {'runtime':<10} {'docs/s':>8} {'chars/s':>9} {'ratio':>6} {'median s':>9} {'load MiB':>9} {'peak MiB':>9}"
          f"  spans")  # fmt: skip
    for name in built:
        best, median = min(seconds[name]), statistics.median(seconds[name])
        mine = [p for chunk in results[name] for p in chunk]
        differ = sum(replaced(a) != replaced(b) for a, b in zip(spans[name], spans[first]))
        score_gap = max((max((abs(x - y) for x, y in zip(a.scores, b.scores)), default=0.0)
                         for a, b in zip(mine, reference)), default=0.0)  # fmt: skip
        print(f"  {name:<10} {len(docs) / best:>8.2f} {chars / best:>9,.0f} {min(seconds[first]) / best:>6.2f} "
              f"{median:>9.2f} {built[name][1]:>9,.0f} {peaks[name]:>9,.0f}  {differ} of {len(docs)} documents "
              f"differ; largest |Δ(1 - P(O))| {score_gap:.1e}")  # fmt: skip
    print("  milliseconds per document by stage (one more pass): " + "; ".join(
        f"{name} " + ", ".join(f"{stage} {ms:.1f}" for stage, ms in times.items()) for name, times in stages.items()))


def memory(args: argparse.Namespace, work: Path, model, tokenizer, label_set) -> None:
    """Each runtime's peak RSS in a fresh process: loading the model as ``thunder deid`` would, and one pass."""
    import subprocess

    from thunder.model.export import write_export

    plain = write_export(work / "plain", model, tokenizer, label_set, "token-classification")
    peaks = []
    for name in args.runtimes:
        export = work / name.removeprefix("onnx-") if name.startswith("onnx-") else plain
        command = [sys.executable, __file__, "--memory-child", name, "--export", str(export), "--docs",
                   str(args.docs), "--max-length", str(args.max_length), "--stride", str(args.stride)]  # fmt: skip
        command += ["--threads", str(args.threads)] if args.threads else []
        command += ["--inputs", *args.inputs] if args.inputs else []
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        peaks.append(f"{name} {float(done.stdout.strip().splitlines()[-1]):,.0f}")
    print("  peak RSS of a process running only that runtime (load + one pass), MiB: " + "; ".join(peaks))


def memory_child(name: str, export: Path, docs: list[str], args: argparse.Namespace) -> None:
    from thunder.model.loader import Artefact

    if name.startswith("onnx-"):
        deid = Deidentifier.from_pretrained(export, runtime="onnx")
        context = nullcontext
    else:
        deid, _, context = build_runtimes([name], *Artefact.open(export).classifier()[:3], export, args.device)[name]
    deid.windowing, deid.batch_size = Windows(args.max_length, args.stride), 1
    with context():
        for doc in docs:
            deid(doc)
    print(peak_mib(torch.device(args.device)))


def matmul_gflops(dtype: torch.dtype, size: int = 1024, repeats: int = 20) -> float:
    """This machine's measured matrix-multiply throughput (GFLOP/s) in ``dtype`` with torch's current threads."""
    a, b = torch.randn(size, size).to(dtype), torch.randn(size, size).to(dtype)
    for _ in range(3):
        a @ b
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return 2 * size**3 * repeats / (time.perf_counter() - start) / 1e9


def ceiling(model, tokenizer, docs: list[str], max_length: int, stride: int) -> None:
    """The forward pass's floating-point operations per document (windows as the pipeline cuts them) and the
    documents/s it would allow if it ran at this machine's measured matrix-multiply throughput."""
    from torch.utils.flop_counter import FlopCounterMode

    windows = tokenizer.windows_of(tokenizer.encode_batch(docs), max_length, stride)
    model.eval()
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        for window in windows:
            model(**tokenizer.pad([window.ids]))
    per_doc = counter.get_total_flops() / len(docs)
    tokens = sum(len(w.ids) for w in windows) / len(docs)
    print(f"forward pass: {per_doc / 1e9:.3g} GFLOP per document ({tokens:.0f} tokens in {len(windows) / len(docs):.2f}"
          f" windows); at this machine's measured matrix-multiply throughput it would allow at most:")
    for dtype in (torch.float32, torch.bfloat16):
        gflops = matmul_gflops(dtype)
        print(f"  {str(dtype).removeprefix('torch.')}: {gflops:,.0f} GFLOP/s -> {gflops * 1e9 / per_doc:,.1f} documents/s"
              f" (forward pass alone, {torch.get_num_threads()} threads)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", nargs="?", help="export directory or .ckpt (default: random models of --preset)")
    parser.add_argument("--preset", action="append", help="preset size(s) without a model path (default: small)")
    parser.add_argument("--backbone", action="append", help="pretrained model directories: random weights of their "
                        "architecture, their own tokenizers")  # fmt: skip
    parser.add_argument("--inputs", nargs="*", help="text files to use instead of the demo judgments")
    parser.add_argument("--docs", type=int, default=64, help="documents per measurement (the inputs are cycled)")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1])
    parser.add_argument("--runtimes", nargs="+", choices=RUNTIMES, default=["before", "torch", "onnx-int8"])
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per runtime, interleaved")
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--stride", type=int, default=128)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads of torch and ONNX Runtime")
    parser.add_argument("--memory", action="store_true",
                        help="also each runtime's peak RSS in a process of its own (load and one pass)")
    parser.add_argument("--ceiling", action="store_true",
                        help="also the forward pass's FLOPs per document and the documents/s the machine's measured "
                             "matrix-multiply throughput allows")  # fmt: skip
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    parser.add_argument("--export", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    texts = [Path(p).read_text(encoding="utf-8") for p in args.inputs] if args.inputs else demo_documents()
    docs = [texts[i % len(texts)] for i in range(args.docs)]
    if args.memory_child:
        return memory_child(args.memory_child, Path(args.export), docs, args)
    print(f"{len(docs)} documents, {sum(map(len, docs)):,} characters (mean {sum(map(len, docs)) // len(docs):,}); "
          f"device {device}, {torch.get_num_threads()} CPU threads, windows of {args.max_length} tokens with stride "
          f"{args.stride}; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs; "
          f"torch {torch.__version__}")  # fmt: skip
    if args.model:
        from thunder.model.loader import Artefact

        models = [(args.model, lambda: Artefact.open(args.model).classifier()[:3])]
    else:
        models = [(f"randomly initialised '{preset}' preset (untrained: speed only)",
                   lambda preset=preset: random_model(preset, texts, args.max_length))
                  for preset in args.preset or ([] if args.backbone else ["small"])]  # fmt: skip
        models += [(f"randomly initialised {directory} (untrained: speed only)",
                    lambda directory=directory: random_pretrained(directory)) for directory in args.backbone or []]
    for name, load in models:
        model, tokenizer, label_set = load()
        parameters = sum(p.numel() for p in model.parameters())
        print(f"\nmodel: {name}; {parameters / 1e6:,.1f}M parameters, vocabulary {tokenizer.vocab_size:,}", flush=True)
        if args.ceiling:
            ceiling(model, tokenizer, docs, args.max_length, args.stride)
        with tempfile.TemporaryDirectory() as work:
            built = build_runtimes(args.runtimes, model, tokenizer, label_set, Path(work), args.device,
                                   args.model)
            for deid, _, _ in built.values():
                deid.windowing = Windows(args.max_length, args.stride)
            for batch_size in args.batch_sizes:
                bench(built, docs, batch_size, args.rounds, device)
            if args.memory:
                del built
                memory(args, Path(work), model, tokenizer, label_set)
        print(f"load average at the end {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    sys.exit(main())
