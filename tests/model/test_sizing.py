"""thunder.model.sizing: model FLOPs per token against torch's FLOP counter; memory estimates."""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from thunder.model.backbones import backbone_config
from thunder.model.loader import AUTO_CLASSES
from thunder.model.sizing import GIB, forward_flops_per_token, train_flops_per_token, training_memory

SMALL = {"hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 512,
         "vocab_size": 3000, "position_buckets": 64}  # fmt: skip


@pytest.mark.parametrize("seq_len", [32, 256])
@pytest.mark.parametrize("task", ["mlm", "token-classification"])
def test_forward_flops_match_torchs_flop_counter(seq_len: int, task: str) -> None:
    config = backbone_config("small", SMALL)
    config.num_labels = 7
    model = AUTO_CLASSES[task].from_config(config).eval()
    batch = 2
    ids = torch.randint(5, 3000, (batch, seq_len))
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(input_ids=ids, attention_mask=torch.ones_like(ids))
    measured = counter.get_total_flops() / (batch * seq_len)
    assert forward_flops_per_token(config, seq_len, task, batch * seq_len) == pytest.approx(measured, rel=0.02)
    assert train_flops_per_token(config, seq_len, task) == 3 * forward_flops_per_token(config, seq_len, task)
    if task == "mlm":  # the vocabulary head on the masked tokens only
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            hidden_states = model.base_model(input_ids=ids, attention_mask=torch.ones_like(ids))[0]
            model.cls(hidden_states[:, : seq_len // 4])
        expected = forward_flops_per_token(config, seq_len, task, batch * seq_len, head_share=0.25)
        assert expected == pytest.approx(counter.get_total_flops() / (batch * seq_len), rel=0.02)


def test_memory_shards_states_and_checkpointing_saves_activations() -> None:
    config = backbone_config("370m")
    one = training_memory(config, 337_000_000, 50_000_000, 1, 512, 32, checkpointing=True)
    eight = training_memory(config, 337_000_000, 50_000_000, 8, 512, 32, checkpointing=True)
    off = training_memory(config, 337_000_000, 50_000_000, 8, 512, 32, checkpointing=False)
    assert one.parameters + one.gradients + one.optimizer == pytest.approx(16 * 337_000_000)  # fp32 + AdamW
    assert eight.optimizer == pytest.approx(one.optimizer / 8) and eight.gathered > 0 == one.gathered
    assert off.activations > 10 * eight.activations and off.total / GIB > eight.total / GIB
