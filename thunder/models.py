"""Backbones and the two LightningModules: :class:`MaskedLM` (pretraining) and :class:`TokenClassifier`.

A backbone is a transformers model, never a rewrite: DeBERTa-v3 presets (:data:`PRESETS`, built with
``DebertaV2Config``), any Hugging Face config dict (``{"model_type": "gpt_neox", ...}``) or a local model directory,
instantiated through ``AutoModelForMaskedLM`` / ``AutoModelForTokenClassification``. ``vocab_size`` and the special
token ids come from the tokenizer, so configs never repeat them.

Both modules build the model in ``configure_model`` (once), so Lightning's ``ModelParallelStrategy`` can shard it:
Thunder applies FSDP2 ``fully_shard`` to every transformer layer and then to the root over the ``data_parallel`` mesh
dimension. Checkpoints carry a ``"thunder"`` entry (Hugging Face config, label set, tokenizer files) so that
:mod:`thunder.export` and ``init_from`` need nothing but the checkpoint.
"""

from __future__ import annotations

import json
import math
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import torch
from lightning.pytorch import Callback, LightningModule, Trainer
from lightning.pytorch.loggers import TensorBoardLogger
from lightning.pytorch.utilities import rank_zero_info
from torch import Tensor
from transformers import (
    AutoConfig,
    AutoModelForMaskedLM,
    AutoModelForTokenClassification,
    DebertaV2Config,
    PretrainedConfig,
    PreTrainedModel,
)

from thunder.metrics import TokenMetrics, format_table

# DeBERTa-v3 architecture settings shared by every preset (relative positions only, so any length up to
# max_position_embeddings works without absolute position embeddings).
DEBERTA_V3: dict[str, Any] = {
    "relative_attention": True,
    "position_buckets": 256,
    "max_relative_positions": -1,
    "norm_rel_ebd": "layer_norm",
    "share_att_key": True,
    "pos_att_type": ["p2c", "c2p"],
    "position_biased_input": False,
    "type_vocab_size": 0,
    "layer_norm_eps": 1e-7,
    "hidden_act": "gelu",
    "max_position_embeddings": 2048,
}

# Presets: hidden size, depth, heads, FFN width, default vocabulary (replaced by the tokenizer's when one is given).
# 370m/800m/1p5b follow the paper (about 340M, 750M and 1.5B parameters with 32k, 32k and 128k vocabularies).
PRESETS: dict[str, dict[str, int]] = {
    "tiny": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 256,
             "vocab_size": 1000},
    "small": {"hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4, "intermediate_size": 1024,
              "vocab_size": 32000},
    "370m": {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096,
             "vocab_size": 32000},
    "800m": {"hidden_size": 1280, "num_hidden_layers": 36, "num_attention_heads": 20, "intermediate_size": 5120,
             "vocab_size": 32000},
    "1p5b": {"hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 32, "intermediate_size": 8192,
             "vocab_size": 128000},
}

# Transformer layer classes sharded one FSDP unit each (in addition to a model's own ``_no_split_modules``).
LAYER_CLASSES = {"DebertaV2Layer"}

Task = Literal["mlm", "token-classification"]
AUTO_CLASSES: dict[str, Any] = {
    "mlm": AutoModelForMaskedLM,
    "token-classification": AutoModelForTokenClassification,
}
_WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")
_MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


# --------------------------------------------------------------------------------------------------- backbones


def backbone_config(backbone: str | Mapping[str, Any], overrides: Mapping[str, Any] | None = None) -> PretrainedConfig:
    """The Hugging Face config of a backbone: a preset name, a config dict with ``model_type``, or a local directory."""
    if isinstance(backbone, Mapping):
        spec = dict(backbone)
        if "model_type" not in spec:
            raise ValueError(f"backbone config dict needs a 'model_type' (e.g. 'deberta-v2', 'gpt_neox'): {spec}")
        config = AutoConfig.for_model(spec.pop("model_type"), **spec)
    elif backbone in PRESETS:
        config = DebertaV2Config(**DEBERTA_V3, **PRESETS[backbone])
    elif Path(backbone).is_dir():
        config = AutoConfig.from_pretrained(backbone)
    else:
        raise ValueError(
            f"unknown backbone {backbone!r}: expected one of {sorted(PRESETS)}, a local model directory "
            "or a config dict with 'model_type'"
        )
    for key, value in (overrides or {}).items():
        setattr(config, key, value)
    return config


