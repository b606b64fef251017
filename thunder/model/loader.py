"""Reading model artefacts: one entry point, :meth:`Artefact.open`, for every format Thunder reads.

:meth:`Artefact.open` recognises the format of a path once:

- ``export``: a Thunder export directory (``thunder export``, ``thunder import``): ``thunder.json``, safetensors
  weights, ``config.json`` with ``id2label``, the tokenizer files;
- ``checkpoint``: a Lightning ``.ckpt`` file written by :class:`~thunder.model.modules.TokenClassifier` or
  :class:`~thunder.model.modules.MaskedLM` (``checkpoint["thunder"]``: task, Hugging Face config, tokenizer files and
  fingerprint, label set with its taxonomy, operating point);
- ``sharded``: a sharded training checkpoint (a directory with ``meta.pt``);
- ``release``: a published SNU Thunder-DeID model directory, converted in memory by :mod:`thunder.model.release`;
- ``huggingface``: any other Hugging Face model directory (an encoder to start from).

Its methods give what each caller needs: :meth:`Artefact.classifier` a token classifier for de-identification (model,
tokenizer, label set and operating point, checked against each other), :meth:`Artefact.pretrained` weights to start
training from, :attr:`Artefact.task` and :meth:`Artefact.recipe` without loading weights. Nothing is unpickled at
inference: ``.ckpt`` files are read with ``weights_only=True``, sharded checkpoints are read only to start training
or to export (PyTorch's distributed-checkpoint metadata is pickled), names of stored files must be plain file names.
``Artefact.open(path, verify=PUB)`` opens only an artefact whose signature (:mod:`thunder.model.signing`) verifies.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from safetensors import SafetensorError
from torch import Tensor
from transformers import AutoConfig, PretrainedConfig, PreTrainedModel
from transformers.utils import logging as hf_logging

from thunder.language.release_tokenizer import load_tokenizer
from thunder.language.tokenizer import THUNDER_CONFIG, Windows
from thunder.model import integrity, signing
from thunder.model.checkpoints import (
    AUTO_CLASSES,
    EXPORT_FILE,
    ArtefactError,
    check_weight_files,
    checkpoint_recipe,
    config_from_dict,
    first_line,
    model_from_checkpoint,
    model_state,
    plain_file_name,
    read_checkpoint,
    read_export_info,
    read_hf_weights,
    read_plain,
    thunder_entry,
)
from thunder.model.decoding import OperatingPoint
from thunder.model.inference import (
    PRECISIONS,
    PROBE_TOLERANCE,
    RUNTIMES,
    OnnxRuntime,
    Runtime,
    TorchRuntime,
    probe_batch,
)
from thunder.model.release import MappedLabelSet, is_release_dir, load_release
from thunder.taxonomy import LabelSet, Taxonomy

Format = Literal["export", "checkpoint", "sharded", "release", "huggingface"]
EXPORT_FORMAT = "thunder-export/2"
EMBEDDING_PADDING = 128  # embedding rows no token reaches that a model may carry (vocabularies padded for speed)
RELEASE_UNVERIFIED = "a published release directory, which records no Thunder fingerprint or self-test answers"


class LoadedModel(NamedTuple):
    """A token classifier ready for de-identification, with the operating point it was validated at, the runtime
    that runs it, its answers to the self-test (:mod:`thunder.model.integrity`; ``model``, ``runtime`` and
    ``self_test`` are None when read without weights, ``self_test`` for a release too) and the windows it was trained
    on (the defaults for a model that stores none)."""

    model: PreTrainedModel | None
    tokenizer: Any
    label_set: LabelSet
    operating_point: OperatingPoint
    runtime: Runtime | None = None
    self_test: dict[str, Any] | None = None
    windows: Windows = Windows()


@dataclass(frozen=True)
class Artefact:
    """A model on disk and its format (see the module); :meth:`open` is the way in."""

    path: Path
    format: Format

    @classmethod
    def open(cls, path: str | Path, verify: str | Path | None = None) -> Artefact:
        """The artefact at ``path``, its format recognised (``FileNotFoundError`` when nothing is there); with
        ``verify`` (a PEM public key), only when its signature verifies, file for file, before anything of it is read
        (:func:`thunder.model.signing.verify`; else :class:`~thunder.model.signing.SignatureError`)."""
        path = Path(path)
        if not path.is_file() and not path.is_dir():
            raise FileNotFoundError(f"model not found: {path}")
        if verify is not None:
            signing.verify(path, verify)
        if path.is_file():
            return cls(path, "checkpoint")
        if (path / "meta.pt").is_file():
            return cls(path, "sharded")
        if (path / EXPORT_FILE).exists():
            return cls(path, "export")
        return cls(path, "release" if is_release_dir(path) else "huggingface")

    # -- without weights

    def info(self) -> dict[str, Any]:
        """An export's description (``thunder.json``)."""
        return read_export_info(self.path)

    @property
    def task(self) -> str | None:
        """``mlm`` or ``token-classification`` (read without loading the weights); None for a sharded training
        checkpoint or another Hugging Face directory."""
        if self.format == "export":
            return self.info()["task"]
        if self.format == "checkpoint":
            return thunder_entry(read_plain(self.path, mmap=True), self.path)["task"]
        return "token-classification" if self.format == "release" else None

    def recipe(self) -> dict[str, Any] | None:
        """The training recipe stored with the model (an export's ``thunder.json``, a ``.ckpt`` file's data module
        state), read without loading the weights; None for a model that stores none."""
        if self.format == "export":
            return self.info().get("recipe")
        if self.format != "checkpoint":
            return None
        try:
            checkpoint = read_plain(self.path, mmap=True)
        except ArtefactError:  # not a checkpoint of plain data: loading the model says why
            return None
        return checkpoint_recipe(checkpoint) if isinstance(checkpoint, Mapping) else None

    # -- token classifiers

    def classifier(self, taxonomy: Taxonomy | None = None, weights: bool = True, runtime: str = "auto") -> LoadedModel:
        """The token classifier: model (a transformers ``...ForTokenClassification`` in eval mode on the CPU; None
        without ``weights``), tokenizer, label set, operating point and ``runtime`` (:meth:`runtime`), checked
        against each other (:class:`ArtefactError`).

        The label set is rebuilt on the taxonomy stored with it; an explicit ``taxonomy`` must be the same one
        (``LabelSetMismatch`` otherwise). The operating point is the stored one; an artefact that stores none (a
        release, or written before it was stored) gets ``OperatingPoint()``. A sharded checkpoint is refused
        (export it first), and so is a Hugging Face directory that is not a Thunder export. With weights, the model
        must be what it claims (:func:`thunder.model.integrity.verify`: finite weights, the recorded fingerprint and
        self-test answers; a release records neither: it runs only unverified, :func:`~thunder.model.integrity.unverified_allowed`). An ONNX runtime answers the self-test too.
        """
        if runtime not in RUNTIMES:
            raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, got {runtime!r}")
        if self.format == "release":
            check_weight_files(self.path)
            model, tokenizer, label_set, _ = load_release(self.path, taxonomy=taxonomy)
            if not weights:
                return LoadedModel(None, tokenizer, label_set, OperatingPoint())
            integrity.unverified(self.path, RELEASE_UNVERIFIED)
            integrity.check_finite(model.state_dict(), self.path)
            return LoadedModel(model, tokenizer, label_set, OperatingPoint(), self.runtime(model, runtime))
        if self.format == "sharded":
            raise ArtefactError(f"{self.path} is a sharded training checkpoint; export it first: "
                                f"thunder export --checkpoint {self.path} --out DIR")  # fmt: skip
        if self.format == "huggingface":
            read_export_info(self.path)  # names what is missing
        parts = self._export_parts(weights) if self.format == "export" else self._checkpoint_parts(weights)
        model, state, config, tokenizer, stored_tokenizer, stored, point_source = parts
        label_set = label_set_from_dict(stored["label_set"], taxonomy)
        if model is not None:
            _check_head(model, self.path)
        check_fit(config, tokenizer, stored_tokenizer, label_set, self.path, stored_inside=self.format == "checkpoint")
        try:
            operating_point = OperatingPoint.from_dict(stored.get("operating_point"))
            windows = Windows.from_dict(stored.get("windows"))
        except ValueError as error:
            raise ArtefactError(f"{point_source}: {error}") from None
        if model is None:
            return LoadedModel(None, tokenizer, label_set, operating_point, windows=windows)
        answers = integrity.verify(state, TorchRuntime(model), tokenizer, operating_point,
                                   (stored["label_set"], stored_tokenizer), stored, integrity.SCORE_TOLERANCE,
                                   point_source, config)  # fmt: skip
        run = self.runtime(model, runtime)
        if isinstance(run, OnnxRuntime):  # the graph that de-identifies answers the self-test too
            answers = integrity.check_runtime(run, tokenizer, operating_point, stored.get("self_test"),
                                              PROBE_TOLERANCE[run.precision], point_source)  # fmt: skip
        return LoadedModel(model, tokenizer, label_set, operating_point, run, answers, windows)

    def _export_parts(self, weights: bool) -> tuple:
        info = self.info()
        _check_classifier(info["task"], self.path)
        if "label_set" not in info:
            raise ArtefactError(f"{self.path / EXPORT_FILE}: no label set")
        if not (self.path / "model.safetensors").is_file() and not (self.path / "model.safetensors.index.json").is_file():
            raise ArtefactError(f"{self.path}: no safetensors weights (model.safetensors); refusing other formats")
        check_weight_files(self.path)
        config = _export_config(self.path)
        model = _export_model(self.path, config) if weights else None
        state = model.state_dict() if model is not None else None
        if info.get("tokenizer") is None:
            raise ArtefactError(f"{self.path / EXPORT_FILE}: no tokenizer fingerprint (an export of an older Thunder?): "
                                "export the checkpoint again")  # fmt: skip
        return model, state, config, read_tokenizer(self.path), info["tokenizer"], info, self.path / EXPORT_FILE

    def _checkpoint_parts(self, weights: bool) -> tuple:
        data = read_checkpoint(self.path)
        entry = thunder_entry(data, self.path)
        _check_classifier(entry["task"], self.path)
        if "tokenizer_files" not in entry:
            raise ArtefactError(f"{self.path} stores no tokenizer: export it with `thunder export --tokenizer DIR` first")
        tokenizer = tokenizer_from_files(entry["tokenizer_files"], self.path)
        model = model_from_checkpoint(data, entry, self.path) if weights else None
        config = model.config if model is not None else config_from_dict(entry["hf_config"])
        return model, model_state(data), config, tokenizer, entry.get("tokenizer_fingerprint"), entry, self.path

    def runtime(self, model: PreTrainedModel, runtime: str = "auto") -> Runtime:
        """What runs ``model``: ``torch``, ``onnx`` (the export's ONNX graph, which must exist, be the one
        ``thunder.json`` records and agree with the weights: :func:`~thunder.model.inference.check_graph`) or
        ``auto`` (the ONNX graph when the export has one, else PyTorch)."""
        path = self.path
        recorded = self.info().get("onnx") if self.format == "export" else None
        if runtime == "torch" or (runtime == "auto" and recorded is None):
            return TorchRuntime(model)
        if recorded is None:
            raise ArtefactError(f"{path}: no ONNX graph (add one with thunder export --onnx int8)")
        if not isinstance(recorded, dict) or recorded.get("precision") not in PRECISIONS:
            raise ArtefactError(f"{path / EXPORT_FILE}: the 'onnx' entry names no known precision")
        name = plain_file_name(recorded.get("file"), path / EXPORT_FILE)
        graph = path / name
        if not graph.is_file():
            raise ArtefactError(f"{graph}: the ONNX graph thunder.json names is missing")
        if sha256(graph) != recorded.get("sha256"):
            raise ArtefactError(f"{graph}: SHA-256 differs from the one thunder.json records (changed after export?)")
        try:
            import onnxruntime  # noqa: F401
        except ImportError:
            raise ArtefactError(f"{path} has an ONNX graph but onnxruntime is not installed: pip install "
                                "'thunder-deid[onnx]', or pass --runtime torch") from None  # fmt: skip
        return check_graph(graph, model, recorded["precision"], path)

    # -- weights to start training from

    def tokenizer(self) -> Any:
        """The tokenizer the model reads (``tokenizer: pretrained``): the one stored with a checkpoint, an export or
        an imported release; another Hugging Face directory's own behind the Mecab step
        (:class:`~thunder.language.pretrained_tokenizer.PretrainedTokenizer`)."""
        if self.format == "huggingface":
            return load_tokenizer(self.path)
        if self.format in ("export", "release"):
            return self.classifier(weights=False).tokenizer
        sharded = self.format == "sharded"
        checkpoint = read_checkpoint(self.path, allow_sharded=True) if sharded else read_plain(self.path, mmap=True)
        entry = thunder_entry(checkpoint, self.path)
        if "tokenizer_files" not in entry:
            raise ArtefactError(f"{self.path} stores no tokenizer (trained without one?)")
        return tokenizer_from_files(entry["tokenizer_files"], self.path)

    def pretrained(self) -> tuple[PretrainedConfig, dict[str, Tensor]]:
        """Config and weights to start from (``init_from``): a Thunder checkpoint (sharded ones included), an
        export or another Hugging Face directory. A token classifier's are first verified (:meth:`classifier`)."""
        if self.format in ("export", "checkpoint") and self.task == "token-classification":
            self.classifier()
        if self.format in ("export", "huggingface", "release"):
            return AutoConfig.from_pretrained(self.path, trust_remote_code=False), read_hf_weights(self.path)
        checkpoint = read_checkpoint(self.path, allow_sharded=True)
        return config_from_dict(thunder_entry(checkpoint, self.path)["hf_config"]), model_state(checkpoint)


