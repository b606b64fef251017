"""The ``thunder`` command: LightningCLI for training plus Thunder's own subcommands.

``thunder fit|validate|test|predict --config X.yaml`` is a plain LightningCLI in subclass mode
(:class:`thunder.commands.trainer.ThunderCLI`), so any LightningModule / LightningDataModule (ours or a user's) is
chosen by ``class_path`` alone. The other subcommands (``deid``, ``evaluate``, ``export``, ``tokenizer``,
``taxonomy``, ``data``, ...) are functions exposed through jsonargparse. Each command's module (and Lightning, for
the trainer's) is imported only when that command runs, so ``thunder --help`` answers at once; the help of
``thunder fit|validate|test|predict``, which needs Lightning, is kept between runs (:mod:`thunder.commands.help_cache`).
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from typing import Callable, NoReturn

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


def _resolve(target: str) -> Callable:
    module_name, function_name = target.split(":")
    return getattr(importlib.import_module(module_name), function_name)


def _run_trainer(args: list[str]) -> None:
    from thunder.commands.trainer import ThunderCLI  # Lightning: only for the commands that train or predict

    ThunderCLI(args=args)


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
    # Thunder reports its own progress: no "Loading weights" / "Writing model shards" bars of transformers on stderr
    # (read when huggingface_hub is first imported; HF_HUB_DISABLE_PROGRESS_BARS=0 brings them back)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    command, rest = args[0], args[1:]
    target = EXTRA_COMMANDS.get(command)
    if isinstance(target, str):
        run(_resolve(target), rest, prog=f"thunder {command}")
    elif isinstance(target, dict):
        if not rest or rest[0] not in target:
            choices = ", ".join(target)
            raise SystemExit(f"usage: thunder {command} {{{choices}}} [options]  (e.g. thunder {command} {next(iter(target))} --help)")
        run(_resolve(target[rest[0]]), rest[1:], prog=f"thunder {command} {rest[0]}")
    elif command in TRAINER_COMMANDS and rest in (["--help"], ["-h"]):  # kept between runs: Lightning takes seconds
        from thunder.commands.help_cache import print_help

        print_help(command, lambda: _run_trainer(args))
    elif command in TRAINER_COMMANDS or command.startswith("-"):  # LightningCLI's own options first (-c X.yaml)
        _run_trainer(args)
    else:
        _unknown_command(command)


if __name__ == "__main__":
    main()
