"""Training speed of a preset on this machine's accelerator (issue 15): tokens/s, MFU and peak memory, with
activation checkpointing on and off (and, on request, other block counts and ``torch.compile``).

    .venv/bin/python tools/bench_train.py                       # 370m, bf16-mixed, FSDP2 on 1 GPU, 512 x 32 blocks
    .venv/bin/python tools/bench_train.py --batch 32 64 --compile off on --json out/bench_train.json
    .venv/bin/python tools/bench_train.py --preset tiny --accelerator cpu --precision 32-true \\
        --seq-len 64 --batch 4 --steps 6 --warmup 2             # CPU smoke check

Each setting runs in a fresh process (one failing or running past ``--child-timeout`` is reported and the others
still run): ``MaskedLM`` under Lightning's ``ModelParallelStrategy`` (FSDP2 ``fully_shard`` per layer, as the large
configs) on random 15%-masked blocks (the model's speed, not the data's), ``--steps`` optimizer steps of which the
first ``--warmup`` are not timed. MFU is model FLOPs (thunder.model.sizing, forward + backward, recomputation not counted)
per second over the device's peak as ``TokenThroughputMonitor`` takes it: ``--peak-tflops``, else Lightning's table
for the precision's dtype (H200: dense bf16 989 TFLOP/s). On a GPU the bf16 matrix-product rate is also measured
(8192^3, median of 10) and MFU given against it. ``monitor MFU`` is what ``thunder.model.TokenThroughputMonitor``
logged for the same steps (a check of the training callback). Peak memory: ``torch.cuda.max_memory_allocated`` on a
GPU, the process's peak RSS on CPU. Prints one Markdown row per setting; ``--json`` is rewritten after each one.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

MASKED_SHARE = 0.15  # of the tokens of a random block


def _measure(args: argparse.Namespace) -> dict:
    import torch
    from lightning.pytorch import Callback, LightningDataModule, Trainer
    from lightning.pytorch.loggers import CSVLogger
    from lightning.pytorch.strategies import ModelParallelStrategy
    from torch.utils.data import DataLoader

    from thunder.model.backbones import backbone_config
    from thunder.model.modules import MaskedLM
    from thunder.model.progress import TokenThroughputMonitor
    from thunder.model.sizing import train_flops_per_token

    overrides = {key: yaml.safe_load(value) for key, _, value in (item.partition("=") for item in args.override)}
    vocab = backbone_config(args.preset, overrides or None).vocab_size
    batch = args.batch[0]

    class RandomBlocks(LightningDataModule):
        def train_dataloader(self) -> DataLoader:
            generator = torch.Generator().manual_seed(0)
            shape = (batch, args.seq_len)
            batches = []
            for _ in range(args.steps):
                ids = torch.randint(5, vocab, shape, generator=generator)
                labels = torch.where(torch.rand(shape, generator=generator) < MASKED_SHARE, ids, torch.full_like(ids, -100))
                batches.append({"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels})
            return DataLoader(batches, batch_size=None)

    class Timer(Callback):
        """Step end times; with ``--profile``, a torch.profiler trace of the timed steps."""

        def __init__(self) -> None:
            self.times: list[float] = []
            self.profiler: torch.profiler.profile | None = None

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
            if trainer.strategy.root_device.type == "cuda":
                torch.cuda.synchronize()
            self.times.append(time.perf_counter())
            if args.profile and batch_idx == args.warmup - 1:
                activities = [torch.profiler.ProfilerActivity.CPU]
                if torch.cuda.is_available():
                    activities.append(torch.profiler.ProfilerActivity.CUDA)
                self.profiler = torch.profiler.profile(activities=activities)
                self.profiler.start()
            elif self.profiler is not None and batch_idx == args.steps - 1:
                self.profiler.stop()

    module = MaskedLM(
        backbone=args.preset, backbone_overrides=overrides or None,
        gradient_checkpointing=args.checkpointing[0] == "on", compile=args.compile[0] == "on",
        lr=1e-4,
    )  # fmt: skip
    timer = Timer()
    timed = args.steps - args.warmup
    monitor = TokenThroughputMonitor(peak_tflops=args.peak_tflops, window_size=timed + 1)
    with tempfile.TemporaryDirectory() as logs:
        trainer = Trainer(
            accelerator=args.accelerator, devices=1,
            strategy=ModelParallelStrategy(data_parallel_size=1) if args.strategy[0] == "fsdp2" else "auto",
            precision=args.precision, max_steps=args.steps, logger=CSVLogger(logs, name="bench"),
            log_every_n_steps=1, enable_checkpointing=False, callbacks=[timer, monitor], enable_progress_bar=False,
            enable_model_summary=False, num_sanity_val_steps=0, limit_val_batches=0,
        )  # fmt: skip
        trainer.fit(module, datamodule=RandomBlocks())
        rows = list(csv.DictReader((Path(trainer.logger.log_dir) / "metrics.csv").read_text("utf-8").splitlines()))
    logged_mfu = [float(row["train/device/mfu"]) for row in rows if row.get("train/device/mfu")]
    elapsed = timer.times[-1] - timer.times[args.warmup - 1]
    tokens_per_sec = timed * batch * args.seq_len / elapsed
    if timer.profiler is not None:
        _write_profile(timer.profiler, args, elapsed)
    head_share = MASKED_SHARE if module.masked_only({"labels": None}) else 1.0  # the head on the masked tokens only
    flops = train_flops_per_token(module.model.config, args.seq_len, "mlm", batch * args.seq_len, head_share)
    peak = monitor.available_flops / 1e12 if monitor.available_flops else None  # the callback's own peak lookup
    device = trainer.strategy.root_device
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        memory = torch.cuda.max_memory_allocated(device) / 2**30
    else:
        name, memory = "cpu", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return {
        "preset": args.preset, "device": name, "precision": args.precision, "checkpointing": args.checkpointing[0],
        "compile": args.compile[0], "strategy": args.strategy[0], "overrides": overrides, "seq_len": args.seq_len,
        "batch": batch, "timed_steps": timed,
        "seconds": round(elapsed, 3), "tokens_per_sec": round(tokens_per_sec),
        "tflops_per_sec": round(flops * tokens_per_sec / 1e12, 2), "peak_tflops": peak,
        "mfu": round(flops * tokens_per_sec / (peak * 1e12), 4) if peak else None,
        "monitor_mfu": round(logged_mfu[-1], 4) if logged_mfu else None, "peak_memory_gib": round(memory, 2),
    }  # fmt: skip


def _write_profile(profiler, args: argparse.Namespace, elapsed: float) -> None:
    """The timed steps' operators by device time and by CPU time to ``--profile`` (the tables end with the total
    self device time: over the wall-clock seconds in the first line, how busy the device was)."""
    events = profiler.key_averages()
    name = f"profile_b{args.batch[0]}_{args.strategy[0]}_compile-{args.compile[0]}_ckpt-{args.checkpointing[0]}.txt"
    args.profile.mkdir(parents=True, exist_ok=True)
    (args.profile / name).write_text(
        f"timed steps: {args.steps - args.warmup}, {elapsed:.3f} s wall clock (profiled)\n\n"
        + events.table(sort_by="self_device_time_total", row_limit=30, max_name_column_width=60)
        + "\n\n"
        + events.table(sort_by="self_cpu_time_total", row_limit=30, max_name_column_width=60)
        + "\n",
        encoding="utf-8",
    )


def _matmul_tflops(size: int = 8192, repeats: int = 10) -> float:
    """Measured dense bf16 matrix-product rate of the current GPU (median of ``repeats`` after 3 warm-ups)."""
    import torch

    a, b = (torch.randn(size, size, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    times = []
    for i in range(3 + repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ b
        end.record()
        torch.cuda.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end) / 1e3)
    del a, b
    torch.cuda.empty_cache()
    return 2 * size**3 / statistics.median(times) / 1e12


def _percent(value: float | None) -> str:
    return f"{value:.1%}" if value is not None else "—"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="370m")
    parser.add_argument("--seq-len", type=int, default=512)
    parser.add_argument("--batch", type=int, nargs="+", default=[32], help="blocks per step (one run per value)")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--accelerator", default="gpu")
    parser.add_argument("--precision", default="bf16-mixed")
    parser.add_argument("--peak-tflops", type=float)
    parser.add_argument("--checkpointing", nargs="+", choices=["on", "off"], default=["on", "off"])
    parser.add_argument("--compile", nargs="+", choices=["on", "off"], default=["off"])
    parser.add_argument(
        "--strategy",
        nargs="+",
        choices=["fsdp2", "single"],
        default=["fsdp2"],
        help="fsdp2: ModelParallelStrategy (fully_shard per layer), as the configs; single: no sharding",
    )
    parser.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="backbone config override for every setting, e.g. attention_probs_dropout_prob=0",
    )
    parser.add_argument("--profile", type=Path, help="write a torch.profiler table of the timed steps here")
    parser.add_argument("--child-timeout", type=float, default=600.0, help="seconds for one setting's process")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not 0 < args.warmup < args.steps:
        parser.error("need 0 < --warmup < --steps")
    for item in args.override:
        if "=" not in item or not item.partition("=")[0]:
            parser.error(f"--override takes KEY=VALUE, got {item!r}")
    if args.child:
        print("RESULT " + json.dumps(_measure(args)))
        return
    measured = _matmul_tflops() if args.accelerator in ("gpu", "cuda") else None
    if measured is not None:
        print(f"measured bf16 matrix product (8192^3): {measured:.0f} TFLOP/s")
    rows: list[dict] = []
    failed = []
    columns = ["preset", "device", "precision", "strategy", "compile", "checkpointing", "seq × batch", "tokens/s",
               "TFLOP/s", "MFU", "MFU vs measured", "monitor MFU", "peak memory GiB"]  # fmt: skip
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    settings = itertools.product(args.batch, args.strategy, args.compile, args.checkpointing)
    for batch, strategy, compiled, checkpointing in settings:
        command = [sys.executable, __file__, "--child", "--checkpointing", checkpointing, "--compile", compiled,
                   "--batch", str(batch), "--strategy", strategy]  # fmt: skip
        for key in ("preset", "seq_len", "steps", "warmup", "accelerator", "precision", "peak_tflops", "profile"):
            if getattr(args, key) is not None:
                command += [f"--{key.replace('_', '-')}", str(getattr(args, key))]
        for item in args.override:
            command += ["--override", item]
        setting = f"batch {batch}, {strategy}, compile {compiled}, checkpointing {checkpointing}"
        try:
            done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=args.child_timeout)
        except subprocess.TimeoutExpired:
            failed.append(setting)
            print(f"| {setting}: no result within {args.child_timeout:.0f} s |", flush=True)
            continue
        lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        if done.returncode or not lines:
            failed.append(setting)
            print(f"| {setting}: failed |\n{done.stderr[-3000:]}", flush=True)
            continue
        row = json.loads(lines[-1].removeprefix("RESULT "))
        row["measured_peak_tflops"] = round(measured, 1) if measured else None
        row["mfu_vs_measured"] = round(row["tflops_per_sec"] / measured, 4) if measured else None
        rows.append(row)
        print(
            f"| {row['preset']} | {row['device']} | {row['precision']} | {strategy} | {compiled} | {checkpointing} "
            f"| {row['seq_len']} × {batch} | {row['tokens_per_sec']:,} | {row['tflops_per_sec']} "
            f"| {_percent(row['mfu'])} | {_percent(row['mfu_vs_measured'])} | {_percent(row['monitor_mfu'])} "
            f"| {row['peak_memory_gib']} |",
            flush=True,
        )
        if args.json:
            args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    if failed:
        sys.exit(f"bench_train: {len(failed)} setting(s) gave no result: {'; '.join(failed)}")


if __name__ == "__main__":
    main()