def _export_config(path: Path) -> PretrainedConfig:
    try:
        return AutoConfig.from_pretrained(path, trust_remote_code=False)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ArtefactError(f"{path / 'config.json'}: not a model configuration ({first_line(error)})") from None


def _export_model(path: Path, config: PretrainedConfig) -> PreTrainedModel:
    """The export's token classifier (its weight files checked by :func:`check_weight_files`); weights that do not
    fit ``config.json`` (another number of labels) are one line, not transformers' load report."""
    try:
        with _quiet_transformers():
            model, info = AUTO_CLASSES["token-classification"].from_pretrained(
                path, config=config, use_safetensors=True, ignore_mismatched_sizes=True, output_loading_info=True)
    except (RuntimeError, ValueError, OSError, SafetensorError) as error:
        raise ArtefactError(f"{path}: the weights do not fit config.json ({first_line(error)})") from None
    if info["mismatched_keys"]:
        key, stored, expected = sorted(info["mismatched_keys"])[0]
        raise ArtefactError(f"{path / 'config.json'}: does not fit the weights ({key}: {tuple(stored)} in the "
                            f"weights, {tuple(expected)} by config.json, which names {config.num_labels} "
                            "labels)")  # fmt: skip
    if info["missing_keys"]:
        missing = sorted(info["missing_keys"])[:5]
        raise ArtefactError(f"{path}: weights missing for {missing} (not the model config.json describes)")
    return model.float().eval()  # stored in half precision or not, run in float32 (as fingerprinted)


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Transformers' load report off (its warning, with colour codes: Thunder says what is wrong in one line)."""
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)


