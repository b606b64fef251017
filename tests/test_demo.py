"""End to end: the demo config trains through `thunder fit`, and its checkpoint de-identifies text."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from thunder.cli import main
from thunder.deid import Deidentifier

REPO = Path(__file__).resolve().parents[1]
DEMO = str(REPO / "configs" / "demo.yaml")
MEDICAL = REPO / "configs" / "taxonomies" / "medical_records"


@pytest.fixture()
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in a temporary directory so the config's relative `runs/demo` lands there."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_demo_fit_writes_checkpoint_logs_and_a_working_model(in_tmp: Path) -> None:
    main(["fit", "--config", DEMO, "--trainer.max_steps", "20", "--trainer.enable_progress_bar", "false"])
    checkpoint = in_tmp / "runs" / "demo" / "checkpoints" / "last.ckpt"
    assert checkpoint.is_file()
    assert list((in_tmp / "runs" / "demo" / "tensorboard").rglob("events.out.tfevents.*"))
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    assert 0 < state["global_step"] <= 20  # last.ckpt is written at the end of each epoch
    assert "사건관계인특정정보" in " ".join(state["thunder"]["label_set"]["names"])

    text = "피고인 홍길동은 피해자에게 전화(010-2345-6789)하였다.\n\n  다음 날 다시 만났다."
    result = Deidentifier.from_pretrained(checkpoint)(text)
    assert "010-2345-6789" not in result.text
    assert result.text.endswith("\n\n  다음 날 다시 만났다.") and result.text.startswith("피고인 ")


def test_user_taxonomy_trains_through_the_demo_config(in_tmp: Path) -> None:
    main(
        [
            "fit", "--config", DEMO,
            "--data.init_args.taxonomy", str(REPO / "configs" / "taxonomies" / "medical_records.yaml"),
            "--data.init_args.data_dir", str(MEDICAL / "annotated"),
            "--data.init_args.mention_dirs", f"[{MEDICAL / 'mentions'}]",
            "--data.init_args.granularity", "label",
            "--trainer.max_steps", "2", "--trainer.limit_val_batches", "1", "--trainer.enable_progress_bar", "false",
        ]
    )  # fmt: skip
    state = torch.load(in_tmp / "runs" / "demo" / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=False)
    names = state["thunder"]["label_set"]["names"]
    assert "I-환자이름" in names and not any("내국인이름" in name for name in names)
