"""Training progress as plain lines, for runs whose output goes to a file (a cluster job, ``nohup``, ``| tee``).

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
from typing import Any

import lightning.pytorch as pl
from lightning.pytorch.callbacks import ProgressBar


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
        if self._enabled:
            print(*args, **kwargs, flush=True)

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

    def on_test_batch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any,
                          batch_idx: int, dataloader_idx: int = 0) -> None:
        self._batch_line(self.test_description, batch_idx + 1, self.total_test_batches_current_dataloader)

    def on_predict_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._started, self._last_line = time.monotonic(), -math.inf

    def on_predict_batch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any,
                             batch_idx: int, dataloader_idx: int = 0) -> None:
        self._batch_line(self.predict_description, batch_idx + 1, self.total_predict_batches_current_dataloader)

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
