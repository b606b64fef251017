"""Benchmark of ``thunder data prepare`` (issue 15): tokens/s per worker against the single-core tokenizer, 1 vs 2
workers, and peak memory of preparation and of training-time reading at two corpus sizes.

    .venv/bin/python tools/bench_prepare.py [--speed-mb 40] [--sizes-mb 20 200] [--work /tmp/thunder-bench-prepare]

The corpus is generated: blank-line separated documents of 5 to 40 lines drawn at random from the lines of the
packaged demo judgments. Each run is a
fresh process (``prepare_corpus`` with ``val_fraction 0``, one LitData pass); its wall time includes starting the
workers. Peak memory is the largest resident set of the main process and of any worker (``getrusage``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

os.environ["TOKENIZERS_PARALLELISM"] = "false"  # single-core baseline, as each preparation worker runs

from thunder.data import DEMO_CORPUS, DEMO_TOKENIZER

SPLIT_BYTES = 4_000_000  # work items of 4 MB: even shares for 2 workers


def make_corpus(path: Path, megabytes: float, seed: int = 0) -> int:
    """Write about ``megabytes`` MB of generated judgments to ``path`` (once; reused when present): documents of 5 to
    40 lines drawn at random from the lines of the packaged demo judgments (placeholders as written)."""
    target = int(megabytes * 1e6)
    if path.is_file() and path.stat().st_size >= target:
        return path.stat().st_size
    from thunder.annotation import iter_corpus

    lines = sorted({line for doc in iter_corpus(DEMO_CORPUS) for line in doc.text.splitlines() if line.strip()})
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with open(path, "w", encoding="utf-8") as file:
        while written < target:
            data = "\n".join(rng.choices(lines, k=rng.randint(5, 40))) + "\n\n"
            file.write(data)
            written += len(data.encode("utf-8"))
    return path.stat().st_size


def tokenizer_speed(path: Path, sample_bytes: int = 4_000_000) -> dict[str, float]:
    """Single-core ``ThunderTokenizer.encode_batch`` speed over the start of the corpus (second pass: cache warm)."""
    from thunder.corpus import cut, documents, plan
    from thunder.tokenizer import ThunderTokenizer

    tokenizer = ThunderTokenizer.from_pretrained(DEMO_TOKENIZER)
    texts: list[str] = []
    size = 0
    for document in documents(plan([path], split_bytes=sample_bytes)[0]):
        texts += cut(document, 4096)
        size += len(document)
    result = {}
    for _ in range(2):
        start, cpu = time.perf_counter(), time.process_time()
        batches = (texts[i : i + 64] for i in range(0, len(texts), 64))
        tokens = sum(len(encoding.ids) for batch in batches for encoding in tokenizer.encode_batch(batch))
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        result = {"chars_per_s": size / elapsed, "tokens_per_s": tokens / elapsed, "tokens_per_cpu_s": tokens / cpu}
    return result


def _child(args: argparse.Namespace) -> None:
    """One measured run in this (fresh) process; prints a JSON line."""
    if args.child == "prepare":
        from thunder.shards import PrepareOptions, prepare_corpus

        start = time.perf_counter()
        options = PrepareOptions(str(DEMO_TOKENIZER), val_fraction=0.0)
        manifest = prepare_corpus([args.input], args.out, options, num_workers=args.workers, split_bytes=SPLIT_BYTES)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = {"seconds": time.perf_counter() - start, "tokens": manifest["tokens"]["train"],
                  "worker_cpu_s": children.ru_utime + children.ru_stime}  # fmt: skip
    else:
        from litdata import StreamingDataLoader

        from thunder.shards import MaskedBlocks, collate_blocks
        from thunder.tokenizer import ThunderTokenizer

        dataset = MaskedBlocks(Path(args.out) / "train", 512, ThunderTokenizer.from_pretrained(DEMO_TOKENIZER))
        start, blocks, anon, mapped = time.perf_counter(), 0, 0, 0
        for batch in StreamingDataLoader(dataset, batch_size=32, collate_fn=collate_blocks):
            blocks += len(batch["input_ids"])
            if blocks % 3200 == 0:
                status = _rss_kib()
                anon, mapped = max(anon, status["RssAnon"]), max(mapped, status["RssFile"])
        result = {"seconds": time.perf_counter() - start, "blocks": blocks,
                  "anon_mib": anon / 1024, "file_mib": mapped / 1024}  # fmt: skip
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["peak_child_rss_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps(result))


def _rss_kib() -> dict[str, int]:
    """Resident memory of this process by kind (kB): anonymous (heap) and file-backed (mapped shard chunks)."""
    lines = Path("/proc/self/status").read_text().splitlines()
    return {line.split(":")[0]: int(line.split()[1]) for line in lines if line.startswith(("RssAnon", "RssFile"))}


def run(kind: str, **options: object) -> dict:
    command = [sys.executable, __file__, "--child", kind]
    for key, value in options.items():
        command += [f"--{key}", str(value)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--speed-mb", type=float, default=40)
    parser.add_argument("--sizes-mb", type=float, nargs=2, default=[20, 200])
    parser.add_argument("--work", type=Path, default=Path("/tmp/thunder-bench-prepare"))
    parser.add_argument("--only", choices=["speed", "memory", "read"], help="run a part of the benchmark")
    parser.add_argument("--child", choices=["prepare", "read"])
    parser.add_argument("--input")
    parser.add_argument("--out")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    speed_corpus = args.work / f"corpus-{args.speed_mb:g}mb.txt"
    size = make_corpus(speed_corpus, args.speed_mb)
    base = tokenizer_speed(speed_corpus) if args.only in (None, "speed") else {}
    if base:
        print(
            f"single-core encode_batch: {base['chars_per_s']:,.0f} chars/s, {base['tokens_per_s']:,.0f} tokens/s, "
            f"{base['tokens_per_cpu_s']:,.0f} tokens per CPU second"
        )
    tiny = args.work / "corpus-tiny.txt"
    tiny.write_text("피고인은 무죄.\n", encoding="utf-8")
    for workers in (1, 2) if base else ():
        idle = run("prepare", input=tiny, out=args.work / f"tiny-{workers}", workers=workers)
        r = run("prepare", input=speed_corpus, out=args.work / f"speed-{workers}", workers=workers)
        steady = r["tokens"] / (r["seconds"] - idle["seconds"]) / workers
        steady_cpu = r["tokens"] / (r["worker_cpu_s"] - idle["worker_cpu_s"])
        print(
            f"  without start-up ({idle['seconds']:.1f} s, {idle['worker_cpu_s']:.1f} worker CPU s on a 1-line corpus):"
            f" {steady:,.0f} tokens/s per worker ({steady / base['tokens_per_s']:.0%} of single-core), "
            f"{steady_cpu:,.0f} per worker CPU second ({steady_cpu / base['tokens_per_cpu_s']:.0%})"
        )
        per_worker = r["tokens"] / r["seconds"] / workers
        print(
            f"prepare {size / 1e6:.0f} MB, {workers} worker(s): {r['seconds']:.1f} s, {r['tokens']:,} tokens, "
            f"{r['tokens'] / r['seconds']:,.0f} tokens/s, {per_worker:,.0f} per worker "
            f"({per_worker / base['tokens_per_s']:.0%} of single-core); {r['tokens'] / r['worker_cpu_s']:,.0f} tokens "
            f"per worker CPU second ({r['tokens'] / r['worker_cpu_s'] / base['tokens_per_cpu_s']:.0%} of single-core, "
            f"worker start-up included); peak RSS main {r['peak_rss_mib']:.0f} MiB, worker "
            f"{r['peak_child_rss_mib']:.0f} MiB"
        )
    for megabytes in args.sizes_mb if args.only != "speed" else ():
        corpus = args.work / f"corpus-{megabytes:g}mb.txt"
        size = make_corpus(corpus, megabytes)
        out = args.work / f"size-{megabytes:g}"
        if args.only != "read":
            r = run("prepare", input=corpus, out=out, workers=2)
            print(
                f"prepare {size / 1e6:.0f} MB, 2 workers: {r['seconds']:.1f} s, {r['tokens']:,} tokens, peak RSS "
                f"main {r['peak_rss_mib']:.0f} MiB, worker {r['peak_child_rss_mib']:.0f} MiB"
            )
        r = run("read", out=out)
        print(
            f"read {size / 1e6:.0f} MB of shards as 512-token masked blocks: {r['blocks']:,} blocks in "
            f"{r['seconds']:.1f} s ({r['blocks'] * 512 / r['seconds']:,.0f} tokens/s, 1 process), peak RSS "
            f"{r['peak_rss_mib']:.0f} MiB, of it anonymous {r['anon_mib']:.0f} MiB, mapped shard files "
            f"{r['file_mib']:.0f} MiB"
        )


if __name__ == "__main__":
    main()
