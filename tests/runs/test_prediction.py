"""Corpus-scale prediction: ``thunder predict`` with the DeidPredictor, CorpusDataModule and DeidWriter, and how it
fails closed (refused inputs and options, failed documents, interruption)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from lightning.pytorch import Trainer

from thunder.cli import main
from thunder.deid.pipeline import Deidentifier, PipelineOptions
from thunder.documents.sources import InputError
from thunder.identifiers.base import Recognizer, ScoredSpan
from thunder.runs.prediction import (
    CorpusDataModule,
    CorpusDataset,
    DeidPredictor,
    DeidWriter,
    list_documents,
)

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "configs" / "predict.yaml"
NO_MODEL = PipelineOptions(recognizers_only=True)


class FailOnMarker(Recognizer):
    """A test recognizer: raises on ``고장``, sends ``signal`` to its own process on ``중단``, finds nothing else."""

    name = "fail_on_marker"
    label = "내국인이름"

    def __init__(self, signal: int = 0) -> None:
        self.signal = signal

    def find(self, text: str) -> list[ScoredSpan]:
        if "고장" in text:
            raise RuntimeError("broken recognizer")
        if "중단" in text and self.signal:
            os.kill(os.getpid(), self.signal)
        return []


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "sub").mkdir(parents=True)
    for i in range(7):
        (root / f"doc{i}.txt").write_text(f"문서 {i}: 연락처 010-1234-567{i}로 전화하였다.\n", encoding="utf-8")
    records = [{"id": "j/1", "text": "메일 a@b.com 끝"}, {"id": "j2", "text": ""}]
    lines = [json.dumps(records[0]), "", json.dumps(records[1]), ""]
    (root / "sub" / "x.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "notes.csv").write_text("a,b\n", encoding="utf-8")
    return root


def expected_outputs() -> dict[str, str]:
    outputs = {f"doc{i}.txt": f"문서 {i}: 연락처 A로 전화하였다.\n" for i in range(7)}
    outputs.update({"sub/x/j_1.txt": "메일 A 끝", "sub/x/j2.txt": ""})
    return outputs


def written(out: Path) -> dict[str, str]:
    """The de-identified documents under ``out`` (not the spans, failures, lock or run record)."""
    return {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file()
            and not p.name.endswith(".jsonl") and not p.name.startswith(".")}  # fmt: skip


def predict(inputs: list[Path], out: Path, *options: str) -> None:
    """``thunder predict`` in this process, with the shipped config (the recognizers alone unless ``options`` name a
    model)."""
    alone = [] if "--model.init_args.pipeline.model" in options else ["--model.init_args.pipeline.recognizers_only", "true"]
    main(["predict", "--config", str(CONFIG), "--data.init_args.inputs", json.dumps([str(p) for p in inputs]),
          "--data.init_args.num_workers", "0", "--trainer.accelerator", "cpu", "--trainer.devices", "1",
          "--trainer.enable_progress_bar", "false", "--trainer.callbacks.init_args.output_dir", str(out),
          *alone, *options])  # fmt: skip


def test_list_documents(corpus: Path, tmp_path: Path) -> None:
    (corpus / "UPPER.TXT").write_text("대문자", encoding="utf-8")
    listed = list_documents([corpus])
    outputs = ["UPPER.TXT", *(f"doc{i}.txt" for i in range(7)), "sub/x/j_1.txt", "sub/x/j2.txt"]
    assert [r.output for r in listed.refs] == outputs
    j1, j2 = listed.refs[-2:]
    assert (j1.id, j1.line, j1.offset, j2.line) == ("j/1", 1, 0, 3)
    assert listed.skipped == [f"{corpus}: skipped files that are not .docm/.docx/.hwp/.hwpx/.jsonl/.md/.pdf/.txt (1 .csv)"]
    # two inputs keep their layout under the common folder, so equal names never collide
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "x.txt").write_text(name, encoding="utf-8")
    assert [r.output for r in list_documents([tmp_path / "a", tmp_path / "b"]).refs] == ["a/x.txt", "b/x.txt"]
    with pytest.raises(InputError, match="missing: no such file or directory"):
        list_documents([corpus / "missing"])


def test_predict_in_process_writes_and_resumes(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"

    def run() -> DeidWriter:
        writer = DeidWriter(str(out))
        trainer = Trainer(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False,
                          enable_model_summary=False, callbacks=[writer])  # fmt: skip
        trainer.predict(DeidPredictor(NO_MODEL), CorpusDataModule([str(corpus)], batch_size=3), return_predictions=False)
        return writer

    writer = run()
    assert written(out) == expected_outputs() and (writer.written, writer.failed) == (9, 0)
    spans = [json.loads(line) for line in (out / "doc3.txt.spans.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(s["doc"], s["text"], s["placeholder"]) for s in spans] == [("doc3.txt", "010-1234-5673", "A")]
    # a restarted run writes only what is missing and removes the temporary files of a killed run
    (out / "doc5.txt").unlink()
    stale = out / ".doc5.txt.thunder-abc123.tmp"
    stale.write_text("half", encoding="utf-8")
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*.txt")}
    writer = run()
    assert written(out) == expected_outputs() and not stale.exists()
    assert (writer.written, writer.already, writer.summary()) == (1, 8, "1 written, 8 already done, 0 failed, of 9 documents")
    assert all(p.stat().st_mtime_ns == mtime for p, mtime in before.items())


def test_each_output_keeps_its_own_record(tmp_path: Path) -> None:
    """Issue 71: outputs of other inputs made under other settings are never counted done by a later run; the folder
    holds one set of settings unless overwrite, and then each output keeps the record of the run that made it."""
    for name in ("set1", "set2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.txt").write_text("연락처 010-1234-5678로 전화하였다.\n", encoding="utf-8")
    out = tmp_path / "out"

    def run(inputs: str, operator: str, overwrite: bool = False) -> DeidWriter:
        writer = DeidWriter(str(out), overwrite=overwrite)
        trainer = Trainer(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False,
                          enable_model_summary=False, callbacks=[writer])  # fmt: skip
        module = DeidPredictor(PipelineOptions(recognizers_only=True, operator=operator))
        trainer.predict(module, CorpusDataModule([str(tmp_path / inputs)]), return_predictions=False)
        return writer

    assert run("set1", "placeholder").written == 1
    with pytest.raises(InputError, match=r"made under other settings \(.*set1.txt: operator: \"placeholder\" -> \"tag\""):
        run("set2", "tag")
    assert run("set2", "tag", overwrite=True).written == 1
    with pytest.raises(InputError, match=r"set1.txt: operator: \"placeholder\" -> \"tag\""):
        run("set1", "tag")  # never "already done"
    assert (out / "set1.txt").read_text(encoding="utf-8") == "연락처 A로 전화하였다.\n"
    record = json.loads((out / ".thunder-run.json").read_text(encoding="utf-8"))
    made = {name: record["made_under"][key]["operator"] for name, key in record["outputs"].items()
            if (out / name).is_file()}  # fmt: skip
    assert made == {"set1.txt": "placeholder", "set1.txt.spans.jsonl": "placeholder", "set2.txt": "tag",
                    "set2.txt.spans.jsonl": "tag"}  # fmt: skip


def test_thunder_predict_writes_no_config_and_exits_0(corpus: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    predict([corpus], tmp_path / "out")
    assert written(tmp_path / "out") == expected_outputs()
    assert not (tmp_path / "config.yaml").exists() and not (tmp_path / "out" / "config.yaml").exists()
    err = capsys.readouterr().err
    assert f"thunder predict: {corpus}: skipped files that are not .docm/.docx/.hwp/.hwpx/.jsonl/.md/.pdf/.txt (1 .csv)" in err
    assert "thunder predict: 9 written, 0 failed, of 9 documents" in err


def _every_part(path: Path) -> bytes:
    """A file's bytes; a ZIP package's: every part, expanded."""
    if not zipfile.is_zipfile(path):
        return path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        return b"".join(map(archive.read, archive.namelist()))


def test_predict_reads_and_writes_documents_as_thunder_deid_does(tmp_path: Path, monkeypatch, capsys) -> None:
    import docx
    from documents.hwp_files import judgment_hwp
    from hwpx import HwpxDocument

    from thunder.documents.formats import read_document

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    sentence = "피고인 홍길동은 010-1234-5678로 전화하였다."
    word = docx.Document()
    word.add_paragraph(sentence)
    word.save(corpus / "a.docx")
    hangul = HwpxDocument.new()
    hangul.add_paragraph(sentence)
    (corpus / "b.hwpx").write_bytes(hangul.to_bytes())
    judgment_hwp(corpus / "c.hwp")
    (corpus / "d.txt").write_text(sentence, encoding="utf-8")
    (corpus / "e.hwp").write_bytes(b"PK\x03\x04")
    monkeypatch.chdir(tmp_path)
    for out, out_format, names in ((tmp_path / "own", None, ["a.docx", "b.hwpx", "c.hwpx", "d.txt"]),
                                   (tmp_path / "docx", "docx", ["a.docx", "b.docx", "c.docx", "d.txt"])):  # fmt: skip
        options = ["--trainer.callbacks.init_args.out_format", out_format] if out_format else []
        with pytest.raises(SystemExit) as exit_info:
            predict([corpus], out, *options)
        assert exit_info.value.code == 1
        assert f"thunder predict: error: {corpus / 'e.hwp'}: a ZIP package under the .hwp suffix" in capsys.readouterr().err
        assert sorted(p.name for p in out.iterdir() if not p.name.endswith(".jsonl") and p.name[0] != ".") == names
        for name in names:
            text = read_document(out / name).text if name[-4:] != ".txt" else (out / name).read_text(encoding="utf-8")
            assert ("피고인 A는 피해자에게\n" if name[0] == "c" else "피고인 A는 B로 전화하였다.") in text, name
            content = _every_part(out / name)
            assert "홍길동".encode() not in content and b"010-1234-5678" not in content, name
        spans = [json.loads(line) for line in (out / f"{names[2]}.spans.jsonl").read_text(encoding="utf-8").splitlines()]
        assert {span["text"] for span in spans} >= {"홍길동", "900101-1234567", "김철수"}
        (failure,) = [json.loads(line) for line in (out / "failed.jsonl").read_text(encoding="utf-8").splitlines()]
        assert failure["file"] == str(corpus / "e.hwp")


BAD_DOCUMENTS = [  # (name, file content, the reported reason after "FILE[:LINE]: ")
    ("lone surrogate", b'{"id": "s", "text": "\\ud800"}\n', "1: text holds a lone surrogate at character 0"),
    ("text not a string", b'{"id": "n", "text": 5}\n', "1: bad JSONL record ('text' is not a string)"),
    ("text missing", b'\n{"id": "m"}\n', "2: bad JSONL record (missing 'text')"),
    ("not JSON", b"not json\n", "1: bad JSONL record (Expecting value: line 1 column 1 (char 0))"),
    ("invalid UTF-8 text", b"bad \xff here", " not valid UTF-8 at byte 4 (invalid start byte)"),
    ("recognizer error", "고장 난 문서".encode(), " not de-identified (RuntimeError: broken recognizer)"),
]  # fmt: skip


@pytest.mark.parametrize("name, content, reason", BAD_DOCUMENTS, ids=[case[0] for case in BAD_DOCUMENTS])
def test_a_bad_document_is_reported_and_the_others_written(
    name: str, content: bytes, reason: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("연락처 010-1234-5678", encoding="utf-8")
    bad = corpus / ("b.jsonl" if reason.startswith(("1:", "2:")) else "b.txt")
    bad.write_bytes(content)
    (corpus / "c.txt").write_text("메일 a@b.com", encoding="utf-8")
    out = tmp_path / "out"
    options = []
    if name == "recognizer error":
        options = ["--model.init_args.pipeline.recognizers", "[phone_number, test_prediction.FailOnMarker]"]
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        predict([corpus], out, "--data.init_args.batch_size", "3", *options)
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert f"thunder predict: error: {bad}:{reason}" in err
    assert "thunder predict: 2 written, 1 failed, of 3 documents" in err
    assert set(written(out)) == {"a.txt", "c.txt"} and "010-1234-5678" not in (out / "a.txt").read_text()
    (failure,) = [json.loads(line) for line in (out / "failed.jsonl").read_text(encoding="utf-8").splitlines()]
    assert failure["file"] == str(bad) and reason.split(": ", 1)[-1].strip() in failure["error"]
    assert not (tmp_path / "config.yaml").exists()


REFUSED = [  # (name, files to create, inputs, output dir, extra options, message fragment)
    ("duplicate JSONL id", {"c/d.jsonl": '{"id": "x", "text": "가"}\n{"id": "x", "text": "나"}\n'}, ["c"], "out", [],
     "c/d.jsonl:2: id 'x' repeats line 1"),
    ("ids equal once made safe", {"c/d.jsonl": '{"id": "j/1", "text": "가"}\n{"id": "j_1", "text": "나"}\n'}, ["c"],
     "out", [], "c/d.jsonl:2: would be written to out/d/j_1.txt, as c/d.jsonl:1 is"),
    ("text file and JSONL record", {"c/d.jsonl": '{"id": "x", "text": "가"}\n', "c/d/x.txt": "나"}, ["c"], "out", [],
     "would be written to out/d/x.txt"),
    ("output names a directory's file", {"c/d": "가", "c/d.jsonl": '{"id": "x", "text": "나"}\n'}, ["c/d", "c/d.jsonl"],
     "out", [], "needs out/d as a directory, but that is the output of c/d"),
    ("output over an input", {"a/x.txt": "가", "x.txt": "나"}, ["a/x.txt", "x.txt"], ".", [],
     "a/x.txt: its output a/x.txt is an input file"),
    ("output dir is the input dir", {"c/x.txt": "가"}, ["c"], "c", [], "output_dir c is inside the input directory"),
    ("output dir inside the input dir", {"c/x.txt": "가"}, ["c"], "c/out", [], "is inside the input directory"),
    ("missing input", {}, ["nowhere"], "out", [], "nowhere: no such file or directory"),
    ("no inputs", {}, [], "out", [], "no inputs: give files or directories"),
    ("batch_size -1", {"c/x.txt": "가"}, ["c"], "out", ["--model.init_args.pipeline.batch_size", "-1"],
     "batch_size must be a whole number of at least 1, got -1"),
    ("batch_size 0", {"c/x.txt": "가"}, ["c"], "out", ["--model.init_args.pipeline.batch_size", "0"], "batch_size"),
    ("max_length negative", {"c/x.txt": "가"}, ["c"], "out", ["--model.init_args.pipeline.max_length", "-5"],
     "max_length"),
    ("stride not below the window", {"c/x.txt": "가"}, ["c"], "out", ["--model.init_args.pipeline.stride", "600"],
     "stride"),
    ("threshold outside (0, 1)", {"c/x.txt": "가"}, ["c"], "out", ["--model.init_args.pipeline.threshold", "1.5"],
     "threshold must lie strictly between 0 and 1"),
    ("unknown operator", {"c/x.txt": "가"}, ["c"], "out", ["--model.init_args.pipeline.operator", "nosuch"],
     "nosuch"),
    ("unknown recognizer", {"c/x.txt": "가"}, ["c"], "out", ["--model.init_args.pipeline.recognizers", "[nosuch]"],
     "unknown recognizer 'nosuch'"),
    ("document batch_size 0", {"c/x.txt": "가"}, ["c"], "out", ["--data.init_args.batch_size", "0"],
     "batch_size must be at least 1"),
    ("out_format pdf", {"c/x.docx": "가"}, ["c"], "out", ["--trainer.callbacks.init_args.out_format", "pdf"],
     "out_format 'pdf': choose one of text, docx, hwpx"),
    ("a PDF and a text file, one output name", {"c/x.pdf": "가", "c/x.txt": "나"}, ["c"], "out", [],
     "would be written to out/x.txt"),
]  # fmt: skip


@pytest.mark.parametrize("name, files, inputs, out, options, message", REFUSED, ids=[case[0] for case in REFUSED])
def test_refused_before_any_work(
    name: str, files: dict[str, str], inputs: list[str], out: str, options: list[str], message: str,
    tmp_path: Path, monkeypatch, capsys,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(SystemExit) as exit_info:
        predict([Path(p) for p in inputs], Path(out), *options)
    code = exit_info.value.code  # a message (exit 1), or 2 after the option parser printed it
    line = code if isinstance(code, str) else capsys.readouterr().err.strip()
    assert code not in (0, None) and line.startswith("thunder predict: error: ") and "\n" not in line, line
    assert message in line
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before  # nothing written or changed


def test_a_failing_batch_is_redone_document_by_document(corpus: Path, tmp_path: Path, capsys) -> None:
    import torch
    from helpers import KeywordModel

    class Poisoned(torch.nn.Module):
        """A forward pass over windows that hold the ``poison`` token fails."""

        def __init__(self, inner: torch.nn.Module, poison: int) -> None:
            super().__init__()
            self.inner, self.poison = inner, poison

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            if (input_ids == self.poison).any():
                raise RuntimeError("poisoned window")
            return self.inner(input_ids, attention_mask)

    from thunder.language.tokenizer import ThunderTokenizer
    from thunder.taxonomy import LabelSet, Taxonomy

    (corpus / "doc4.txt").write_text("독약 문서", encoding="utf-8")
    tokenizer = ThunderTokenizer.train([p.read_text(encoding="utf-8") for p in corpus.glob("doc*.txt")], 300, 1)
    label_set = LabelSet(Taxonomy.load(), "category", "IO")
    positive = set(tokenizer.encode("문서").ids)
    model = KeywordModel(tokenizer.vocab_size, len(label_set), positive, label_set.inside_id("사건관계인특정정보"))
    reference = Deidentifier(model, tokenizer, label_set, max_length=8, stride=2, batch_size=2)
    expected = {p.name: reference(p.read_text(encoding="utf-8")).text for p in corpus.glob("doc*.txt")}
    predictor = DeidPredictor(PipelineOptions(recognizers_only=True, max_length=8, stride=2, batch_size=2))
    poison = tokenizer.encode("독약").ids[0]
    predictor.deid = Deidentifier(Poisoned(model, poison), tokenizer, label_set, max_length=8, stride=2, batch_size=2)
    predictor.model = predictor.deid.model
    out = tmp_path / "out"
    writer = DeidWriter(str(out), spans=False)
    trainer = Trainer(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False,
                      enable_model_summary=False, callbacks=[writer])  # fmt: skip
    inputs = [str(corpus / f"doc{i}.txt") for i in range(7)]
    with torch.inference_mode():
        trainer.predict(predictor, CorpusDataModule(inputs, batch_size=3), return_predictions=False)
    del expected["doc4.txt"]
    assert written(out) == expected and written(out)["doc1.txt"].startswith("A 1: 연락처 B로")
    assert (writer.written, writer.failed) == (6, 1)
    assert f"{corpus / 'doc4.txt'}: not de-identified (RuntimeError: poisoned window)" in capsys.readouterr().err
    assert not list(out.rglob("*.spans.jsonl"))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupted_run_keeps_finished_documents_and_exits_130(
    signum: int, corpus: Path, tmp_path: Path, monkeypatch, capsys, caplog
) -> None:
    (corpus / "doc3.txt").write_text("중단 문서 010-1111-2222", encoding="utf-8")
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)
    recognizers = f"[phone_number, email, {{class_path: test_prediction.FailOnMarker, init_args: {{signal: {int(signum)}}}}}]"
    previous = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as exit_info:
        predict([corpus], out, "--data.init_args.batch_size", "1", "--model.init_args.pipeline.recognizers", recognizers)
    assert exit_info.value.code == 130
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == previous
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == "interrupted: 3 of 9 documents written"
    assert "Traceback" not in err and "KeyboardInterrupt" not in err + caplog.text
    assert sorted(written(out)) == ["doc0.txt", "doc1.txt", "doc2.txt"]
    # a restart under other settings is refused; under the same ones it finishes the rest
    with pytest.raises(SystemExit, match="made under other settings \\(.*doc0.txt: recognizers: "):
        predict([corpus], out, "--model.init_args.pipeline.recognizers", "[phone_number, email]")
    (corpus / "doc3.txt").write_text("재개 문서 010-1111-2222", encoding="utf-8")
    predict([corpus], out, "--model.init_args.pipeline.recognizers", recognizers)
    assert written(out)["doc3.txt"] == "재개 문서 A" and len(written(out)) == 9
    assert "thunder predict: 6 written, 3 already done, 0 failed, of 9 documents" in capsys.readouterr().err


@pytest.mark.slow
def test_thunder_predict_two_processes(corpus: Path, tmp_path: Path) -> None:
    """``thunder predict`` with the shipped config and a model, DDP over 2 CPU processes (gloo); a rerun skips
    finished documents; a failed document on either process makes the run exit 1."""
    from helpers import write_tiny_export

    export = write_tiny_export(tmp_path / "export")
    deid = Deidentifier.from_pretrained(export, max_length=16, stride=4)
    expected = {ref.output: deid(doc.text).text for ref in list_documents([corpus]).refs
                if (doc := CorpusDataset([ref])[0]) is not None}  # fmt: skip
    assert len(expected) == 9
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "thunder", "predict", "--config", str(CONFIG),
        "--model.init_args.pipeline.model", str(export), "--model.init_args.pipeline.max_length", "16",
        "--model.init_args.pipeline.stride", "4", "--data.init_args.inputs", f"[{corpus}]",
        "--data.init_args.batch_size", "2", "--data.init_args.num_workers", "1", "--trainer.accelerator", "cpu",
        "--trainer.devices", "2", "--trainer.strategy", "ddp", "--trainer.enable_progress_bar", "false",
        "--trainer.callbacks.init_args.output_dir", str(out),
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Starting with 2 processes" in done.stderr + done.stdout
    assert written(out) == expected and not (tmp_path / "config.yaml").exists()
    (out / "doc2.txt").unlink()
    kept = {p: p.stat().st_mtime_ns for p in out.rglob("*.txt")}
    (corpus / "sub" / "x.jsonl").open("a", encoding="utf-8").write('{"id": "bad", "text": 1}\n')
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "x.jsonl:5: bad JSONL record ('text' is not a string)" in done.stderr
    assert "thunder predict: 1 written, 8 already done, 1 failed, of 10 documents" in done.stderr
    assert written(out) == expected
    assert all(p.stat().st_mtime_ns == mtime for p, mtime in kept.items())


def test_a_long_run_prints_progress_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    """``thunder deid`` over many documents says how far it is: done of all, documents/s, time left."""
    import thunder.runs.plan as plan

    monkeypatch.setattr(plan, "PROGRESS_SECONDS", 0.0)
    (tmp_path / "in").mkdir()
    for n in range(3):
        (tmp_path / "in" / f"{n}.txt").write_text(f"연락처 010-1234-567{n}", encoding="utf-8")
    main(["deid", "--recognizers_only", str(tmp_path / "in"), "--out", str(tmp_path / "out")])
    lines = [line for line in capsys.readouterr().err.splitlines() if "documents/s" in line]
    assert [line.split(",")[0] for line in lines] == [f"thunder deid: {n}/3 documents" for n in (1, 2, 3)]
    assert all(line.endswith(" left") for line in lines)


def test_a_long_document_prints_progress_inside_it(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    """One long judgment: lines say how many of its windows the model has read."""
    from helpers import write_tiny_export

    import thunder.runs.plan as plan

    monkeypatch.setattr(plan, "PROGRESS_SECONDS", 0.0)
    export = write_tiny_export(tmp_path / "export")
    (tmp_path / "long.txt").write_text("피고인은 피해자에게 전화하였다. " * 400, encoding="utf-8")
    main(["deid", str(tmp_path / "long.txt"), "--model", str(export), "--out", str(tmp_path / "out"),
          "--batch_size", "2", "--max_length", "64", "--stride", "16"])  # fmt: skip
    lines = [line for line in capsys.readouterr().err.splitlines() if "windows of the model" in line]
    assert lines and lines[0].startswith("thunder deid: document 1 of 1: 2/")
    done = [int(line.split(": ")[2].split("/")[0].replace(",", "")) for line in lines]
    assert done == sorted(done) and len(set(done)) == len(done)
