"""Checkpoint -> Hugging Face model directory, and loading a trained model for de-identification.

An export directory holds ``config.json`` (with ``id2label`` / ``label2id``) and the weights (``save_pretrained``),
the tokenizer files (``ThunderTokenizer.save_pretrained``) and ``thunder.json``::

    {"format": "thunder-export/1", "task": "token-classification",
     "label_set": LabelSet.to_dict(), "taxonomy_fingerprint": "..."}

so ``AutoModelForTokenClassification.from_pretrained(DIR)`` works without Thunder, and :func:`load_exported` gives
Thunder the label set back. MaskedLM checkpoints export the same way (``AutoModelForMaskedLM``, no label set), e.g.
to start a TokenClassifier from them with ``init_from: DIR``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from transformers import PreTrainedModel

from thunder.models import (
    AUTO_CLASSES,
    checkpoint_thunder,
    config_from_dict,
    is_sharded_checkpoint,
    label_set_from_dict,
    load_tokenizer,
    load_weights,
    read_checkpoint,
    tokenizer_from_files,
    write_files,
)

EXPORT_FILE = "thunder.json"
EXPORT_FORMAT = "thunder-export/1"


def _model_from_checkpoint(checkpoint: dict[str, Any], thunder: dict[str, Any], source: str | Path) -> PreTrainedModel:
    model = AUTO_CLASSES[thunder["task"]].from_config(config_from_dict(thunder["hf_config"]))
    state = {k.removeprefix("model."): v for k, v in checkpoint["state_dict"].items() if k.startswith("model.")}
    load_weights(model, state, encoder_only=False, source=source)
    return model.eval()


def export_checkpoint(checkpoint: str | Path, out: str | Path, tokenizer: str | Path | None = None) -> Path:
    """Write the Hugging Face directory of a MaskedLM / TokenClassifier checkpoint (file or sharded directory).

    ``tokenizer`` replaces the tokenizer stored in the checkpoint (needed only when none is stored).
    """
    data = read_checkpoint(checkpoint)
    thunder = checkpoint_thunder(data, checkpoint)
    model = _model_from_checkpoint(data, thunder, checkpoint)
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} exists and is not empty; choose a new directory")
    if tokenizer is not None:
        tokenizer_source = load_tokenizer(tokenizer)
    elif "tokenizer_files" not in thunder:
        raise ValueError(f"{checkpoint} stores no tokenizer (trained without one?): pass --tokenizer DIR")
    else:
        tokenizer_source = None
    model.save_pretrained(out)
    if tokenizer_source is not None:
        tokenizer_source.save_pretrained(out)
    else:
        write_files(thunder["tokenizer_files"], out)
    info: dict[str, Any] = {"format": EXPORT_FORMAT, "task": thunder["task"]}
    if "label_set" in thunder:
        info["label_set"] = thunder["label_set"]
        info["taxonomy_fingerprint"] = thunder["label_set"].get("fingerprint")
    (out / EXPORT_FILE).write_text(json.dumps(info, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return out
def load_exported(path: str | Path, taxonomy: str | None = None) -> tuple[PreTrainedModel, Any, Any]:
    """``(model, tokenizer, label_set)`` of a TokenClassifier export directory, ``.ckpt`` or sharded checkpoint.

    The model is a transformers ``...ForTokenClassification`` in eval mode on the CPU, the tokenizer a
    :class:`thunder.tokenizer.ThunderTokenizer`, the label set a :class:`thunder.taxonomy.LabelSet` rebuilt on
    ``taxonomy`` (default: the packaged taxonomy; raises ``LabelSetMismatch`` if it is not the one trained with).
    """
    path = Path(path)
    if path.is_dir() and not is_sharded_checkpoint(path):
        info_path = path / EXPORT_FILE
        if not info_path.is_file():
            raise FileNotFoundError(f"{info_path} not found: {path} is not a Thunder export (thunder export ...)")
        info = json.loads(info_path.read_text(encoding="utf-8"))
        if info.get("task") != "token-classification":
            raise ValueError(f"{path} holds a {info.get('task')!r} model, not a token classifier")
        model = AUTO_CLASSES["token-classification"].from_pretrained(path).eval()
        return model, load_tokenizer(path), label_set_from_dict(info["label_set"], taxonomy)
    data = read_checkpoint(path)
    thunder = checkpoint_thunder(data, path)
    if thunder["task"] != "token-classification":
        raise ValueError(f"{path} holds a {thunder['task']!r} model, not a token classifier")
    if "tokenizer_files" not in thunder:
        raise ValueError(f"{path} stores no tokenizer: export it with `thunder export --tokenizer DIR` first")
    tokenizer = tokenizer_from_files(thunder["tokenizer_files"])
    return _model_from_checkpoint(data, thunder, path), tokenizer, label_set_from_dict(thunder["label_set"], taxonomy)