def count_parameters(config: PretrainedConfig, task: Task = "mlm") -> int:
    """Parameters of the model a config describes, counted on the meta device (nothing is allocated)."""
    with torch.device("meta"):
        model = AUTO_CLASSES[task].from_config(config)
    return sum(p.numel() for p in model.parameters())


def apply_tokenizer(config: PretrainedConfig, tokenizer: Any, keep_vocab: bool = False) -> None:
    """Set ``vocab_size`` and the special token ids of ``config`` from a ThunderTokenizer.

    With ``keep_vocab`` (pretrained weights will be loaded) the vocabulary size stays and must cover the tokenizer.
    """
    if keep_vocab:
        if tokenizer.vocab_size > config.vocab_size:
            raise ValueError(
                f"the tokenizer has {tokenizer.vocab_size} tokens but the pretrained model only {config.vocab_size}"
            )
    else:
        config.vocab_size = tokenizer.vocab_size
    config.pad_token_id = tokenizer.pad_token_id
    if getattr(config, "bos_token_id", None) is not None:
        config.bos_token_id = tokenizer.cls_token_id
    if getattr(config, "eos_token_id", None) is not None:
        config.eos_token_id = tokenizer.sep_token_id


def load_tokenizer(path: str | Path) -> Any:
    """A :class:`thunder.tokenizer.ThunderTokenizer` from a directory."""
    from thunder.tokenizer import ThunderTokenizer

    return ThunderTokenizer.from_pretrained(path)


