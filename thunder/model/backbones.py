"""Backbones as data, as litgpt keeps its model configs: DeBERTa-v3 presets from a 4-layer laptop model to the paper's
370M / 800M / 1.5B, any Hugging Face config dict or a local model directory, always a transformers model (never a
rewrite). ``vocab_size`` and the special token ids come from the tokenizer (:func:`apply_tokenizer`), so configs never
repeat them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from transformers import AutoConfig, DebertaV2Config, PretrainedConfig

from thunder.model.loader import AUTO_CLASSES, Task

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
