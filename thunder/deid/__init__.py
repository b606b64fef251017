"""De-identification: text -> model spans ∪ recognizer spans -> policy -> entities -> operator -> particles.

``pipeline`` (:class:`Deidentifier`, :class:`PipelineOptions`), ``protection`` (the text no model span replaces),
``operators``, ``recognizers/`` (one per file), ``triage`` (where a reviewer looks), ``mapping`` (sealed, reversible).
May import ``model`` (never its LightningModules), ``synthesis``, ``documents``, ``identifiers``, ``language``.
"""

from thunder.deid.pipeline import Deidentifier, DeidResult, DetectedSpan, PipelineOptions

__all__ = ["DeidResult", "Deidentifier", "DetectedSpan", "PipelineOptions"]
