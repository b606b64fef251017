"""Thunder's shipped model (``thunder-model-small``): a Thunder export directory, found by Thunder under the
``thunder.models`` entry point ``small`` and used by every command without ``--model``; its card is README.md."""

from pathlib import Path

__version__ = "1.1.0"


def path() -> Path:
    """The export directory (``thunder deid --model`` reads it as any export)."""
    return Path(__file__).resolve().parent / "model"
