"""The model: the decision rule (``decoding``), runtimes and the forward step (``inference``), the one model loader
(``loader``, with ``release`` adapting the published SNU models) and the export writer (``export``), backbone presets
(``backbones``), token metrics, FLOPs, progress lines, and the LightningModules (``modules``).

May import ``taxonomy``, ``language`` and ``identifiers``; never ``data`` (a data module is handed its tokenizer).
"""

from thunder.model.modules import MaskedLM, TokenClassifier
from thunder.model.progress import TokenThroughputMonitor

__all__ = ["MaskedLM", "TokenClassifier", "TokenThroughputMonitor"]
