"""Inference runtimes: padded window batches -> tag probabilities, and the order windows are batched in.

Two runtimes give the same answer in different ways:

* :class:`TorchRuntime` runs the model as loaded (eager PyTorch, any device).
* :class:`OnnxRuntime` runs an ONNX graph of the model with ONNX Runtime on the CPU, its linear layers' weights
  optionally quantized to int8 (``onnxruntime.quantization.quantize_dynamic``: weights int8, activations quantized
  per call). :func:`write_onnx` adds the graph to an export directory (``thunder export --onnx fp32|int8``) and
  records it in ``thunder.json``; :func:`load_runtime` picks it up (``--runtime auto|torch|onnx``).

An ONNX graph is refused unless it is the one the export recorded (file name, SHA-256), holds all its weights in the
one file (no external data: nothing is read from elsewhere), and gives the export's safetensors model's
probabilities on a probe window (within :data:`PROBE_TOLERANCE` of its precision): a graph of another model, another
head or another vocabulary never runs. ONNX Runtime runs only the standard operators; nothing from the directory is
executed as code. Its threads are PyTorch's (``torch.get_num_threads()``) and do not spin while waiting: on a CPU
shared with other work, spinning threads cost several times their own work (measured in
``docs/benchmarks-inference.md``).

Windows are batched in order of length (:func:`length_batches`), so a batch pads little; ONNX Runtime runs each
window of a batch alone (see :meth:`OnnxRuntime.__call__`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import torch
from torch import Tensor

from thunder.checkpoint import EXPORT_FILE, ArtefactError, plain_file_name, read_export_info

PRECISIONS = {"fp32": "model.onnx", "int8": "model.int8.onnx"}  # precision -> file name in the export directory
RUNTIMES = ("auto", "torch", "onnx")
PROBE_TOLERANCE = {"fp32": 1e-4, "int8": 0.1}  # largest |probability difference| to the safetensors model
OPSET = 18
Runtime = Callable[[Mapping[str, Tensor]], Tensor]  # {input_ids, attention_mask} (B, T) -> probabilities (B, T, tags)


def check_device(device: str | None) -> None:
    """Refuse a device this machine cannot compute on (``ValueError``, one line): an unknown name, CUDA without a
    GPU or a CUDA build of torch, a GPU index past the last one, the data-less ``meta`` device."""
    if device is None:
        return
    try:
        parsed = torch.device(device)
        if parsed.type == "meta":
            raise ValueError("it holds no data")
        torch.empty(1, device=parsed)
    except Exception as error:  # torch raises RuntimeError, AssertionError, ... depending on the device type
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ValueError(f"device {device!r} cannot be used here ({reason})") from None


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices of the windows, ``batch_size`` at a time, in order of length (stable): little padding per batch."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    return [order[first : first + batch_size] for first in range(0, len(order), batch_size)]


class TorchRuntime:
    """The PyTorch model as loaded: a transformers token classifier, or a Thunder ``TokenClassifier``."""

    name = "torch"

    def __init__(self, model: Any) -> None:
        from lightning.pytorch import LightningModule

        self.model = model
        self.takes_batch = isinstance(model, LightningModule)  # TokenClassifier.forward(batch)

    def __call__(self, batch: Mapping[str, Tensor]) -> Tensor:
        device = next(self.model.parameters()).device
        batch = {key: value.to(device) for key, value in batch.items()}
        with torch.inference_mode():
            output = self.model(batch) if self.takes_batch else self.model(**batch)
            return getattr(output, "logits", output).float().softmax(-1)


class OnnxRuntime:
    """An ONNX graph of the model on ONNX Runtime's CPU provider (PyTorch's thread count, no spinning)."""

    name = "onnx"

    def __init__(self, path: str | Path, precision: str = "fp32", threads: int | None = None) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or torch.get_num_threads()
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.precision = precision
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def __call__(self, batch: Mapping[str, Tensor]) -> Tensor:
        """Each window runs alone, unpadded: int8 activations are quantized with one scale per tensor, so in a
        batch a window's probabilities would depend on the other windows (and on CPU batches are slower anyway)."""
        input_ids, attention_mask = batch["input_ids"].cpu(), batch["attention_mask"].cpu()
        rows = []
        for ids, mask in zip(input_ids, attention_mask):
            length = int(mask.sum())
            feed = {"input_ids": ids[None, :length].numpy(), "attention_mask": mask[None, :length].numpy()}
            logits = torch.from_numpy(self.session.run(["logits"], feed)[0][0])
            rows.append(torch.nn.functional.pad(logits, (0, 0, 0, input_ids.shape[1] - length)))
        return torch.stack(rows).float().softmax(-1)


