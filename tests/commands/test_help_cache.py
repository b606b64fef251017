"""The help of ``thunder fit|validate|test|predict`` kept between runs (thunder.commands.help_cache)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from thunder import cli
from thunder.commands import help_cache

LIGHTNING = re.compile(rb"^import time: .*\| +(lightning|torch)\b", re.MULTILINE)  # a line of -X importtime


def _fit_help(cache: Path) -> subprocess.CompletedProcess[bytes]:
    """``thunder fit --help`` in a new process, which names on stderr every module it imports."""
    environment = {**os.environ, "XDG_CACHE_HOME": str(cache), "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "thunder", "fit", "--help"], capture_output=True,
                          env=environment, check=True)  # fmt: skip


def test_the_kept_help_is_the_one_lightning_prints(tmp_path: Path) -> None:
    rendered, kept = _fit_help(tmp_path), _fit_help(tmp_path)
    assert b"--trainer.max_steps" in rendered.stdout and LIGHTNING.search(rendered.stderr)
    assert kept.stdout == rendered.stdout
    assert not LIGHTNING.search(kept.stderr)


def _rendering(renders: list[int]) -> Callable[[], None]:
    """A stand-in for LightningCLI's help: prints a text that shows the terminal's width, then exits as it does."""

    def render() -> None:
        renders.append(1)
        print(f"usage: thunder fit, {shutil.get_terminal_size().columns} columns")
        raise SystemExit(0)

    return render


def _help(render: Callable[[], None], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as raised:
        help_cache.print_help("fit", render)
    assert raised.value.code == 0
    return capsys.readouterr().out


def test_a_changed_key_renders_the_help_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    sources = tmp_path / "thunder"
    sources.mkdir()
    (sources / "cli.py").write_text("", encoding="utf-8")
    monkeypatch.setattr(help_cache, "PACKAGE", sources)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "100")
    renders: list[int] = []
    render = _rendering(renders)
    assert _help(render, capsys) == _help(render, capsys) == "usage: thunder fit, 100 columns\n"
    assert len(renders) == 1 and (tmp_path / "cache" / "thunder" / "help-fit.txt").is_file()
    monkeypatch.setenv("COLUMNS", "60")
    assert _help(render, capsys) == "usage: thunder fit, 60 columns\n" and len(renders) == 2
    modified = (sources / "cli.py").stat().st_mtime_ns + 1_000_000_000
    os.utime(sources / "cli.py", ns=(modified, modified))
    assert _help(render, capsys) == _help(render, capsys) == "usage: thunder fit, 60 columns\n"
    assert len(renders) == 3


def test_an_unwritable_cache_directory_still_prints_the_help(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a file").write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a file"))  # no directory can be made under a file
    renders: list[int] = []
    for _ in range(2):
        assert _help(_rendering(renders), capsys).startswith("usage: thunder fit")
    assert len(renders) == 2


def test_a_help_that_fails_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    def fail() -> None:
        print("usage: thunder fit")
        raise SystemExit(2)

    with pytest.raises(SystemExit) as raised:
        help_cache.print_help("fit", fail)
    assert raised.value.code == 2 and not (tmp_path / "thunder" / "help-fit.txt").exists()


def test_only_the_bare_help_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``thunder fit --help`` alone is printed from the cache; with a config or any other option LightningCLI runs."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    runs: list[list[str]] = []

    def run_trainer(args: list[str]) -> None:
        runs.append(args)
        print("usage: thunder fit")
        raise SystemExit(0)

    monkeypatch.setattr(cli, "_run_trainer", run_trainer)
    command_lines = [["fit", "--help"], ["fit", "--help"], ["fit", "-h"], ["fit", "--config", "x.yaml", "--help"],
                     ["-c", "x.yaml", "fit", "--help"], ["fit", "--help", "--trainer.max_steps", "1"]]  # fmt: skip
    for args in command_lines:
        with pytest.raises(SystemExit):
            cli.main(args)
    assert runs == [["fit", "--help"], *command_lines[3:]]
