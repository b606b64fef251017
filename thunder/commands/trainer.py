"""``thunder fit|validate|test|predict``: LightningCLI in subclass mode, so any LightningModule / LightningDataModule
(ours or a user's) is chosen by ``class_path`` alone; :mod:`thunder.cli` imports this module (and Lightning) only for
these commands.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from pathlib import Path
from typing import Any

from lightning.pytorch import Trainer
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.cli import LightningCLI


def _checkpoints_under_root(trainer: Trainer) -> None:
    """A ``ModelCheckpoint`` of the config without a ``dirpath`` writes to ``<default_root_dir>/checkpoints``, so
    ``--trainer.default_root_dir`` moves a run's checkpoints with its logs (Lightning's default would bury them in
    the logger's version folder). Set on the callbacks, not in the config: the run's saved ``config.yaml`` used again
    with another ``default_root_dir`` writes there, never over this run's checkpoints."""
    for callback in trainer.checkpoint_callbacks:
        if isinstance(callback, ModelCheckpoint) and callback.dirpath is None:
            callback.dirpath = os.path.join(trainer.default_root_dir, "checkpoints")


def _absolute_inputs(node: Any) -> Any:
    """``node`` (a config's namespace, list or value) with every input path jsonargparse resolved (relative paths of a
    config file from its folder, of the command line from the current directory) written as its absolute path: the
    run's saved ``config.yaml`` then reads the same files wherever it is used again."""
    from jsonargparse import Namespace
    from jsonargparse import Path as ResolvedPath

    from thunder.data.recipe import path_text

    if isinstance(node, ResolvedPath):
        return path_text(node)
    if isinstance(node, Namespace):
        for key in list(vars(node)):
            setattr(node, key, _absolute_inputs(getattr(node, key)))
    elif isinstance(node, list):
        node[:] = [_absolute_inputs(item) for item in node]
    return node


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
            from thunder.model.checkpoints import unloadable

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
        for part in ("model", "data"):
            _absolute_inputs(config.get(part))

    def instantiate_trainer(self, **kwargs) -> Trainer:
        """Lightning's Trainer; where standard output is not a terminal (a job's log file), progress is printed as
        whole lines (:class:`thunder.model.progress.LineProgressBar`) instead of a bar redrawn in place."""
        from thunder.model.progress import LineProgressBar, needs_line_progress

        trainer_config = self._get(self.config_init, "trainer", default={})
        callbacks = kwargs.get("callbacks", trainer_config.get("callbacks")) or []
        callbacks = callbacks if isinstance(callbacks, list) else [callbacks]
        if needs_line_progress(trainer_config, callbacks):
            kwargs["callbacks"] = [*callbacks, LineProgressBar()]
        trainer = super().instantiate_trainer(**kwargs)
        _checkpoints_under_root(trainer)
        return trainer

    def instantiate_classes(self) -> None:
        """Build data, model and trainer; a bad input (a missing path, an unknown backbone, a value out of range)
        ends the command with one line and exit code 2, before the Trainer creates any directory."""
        try:
            super().instantiate_classes()
            self._connect_base_model()
            self._connect_tokenizer()
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

    def _connect_tokenizer(self) -> None:
        """A model that brings its tokenizer (``tokenizer: pretrained``, a directory) hands it to a Thunder data
        module given none; one given to both must be the same."""
        tokenizer = getattr(self.model, "tokenizer", None)
        if tokenizer is None or not hasattr(self.datamodule, "use_tokenizer"):
            return
        from thunder.model.modules import check_same_tokenizer

        if not self.datamodule.tokenizer_given and getattr(self.datamodule, "base_model", None) is None:
            self.datamodule.use_tokenizer(tokenizer)
        check_same_tokenizer(tokenizer, self.datamodule.tokenizer)


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