def _check_classifier(task: str, path: Path) -> None:
    if task != "token-classification":
        raise ArtefactError(f"{path} holds a {task!r} model, not a token classifier")


# ----------------------------------------------------------------------------------------------- tokenizers


def tokenizer_files(tokenizer: Any) -> dict[str, bytes]:
    """The files ``tokenizer.save_pretrained`` writes, by name (stored in checkpoints)."""
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer.save_pretrained(tmp)
        return {p.name: p.read_bytes() for p in Path(tmp).iterdir() if p.is_file()}


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
        return read_tokenizer(Path(tmp), source)


def read_tokenizer(directory: Path, stored_in: str | Path | None = None) -> Any:
    """The tokenizer saved in ``directory``; a missing or unreadable file is one :class:`ArtefactError` naming it
    (``stored_in``: the checkpoint whose stored files the temporary ``directory`` holds)."""

    def named(file: str) -> str:
        return f"{stored_in} (its stored {file})" if stored_in else str(directory / file)

    for file in ("tokenizer.json", THUNDER_CONFIG):
        if not (directory / file).is_file():
            raise ArtefactError(f"{named(file)}: missing, the model's tokenizer is incomplete")
    try:
        return load_tokenizer(directory)
    except Exception as error:  # noqa: BLE001  (tokenizers raises a bare Exception for a file it cannot parse)
        raise ArtefactError(f"{named('tokenizer.json')}: does not load as a tokenizer ({type(error).__name__}: "
                            f"{first_line(error)})") from None  # fmt: skip


