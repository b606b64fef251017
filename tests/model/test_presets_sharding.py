"""The paper presets (370m, 800m, 1p5b) built on the meta device and sharded with FSDP2 as ModelParallelStrategy does."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.fsdp import FSDPModule
from torch.distributed.tensor import DTensor, Shard

from thunder.model.modules import LAYER_CLASSES, MaskedLM, TokenClassifier

# preset -> (layers, parameters in the paper, vocabulary)
PAPER = {"370m": (24, 370e6, 32_000), "800m": (36, 800e6, 32_000), "1p5b": (24, 1.5e9, 128_000)}


@pytest.fixture(scope="module")
def mesh() -> DeviceMesh:
    """A one-process gloo group and the 2-D mesh ModelParallelStrategy gives ``configure_model``."""
    started = not dist.is_initialized()
    if started:
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    yield init_device_mesh("cpu", (1, 1), mesh_dim_names=("data_parallel", "tensor_parallel"))
    if started:
        dist.destroy_process_group()


def sharded(module: MaskedLM | TokenClassifier, mesh: DeviceMesh) -> torch.nn.Module:
    module._device_mesh = mesh
    with torch.device("meta"):
        module.build()  # what configure_model does under the strategy
    return module.model


@pytest.mark.parametrize("preset", list(PAPER))
def test_preset_builds_on_meta_with_one_fsdp_unit_per_layer(preset: str, mesh: DeviceMesh) -> None:
    layers, paper, vocab = PAPER[preset]
    model = sharded(MaskedLM(backbone=preset), mesh)
    assert model.config.vocab_size == vocab
    units = [m for m in model.modules() if isinstance(m, FSDPModule)]
    layer_units = [m for m in units if any(c.__name__ in LAYER_CLASSES for c in type(m).__mro__)]
    assert len(layer_units) == layers and units == [model, *layer_units]  # the root holds the rest
    parameters = list(model.parameters())
    assert all(p.device.type == "meta" for p in parameters)  # nothing was allocated
    assert all(isinstance(p, DTensor) and p.placements == (Shard(0),) for p in parameters)
    total = sum(p.numel() for p in parameters)
    assert abs(total - paper) / paper < 0.10
    # the root unit (embeddings, relative-position embeddings, MLM head) is gathered whole around the layers: for
    # 1p5b its 128k x 2048 embedding makes it the largest unit
    in_layers = sum(p.numel() for unit in layer_units for p in unit.parameters())
    root = total - in_layers
    assert root >= vocab * model.config.hidden_size
    assert in_layers // layers < root if preset == "1p5b" else in_layers // layers > root / 4


def test_token_classifier_preset_shards_the_same_way(mesh: DeviceMesh) -> None:
    from thunder.taxonomy import LabelSet, Taxonomy

    label_set = LabelSet(Taxonomy.load(None), granularity="category")
    model = sharded(TokenClassifier(backbone="370m", label_set=label_set.to_dict()), mesh)
    units = [m for m in model.modules() if isinstance(m, FSDPModule)]
    assert len(units) == 25 and model.config.num_labels == len(label_set.names)
