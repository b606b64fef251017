"""Checkpoints and weight files as stored: read as tensors and plain data only, named inside their directory.

- :func:`read_checkpoint`: a Lightning checkpoint with ``torch.load(weights_only=True)`` (nothing unpickled but
  tensors and plain data; a sharded one only to resume or export one's own run), its ``"thunder"`` entry
  (:func:`thunder_entry`) and the recipe its data module kept (:func:`checkpoint_recipe`);
- :func:`check_weight_files`: a Hugging Face directory's weight files, each a plain file name inside it and complete;
  :func:`read_hf_weights`, :func:`load_weights` and :func:`model_from_checkpoint` build models from them;
- :func:`read_export_info`: an export's ``thunder.json``.

:mod:`thunder.model.loader` opens artefacts of every format with these.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import torch
from safetensors import SafetensorError, safe_open
from torch import Tensor
from transformers import AutoConfig, AutoModelForMaskedLM, AutoModelForTokenClassification, PretrainedConfig, PreTrainedModel

Task = Literal["mlm", "token-classification"]
AUTO_CLASSES: dict[str, Any] = {"mlm": AutoModelForMaskedLM, "token-classification": AutoModelForTokenClassification}
EXPORT_FILE = "thunder.json"
_WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}")


class ArtefactError(ValueError):
    """A model artefact that cannot be used as it is: unsafe, incomplete, or parts that do not fit together."""


# ----------------------------------------------------------------------------------------------- checkpoints


def read_checkpoint(path: str | Path, allow_sharded: bool = False) -> dict[str, Any]:
    """A Lightning checkpoint as one dict on the CPU, tensors and plain data only (``weights_only=True``).

    A sharded directory is read only with ``allow_sharded`` (resuming or exporting one's own training run: PyTorch's
    distributed-checkpoint metadata is pickled); inference refuses it.
    """
    path = Path(path)
    if path.is_dir() and (path / "meta.pt").is_file():
        if not allow_sharded:
            raise ArtefactError(
                f"{path} is a sharded training checkpoint; export it first: thunder export --checkpoint {path} --out DIR"
            )
        from lightning.fabric.utilities.load import _load_distributed_checkpoint

        return _load_distributed_checkpoint(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    return read_plain(path)


def read_plain(path: Path, mmap: bool = False) -> Any:
    try:
        return torch.load(path, map_location="cpu", weights_only=True, mmap=mmap)
    except Exception as error:  # the safe unpickler refuses anything but tensors and plain data
        raise unloadable(path, error) from None


def unloadable(path: str | Path, error: BaseException) -> ArtefactError:
    """The one-line error for a checkpoint ``torch.load(weights_only=True)`` refused with ``error``."""
    lines = [line.strip() for line in re.sub(r"\x1b\[[0-9;]*m", "", str(error)).splitlines() if line.strip()]
    reason = next((line for line in lines if line.startswith("WeightsUnpickler error")), lines[0] if lines else "")
    reason = reason.split(". Please use")[0]  # not torch's advice to allow what was refused
    reason = reason or type(error).__name__
    return ArtefactError(f"{path}: not a loadable checkpoint of tensors and plain data ({reason})")


def thunder_entry(checkpoint: Mapping[str, Any], path: str | Path) -> dict[str, Any]:
    """The ``"thunder"`` entry of a checkpoint written by Thunder's MaskedLM or TokenClassifier."""
    entry = checkpoint.get("thunder") if isinstance(checkpoint, Mapping) else None
    if not isinstance(entry, dict) or "task" not in entry or "hf_config" not in entry:
        raise ArtefactError(f"{path} is not a Thunder checkpoint (no 'thunder' entry; written by another module?)")
    if entry["task"] not in AUTO_CLASSES:
        raise ArtefactError(f"{path}: unknown task {entry['task']!r}")
    return entry


def checkpoint_recipe(checkpoint: Mapping[str, Any]) -> dict[str, Any] | None:
    """The training recipe a data module (``thunder.data``) kept in its checkpoint state, if any."""
    for value in checkpoint.values():
        if isinstance(value, Mapping) and isinstance(value.get("recipe"), Mapping):
            return dict(value["recipe"])
    return None


