"""docs/architecture.md is true: every module is listed there, and a module only imports modules listed above it
(so no library module imports a command, and data flows one way)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "thunder"
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
ENTRY = re.compile(r"^(\w+)(\.py|/)\s", re.MULTILINE)


def listed_order() -> list[str]:
    """Module and package names in the order of the architecture diagram (the first code block); folders that are
    not Python packages (``resources/``) are data, not modules."""
    block = ARCHITECTURE.read_text(encoding="utf-8").split("```")[1]
    return [name for name, kind in ENTRY.findall(block) if kind == ".py" or (PACKAGE / name / "__init__.py").exists()]


def unit_of(path: Path) -> str:
    """The listed unit a file belongs to: its module name, or the top-level package it is in."""
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def imported_units(path: Path) -> set[str]:
    """The thunder units a file imports anywhere (top level or inside functions)."""
    units = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "thunder" and len(parts) > 1 and (PACKAGE / parts[1]).with_suffix(".py").exists():
                units.add(parts[1])
            elif parts[0] == "thunder" and len(parts) > 1 and (PACKAGE / parts[1]).is_dir():
                units.add(parts[1])
    return units


def source_files() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if p.name not in ("__init__.py", "__main__.py") or p.parent != PACKAGE]


def test_every_module_is_listed_in_the_architecture() -> None:
    listed = set(listed_order())
    units = {unit_of(p) for p in source_files()}
    assert units - listed == set(), "modules missing from docs/architecture.md"
    assert listed - units == set(), "docs/architecture.md lists modules that do not exist"


def test_modules_only_import_modules_listed_above_them() -> None:
    order = {name: index for index, name in enumerate(listed_order())}
    wrong = []
    for path in source_files():
        unit = unit_of(path)
        for imported in imported_units(path) - {unit}:
            if order[imported] > order[unit]:
                wrong.append(f"{path.relative_to(PACKAGE)} imports {imported}")
    assert wrong == []


def test_no_library_module_imports_a_command() -> None:
    offenders = [str(p.relative_to(PACKAGE)) for p in source_files()
                 if unit_of(p) not in ("commands", "cli") and "commands" in imported_units(p)]  # fmt: skip
    assert offenders == []


def test_deid_runs_without_the_training_side() -> None:
    """De-identification depends on decoding, never on the LightningModules or the data modules (issue 29)."""
    assert imported_units(PACKAGE / "deid.py") & {"models", "data"} == set()
