"""What decides a run's outputs: the settings an output directory's run record keys each output by.

:func:`run_settings` gathers them (the model's files by SHA-256, the pipeline and policy options that change outputs,
the contents of every file option, the output options); :func:`settings_key` is their SHA-256 as canonical JSON. A
re-run skips an output only when its record names the same key (:class:`thunder.runs.plan.OutputPlan`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping

from thunder.deid.pipeline import Deidentifier, PipelineOptions


def settings_key(settings: Mapping[str, Any]) -> str:
    """The SHA-256 of a run's settings as canonical JSON: the key an output's record names."""
    canonical = json.dumps(settings, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def files_sha256(path: str | Path) -> str:
    """SHA-256 over a file, or over a directory's files (their relative names and contents, in name order)."""
    path = Path(path)
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.relative_to(path).as_posix().encode("utf-8") + b"\0" if path.is_dir() else b"")
        with file.open("rb") as stream:
            while chunk := stream.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


def run_settings(pipeline: PipelineOptions, deidentifier: Deidentifier, unverified: bool = False,
                 **outputs: Any) -> dict[str, Any]:  # fmt: skip
    """What decides a run's outputs: the layout and output options (``outputs``), the model's files (SHA-256) and
    whether it may run unverified (``--allow_unverified``), the taxonomy and the pipeline options that change outputs
    (batch size and device do not; the publication policy does: legal text, kept officials and regions, propagation)."""
    model, policy = deidentifier.model is not None, deidentifier.policy
    return {
        "model": files_sha256(pipeline.model) if pipeline.model else None,
        "unverified": unverified and model,
        "taxonomy": deidentifier.taxonomy.fingerprint(),
        "recognizers": pipeline.recognizers,
        "operator": pipeline.operator,
        "operators": pipeline.operators,
        "max_length": deidentifier.windowing.max_length if model else None,
        "stride": deidentifier.windowing.stride if model else None,
        "threshold": deidentifier.operating_point.threshold if model else None,
        "grow_threshold": deidentifier.operating_point.grow_threshold if model else None,
        "runtime": type(deidentifier.runtime).__name__ if model else None,  # what ran, "auto" resolved
        "protected_words": policy.protected_words,
        "legal_text": policy.legal_text if model else None,
        "keep_officials": list(policy.keep_officials),
        "keep_regions": policy.keep_regions if model else None,
        "propagate_threshold": policy.propagate_threshold if model else None,
        "propagate_share": policy.propagate_share if model else None,
        "genre_words": _file_option(policy.genre_words) if model else None,
        "propagate_evidence": policy.propagate_evidence if model else None,
        "spread_names": policy.spread_names,
        **outputs,
    }


def _file_option(value: Any) -> Any:
    """An option's value as the settings key holds it: a file's name with its contents' SHA-256 (an edited word list
    changes the outputs), anything else as it is."""
    if isinstance(value, str) and Path(value).is_file():
        return {"file": value, "sha256": files_sha256(value)}
    return value
