"""User parts by ``module.Class`` path (recognizers, operators, generators), checked before use."""

from __future__ import annotations

import importlib
from typing import Iterable


def import_class(path: str, base: type, kind: str, known: Iterable[str]) -> type:
    """The class at ``module.Class`` (or ``module:Class``), which must subclass ``base``; ``ValueError`` otherwise."""
    module_name, _, attr = path.replace(":", ".").rpartition(".")
    unknown = f"unknown {kind} {path!r}: not one of {sorted(known)}"
    if not module_name:
        raise ValueError(f"{unknown} and not a module.Class path")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"{unknown}, and {path!r} cannot be imported ({error})") from None
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise ValueError(f"{path!r} is not a {base.__module__}.{base.__name__} subclass")
    return cls
