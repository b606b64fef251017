"""The model: DeBERTa-v3 backbones as LightningModules (``modules``), artefacts read and written (``checkpoint``,
``release`` for the published SNU models), runtimes (``inference``), the decision rule (``decoding``), token
metrics, FLOPs and progress lines.

May import ``taxonomy``, ``language`` and ``identifiers``; never ``data`` (a data module is handed its tokenizer).
"""

from thunder.model.modules import MaskedLM, TokenClassifier
from thunder.model.progress import TokenThroughputMonitor

__all__ = ["MaskedLM", "TokenClassifier", "TokenThroughputMonitor"]
