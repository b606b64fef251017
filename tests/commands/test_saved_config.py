"""A run's saved ``config.yaml`` names its inputs by their absolute paths: used again from another folder, it reads
the files the run read (a relative path of a config file is read from that file's folder), and with another
``default_root_dir`` it writes its checkpoints there, not over the first run's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from thunder.data.recipe import DEMO_CORPUS

REPO = Path(__file__).resolve().parents[2]
SHORT = ["--model.init_args.backbone", "tiny", "--trainer.max_steps", "1", "--trainer.limit_val_batches", "1",
         "--trainer.val_check_interval", "1", "--trainer.enable_progress_bar", "false"]  # fmt: skip


def fit(config: Path, cwd: Path, root: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "thunder", "fit", "--config", str(config), *SHORT,
               "--trainer.default_root_dir", str(root)]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO)})  # fmt: skip


def test_a_runs_saved_config_reads_its_inputs_from_anywhere(tmp_path: Path) -> None:
    (tmp_path / "corpus").symlink_to(DEMO_CORPUS, target_is_directory=True)
    config = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text(encoding="utf-8"))
    config["data"].setdefault("init_args", {})["data_dir"] = "../corpus"  # from the config's folder
    (tmp_path / "configs").mkdir()
    written = tmp_path / "configs" / "mine.yaml"
    written.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    (tmp_path / "elsewhere").mkdir()

    first = fit(written, tmp_path / "elsewhere", tmp_path / "runs" / "first")
    assert first.returncode == 0, first.stderr[-2000:]
    saved = tmp_path / "runs" / "first" / "lightning_logs" / "version_0" / "config.yaml"
    data = yaml.safe_load(saved.read_text(encoding="utf-8"))["data"]["init_args"]
    assert data["data_dir"] == str(tmp_path / "corpus")  # not ../corpus, which its own folder would misread

    again = fit(saved, tmp_path, tmp_path / "runs" / "again")  # the saved config, used from another folder
    assert again.returncode == 0, again.stderr[-2000:]
    assert (tmp_path / "runs" / "again" / "checkpoints" / "last.ckpt").is_file()  # never over the first run's
