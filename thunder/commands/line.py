"""Command lines of the ``thunder`` subcommands: a function's signature is its command line.

A parameter named ``inputs`` is positional (``thunder deid --model M a.txt b/``); a parameter typed with a dataclass
(an option group shared by several commands: ``PipelineOptions``, ``PublicationPolicy``, ``TriageRule``) gives its
fields as top-level options; all others are options. Every boolean option is a switch: ``--in_place`` alone is true,
``--no_keep_regions`` (or ``--no-keep-regions``) false, ``--overwrite true|false`` is accepted too; a boolean that
also takes a value (``legal_text: bool | list[str]``) is a switch as well, and still takes its value
(``--legal_text '[가상자산법]'``, ``--genre_words words.txt``: one that takes a text reads the next word that is no
option as its value); ``--vocab-size`` is read as ``--vocab_size`` (the spelling ``--help`` prints).

``--help`` prints the common options of a command, grouped (what it reads and writes, then each option group); a
group's ``ADVANCED`` fields, and every field of a group whose ``GROUP`` title starts with ``advanced``, are named on one
line and described by ``--help-all``.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import shutil
import sys
import textwrap
import types
import typing
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

from jsonargparse import ArgumentError, ArgumentParser

from thunder.runs.names import escaped

_ROLE = re.compile(r":(?:mod|data|func|class|meth|attr):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")
_TRUE_FALSE = {"true", "false", "yes", "no", "1", "0"}
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e)$")


@dataclasses.dataclass(frozen=True)
class Option:
    """One option of a command line as help shows it."""

    name: str
    hint: Any
    default: Any
    doc: str
    group: str
    advanced: bool


def plain(text: str) -> str:
    """Docstring text as a person reads it: Sphinx roles and double backquotes dropped, whitespace folded."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1] if m.group(0).count("~") else m.group(1), text)
    return " ".join(_LITERAL.sub(r"\1", text).split())


def _docs(owner: Any) -> tuple[str, dict[str, str]]:
    """The description (the whole first paragraph) and the per-parameter texts of a function's or a dataclass's
    Google-style docstring."""
    from docstring_parser import parse

    text = inspect.getdoc(owner) or ""
    doc = parse(text)
    return plain(text.split("\n\n")[0]), {p.arg_name: plain(p.description or "") for p in doc.params}


def first_phrase(text: str) -> str:
    """What a short help shows of an option's text: up to its first sentence's end or parenthesis outside any
    brackets (the colon of ``{raw tag: label}`` and the dots of ``e.g.`` end nothing)."""
    depth = 0
    for position, char in enumerate(text):
        if char in "([{":
            if char == "(" and depth == 0 and text[position - 1 : position].isspace():
                return text[: position - 1]
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif (depth == 0 and char in ".;:" and text[position + 1 : position + 2].isspace()
              and not _ABBREVIATION.search(text, 0, position)):  # fmt: skip
            return text[:position]
    return text


def options(function: Callable) -> list[Option]:
    """Every option of ``function``'s command line, in help order."""
    hints = typing.get_type_hints(function)
    hints.pop("return", None)
    _, docs = _docs(function)
    found = []
    for name, parameter in inspect.signature(function).parameters.items():
        hint = hints[name]
        if dataclasses.is_dataclass(hint):
            _, field_docs = _docs(hint)
            title, advanced = getattr(hint, "GROUP", name), set(getattr(hint, "ADVANCED", ()))
            group_hints = typing.get_type_hints(hint)
            for field in dataclasses.fields(hint):
                default = field.default if field.default is not dataclasses.MISSING else field.default_factory()
                found.append(Option(field.name, group_hints[field.name], default, field_docs.get(field.name, ""),
                                    title, field.name in advanced or title.startswith("advanced")))  # fmt: skip
        else:
            found.append(Option(name, hint, parameter.default, docs.get(name, ""), "", False))
    return found


def _is_switch(hint: Any) -> bool:
    """Whether an option is a switch: a boolean, alone or with other kinds of value (``bool | list[str]``)."""
    return bool in _kinds(hint)


def _is_value(hint: Any, following: str | None) -> bool:
    """Whether the word after switch ``hint`` is its value: true/false, or (where the switch takes one) a list
    (``[...]``) or a text; anything else (another option, an input) leaves the switch alone, true."""
    if following is None:
        return False
    kinds = _kinds(hint)
    return (following.lower() in _TRUE_FALSE or (list in kinds and following.startswith("["))
            or (str in kinds and not following.startswith("-")))  # fmt: skip