def read_export_info(path: Path) -> dict[str, Any]:
    """The description (``thunder.json``) of an export directory."""
    info_path = path / EXPORT_FILE
    if not info_path.is_file():
        raise FileNotFoundError(f"{info_path} not found: {path} is not a Thunder export (thunder export ...)")
    try:
        info = json.loads(info_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ArtefactError(f"{info_path}: not valid JSON ({error})") from None
    if not isinstance(info, dict) or "task" not in info:
        raise ArtefactError(f"{info_path}: not a Thunder export description")
    return info


# ----------------------------------------------------------------------------------------------- weights


def check_weight_files(directory: str | Path) -> list[str]:
    """The weight files of a Hugging Face model directory that loading reads (``model.safetensors``,
    ``pytorch_model.bin`` and the shards their ``*.index.json`` weight maps name), each checked to be a plain file
    name of a file inside ``directory``, links resolved: a name like ``../outside.safetensors``, an absolute path
    or a link out of the directory is an :class:`ArtefactError`, and so is a safetensors file whose header does not
    cover it (cut off or damaged). In a snapshot of the Hugging Face cache (``.../snapshots/<commit>``) the files are
    links into the same repository's ``blobs`` folder, which counts as inside."""
    directory = Path(directory)
    roots = {directory.resolve()}
    if directory.parent.name == "snapshots":
        roots.add((directory.parent.parent / "blobs").resolve())
    named: dict[str, Path] = {}  # file name -> where it is named
    for name in (*_WEIGHT_FILES, "pytorch_model.bin.index.json"):
        if not (directory / name).exists() and not (directory / name).is_symlink():
            continue
        named[name] = directory
        if name.endswith(".index.json"):
            named |= {shard: directory / name for shard in sorted(set(_weight_map(directory / name).values()))}
    for name, source in named.items():
        path = directory / plain_file_name(name, source)
        if path.resolve().parent not in roots:
            raise ArtefactError(f"{path} leads out of the model directory (to {path.resolve()}); refusing to load it")
        if not path.is_file():
            raise ArtefactError(f"{path}: weight file missing")
        if name.endswith(".safetensors"):
            try:
                with safe_open(path, framework="pt"):
                    pass
            except (SafetensorError, OSError) as error:
                raise ArtefactError(f"{path}: not a complete safetensors file, cut off or damaged "
                                    f"({first_line(error)})") from None  # fmt: skip
    return list(named)


def _weight_map(index: Path) -> dict[str, Any]:
    """The ``weight_map`` of a sharded checkpoint's index (parameter name -> shard file name)."""
    try:
        weight_map = json.loads(index.read_text(encoding="utf-8")).get("weight_map")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError) as error:
        raise ArtefactError(f"{index}: not a weight index ({error})") from None
    if not isinstance(weight_map, dict):
        raise ArtefactError(f"{index}: no weight_map")
    return weight_map


def read_hf_weights(directory: Path) -> dict[str, Tensor]:
    """The weights of a Hugging Face model directory (safetensors, else ``pytorch_model.bin`` read safely), read
    only from files inside it (:func:`check_weight_files`)."""
    from safetensors.torch import load_file

    check_weight_files(directory)
    if (directory / "model.safetensors").is_file():
        return load_file(directory / "model.safetensors")
    index = directory / "model.safetensors.index.json"
    if index.is_file():
        state: dict[str, Tensor] = {}
        for shard in sorted(set(_weight_map(index).values())):
            state.update(load_file(directory / shard))
        return state
    if (directory / "pytorch_model.bin").is_file():
        return read_plain(directory / "pytorch_model.bin")
    raise FileNotFoundError(f"no model weights ({', '.join(_WEIGHT_FILES)}) in {directory}")


def has_weights(directory: str | Path) -> bool:
    """Whether a Hugging Face model directory holds weights (not just a config)."""
    return any((Path(directory) / name).is_file() for name in _WEIGHT_FILES)


def config_from_dict(d: Mapping[str, Any]) -> PretrainedConfig:
    """Inverse of ``PretrainedConfig.to_dict()``."""
    d = dict(d)
    return AutoConfig.for_model(d.pop("model_type"), **d)


def model_state(checkpoint: Mapping[str, Any]) -> dict[str, Tensor]:
    """The backbone weights of a Thunder checkpoint, with Hugging Face parameter names."""
    return {k.removeprefix("model."): v for k, v in checkpoint["state_dict"].items() if k.startswith("model.")}


def load_weights(model: PreTrainedModel, state: Mapping[str, Tensor], encoder_only: bool, source: str | Path) -> None:
    """Load ``state`` into ``model``; every encoder (base model) weight must be present with the same shape.

    ``encoder_only`` skips heads (a token classifier initialised from an MLM gets a new classification head).
    States saved from a bare base model (no ``<prefix>.`` in the names) are accepted, and so are states without the
    weights tied to others (a masked-LM head tied to the embeddings, as ``save_pretrained`` writes it).
    """
    prefix = model.base_model_prefix + "."
    if not any(k.startswith(prefix) for k in state):
        state = {prefix + k: v for k, v in state.items()}
    if encoder_only:
        state = {k: v for k, v in state.items() if k.startswith(prefix)}
    own = model.state_dict()
    mismatched = [k for k, v in state.items() if k in own and own[k].shape != v.shape]
    if mismatched:
        raise ArtefactError(f"{source}: shapes differ from the model for {mismatched[:5]} (another backbone config?)")
    missing, _ = model.load_state_dict(state, strict=False)
    loaded = {own[k].data_ptr() for k in state if k in own}  # a weight tied to a loaded one (an output head) is loaded
    missing_weights = [k for k in missing
                       if (not encoder_only or k.startswith(prefix)) and own[k].data_ptr() not in loaded]  # fmt: skip
    if missing_weights:
        raise ArtefactError(f"{source}: weights missing for {missing_weights[:5]} (not the same architecture?)")


def model_from_checkpoint(checkpoint: Mapping[str, Any], entry: Mapping[str, Any], source: str | Path) -> PreTrainedModel:
    """The transformers model of a Thunder checkpoint, in eval mode on the CPU."""
    model = AUTO_CLASSES[entry["task"]].from_config(config_from_dict(entry["hf_config"]))
    load_weights(model, model_state(checkpoint), encoder_only=False, source=source)
    return model.eval()


def plain_file_name(name: Any, source: str | Path) -> str:
    """``name`` when it is a plain file name (no directory part, no leading dot); else :class:`ArtefactError`."""
    if not isinstance(name, str) or not _PLAIN_NAME.fullmatch(name):
        raise ArtefactError(f"{source}: refusing the stored file name {name!r} (not a plain file name)")
    return name


def first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return (lines[1] if len(lines) > 1 and lines[0].endswith(":") else lines[0]) if lines else type(error).__name__