# ----------------------------------------------------------------------------------------------- export


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def probe_batch(vocab_size: int, length: int = 48) -> dict[str, Tensor]:
    """A fixed two-window batch (the second one padded) spread over the vocabulary: the graph and the weights must
    agree on it."""
    ids = torch.arange(length) * 7919 % (vocab_size - 5) + 5  # past the special tokens
    input_ids = torch.stack([ids, ids.flip(0)])
    input_ids[:, 0], input_ids[:, -1] = 1, 2  # [CLS] ... [SEP]
    attention_mask = torch.ones_like(input_ids)
    attention_mask[1, length // 2 :] = 0
    input_ids[1, length // 2 :] = 0
    return {"input_ids": input_ids, "attention_mask": attention_mask}


def _export_graph(model: Any, path: Path) -> None:
    """The model as an ONNX graph with dynamic batch and length (``torch.onnx.export``, the dynamo exporter)."""
    batch = probe_batch(model.config.vocab_size)
    windows, tokens = torch.export.Dim("windows"), torch.export.Dim("tokens", max=1 << 16)
    exporter_log = logging.getLogger("torch.onnx")  # notes about optional packages (torchvision) and renamed axes
    level = exporter_log.level
    exporter_log.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = torch.onnx.export(
                model.eval(), (), kwargs=dict(batch), input_names=["input_ids", "attention_mask"],
                output_names=["logits"], opset_version=OPSET, dynamo=True, optimize=True, verbose=False,
                dynamic_shapes={"input_ids": {0: windows, 1: tokens}, "attention_mask": {0: windows, 1: tokens}},
            )  # fmt: skip
    finally:
        exporter_log.setLevel(level)
    program.save(str(path))


def write_onnx(directory: str | Path, precision: str = "int8") -> Path:
    """Add an ONNX graph of an export directory's model (``precision`` fp32, or int8 linear-layer weights) and
    record it in its ``thunder.json``; the graph is checked as at load before it is recorded."""
    from thunder.checkpoint import load_exported

    if precision not in PRECISIONS:
        raise ValueError(f"ONNX precision must be one of {sorted(PRECISIONS)}, got {precision!r}")
    directory = Path(directory)
    model = load_exported(directory).model
    target = directory / PRECISIONS[precision]
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        graph = Path(tmp) / "model.onnx"
        _export_graph(model, graph)
        if precision == "int8":
            from onnxruntime.quantization import QuantType, quantize_dynamic

            quantized = Path(tmp) / "model.int8.onnx"
            quantize_dynamic(graph, quantized, weight_type=QuantType.QInt8)
            graph = quantized
        _check_graph(graph, model, precision, directory)
        graph.replace(target)
    import onnxruntime

    info = read_export_info(directory)
    info["onnx"] = {"file": target.name, "precision": precision, "sha256": _sha256(target), "opset": OPSET,
                    "torch": torch.__version__, "onnxruntime": onnxruntime.__version__}  # fmt: skip
    info_path = directory / EXPORT_FILE
    temporary = info_path.with_suffix(".tmp")
    temporary.write_text(json.dumps(info, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    temporary.replace(info_path)
    return target


# ----------------------------------------------------------------------------------------------- loading


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


def _check_graph(path: Path, model: Any, precision: str, source: Path) -> OnnxRuntime:
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


def load_runtime(path: str | Path, model: Any, runtime: str = "auto") -> Runtime:
    """The runtime for a loaded model: ``torch``, ``onnx`` (the export's ONNX graph, which must exist) or ``auto``
    (the ONNX graph when the export directory has one, else PyTorch)."""
    if runtime not in RUNTIMES:
        raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, got {runtime!r}")
    path = Path(path)
    recorded = read_export_info(path).get("onnx") if (path / EXPORT_FILE).is_file() else None
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
    if _sha256(graph) != recorded.get("sha256"):
        raise ArtefactError(f"{graph}: SHA-256 differs from the one thunder.json records (changed after export?)")
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        raise ArtefactError(f"{path} has an ONNX graph but onnxruntime is not installed: pip install "
                            "'thunder-deid[onnx]', or pass --runtime torch") from None  # fmt: skip
    return _check_graph(graph, model, recorded["precision"], path)
