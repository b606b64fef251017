"""Training progress as whole lines when standard output is a file (a job's log), not a terminal."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import lightning as L
import pytest

from thunder.cli import main
from thunder.model.progress import LineProgressBar, needs_line_progress

REPO = Path(__file__).resolve().parents[2]

MODULE = textwrap.dedent(
    '''
    import torch
    import lightning as L


    class Data(L.LightningDataModule):
        def train_dataloader(self):
            x = torch.randn(40, 4)
            return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)

        val_dataloader = train_dataloader

        def test_dataloader(self):
            x = torch.randn(12, 4)
            data = torch.utils.data.TensorDataset(x, x.sum(1, keepdim=True))
            return [torch.utils.data.DataLoader(data, batch_size=4)] * 2

        predict_dataloader = test_dataloader


    class Model(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            loss = torch.nn.functional.mse_loss(self.net(batch[0]), batch[1])
            self.log("train/loss", loss, prog_bar=True)
            return loss

        def validation_step(self, batch, batch_idx):
            self.log("val/loss", torch.nn.functional.mse_loss(self.net(batch[0]), batch[1]))

        def test_step(self, batch, batch_idx, dataloader_idx=0):
            self.log("test/loss", torch.nn.functional.mse_loss(self.net(batch[0]), batch[1]))

        def predict_step(self, batch, batch_idx, dataloader_idx=0):
            return self.net(batch[0])

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)
    '''
)


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "progress_module.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import progress_module

    return progress_module


def _fit(user_module, tmp_path: Path, bar: LineProgressBar, max_steps: int = 6) -> None:
    trainer = L.Trainer(max_steps=max_steps, accelerator="cpu", logger=False, enable_checkpointing=False,
                        enable_model_summary=False, callbacks=[bar], val_check_interval=3,
                        limit_val_batches=2, num_sanity_val_steps=1, default_root_dir=tmp_path)
    trainer.fit(user_module.Model(), datamodule=user_module.Data())


def test_every_step_is_a_line_with_total_rate_and_metrics(user_module, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    _fit(user_module, tmp_path, LineProgressBar(interval=0))
    lines = capsys.readouterr().out.splitlines()
    steps = [line for line in lines if re.match(r"Training: step \d", line)]
    assert [int(re.match(r"Training: step (\d+)/6", line).group(1)) for line in steps] == [1, 2, 3, 4, 5, 6]
    assert steps[-1].startswith("Training: step 6/6 (100%)") and "left 0:00:00" in steps[-1]
    assert all("steps/s" in line and "train/loss " in line and "v_num" not in line for line in steps)
    validations = [line for line in lines if line.startswith("Validation: step")]
    assert [line.split(" | ")[0] for line in validations] == ["Validation: step 3", "Validation: step 6"]
    assert all("val/loss " in line for line in validations)
    assert lines[0] == "Training: from step 0 to 6" and lines[-1].startswith("Training: stopped at step 6 after ")


def test_lines_are_rate_limited_but_the_first_and_last_step_always_print(
    user_module, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fit(user_module, tmp_path, LineProgressBar(interval=3600), max_steps=5)
    steps = [line.split(" | ")[0] for line in capsys.readouterr().out.splitlines() if line.startswith("Training: step")]
    assert steps == ["Training: step 1/5 (20%)", "Training: step 5/5 (100%)"]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_lines_only_where_output_is_not_a_terminal_and_no_bar_is_chosen() -> None:
    assert needs_line_progress({}, [], io.StringIO())
    assert not needs_line_progress({}, [], _Terminal())
    assert not needs_line_progress({"enable_progress_bar": False}, [], io.StringIO())
    assert not needs_line_progress({}, [L.pytorch.callbacks.TQDMProgressBar()], io.StringIO())


def test_thunder_fit_prints_lines_to_a_file_and_none_when_the_bar_is_off(
    user_module, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert not sys.stdout.isatty()  # pytest captures standard output, as a job's log file would
    args = ["fit", "--model", "progress_module.Model", "--data", "progress_module.Data", "--trainer.max_steps", "4",
            "--trainer.accelerator", "cpu", "--trainer.logger", "false", "--trainer.enable_checkpointing", "false",
            "--trainer.limit_val_batches", "0", "--trainer.default_root_dir", str(tmp_path)]
    main(args)
    out = capsys.readouterr().out
    assert "Training: step 1/4 (25%)" in out and "Training: step 4/4 (100%)" in out and "\r" not in out
    main([*args, "--trainer.enable_progress_bar", "false"])
    assert "Training: step" not in capsys.readouterr().out


def test_a_negative_interval_is_refused() -> None:
    with pytest.raises(ValueError, match="interval must be"):
        LineProgressBar(interval=-1)


def test_progress_lines_are_flushed(monkeypatch: pytest.MonkeyPatch) -> None:
    flushed: list[bool] = []
    monkeypatch.setattr("builtins.print", lambda *args, flush=False, **kwargs: flushed.append(flush))
    LineProgressBar().print("x")
    assert flushed == [True]


def test_test_and_predict_lines_count_the_batches_of_each_loader(user_module, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    trainer = L.Trainer(accelerator="cpu", logger=False, enable_model_summary=False, default_root_dir=tmp_path,
                        callbacks=[LineProgressBar(interval=0)])
    model, data = user_module.Model(), user_module.Data()
    trainer.test(model, datamodule=data)
    trainer.predict(model, datamodule=data)
    lines = [line.split(" | ")[0] for line in capsys.readouterr().out.splitlines() if " batch " in line]
    batches = ["batch 1/3", "batch 2/3", "batch 3/3"] * 2  # two loaders of three batches
    assert lines == [f"Testing: {b}" for b in batches] + [f"Predicting: {b}" for b in batches]


def test_a_closed_output_ends_the_lines_not_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stdout", closed)
    bar = LineProgressBar()
    bar.print("first")  # print() raises ValueError: I/O operation on closed file
    monkeypatch.setattr(sys, "stdout", live := io.StringIO())
    bar.print("second")
    assert live.getvalue() == ""


def _thunder(args: list[str], cwd: Path, output: str) -> tuple[int, str]:
    """``thunder ARGS > log 2>&1`` (``output`` "file") or ``thunder ARGS 2>&1 | …`` ("pipe"): exit code, output."""
    command = [sys.executable, "-m", "thunder", *args]
    if output == "file":
        log = cwd / f"{args[0]}.log"
        with log.open("w", encoding="utf-8") as stream:
            code = subprocess.run(command, cwd=cwd, stdout=stream, stderr=subprocess.STDOUT).returncode
        return code, log.read_text(encoding="utf-8")
    result = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return result.returncode, result.stdout


@pytest.mark.parametrize("output", ["file", "pipe"])
def test_thunder_predict_and_test_finish_with_output_to_a_file_or_a_pipe(tmp_path: Path, output: str) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(5):
        (corpus / f"doc{i}.txt").write_text(f"문서 {i}: 연락처 010-1234-567{i}로 전화하였다.\n", encoding="utf-8")
    code, log = _thunder(["predict", "--config", str(REPO / "configs" / "predict.yaml"), "--data.init_args.inputs",
                          "[corpus]", "--data.init_args.batch_size", "2", "--data.init_args.num_workers", "0",
                          "--model.init_args.pipeline.recognizers_only", "true", "--trainer.accelerator", "cpu", "--trainer.callbacks.init_args.output_dir", "out"],
                         tmp_path, output)  # fmt: skip
    assert code == 0, log
    assert "Predicting: batch 3/3" in log and "5 written, 0 failed, of 5 documents" in log
    assert {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "out").glob("*.txt")} == {
        f"doc{i}.txt": f"문서 {i}: 연락처 A로 전화하였다.\n" for i in range(5)}

    code, log = _thunder(["test", "--config", str(REPO / "configs" / "demo.yaml")], tmp_path, output)
    assert code == 0, log
    assert "Testing: batch 2/2" in log and "test/binary_f1" in log  # every test batch, then the metrics