def tokenizer_fingerprint(tokenizer: Any) -> dict[str, Any]:
    """Vocabulary size, a hash of the vocabulary in id order and (``pipeline``) a hash of the whole tokenizer as its
    ``tokenizer.json`` describes it: normalizer, pre-tokenizer, model (vocabulary, merges), post-processor, decoder
    and added tokens (not the truncation and padding a caller switches on), and what the tokenizer adds
    (``fingerprint_parts``: a pretrained model's tokenizer names its format): two tokenizers agree iff these do."""
    vocab = tokenizer.hf.get_vocab()
    ordered = sorted(vocab.items(), key=lambda item: item[1])
    blob = json.dumps(ordered, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    pipeline = json.loads(tokenizer.hf.backend_tokenizer.to_str())
    pipeline.pop("truncation", None), pipeline.pop("padding", None)
    whole = json.dumps(pipeline, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return {"vocab_size": len(vocab), "sha256": hashlib.sha256(blob).hexdigest(),
            "pipeline": hashlib.sha256(whole).hexdigest(),
            **getattr(tokenizer, "fingerprint_parts", dict)()}  # fmt: skip


# ----------------------------------------------------------------------------------------------- fitting together


def label_set_from_dict(d: Mapping[str, Any], taxonomy: Taxonomy | None = None) -> LabelSet:
    """A stored label set on its own stored taxonomy, or on ``taxonomy`` (checked against the stored one)."""
    kind = MappedLabelSet if d.get("kind") == "mapped" else LabelSet  # a converted release head (thunder.model.release)
    return kind.from_dict(dict(d), taxonomy)


def check_fit(
    config: PretrainedConfig,
    tokenizer: Any,
    stored_tokenizer: Mapping[str, Any] | None,
    label_set: LabelSet | None,
    source: str | Path,
    stored_inside: bool = False,
) -> None:
    """Refuse a tokenizer or label set that does not fit the model (:class:`ArtefactError`, one line).

    The tokenizer's fingerprint is computed from the tokenizer as loaded from its files and compared with the
    stored one; a stored fingerprint rewritten to match another tokenizer still meets the weights: the vocabulary
    must fill the embeddings (fewer than :data:`EMBEDDING_PADDING` rows that no token reaches). A stored fingerprint
    of the vocabulary alone (an older Thunder's) makes the model unverified
    (:func:`~thunder.model.integrity.unverified`) unless the tokenizer files are ``stored_inside`` the checkpoint."""
    if tokenizer is not None:
        found = tokenizer_fingerprint(tokenizer)
        if stored_tokenizer is not None and "pipeline" not in stored_tokenizer:
            if not stored_inside:
                integrity.unverified(source, "its tokenizer's normalizer, pre-tokenizer, decoder and merges are not "
                                     "fingerprinted (written by an older Thunder)")  # fmt: skip
            found.pop("pipeline")
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


# ----------------------------------------------------------------------------------------------- ONNX graphs


def _reads_external_data(graph: Any) -> bool:
    """Whether any tensor of an ONNX graph (initializers, node attributes, subgraphs) lives in another file."""
    from onnx import TensorProto

    tensors, subgraphs = list(graph.initializer), []
    for node in graph.node:
        for attribute in node.attribute:
            tensors += [attribute.t, *attribute.tensors]
            subgraphs += [attribute.g, *attribute.graphs]
    return any(t.data_location == TensorProto.EXTERNAL for t in tensors) or any(
        _reads_external_data(g) for g in subgraphs if g.node or g.initializer
    )


def check_graph(path: Path, model: Any, precision: str, source: Path) -> OnnxRuntime:
    """The graph's runtime, when the graph holds all its weights and agrees with ``model`` on the probe batch."""
    import onnx

    if _reads_external_data(onnx.load(str(path), load_external_data=False).graph):
        raise ArtefactError(f"{source / path.name}: the ONNX graph reads weights from other files; refusing it")
    runtime = OnnxRuntime(path, precision)
    batch = probe_batch(model.config.vocab_size)
    expected = TorchRuntime(model)(batch).cpu()
    try:
        found = runtime(batch)
    except Exception as error:  # noqa: BLE001  (a graph of another vocabulary or shape fails here)
        raise ArtefactError(f"{source / path.name}: the ONNX graph does not run on this model's inputs "
                            f"({type(error).__name__})") from None  # fmt: skip
    if found.shape != expected.shape:
        raise ArtefactError(f"{source / path.name}: the ONNX graph has {found.shape[-1]} tags, the model "
                            f"{expected.shape[-1]}; refusing it")  # fmt: skip
    real = batch["attention_mask"].bool()
    difference = (found - expected)[real].abs().max().item()
    if difference > PROBE_TOLERANCE[precision]:
        raise ArtefactError(f"{source / path.name}: the ONNX graph's probabilities differ from the model's by "
                            f"{difference:.3g} (> {PROBE_TOLERANCE[precision]} for {precision}): "
                            "not this model's graph")  # fmt: skip
    return runtime


def sha256(path: Path) -> str:
    """The SHA-256 of a file (an ONNX graph's, recorded in ``thunder.json``)."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
