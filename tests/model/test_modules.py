"""Backbone presets, MaskedLM / TokenClassifier training, checkpoints (label set, init_from) and configs."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
import yaml
from helpers import TEXTS, RepeatedBatch, mlm_batch, token_batch, trainer
from lightning.pytorch import Trainer
from torch.utils.data import DataLoader

from thunder.model.backbones import PRESETS, backbone_config, count_parameters
from thunder.model.loader import read_checkpoint
from thunder.model.modules import MaskedLM, TokenClassifier, warmup_cosine
from thunder.model.progress import TokenThroughputMonitor, batch_tokens
from thunder.model.sizing import train_flops_per_token
from thunder.taxonomy import LabelSet, LabelSetMismatch, Taxonomy

REPO = Path(__file__).resolve().parents[2]
TINY = {"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}


pytestmark = pytest.mark.usefixtures("one_thread")


def eval_loss(module, batch) -> float:
    module.eval()
    with torch.no_grad():
        return module(batch).loss.item()


# ------------------------------------------------------------------------------------------------- presets


@pytest.mark.parametrize(("preset", "expected"), [("370m", 340e6), ("800m", 750e6), ("1p5b", 1.5e9)])
def test_preset_parameter_counts_match_released_models(preset: str, expected: float) -> None:
    config = backbone_config(preset)
    assert config.model_type == "deberta-v2" and config.max_position_embeddings == 2048
    assert abs(count_parameters(config) - expected) / expected < 0.05


def test_small_preset_is_a_few_million_parameters() -> None:
    config = backbone_config("small", {"vocab_size": 8000})
    assert (config.hidden_size, config.num_hidden_layers) == (256, 4)
    assert 3e6 < count_parameters(config, "token-classification") < 8e6


def test_backbone_config_rejects_unknown_specs(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown backbone 'huge'"):
        backbone_config("huge")
    with pytest.raises(ValueError, match="model_type"):
        backbone_config({"hidden_size": 8})


def test_warmup_cosine_schedule() -> None:
    factor = warmup_cosine(total_steps=100, warmup_steps=10)
    assert factor(0) < factor(5) < factor(9) <= 1.0
    assert factor(10) == pytest.approx(1.0)
    assert factor(55) == pytest.approx(0.5)
    assert factor(100) == pytest.approx(0.0)


# ------------------------------------------------------------------------------------------------- training


@pytest.mark.parametrize("threshold", [0.0, 1.0, 1.5])
def test_threshold_must_lie_between_zero_and_one(threshold: float) -> None:
    with pytest.raises(ValueError, match="threshold must lie strictly between 0 and 1"):
        TokenClassifier(backbone="tiny", threshold=threshold)


def test_token_classifier_learns_repeated_batch_and_takes_datamodule_setup(tmp_path, tokenizer, label_set) -> None:
    batch = token_batch(tokenizer, label_set)
    module = TokenClassifier(backbone="tiny", lr=5e-3, warmup_ratio=0.1, backbone_overrides=TINY)
    data = RepeatedBatch(batch, tokenizer, label_set, n=20)
    from lightning.pytorch.loggers import CSVLogger

    monitor = TokenThroughputMonitor(peak_tflops=1.0, window_size=3)
    fit = trainer(tmp_path, 20, callbacks=[monitor], log_every_n_steps=5, logger=CSVLogger(tmp_path))
    fit.fit(module, datamodule=data)
    assert module.model.config.vocab_size == tokenizer.vocab_size
    assert module.model.config.pad_token_id == tokenizer.pad_token_id
    assert module.model.config.id2label[1] == label_set.names[1] and module.model.num_labels == len(label_set)
    tokens = int(batch["attention_mask"].sum())
    metrics = fit.logged_metrics  # one device: Lightning logs the per-device figures only
    assert metrics["train/device/items_per_sec"] > 0  # non-padding tokens per second
    assert metrics["train/device/samples_per_sec"] * tokens / len(batch["input_ids"]) == pytest.approx(
        float(metrics["train/device/items_per_sec"]), rel=1e-4
    )
    ids = batch["input_ids"]
    expected = train_flops_per_token(module.model.config, ids.shape[1], "token-classification", ids.numel()) * tokens
    assert module.flops_per_batch == pytest.approx(expected)
    assert 0 < metrics["train/device/mfu"] < 1  # against the 1 TFLOP/s peak given
    fresh = TokenClassifier(backbone="tiny", backbone_overrides=TINY)
    fresh.label_set, fresh._tokenizer = label_set, tokenizer
    fresh.build()
    assert eval_loss(module, batch) < 0.5 * eval_loss(fresh, batch)


def test_masked_lm_learns_repeated_batch(tmp_path, tokenizer, tokenizer_dir) -> None:
    batch = mlm_batch(tokenizer)
    module = MaskedLM(backbone="tiny", tokenizer=str(tokenizer_dir), lr=5e-3, backbone_overrides=TINY)
    module.build()
    before = eval_loss(module, batch)
    module.train()
    trainer(tmp_path, 20).fit(module, train_dataloaders=DataLoader([batch] * 20, batch_size=None))
    assert eval_loss(module, batch) < 0.5 * before


def test_masked_lm_runs_its_head_on_masked_tokens_only(tokenizer, tokenizer_dir) -> None:
    batch = mlm_batch(tokenizer)
    module = MaskedLM(backbone="tiny", tokenizer=str(tokenizer_dir), backbone_overrides=TINY)
    module.build()
    masked = int((batch["labels"] != -100).sum())
    assert module.masked_only(batch) and 0 < masked < batch_tokens(batch)
    sparse = module(batch)
    whole = module.model(**{k: batch[k] for k in ("input_ids", "attention_mask")}, labels=batch["labels"])
    assert sparse.logits.shape == (masked, module.model.config.vocab_size)
    assert sparse.loss.item() == pytest.approx(whole.loss.item(), rel=1e-5)  # the same loss ...
    (grad_sparse,) = torch.autograd.grad(sparse.loss, module.model.cls.predictions.transform.dense.weight)
    (grad_whole,) = torch.autograd.grad(whole.loss, module.model.cls.predictions.transform.dense.weight)
    assert torch.allclose(grad_sparse, grad_whole, atol=1e-6)  # ... and the same gradients
    # the throughput monitor counts the head's FLOPs on the masked tokens only
    full = module._batch_flops({k: v for k, v in batch.items() if k != "labels"}, train_flops_per_token)
    assert module._batch_flops(batch, train_flops_per_token) < full
    assert not module.masked_only({k: v for k, v in batch.items() if k != "labels"})


def test_build_happens_once_with_checkpointing_switch(tokenizer_dir) -> None:
    module = MaskedLM(backbone="tiny", tokenizer=str(tokenizer_dir), gradient_checkpointing=True)
    module.build()
    model = module.model
    module.build()
    assert module.model is model and any(getattr(m, "gradient_checkpointing", False) for m in model.modules())


# ------------------------------------------------------------------------------------------------- checkpoints


@pytest.fixture
def classifier_ckpt(tmp_path, tokenizer, label_set) -> tuple[Path, TokenClassifier]:
    module = TokenClassifier(backbone="tiny", lr=1e-3)
    fit = trainer(tmp_path, 2)
    fit.fit(module, datamodule=RepeatedBatch(token_batch(tokenizer, label_set), tokenizer, label_set))
    path = tmp_path / "classifier.ckpt"
    fit.save_checkpoint(path)
    return path, module


def test_checkpoint_stores_label_set_and_rebuilds_without_datamodule(classifier_ckpt, tokenizer, label_set) -> None:
    path, module = classifier_ckpt
    thunder = read_checkpoint(path)["thunder"]
    assert thunder["label_set"] == label_set.to_dict()
    assert "tokenizer.json" in thunder["tokenizer_files"]
    loaded = TokenClassifier.load_from_checkpoint(path)
    batch = token_batch(tokenizer, label_set, seed=1)
    module.eval(), loaded.eval()
    assert torch.allclose(loaded(batch).logits, module(batch).logits)
    assert loaded.label_set.names == label_set.names
    assert loaded.tokenizer.encode(TEXTS[0]).ids == tokenizer.encode(TEXTS[0]).ids  # stored in the checkpoint


def test_checkpoint_with_other_label_set_is_refused(classifier_ckpt, tokenizer) -> None:
    path, _ = classifier_ckpt
    other = LabelSet(Taxonomy.load(None), granularity="category", scheme="IO")
    module = TokenClassifier(backbone="tiny")
    module.label_set = other
    with pytest.raises(LabelSetMismatch, match="scheme 'BIO'.*scheme 'IO'"):
        module.on_load_checkpoint(read_checkpoint(path))
    with pytest.raises(LabelSetMismatch):  # resuming with the other label set through the Trainer
        Trainer(accelerator="cpu", max_steps=3, logger=False, enable_progress_bar=False).fit(
            module, datamodule=RepeatedBatch(token_batch(tokenizer, other), tokenizer, other), ckpt_path=path
        )


def test_token_classifier_init_from_mlm_checkpoint_loads_encoder(tmp_path, tokenizer, tokenizer_dir, label_set) -> None:
    mlm = MaskedLM(backbone="tiny", tokenizer=str(tokenizer_dir), backbone_overrides={"num_hidden_layers": 3})
    fit = trainer(tmp_path, 1)
    fit.fit(mlm, train_dataloaders=DataLoader([mlm_batch(tokenizer)], batch_size=None))
    path = tmp_path / "mlm.ckpt"
    fit.save_checkpoint(path)
    classifier = TokenClassifier(backbone="small", init_from=str(path))  # the architecture comes from init_from
    classifier.label_set, classifier._tokenizer = label_set, tokenizer
    classifier.build()
    assert classifier.model.config.num_hidden_layers == 3
    encoder = mlm.model.base_model.state_dict()
    for name, value in classifier.model.base_model.state_dict().items():
        assert torch.equal(value, encoder[name]), name
    with pytest.raises(ValueError, match="not written by a TokenClassifier"):
        classifier.on_load_checkpoint(read_checkpoint(path))


def test_masked_lm_phase_two_starts_from_phase_one(tmp_path, tokenizer, tokenizer_dir) -> None:
    phase1 = MaskedLM(backbone="tiny", tokenizer=str(tokenizer_dir))
    fit = trainer(tmp_path, 1)
    fit.fit(phase1, train_dataloaders=DataLoader([mlm_batch(tokenizer)], batch_size=None))
    fit.save_checkpoint(tmp_path / "phase1.ckpt")
    phase2 = MaskedLM(backbone="tiny", tokenizer=str(tokenizer_dir), init_from=str(tmp_path / "phase1.ckpt"))
    phase2.build()
    batch = mlm_batch(tokenizer)
    assert eval_loss(phase2, batch) == pytest.approx(eval_loss(phase1, batch))


# ------------------------------------------------------------------------------------------------- configs


def test_neox_tiny_config_trains_decoder_as_token_classifier(tmp_path, tokenizer, label_set) -> None:
    config = yaml.safe_load((REPO / "configs" / "neox_tiny.yaml").read_text())
    args = config["model"]["init_args"]
    assert config["model"]["class_path"] == "thunder.model.TokenClassifier"
    module = TokenClassifier(**{**args, "lr": 3e-3})
    batch = token_batch(tokenizer, label_set)
    fit = trainer(tmp_path, 20)
    fit.fit(module, datamodule=RepeatedBatch(batch, tokenizer, label_set, n=20))
    assert type(module.model).__name__ == "GPTNeoXForTokenClassification"
    assert module.model.config.vocab_size == tokenizer.vocab_size
    assert eval_loss(module, batch) < 0.5 * math.log(len(label_set))  # chance level: log(number of tags)


CONFIGS = [["small"], ["370m"], ["800m"], ["1p5b"], ["neox_tiny"], ["pretrain/small"], ["pretrain/370m"],
           ["pretrain/370m", "pretrain/370m_phase2"], ["pretrain/800m", "pretrain/800m_phase2"],
           ["pretrain/1p5b", "pretrain/1p5b_phase2"]]


@pytest.mark.parametrize("names", CONFIGS, ids=["+".join(n) for n in CONFIGS])
def test_configs_parse_with_the_thunder_cli(names: list[str]) -> None:
    from thunder.commands.trainer import ThunderCLI

    class ParseOnly(ThunderCLI):
        def instantiate_classes(self) -> None:  # validate every section against the real signatures, build nothing
            pass

    args = [arg for name in names for arg in ("--config", str(REPO / "configs" / f"{name}.yaml"))]
    config = ParseOnly(args=args, run=False).config
    task = MaskedLM if names[0].startswith("pretrain") else TokenClassifier
    assert config.model.class_path == f"thunder.model.{task.__name__}"  # the package face
    assert config.data.class_path in ("thunder.data.DeIdDataModule", "thunder.data.MLMDataModule")
    backbone = config.model.init_args.backbone
    assert backbone["model_type"] == "gpt_neox" if isinstance(backbone, dict) else backbone in PRESETS
    if "phase2" in names[-1]:
        assert config.data.init_args.max_length == 2048
        assert config.model.init_args.init_from.endswith("pretrain-512/checkpoints/last.ckpt")
    if names[0] in ("small", "370m", "800m", "1p5b", "pretrain/370m", "pretrain/800m", "pretrain/1p5b"):
        assert config.data.init_args.compose == 0.5  # whole judgments (issue 28)
    if names[0] in ("370m", "800m", "1p5b"):
        assert config.trainer.strategy.class_path.endswith("ModelParallelStrategy")
        assert config.trainer.precision == "bf16-mixed" and config.model.init_args.gradient_checkpointing


def test_validation_and_test_log_metrics_samples_and_per_type_table(tmp_path, tokenizer, label_set, capsys) -> None:
    from lightning.pytorch.loggers import TensorBoardLogger
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    batch = token_batch(tokenizer, label_set)
    data = RepeatedBatch(batch, tokenizer, label_set)
    logger = TensorBoardLogger(tmp_path, name="tb")
    module = TokenClassifier(backbone="tiny", num_val_samples=1)
    run = trainer(tmp_path, 1, logger=logger, limit_val_batches=1)
    metrics = run.validate(module, datamodule=data)[0]
    assert {"val/loss", "val/binary_f1", "val/micro_f1"} <= set(metrics)
    run.test(module, datamodule=data)
    logger.experiment.flush()
    events = EventAccumulator(logger.log_dir, size_guidance={"tensors": 0}).Reload()
    texts = {tag: events.Tensors(tag)[0].tensor_proto.string_val[0].decode() for tag in events.Tags()["tensors"]}
    sample = texts["val/samples/text_summary"]
    assert "**predicted:**" in sample and "⟦" in sample  # random weights tag some tokens
    assert "| type | support | precision | recall | f1 |" in texts["test/per_type/text_summary"]