def _normalise(args: list[str], switches: dict[str, Any]) -> list[str]:
    """``--vocab-size`` read as ``--vocab_size``; a switch (``switches``: name -> annotation) alone is true,
    ``--no_<switch>`` false."""
    result: list[str] = []
    for position, arg in enumerate(args):
        if not arg.startswith("--") or arg == "--":
            result.append(arg)
            continue
        name, equals, value = arg[2:].partition("=")
        name = name.replace("-", "_")
        if name not in switches and name.startswith("no_") and name[3:] in switches and not equals:
            result += [f"--{name[3:]}", "false"]
            continue
        result.append(f"--{name}{equals}{value}")
        following = args[position + 1] if position + 1 < len(args) else None
        if not equals and name in switches and not _is_value(switches[name], following):
            result.append("true")
    return result


def parse(function: Callable, args: list[str], prog: str) -> dict[str, Any]:
    """The keyword arguments ``args`` give ``function`` (its dataclass groups built); a bad option is
    ``SystemExit`` with one line ``prog: error: ...``."""
    parser = ArgumentParser(prog=prog, exit_on_error=False, add_help=False)
    signature = inspect.signature(function).parameters
    positional = {"inputs"} & set(signature)
    if positional:
        parser.add_argument("inputs", nargs="*", default=[])
    hints = typing.get_type_hints(function)
    hints.pop("return", None)
    groups = {name: hint for name, hint in hints.items() if dataclasses.is_dataclass(hint)}
    parser.add_function_arguments(function, as_positional=False, skip=positional | set(groups))
    for group in groups.values():
        parser.add_class_arguments(group, nested_key=None)
    every = options(function)
    args = _normalise(args, {option.name: option.hint for option in every if _is_switch(option.hint)})
    try:
        values = parser.parse_args(args).as_dict()
    except ArgumentError as error:
        raise SystemExit(f"{prog}: error: {_option_error(error, args, {o.name: o.hint for o in every})}") from None
    for name, group in groups.items():
        try:
            values[name] = group(**{f.name: values.pop(f.name) for f in dataclasses.fields(group) if f.name in values})
        except ValueError as error:  # a group's own checks (a policy value out of range, ...)
            raise SystemExit(f"{prog}: error: {error}") from None
    return values


def run(function: Callable, args: list[str], prog: str) -> None:
    """Parse ``args`` and call ``function``; ``--help`` / ``--help-all`` print its help instead; bad input (a
    missing file, a value out of range) ends with one line naming it, not a traceback, and a warning is one line
    too (control characters escaped in both)."""
    if "-h" in args or "--help" in args or "--help-all" in args:
        print(help_text(function, prog, every="--help-all" in args))
        return
    values = parse(function, args, prog)
    try:
        with warnings.catch_warnings():  # restores the hook after the command
            warnings.showwarning = partial(_warning_line, prog)
            function(**values)
    except (OSError, ValueError, LookupError) as error:
        raise SystemExit(f"{prog}: error: {escaped(str(error))}") from None


