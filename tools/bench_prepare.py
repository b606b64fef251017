"""Benchmark of ``thunder data prepare`` (issue 15): tokens/s per worker against the single-core tokenizer, 1 vs 2
workers, and peak memory of preparation and of training-time reading at two corpus sizes.

    .venv/bin/python tools/bench_prepare.py [--speed-mb 40] [--sizes-mb 20 200] [--chunk-bytes 64MB]
        [--work /tmp/thunder-bench-prepare]

The corpus is generated: blank-line separated documents of 5 to 40 lines drawn at random from the lines of the
packaged demo judgments. Each run is a
fresh process (``prepare_corpus`` with ``val_fraction 0``, one LitData pass); its wall time includes starting the
workers. Peak memory is the largest resident set of the main process and of any worker (``getrusage``); the reader
also reports the most shard chunk files it held open and memory-mapped at once (``/proc/self``).
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
    from thunder.documents.annotation import iter_corpus

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
    from thunder.documents.corpus import documents, plan
    from thunder.language.morphemes import cut
    from thunder.language.tokenizer import ThunderTokenizer

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
        from thunder.data.shards import PrepareOptions, prepare_corpus

        start = time.perf_counter()
        options = PrepareOptions(str(DEMO_TOKENIZER), val_fraction=0.0)
        manifest = prepare_corpus([args.input], args.out, options, num_workers=args.workers, split_bytes=SPLIT_BYTES,
                                  chunk_bytes=args.chunk_bytes)  # fmt: skip
        children, main = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
        result = {"seconds": time.perf_counter() - start, "tokens": manifest["tokens"]["train"],
                  "worker_cpu_s": children.ru_utime + children.ru_stime,  # workers and their helper processes
                  "main_cpu_s": main.ru_utime + main.ru_stime}  # fmt: skip
    else:
        from litdata import StreamingDataLoader

        from thunder.data.shards import MaskedBlocks, collate_blocks
        from thunder.language.tokenizer import ThunderTokenizer

        shards = Path(args.out).resolve() / "train"
        dataset = MaskedBlocks(shards, 512, ThunderTokenizer.from_pretrained(DEMO_TOKENIZER))
        start, blocks, anon, mapped, held = time.perf_counter(), 0, 0, 0, (0, 0)
        for batch in StreamingDataLoader(dataset, batch_size=32, collate_fn=collate_blocks):
            blocks += len(batch["input_ids"])
            if blocks % 3200 == 0:
                status = _rss_kib()
                anon, mapped = max(anon, status["RssAnon"]), max(mapped, status["RssFile"])
                held = max(held[0], _chunks_held(shards)[0]), max(held[1], _chunks_held(shards)[1])
        result = {"seconds": time.perf_counter() - start, "blocks": blocks, "chunks": len(list(shards.glob("*.bin"))),
                  "anon_mib": anon / 1024, "file_mib": mapped / 1024, "open_chunks": held[0],
                  "mapped_chunks": held[1]}  # fmt: skip
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["peak_child_rss_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps(result))


def _rss_kib() -> dict[str, int]:
    """Resident memory of this process by kind (kB): anonymous (heap) and file-backed (mapped shard chunks)."""
    lines = Path("/proc/self/status").read_text().splitlines()
    return {line.split(":")[0]: int(line.split()[1]) for line in lines if line.startswith(("RssAnon", "RssFile"))}


def _chunks_held(directory: Path) -> tuple[int, int]:
    """Shard chunk files of ``directory`` this process has open and memory-mapped."""
    opened = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            opened.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # the descriptor that listed the folder
            continue
    with open("/proc/self/maps", encoding="utf-8") as maps:
        mapped = {line.split()[-1] for line in maps if len(line.split()) >= 6}
    inside = f"{directory}/"
    return sum(p.startswith(inside) and p.endswith(".bin") for p in opened), sum(p.startswith(inside) for p in mapped)


def run(kind: str, **options: object) -> dict:
    command = [sys.executable, __file__, "--child", kind]
    for key, value in options.items():
        command += [f"--{key.replace('_', '-')}", str(value)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--speed-mb", type=float, default=40)
    parser.add_argument("--sizes-mb", type=float, nargs=2, default=[20, 200])
    parser.add_argument("--chunk-bytes", default="64MB", help="LitData chunk size of the memory runs' shards")
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
        print(
            f"  CPU seconds (not disturbed by load): workers and their helper processes {r['worker_cpu_s']:.1f}, main "
            f"process {r['main_cpu_s']:.1f}; of it start-up (the 1-line corpus): workers {idle['worker_cpu_s']:.1f}, "
            f"main {idle['main_cpu_s']:.1f}"
        )
    for megabytes in args.sizes_mb if args.only != "speed" else ():
        corpus = args.work / f"corpus-{megabytes:g}mb.txt"
        size = make_corpus(corpus, megabytes)
        out = args.work / f"size-{megabytes:g}-{args.chunk_bytes}"
        if args.only != "read":
            r = run("prepare", input=corpus, out=out, workers=2, chunk_bytes=args.chunk_bytes)
            print(
                f"prepare {size / 1e6:.0f} MB, 2 workers: {r['seconds']:.1f} s, {r['tokens']:,} tokens, peak RSS "
                f"main {r['peak_rss_mib']:.0f} MiB, worker {r['peak_child_rss_mib']:.0f} MiB; CPU: workers "
                f"{r['worker_cpu_s']:.1f} s ({r['tokens'] / r['worker_cpu_s']:,.0f} tokens per worker CPU second), main "
                f"{r['main_cpu_s']:.1f} s"
            )
        r = run("read", out=out)
        print(
            f"read {size / 1e6:.0f} MB of shards as 512-token masked blocks: {r['blocks']:,} blocks in "
            f"{r['seconds']:.1f} s ({r['blocks'] * 512 / r['seconds']:,.0f} tokens/s, 1 process), peak RSS "
            f"{r['peak_rss_mib']:.0f} MiB, of it anonymous {r['anon_mib']:.0f} MiB, file-backed (shards, libraries) "
            f"{r['file_mib']:.0f} MiB; chunk files held at once: {r['open_chunks']} open, {r['mapped_chunks']} mapped "
            f"(of {r['chunks']})"
        )


if __name__ == "__main__":
    main()
