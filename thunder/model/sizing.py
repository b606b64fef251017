"""Model FLOPs per token and per-GPU memory of a backbone config under FSDP2 (sizing a cluster, logging MFU)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

GIB = 1024**3


def _dims(config: Any) -> tuple[int, int, int, int, int, int]:
    """Hidden size, layers, heads, FFN width, vocabulary and DeBERTa's relative-attention span (0 without)."""
    span = 0
    if getattr(config, "relative_attention", False):
        buckets = getattr(config, "position_buckets", -1)
        span = buckets if buckets > 0 else getattr(config, "max_relative_positions", -1)
        if span is None or span < 1:
            span = config.max_position_embeddings
    return (config.hidden_size, config.num_hidden_layers, config.num_attention_heads, config.intermediate_size,
            config.vocab_size, span)  # fmt: skip


def forward_flops_per_token(
    config: Any, seq_len: int, task: str = "mlm", batch_tokens: int | None = None, head_share: float = 1.0
) -> float:
    """Forward FLOPs per token of a (DeBERTa-style) encoder at ``seq_len`` (multiply-add = 2 FLOPs).

    Per layer: the Q/K/V/output and FFN matmuls (2 x (4H^2 + 2HI)), content attention (QK^T and AV: 4TH) and,
    with relative attention, the content-to-position and position-to-content scores over 2 x span relative
    positions (8 x span x H, whatever the length) and the key and query projections of the 2 x span relative
    embeddings, once per batch (shared by its ``batch_tokens`` tokens; left out when None). Heads: the MLM
    transform and decoder (2H^2 + 2HV) or a token classifier (2H x labels), run on ``head_share`` of the tokens
    (the MLM head on the masked ones only: about 0.15).
    """
    hidden, layers, _, ffn, vocab, span = _dims(config)
    per_layer = 2 * (4 * hidden * hidden + 2 * hidden * ffn) + 4 * seq_len * hidden
    if span:
        per_layer += 8 * span * hidden + (2 * 2 * 2 * span * hidden * hidden / batch_tokens if batch_tokens else 0)
    head = 2 * hidden * hidden + 2 * hidden * vocab if task == "mlm" else 2 * hidden * getattr(config, "num_labels", 2)
    return layers * per_layer + head * head_share


def train_flops_per_token(
    config: Any, seq_len: int, task: str = "mlm", batch_tokens: int | None = None, head_share: float = 1.0
) -> float:
    """Model FLOPs of one training token: forward + backward (3 x forward; recomputation is not counted, as in MFU)."""
    return 3 * forward_flops_per_token(config, seq_len, task, batch_tokens, head_share)


@dataclass(frozen=True)
class Memory:
    """Per-GPU memory of training under FSDP2 full sharding, in bytes."""

    parameters: float
    gradients: float
    optimizer: float
    gathered: float  # unsharded units alive at once (all-gather + prefetch + gradient reduce-scatter)
    activations: float
    logits: float

    @property
    def total(self) -> float:
        return self.parameters + self.gradients + self.optimizer + self.gathered + self.activations + self.logits


def layer_activation_bytes(config: Any, seq_len: int, micro_batch: int) -> float:
    """Activations one layer keeps for backward in bf16 autocast: the Korthikanti et al. count s*b*h*(34 + 5*a*s/h)
    with DeBERTa's two extra score matrices (content-to-position, position-to-content) as three attention maps."""
    hidden, _, heads, ffn, _, span = _dims(config)
    maps = 3 if span else 1
    return seq_len * micro_batch * (hidden * (10 + 6 * ffn / hidden) + 5 * maps * heads * seq_len)


def training_memory(
    config: Any,
    parameters: int,
    largest_unit: int,
    gpus: int,
    seq_len: int,
    micro_batch: int,
    checkpointing: bool,
    task: str = "mlm",
) -> Memory:
    """Per-GPU memory of bf16-mixed training (fp32 parameters, gradients and AdamW moments, all sharded over
    ``gpus``; bf16 compute) with FSDP2 units of at most ``largest_unit`` parameters gathered in fp32, two at once
    plus one unit's gradients. With ``checkpointing`` only each layer's input is kept, plus one layer's activations
    while it is recomputed."""
    hidden, layers, *_ = _dims(config)
    vocab = config.vocab_size
    per_layer = layer_activation_bytes(config, seq_len, micro_batch)
    if checkpointing:
        activations = layers * seq_len * micro_batch * hidden * 2 + per_layer
    else:
        activations = layers * per_layer
    logits = seq_len * micro_batch * vocab * (2 + 4 + 4) if task == "mlm" else 0  # bf16 logits, fp32 copy and grad
    return Memory(
        parameters=4 * parameters / gpus,
        gradients=4 * parameters / gpus,
        optimizer=8 * parameters / gpus,
        gathered=3 * 4 * largest_unit if gpus > 1 else 0,
        activations=activations,
        logits=logits,
    )


def tokens_per_second(
    config: Any, seq_len: int, peak_tflops: float, mfu: float, task: str = "mlm", batch_tokens: int | None = None
) -> float:
    """Training tokens per second per GPU at model FLOPs utilisation ``mfu`` of a ``peak_tflops`` (dense) GPU."""
    return mfu * peak_tflops * 1e12 / train_flops_per_token(config, seq_len, task, batch_tokens)
