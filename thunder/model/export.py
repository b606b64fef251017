"""Writing model artefacts: a Thunder checkpoint as an export directory (``thunder export``), any token classifier
with its tokenizer and label set as one (``thunder import``), never over an existing directory; an ONNX graph of an
export's model added to it (``thunder export --onnx``, :func:`write_onnx`).

An export directory holds a ``save_pretrained`` model (safetensors; ``config.json`` with ``id2label``), the tokenizer
files and ``thunder.json`` (:data:`~thunder.model.loader.EXPORT_FORMAT`: task, tokenizer fingerprint, label set with
its taxonomy, operating point, training windows, recipe); :meth:`thunder.model.loader.Artefact.open` reads it back.
"""

from __future__ import annotations

import json
import logging
import tempfile
import warnings
from pathlib import Path
from typing import Any

import torch
from transformers import PreTrainedModel

from thunder.language.release_tokenizer import load_tokenizer
from thunder.model import integrity
from thunder.model.decoding import OperatingPoint
from thunder.model.inference import PRECISIONS, PROBE_TOLERANCE, TorchRuntime, probe_batch
from thunder.model.loader import (
    EXPORT_FILE,
    EXPORT_FORMAT,
    Artefact,
    ArtefactError,
    check_fit,
    check_graph,
    checkpoint_recipe,
    label_set_from_dict,
    model_from_checkpoint,
    model_state,
    read_checkpoint,
    read_export_info,
    sha256,
    thunder_entry,
    tokenizer_fingerprint,
    tokenizer_from_files,
)

OPSET = 18  # the ONNX opset of the graphs thunder export writes
WEIGHT_DTYPES = {"float32": torch.float32, "float16": torch.float16}  # how an export may store its weights


