"""Backbones as data, as litgpt keeps its model configs: DeBERTa-v3 presets from a 4-layer laptop model to the paper's
370M / 800M / 1.5B, any Hugging Face config dict, or a pretrained model (a local directory, or a hub name found in
the local Hugging Face cache: :func:`backbone_directory`, nothing is ever downloaded), always a transformers model
(never a rewrite). ``vocab_size`` and the special token ids come from the tokenizer (:func:`apply_tokenizer`), so
configs never repeat them; a pretrained model keeps its own (:func:`fit_embeddings`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from transformers import AutoConfig, DebertaV2Config, PretrainedConfig, PreTrainedModel

from thunder.model.checkpoints import AUTO_CLASSES, Task, has_weights

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
HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")  # organisation/name: klue/roberta-base


def backbone_directory(backbone: str | Mapping[str, Any]) -> Path | None:
    """The local directory of a pretrained backbone: a directory as given, or the snapshot of a hub name
    (``klue/roberta-base``) in the local Hugging Face cache (``HF_HUB_CACHE``; only read, never downloaded, so it
    works with ``HF_HUB_OFFLINE=1``); None for a preset or a config dict. A hub name whose config and weights are not
    in the cache is a ``FileNotFoundError`` of one line naming it."""
    if isinstance(backbone, Mapping) or backbone in PRESETS:
        return None
    if Path(backbone).is_dir():
        return Path(backbone)
    if not HUB_NAME.fullmatch(backbone):
        raise ValueError(f"unknown backbone {backbone!r}: expected one of {sorted(PRESETS)}, a local model directory, "
                         "a Hugging Face hub name (organisation/name) in the local cache or a config dict with "
                         "'model_type'")  # fmt: skip
    from huggingface_hub import constants, try_to_load_from_cache

    found = try_to_load_from_cache(backbone, "config.json")
    if not isinstance(found, str) or not has_weights(Path(found).parent):
        what = "its weights are not" if isinstance(found, str) else "it is neither a local directory nor"
        raise FileNotFoundError(f"backbone {backbone!r}: {what} in the Hugging Face cache ({constants.HF_HUB_CACHE}); "
                                f"Thunder never downloads: fetch it where there is a network (hf download {backbone}) "
                                "or give its directory")  # fmt: skip
    return Path(found).parent


def backbone_config(backbone: str | Mapping[str, Any], overrides: Mapping[str, Any] | None = None) -> PretrainedConfig:
    """The Hugging Face config of a backbone: a preset name, a config dict with ``model_type``, or a pretrained model
    (:func:`backbone_directory`; its ``config.json`` read without remote code)."""
    if isinstance(backbone, Mapping):
        spec = dict(backbone)
        if "model_type" not in spec:
            raise ValueError(f"backbone config dict needs a 'model_type' (e.g. 'deberta-v2', 'gpt_neox'): {spec}")
        config = AutoConfig.for_model(spec.pop("model_type"), **spec)
    elif backbone in PRESETS:
        config = DebertaV2Config(**DEBERTA_V3, **PRESETS[backbone])
    else:
        directory = backbone_directory(backbone)
        try:
            config = AutoConfig.from_pretrained(directory, local_files_only=True, trust_remote_code=False)
        except (OSError, ValueError, KeyError) as error:  # no config.json, an unknown model_type, remote code
            reason = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
            raise ValueError(f"backbone {backbone}: {reason} (Thunder never runs a model's own code)") from None
    for key, value in (overrides or {}).items():
        setattr(config, key, value)
    return config


def count_parameters(config: PretrainedConfig, task: Task = "mlm") -> int:
    """Parameters of the model a config describes, counted on the meta device (nothing is allocated)."""
    with torch.device("meta"):
        model = AUTO_CLASSES[task].from_config(config)
    return sum(p.numel() for p in model.parameters())


def apply_tokenizer(config: PretrainedConfig, tokenizer: Any, keep_vocab: bool = False) -> None:
    """Set ``vocab_size`` and the special token ids of ``config`` from a Thunder tokenizer
    (:mod:`thunder.language.tokenizer`, :mod:`thunder.language.pretrained_tokenizer`).

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


def fit_embeddings(model: PreTrainedModel, vocab_size: int) -> None:
    """Cut a pretrained model's embedding rows (and its tied output head) to the ``vocab_size`` ids its tokenizer
    reaches: rows no token reaches are never read (mDeBERTa-v3 holds 251,000 for a tokenizer of 250,102)."""
    if model.config.vocab_size > vocab_size:
        model.resize_token_embeddings(vocab_size)


def window_limit(model: PreTrainedModel) -> int | None:
    """The longest window (ids, special tokens included) a model reads: its absolute position embeddings, less the
    RoBERTa family's offset past the padding id; None for relative or rotary positions (DeBERTa-v3, GPT-NeoX)."""
    embeddings = getattr(model.base_model, "embeddings", None)
    positions = getattr(embeddings, "position_embeddings", None)
    if not isinstance(positions, torch.nn.Embedding):
        return None
    padding = getattr(embeddings, "padding_idx", None)
    return positions.num_embeddings - (padding + 1 if padding is not None else 0)
