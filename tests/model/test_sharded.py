"""FSDP2 sharding on 2 CPU processes (gloo): train, save a sharded checkpoint, resume; losses match one process.

The test runs this file as a script (``python tests/test_sharded.py MODE DIR``); Lightning's launcher starts the
second process itself (``accelerator="cpu", devices=2``), with ``ModelParallelStrategy`` and Thunder's
``configure_model`` applying ``fully_shard`` per transformer layer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

STEPS, PER_RANK_BATCH, SEQ = 8, 2, 24  # 16 sequences: 4 steps per epoch either way


def _run(mode: str, workdir: Path) -> None:
    import torch
    from lightning.pytorch import Callback, LightningDataModule, Trainer
    from lightning.pytorch.callbacks import ModelCheckpoint
    from lightning.pytorch.strategies import ModelParallelStrategy
    from torch.utils.data import DataLoader, DistributedSampler

    from thunder.model.modules import TokenClassifier
    from thunder.taxonomy import LabelSet, Taxonomy

    torch.set_num_threads(1)
    label_set = LabelSet(Taxonomy.load(None), granularity="category")
    generator = torch.Generator().manual_seed(0)
    rows = [
        {
            "input_ids": torch.randint(5, 1000, (SEQ,), generator=generator),
            "attention_mask": torch.ones(SEQ, dtype=torch.long),
            "labels": torch.randint(0, len(label_set), (SEQ,), generator=generator),
        }
        for _ in range(16)
    ]
    sharded = mode != "single"

    class Loader(DataLoader):
        """Checkpoints its position like thunder.data.ResumableDataLoader, so a resumed epoch skips what was read."""

        skip = handed_out = 0

        def __iter__(self):
            skip, self.skip = self.skip, 0
            self.handed_out = skip
            for index, batch in enumerate(super().__iter__()):
                if index >= skip:
                    self.handed_out += 1
                    yield batch

        def state_dict(self) -> dict[str, int]:
            return {"batches": self.handed_out}

        def load_state_dict(self, state: dict[str, int]) -> None:
            self.skip = state["batches"]

    class Data(LightningDataModule):
        def __init__(self) -> None:
            super().__init__()
            self.label_set = label_set

        def train_dataloader(self) -> DataLoader:  # rank r reads rows r, r + 2, ...: the single run's batches
            if not sharded:
                return Loader(rows, batch_size=2 * PER_RANK_BATCH)
            sampler = DistributedSampler(rows, num_replicas=2, rank=self.trainer.global_rank, shuffle=False)
            return Loader(rows, batch_size=PER_RANK_BATCH, sampler=sampler)

    class Record(Callback):
        """Mean loss over all processes per step; phase 1 stops after its first epoch (checkpointed)."""

        losses: list[float] = []

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
            loss = trainer.strategy.reduce(outputs["loss"].detach(), reduce_op="mean")
            self.losses.append(float(loss))

        def on_train_epoch_end(self, trainer, pl_module) -> None:
            if mode == "phase1":
                trainer.should_stop = True

        def on_train_end(self, trainer, pl_module) -> None:
            if trainer.global_rank == 0:
                (workdir / f"{mode}.json").write_text(json.dumps(self.losses))

    class SeededInit(TokenClassifier):
        def build(self) -> None:  # identical initial weights on every process and in the single-process run
            torch.manual_seed(0)
            super().build()

    module = SeededInit(
        backbone="tiny",
        lr=1e-3,
        warmup_ratio=0.25,
        backbone_overrides={"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0},
    )
    trainer = Trainer(
        accelerator="cpu",
        devices=2 if sharded else 1,
        strategy=ModelParallelStrategy(data_parallel_size=2, tensor_parallel_size=1) if sharded else "auto",
        max_steps=STEPS,
        gradient_clip_val=1.0,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        use_distributed_sampler=False,
        callbacks=[Record(), ModelCheckpoint(dirpath=workdir / "ckpt", save_last=True, save_top_k=0)],
        default_root_dir=workdir,
    )
    ckpt_path = workdir / "ckpt" / "last.ckpt" if mode == "resume" else None
    trainer.fit(module, datamodule=Data(), ckpt_path=ckpt_path)


def _launch(mode: str, workdir: Path) -> list[float]:
    workdir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    result = subprocess.run(
        [sys.executable, __file__, mode, str(workdir)], env=env, capture_output=True, text=True, timeout=600
    )
    errors = "\n".join(line for line in result.stderr.splitlines() if not line.startswith("[rank1]"))
    assert result.returncode == 0, f"{mode} failed:\n{result.stdout[-3000:]}\n{errors[-6000:]}"
    return json.loads((workdir / f"{mode}.json").read_text())


def test_fsdp2_on_two_cpu_processes_resumes_and_matches_one_process(tmp_path: Path) -> None:
    import torch
    from transformers import AutoModelForTokenClassification

    from thunder.model.loader import Artefact

    phase1 = _launch("phase1", tmp_path / "sharded")
    checkpoint = tmp_path / "sharded" / "ckpt" / "last.ckpt"
    assert Artefact.open(checkpoint).format == "sharded" and len(list(checkpoint.glob("*.distcp"))) == 2
    resumed = _launch("resume", tmp_path / "sharded")
    single = _launch("single", tmp_path / "single")
    assert len(phase1) == 4 and len(resumed) == 4 and len(single) == STEPS
    assert phase1 + resumed == pytest.approx(single, abs=2e-3)
    assert single[-1] < single[0]
    # the sharded checkpoint loads as full weights in one process (export, init_from, de-identification)
    config, state = Artefact.open(checkpoint).pretrained()
    model = AutoModelForTokenClassification.from_config(config)
    model.load_state_dict(state)
    with torch.no_grad():
        assert torch.isfinite(model(input_ids=torch.randint(5, 1000, (1, 8))).logits).all()


if __name__ == "__main__":
    _run(sys.argv[1], Path(sys.argv[2]))