def check_new_directory(out: str | Path) -> Path:
    """``out`` as a Path when it is absent or an empty directory (exports never overwrite)."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(f"{out} exists and is not empty; choose a new directory")
    return out


def export_checkpoint(
    checkpoint: str | Path,
    out: str | Path,
    tokenizer: str | Path | None = None,
    verify: str | Path | None = None,
    weights: str = "float32",
) -> Path:
    """Write the Hugging Face directory of a MaskedLM / TokenClassifier checkpoint (file or sharded directory).

    ``tokenizer`` is needed only when the checkpoint stores none; one that differs from the stored one is refused.
    ``verify``: a PEM public key the checkpoint's signature must verify with before it is read
    (:meth:`~thunder.model.loader.Artefact.open`). A classifier that cannot be verified (no fingerprint or self-test
    recorded) is refused unless :func:`~thunder.model.integrity.unverified_allowed`, and then its export records
    that it is unverified (``thunder.json``: ``unverified``, covered by its fingerprint), and only where it finds some
    of the self-test's identifiers (:func:`~thunder.model.integrity.check_detection`). ``weights``: the stored
    precision (:func:`write_export`).
    """
    if weights not in WEIGHT_DTYPES:
        raise ValueError(f"weights must be one of {', '.join(WEIGHT_DTYPES)}, got {weights!r}")
    out = check_new_directory(out)
    if verify is not None:
        Artefact.open(checkpoint, verify=verify)
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
    check_fit(model.config, tok, entry.get("tokenizer_fingerprint"), label_set, checkpoint,
              stored_inside=tokenizer is None)  # fmt: skip
    if label_set is not None:
        point = OperatingPoint.from_dict(entry.get("operating_point"))
        if Path(checkpoint).is_file():  # what it exports is what was written (not sharded)
            answers = integrity.verify(model_state(data), TorchRuntime(model), tok, point, (entry["label_set"],
                                       entry.get("tokenizer_fingerprint")), entry, integrity.SCORE_TOLERANCE,
                                       checkpoint, model.config)  # fmt: skip
        else:
            answers = integrity.self_test(TorchRuntime(model.float().eval()), tok, point)
    info: dict[str, Any] = {key: entry[key] for key in ("operating_point", "windows") if key in entry}
    stored_print = entry.get("tokenizer_fingerprint") or {}
    if label_set is not None and (entry.get("unverified") or entry.get("fingerprint") is None or entry.get("self_test")
                                  is None or (tokenizer is not None and "pipeline" not in stored_print)):  # fmt: skip
        integrity.check_detection(answers, checkpoint)  # a switched-off model is never given a fresh fingerprint
        info["unverified"] = entry.get("unverified") or f"{Path(checkpoint).name}, exported with --allow_unverified"
    recipe = checkpoint_recipe(data)
    if recipe:
        info["recipe"] = recipe
    return write_export(out, model, tok, label_set, entry["task"], weights=weights, **info)


def write_export(
    out: str | Path,
    model: PreTrainedModel,
    tokenizer: Any,
    label_set: Any,
    task: str,
    weights: str = "float32",
    **info: Any,
) -> Path:
    """Write an export directory: safetensors weights and config, tokenizer files, ``thunder.json`` (+ ``info``); a
    token classifier's fingerprint and self-test answers too (:func:`thunder.model.integrity.record`). ``weights``:
    ``float32``, or ``float16`` (half the size: the weights rounded to half precision once, stored so, loaded and run
    in float32; the fingerprint and the self-test are those of the rounded model, as it loads)."""
    out = check_new_directory(out)
    description: dict[str, Any] = {"format": EXPORT_FORMAT, "task": task, "tokenizer": tokenizer_fingerprint(tokenizer)}
    model = model.to(WEIGHT_DTYPES[weights]).float().eval()  # as it is loaded again
    if label_set is not None:
        description["label_set"] = label_set.to_dict()
        point = OperatingPoint.from_dict(info.get("operating_point"))
        description |= integrity.record(model.state_dict(), TorchRuntime(model), tokenizer, point,
                                        description["label_set"], description["tokenizer"], model.config,
                                        info.get("windows"), info.get("unverified"))  # fmt: skip
    model.to(WEIGHT_DTYPES[weights]).save_pretrained(out, safe_serialization=True)
    model.float()
    tokenizer.save_pretrained(out)
    text = json.dumps({**description, **info}, ensure_ascii=False, indent=2) + "\n"
    (out / EXPORT_FILE).write_text(text, encoding="utf-8")
    return out


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
    record it in its ``thunder.json``, its digest under the fingerprint; the graph is checked as at load before it is
    recorded."""
    if precision not in PRECISIONS:
        raise ValueError(f"ONNX precision must be one of {sorted(PRECISIONS)}, got {precision!r}")
    directory = Path(directory)
    loaded = Artefact.open(directory).classifier(runtime="torch")
    model = loaded.model
    target = directory / PRECISIONS[precision]
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        graph = Path(tmp) / "model.onnx"
        _export_graph(model, graph)
        if precision == "int8":
            from onnxruntime.quantization import QuantType, quantize_dynamic

            quantized = Path(tmp) / "model.int8.onnx"
            quantize_dynamic(graph, quantized, weight_type=QuantType.QInt8)
            graph = quantized
        runtime = check_graph(graph, model, precision, directory)
        integrity.check_runtime(runtime, loaded.tokenizer, loaded.operating_point, loaded.self_test,
                                PROBE_TOLERANCE[precision], directory / target.name)  # fmt: skip
        graph.replace(target)
    import onnxruntime

    info = read_export_info(directory)
    info["onnx"] = {"file": target.name, "precision": precision, "sha256": sha256(target), "opset": OPSET,
                    "torch": torch.__version__, "onnxruntime": onnxruntime.__version__}  # fmt: skip
    if info.get("fingerprint") is not None:  # the graph is one of the parts the fingerprint covers
        info["fingerprint_format"] = integrity.FINGERPRINT_FORMAT
        info["fingerprint"] = integrity.fingerprint(
            model.state_dict(), OperatingPoint.from_dict(info.get("operating_point")).to_dict(), info["label_set"],
            info["tokenizer"], info.get("windows"), info.get("unverified"), **integrity.covered(info, model.config))
    info_path = directory / EXPORT_FILE
    temporary = info_path.with_suffix(".tmp")
    temporary.write_text(json.dumps(info, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    temporary.replace(info_path)
    return target