def is_sharded_checkpoint(path: str | Path) -> bool:
    """A Lightning distributed (sharded) checkpoint: a directory with ``meta.pt``."""
    return Path(path).is_dir() and (Path(path) / "meta.pt").is_file()


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """A Lightning checkpoint (a ``.ckpt`` file or a sharded checkpoint directory) as one full dict on the CPU."""
    path = Path(path)
    if is_sharded_checkpoint(path):
        from lightning.fabric.utilities.load import _load_distributed_checkpoint

        return _load_distributed_checkpoint(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    return torch.load(path, map_location="cpu", weights_only=False)


def checkpoint_thunder(checkpoint: Mapping[str, Any], path: str | Path) -> dict[str, Any]:
    """The ``"thunder"`` entry of a checkpoint written by :class:`MaskedLM` or :class:`TokenClassifier`."""
    if "thunder" not in checkpoint:
        raise ValueError(f"{path} is not a Thunder checkpoint (no 'thunder' entry; written by another module?)")
    return checkpoint["thunder"]


def _read_hf_weights(directory: Path) -> dict[str, Tensor]:
    from safetensors.torch import load_file

    if (directory / "model.safetensors").is_file():
        return load_file(directory / "model.safetensors")
    index = directory / "model.safetensors.index.json"
    if index.is_file():
        state: dict[str, Tensor] = {}
        for shard in sorted(set(json.loads(index.read_text())["weight_map"].values())):
            state.update(load_file(directory / shard))
        return state
    if (directory / "pytorch_model.bin").is_file():
        return torch.load(directory / "pytorch_model.bin", map_location="cpu", weights_only=True)
    raise FileNotFoundError(f"no model weights ({', '.join(_WEIGHT_FILES)}) in {directory}")


def has_weights(directory: str | Path) -> bool:
    """Whether a Hugging Face model directory holds weights (not just a config)."""
    return any((Path(directory) / name).is_file() for name in _WEIGHT_FILES)


def read_pretrained(source: str | Path) -> tuple[PretrainedConfig, dict[str, Tensor]]:
    """Config and weights (Hugging Face parameter names) of a Thunder checkpoint or a Hugging Face directory."""
    source = Path(source)
    if source.is_dir() and not is_sharded_checkpoint(source):
        return AutoConfig.from_pretrained(source), _read_hf_weights(source)
    checkpoint = read_checkpoint(source)
    thunder = checkpoint_thunder(checkpoint, source)
    config = config_from_dict(thunder["hf_config"])
    state = {k.removeprefix("model."): v for k, v in checkpoint["state_dict"].items() if k.startswith("model.")}
    return config, state


def config_from_dict(d: Mapping[str, Any]) -> PretrainedConfig:
    """Inverse of ``PretrainedConfig.to_dict()``."""
    d = dict(d)
    return AutoConfig.for_model(d.pop("model_type"), **d)


def load_weights(model: PreTrainedModel, state: Mapping[str, Tensor], encoder_only: bool, source: str | Path) -> None:
    """Load ``state`` into ``model``; every encoder (base model) weight must be present.

    ``encoder_only`` skips heads (a token classifier initialised from an MLM gets a new classification head).
    States saved from a bare base model (no ``<prefix>.`` in the names) are accepted.
    """
    prefix = model.base_model_prefix + "."
    if not any(k.startswith(prefix) for k in state):
        state = {prefix + k: v for k, v in state.items()}
    if encoder_only:
        state = {k: v for k, v in state.items() if k.startswith(prefix)}
    own = model.state_dict()
    mismatched = [k for k, v in state.items() if k in own and own[k].shape != v.shape]
    if mismatched:
        raise ValueError(f"{source}: shapes differ from the model for {mismatched[:5]} (another backbone config?)")
    missing, _ = model.load_state_dict(state, strict=False)
    missing_encoder = [k for k in missing if k.startswith(prefix)]
    if missing_encoder:
        raise ValueError(f"{source}: encoder weights missing for {missing_encoder[:5]} (not the same architecture?)")


def tokenizer_files(tokenizer: Any) -> dict[str, bytes]:
    """The files ``tokenizer.save_pretrained`` writes, by name (stored in checkpoints)."""
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer.save_pretrained(tmp)
        return {p.name: p.read_bytes() for p in Path(tmp).iterdir() if p.is_file()}


def write_files(files: Mapping[str, bytes], directory: str | Path) -> None:
    """Write :func:`tokenizer_files` output into ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (directory / name).write_bytes(data)


def tokenizer_from_files(files: Mapping[str, bytes]) -> Any:
    """The ThunderTokenizer stored in a checkpoint by :func:`tokenizer_files`."""
    with tempfile.TemporaryDirectory() as tmp:
        write_files(files, tmp)
        return load_tokenizer(tmp)


def label_set_from_dict(d: Mapping[str, Any], taxonomy: str | None = None) -> Any:
    """A :class:`thunder.taxonomy.LabelSet` from its ``to_dict()`` form, on ``taxonomy`` (None: the packaged one)."""
    from thunder.taxonomy import LabelSet, Taxonomy

    return LabelSet.from_dict(dict(d), Taxonomy.load(taxonomy))


# --------------------------------------------------------------------------------------------------- modules


class _ThunderModule(LightningModule):
    """Shared backbone building, sharding, optimiser and checkpoint entries of both modules."""

    task: Task

    def __init__(
        self,
        backbone: str | dict[str, Any],
        backbone_overrides: dict[str, Any] | None,
        tokenizer: str | None,
        init_from: str | None,
        lr: float,
        weight_decay: float,
        warmup_ratio: float,
        gradient_checkpointing: bool,
        compile: bool,
    ) -> None:
        super().__init__()
        if not 0.0 <= warmup_ratio <= 1.0:
            raise ValueError(f"warmup_ratio must lie in [0, 1], got {warmup_ratio}")
        if lr <= 0:
            raise ValueError(f"lr must be positive, got {lr}")
        self.model: PreTrainedModel | None = None
        self._tokenizer: Any = load_tokenizer(tokenizer) if tokenizer else None

    # -- building

    @property
    def tokenizer(self) -> Any:
        """The ThunderTokenizer: the ``tokenizer`` argument, else the datamodule's (``None`` when neither)."""
        if self._tokenizer is None and self._trainer is not None:
            self._tokenizer = getattr(self._trainer.datamodule, "tokenizer", None)
        return self._tokenizer

    def _config(self) -> tuple[PretrainedConfig, str | None, dict[str, Tensor] | None]:
        """Backbone config, where pretrained weights come from (``init_from`` or the backbone directory), weights."""
        hp = self.hparams
        source = hp.init_from
        if source is None and isinstance(hp.backbone, str) and Path(hp.backbone).is_dir() and has_weights(hp.backbone):
            source = hp.backbone
        state = None
        if source is None:
            config = backbone_config(hp.backbone, hp.backbone_overrides)
        else:
            config, state = read_pretrained(source)
            for key, value in (hp.backbone_overrides or {}).items():
                setattr(config, key, value)
        if self.tokenizer is not None:
            apply_tokenizer(config, self.tokenizer, keep_vocab=source is not None)
        return config, source, state

    def _adapt_config(self, config: PretrainedConfig) -> None:
        """Task-specific config changes (labels)."""

    def configure_model(self) -> None:
        """Lightning hook: :meth:`build` when attached to a Trainer (``load_from_checkpoint`` builds from the
        checkpoint's stored config instead, in ``on_load_checkpoint``)."""
        if self._trainer is not None:
            self.build()

    def build(self) -> None:
        """Build the Hugging Face model (once), load pretrained weights, shard it under ModelParallelStrategy."""
        if self.model is not None:
            return
        config, source, state = self._config()
        self._adapt_config(config)
        model = AUTO_CLASSES[self.task].from_config(config)
        if state is not None:
            load_weights(model, state, encoder_only=self.task == "token-classification", source=source)
        self._install(model)

    def _install(self, model: PreTrainedModel) -> None:
        if self.hparams.gradient_checkpointing:  # transformers 5 renamed it activation_checkpointing_enable
            enable = getattr(model, "activation_checkpointing_enable", None) or model.gradient_checkpointing_enable
            enable({"use_reentrant": False})
        self.model = model
        self._shard()
        if self.hparams.compile:
            self.model.compile()

    def _shard(self) -> None:
        mesh = self.device_mesh
        if mesh is None:
            return
        if mesh["tensor_parallel"].size() > 1:
            raise ValueError(
                "Thunder shards with FSDP only: set ModelParallelStrategy(data_parallel_size=<number of processes>, "
                f"tensor_parallel_size=1); the mesh is {dict(zip(mesh.mesh_dim_names, mesh.shape))}"
            )
        from torch.distributed.fsdp import fully_shard

        dp_mesh = mesh["data_parallel"]
        layer_names = LAYER_CLASSES | set(getattr(self.model, "_no_split_modules", None) or [])
        for module in self.model.modules():
            if type(module).__name__ in layer_names:
                fully_shard(module, mesh=dp_mesh)
        fully_shard(self.model, mesh=dp_mesh)

    # -- training

    def forward(self, batch: Mapping[str, Tensor]) -> Any:
        inputs = {k: batch[k] for k in _MODEL_INPUTS if k in batch}
        return self.model(**inputs, labels=batch.get("labels"))

    def training_step(self, batch: Mapping[str, Tensor], batch_idx: int) -> Tensor:
        loss = self(batch).loss
        self.log("train/loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self) -> dict[str, Any]:
        """AdamW (betas 0.9/0.999; no decay on biases and norms), linear warmup then cosine decay, per step."""
        decay = [p for p in self.parameters() if p.requires_grad and p.ndim >= 2]
        no_decay = [p for p in self.parameters() if p.requires_grad and p.ndim < 2]
        optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": self.hparams.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=self.hparams.lr,
            betas=(0.9, 0.999),
        )
        total = self.trainer.estimated_stepping_batches
        if not math.isfinite(total):
            raise ValueError("the cosine schedule needs a finite length: set trainer.max_steps or trainer.max_epochs")
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, warmup_cosine(int(total), int(self.hparams.warmup_ratio * total))
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    # -- checkpoints

    def _thunder_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"task": self.task, "hf_config": self.model.config.to_dict()}
        if self.tokenizer is not None:
            entry["tokenizer_files"] = tokenizer_files(self.tokenizer)
        return entry

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        checkpoint["thunder"] = self._thunder_entry()

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        thunder = checkpoint_thunder(checkpoint, "checkpoint")
        if thunder.get("task") != self.task:
            raise ValueError(f"checkpoint was written for task {thunder.get('task')!r}, this module is {self.task!r}")
        if self.model is None:  # load_from_checkpoint: no configure_model call, build from the stored config
            self._install(AUTO_CLASSES[self.task].from_config(config_from_dict(thunder["hf_config"])))
        if self.tokenizer is None and "tokenizer_files" in thunder:
            self._tokenizer = tokenizer_from_files(thunder["tokenizer_files"])


