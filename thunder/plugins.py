"""User parts (recognizers, operators, generators) from a name, a ``module.Class`` path or ``{class_path, init_args}``.

:func:`load_part` is the one loader behind :func:`thunder.deid.recognizers.registry.load_recognizers`,
:func:`thunder.deid.operators.load_operator` and :func:`thunder.synthesis.mentions.load_generator`; every class is checked to be a
part of the right kind before it is built.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable, Mapping
from typing import Any

# Modules of parts that moved when ``thunder/`` became folders by concept: paths written before (a recipe stored in a
# checkpoint or an export, a config) still load.
MOVED_MODULES = {
    "thunder.names": "thunder.synthesis.names",
    "thunder.mentions": "thunder.synthesis.mentions",
    "thunder.fills": "thunder.synthesis.fills",
    "thunder.operators": "thunder.deid.operators",
    "thunder.recognizers": "thunder.deid.recognizers.registry",
    "thunder.masked_name": "thunder.deid.recognizers.masked_name",
    "thunder.named_in_role": "thunder.deid.recognizers.named_in_role",
    "thunder.named_in_table": "thunder.deid.recognizers.named_in_table",
}


def import_class(path: str, base: type, kind: str, known: Iterable[str]) -> type:
    """The class at ``module.Class`` (or ``module:Class``; a module of :data:`MOVED_MODULES` read where it is now),
    which must subclass ``base``; ``ValueError`` otherwise."""
    module_name, _, attr = path.replace(":", ".").rpartition(".")
    module_name = MOVED_MODULES.get(module_name, module_name)
    unknown = f"unknown {kind} {path!r}: not one of {sorted(known)}"
    if not module_name:
        raise ValueError(f"{unknown} and not a module.Class path")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"{unknown}, and {path!r} cannot be imported ({error})") from None
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise ValueError(f"{path!r} is not a {base.__module__}.{base.__name__} {_relation(base)}")
    return cls


def _relation(base: type) -> str:
    return "implementation" if getattr(base, "_is_protocol", False) else "subclass"


def load_part(
    spec: Any,
    kind: str,
    base: type,
    known: Mapping[str, Any],
    init_args: Mapping[str, Any] | None = None,
    context: Mapping[str, Any] | None = None,
    error: type[Exception] = ValueError,
) -> Any:
    """A part of ``kind`` built from ``spec``.

    ``spec`` is an instance of ``base`` (returned as it is), a name in ``known`` (a class, or a ready instance when no
    ``init_args`` are given), a ``module.Class`` path, or ``{"class_path", "init_args"}``; ``init_args`` add to the
    spec's. Each ``context`` value that is not None (e.g. the ``taxonomy``) goes to a class whose ``__init__`` takes it
    unless the init args set it. Anything that does not load is ``error`` with one line naming the spec.
    """
    if isinstance(spec, base) and not isinstance(spec, type):
        return spec
    if isinstance(spec, Mapping):
        if "class_path" not in spec:
            raise error(f"{kind} {dict(spec)!r}: a dict needs 'class_path' (and optionally 'init_args')")
        path, args = str(spec["class_path"]), {**(spec.get("init_args") or {}), **(init_args or {})}
    else:
        path, args = str(spec), dict(init_args or {})
    found = known.get(path)
    if found is not None and not isinstance(found, type) and not args:
        return found
    try:
        cls = found if isinstance(found, type) else import_class(path, base, kind, known)
    except ValueError as failure:
        raise error(str(failure)) from None
    given = {name: value for name, value in (context or {}).items() if value is not None}
    if given:
        parameters = inspect.signature(cls).parameters
        args.update({name: value for name, value in given.items() if name in parameters and name not in args})
    try:
        return cls(**args)
    except TypeError as failure:
        raise error(f"{kind} {path!r}: {failure}") from None
