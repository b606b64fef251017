"""The model's token outputs for a set of documents, kept in a JSON file so that a tool's later runs on the same
model and documents skip the model (``tools/triage_sweep.py --cache``, ``tools/pipeline_variants.py --cache``).

The file records what the outputs depend on (the model's path and decision threshold, given as ``key``, and the
SHA-256 of the model's files, so that another model written to the same path never reads them) and a SHA-256 of each
document's text; a file written for another key or other documents is refused with one line.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from thunder.model.decoding import TokenPredictions
from thunder.model.packages import resolve as resolve_model
from thunder.runs.settings import files_sha256

_PAIRS = ("offsets", "morphemes")  # fields of (start, end) pairs, which JSON stores as lists


def cached_predictions(
    deidentifier, texts: Sequence[str], key: dict, cache: Path | None, batch_size: int = 8
) -> list[TokenPredictions]:
    """``deidentifier.predict_tokens`` of ``texts``, read from ``cache`` when it holds them (else written there)."""
    model = resolve_model(key["model"]) if key.get("model") else None
    if model is not None and Path(model).exists():  # the files, not only the path or package name
        key = {**key, "files": files_sha256(model)}
    hashes = [hashlib.sha256(text.encode()).hexdigest() for text in texts]
    if cache is not None and cache.exists():
        stored = json.loads(cache.read_text(encoding="utf-8"))
        if stored.get("key") != key or stored.get("documents") != hashes:
            sys.exit(f"{cache}: the outputs of another model or other documents; give another --cache")
        return [
            TokenPredictions(**{k: [tuple(x) for x in v] if k in _PAIRS and v else v for k, v in p.items()})
            for p in stored["predictions"]
        ]
    started, predictions = time.perf_counter(), []
    for first in range(0, len(texts), batch_size):
        predictions += deidentifier.predict_tokens(list(texts[first : first + batch_size]))
        print(f"model: {len(predictions)}/{len(texts)} documents, {time.perf_counter() - started:.0f} s",
              file=sys.stderr, flush=True)  # fmt: skip
    if cache is not None:
        record = {"key": key, "documents": hashes, "predictions": [dataclasses.asdict(p) for p in predictions]}
        cache.write_text(json.dumps(record), encoding="utf-8")
    return predictions
