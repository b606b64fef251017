"""The model: the decision rule (``decoding``), runtimes and the forward step (``inference``), the one model loader
(``loader``, with ``release`` adapting the published SNU models) and the export writer (``export``), backbone presets
and pretrained backbones (``backbones``), token metrics, FLOPs, progress lines, and the LightningModules (``modules``).

May import ``taxonomy``, ``language`` and ``identifiers``; never ``data`` (a data module is handed its tokenizer).
The LightningModules and the throughput monitor are imported when first named (``thunder.model.TokenClassifier``), so
the inference modules load without Lightning.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["MaskedLM", "TokenClassifier", "TokenThroughputMonitor"]

_HOMES = {"MaskedLM": "thunder.model.modules", "TokenClassifier": "thunder.model.modules",
          "TokenThroughputMonitor": "thunder.model.progress"}  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
