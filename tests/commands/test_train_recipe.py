"""``tools/train_recipe.sh``: the recipe at any length, each step's options valid for the trainer."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not (REPO.parent / "shared").is_dir(), reason="../shared (the corpora) is not beside the repository")
@pytest.mark.parametrize(("pretrain", "finetune", "hours"), [(3000, 2800, ("00:03", "00:03")),
                                                             (6000, 5600, ("00:05", "00:06")),
                                                             (48000, 44800, ("01:09", "01:21"))])  # fmt: skip
def test_each_step_gets_a_time_guard_lightning_reads(tmp_path: Path, pretrain: int, finetune: int, hours) -> None:
    """The guard is written DD:HH:MM:SS (Lightning refuses ``00:5:00:00``), and the steps are passed through."""
    calls = tmp_path / "calls"
    fake = tmp_path / "thunder"
    fake.write_text(f'#!/usr/bin/env bash\necho "$@" >> {calls}\n', encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    run = tmp_path / "run"
    subprocess.run(["bash", str(REPO / "tools" / "train_recipe.sh"), str(run), str(pretrain), str(finetune)],
                   check=True, env={**os.environ, "THUNDER": str(fake)})  # fmt: skip
    tokenizer, pretraining, finetuning = calls.read_text(encoding="utf-8").splitlines()
    assert tokenizer.startswith("tokenizer train ")
    for line, steps, hour in ((pretraining, pretrain, hours[0]), (finetuning, finetune, hours[1])):
        assert f"--trainer.max_steps {steps} " in line
        guard = re.search(r"--trainer.max_time (\S+)", line).group(1)
        assert re.fullmatch(r"\d\d:\d\d:\d\d:\d\d", guard) and guard.startswith(hour), guard