def warmup_cosine(total_steps: int, warmup_steps: int) -> Any:
    """LR factor per step: linear from 0 to 1 over ``warmup_steps``, then cosine down to 0 at ``total_steps``."""

    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / (warmup_steps + 1)
        progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))
        return 0.5 * (1.0 + math.cos(math.pi * progress))

    return factor


class MaskedLM(_ThunderModule):
    """Masked-language-model pretraining of a backbone (batches from :class:`thunder.data.MLMDataModule`)."""

    task: Task = "mlm"

    def __init__(
        self,
        backbone: str | dict[str, Any] = "small",
        tokenizer: str | None = None,
        init_from: str | None = None,
        backbone_overrides: dict[str, Any] | None = None,
        lr: float = 5e-4,
        weight_decay: float = 0.01,
        warmup_ratio: float = 0.1,
        gradient_checkpointing: bool = False,
        compile: bool = False,
    ) -> None:
        """
        Args:
            backbone: a preset (``tiny``, ``small``, ``370m``, ``800m``, ``1p5b``), a Hugging Face config dict with
                ``model_type``, or a local model directory (its weights are loaded when present).
            tokenizer: ThunderTokenizer directory giving vocab_size and special token ids (default: the
                datamodule's ``tokenizer``).
            init_from: weights to start from: a MaskedLM checkpoint (``.ckpt`` or sharded directory) or a Hugging
                Face directory; its architecture replaces ``backbone`` (e.g. phase 2 of pretraining from phase 1).
            backbone_overrides: config attributes to change (dropout, ...).
            lr: peak learning rate.
            weight_decay: AdamW weight decay (not applied to biases and norms).
            warmup_ratio: fraction of the steps with linear warmup before the cosine decay.
            gradient_checkpointing: recompute activations in the backward pass (activation checkpointing).
            compile: ``torch.compile`` the model.
        """
        super().__init__(backbone, backbone_overrides, tokenizer, init_from, lr, weight_decay, warmup_ratio,
                         gradient_checkpointing, compile)
        self.save_hyperparameters()

    def validation_step(self, batch: Mapping[str, Tensor], batch_idx: int) -> None:
        self.log("val/loss", self(batch).loss, prog_bar=True, sync_dist=True)


