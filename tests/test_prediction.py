"""Corpus-scale prediction: ``thunder predict`` with the DeidPredictor, CorpusDataModule and DeidWriter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lightning.pytorch import Trainer

from thunder.deid import Deidentifier
from thunder.prediction import CorpusDataModule, CorpusDataset, DeidPredictor, DeidWriter, list_documents

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "sub").mkdir(parents=True)
    for i in range(7):
        (root / f"doc{i}.txt").write_text(f"문서 {i}: 연락처 010-1234-567{i}로 전화하였다.\n", encoding="utf-8")
    records = [{"id": "j/1", "text": "메일 a@b.com 끝"}, {"id": "j2", "text": ""}]
    lines = [json.dumps(records[0]), "not json", json.dumps(records[1]), ""]
    (root / "sub" / "x.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "bad.txt").write_bytes(b"bad \xff here")
    return root


def expected_outputs() -> dict[str, str]:
    outputs = {f"doc{i}.txt": f"문서 {i}: 연락처 A로 전화하였다.\n" for i in range(7)}
    outputs.update({"sub/x/j_1.txt": "메일 A 끝", "sub/x/j2.txt": ""})
    return outputs


def written(out: Path) -> dict[str, str]:
    return {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8") for p in out.rglob("*.txt")}


def test_list_documents(corpus: Path) -> None:
    refs = list_documents([corpus])
    assert [r.output for r in refs] == ["bad.txt", *(f"doc{i}.txt" for i in range(7)), "sub/x/j_1.txt", "sub/x/j2.txt"]
    assert refs[-2].id == "j/1" and refs[-2].offset == 0 and refs[-1].offset > 0
    with pytest.raises(FileNotFoundError, match="missing"):
        list_documents([corpus / "missing"])


def test_predict_in_process_writes_and_resumes(corpus: Path, tmp_path: Path, caplog) -> None:
    out = tmp_path / "out"

    def predict() -> None:
        trainer = Trainer(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False,
                          enable_model_summary=False, callbacks=[DeidWriter(str(out))])  # fmt: skip
        trainer.predict(DeidPredictor(), CorpusDataModule([str(corpus)], batch_size=3), return_predictions=False)

    predict()
    assert written(out) == expected_outputs()
    assert "bad.txt: not valid UTF-8 at byte 4" in caplog.text and "x.jsonl:2: bad JSONL record" in caplog.text
    spans = [json.loads(line) for line in (out / "doc3.txt.spans.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(s["doc"], s["text"], s["placeholder"]) for s in spans] == [("doc3.txt", "010-1234-5673", "A")]
    # a restarted run writes only what is missing
    (out / "doc5.txt").unlink()
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*.txt")}
    predict()
    assert written(out) == expected_outputs()
    assert all(p.stat().st_mtime_ns == mtime for p, mtime in before.items())
    assert not list(out.rglob("*.tmp"))


def test_predictor_with_a_model_matches_the_deidentifier(corpus: Path, tmp_path: Path) -> None:
    import torch
    from test_deid import KeywordModel  # noqa: PLC0415  (shared fake model)

    from thunder.taxonomy import LabelSet, Taxonomy
    from thunder.tokenizer import ThunderTokenizer

    tokenizer = ThunderTokenizer.train([p.read_text(encoding="utf-8") for p in corpus.glob("doc*.txt")], 300, 1)
    label_set = LabelSet(Taxonomy.load(), "category", "IO")
    positive = set(tokenizer.encode("문서").ids)
    model = KeywordModel(tokenizer.vocab_size, len(label_set), positive, label_set.inside_id("사건관계인특정정보"))
    predictor = DeidPredictor(max_length=8, stride=2, window_batch_size=2)
    predictor.deid = Deidentifier(model, tokenizer, label_set, max_length=8, stride=2, batch_size=2)
    predictor.model = model
    out = tmp_path / "out"
    trainer = Trainer(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False,
                      enable_model_summary=False, callbacks=[DeidWriter(str(out), spans=False)])  # fmt: skip
    with torch.inference_mode():
        trainer.predict(predictor, CorpusDataModule([str(corpus / "doc1.txt")]), return_predictions=False)
    text = (corpus / "doc1.txt").read_text(encoding="utf-8")
    assert written(out) == {"doc1.txt": predictor.deid(text).text}
    assert written(out)["doc1.txt"].startswith("A 1: 연락처 B로")
    assert not list(out.rglob("*.spans.jsonl"))


@pytest.mark.slow
def test_thunder_predict_two_processes(corpus: Path, tmp_path: Path) -> None:
    """``thunder predict`` with the shipped config and a model, DDP over 2 CPU processes (gloo); a rerun skips
    finished documents."""
    from test_deid import write_tiny_export  # noqa: PLC0415  (shared tiny model)

    export = write_tiny_export(tmp_path / "export")
    deid = Deidentifier.from_pretrained(export, max_length=16, stride=4)
    expected = {ref.output: deid(doc.text).text for ref in list_documents([corpus])
                if (doc := CorpusDataset([ref])[0]) is not None}  # fmt: skip
    assert len(expected) == 9
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "thunder", "predict", "--config", str(REPO / "configs" / "predict.yaml"),
        "--model.init_args.model", str(export), "--model.init_args.max_length", "16",
        "--model.init_args.stride", "4", "--data.init_args.inputs", f"[{corpus}]", "--data.init_args.batch_size", "2",
        "--data.init_args.num_workers", "1", "--trainer.accelerator", "cpu", "--trainer.devices", "2",
        "--trainer.strategy", "ddp", "--trainer.enable_progress_bar", "false",
        "--trainer.callbacks.init_args.output_dir", str(out),
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Starting with 2 processes" in done.stderr + done.stdout
    assert written(out) == expected
    (out / "doc2.txt").unlink()
    kept = {p: p.stat().st_mtime_ns for p in out.rglob("*.txt")}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert written(out) == expected
    assert all(p.stat().st_mtime_ns == mtime for p, mtime in kept.items())
