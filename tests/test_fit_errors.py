"""`thunder fit` with a bad input: one line naming it, exit code 2, no traceback, nothing created."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from thunder.cli import main

REPO = Path(__file__).resolve().parents[1]


def demo_config(tmp_path: Path) -> Path:
    """configs/demo.yaml writing its logs and checkpoints under ``tmp_path/runs``."""
    text = (REPO / "configs" / "demo.yaml").read_text(encoding="utf-8").replace("runs/demo", str(tmp_path / "runs"))
    path = tmp_path / "demo.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "options, message",
    [
        (["--data.init_args.data_dir", "{tmp}/missing"], "data_dir not found: {tmp}/missing"),
        (["--data.init_args.tokenizer", "{tmp}/missing"], "tokenizer not found: {tmp}/missing is not a Thunder tokenizer"),
        (["--data.init_args.tokenizer", "{tmp}"], "tokenizer not found: {tmp} is not a Thunder tokenizer directory"),
        (["--data.init_args.mention_dirs", "[{tmp}/missing]"], "mention_dirs not found: {tmp}/missing"),
        (["--data.init_args.test_dirs", "[{tmp}/missing]"], "test_dirs not found: {tmp}/missing"),
        (["--model.init_args.init_from", "{tmp}/missing.ckpt"], "init_from not found: {tmp}/missing.ckpt"),
        (["--model.init_args.backbone", "nope"], "unknown backbone 'nope'"),
    ],
)
def test_config_error_is_one_line_and_creates_nothing(
    options: list[str], message: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    config = demo_config(tmp_path)
    with pytest.raises(SystemExit) as raised:
        main(["fit", "--config", str(config), *(o.format(tmp=tmp_path) for o in options)])
    assert raised.value.code == 2
    err = capfd.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"thunder fit: error: {message.format(tmp=tmp_path)}"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.yaml"]  # no TensorBoard or checkpoint directory


def test_console_script_prints_only_the_error(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "thunder", "fit", "--config", str(config), "--model.init_args.init_from", "nope.ckpt"],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert result.returncode == 2
    assert result.stderr == "thunder fit: error: init_from not found: nope.ckpt\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.yaml"]
