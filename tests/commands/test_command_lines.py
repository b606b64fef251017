"""Command lines as people type them: switches, one spelling per option, help that fits a screen and reads as prose,
and every ``thunder`` command of the README and docs/ parsing as written."""

from __future__ import annotations

import dataclasses
import inspect
import re
import shlex
import typing
from pathlib import Path

import pytest

from thunder.cli import EXTRA_COMMANDS, _resolve
from thunder.commands.deid import deid_command
from thunder.commands.line import Option, first_phrase, help_text, options, parse, plain

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


def _booleans() -> list[tuple[str, Option]]:
    """``(command, option)`` for every boolean option of every command, a union with a boolean (``bool |
    list[str]``) included."""
    return [(name, option) for name, function in sorted(commands().items()) for option in options(function)
            if bool in {typing.get_origin(kind) or kind for kind in typing.get_args(option.hint) or (option.hint,)}]


def _parsed(values: dict[str, object], name: str) -> object:
    """The value option ``name`` was parsed to, inside its option group where it has one."""
    if name in values:
        return values[name]
    return next(getattr(group, name) for group in values.values() if dataclasses.is_dataclass(group)
                and name in {field.name for field in dataclasses.fields(group)})  # fmt: skip


def test_the_walk_finds_every_command_s_booleans() -> None:
    found = {(name, option.name) for name, option in _booleans()}
    assert {("data preview", "colour"), ("deid", "legal_text"), ("deid", "genre_words"), ("deid", "protected_words"),
            ("evaluate", "show_leaks"), ("serve", "keep_regions"), ("export", "allow_unverified"),
            ("taxonomy check", "strict")} <= found  # fmt: skip


@pytest.mark.parametrize(("name", "option"), _booleans(), ids=lambda value: getattr(value, "name", value))
def test_every_boolean_of_every_command_is_a_switch(name: str, option: Option) -> None:
    """``--X`` alone is true and ``--no_X`` false, before an input (unless ``X`` takes a text: ``--genre_words
    FILE``) or another option, for every boolean of every command; help prints the ``--no_X`` form wherever the
    default is not false, and never a true|false value."""
    function = commands()[name]
    other = [f"--{o.name}=x" for o in options(function) if o.default is inspect.Parameter.empty]
    inputs = ["in.txt"] if "inputs" in inspect.signature(function).parameters else []
    takes_text = str in typing.get_args(option.hint)
    for given, expected in ((f"--{option.name}", True), (f"--no_{option.name}", False)):
        variants = [[*other, *inputs, given]]
        variants += [[given, *other, *inputs]] if other else []
        variants += [[*other, given, *inputs]] if inputs and not (takes_text and expected) else []
        for args in variants:
            values = parse(function, args, f"thunder {name}")
            assert _parsed(values, option.name) is expected, args
            assert values.get("inputs", []) == inputs, args
    lines = help_text(function, f"thunder {name}", every=True)
    assert re.search(rf"^  --{option.name}\b", lines, re.MULTILINE)
    assert (f"/ --no_{option.name}" in lines) is (option.default is not False)
    assert "true|false" not in lines


def test_a_boolean_that_takes_a_value_still_takes_it(tmp_path: Path) -> None:
    words = tmp_path / "words.txt"
    words.write_text("사건\n", encoding="utf-8")
    values = parse(deid_command, ["--legal_text", "[가상자산법]", "--genre_words", str(words), "--protected_words",
                                  "in.txt", "--no_keep_regions"], "thunder deid")  # fmt: skip
    policy = values["policy"]
    assert policy.legal_text == ["가상자산법"] and policy.genre_words == str(words)
    assert policy.protected_words is True
    assert values["inputs"] == ["in.txt"] and policy.keep_regions is False
    values = parse(deid_command, ["--no_legal_text", "--legal_text=false", "--genre_words", "false"], "thunder deid")
    assert values["policy"].legal_text is False and values["policy"].genre_words is False


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


@pytest.mark.parametrize("name", sorted(commands()))
def test_short_helps_are_whole_phrases(name: str) -> None:
    """The description is the docstring's whole first paragraph; an option's short text never stops inside brackets
    (``{raw tag: label}``), after ``e.g.`` or at its first word."""
    function = commands()[name]
    description = " ".join(help_text(function, f"thunder {name}").split("\n\n")[1].split())
    assert description == plain((inspect.getdoc(function) or "").split("\n\n")[0])
    for option in options(function):
        phrase = first_phrase(option.doc)
        assert all(phrase.count(a) == phrase.count(b) for a, b in ("()", "[]", "{}")), (option.name, phrase)
        assert not phrase.endswith(("e.g", "i.e")), (option.name, phrase)
        assert len(phrase.split()) > 1 or len(option.doc.split()) <= 3 or option.doc.startswith("..."), option.name


def test_first_phrase() -> None:
    assert first_phrase("extra {raw tag: label} files, e.g. the corpus's aliases. More.") == (
        "extra {raw tag: label} files, e.g. the corpus's aliases")
    assert first_phrase("output directory (one file a document); or stdout") == "output directory"
    assert first_phrase("a list [a, b; c]: more") == "a list [a, b; c]"


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
