"""Model artefacts: reading and writing Thunder checkpoints and export directories, and checking that their parts fit.

A checkpoint (``.ckpt``, or a sharded directory while training) carries ``checkpoint["thunder"]``: the task, the
Hugging Face config, the tokenizer files and fingerprint, and (token classifiers) the label set with the full
taxonomy. An export directory carries the same in ``config.json``, the weights (safetensors), the tokenizer files
and ``thunder.json``. Nothing is unpickled at inference: ``.ckpt`` files are read with ``weights_only=True`` and
sharded checkpoints are refused there (export them first).
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple

import torch
from torch import Tensor
from transformers import (
    AutoConfig,
    AutoModelForMaskedLM,
    AutoModelForTokenClassification,
    PretrainedConfig,
    PreTrainedModel,
)

from thunder.decoding import OperatingPoint
from thunder.release import RELEASE_FORMAT, MappedLabelSet, ReleaseTokenizer, is_release_dir, load_release
from thunder.taxonomy import LabelSet, Taxonomy
from thunder.tokenizer import FORMAT as TOKENIZER_FORMAT
from thunder.tokenizer import THUNDER_CONFIG, ThunderTokenizer, read_saved_info

Task = Literal["mlm", "token-classification"]
AUTO_CLASSES: dict[str, Any] = {"mlm": AutoModelForMaskedLM, "token-classification": AutoModelForTokenClassification}
EXPORT_FILE = "thunder.json"
EXPORT_FORMAT = "thunder-export/2"
_WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")
EMBEDDING_PADDING = 128  # embedding rows no token reaches that a model may carry (vocabularies padded for speed)
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}")


class ArtefactError(ValueError):
    """A model artefact that cannot be used as it is: unsafe, incomplete, or parts that do not fit together."""


class LoadedModel(NamedTuple):
    """A token classifier ready for de-identification, with the operating point it was validated at."""

    model: PreTrainedModel
    tokenizer: Any
    label_set: LabelSet
    operating_point: OperatingPoint


# ----------------------------------------------------------------------------------------------- reading


def is_sharded_checkpoint(path: str | Path) -> bool:
    """A Lightning distributed (sharded) checkpoint: a directory with ``meta.pt``."""
    return Path(path).is_dir() and (Path(path) / "meta.pt").is_file()


def read_checkpoint(path: str | Path, allow_sharded: bool = False) -> dict[str, Any]:
    """A Lightning checkpoint as one dict on the CPU, tensors and plain data only (``weights_only=True``).

    A sharded directory is read only with ``allow_sharded`` (resuming or exporting one's own training run: PyTorch's
    distributed-checkpoint metadata is pickled); inference refuses it.
    """
    path = Path(path)
    if is_sharded_checkpoint(path):
        if not allow_sharded:
            raise ArtefactError(
                f"{path} is a sharded training checkpoint; export it first: thunder export --checkpoint {path} --out DIR"
            )
        from lightning.fabric.utilities.load import _load_distributed_checkpoint

        return _load_distributed_checkpoint(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
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


def stored_recipe(path: str | Path) -> dict[str, Any] | None:
    """The training recipe stored with a model: an export's ``thunder.json`` or a ``.ckpt`` file's data module state
    (read without loading the weights); None for a model that stores none (older, converted or not there)."""
    path = Path(path)
    if path.is_dir():
        info = read_export_info(path) if (path / EXPORT_FILE).is_file() else {}
        return info.get("recipe")
    if not path.is_file():
        return None
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception:  # not a checkpoint of plain data: the model loader says why
        return None
    return checkpoint_recipe(checkpoint) if isinstance(checkpoint, Mapping) else None


def check_weight_files(directory: str | Path) -> list[str]:
    """The weight files of a Hugging Face model directory that loading reads (``model.safetensors``,
    ``pytorch_model.bin`` and the shards their ``*.index.json`` weight maps name), each checked to be a plain file
    name of a file inside ``directory``, links resolved: a name like ``../outside.safetensors``, an absolute path
    or a link out of the directory is an :class:`ArtefactError`."""
    directory = Path(directory)
    root = directory.resolve()
    named: dict[str, Path] = {}  # file name -> where it is named
    for name in (*_WEIGHT_FILES, "pytorch_model.bin.index.json"):
        if not (directory / name).exists() and not (directory / name).is_symlink():
            continue
        named[name] = directory
        if name.endswith(".index.json"):
            named |= {shard: directory / name for shard in sorted(set(_weight_map(directory / name).values()))}
    for name, source in named.items():
        path = directory / plain_file_name(name, source)
        if path.resolve().parent != root:
            raise ArtefactError(f"{path} leads out of the model directory (to {path.resolve()}); refusing to load it")
        if not path.is_file():
            raise ArtefactError(f"{path}: weight file missing")
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
        return torch.load(directory / "pytorch_model.bin", map_location="cpu", weights_only=True)
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


def read_pretrained(source: str | Path) -> tuple[PretrainedConfig, dict[str, Tensor]]:
    """Config and weights of a Thunder checkpoint (sharded ones included) or a Hugging Face directory (``init_from``)."""
    source = Path(source)
    if source.is_dir() and not is_sharded_checkpoint(source):
        return AutoConfig.from_pretrained(source), read_hf_weights(source)
    checkpoint = read_checkpoint(source, allow_sharded=True)
    return config_from_dict(thunder_entry(checkpoint, source)["hf_config"]), model_state(checkpoint)


def load_weights(model: PreTrainedModel, state: Mapping[str, Tensor], encoder_only: bool, source: str | Path) -> None:
    """Load ``state`` into ``model``; every encoder (base model) weight must be present with the same shape.

    ``encoder_only`` skips heads (a token classifier initialised from an MLM gets a new classification head).
    States saved from a bare base model (no ``<prefix>.`` in the names) are accepted.
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
    missing_weights = [k for k in missing if not encoder_only or k.startswith(prefix)]
    if missing_weights:
        raise ArtefactError(f"{source}: weights missing for {missing_weights[:5]} (not the same architecture?)")


