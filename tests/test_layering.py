"""docs/architecture.md is true: every package and top-level module is listed there in import order, every module of a
package that lists its modules is on its line in import order, and nothing imports what is listed after it (so no
library module imports a command, and data flows one way)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "thunder"
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
ENTRY = re.compile(r"^(\w+)(\.py|/)[ \t]+(.*)$", re.MULTILINE)
MODULE_LIST = re.compile(r"^[\w/]+(?: · [\w/]+)*$")


def listed() -> dict[str, list[str]]:
    """Units (``taxonomy``, ``deid``, ...) in the order of the first code block of docs/architecture.md, each with the
    modules its line lists in order (``recognizers/`` a sub-package; ``[]``: the line lists none); folders that are
    not Python packages (``resources/``) are data, not units."""
    block = ARCHITECTURE.read_text(encoding="utf-8").split("```")[1]
    units: dict[str, list[str]] = {}
    for name, kind, rest in ENTRY.findall(block):
        if kind == ".py" or (PACKAGE / name / "__init__.py").exists():
            rest = rest.strip()
            units[name] = [m.rstrip("/") for m in rest.split(" · ")] if MODULE_LIST.match(rest) else []
    return units


def unit_of(path: Path) -> str:
    """The top-level unit a file belongs to: its module name, or the package it is in."""
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def member_of(path: Path) -> str | None:
    """The module (or sub-package) of its package that a file is, ``None`` for a package's ``__init__``."""
    parts = path.relative_to(PACKAGE).parts
    if len(parts) < 2 or parts[1] == "__init__.py":
        return None
    return Path(parts[1]).stem


def imported(path: Path) -> set[tuple[str, str | None]]:
    """The thunder ``(unit, member)`` pairs a file imports anywhere (top level or inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] != "thunder" or len(parts) < 2:
                continue
            if (PACKAGE / parts[1]).with_suffix(".py").exists():
                found.add((parts[1], None))
            elif (PACKAGE / parts[1]).is_dir():
                member = parts[2] if len(parts) > 2 and (PACKAGE / parts[1] / parts[2]).with_suffix(".py").exists() else None
                member = parts[2] if len(parts) > 2 and (PACKAGE / parts[1] / parts[2]).is_dir() else member
                found.add((parts[1], member))
    return found


def source_files() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if p.name not in ("__init__.py", "__main__.py") or p.parent != PACKAGE]


def test_every_unit_and_module_is_listed_in_the_architecture() -> None:
    units = listed()
    found = {unit_of(p) for p in source_files()}
    assert found - set(units) == set(), "packages or modules missing from docs/architecture.md"
    assert set(units) - found == set(), "docs/architecture.md lists packages or modules that do not exist"
    for unit, members in units.items():
        if members:
            present = {member_of(p) for p in (PACKAGE / unit).rglob("*.py")} - {None}
            assert present == set(members), f"{unit}/: the modules on its line differ from those in the folder"


def test_nothing_imports_what_is_listed_after_it() -> None:
    units = listed()
    order = {name: index for index, name in enumerate(units)}
    wrong = []
    for path in source_files():
        unit, member = unit_of(path), member_of(path)
        members = {name: index for index, name in enumerate(units[unit])}
        for other, other_member in imported(path):
            if other != unit and order[other] > order[unit]:
                wrong.append(f"{path.relative_to(PACKAGE)} imports {other}")
            elif other == unit and member in members and other_member in members:
                if members[other_member] > members[member]:
                    wrong.append(f"{path.relative_to(PACKAGE)} imports {unit}.{other_member}, listed after it")
    assert wrong == []


def test_no_library_module_imports_a_command() -> None:
    offenders = [str(p.relative_to(PACKAGE)) for p in source_files()
                 if unit_of(p) not in ("commands", "cli") and ("commands", None) in {(u, None) for u, _ in imported(p)}]  # fmt: skip
    assert offenders == []


def test_deid_runs_without_the_training_side() -> None:
    """De-identification depends on the model's loader, runtimes and decoding, never on the LightningModules or
    the data modules (issue 29)."""
    offenders = [
        f"{p.relative_to(PACKAGE)}: {unit}.{member}"
        for p in (PACKAGE / "deid").rglob("*.py")
        for unit, member in imported(p)
        if unit == "data" or (unit, member) in {("model", "modules"), ("model", None)}
    ]
    assert offenders == []


def test_the_data_modules_load_no_model() -> None:
    """A data module is handed its tokenizer and label set (``connect``); it never reads a model artefact."""
    offenders = [str(p.relative_to(PACKAGE)) for p in (PACKAGE / "data").rglob("*.py")
                 if any(unit == "model" for unit, _ in imported(p))]  # fmt: skip
    assert offenders == []
