"""ONNX Runtime inference (``thunder export --onnx``): the optimised path keeps the eager path's spans on the demo
corpus, and a graph that is not the export's own is refused with one line."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
import torch
from helpers import rerecord

from thunder.cli import main
from thunder.deid.pipeline import Deidentifier
from thunder.model.decoding import TokenPredictions
from thunder.model.inference import OnnxRuntime, TorchRuntime, length_batches
from thunder.model.loader import ArtefactError

pytest.importorskip("onnxruntime")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
from bench_deid import ceiling, demo_documents  # noqa: E402

MARGIN = 0.02  # int8 weights move this model's token probabilities by less (measured: 0.013 at most)


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny model trained a few steps on the demo corpus, exported with an int8 ONNX graph."""
    tmp = tmp_path_factory.mktemp("onnx")
    here = Path.cwd()
    os.chdir(tmp)  # the demo config writes under runs/demo
    try:
        main(["fit", "--config", str(REPO / "configs" / "demo.yaml"), "--model.init_args.backbone", "tiny",
              "--trainer.max_steps", "24", "--trainer.enable_progress_bar", "false",
              "--trainer.enable_model_summary", "false"])  # fmt: skip
    finally:
        os.chdir(here)
    main(["export", "--checkpoint", str(tmp / "runs/demo/checkpoints/last.ckpt"), "--out", str(tmp / "export"),
          "--onnx", "int8"])  # fmt: skip
    return tmp / "export"


def replaced(result) -> tuple:
    return result.text, [(s.start, s.end, s.label, s.placeholder, s.source) for s in result.spans]


def ambiguous(deid: Deidentifier, windows: list, margin: float) -> list[list[bool]]:
    """Per window (in ``windows``' order) and own token: the eager probabilities put it within ``margin`` of a
    decision (1 - P(O) near the threshold or the growing threshold, or the two likeliest entity types nearly tied)."""
    marks: list[list[bool]] = []
    for window in windows:
        probs = deid.runtime(deid.tokenizer.pad([window.ids]))[0]
        own = probs[1 + window.own_start - window.start : 1 + window.own_end - window.start]
        score = 1 - own[:, 0]
        top = own[:, 1:].topk(min(2, own.shape[1] - 1), dim=-1).values
        tied = (top[:, 0] - top[:, -1] <= margin) if top.shape[1] > 1 else torch.zeros_like(score, dtype=torch.bool)
        near = [(score - t).abs() <= margin for t in (deid.operating_point.threshold, min(deid.operating_point.grow_threshold, deid.operating_point.threshold))]
        marks.append((near[0] | near[1] | tied).tolist())
    return marks


def test_onnx_int8_keeps_the_eager_spans_on_the_demo_corpus(export: Path) -> None:
    docs = demo_documents()
    eager = Deidentifier.from_pretrained(export, runtime="torch")
    fast = Deidentifier.from_pretrained(export)  # auto: the export's ONNX graph
    assert isinstance(eager.runtime, TorchRuntime)
    assert isinstance(fast.runtime, OnnxRuntime) and fast.runtime.precision == "int8"
    expected, found = eager.predict_tokens(docs), fast.predict_tokens(docs)
    windows = eager.windows(docs)
    marks = ambiguous(eager, windows, MARGIN)
    near: list[list[bool]] = [[] for _ in docs]
    for window, mark in zip(windows, marks):
        near[window.doc].extend(mark)
    compared = 0
    for doc, a, b, close in zip(docs, expected, found, near):
        assert a.offsets == b.offsets and a.morphemes == b.morphemes and len(close) == len(a.tags)
        assert max(abs(x - y) for x, y in zip(a.scores, b.scores)) < MARGIN
        assert all(close[i] for i, (x, y) in enumerate(zip(a.tags, b.tags)) if x != y)  # decisions move only there
        if not any(close):
            compared += 1
            assert replaced(eager.finish(doc, a)) == replaced(fast.finish(doc, b))
    assert compared >= len(docs) // 4, "too few documents without a near-tie to compare"
    assert sum(len(eager.model_spans(d, p)) for d, p in zip(docs, expected)) > 0, "the model finds no spans"