# ----------------------------------------------------------------------------------------------- tokenizers


def load_tokenizer(path: str | Path) -> ThunderTokenizer:
    """The tokenizer saved in a directory, of the kind its ``thunder_tokenizer.json`` names: a Thunder tokenizer
    (:class:`~thunder.tokenizer.ThunderTokenizer`) or a published release's (:class:`~thunder.release.ReleaseTokenizer`,
    written by ``thunder import``). The one place that dispatches on the tokenizer format."""
    kinds: dict[str, type[ThunderTokenizer]] = {TOKENIZER_FORMAT: ThunderTokenizer, RELEASE_FORMAT: ReleaseTokenizer}
    found = read_saved_info(Path(path)).get("format")
    if found not in kinds:
        where = Path(path) / THUNDER_CONFIG
        raise ValueError(f"{where}: unsupported tokenizer format {found!r} (known: {', '.join(kinds)})")
    return kinds[found].from_pretrained(path)


def tokenizer_files(tokenizer: Any) -> dict[str, bytes]:
    """The files ``tokenizer.save_pretrained`` writes, by name (stored in checkpoints)."""
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer.save_pretrained(tmp)
        return {p.name: p.read_bytes() for p in Path(tmp).iterdir() if p.is_file()}


def plain_file_name(name: Any, source: str | Path) -> str:
    """``name`` when it is a plain file name (no directory part, no leading dot); else :class:`ArtefactError`."""
    if not isinstance(name, str) or not _PLAIN_NAME.fullmatch(name):
        raise ArtefactError(f"{source}: refusing the stored file name {name!r} (not a plain file name)")
    return name


def write_files(files: Mapping[str, bytes], directory: str | Path, source: str | Path = "checkpoint") -> None:
    """Write stored tokenizer files into ``directory``; every name must be a plain file name."""
    checked = {plain_file_name(name, source): data for name, data in files.items()}
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in checked.items():
        if not isinstance(data, bytes):
            raise ArtefactError(f"{source}: stored file {name!r} is not bytes")
        (directory / name).write_bytes(data)


