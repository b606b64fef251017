"""The real ``370m`` pretraining config on CPU (issue 15): 2 optimizer steps with FSDP2 over 2 processes, a sharded
checkpoint, and a resumed run continuing from it; prints wall time and the peak memory of each process.

    .venv/bin/python tools/prove_370m_fsdp.py [--work /tmp/thunder-370m] [--seq-len 128] [--batch 2]

Runs ``thunder fit --config configs/pretrain/370m.yaml`` with an overlay for this machine: CPU, 2 processes
(``data_parallel_size: 2``), fp32 (``32-true``; bf16 autocast is for GPUs), ``seq-len``-token blocks, no logger, a
sharded ``last.ckpt`` after every step. The model is the 370m preset with a 32k vocabulary (a 32,000-token
tokenizer trained here on generated Hangul text plus the demo judgments, whose prepared shards are the data).
Then ``--ckpt_path .../last.ckpt`` with ``max_steps`` 3 resumes it: global step 2 -> 3, optimizer and data position
restored. Peak memory: the largest resident set (VmHWM) of each process, polled from /proc.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def tokenizer_32k(work: Path) -> Path:
    """A 32,000-token tokenizer (generated Hangul words + the demo judgments), so the embedding is the preset's size."""
    from thunder.data import DEMO_CORPUS
    from thunder.documents.annotation import iter_corpus
    from thunder.language.tokenizer import ThunderTokenizer

    out = work / "tokenizer-32k"
    if (out / "tokenizer.json").is_file():
        return out
    rng = random.Random(0)
    words = ["".join(chr(0xAC00 + rng.randrange(11172)) for _ in range(rng.randint(2, 4))) for _ in range(40_000)]
    order = words * 3
    rng.shuffle(order)
    texts = [doc.text for doc in iter_corpus(DEMO_CORPUS)] + [
        " ".join(order[i : i + 200]) for i in range(0, len(order), 200)
    ]
    tokenizer = ThunderTokenizer.train(iter(texts), vocab_size=32_000)
    tokenizer.save_pretrained(out)
    return out


def overlay(work: Path, tokenizer: Path, shards: Path, seq_len: int, batch: int, steps: int) -> Path:
    config = {
        "trainer": {
            "accelerator": "cpu",
            "devices": 2,
            "strategy": {
                "class_path": "lightning.pytorch.strategies.ModelParallelStrategy",
                "init_args": {"data_parallel_size": 2, "tensor_parallel_size": 1, "save_distributed_checkpoint": True},
            },
            "precision": "32-true",
            "max_steps": steps,
            "log_every_n_steps": 1,
            "limit_val_batches": 0,
            "num_sanity_val_steps": 0,
            "enable_progress_bar": False,
            "default_root_dir": str(work / "run"),
            "logger": False,
            "callbacks": [
                {
                    "class_path": "lightning.pytorch.callbacks.ModelCheckpoint",
                    "init_args": {
                        "dirpath": str(work / "checkpoints"),
                        "filename": "last",
                        "every_n_train_steps": 1,
                        "enable_version_counter": False,
                    },
                }
            ],
        },
        "data": {
            "init_args": {
                "tokenizer": str(tokenizer),
                "prepared_dir": str(shards),
                "max_length": seq_len,
                "batch_size": batch,
                "num_workers": 0,
            },
        },
    }
    path = work / f"overlay-{steps}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def _descendants(pid: int) -> list[int]:
    result, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        result += map(int, children)
        frontier += map(int, children)
    return result


def _peak_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run(command: list[str]) -> tuple[float, list[float]]:
    """Run ``command``; wall seconds and the peak RSS (GiB) of each process of its tree."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=REPO)
    peaks: dict[int, int] = {}

    def poll() -> None:
        while process.poll() is None:
            for pid in [process.pid, *_descendants(process.pid)]:
                peaks[pid] = max(peaks.get(pid, 0), _peak_kib(pid))
            time.sleep(0.5)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    process.wait()
    thread.join()
    if process.returncode:
        sys.exit(f"prove_370m_fsdp: {' '.join(command)} failed with exit code {process.returncode}")
    return time.perf_counter() - start, sorted((kib / 2**20 for kib in peaks.values() if kib > 2**20), reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=Path("/tmp/thunder-370m"))
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--batch", type=int, default=2)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    from thunder.data import DEMO_CORPUS
    from thunder.data.shards import PrepareOptions, prepare_corpus, read_manifest

    tokenizer = tokenizer_32k(args.work)
    shards = args.work / "shards"
    try:
        read_manifest(shards, tokenizer)
    except (OSError, ValueError):
        prepare_corpus([DEMO_CORPUS], shards, PrepareOptions(str(tokenizer), val_fraction=0.0))
    thunder = [sys.executable, "-m", "thunder.cli", "fit", "--config", str(REPO / "configs/pretrain/370m.yaml")]
    checkpoint = args.work / "checkpoints" / "last.ckpt"
    first = overlay(args.work, tokenizer, shards, args.seq_len, args.batch, steps=2)
    seconds, peaks = run([*thunder, "--config", str(first)])
    print(f"370m, 2 steps, FSDP2 over 2 CPU processes: {seconds:.0f} s, peak RSS per process "
          + ", ".join(f"{p:.1f} GiB" for p in peaks))  # fmt: skip
    step = _global_step(checkpoint)
    assert step == 2, f"the checkpoint is at step {step}, expected 2"
    second = overlay(args.work, tokenizer, shards, args.seq_len, args.batch, steps=3)
    seconds, peaks = run([*thunder, "--config", str(second), "--ckpt_path", str(checkpoint)])
    step = _global_step(checkpoint)
    assert step == 3, f"the resumed run ended at step {step}, expected 3"
    print(f"resumed from the sharded checkpoint at step 2, 1 more step: {seconds:.0f} s, peak RSS per process "
          + ", ".join(f"{p:.1f} GiB" for p in peaks))  # fmt: skip
    size = sum(f.stat().st_size for f in checkpoint.rglob("*") if f.is_file())
    shards_written = sorted(p.name for p in checkpoint.iterdir())
    print(f"sharded checkpoint {checkpoint}: {size / 2**30:.2f} GiB in {shards_written}")


def _global_step(checkpoint: Path) -> int:
    import torch

    meta = torch.load(checkpoint / "meta.pt", map_location="cpu", weights_only=True)
    return int(meta["global_step"])


if __name__ == "__main__":
    main()
