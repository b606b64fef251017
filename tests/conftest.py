"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_CORPUS = REPO_ROOT.parent / "shared" / "data" / "snu-thunder-deid"


@pytest.fixture(scope="session")
def shared_corpus() -> Path:
    """The SNU Thunder-DeID working copy beside the clone; skips the test where it is absent."""
    if not (SHARED_CORPUS / "annotated").is_dir():
        pytest.skip(f"shared corpus not found at {SHARED_CORPUS} (place the SNU Thunder-DeID release there)")
    return SHARED_CORPUS
