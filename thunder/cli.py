"""The ``thunder`` command: LightningCLI for training plus Thunder's own subcommands.

``thunder fit|validate|test|predict --config X.yaml`` is a plain LightningCLI in subclass mode, so any
LightningModule / LightningDataModule (ours or a user's) is chosen by ``class_path`` alone. The other
subcommands (``deid``, ``evaluate``, ``export``, ``tokenizer``, ``taxonomy``, ``data``) are functions
exposed through jsonargparse; their modules are imported only when the subcommand runs.
"""

from __future__ import annotations

import difflib
import importlib
import logging
import sys
import warnings
from pathlib import Path
from typing import Any, Callable, NoReturn

from lightning.pytorch import Trainer
from lightning.pytorch.cli import LightningCLI

from thunder import __version__
from thunder.commands.line import run

TRAINER_COMMANDS = ("fit", "validate", "test", "predict")

# subcommand -> "module:function", or a group of those
EXTRA_COMMANDS: dict[str, str | dict[str, str]] = {
    "deid": "thunder.commands.deid:deid_command",
    "evaluate": "thunder.commands.evaluate:evaluate_command",
    "export": "thunder.commands.export:export_command",
    "tokenizer": {"train": "thunder.commands.tokenizer:train_command"},
    "taxonomy": {"check": "thunder.commands.taxonomy:check_command", "show": "thunder.commands.taxonomy:show_command"},
    "data": {"preview": "thunder.commands.data:preview_command", "prepare": "thunder.commands.prepare:prepare_command"},
    "import": "thunder.commands.import_release:import_command",
    "serve": "thunder.commands.serve:serve_command",
    "reidentify": "thunder.commands.reidentify:reidentify_command",
}

EXTRA_HELP = {
    "deid": "De-identify text files, directories, JSONL or stdin (a trained model, or the recognizers alone).",
    "evaluate": "Leak rate, over-redaction and the paper's token metrics on annotated data.",
    "export": "Convert a checkpoint to a Hugging Face model directory.",
    "tokenizer": "Train a Mecab-ko + BPE tokenizer (thunder tokenizer train ...).",
    "taxonomy": "Inspect the PII taxonomy (thunder taxonomy show|check ...).",
    "data": "Preview synthesized training documents or prepare pretraining shards (thunder data preview|prepare).",
    "import": "Convert a published SNU Thunder-DeID model into a Thunder model directory.",
    "serve": "HTTP de-identification service and review page (thunder serve --model M --port 8000).",
    "reidentify": "Restore original texts with an encrypted mapping file and its key (authorised staff).",
}


def _checkpoints_under_root(trainer: Any) -> None:
    """A ``ModelCheckpoint`` of the config without a ``dirpath`` writes to ``<default_root_dir>/checkpoints``, so
    ``--trainer.default_root_dir`` moves a run's checkpoints with its logs (Lightning's default would bury them in
    the logger's version folder)."""
    root = trainer.get("default_root_dir")
    callbacks = trainer.get("callbacks") or []
    for callback in callbacks if isinstance(callbacks, list) else [callbacks]:
        if str(getattr(callback, "class_path", "")).endswith("ModelCheckpoint") and root is not None:
            init_args = callback.init_args
            if init_args.get("dirpath") is None:
                init_args["dirpath"] = str(Path(root) / "checkpoints")


