"""Training progress: plain lines for runs whose output goes to a file (a cluster job, ``nohup``, ``| tee``), and
tokens/s, FLOP/s and MFU for TensorBoard (:class:`TokenThroughputMonitor`).

Lightning's bar redraws one line with carriage returns; written to a file it sits in the output buffer and shows
nothing for minutes, then one unreadable line. :class:`LineProgressBar` prints a complete, flushed line at the first
step and then every ``interval`` seconds: the step out of the run's total, steps per second, elapsed and remaining
time and the bar's metrics (loss, ...), and one line per validation with its results. ``thunder fit|validate|test|
predict`` use it in place of Lightning's bar when standard output is not a terminal.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, Mapping

import lightning.pytorch as pl
import torch
from lightning.pytorch import LightningModule, Trainer
from lightning.pytorch.callbacks import ProgressBar, ThroughputMonitor
from lightning.pytorch.callbacks.throughput_monitor import _plugin_to_compute_dtype
from torch import Tensor


class LineProgressBar(ProgressBar):
    """A progress bar of whole lines on standard output, at most one every ``interval`` seconds per loop."""

    def __init__(self, interval: float = 30.0) -> None:
        super().__init__()
        if not interval >= 0:
            raise ValueError(f"LineProgressBar: interval must be a number of seconds >= 0, got {interval}")
        self.interval = interval
        self._enabled = True
        self._started = 0.0
        self._last_line = -math.inf
        self._first_step = 0
        self._total: int | None = None  # the run's steps, known at the start of training (None: unbounded)

    def disable(self) -> None:
        self._enabled = False

    def enable(self) -> None:
        self._enabled = True

    def print(self, *args: Any, **kwargs: Any) -> None:
        """A flushed line; standard output closed under the run (``| head``, a closed log) ends the lines, not the
        run."""
        if self._enabled:
            try:
                print(*args, **kwargs, flush=True)
            except (OSError, ValueError):  # a broken pipe, a closed file
                self._enabled = False

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._started, self._last_line, self._first_step = time.monotonic(), -math.inf, trainer.global_step
        total = trainer.estimated_stepping_batches
        self._total = int(total) if math.isfinite(total) else None
        self.print(f"{self.train_description}: from step {trainer.global_step}"
                   + (f" to {self._total}" if self._total is not None else ""))

    def on_train_batch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        now, step, total = time.monotonic(), trainer.global_step, self._total
        if now - self._last_line < self.interval and step != total:
            return
        self._last_line = now
        elapsed = now - self._started
        rate = (step - self._first_step) / elapsed if elapsed > 0 else 0.0
        parts = [f"{self.train_description}: step {step}" + (f"/{total} ({step / total:.0%})" if total else ""),
                 f"epoch {trainer.current_epoch}", f"{rate:.2f} steps/s", f"elapsed {_clock(elapsed)}"]
        if total and rate > 0:
            parts.append(f"left {_clock((total - step) / rate)}")
        self.print(" | ".join(parts + _metrics(self.get_metrics(trainer, pl_module))))

    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if trainer.sanity_checking:
            return
        metrics = {name: value for name, value in trainer.callback_metrics.items() if name.startswith("val")}
        self.print(" | ".join([f"{self.validation_description}: step {trainer.global_step}", *_metrics(metrics)]))

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self.print(f"{self.train_description}: stopped at step {trainer.global_step} after "
                   f"{_clock(time.monotonic() - self._started)}")

    def on_test_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._started, self._last_line = time.monotonic(), -math.inf

    def on_test_batch_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch: Any, batch_idx: int,
                            dataloader_idx: int = 0) -> None:
        self.has_dataloader_changed(dataloader_idx)  # the loader whose total the line shows

    def on_test_batch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any,
                          batch_idx: int, dataloader_idx: int = 0) -> None:
        self._batch_line(self.test_description, batch_idx + 1, self.total_test_batches_current_dataloader)

    def on_test_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self.reset_dataloader_idx_tracker()

    def on_predict_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._started, self._last_line = time.monotonic(), -math.inf

    def on_predict_batch_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch: Any, batch_idx: int,
                               dataloader_idx: int = 0) -> None:
        self.has_dataloader_changed(dataloader_idx)

    def on_predict_batch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any,
                             batch_idx: int, dataloader_idx: int = 0) -> None:
        self._batch_line(self.predict_description, batch_idx + 1, self.total_predict_batches_current_dataloader)

    def on_predict_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self.reset_dataloader_idx_tracker()

    def _batch_line(self, description: str, done: int, total: int | float) -> None:
        now = time.monotonic()
        if now - self._last_line < self.interval and done != total:
            return
        self._last_line = now
        of = f"/{total}" if math.isfinite(total) else ""
        self.print(f"{description}: batch {done}{of} | elapsed {_clock(now - self._started)}")


def needs_line_progress(trainer_config: dict[str, Any], callbacks: list[Any], stream: Any = None) -> bool:
    """Whether a run should print :class:`LineProgressBar` lines: its output is not a terminal, the bar is not
    switched off and no progress bar was configured."""
    stream = sys.stdout if stream is None else stream
    if trainer_config.get("enable_progress_bar") is False or any(isinstance(c, ProgressBar) for c in callbacks):
        return False
    isatty = getattr(stream, "isatty", None)
    return not (isatty is not None and isatty())


def _metrics(metrics: dict[str, Any]) -> list[str]:
    shown = []
    for name, value in metrics.items():
        if name == "v_num":
            continue
        value = value.item() if hasattr(value, "item") else value
        shown.append(f"{name} {value:.4g}" if isinstance(value, float) else f"{name} {value}")
    return shown


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class TokenThroughputMonitor(ThroughputMonitor):
    """Lightning's ``ThroughputMonitor`` for Thunder batches: samples are rows, items are non-padding tokens.

    Logs ``train/device/items_per_sec`` (non-padding tokens/s per device; ``train/items_per_sec`` over all devices
    when there are several), ``train/device/samples_per_sec``, ``train/device/flops_per_sec`` and, whenever the
    device's peak is known, ``train/device/mfu`` (likewise for validation). FLOPs come from the
    module's ``flops_per_batch`` (model FLOPs of the batch, :mod:`thunder.model.sizing`: matmuls, attention and relative
    attention, forward + backward; activation recomputation is not counted). The peak is ``peak_tflops`` (dense, per
    device) when given, else Lightning's table for the device, except that H200 is taken at its dense bf16 989
    TFLOP/s (the table lists the 2:4-sparse figure).
    """

    def __init__(self, peak_tflops: float | None = None, window_size: int = 20, **kwargs: Any) -> None:
        super().__init__(batch_size_fn=batch_rows, length_fn=batch_tokens, window_size=window_size, **kwargs)
        self.peak_tflops = peak_tflops

    def setup(self, trainer: Trainer, pl_module: LightningModule, stage: str) -> None:
        super().setup(trainer, pl_module, stage)
        peak = self.peak_tflops
        device = trainer.strategy.root_device
        if peak is None and device.type == "cuda" and "h200" in torch.cuda.get_device_name(device).lower():
            peak = H200_DENSE_BF16_TFLOPS if _plugin_to_compute_dtype(trainer.precision_plugin) == torch.bfloat16 else None
        if peak is not None:
            self.available_flops = int(peak * 1e12)
            for throughput in self._throughputs.values():
                throughput.available_flops = self.available_flops


H200_DENSE_BF16_TFLOPS = 989.0


def batch_rows(batch: Mapping[str, Tensor]) -> int:
    """Rows (sequences) of a batch."""
    return int(batch["input_ids"].shape[0])


def batch_tokens(batch: Mapping[str, Tensor]) -> int:
    """Non-padding tokens of a batch."""
    mask = batch.get("attention_mask")
    return int(mask.sum()) if mask is not None else int(batch["input_ids"].numel())
