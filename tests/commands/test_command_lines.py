"""Command lines as people type them: switches, one spelling per option, help that fits a screen and reads as prose,
and every ``thunder`` command of the README and docs/ parsing as written."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from thunder.cli import EXTRA_COMMANDS, _resolve
from thunder.commands.deid import deid_command
from thunder.commands.line import help_text, options, parse

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
SHELL_VARIABLE = re.compile(r"\$\{?\w+\}?")
COMMAND = re.compile(r"(?:^|\s|`)(?:\S*/)?thunder (\w+)(?: (train|show|check|preview|prepare)\b)?")


def commands() -> dict[str, object]:
    """Every Thunder command function by its command line (``deid``, ``tokenizer train``, ...)."""
    found = {}
    for name, target in EXTRA_COMMANDS.items():
        for sub, path in (target.items() if isinstance(target, dict) else [("", target)]):
            found[f"{name} {sub}".strip()] = _resolve(path)
    return found


def test_every_boolean_option_is_a_switch() -> None:
    values = parse(deid_command, ["--in_place", "in.txt", "--overwrite", "--no_keep_regions"], "thunder deid")
    assert values["inputs"] == ["in.txt"] and values["in_place"] and values["overwrite"]
    assert values["policy"].keep_regions is False
    values = parse(deid_command, ["--no-span-text", "--overwrite", "false", "a.txt", "--keep_regions"], "thunder deid")
    assert values["no_span_text"] and not values["overwrite"] and values["policy"].keep_regions
    assert values["inputs"] == ["a.txt"]
    with pytest.raises(SystemExit, match="--runtime must be one of auto, torch, onnx, got 'tensorrt'"):
        parse(deid_command, ["--runtime", "tensorrt"], "thunder deid")


def test_a_group_value_out_of_range_is_one_line() -> None:
    for option, value in (("--propagate_share", "2"), ("--propagate_threshold", "-1")):
        with pytest.raises(SystemExit) as raised:
            parse(deid_command, [option, value], "thunder deid")
        assert str(raised.value) == f"thunder deid: error: {option[2:]} must lie in [0, 1], got {float(value)!r}"


@pytest.mark.parametrize("name", sorted(commands()))
def test_help_fits_a_screen_and_reads_as_prose(name: str) -> None:
    function = commands()[name]
    short, full = help_text(function, f"thunder {name}"), help_text(function, f"thunder {name}", every=True)
    assert len(short.splitlines()) <= 60
    for text in (short, full):
        assert not re.search(r":(?:mod|data|func|class|meth):|``|docstring|\(default: stdin\) \(default", text), text
    assert all(f"--{option.name}" in full for option in options(function) if option.name != "inputs")


def documented_commands() -> list[tuple[str, str, list[str]]]:
    """``(where, command, arguments)`` of every ``thunder`` command line in a code block of the README and docs/."""
    found = []
    for path in DOCS:
        for block in FENCE.findall(path.read_text(encoding="utf-8")):
            for line in block.replace("\\\n", " ").splitlines():
                line = SHELL_VARIABLE.sub("0", line.split("  #")[0].strip())  # a shell loop's $S
                match = COMMAND.search(line)
                if match and match.group(1) in EXTRA_COMMANDS and not re.search(r"[…|─]", line):
                    words = shlex.split(re.split(r";|&&", line[match.end() :])[0])  # a loop's "; done"
                    name = " ".join(filter(None, match.groups()))
                    found.append((f"{path.relative_to(ROOT)}: {line[:60]}", name, words))
    return found


def test_every_documented_command_parses_as_written() -> None:
    failures = []
    for where, name, words in documented_commands():
        try:
            parse(commands()[name], [w for w in words if not w.startswith(("<", ">", "2>"))], f"thunder {name}")
        except SystemExit as error:
            failures.append(f"{where}: {error}")
    assert failures == []
    assert len(documented_commands()) > 20


def test_options_are_spelled_everywhere_as_help_prints_them() -> None:
    """``--key_file``, never ``--key-file``: one spelling per option in the README and docs/."""
    names = {option.name for function in commands().values() for option in options(function)}
    wrong = []
    for path in DOCS:
        for line in path.read_text(encoding="utf-8").splitlines():
            for match in COMMAND.finditer(line):  # what follows a thunder command on its line (not a tool's options)
                for dashed in re.findall(r"--([a-z]+(?:-[a-z]+)+)", line[match.end() :]):
                    if dashed.replace("-", "_") in names:
                        wrong.append(f"{path.relative_to(ROOT)}: --{dashed}")
    assert wrong == []