class ThunderCLI(LightningCLI):
    """LightningCLI with subclass mode for both model and data."""

    def __init__(self, args: list[str] | None = None, **kwargs) -> None:
        kwargs.setdefault("save_config_kwargs", {"overwrite": True})
        # `main` always passes the arguments; the seed is in the run's config.yaml: neither needs a line of output
        warnings.filterwarnings("ignore", message="LightningCLI's args parameter is intended")
        logging.getLogger("lightning.fabric.utilities.seed").setLevel(logging.WARNING)
        try:
            super().__init__(
                subclass_mode_model=True,
                subclass_mode_data=True,
                args=args,
                **kwargs,
            )
        except BaseException as error:
            if getattr(self, "subcommand", None) != "predict":
                raise
            from thunder.runs.prediction import exit_status  # failed documents, refused inputs, Ctrl-C: exit codes

            raise SystemExit(exit_status(getattr(self, "trainer", None), error)) from None
        if self.subcommand == "predict":
            from thunder.runs.prediction import exit_status

            if status := exit_status(self.trainer):
                raise SystemExit(status)

    def _parse_ckpt_path(self) -> None:
        """LightningCLI reads ``--ckpt_path``'s hyperparameters (tensors and plain data only); a checkpoint it
        cannot read so (a pickled payload, a damaged file) ends the command with one line and exit code 2."""
        try:
            super()._parse_ckpt_path()
        except Exception as error:
            from thunder.model.loader import unloadable

            subcommand = self.config.get("subcommand")
            path = self.config[subcommand].get("ckpt_path")
            sys.stderr.write(f"thunder {subcommand}: error: {unloadable(path, error)}\n")
            raise SystemExit(2) from None

    def before_instantiate_classes(self) -> None:
        if self.subcommand == "predict":  # predict writes its outputs only: no config.yaml in the current directory
            self.save_config_callback = None
        config = self.config[self.subcommand] if self.subcommand else self.config  # run=False: no subcommand
        trainer = config.get("trainer") or {}
        if warning := slow_precision_warning(trainer.get("precision"), trainer.get("accelerator")):
            sys.stderr.write(f"thunder{' ' + self.subcommand if self.subcommand else ''}: warning: {warning}\n")
        _checkpoints_under_root(trainer)

    def instantiate_trainer(self, **kwargs) -> Trainer:
        """Lightning's Trainer; where standard output is not a terminal (a job's log file), progress is printed as
        whole lines (:class:`thunder.model.progress.LineProgressBar`) instead of a bar redrawn in place."""
        from thunder.model.progress import LineProgressBar, needs_line_progress

        trainer_config = self._get(self.config_init, "trainer", default={})
        callbacks = kwargs.get("callbacks", trainer_config.get("callbacks")) or []
        callbacks = callbacks if isinstance(callbacks, list) else [callbacks]
        if needs_line_progress(trainer_config, callbacks):
            kwargs["callbacks"] = [*callbacks, LineProgressBar()]
        return super().instantiate_trainer(**kwargs)

    def instantiate_classes(self) -> None:
        """Build data, model and trainer; a bad input (a missing path, an unknown backbone, a value out of range)
        ends the command with one line and exit code 2, before the Trainer creates any directory."""
        try:
            super().instantiate_classes()
            self._connect_base_model()
        except (OSError, ValueError, LookupError) as error:
            cause: BaseException = error
            while cause.__cause__ is not None:  # jsonargparse wraps what the class raised
                cause = cause.__cause__
            if not isinstance(cause, (OSError, ValueError, LookupError)):
                raise
            where = f" (relative paths are read from the current directory, {Path.cwd()})" if isinstance(
                cause, FileNotFoundError) else ""  # fmt: skip
            sys.stderr.write(f"thunder {self.subcommand}: error: {cause}{where}\n")
            raise SystemExit(2) from None


    def _connect_base_model(self) -> None:
        """A data module that labels for a trained classifier (``base_model``: adaptation) is handed that model's
        tokenizer and label set; the data module never loads a model itself."""
        base_model = getattr(self.datamodule, "base_model", None)
        if base_model is not None:
            from thunder.model.loader import Artefact

            base = Artefact.open(base_model).classifier(weights=False)
            self.datamodule.connect(base.tokenizer, base.label_set)


def slow_precision_warning(precision: object, accelerator: object) -> str | None:
    """The warning for bfloat16 on a CPU without bfloat16 kernels (no AVX512 nor AMX), where ``bf16-mixed`` emulates
    every matrix product (the ``small`` recipe's pretraining: 18x the time per step of ``32-true`` on an AVX2 CPU)."""
    import torch

    if not str(precision).startswith("bf16") or str(accelerator) not in ("cpu", "auto", "None"):
        return None
    if str(accelerator) != "cpu" and (torch.cuda.is_available() or torch.backends.mps.is_available()):
        return None
    if cpu_has_bf16_kernels():
        return None
    return (f"precision {precision} on a CPU without bfloat16 kernels (no AVX512 or AMX: "
            f"{torch.backends.cpu.get_cpu_capability()}) runs many times slower than --trainer.precision 32-true")


def cpu_has_bf16_kernels() -> bool:
    """Whether oneDNN has native bfloat16 kernels on this CPU (AVX512 or AMX on x86, BF16 on Arm)."""
    import torch

    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def _resolve(target: str) -> Callable:
    module_name, function_name = target.split(":")
    return getattr(importlib.import_module(module_name), function_name)


def _print_help() -> None:
    print("usage: thunder <command> [options]\n")
    print("Training (LightningCLI; see `thunder fit --help`):")
    for name in TRAINER_COMMANDS:
        print(f"  {name:<10} run Trainer.{name} with --config X.yaml")
    print("\nThunder:")
    for name, text in EXTRA_HELP.items():
        print(f"  {name:<10} {text}")
    print("\n  --version  print Thunder's version")


def _unknown_command(command: str) -> NoReturn:
    """Exit 2 naming every command (the trainer's and Thunder's) and the one closest to ``command``."""
    commands = [*TRAINER_COMMANDS, *EXTRA_COMMANDS]
    close = difflib.get_close_matches(command, commands, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    sys.stderr.write(f"usage: thunder <command> [options]\nthunder: error: invalid choice: {command!r} (choose from "
                     f"{', '.join(map(repr, commands))}){hint}\n")
    raise SystemExit(2)


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``thunder`` console script."""
    args = list(sys.argv[1:] if args is None else args)
    if not args or args[0] in ("-h", "--help"):
        _print_help()
        return
    if args[0] == "--version":
        print(f"thunder {__version__}")
        return
    command, rest = args[0], args[1:]
    target = EXTRA_COMMANDS.get(command)
    if isinstance(target, str):
        run(_resolve(target), rest, prog=f"thunder {command}")
    elif isinstance(target, dict):
        if not rest or rest[0] not in target:
            choices = ", ".join(target)
            raise SystemExit(f"usage: thunder {command} {{{choices}}} [options]  (e.g. thunder {command} {next(iter(target))} --help)")
        run(_resolve(target[rest[0]]), rest[1:], prog=f"thunder {command} {rest[0]}")
    elif command in TRAINER_COMMANDS or command.startswith("-"):  # LightningCLI's own options first (-c X.yaml)
        ThunderCLI(args=args)
    else:
        _unknown_command(command)


if __name__ == "__main__":
    main()