def _warning_line(prog: str, message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:  # fmt: skip
    """A warning as one line of the command's own (``thunder deid: warning: ...``), not Python's with its source."""
    print(f"{prog}: warning: {escaped(str(message))}", file=sys.stderr if file is None else file, flush=True)


# ----------------------------------------------------------------------------------------------- help


def _kind(hint: Any) -> str:
    """How an option's value is written, for ``--help``."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        kinds = [_kind(arg) for arg in typing.get_args(hint) if arg is not type(None)]
        return "|".join(dict.fromkeys(kinds))
    if typing.get_origin(hint) is typing.Literal:
        return "{" + ",".join(map(str, typing.get_args(hint))) + "}"
    origin = typing.get_origin(hint) or hint
    return {int: "N", float: "X", str: "TEXT", bool: "true|false", list: "[...]", tuple: "[...]",
            dict: "{...}"}.get(origin, "VALUE")  # fmt: skip


def _default(option: Option) -> str:
    if option.default in (None, inspect.Parameter.empty, [], (), {}) or _is_switch(option.hint):
        return ""
    value = list(option.default) if isinstance(option.default, tuple) else option.default
    return f" (default {value})"


def _entry(option: Option, width: int, every: bool) -> list[str]:
    if option.name == "inputs":
        head = "  inputs ..."
    elif _is_switch(option.hint):
        values = "|".join(_kind(kind) for kind in typing.get_args(option.hint) if kind not in (bool, type(None)))
        head = f"  --{option.name}" + (f" [{values}]" if values else "")
        head += f" / --no_{option.name}" if option.default is not False else ""
    else:
        head = f"  --{option.name} {_kind(option.hint)}"
    text = option.doc if every else first_phrase(option.doc).rstrip(".;:")
    text = (text or option.name.replace("_", " ")) + _default(option)
    indent = 30
    if len(head) >= indent - 1:
        return [head, *textwrap.wrap(text, width, initial_indent=" " * indent, subsequent_indent=" " * indent)]
    return textwrap.wrap(head.ljust(indent) + text, width, subsequent_indent=" " * indent)


def help_text(function: Callable, prog: str, every: bool = False) -> str:
    """The help of ``function``'s command line: its common options grouped, or (``every``) all of them."""
    width = min(120, max(80, shutil.get_terminal_size((100, 24)).columns))
    description, _ = _docs(function)
    found = options(function)
    takes_inputs = "inputs" in inspect.signature(function).parameters
    usage = f"usage: {prog} [options]{' [inputs ...]' if takes_inputs else ''}"
    lines = [usage, "", *textwrap.wrap(description, width), ""]
    hidden: list[str] = []
    for group in dict.fromkeys(option.group for option in found):
        members = [o for o in found if o.group == group and (every or not o.advanced)]
        hidden += [f"--{o.name}" for o in found if o.group == group and o.advanced and not every]
        if not members:
            continue
        lines.append(f"{group}:" if group else "options:")
        for option in members:
            lines += _entry(option, width, every)
        lines.append("")
    if hidden:
        lines += textwrap.wrap("more: " + " ".join(hidden), width, subsequent_indent="      ")
        lines.append(f"  (described by {prog} --help-all)")
    return "\n".join(lines).rstrip()


# ----------------------------------------------------------------------------------------------- errors


def _given(args: list[str], name: str) -> str | None:
    """The value given on the command line for ``--name`` (the last one), if any."""
    value = None
    for position, arg in enumerate(args):
        if arg == f"--{name}" and position + 1 < len(args):
            value = args[position + 1]
        elif arg.startswith(f"--{name}="):
            value = arg.partition("=")[2]
    return value


def _kinds(hint: object) -> set[object]:
    """The plain types an annotation allows (``dict[str, str] | None`` -> ``{dict, NoneType}``)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return set().union(*map(_kinds, typing.get_args(hint)))
    return {typing.get_origin(hint) or hint}


def _choices(hint: object) -> list[object]:
    """The values a ``Literal`` annotation allows (``Literal["a", "b"] | None`` -> ``["a", "b"]``)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return [choice for arg in typing.get_args(hint) for choice in _choices(arg)]
    return list(typing.get_args(hint)) if typing.get_origin(hint) is typing.Literal else []


def _option_error(error: Exception, args: list[str], hints: dict[str, object]) -> str:
    """One line for an option the parser refused: ``--operators: invalid JSON (...)``, ``--threshold: not a number
    ('nan')``, ``--runtime must be one of ...``; other errors with their lines joined."""
    import json

    found = re.match(r'Parser key "([^"]+)"', str(error))
    name = found.group(1) if found else None
    given = _given(args, name) if name else None
    if name and given is not None:
        if choices := _choices(hints.get(name)):
            return f"--{name} must be one of {', '.join(map(str, choices))}, got {given!r}"
        kinds = _kinds(hints.get(name))
        if kinds & {dict, list}:
            try:
                json.loads(given)
            except json.JSONDecodeError as decode:
                return f"--{name}: invalid JSON ({decode.msg} at column {decode.colno}): {given!r}"
            expected = " or ".join(sorted(k.__name__ for k in kinds & {dict, list}))
            return f"--{name}: expected a JSON {expected.replace('dict', 'object')}, got {given!r}"
        if kinds & {float, int}:
            return f"--{name}: not a number: {given!r}"
    text = "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
    text = re.sub(r"unrecognized arguments: ", "unknown option or argument: ", text)
    required = re.search(r"the following arguments are required: (.+)$", text)
    if required:  # options as typed: --key_file, not key_file
        names = [f"--{name.strip()}" for name in required.group(1).split(",")]
        return f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} required"
    return text
