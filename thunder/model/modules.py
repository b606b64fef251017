"""Backbones and the two LightningModules: :class:`MaskedLM` (pretraining) and :class:`TokenClassifier`.

A backbone is a transformers model, never a rewrite: DeBERTa-v3 presets (:data:`PRESETS`, built with
``DebertaV2Config``), any Hugging Face config dict (``{"model_type": "gpt_neox", ...}``) or a pretrained model (a
local directory or a hub name in the local cache), instantiated through ``AutoModelForMaskedLM`` /
``AutoModelForTokenClassification``. ``vocab_size`` and the special token ids come from the tokenizer, so configs
never repeat them; ``tokenizer: pretrained`` is the pretrained model's own behind the Mecab step
(:mod:`thunder.language.pretrained_tokenizer`).

Both modules build the model in ``configure_model`` (once), so Lightning's ``ModelParallelStrategy`` can shard it:
Thunder applies FSDP2 ``fully_shard`` to every transformer layer and then to the root over the ``data_parallel`` mesh
dimension. Checkpoints carry a ``"thunder"`` entry (:mod:`thunder.model.checkpoint`: Hugging Face config, label set with its
taxonomy, tokenizer files and fingerprint) so that export, inference and ``init_from`` need nothing but the checkpoint.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from lightning.pytorch import LightningModule
from lightning.pytorch.loggers import TensorBoardLogger
from lightning.pytorch.utilities import rank_zero_info
from torch import Tensor
from transformers import (
    PretrainedConfig,
    PreTrainedModel,
)
from transformers.modeling_outputs import MaskedLMOutput

from thunder.language.release_tokenizer import load_tokenizer
from thunder.language.tokenizer import Windows
from thunder.model import integrity
from thunder.model.backbones import (
    LAYER_CLASSES,
    apply_tokenizer,
    backbone_config,
    backbone_directory,
    fit_embeddings,
    window_limit,
)
from thunder.model.decoding import GROW_THRESHOLD, THRESHOLD, OperatingPoint, entity_tags, token_spans
from thunder.model.checkpoints import (
    AUTO_CLASSES,
    ArtefactError,
    Task,
    config_from_dict,
    has_weights,
    load_weights,
    model_state,
    thunder_entry,
)
from thunder.model.loader import (
    Artefact,
    label_set_from_dict,
    tokenizer_files,
    tokenizer_fingerprint,
    tokenizer_from_files,
)
from thunder.model.inference import TorchRuntime
from thunder.model.metrics import TokenMetrics, format_table
from thunder.model.progress import batch_tokens
from thunder.model.sizing import forward_flops_per_token, train_flops_per_token
from thunder.taxonomy import LabelSetMismatch

_MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
PRETRAINED = "pretrained"  # tokenizer: the pretrained model's own (where its weights come from)


# --------------------------------------------------------------------------------------------------- modules


class _ThunderModule(LightningModule):
    """Shared backbone building, sharding, optimiser and checkpoint entries of both modules."""

    task: Task

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
        allow_unverified: bool = False,
    ) -> None:
        """
        Args:
            backbone: a preset (``tiny``, ``small``, ``370m``, ``800m``, ``1p5b``), a Hugging Face config dict with
                ``model_type`` (e.g. ``gpt_neox``, ``llama``), or a pretrained model: a local model directory or a
                hub name in the local Hugging Face cache, never downloaded (weights loaded when present).
            tokenizer: tokenizer directory giving vocab_size and special token ids (a Thunder tokenizer, or a
                pretrained model's directory: its own tokenizer behind the Mecab step); ``pretrained``: the
                tokenizer of ``init_from``, else of the ``backbone`` model, handed to the datamodule by ``thunder
                fit``; default: the datamodule's ``tokenizer``.
            init_from: weights to start from: a MaskedLM checkpoint (``.ckpt`` or sharded directory) or an exported /
                Hugging Face model directory; its architecture replaces ``backbone`` (phase 2 of pretraining starts
                from phase 1; a token classifier's head is new, unless it starts from a token classifier:
                :meth:`TokenClassifier.build`).
            backbone_overrides: config attributes to change (dropout, ...).
            lr: peak learning rate.
            weight_decay: AdamW weight decay (not applied to biases and norms).
            warmup_ratio: fraction of the steps with linear warmup before the cosine decay.
            gradient_checkpointing: recompute activations in the backward pass (activation checkpointing).
            compile: ``torch.compile`` the model.
            allow_unverified: start from a token classifier (``init_from``, the data module's ``base_model``) that
                records no fingerprint or self-test answers (refused otherwise).
        """
        super().__init__()
        if not 0.0 <= warmup_ratio <= 1.0:
            raise ValueError(f"warmup_ratio must lie in [0, 1], got {warmup_ratio}")
        if lr <= 0:
            raise ValueError(f"lr must be positive, got {lr}")
        backbone_config(backbone, backbone_overrides)  # an unknown backbone fails here, before a Trainer starts
        if init_from is not None and not Path(init_from).exists():
            raise FileNotFoundError(f"init_from not found: {init_from}")
        self.model: PreTrainedModel | None = None
        self._tokenizer: Any = None
        if tokenizer == PRETRAINED:
            self._tokenizer = pretrained_tokenizer(backbone, init_from)
        elif tokenizer:
            self._tokenizer = load_tokenizer(tokenizer)
        self.save_hyperparameters()  # the arguments of every __init__ in the subclass chain

    # -- building

    @property
    def tokenizer(self) -> Any:
        """The tokenizer: the ``tokenizer`` argument, else the datamodule's (``None`` when neither)."""
        if self._tokenizer is None and self._trainer is not None:
            self._tokenizer = getattr(self._trainer.datamodule, "tokenizer", None)
        return self._tokenizer

    def _config(self) -> tuple[PretrainedConfig, str | None, dict[str, Tensor] | None]:
        """Backbone config, where pretrained weights come from (``init_from`` or the backbone directory), weights."""
        hp = self.hparams
        source, directory = hp.init_from, backbone_directory(hp.backbone)
        if source is None and directory is not None and has_weights(directory):
            source = str(directory)
        state = None
        if source is None:
            config = backbone_config(hp.backbone, hp.backbone_overrides)
        else:
            config, state = Artefact.open(source).pretrained()
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
            data = self._datamodule()
            if self._tokenizer is not None and getattr(data, "tokenizer", None) is not None:
                check_same_tokenizer(self._tokenizer, data.tokenizer)
            with integrity.unverified_allowed(self.hparams.get("allow_unverified", False)):
                self.build()

    def _datamodule(self) -> Any:
        return self._trainer.datamodule if self._trainer is not None else None

    def build(self) -> None:
        """Build the Hugging Face model (once), load pretrained weights, shard it under ModelParallelStrategy."""
        if self.model is not None:
            return
        config, source, state = self._config()
        self._adapt_config(config)
        model = AUTO_CLASSES[self.task].from_config(config)
        if state is not None:
            load_weights(model, state, encoder_only=self.task == "token-classification", source=source)
            if self.tokenizer is not None:
                fit_embeddings(model, self.tokenizer.vocab_size)
        self._check_windows(model)
        self._install(model)

    def _check_windows(self, model: PreTrainedModel) -> None:
        """Refuse data windows longer than the backbone's position embeddings (one line, before any step)."""
        limit, length = window_limit(model), getattr(self._datamodule(), "max_length", None)
        if limit is not None and isinstance(length, int) and length > limit:
            raise ValueError(f"the data's max_length {length} is longer than the {limit} positions the backbone "
                             f"{self.hparams.backbone} reads: set data max_length to at most {limit}")  # fmt: skip

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

    # model FLOPs of the current batch on this device, read by TokenThroughputMonitor (Lightning's ThroughputMonitor)
    flops_per_batch: float = 0.0

    def on_train_batch_start(self, batch: Mapping[str, Tensor], batch_idx: int) -> None:
        self.flops_per_batch = self._batch_flops(batch, train_flops_per_token)

    def on_validation_batch_start(self, batch: Mapping[str, Tensor], batch_idx: int, dataloader_idx: int = 0) -> None:
        self.flops_per_batch = self._batch_flops(batch, forward_flops_per_token)

    def _batch_flops(self, batch: Mapping[str, Tensor], per_token: Any) -> float:
        ids, tokens = batch["input_ids"], batch_tokens(batch)
        head_share = self._head_tokens(batch) / tokens if tokens else 1.0
        return per_token(self.model.config, int(ids.shape[1]), self.task, int(ids.numel()), head_share) * tokens

    def _head_tokens(self, batch: Mapping[str, Tensor]) -> int:
        """Tokens of ``batch`` the task head runs on (all of them)."""
        return batch_tokens(batch)

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

    def on_train_start(self) -> None:
        # `estimated_stepping_batches` above builds the train loader before a resumed run's loop state is restored,
        # and Lightning (2.6) then never hands the saved loader position to it: hand it over now, before the first
        # batch, so a run resumed mid-epoch continues after the batches it had already trained on.
        self.trainer.fit_loop._load_combined_loader_states()

    # -- checkpoints

    def _thunder_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"task": self.task, "hf_config": self.model.config.to_dict()}
        if self.tokenizer is not None:
            entry["tokenizer_files"] = tokenizer_files(self.tokenizer)
            entry["tokenizer_fingerprint"] = tokenizer_fingerprint(self.tokenizer)
        return entry

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        checkpoint["thunder"] = self._thunder_entry()
        checkpoint["rng_states"] = rng_states()

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        if self._trainer is not None and self.trainer.state.fn == "fit" and "rng_states" in checkpoint:
            set_rng_states(checkpoint["rng_states"])  # resuming: dropout continues as in the interrupted run
        thunder = thunder_entry(checkpoint, "checkpoint")
        if thunder.get("task") != self.task:
            raise ValueError(f"checkpoint was written for task {thunder.get('task')!r}, this module is {self.task!r}")
        if self.model is None:  # load_from_checkpoint: no configure_model call, build from the stored config
            self._install(AUTO_CLASSES[self.task].from_config(config_from_dict(thunder["hf_config"])))
        if self.tokenizer is None and "tokenizer_files" in thunder:
            self._tokenizer = tokenizer_from_files(thunder["tokenizer_files"], "checkpoint")


def pretrained_tokenizer(backbone: str | dict[str, Any], init_from: str | None) -> Any:
    """The tokenizer of the pretrained model training starts from (``tokenizer: pretrained``): ``init_from``'s, else
    the ``backbone`` model's."""
    source = init_from or backbone_directory(backbone)
    if source is None:
        raise ValueError("tokenizer: pretrained reads a pretrained model's tokenizer: give a backbone that is a model "
                         "directory or a hub name, or init_from")  # fmt: skip
    return Artefact.open(source).tokenizer()


def check_same_tokenizer(model_tokenizer: Any, data_tokenizer: Any) -> None:
    """Refuse data tokenized otherwise than the model reads (``ValueError``, one line)."""
    if data_tokenizer is not model_tokenizer and tokenizer_fingerprint(data_tokenizer) != tokenizer_fingerprint(
            model_tokenizer):  # fmt: skip
        raise ValueError("the data module's tokenizer is not the model's: leave the data module's tokenizer out "
                         "(thunder fit hands it the model's) or give both the same")  # fmt: skip


def rng_states() -> dict[str, Any]:
    """torch's random state (CPU and CUDA; what dropout draws from), as tensors a weights-only load accepts."""
    states: dict[str, Any] = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def set_rng_states(states: Mapping[str, Any]) -> None:
    """Restore what :func:`rng_states` returned."""
    torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available() and len(states["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(states["cuda"])


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

    def __init__(self, lr: float = 5e-4, **kwargs: Any) -> None:
        """
        Args:
            lr: peak learning rate.
            **kwargs: the backbone, tokenizer, initial weights and optimiser settings of :class:`_ThunderModule`.
        """
        super().__init__(lr=lr, **kwargs)

    def forward(self, batch: Mapping[str, Tensor]) -> Any:
        """The model's output; with ``labels``, the vocabulary head runs on the masked tokens only (see
        :meth:`masked_only`) and ``logits`` holds theirs."""
        if not self.masked_only(batch):
            return super().forward(batch)
        hidden = self.model.base_model(**{k: batch[k] for k in _MODEL_INPUTS if k in batch})[0]
        masked = batch["labels"] != -100
        logits = self.model.cls(hidden[masked])
        return MaskedLMOutput(loss=torch.nn.functional.cross_entropy(logits, batch["labels"][masked]), logits=logits)

    def masked_only(self, batch: Mapping[str, Tensor]) -> bool:
        """Whether the vocabulary head runs on the masked tokens of ``batch`` only (about 15%: the ``small``
        preset's training step then takes half the time on a CPU): a batch with ``labels``, a model with a ``cls``
        head (DeBERTa-v2, BERT) not sharded by FSDP2 (whose root gathers the head's weights in its own forward)."""
        return "labels" in batch and hasattr(self.model, "cls") and self.device_mesh is None

    def _head_tokens(self, batch: Mapping[str, Tensor]) -> int:
        return int((batch["labels"] != -100).sum()) if self.masked_only(batch) else super()._head_tokens(batch)

    def validation_step(self, batch: Mapping[str, Tensor], batch_idx: int) -> None:
        self.log("val/loss", self(batch).loss, prog_bar=True, sync_dist=True)


class TokenClassifier(_ThunderModule):
    """Token classification over a label set (batches from :class:`thunder.data.DeIdDataModule`)."""

    task: Task = "token-classification"

    def __init__(
        self,
        label_set: dict[str, Any] | None = None,
        lr: float = 5e-5,
        num_val_samples: int = 3,
        threshold: float = THRESHOLD,
        grow_threshold: float | None = GROW_THRESHOLD,
        **kwargs: Any,
    ) -> None:
        """
        Args:
            label_set: ``LabelSet.to_dict()``; default: the datamodule's ``label_set``.
            lr: peak learning rate.
            num_val_samples: validation windows written as de-identified text to TensorBoard each validation.
            threshold: a token is predicted an identifier when 1 - P(O) exceeds it
                (:func:`thunder.model.decoding.entity_tags`); validation and test metrics use this rule.
            grow_threshold: the low threshold of span growing at de-identification
                (:class:`thunder.model.decoding.OperatingPoint`; null: no growing). Token metrics do not use it.
            **kwargs: the backbone, tokenizer, initial weights and optimiser settings of :class:`_ThunderModule`.

        ``threshold`` and ``grow_threshold`` are the model's operating point: stored in its checkpoints and exports,
        they are the defaults of ``thunder deid``, ``evaluate``, ``predict``, ``serve`` and
        ``Deidentifier.from_pretrained``; so are the datamodule's ``max_length`` and ``stride``, the windows the
        model was trained on (:class:`~thunder.language.tokenizer.Windows`).
        """
        operating_point = OperatingPoint(threshold, grow_threshold)  # refuses thresholds outside (0, 1)
        super().__init__(lr=lr, **kwargs)
        self.operating_point = operating_point
        self.windows: Windows | None = None  # the windows it was trained on (a loaded checkpoint's; else the data's)
        self.label_set: Any = label_set_from_dict(label_set) if label_set is not None else None
        self.val_metrics: TokenMetrics | None = None
        self.test_metrics: TokenMetrics | None = None
        self._extra_test_metrics: dict[str, TokenMetrics] = {}  # test sets after the first (plain dict: no state)
        self._samples: list[tuple[list[int], list[int], list[int]]] = []

    def build(self) -> None:
        """Build the model (see :meth:`_ThunderModule.build`). A token classifier to start from (``init_from``, by
        default the datamodule's ``base_model``: a ``.ckpt``, an export, an imported or published release) whose
        label set is the data's keeps its head, and the datamodule must tokenize for it: adaptation. With another
        label set only its encoder is used, under a new head."""
        source = self.hparams.init_from or getattr(self._datamodule(), "base_model", None)
        if self.model is not None or source is None or Artefact.open(source).task != "token-classification":
            return super().build()
        wanted = self.label_set or getattr(self._datamodule(), "label_set", None)
        label_set = Artefact.open(source).classifier(weights=False).label_set
        if wanted is not None:
            try:
                wanted.check_compatible(label_set.to_dict())
            except LabelSetMismatch:  # another label set: the encoder under a new head
                return super().build()
        model, tokenizer, label_set, _ = Artefact.open(source).classifier()[:4]
        self.label_set = wanted or label_set
        if self.tokenizer is not None and tokenizer_fingerprint(self.tokenizer) != tokenizer_fingerprint(tokenizer):
            raise ArtefactError(f"{source}: the data's tokenizer is not the one the model was trained with (give the "
                                "data module base_model or the model's tokenizer)")  # fmt: skip
        self._tokenizer = self.tokenizer or tokenizer
        if self.hparams.backbone_overrides:  # dropout and the like are read when the modules are built
            config = model.config
            for key, value in self.hparams.backbone_overrides.items():
                setattr(config, key, value)
            state, model = model.state_dict(), AUTO_CLASSES[self.task].from_config(config)
            model.load_state_dict(state)
        self._install(model.train())

    def _adapt_config(self, config: PretrainedConfig) -> None:
        if self.label_set is None:
            self.label_set = getattr(self._datamodule(), "label_set", None)
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
        entry["operating_point"] = self.operating_point.to_dict()
        windows = self._training_windows()
        if windows is not None:
            entry["windows"] = windows.to_dict()
        return entry

    def _training_windows(self) -> Windows | None:
        data = self._datamodule()
        if hasattr(data, "max_length") and hasattr(data, "stride"):
            return Windows(data.max_length, data.stride)
        return self.windows

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        super().on_save_checkpoint(checkpoint)
        if self.tokenizer is not None:  # the fingerprint and the self-test answers (thunder.model.integrity)
            checkpoint["thunder"] |= self._integrity_record(model_state(checkpoint))

    def _integrity_record(self, state: Mapping[str, Tensor]) -> dict[str, Any]:
        """The fingerprint of ``state`` and the self-test answers, taken in float32 as a loaded model runs (nothing
        for sharded weights: the export records them)."""
        float32 = all(p.dtype == torch.float32 for p in self.model.parameters())
        model = self.model if float32 else copy.deepcopy(self.model).float()
        training = self.model.training
        model.eval()
        try:
            windows = self._training_windows()
            return integrity.record(state, TorchRuntime(model), self.tokenizer, self.operating_point,
                                    self.label_set.to_dict(), tokenizer_fingerprint(self.tokenizer), model.config,
                                    windows.to_dict() if windows is not None else None)  # fmt: skip
        finally:
            self.model.train(training)

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        thunder = thunder_entry(checkpoint, "checkpoint")
        if "label_set" not in thunder:
            raise ValueError("checkpoint has no label set: it was not written by a TokenClassifier")
        if self.label_set is None:
            self.label_set = label_set_from_dict(thunder["label_set"])
        else:
            self.label_set.check_compatible(thunder["label_set"])
        if "windows" in thunder:
            self.windows = Windows.from_dict(thunder["windows"])
        super().on_load_checkpoint(checkpoint)

    def _evaluate(self, batch: Mapping[str, Tensor], stage: str, metrics: TokenMetrics) -> Tensor:
        out = self(batch)
        preds = entity_tags(out.logits.float().softmax(-1), self.operating_point.threshold)
        metrics.update(preds, batch["labels"])
        self.log(f"{stage}/loss", out.loss, sync_dist=True, add_dataloader_idx=False)
        return preds

    def validation_step(self, batch: Mapping[str, Tensor], batch_idx: int) -> None:
        preds = self._evaluate(batch, "val", self.val_metrics)
        if batch_idx == 0:
            rows = zip(batch["input_ids"].tolist(), preds.tolist(), batch["labels"].tolist())
            self._samples = [row for row, _ in zip(rows, range(self.hparams.num_val_samples))]

    def _test_sets(self) -> tuple[str, ...]:
        """Names of the datamodule's test sets in dataloader order (``("",)``: one set, logged as ``test/...``)."""
        datamodule = self._trainer.datamodule if self._trainer is not None else None
        return tuple(getattr(datamodule, "test_sets", None) or ("",))

    def _test_metrics(self, index: int) -> tuple[str, TokenMetrics]:
        name = self._test_sets()[index]
        if index == 0:
            return name, self.test_metrics
        if name not in self._extra_test_metrics:
            self._extra_test_metrics[name] = self.test_metrics.clone().to(self.device)
        return name, self._extra_test_metrics[name]

    def test_step(self, batch: Mapping[str, Tensor], batch_idx: int, dataloader_idx: int = 0) -> None:
        name, metrics = self._test_metrics(dataloader_idx)
        self._evaluate(batch, f"test/{name}" if name else "test", metrics)

    def on_validation_epoch_end(self) -> None:
        self.log_dict({f"val/{k}": v for k, v in self.val_metrics.compute().items()}, prog_bar=False)
        self.val_metrics.reset()
        self._log_samples()

    def on_test_epoch_end(self) -> None:
        for index, name in enumerate(self._test_sets()):
            _, metrics = self._test_metrics(index)
            prefix = f"test/{name}" if name else "test"
            self.log_dict({f"{prefix}/{k}": v for k, v in metrics.compute().items()}, add_dataloader_idx=False)
            table = format_table(metrics.table())
            rank_zero_info(f"Per-type token metrics ({prefix}):\n{table}")
            if isinstance(self.logger, TensorBoardLogger) and self.global_rank == 0:
                self.logger.experiment.add_text(f"{prefix}/per_type", table, self.global_step)
            metrics.reset()

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
    for start, end, entity_type in token_spans(tags, label_set):
        pieces += [tokenizer.decode(ids[position:start]), f"⟦{entity_type}⟧"]
        position = end
    pieces.append(tokenizer.decode(ids[position:]))
    return "".join(pieces)
