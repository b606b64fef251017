"""End to end: the demo config trains through `thunder fit`, and its checkpoint de-identifies text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForTokenClassification

from thunder.cli import main
from thunder.deid.pipeline import Deidentifier
from thunder.taxonomy import Taxonomy

REPO = Path(__file__).resolve().parents[2]
DEMO = str(REPO / "configs" / "demo.yaml")
MEDICAL = REPO / "configs" / "taxonomies" / "medical_records"
MEDICAL_TAXONOMY = REPO / "configs" / "taxonomies" / "medical_records.yaml"
MEDICAL_DEMO = str(REPO / "configs" / "medical_demo.yaml")


@pytest.fixture()
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in a temporary directory so the config's relative `runs/demo` lands there."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_demo_fit_writes_checkpoint_logs_and_a_working_model(in_tmp: Path) -> None:
    main(["fit", "--config", DEMO, "--trainer.max_steps", "20", "--trainer.enable_progress_bar", "false"])
    checkpoint = in_tmp / "runs" / "demo" / "checkpoints" / "last.ckpt"
    assert checkpoint.is_file()
    assert list((in_tmp / "runs" / "demo" / "lightning_logs").rglob("events.out.tfevents.*"))
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    assert 0 < state["global_step"] <= 20  # last.ckpt is written at the end of each epoch
    assert "사건관계인특정정보" in " ".join(state["thunder"]["label_set"]["names"])

    text = "피고인 홍길동은 피해자에게 전화(010-2345-6789)하였다.\n\n  다음 날 다시 만났다."
    result = Deidentifier.from_pretrained(checkpoint)(text)
    assert "010-2345-6789" not in result.text
    assert result.text.endswith("\n\n  다음 날 다시 만났다.") and result.text.startswith("피고인 ")


def test_a_model_trained_on_a_user_taxonomy_works_everywhere(in_tmp: Path, capsys: pytest.CaptureFixture) -> None:
    """configs/medical_demo.yaml (another domain, another taxonomy): train a few steps, then use the checkpoint and its
    export with no --taxonomy anywhere: Python API, thunder deid, thunder evaluate, thunder export, transformers."""
    main(  # run in a temporary directory: the config's taxonomy and data paths are read from its folder
        [
            "fit", "--config", MEDICAL_DEMO,
            "--trainer.max_steps", "3", "--trainer.limit_val_batches", "1", "--trainer.enable_progress_bar", "false",
        ]
    )  # fmt: skip
    checkpoint = in_tmp / "runs" / "medical_demo" / "checkpoints" / "last.ckpt"
    record = "환자 김민수(연락처 010-2345-6789)는 한빛정형외과의원에 내원하였다."
    deid = Deidentifier.from_pretrained(checkpoint)
    result = deid(record)
    assert result.spans and {s.label for s in result.spans} <= set(Taxonomy.load(MEDICAL_TAXONOMY).labels)
    assert "010-2345-6789" not in result.text
    phone = next(r for r in deid.recognizers if r.name == "phone_number")
    assert (phone.label, phone.category) == ("연락처", "환자정보")  # the user taxonomy's own label for phones

    source, spans = in_tmp / "record.txt", in_tmp / "spans.jsonl"
    source.write_text(record, encoding="utf-8")
    main(["deid", "--model", str(checkpoint), str(source), "--out", str(in_tmp / "out"), "--spans", str(spans)])
    assert "010-2345-6789" not in (in_tmp / "out" / "record.txt").read_text(encoding="utf-8")
    labels = {json.loads(line)["label"] for line in spans.read_text(encoding="utf-8").splitlines()}
    assert labels and labels <= set(Taxonomy.load(MEDICAL_TAXONOMY).labels)

    report_path = in_tmp / "report.json"  # the recipe training stored in the checkpoint: no data path retyped
    main(["evaluate", "--model", str(checkpoint), "--split", "test", "--json", str(report_path)])
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["meta"]["taxonomy"] == "medical-records" and report["leaks"]["all"]["mentions"] > 0
    assert (report["meta"]["recipe_from"], report["meta"]["data"]) == (str(checkpoint), str(MEDICAL / "annotated"))
    assert report["meta"]["mention_dirs"] == [str(MEDICAL / "mentions")]
    with pytest.raises(SystemExit, match="medical-records"):  # an explicit --taxonomy is checked against the model's
        main(["evaluate", "--model", str(checkpoint), "--taxonomy", str(REPO / "thunder/resources/taxonomy/default.yaml")])

    export = in_tmp / "export"
    main(["export", "--checkpoint", str(checkpoint), "--out", str(export)])
    model = AutoModelForTokenClassification.from_pretrained(export)
    assert "I-환자이름" in model.config.label2id and not any("내국인이름" in n for n in model.config.label2id)
    assert Deidentifier.from_pretrained(export)(record).text == result.text