def test_batched_windows_give_the_one_by_one_predictions(export: Path) -> None:
    docs = demo_documents()[:12] + ["피고인 홍길동은 " * 300]  # a long document: overlapping windows
    for runtime, tolerance in (("torch", 1e-5), ("onnx", 0.0)):  # ONNX Runtime runs every window alone
        one = Deidentifier.from_pretrained(export, runtime=runtime, batch_size=1, max_length=128, stride=32)
        many = Deidentifier.from_pretrained(export, runtime=runtime, batch_size=5, max_length=128, stride=32)
        for a, b in zip(one.predict_tokens(docs), many.predict_tokens(docs)):
            assert a.tags == b.tags and a.offsets == b.offsets
            assert max(abs(x - y) for x, y in zip(a.scores, b.scores)) <= tolerance


def test_mecab_runs_once_per_document_and_gives_the_same_spans(
    export: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import thunder.language.morphemes as morphemes

    deid = Deidentifier.from_pretrained(export, runtime="torch")
    docs = demo_documents()[:8]
    predictions = deid.predict_tokens(docs)
    again = [TokenPredictions(p.offsets, p.tags, p.scores) for p in predictions]  # no pieces: Mecab runs again
    calls = []
    real = morphemes._parse
    monkeypatch.setattr(morphemes, "_parse", lambda text: calls.append(text) or real(text))
    with_pieces = [replaced(deid.finish(d, p)) for d, p in zip(docs, predictions)]
    assert calls == []
    assert with_pieces == [replaced(deid.finish(d, p)) for d, p in zip(docs, again)]
    assert len(calls) == len(docs)


def copy_of(export: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(export, copy)
    return copy


def edit_info(directory: Path, **onnx) -> None:
    info = json.loads((directory / "thunder.json").read_text(encoding="utf-8"))
    info["onnx"].update(onnx)
    (directory / "thunder.json").write_text(json.dumps(info), encoding="utf-8")


def refused(directory: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """The one line ``thunder deid --model directory`` ends with (exit code non-zero, nothing written)."""
    with pytest.raises(SystemExit) as stopped:
        main(["deid", "--model", str(directory), "--recognizers", "[]"])
    assert stopped.value.code not in (0, None)
    message = str(stopped.value.code) + capsys.readouterr().err
    assert "Traceback" not in message
    return message


def test_a_changed_graph_is_refused(export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = copy_of(export, tmp_path)
    with (copy / "model.int8.onnx").open("ab") as graph:
        graph.write(b"\0")
    assert "SHA-256 differs" in refused(copy, capsys)


def test_a_graph_of_other_weights_is_refused(export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from transformers import AutoModelForTokenClassification

    copy = copy_of(export, tmp_path)
    model = AutoModelForTokenClassification.from_pretrained(copy)
    with torch.no_grad():
        model.classifier.weight.mul_(-1)  # another head on the same graph file
    model.save_pretrained(copy, safe_serialization=True)
    assert "not the ones the model was written with" in refused(copy, capsys)  # the fingerprint
    rerecord(copy)  # ... recorded again to match: the graph still does not
    assert "not this model's graph" in refused(copy, capsys)
    with pytest.raises(ArtefactError, match="not this model's graph"):
        Deidentifier.from_pretrained(copy)
    assert isinstance(Deidentifier.from_pretrained(copy, runtime="torch").runtime, TorchRuntime)


@pytest.mark.parametrize("name", ["../model.int8.onnx", "/etc/passwd", ".hidden"])
def test_a_graph_name_that_leaves_the_directory_is_refused(
    name: str, export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = copy_of(export, tmp_path)
    edit_info(copy, file=name)
    assert "not a plain file name" in refused(copy, capsys)


def test_a_graph_reading_external_data_is_refused(export: Path, tmp_path: Path) -> None:
    import onnx

    from thunder.model.loader import sha256 as _sha256

    copy = copy_of(export, tmp_path)
    graph = onnx.load(str(copy / "model.int8.onnx"))
    onnx.save(graph, str(copy / "model.int8.onnx"), save_as_external_data=True, location="weights.bin",
              size_threshold=0)  # fmt: skip
    edit_info(copy, sha256=_sha256(copy / "model.int8.onnx"))
    rerecord(copy)
    with pytest.raises(ArtefactError, match="reads weights from other files"):
        Deidentifier.from_pretrained(copy)


def test_runtime_onnx_needs_a_graph_and_unknown_runtimes_are_refused(
    export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = copy_of(export, tmp_path)
    info = json.loads((copy / "thunder.json").read_text(encoding="utf-8"))
    del info["onnx"]
    (copy / "thunder.json").write_text(json.dumps(info), encoding="utf-8")
    rerecord(copy)  # (the graph's entry is under the fingerprint)
    assert isinstance(Deidentifier.from_pretrained(copy).runtime, TorchRuntime)
    with pytest.raises(ArtefactError, match="no ONNX graph"):
        Deidentifier.from_pretrained(copy, runtime="onnx")
    with pytest.raises(SystemExit, match="runtime must be one of auto, torch, onnx"):
        main(["deid", "--model", str(export), "--runtime", "tensorrt"])
    with pytest.raises(SystemExit, match="--onnx must be one of fp32, int8"):
        main(["export", "--checkpoint", "x.ckpt", "--out", str(tmp_path / "out"), "--onnx", "int4"])
    assert not (tmp_path / "out").exists()


def test_length_batches_sort_windows_by_length() -> None:
    assert length_batches([5, 2, 9, 2, 7], 2) == [[1, 3], [0, 4], [2]]
    assert length_batches([], 3) == []


def test_the_ceiling_counts_the_forward_pass_of_every_window(
    export: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from thunder.model.loader import Artefact

    model, tokenizer, _ = Artefact.open(export).classifier()[:3]
    short = demo_documents()[:2]

    def gflop(docs: list[str], max_length: int = 512) -> float:
        ceiling(model, tokenizer, docs, max_length, 32)
        line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("forward pass"))
        return float(line.split()[2])

    one = gflop(short)
    assert one > 0
    # a document twice as long costs about twice the operations; cut into more windows, it costs more still
    assert 1.6 * one < gflop(["\n".join(short[:1] * 2), "\n".join(short[1:] * 2)]) < 2.6 * one
    assert gflop(short, max_length=64) > one


class SaysNothing(OnnxRuntime):
    """The export's own graph, except that it answers O on every window that is not the load-time probe batch."""

    def __call__(self, batch):
        probabilities = super().__call__(batch)
        if batch["input_ids"].shape[-1] == 48:  # the probe batch's length (inference.probe_batch)
            return probabilities
        silent = torch.zeros_like(probabilities)
        silent[..., 0] = 1.0
        return silent


def test_the_graph_that_de_identifies_is_the_one_the_fingerprint_and_the_self_test_cover(
    export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Class: a model's way in. Its graph entry, its configuration and its answers on the runtime that de-identifies
    are checked, not only the weights the graph was made from."""
    import thunder.model.loader as loader
    from thunder.model.integrity import IntegrityError

    import onnx
    from onnx import numpy_helper

    from thunder.model.loader import sha256 as _sha256

    copy = copy_of(export, tmp_path)
    graph = onnx.load(str(copy / "model.int8.onnx"))
    weight = next(t for t in graph.graph.initializer if t.data_type == onnx.TensorProto.FLOAT and t.dims)
    weight.CopyFrom(numpy_helper.from_array(-numpy_helper.to_array(weight), weight.name))  # another graph...
    onnx.save(graph, str(copy / "model.int8.onnx"))
    edit_info(copy, sha256=_sha256(copy / "model.int8.onnx"))  # ... its digest written where the old one was
    assert "architecture or graph are not the ones" in refused(copy, capsys)

    copy = copy_of(export, tmp_path / "config")
    config = json.loads((copy / "config.json").read_text(encoding="utf-8"))
    config["max_relative_positions"] = config.get("max_relative_positions", -1) + 7  # a position setting
    (copy / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert "architecture or graph are not the ones" in refused(copy, capsys)

    real = loader.check_graph
    monkeypatch.setattr(loader, "check_graph", lambda path, *rest: real(path, *rest) and SaysNothing(path, "int8"))
    with pytest.raises(IntegrityError, match="answers the self-test differently"):
        Deidentifier.from_pretrained(export)  # it agrees on the probe and says nothing elsewhere
    assert isinstance(Deidentifier.from_pretrained(export, runtime="torch").runtime, TorchRuntime)