def check_threshold(threshold: float) -> None:
    if not 0 < threshold < 1:
        raise ValueError(f"threshold must lie strictly between 0 and 1, got {threshold}")


def entity_tags(probs: Tensor, threshold: float = 0.5, outside_id: int = 0) -> Tensor:
    """Tag ids from class probabilities (..., tags): a token is an identifier when its identifier probability
    ``1 - P(O)`` exceeds ``threshold``, and then gets its most likely entity tag; otherwise ``O``.

    At 0.5 this differs from the argmax where the identifier probability is the larger but is spread over several
    entity types (``O`` 0.4, person 0.3, company 0.3 is an identifier). Lower thresholds trade precision for recall.
    """
    entity_probs = probs.clone()
    entity_probs[..., outside_id] = -1
    best_entity = entity_probs.argmax(dim=-1)
    return torch.where(probs[..., outside_id] < 1 - threshold, best_entity, torch.full_like(best_entity, outside_id))


class TokenClassifier(_ThunderModule):
    """Token classification over a label set (batches from :class:`thunder.data.DeIdDataModule`)."""

    task: Task = "token-classification"

    def __init__(
        self,
        backbone: str | dict[str, Any] = "small",
        label_set: dict[str, Any] | None = None,
        tokenizer: str | None = None,
        init_from: str | None = None,
        backbone_overrides: dict[str, Any] | None = None,
        lr: float = 5e-5,
        weight_decay: float = 0.01,
        warmup_ratio: float = 0.1,
        gradient_checkpointing: bool = False,
        compile: bool = False,
        num_val_samples: int = 3,
        threshold: float = 0.5,
    ) -> None:
        """
        Args:
            backbone: a preset (``tiny``, ``small``, ``370m``, ``800m``, ``1p5b``), a Hugging Face config dict with
                ``model_type`` (e.g. ``gpt_neox``, ``llama``), or a local model directory (weights loaded when present).
            label_set: ``LabelSet.to_dict()``; default: the datamodule's ``label_set``.
            tokenizer: ThunderTokenizer directory giving vocab_size and special token ids (default: the
                datamodule's ``tokenizer``).
            init_from: encoder weights to start from: a MaskedLM checkpoint (``.ckpt`` or sharded directory) or an
                exported / Hugging Face model directory; the classification head is new. Its architecture replaces
                ``backbone``.
            backbone_overrides: config attributes to change (dropout, ...).
            lr: peak learning rate.
            weight_decay: AdamW weight decay (not applied to biases and norms).
            warmup_ratio: fraction of the steps with linear warmup before the cosine decay.
            gradient_checkpointing: recompute activations in the backward pass (activation checkpointing).
            compile: ``torch.compile`` the model.
            num_val_samples: validation windows written as de-identified text to TensorBoard each validation.
            threshold: a token is predicted an identifier when 1 - P(O) exceeds it (see :func:`entity_tags`);
                validation and test metrics use this rule.
        """
        check_threshold(threshold)
        super().__init__(backbone, backbone_overrides, tokenizer, init_from, lr, weight_decay, warmup_ratio,
                         gradient_checkpointing, compile)
        self.save_hyperparameters()
        self.label_set: Any = label_set_from_dict(label_set) if label_set is not None else None
        self.val_metrics: TokenMetrics | None = None
        self.test_metrics: TokenMetrics | None = None
        self._samples: list[tuple[list[int], list[int], list[int]]] = []

    def _adapt_config(self, config: PretrainedConfig) -> None:
        if self.label_set is None:
            datamodule = self._trainer.datamodule if self._trainer is not None else None
            self.label_set = getattr(datamodule, "label_set", None)
            if self.label_set is None:
                raise ValueError("TokenClassifier needs a label set: pass label_set or use a datamodule with label_set")
        names = list(self.label_set.names)
        config.num_labels = len(names)
        config.id2label = dict(enumerate(names))
        config.label2id = {name: i for i, name in enumerate(names)}

    def _install(self, model: PreTrainedModel) -> None:
        super()._install(model)
        names = [model.config.id2label[i] for i in range(model.config.num_labels)]
        self.val_metrics = TokenMetrics(names)
        self.test_metrics = TokenMetrics(names)

    def _thunder_entry(self) -> dict[str, Any]:
        entry = super()._thunder_entry()
        entry["label_set"] = self.label_set.to_dict()
        return entry

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        thunder = checkpoint_thunder(checkpoint, "checkpoint")
        if "label_set" not in thunder:
            raise ValueError("checkpoint has no label set: it was not written by a TokenClassifier")
        if self.label_set is None:
            self.label_set = label_set_from_dict(thunder["label_set"])
        else:
            self.label_set.check_compatible(thunder["label_set"])
        super().on_load_checkpoint(checkpoint)

    def _evaluate(self, batch: Mapping[str, Tensor], stage: str, metrics: TokenMetrics) -> Tensor:
        out = self(batch)
        preds = entity_tags(out.logits.float().softmax(-1), self.hparams.threshold)
        metrics.update(preds, batch["labels"])
        self.log(f"{stage}/loss", out.loss, sync_dist=True)
        return preds

    def validation_step(self, batch: Mapping[str, Tensor], batch_idx: int) -> None:
        preds = self._evaluate(batch, "val", self.val_metrics)
        if batch_idx == 0:
            rows = zip(batch["input_ids"].tolist(), preds.tolist(), batch["labels"].tolist())
            self._samples = [row for row, _ in zip(rows, range(self.hparams.num_val_samples))]

    def test_step(self, batch: Mapping[str, Tensor], batch_idx: int) -> None:
        self._evaluate(batch, "test", self.test_metrics)

    def on_validation_epoch_end(self) -> None:
        self.log_dict({f"val/{k}": v for k, v in self.val_metrics.compute().items()}, prog_bar=False)
        self.val_metrics.reset()
        self._log_samples()

    def on_test_epoch_end(self) -> None:
        self.log_dict({f"test/{k}": v for k, v in self.test_metrics.compute().items()})
        table = format_table(self.test_metrics.table())
        rank_zero_info(f"Per-type token metrics (test):\n{table}")
        if isinstance(self.logger, TensorBoardLogger) and self.global_rank == 0:
            self.logger.experiment.add_text("test/per_type", table, self.global_step)
        self.test_metrics.reset()

    def _log_samples(self) -> None:
        if not (self._samples and isinstance(self.logger, TensorBoardLogger) and self.global_rank == 0):
            return
        if self.tokenizer is None:
            return
        texts = []
        for ids, preds, gold in self._samples:
            keep = [i for i, g in enumerate(gold) if g != -100]
            ids = [ids[i] for i in keep]
            texts.append(
                f"**predicted:** {render_spans(self.tokenizer, ids, [preds[i] for i in keep], self.label_set)}\n\n"
                f"**gold:** {render_spans(self.tokenizer, ids, [gold[i] for i in keep], self.label_set)}"
            )
        self.logger.experiment.add_text("val/samples", "\n\n---\n\n".join(texts), self.global_step)
        self._samples = []


