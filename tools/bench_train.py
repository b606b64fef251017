"""Training speed of a preset on this machine's accelerator (issue 15): tokens/s, MFU and peak memory, with
activation checkpointing on and off.

    .venv/bin/python tools/bench_train.py                       # 370m, bf16-mixed, FSDP2 on 1 GPU, 512 x 16 blocks
    .venv/bin/python tools/bench_train.py --preset tiny --accelerator cpu --precision 32-true \\
        --seq-len 64 --batch 4 --steps 6 --warmup 2             # CPU smoke check

Each setting runs in a fresh process: ``MaskedLM`` under Lightning's ``ModelParallelStrategy`` (FSDP2
``fully_shard`` per layer, as the large configs) on random 15%-masked blocks (the model's speed, not the data's),
``--steps`` optimizer steps of which the first ``--warmup`` are not timed. MFU is model FLOPs (thunder.sizing,
forward + backward, recomputation not counted) per second over the device's peak: ``--peak-tflops``, else Lightning's
table (H200: dense bf16 989 TFLOP/s). Peak memory: ``torch.cuda.max_memory_allocated`` on a GPU, the process's peak
RSS on CPU. Prints one Markdown row per setting; ``--json`` writes them.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def _measure(args: argparse.Namespace) -> dict:
    import torch
    from lightning.pytorch import Callback, LightningDataModule, Trainer
    from lightning.pytorch.strategies import ModelParallelStrategy
    from torch.utils.data import DataLoader

    from thunder.models import H200_DENSE_BF16_TFLOPS, MaskedLM
    from thunder.sizing import train_flops_per_token

    class RandomBlocks(LightningDataModule):
        def train_dataloader(self) -> DataLoader:
            generator = torch.Generator().manual_seed(0)
            shape = (args.batch, args.seq_len)
            batches = []
            for _ in range(args.steps):
                ids = torch.randint(5, vocab, shape, generator=generator)
                labels = torch.where(torch.rand(shape, generator=generator) < 0.15, ids, torch.full_like(ids, -100))
                batches.append({"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels})
            return DataLoader(batches, batch_size=None)

    class Timer(Callback):
        def __init__(self) -> None:
            self.times: list[float] = []

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
            if trainer.strategy.root_device.type == "cuda":
                torch.cuda.synchronize()
            self.times.append(time.perf_counter())

    module = MaskedLM(backbone=args.preset, gradient_checkpointing=args.checkpointing == "on", lr=1e-4)
    from thunder.models import backbone_config

    vocab = backbone_config(args.preset).vocab_size
    timer = Timer()
    trainer = Trainer(
        accelerator=args.accelerator, devices=1, strategy=ModelParallelStrategy(data_parallel_size=1),
        precision=args.precision, max_steps=args.steps, logger=False, enable_checkpointing=False, callbacks=[timer],
        enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0, limit_val_batches=0,
    )  # fmt: skip
    trainer.fit(module, datamodule=RandomBlocks())
    timed = args.steps - args.warmup
    elapsed = timer.times[-1] - timer.times[args.warmup - 1]
    tokens_per_sec = timed * args.batch * args.seq_len / elapsed
    flops = train_flops_per_token(module.model.config, args.seq_len, "mlm", args.batch * args.seq_len)
    peak = args.peak_tflops
    device = trainer.strategy.root_device
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        memory = torch.cuda.max_memory_allocated(device) / 2**30
        if peak is None:
            from lightning.fabric.utilities.throughput import get_available_flops

            available = get_available_flops(device, torch.bfloat16)
            peak = H200_DENSE_BF16_TFLOPS if "h200" in name.lower() else (available / 1e12 if available else None)
    else:
        name, memory = "cpu", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return {
        "preset": args.preset, "device": name, "precision": args.precision, "checkpointing": args.checkpointing,
        "seq_len": args.seq_len, "batch": args.batch, "timed_steps": timed, "seconds": round(elapsed, 3),
        "tokens_per_sec": round(tokens_per_sec), "tflops_per_sec": round(flops * tokens_per_sec / 1e12, 2),
        "peak_tflops": peak, "mfu": round(flops * tokens_per_sec / (peak * 1e12), 4) if peak else None,
        "peak_memory_gib": round(memory, 2),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="370m")
    parser.add_argument("--seq-len", type=int, default=512)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--accelerator", default="gpu")
    parser.add_argument("--precision", default="bf16-mixed")
    parser.add_argument("--peak-tflops", type=float)
    parser.add_argument("--checkpointing", nargs="+", choices=["on", "off"], default=["on", "off"])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not 0 < args.warmup < args.steps:
        parser.error("need 0 < --warmup < --steps")
    if args.child:
        print("RESULT " + json.dumps(_measure(args)))
        return
    rows = []
    print("| preset | device | precision | checkpointing | seq × batch | tokens/s | TFLOP/s | MFU | peak memory GiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for setting in args.checkpointing:
        command = [sys.executable, __file__, "--child", "--checkpointing", setting]
        for key in ("preset", "seq_len", "batch", "steps", "warmup", "accelerator", "precision", "peak_tflops"):
            if getattr(args, key) is not None:
                command += [f"--{key.replace('_', '-')}", str(getattr(args, key))]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        if done.returncode or not lines:
            sys.exit(f"bench_train: the run with checkpointing {setting} failed:\n{done.stderr[-3000:]}")
        row = json.loads(lines[-1].removeprefix("RESULT "))
        rows.append(row)
        mfu = f"{row['mfu']:.1%}" if row["mfu"] is not None else "—"
        print(
            f"| {row['preset']} | {row['device']} | {row['precision']} | {setting} | {row['seq_len']} × {row['batch']} "
            f"| {row['tokens_per_sec']:,} | {row['tflops_per_sec']} | {mfu} | {row['peak_memory_gib']} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
