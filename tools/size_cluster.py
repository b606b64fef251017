"""Size a cluster before renting it: per-GPU memory and expected tokens/s of each pretraining config, computed from
the configs (issue 15).

    .venv/bin/python tools/size_cluster.py [--configs configs/pretrain/370m.yaml ...] [--gpus 1 8 32]
        [--peak-tflops 989] [--mfu 0.5] [--gpu-memory-gib 141]

For every config (its backbone preset, ``max_length``, ``batch_size`` read as full blocks per GPU, as
``MLMDataModule(prepared_dir=...)`` makes them) and GPU count, prints a Markdown table of the per-GPU memory of
bf16-mixed training under FSDP2 full sharding (fp32 parameters, gradients and AdamW moments sharded over the GPUs,
the gathered units, activations with activation checkpointing on and off, MLM logits; see :mod:`thunder.model.sizing`)
and the tokens/s per GPU and for the cluster at the given MFU of a ``--peak-tflops`` dense bf16 GPU. Estimates, not
measurements: allocator fragmentation, CUDA context (about 1 GiB) and communication buffers come on top.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
import yaml

from thunder.model.backbones import backbone_config
from thunder.model.loader import AUTO_CLASSES
from thunder.model.sizing import GIB, tokens_per_second, train_flops_per_token, training_memory

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CONFIGS = [
    REPO / "configs" / "pretrain" / f"{name}{phase}.yaml"
    for name in ("370m", "800m", "1p5b")
    for phase in ("", "_phase2")
]


def merge(base: dict, overlay: dict) -> dict:
    """``overlay`` on ``base``, mappings merged key by key (as LightningCLI merges ``--config A --config B``)."""
    merged = dict(base)
    for key, value in overlay.items():
        merged[key] = merge(base[key], value) if isinstance(value, dict) and isinstance(base.get(key), dict) else value
    return merged


def read_config(path: Path) -> dict:
    """Backbone, sequence length, blocks per GPU and checkpointing of a pretraining config (a ``*_phase2.yaml``
    overlay is read on top of its phase-1 config)."""
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    if path.stem.endswith("_phase2"):
        base = path.with_name(path.stem.removesuffix("_phase2") + path.suffix)
        config = merge(yaml.safe_load(base.read_text(encoding="utf-8")), config)
    model = config["model"]["init_args"]
    data = config["data"]["init_args"]
    return {
        "name": path.stem,
        "backbone": model["backbone"],
        "seq_len": int(data.get("max_length", 512)),
        "micro_batch": int(data.get("batch_size", 8)),
        "checkpointing": bool(model.get("gradient_checkpointing", False)),
    }


def unit_sizes(config) -> tuple[int, int]:
    """Parameters of the model and of its largest FSDP unit (one layer, or the root: embeddings and head)."""
    with torch.device("meta"):
        model = AUTO_CLASSES["mlm"].from_config(config)
    total = sum(p.numel() for p in model.parameters())
    layers = [m for m in model.modules() if type(m).__name__ == "DebertaV2Layer"]
    in_layers = sum(p.numel() for layer in layers for p in layer.parameters())
    return total, max(in_layers // max(len(layers), 1), total - in_layers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", type=Path, nargs="+", default=DEFAULT_CONFIGS)
    parser.add_argument("--gpus", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--peak-tflops", type=float, default=989.0, help="dense bf16 peak per GPU (H100/H200 SXM)")
    parser.add_argument("--mfu", type=float, default=0.5)
    parser.add_argument("--gpu-memory-gib", type=float, default=141.0, help="H200: 141, H100: 80")
    args = parser.parse_args()
    print(
        f"Per-GPU memory (GiB) of bf16-mixed FSDP2 training and tokens/s at {args.mfu:.0%} MFU of "
        f"{args.peak_tflops:g} TFLOP/s; 'fits' against {args.gpu_memory_gib:g} GiB.\n"
    )
    header = ("| config | params | seq × blocks/GPU | GPUs | params+grads+AdamW | gathered units | activations "
              "(ckpt on / off) | logits | total (ckpt on / off) | fits | GFLOP/token | tokens/s per GPU | "
              "tokens/s cluster |")  # fmt: skip
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for path in args.configs:
        spec = read_config(path)
        config = backbone_config(spec["backbone"])
        total, largest = unit_sizes(config)
        seq, batch = spec["seq_len"], spec["micro_batch"]
        per_gpu = tokens_per_second(config, seq, args.peak_tflops, args.mfu, batch_tokens=seq * batch)
        flops = train_flops_per_token(config, seq, batch_tokens=seq * batch)
        for gpus in args.gpus:
            on, off = (training_memory(config, total, largest, gpus, seq, batch, ckpt) for ckpt in (True, False))
            states = on.parameters + on.gradients + on.optimizer
            fits = "/".join("yes" if m.total / GIB <= args.gpu_memory_gib else "no" for m in (on, off))
            print(
                f"| {spec['name']} | {total / 1e6:,.0f}M | {seq} × {batch} | {gpus} | {states / GIB:.1f} | "
                f"{on.gathered / GIB:.1f} | {on.activations / GIB:.1f} / {off.activations / GIB:.1f} | "
                f"{on.logits / GIB:.1f} | {on.total / GIB:.1f} / {off.total / GIB:.1f} | {fits} | "
                f"{flops / 1e9:.2f} | {per_gpu:,.0f} | {per_gpu * gpus:,.0f} |"
            )


if __name__ == "__main__":
    main()
