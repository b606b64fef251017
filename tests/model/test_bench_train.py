"""tools/bench_train.py on the CPU: the row it reports agrees with the training callback, and a failed setting fails
the run without hiding the others."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "bench_train.py"
SMOKE = ["--preset", "tiny", "--accelerator", "cpu", "--precision", "32-true", "--seq-len", "32", "--steps", "5",
         "--warmup", "2", "--checkpointing", "off", "--peak-tflops", "0.05"]  # fmt: skip


def test_row_matches_the_logged_mfu_and_profile_is_written(tmp_path: Path) -> None:
    out = tmp_path / "rows.json"
    done = subprocess.run(
        [sys.executable, str(TOOL), *SMOKE, "--batch", "2", "--override", "attention_probs_dropout_prob=0",
         "--profile", str(tmp_path / "prof"), "--json", str(out)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = json.loads(out.read_text())
    assert row["overrides"] == {"attention_probs_dropout_prob": 0}
    assert row["tokens_per_sec"] > 0 and row["timed_steps"] == 3
    assert abs(row["mfu"] * 0.05 - row["tflops_per_sec"]) <= 0.006  # TFLOP/s is rounded to 2 decimals
    # the profiler runs during the timed steps, so the callback's figure is only close to the tool's
    assert row["monitor_mfu"] is not None and 0.3 < row["monitor_mfu"] / row["mfu"] < 3
    (profile,) = (tmp_path / "prof").iterdir()
    assert profile.read_text().startswith("timed steps: 3,")


def test_a_failing_setting_is_reported_and_the_run_fails(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(TOOL), *SMOKE, "--batch", "2", "3", "--override", "vocab_size=3"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )  # no token ids to draw below a vocabulary of 3
    assert done.returncode != 0
    assert "batch 2, fsdp2, compile off, checkpointing off: failed" in done.stdout
    assert "batch 3, fsdp2, compile off, checkpointing off: failed" in done.stdout  # the second still ran
    assert "2 setting(s) gave no result" in done.stderr


def test_an_override_without_a_value_is_refused_before_any_run() -> None:
    done = subprocess.run(
        [sys.executable, str(TOOL), *SMOKE, "--override", "attention_probs_dropout_prob"],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--override takes KEY=VALUE, got 'attention_probs_dropout_prob'" in done.stderr
    assert "|" not in done.stdout  # no table: nothing ran
