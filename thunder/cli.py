"""The ``thunder`` command: LightningCLI for training plus Thunder's own subcommands.

``thunder fit|validate|test|predict --config X.yaml`` is a plain LightningCLI in subclass mode, so any
LightningModule / LightningDataModule (ours or a user's) is chosen by ``class_path`` alone. The other
subcommands (``deid``, ``evaluate``, ``export``, ``tokenizer``, ``taxonomy``, ``data``) are functions
exposed through jsonargparse; their modules are imported only when the subcommand runs.
"""

from __future__ import annotations

import importlib
import sys
import typing
from typing import Callable

from lightning.pytorch.cli import LightningCLI

TRAINER_COMMANDS = ("fit", "validate", "test", "predict")

# subcommand -> "module:function", or a group of those
EXTRA_COMMANDS: dict[str, str | dict[str, str]] = {
    "deid": "thunder.commands.deid:deid_command",
    "evaluate": "thunder.commands.evaluate:evaluate_command",
    "export": "thunder.commands.export:export_command",
    "tokenizer": {"train": "thunder.commands.tokenizer:train_command"},
    "taxonomy": {"check": "thunder.commands.taxonomy:check_command", "show": "thunder.commands.taxonomy:show_command"},
    "data": {"preview": "thunder.commands.data:preview_command"},
}

EXTRA_HELP = {
    "deid": "De-identify text files, directories, JSONL or stdin with a trained model.",
    "evaluate": "Leak rate, over-redaction and the paper's token metrics on annotated data.",
    "export": "Convert a checkpoint to a Hugging Face model directory.",
    "tokenizer": "Train a Mecab-ko + BPE tokenizer (thunder tokenizer train ...).",
    "taxonomy": "Inspect the PII taxonomy (thunder taxonomy show|check ...).",
    "data": "Preview synthesized training documents (thunder data preview --config X).",
}


class ThunderCLI(LightningCLI):
    """LightningCLI with subclass mode for both model and data."""

    def __init__(self, args: list[str] | None = None, **kwargs) -> None:
        kwargs.setdefault("save_config_kwargs", {"overwrite": True})
        super().__init__(
            subclass_mode_model=True,
            subclass_mode_data=True,
            args=args,
            **kwargs,
        )


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


def _run_function(function: Callable, args: list[str], prog: str) -> None:
    """Parse ``args`` against ``function``'s signature and call it (its own ``config`` parameter included).

    A parameter named ``inputs`` is positional (``thunder deid --model M a.txt b/``); all others are options.
    """
    import inspect

    from jsonargparse import ArgumentParser

    parser = ArgumentParser(prog=prog)
    positional = {"inputs"} & set(inspect.signature(function).parameters)
    if positional:
        parser.add_argument("inputs", nargs="*", default=[], help="input files or directories (default: stdin)")
    parser.add_function_arguments(function, as_positional=False, skip=positional)
    flags = {name for name, hint in typing.get_type_hints(function).items() if hint is bool}
    namespace = parser.parse_args(_normalise_options(args, flags))
    try:
        function(**namespace.as_dict())
    except (OSError, ValueError, LookupError) as error:  # bad input: a message naming it, not a traceback
        raise SystemExit(f"{prog}: error: {error}") from error


def _normalise_options(args: list[str], flags: set[str]) -> list[str]:
    """Accept ``--vocab-size`` for ``--vocab_size``, and a bare boolean flag (``--show-leaks``) for ``... true``."""
    result: list[str] = []
    for position, arg in enumerate(args):
        if not arg.startswith("--") or arg == "--":
            result.append(arg)
            continue
        name, equals, value = arg[2:].partition("=")
        name = name.replace("-", "_")
        result.append(f"--{name}{equals}{value}")
        following = args[position + 1] if position + 1 < len(args) else None
        if not equals and name in flags and (following is None or following.startswith("-")):
            result.append("true")
    return result


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``thunder`` console script."""
    args = list(sys.argv[1:] if args is None else args)
    if not args or args[0] in ("-h", "--help"):
        _print_help()
        return
    command, rest = args[0], args[1:]
    target = EXTRA_COMMANDS.get(command)
    if isinstance(target, str):
        _run_function(_resolve(target), rest, prog=f"thunder {command}")
    elif isinstance(target, dict):
        if not rest or rest[0] not in target:
            choices = ", ".join(target)
            raise SystemExit(f"usage: thunder {command} {{{choices}}} [options]  (e.g. thunder {command} {next(iter(target))} --help)")
        _run_function(_resolve(target[rest[0]]), rest[1:], prog=f"thunder {command} {rest[0]}")
    else:
        ThunderCLI(args=args)


if __name__ == "__main__":
    main()
