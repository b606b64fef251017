"""Inference: windows through a runtime (padded batches -> tag probabilities -> tags at the operating point).

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

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from thunder.model.decoding import OperatingPoint, TokenPredictions, entity_tags, merge_windows

PRECISIONS = {"fp32": "model.onnx", "int8": "model.int8.onnx"}  # precision -> file name in the export directory
RUNTIMES = ("auto", "torch", "onnx")
PROBE_TOLERANCE = {"fp32": 1e-4, "int8": 0.1}  # largest |probability difference| to the safetensors model

if TYPE_CHECKING:  # torch is imported where a model runs: the pipeline's options (and --help) load without it
    from torch import Tensor
# {input_ids, attention_mask} (B, T) -> probabilities (B, T, tags)
Runtime = Callable[[Mapping[str, "Tensor"]], "Tensor"]


def check_device(device: str | None) -> None:
    """Refuse a device this machine cannot compute on (``ValueError``, one line): an unknown name, CUDA without a
    GPU or a CUDA build of torch, a GPU index past the last one, the data-less ``meta`` device."""
    if device is None:
        return
    import torch

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


WindowOutput = tuple[list[int], list[float], list[int]]  # a window's own tokens: tags, 1 - P(O), most likely entity tag


Progress = Callable[[int, int], None]  # (windows done, windows in all): called after every pass of the model


def forward_windows(
    runtime: Runtime,
    windows: Sequence,
    batch_size: int,
    point: OperatingPoint,
    pad: Callable[[list], Mapping],
    progress: Progress | None = None,
) -> list[WindowOutput]:
    """Tags at ``point`` (:func:`~thunder.model.decoding.entity_tags`), entity scores (1 - P(O)) and most likely entity
    tags of each window's own tokens, ``batch_size`` windows of similar length per pass (:func:`length_batches`,
    padded by ``pad``, the tokenizer's), in the order of ``windows``; ``progress`` hears of each pass."""
    outputs: list[WindowOutput] = [([], [], [])] * len(windows)
    done = 0
    for rows in length_batches([len(w.ids) for w in windows], batch_size):
        chunk = [windows[i] for i in rows]
        probs = runtime(pad([w.ids for w in chunk]))
        tags = entity_tags(probs, point.threshold).cpu().tolist()
        scores = (1 - probs[..., 0]).cpu().tolist()
        types = (probs[..., 1:].argmax(-1) + 1).cpu().tolist()
        for row, (i, window) in enumerate(zip(rows, chunk)):
            own = slice(1 + window.own_start - window.start, 1 + window.own_end - window.start)
            outputs[i] = (tags[row][own], scores[row][own], types[row][own])
        done += len(rows)
        if progress is not None:
            progress(done, len(windows))
    return outputs


def predict_windows(
    runtime: Runtime,
    windows: Sequence,
    n_docs: int,
    batch_size: int,
    point: OperatingPoint,
    pad: Callable[[list], Mapping],
    progress: Progress | None = None,
) -> list[TokenPredictions]:
    """The per-token predictions of ``n_docs`` documents from their windows (:func:`forward_windows`), merged once
    (:func:`~thunder.model.decoding.merge_windows`)."""
    return merge_windows(n_docs, windows, forward_windows(runtime, windows, batch_size, point, pad, progress))


class TorchRuntime:
    """The PyTorch model as loaded: a transformers token classifier, or a Thunder ``TokenClassifier``."""

    name = "torch"

    def __init__(self, model: Any) -> None:
        from lightning.pytorch import LightningModule

        self.model = model
        self.takes_batch = isinstance(model, LightningModule)  # TokenClassifier.forward(batch)

    def __call__(self, batch: Mapping[str, Tensor]) -> Tensor:
        import torch

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
        import torch

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
        import torch

        input_ids, attention_mask = batch["input_ids"].cpu(), batch["attention_mask"].cpu()
        rows = []
        for ids, mask in zip(input_ids, attention_mask):
            length = int(mask.sum())
            feed = {"input_ids": ids[None, :length].numpy(), "attention_mask": mask[None, :length].numpy()}
            logits = torch.from_numpy(self.session.run(["logits"], feed)[0][0])
            rows.append(torch.nn.functional.pad(logits, (0, 0, 0, input_ids.shape[1] - length)))
        return torch.stack(rows).float().softmax(-1)


def probe_batch(vocab_size: int, length: int = 48) -> dict[str, Tensor]:
    """A fixed two-window batch (the second one padded) spread over the vocabulary: the graph and the weights must
    agree on it."""
    import torch

    ids = torch.arange(length) * 7919 % (vocab_size - 5) + 5  # past the special tokens
    input_ids = torch.stack([ids, ids.flip(0)])
    input_ids[:, 0], input_ids[:, -1] = 1, 2  # [CLS] ... [SEP]
    attention_mask = torch.ones_like(input_ids)
    attention_mask[1, length // 2 :] = 0
    input_ids[1, length // 2 :] = 0
    return {"input_ids": input_ids, "attention_mask": attention_mask}