def render_spans(tokenizer: Any, ids: list[int], tags: list[int], label_set: Any) -> str:
    """Decoded text with every tagged span replaced by ``⟦type⟧`` (a de-identified preview)."""
    pieces, position = [], 0
    for start, end, entity_type in label_set.decode(tags):
        pieces += [tokenizer.decode(ids[position:start]), f"⟦{entity_type}⟧"]
        position = end
    pieces.append(tokenizer.decode(ids[position:]))
    return "".join(pieces)


class TokenThroughput(Callback):
    """Logs training throughput: non-padding tokens per second (``perf/tokens_per_sec``, all processes).

    With ``peak_tflops`` (the accelerator's dense bf16 peak per device) it also logs model FLOPs utilisation
    ``perf/mfu`` = 6 x parameters x tokens/s / (peak x devices), which ignores attention FLOPs.
    """

    def __init__(self, peak_tflops: float | None = None) -> None:
        self.peak_tflops = peak_tflops
        self._start: float | None = None
        self._tokens = 0
        self._params = 0

    def on_train_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        self._params = sum(p.numel() for p in pl_module.parameters())

    def on_validation_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        self._start = None  # validation time is not training throughput: start a new window afterwards

    def on_train_batch_start(self, trainer: Trainer, pl_module: LightningModule, batch: Any, batch_idx: int) -> None:
        if self._start is None:
            self._start, self._tokens = time.perf_counter(), 0

    def on_train_batch_end(
        self, trainer: Trainer, pl_module: LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        self._tokens += int(batch["attention_mask"].sum()) * trainer.world_size
        if (batch_idx + 1) % trainer.log_every_n_steps:
            return
        if pl_module.device.type == "cuda":
            torch.cuda.synchronize(pl_module.device)
        elapsed = time.perf_counter() - self._start
        tokens_per_sec = self._tokens / max(elapsed, 1e-9)
        pl_module.log("perf/tokens_per_sec", tokens_per_sec, on_step=True, on_epoch=False, rank_zero_only=True)
        if self.peak_tflops:
            mfu = 6 * self._params * tokens_per_sec / (self.peak_tflops * 1e12 * trainer.world_size)
            pl_module.log("perf/mfu", mfu, on_step=True, on_epoch=False, rank_zero_only=True)
        self._start, self._tokens = time.perf_counter(), 0