def tokenizer_from_files(files: Mapping[str, bytes], source: str | Path = "checkpoint") -> Any:
    """The tokenizer stored in a checkpoint by :func:`tokenizer_files`."""
    with tempfile.TemporaryDirectory() as tmp:
        write_files(files, tmp, source)
        return load_tokenizer(tmp)


def tokenizer_fingerprint(tokenizer: Any) -> dict[str, Any]:
    """Vocabulary size and a hash of the vocabulary in id order: two tokenizers agree iff these do."""
    vocab = tokenizer.hf.get_vocab()
    ordered = sorted(vocab.items(), key=lambda item: item[1])
    blob = json.dumps(ordered, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return {"vocab_size": len(vocab), "sha256": hashlib.sha256(blob).hexdigest()}


# ----------------------------------------------------------------------------------------------- fitting together


def label_set_from_dict(d: Mapping[str, Any], taxonomy: str | Path | Taxonomy | None = None) -> LabelSet:
    """A stored label set on its own stored taxonomy, or on ``taxonomy`` (checked against the stored one)."""
    taxonomy = _taxonomy(taxonomy)
    if d.get("kind") == "mapped":  # a converted release head (thunder.release)
        return MappedLabelSet.from_dict(dict(d), taxonomy)
    return LabelSet.from_dict(dict(d), taxonomy)


def _taxonomy(taxonomy: str | Path | Taxonomy | None) -> Taxonomy | None:
    return Taxonomy.load(taxonomy) if isinstance(taxonomy, (str, Path)) else taxonomy


def check_fit(
    config: PretrainedConfig,
    tokenizer: Any,
    stored_tokenizer: Mapping[str, Any] | None,
    label_set: LabelSet | None,
    source: str | Path,
) -> None:
    """Refuse a tokenizer or label set that does not fit the model (:class:`ArtefactError`, one line).

    The tokenizer's fingerprint is computed from the tokenizer as loaded from its files and compared with the
    stored one; a stored fingerprint rewritten to match another tokenizer still meets the weights: the vocabulary
    must fill the embeddings (fewer than :data:`EMBEDDING_PADDING` rows that no token reaches)."""
    if tokenizer is not None:
        found = tokenizer_fingerprint(tokenizer)
        if stored_tokenizer is not None and dict(stored_tokenizer) != found:
            raise ArtefactError(
                f"{source}: the tokenizer ({found['vocab_size']} tokens, sha256 {found['sha256'][:12]}) is not the one "
                f"the model was trained with ({stored_tokenizer.get('vocab_size')} tokens, sha256 "
                f"{str(stored_tokenizer.get('sha256'))[:12]})"
            )
        if found["vocab_size"] > config.vocab_size:
            raise ArtefactError(
                f"{source}: the tokenizer has {found['vocab_size']} tokens but the model's embeddings only "
                f"{config.vocab_size}"
            )
        if config.vocab_size - found["vocab_size"] >= EMBEDDING_PADDING:
            raise ArtefactError(
                f"{source}: the tokenizer has {found['vocab_size']} tokens but the model's embeddings "
                f"{config.vocab_size}: not the tokenizer the model was trained with"
            )
    if label_set is not None:
        names = list(label_set.names)
        heads = [config.id2label[i] for i in range(config.num_labels)] if config.id2label else []
        if config.num_labels != len(names) or heads != names:
            raise ArtefactError(
                f"{source}: the label set has {len(names)} tags but the classifier head {config.num_labels} "
                f"({'different tags' if config.num_labels == len(names) else 'another size'}); refusing to relabel"
            )


def _check_head(model: PreTrainedModel, source: str | Path) -> None:
    """The weights' own shapes agree with the config (a head or embedding resized behind the config's back)."""
    rows = model.get_input_embeddings().weight.shape[0]
    if rows != model.config.vocab_size:
        raise ArtefactError(f"{source}: embeddings have {rows} rows, config.json says vocab_size {model.config.vocab_size}")
    head = getattr(model, "classifier", None) or getattr(model, "score", None)
    if head is not None and getattr(head, "out_features", model.config.num_labels) != model.config.num_labels:
        raise ArtefactError(f"{source}: the classifier head has {head.out_features} outputs, config.json says "
                            f"{model.config.num_labels} labels")  # fmt: skip


# ----------------------------------------------------------------------------------------------- export and load


def model_from_checkpoint(checkpoint: Mapping[str, Any], entry: Mapping[str, Any], source: str | Path) -> PreTrainedModel:
    """The transformers model of a Thunder checkpoint, in eval mode on the CPU."""
    model = AUTO_CLASSES[entry["task"]].from_config(config_from_dict(entry["hf_config"]))
    load_weights(model, model_state(checkpoint), encoder_only=False, source=source)
    return model.eval()


def check_new_directory(out: str | Path) -> Path:
    """``out`` as a Path when it is absent or an empty directory (exports never overwrite)."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(f"{out} exists and is not empty; choose a new directory")
    return out


def export_checkpoint(checkpoint: str | Path, out: str | Path, tokenizer: str | Path | None = None) -> Path:
    """Write the Hugging Face directory of a MaskedLM / TokenClassifier checkpoint (file or sharded directory).

    ``tokenizer`` is needed only when the checkpoint stores none; one that differs from the stored one is refused.
    """
    out = check_new_directory(out)
    data = read_checkpoint(checkpoint, allow_sharded=True)
    entry = thunder_entry(data, checkpoint)
    model = model_from_checkpoint(data, entry, checkpoint)
    if tokenizer is not None:
        tok = load_tokenizer(tokenizer)
    elif "tokenizer_files" in entry:
        tok = tokenizer_from_files(entry["tokenizer_files"], checkpoint)
    else:
        raise ArtefactError(f"{checkpoint} stores no tokenizer (trained without one?): pass --tokenizer DIR")
    label_set = label_set_from_dict(entry["label_set"]) if "label_set" in entry else None
    check_fit(model.config, tok, entry.get("tokenizer_fingerprint"), label_set, checkpoint)
    info: dict[str, Any] = {"operating_point": entry["operating_point"]} if "operating_point" in entry else {}
    recipe = checkpoint_recipe(data)
    if recipe:
        info["recipe"] = recipe
    return write_export(out, model, tok, label_set, entry["task"], **info)


def write_export(
    out: str | Path, model: PreTrainedModel, tokenizer: Any, label_set: Any, task: str, **info: Any
) -> Path:
    """Write an export directory: safetensors weights and config, tokenizer files, ``thunder.json`` (+ ``info``)."""
    out = check_new_directory(out)
    description: dict[str, Any] = {"format": EXPORT_FORMAT, "task": task, "tokenizer": tokenizer_fingerprint(tokenizer)}
    if label_set is not None:
        description["label_set"] = label_set.to_dict()
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    text = json.dumps({**description, **info}, ensure_ascii=False, indent=2) + "\n"
    (out / EXPORT_FILE).write_text(text, encoding="utf-8")
    return out


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


def load_exported(path: str | Path, taxonomy: str | Path | Taxonomy | None = None) -> LoadedModel:
    """``(model, tokenizer, label_set, operating_point)`` of a token classifier: an export directory, a ``.ckpt``
    file or a release directory.

    The model is a transformers ``...ForTokenClassification`` in eval mode on the CPU. The label set is rebuilt on
    the taxonomy stored with it; an explicit ``taxonomy`` must be the same one (``LabelSetMismatch`` otherwise).
    Tokenizer, label set and weights are checked against each other (:class:`ArtefactError`). The operating point
    is the stored one; an artefact that stores none (a release, or written before it was stored) gets
    ``OperatingPoint()``.
    """
    model, tokenizer, label_set, operating_point = _read_classifier(Path(path), taxonomy, weights=True)
    assert model is not None
    return LoadedModel(model, tokenizer, label_set, operating_point)


def classifier_parts(path: str | Path, taxonomy: str | Path | Taxonomy | None = None) -> tuple[Any, LabelSet]:
    """``(tokenizer, label_set)`` of a token classifier (what :func:`load_exported` reads, checked alike) without
    building the model: the parts a data module needs to label data for it."""
    _, tokenizer, label_set, _ = _read_classifier(Path(path), taxonomy, weights=False)
    return tokenizer, label_set


def _read_classifier(
    path: Path, taxonomy: str | Path | Taxonomy | None, weights: bool
) -> tuple[PreTrainedModel | None, Any, LabelSet, OperatingPoint]:
    model = None
    if path.is_dir() and not (path / EXPORT_FILE).exists():
        if is_release_dir(path):  # a published SNU Thunder-DeID model directory, converted in memory
            check_weight_files(path)
            model, tokenizer, label_set, _ = load_release(path, taxonomy=_taxonomy(taxonomy))
            return model, tokenizer, label_set, OperatingPoint()
    if path.is_dir() and not is_sharded_checkpoint(path):
        info = read_export_info(path)
        if info["task"] != "token-classification":
            raise ArtefactError(f"{path} holds a {info['task']!r} model, not a token classifier")
        if "label_set" not in info:
            raise ArtefactError(f"{path / EXPORT_FILE}: no label set")
        if not (path / "model.safetensors").is_file() and not (path / "model.safetensors.index.json").is_file():
            raise ArtefactError(f"{path}: no safetensors weights (model.safetensors); refusing other formats")
        check_weight_files(path)
        if weights:
            model = AUTO_CLASSES["token-classification"].from_pretrained(path, use_safetensors=True).eval()
        config = model.config if model is not None else AutoConfig.from_pretrained(path)
        tokenizer, stored_tokenizer = load_tokenizer(path), info.get("tokenizer")
        if stored_tokenizer is None:
            raise ArtefactError(f"{path / EXPORT_FILE}: no tokenizer fingerprint (an export of an older Thunder?): "
                                "export the checkpoint again")  # fmt: skip
        label_set = label_set_from_dict(info["label_set"], taxonomy)
        stored_point, point_source = info.get("operating_point"), path / EXPORT_FILE
    else:
        data = read_checkpoint(path)
        entry = thunder_entry(data, path)
        if entry["task"] != "token-classification":
            raise ArtefactError(f"{path} holds a {entry['task']!r} model, not a token classifier")
        if "tokenizer_files" not in entry:
            raise ArtefactError(f"{path} stores no tokenizer: export it with `thunder export --tokenizer DIR` first")
        tokenizer, stored_tokenizer = tokenizer_from_files(entry["tokenizer_files"], path), entry.get("tokenizer_fingerprint")
        label_set = label_set_from_dict(entry["label_set"], taxonomy)
        model = model_from_checkpoint(data, entry, path) if weights else None
        config = model.config if model is not None else config_from_dict(entry["hf_config"])
        stored_point, point_source = entry.get("operating_point"), path
    if model is not None:
        _check_head(model, path)
    check_fit(config, tokenizer, stored_tokenizer, label_set, path)
    try:
        operating_point = OperatingPoint.from_dict(stored_point)
    except ValueError as error:
        raise ArtefactError(f"{point_source}: {error}") from None
    return model, tokenizer, label_set, operating_point


def stored_task(path: str | Path) -> str | None:
    """The task of the model at ``path`` (read without loading the weights): a Thunder ``.ckpt`` file's or export's
    (``mlm``, ``token-classification``), ``token-classification`` for a published release directory; None for a
    sharded training checkpoint or any other Hugging Face directory."""
    path = Path(path)
    if path.is_dir():
        if (path / EXPORT_FILE).is_file():
            return read_export_info(path)["task"]
        return "token-classification" if is_release_dir(path) else None
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception as error:  # the safe unpickler refuses anything but tensors and plain data
        raise ArtefactError(f"{path}: not a loadable checkpoint of tensors and plain data ({type(error).__name__})") from None
    return thunder_entry(checkpoint, path)["task"]
