"""The `thunder` entry point: help, and user modules picked up by class_path alone."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from thunder.cli import EXTRA_COMMANDS, main
from thunder.commands import trainer as trainer_cli

REPO = Path(__file__).resolve().parents[2]

USER_MODULE = textwrap.dedent(
    '''
    import json
    import torch
    import lightning as L


    class UserData(L.LightningDataModule):
        def __init__(self, size: int = 32):
            super().__init__()
            self.size = size

        def train_dataloader(self):
            x = torch.randn(self.size, 4)
            return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, x.sum(1, keepdim=True)), batch_size=8)


    class UserModel(L.LightningModule):
        def __init__(self, marker: str, hidden: int = 3):
            super().__init__()
            self.marker = marker
            self.net = torch.nn.Sequential(torch.nn.Linear(4, hidden), torch.nn.Linear(hidden, 1))

        def training_step(self, batch, batch_idx):
            x, y = batch
            return torch.nn.functional.mse_loss(self.net(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

        def on_train_end(self):
            with open(self.marker, "w") as f:
                json.dump({"steps": self.trainer.global_step, "hidden": self.net[0].out_features}, f)
    '''
)


def test_help_lists_trainer_and_thunder_commands(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--help"])
    out = capsys.readouterr().out
    for command in ("fit", "validate", "test", "predict", *EXTRA_COMMANDS):
        assert f"  {command} " in out


def test_console_script_is_installed() -> None:
    result = subprocess.run([sys.executable, "-m", "thunder", "--help"], capture_output=True, text=True, check=True)
    assert "deid" in result.stdout


def test_user_modules_by_class_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "user_module.py").write_text(USER_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    marker = tmp_path / "marker.json"
    config = tmp_path / "user.yaml"
    config.write_text(
        textwrap.dedent(
            f"""
            trainer:
              max_steps: 3
              accelerator: cpu
              logger: false
              enable_checkpointing: false
              enable_progress_bar: false
              default_root_dir: {tmp_path}
            model:
              class_path: user_module.UserModel
              init_args:
                marker: {marker}
                hidden: 5
            data:
              class_path: user_module.UserData
            """
        ),
        encoding="utf-8",
    )
    main(["fit", "--config", str(config)])
    result = json.loads(marker.read_text(encoding="utf-8"))
    assert result == {"steps": 3, "hidden": 5}


@pytest.mark.parametrize(
    ("precision", "accelerator", "kernels", "warned"),
    [("bf16-mixed", "cpu", False, True), ("bf16-true", "auto", False, True), ("bf16-mixed", "cpu", True, False),
     ("32-true", "cpu", False, False), ("16-mixed", "cpu", False, False), ("bf16-mixed", "gpu", False, False)],
)
def test_bf16_on_a_cpu_without_its_kernels_is_warned(
    monkeypatch: pytest.MonkeyPatch, precision: str, accelerator: str, kernels: bool, warned: bool
) -> None:
    monkeypatch.setattr(trainer_cli, "cpu_has_bf16_kernels", lambda: kernels)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    warning = trainer_cli.slow_precision_warning(precision, accelerator)
    assert (warning is not None) is warned
    if warned:
        assert precision in warning and "--trainer.precision 32-true" in warning


def test_fit_warns_of_bf16_without_kernels_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(trainer_cli, "cpu_has_bf16_kernels", lambda: False)
    (tmp_path / "user_module.py").write_text(USER_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    main(["fit", "--model", "user_module.UserModel", "--model.marker", str(tmp_path / "m.json"),
          "--data", "user_module.UserData", "--trainer.max_steps", "1", "--trainer.accelerator", "cpu",
          "--trainer.precision", "bf16-mixed", "--trainer.logger", "false", "--trainer.enable_checkpointing", "false",
          "--trainer.enable_progress_bar", "false", "--trainer.default_root_dir", str(tmp_path)])
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("thunder fit: warning:")]
    assert len(lines) == 1 and "bf16-mixed" in lines[0]


def test_function_commands_accept_dashed_options_and_bare_flags(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    main(["evaluate", "--recognizers-only", "--limit", "2", "--json", str(report)])
    assert json.loads(report.read_text(encoding="utf-8"))["documents"] == 2


def test_function_command_errors_name_the_bad_input() -> None:
    with pytest.raises(SystemExit) as raised:
        main(["taxonomy", "check", "--data", "/nonexistent-corpus"])
    assert "thunder taxonomy check: error:" in str(raised.value) and "/nonexistent-corpus" in str(raised.value)


def test_messages_name_options_as_typed_and_stay_on_one_line(tmp_path: Path, capsys) -> None:
    """A missing option is named as typed (``--key_file``); an error or a warning whose text holds a line break
    (a file name) stays one line, escaped."""
    import warnings

    from thunder.commands.line import run

    with pytest.raises(SystemExit, match=r"^thunder reidentify: error: --key_file is required$"):
        main(["reidentify", "--mapping", str(tmp_path / "m.jsonl"), str(tmp_path)])

    def failing(path: str) -> None:
        warnings.warn(f"{path}: odd", UserWarning)
        raise ValueError(f"{path}: not readable")

    with pytest.raises(SystemExit) as raised:
        run(failing, ["--path", "a\nthunder x: 1 written"], prog="thunder x")
    assert str(raised.value.code) == "thunder x: error: a\\nthunder x: 1 written: not readable"
    assert capsys.readouterr().err == "thunder x: warning: a\\nthunder x: 1 written: odd\n"


def test_version_is_the_installed_packages(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    main(["--version"])
    assert capsys.readouterr().out == f"thunder {version('thunder-deid')}\n"


def test_an_unknown_command_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["dei"])
    assert raised.value.code == 2
    error = capsys.readouterr().err
    assert all(repr(command) in error for command in ("fit", "predict", *EXTRA_COMMANDS))
    assert "did you mean 'deid'?" in error


@pytest.mark.parametrize("command", ["deid", "evaluate", "serve"])
def test_a_model_and_the_recognizers_switch_exclude_each_other(command: str, tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as raised:
        main([command, "--model", str(tmp_path), "--recognizers_only"])
    assert str(raised.value) == f"thunder {command}: error: give --model or --recognizers_only, not both"


def test_without_a_model_package_every_command_says_how_to_get_one(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("thunder.model.packages.installed", lambda: {})
    source = tmp_path / "a.txt"
    source.write_text("피고인 홍길동은 010-1234-5678로 연락하였다.\n", encoding="utf-8")
    for command in (["deid", str(source), "--out", str(tmp_path / "out")], ["evaluate", "--limit", "1"], ["serve"]):
        with pytest.raises(SystemExit) as raised:
            main(command)
        assert str(raised.value) == (f"thunder {command[0]}: error: no --model given and no model package named "
                                     "'small' is installed (installed: none); pip install ./models/small from "
                                     "Thunder's repository; or give --model DIR_OR_CKPT, or --recognizers_only for "
                                     "the pattern recognizers alone")  # fmt: skip
    assert not (tmp_path / "out").exists()


class _Terminal(io.BytesIO):
    """Standard input at a terminal: what was typed up to Ctrl-D."""

    @property
    def buffer(self) -> io.BytesIO:
        return self

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [True, False])
def test_deid_says_it_reads_a_terminal_until_ctrl_d(terminal: bool, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    typed = "전화 010-1234-5678로 연락하였다.\n".encode()
    monkeypatch.setattr(sys, "stdin", _Terminal(typed) if terminal else io.TextIOWrapper(io.BytesIO(typed)))
    main(["deid", "--recognizers_only", "--recognizers", '["phone_number"]'])
    captured = capsys.readouterr()
    assert captured.out == "전화 A로 연락하였다.\n"
    assert ("thunder deid: reading standard input, Ctrl-D to end" in captured.err) == terminal


def _trainer_configs() -> list[Path]:
    return sorted(path for path in (REPO / "configs").rglob("*.yaml") if "trainer" in _yaml(path))


def _yaml(path: Path) -> dict:
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


@pytest.mark.parametrize("config", _trainer_configs(), ids=lambda path: str(path.relative_to(REPO / "configs")))
def test_no_config_fixes_where_a_run_writes(config: Path) -> None:
    """Checkpoints and logs name no directory of their own: ``default_root_dir`` decides (Lightning's default logger
    writes under it, thunder.cli puts checkpoints in its checkpoints/)."""
    trainer = _yaml(config)["trainer"]
    assert trainer.get("logger") in (None, False), trainer.get("logger")
    for callback in trainer.get("callbacks") or []:
        assert "dirpath" not in (callback.get("init_args") or {}), callback


def test_the_predict_config_overrides_nothing_the_model_stores() -> None:
    """Windows, threshold and span growing come from the model unless the command line gives them."""
    pipeline = _yaml(REPO / "configs" / "predict.yaml")["model"]["init_args"]["pipeline"]
    assert {key: pipeline.get(key) for key in ("max_length", "stride", "threshold", "grow_threshold")} == dict.fromkeys(
        ("max_length", "stride", "threshold", "grow_threshold"))


@pytest.mark.parametrize("root", [None, "tiny"])
def test_the_demo_run_writes_under_default_root_dir(
    root: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo config's checkpoints and logs land in runs/demo/ (the README's path), or wherever
    ``--trainer.default_root_dir`` says; nothing in runs/demo then."""
    (tmp_path / "user_module.py").write_text(USER_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    trainer = _yaml(REPO / "configs" / "demo.yaml")["trainer"]
    trainer["callbacks"] = [c for c in trainer["callbacks"] if c["class_path"].endswith("ModelCheckpoint")]
    trainer.update(max_steps=2, max_epochs=None, enable_progress_bar=False, enable_model_summary=False)
    config = tmp_path / "run.yaml"
    config.write_text(json.dumps({"trainer": trainer, "model": {"class_path": "user_module.UserModel", "init_args": {
        "marker": str(tmp_path / "m.json")}}, "data": {"class_path": "user_module.UserData"}}), encoding="utf-8")
    main(["fit", "--config", str(config), *(["--trainer.default_root_dir", root] if root else [])])
    written = tmp_path / (root or "runs/demo")
    assert (written / "checkpoints" / "last.ckpt").is_file()
    assert list((written / "lightning_logs").rglob("events.out.tfevents.*"))
    assert not (root and (tmp_path / "runs").exists())


@pytest.mark.parametrize("command", [[], *[[name, *([sub] if sub else [])] for name, target in EXTRA_COMMANDS.items()
                                         for sub in (target if isinstance(target, dict) else [None])]],
                         ids=lambda command: " ".join(command) or "thunder")  # fmt: skip
def test_help_imports_neither_lightning_nor_torch_nor_transformers(command: list[str]) -> None:
    """``--help`` answers in a fraction of a second (tools/bench_help.py times it): only the trainer commands and a
    command's run import the heavy libraries."""
    code = ("import contextlib, io, sys\nfrom thunder.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    main({[*command, '--help']!r})\n"
            "print(sorted(m for m in ('lightning', 'torch', 'transformers') if m in sys.modules))")  # fmt: skip
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
