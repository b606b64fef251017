"""`thunder fit` with a bad input: one line naming it, exit code 2, no traceback, nothing created."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from thunder.cli import main

REPO = Path(__file__).resolve().parents[2]


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
        (["--data.init_args.reviewed", "[{tmp}/missing]"], "reviewed not found: {tmp}/missing"),
        (["--data.init_args.reviewed_share", "0.5"], "reviewed_share 0.5 needs reviewed judgments"),
        (["--data.init_args.base_model", "{tmp}/missing.ckpt"], "base_model not found: {tmp}/missing.ckpt"),
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
    assert result.stderr == ("thunder fit: error: init_from not found: nope.ckpt (relative paths are read from the "
                             f"current directory, {tmp_path})\n")  # a config run from elsewhere: says where it looked
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.yaml"]


def test_a_bad_reviewed_file_is_one_line_naming_file_and_line(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    config = demo_config(tmp_path)
    reviews = tmp_path / "reviews"
    reviews.mkdir()
    record = {"id": "1", "text": "피고인 홍길동은 전화하였다.", "spans": [[4, 7, "내국인이름"], [5, 8, "내국인이름"]]}
    (reviews / "a.jsonl").write_text("\n" + json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(SystemExit) as raised:
        main(["fit", "--config", str(config), "--data.init_args.reviewed", f"[{reviews}]"])
    assert raised.value.code == 2
    lines = capfd.readouterr().err.splitlines()
    assert lines == [f"thunder fit: error: {reviews / 'a.jsonl'}:2: span [5, 8) 내국인이름 overlaps [4, 7) 내국인이름"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.yaml", "reviews"]
