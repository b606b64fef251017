"""`last.ckpt` holds the last completed step, and a run killed with SIGKILL and resumed with
``--ckpt_path last.ckpt`` ends like an uninterrupted one (configs/demo.yaml, shortened on the command line)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import yaml

REPO = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent(
    '''
    import json, os, signal
    from lightning.pytorch import Callback

    class Probe(Callback):
        """Appends (step, loss, batch shape, sum of ids) after every training step; kills its own process with
        SIGKILL at ``kill_at``."""

        def __init__(self, out: str, kill_at: int = 0):
            self.out, self.kill_at = out, kill_at

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            with open(self.out, "a") as f:
                ids = batch["input_ids"]
                f.write(json.dumps([trainer.global_step, float(outputs["loss"]), list(ids.shape), int(ids.sum())]) + "\\n")
            if trainer.global_step == self.kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
    '''
)


def shortened_demo(directory: Path, kill_at: int = 0, last_every_n_steps: int = 0) -> Path:
    """configs/demo.yaml with its outputs in ``directory`` and a Probe callback; with ``last_every_n_steps``,
    last.ckpt is written every that many steps as in the step-based configs (configs/small.yaml) instead of after
    every validation."""
    config = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text(encoding="utf-8"))
    config = json.loads(json.dumps(config).replace("runs/demo", str(directory)))
    if last_every_n_steps:
        (last,) = [c for c in config["trainer"]["callbacks"] if c.get("init_args", {}).get("filename") == "last"]
        last["init_args"]["every_n_train_steps"] = last_every_n_steps
    config["trainer"]["callbacks"].append(
        {"class_path": "probe.Probe", "init_args": {"out": str(directory / "losses.jsonl"), "kill_at": kill_at}}
    )
    path = directory / "config.yaml"
    directory.mkdir(parents=True)
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


# 4 steps per epoch (96 training documents, 24 per batch), a tiny backbone
OVERRIDES = [
    "--model.init_args.backbone", "tiny", "--data.init_args.batch_size", "24", "--trainer.max_epochs", "3",
    "--trainer.log_every_n_steps", "1", "--trainer.enable_progress_bar", "false",
]


def fit(config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(config.parent.parent), str(REPO)])}
    command = [sys.executable, "-m", "thunder", "fit", "--config", str(config), *OVERRIDES, *extra]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=config.parent, timeout=600)


def last_step(directory: Path) -> int:
    return torch.load(directory / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=True)["global_step"]


def killed_and_resumed(
    directory: Path, kill_at: int, *extra: str, last_every_n_steps: int = 0
) -> tuple[list[list], subprocess.CompletedProcess[str]]:
    """Probe records of a run killed with SIGKILL after step ``kill_at`` and resumed from its last.ckpt, and the
    resumed process."""
    config = shortened_demo(directory, kill_at=kill_at, last_every_n_steps=last_every_n_steps)
    result = fit(config, *extra)
    assert result.returncode == -9, result.stderr[-3000:]
    config.write_text(config.read_text(encoding="utf-8").replace(f"kill_at: {kill_at}", "kill_at: 0"), encoding="utf-8")
    resumed = fit(config, *extra, "--ckpt_path", str(directory / "checkpoints" / "last.ckpt"))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    lines = (directory / "losses.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines], resumed


def assert_continues(records: list[list], uninterrupted: list[list], kill_at: int, saved: int) -> None:
    """The resumed process trained steps ``saved + 1`` to the end on the batches of the uninterrupted run, with
    the same losses."""
    resumed = records[kill_at:]
    assert [r[0] for r in resumed] == [r[0] for r in uninterrupted[saved:]]
    for got, expected in zip(resumed, uninterrupted[saved:]):
        assert got[2:] == expected[2:], f"step {got[0]}: another batch"
        assert got[1] == pytest.approx(expected[1], rel=1e-5, abs=1e-6), f"step {got[0]}: another loss"


@pytest.mark.slow
def test_last_checkpoint_and_resume_by_epochs(tmp_path: Path) -> None:
    """The demo as it is (last.ckpt after every validation): 3 epochs of 4 steps, killed after step 6."""
    (tmp_path / "probe.py").write_text(PROBE, encoding="utf-8")
    full = tmp_path / "full"
    result = fit(shortened_demo(full))
    assert result.returncode == 0, result.stderr[-3000:]
    uninterrupted = [json.loads(line) for line in (full / "losses.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r[0] for r in uninterrupted] == list(range(1, 13))
    assert last_step(full) == 12  # the last step, not the last improvement of val/binary_f1

    records, resumed = killed_and_resumed(tmp_path / "killed", 6)
    assert_continues(records, uninterrupted, kill_at=6, saved=4)  # last.ckpt was written at the end of epoch 0
    assert last_step(tmp_path / "killed") == 12
    assert "could not find the monitored key" not in resumed.stderr  # every epoch's validation ran


@pytest.mark.slow
def test_last_checkpoint_and_resume_by_steps(tmp_path: Path) -> None:
    """As the step-based configs (configs/small.yaml): max_steps 11 (the end of training is mid-epoch), last.ckpt
    every 2 steps; killed mid-epoch (after step 7, resumed from step 6) and at an epoch end (after step 9,
    resumed from step 8). Resumed from the last batch of an epoch, Lightning 2.6 skips that epoch's validation
    (ModelCheckpoint then warns that val/binary_f1 is missing); training itself continues exactly."""
    (tmp_path / "probe.py").write_text(PROBE, encoding="utf-8")
    extra = ("--trainer.max_steps", "11")
    full = tmp_path / "full"
    result = fit(shortened_demo(full, last_every_n_steps=2), *extra)
    assert result.returncode == 0, result.stderr[-3000:]
    uninterrupted = [json.loads(line) for line in (full / "losses.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r[0] for r in uninterrupted] == list(range(1, 12))
    assert last_step(full) == 11  # saved at the end of training, between two every-2-steps saves

    for kill_at in (7, 9):
        directory = tmp_path / f"killed_{kill_at}"
        records, _ = killed_and_resumed(directory, kill_at, *extra, last_every_n_steps=2)
        assert_continues(records, uninterrupted, kill_at=kill_at, saved=kill_at - 1)
        assert last_step(directory) == 11
