"""``thunder export``: a Thunder checkpoint as a Hugging Face model directory."""

from __future__ import annotations

from thunder.checkpoint import export_checkpoint


def export_command(checkpoint: str, out: str, tokenizer: str | None = None) -> None:
    """Convert a Thunder checkpoint to a Hugging Face model directory (model, tokenizer, thunder.json).

    Args:
        checkpoint: a ``.ckpt`` file or a sharded checkpoint directory written by TokenClassifier or MaskedLM.
        out: new output directory; load it with ``AutoModelForTokenClassification.from_pretrained(out)``
            or ``thunder deid --model out``.
        tokenizer: tokenizer directory to use instead of the one stored in the checkpoint.
    """
    path = export_checkpoint(checkpoint, out, tokenizer)
    print(f"exported {checkpoint} to {path}")
