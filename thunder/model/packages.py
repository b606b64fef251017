"""Installed model packages: trained models shipped as Python distributions, found by name, one of them the default.

A model package (``models/small`` in Thunder's repository: the distribution ``thunder-model-small``) holds a
Thunder export directory as package data and names it under the ``thunder.models`` entry-point group::

    [project.entry-points."thunder.models"]
    small = "thunder_model_small:path"      # a callable returning the export directory

:func:`resolve` turns what a user typed for ``--model`` into a path: a path that exists is itself; a name that no
path has is the installed package of that name; nothing is the default package (:data:`DEFAULT_MODEL`). Nothing here
loads a model: :meth:`thunder.model.loader.Artefact.open` reads what the path holds, with every check.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

GROUP = "thunder.models"
DEFAULT_MODEL = "small"  # the model Thunder ships (models/small): every command's model without --model
INSTALL_HINT = "pip install ./models/small from Thunder's repository"


class ModelNotInstalled(LookupError):
    """A model named by a package name that no installed package provides."""


def installed() -> dict[str, EntryPoint]:
    """The installed model packages by name."""
    return {point.name: point for point in entry_points(group=GROUP)}


def package_path(name: str) -> Path:
    """The export directory of the installed model package ``name`` (:class:`ModelNotInstalled` when none is)."""
    points = installed()
    if name not in points:
        found = ", ".join(sorted(points)) or "none"
        hint = f"; {INSTALL_HINT}" if name == DEFAULT_MODEL else ""
        raise ModelNotInstalled(f"no model package named {name!r} is installed (installed: {found}){hint}")
    target = points[name].load()
    path = Path(target() if callable(target) else target)
    if not path.is_dir():
        raise ModelNotInstalled(f"the model package {name!r} names {path}, which is no directory (a broken install?)")
    return path


def resolve(model: str | None) -> str:
    """The path of the model ``model`` names: itself when it exists, else the installed package of that name; the
    default package's for None."""
    if model is None:
        try:
            return str(package_path(DEFAULT_MODEL))
        except ModelNotInstalled as error:
            raise ModelNotInstalled(f"no --model given and {error}; or give --model DIR_OR_CKPT, or "
                                    "--recognizers_only for the pattern recognizers alone") from None  # fmt: skip
    if Path(model).exists() or model not in installed():
        return model  # a path (a missing one is named by the loader)
    return str(package_path(model))
