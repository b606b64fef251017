#!/usr/bin/env bash
# The quality recipe (tokenizer, configs/pretrain/small.yaml, configs/small.yaml) in a run folder of its own,
# resumable: run the same command again after a stop and each step picks up from its last checkpoint. The learning
# curve of issue 78 runs it at several lengths, each in its own folder outside the work tree:
#
#   tools/train_recipe.sh RUN_DIR [PRETRAIN_STEPS [FINETUNE_STEPS [PRECISION]]]
#   tools/train_recipe.sh ../runs/small-1x                    # 3,000 + 2,800 steps, 32-true: the shipped model
#   tools/train_recipe.sh ../runs/small-2x 6000 5600          # twice as long (the schedules span the steps)
#
# PRECISION: 32-true (default; CPUs without bfloat16 units) or bf16-mixed. The corpora are read from ../shared beside
# the repository; the checkpoints land in RUN_DIR/runs/small/{pretrain,finetune}/checkpoints/last.ckpt. Training
# shares no core: run it alone, or give everything else one thread.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
run="${1:?usage: tools/train_recipe.sh RUN_DIR [PRETRAIN_STEPS [FINETUNE_STEPS [PRECISION]]]}"
pretrain_steps="${2:-3000}"
finetune_steps="${3:-2800}"
precision="${4:-32-true}"
shared="$(cd "$repo/../shared" && pwd)"
thunder="${THUNDER:-$repo/.venv/bin/thunder}"  # THUNDER: another thunder command (a test records the calls)
mkdir -p "$run" && cd "$run"
resume() { if [ -f "$1" ]; then echo "--ckpt_path $1"; fi; }
hours() { printf '%02d:%02d:00:00' $(($1 / 24)) $(($1 % 24)); }  # Lightning's max_time: DD:HH:MM:SS
if [ ! -f runs/small/tokenizer/tokenizer.json ]; then
  "$thunder" tokenizer train --input "[$shared/data/snu-thunder-deid/annotated, $shared/corpus/legal-ko]" \
    --out runs/small/tokenizer --vocab_size 32000
fi
# the guards (max_time) allow for cores slower than the configs' and for a run shared with light work
# shellcheck disable=SC2046
"$thunder" fit --config "$repo/configs/pretrain/small.yaml" --trainer.precision "$precision" \
  --trainer.max_steps "$pretrain_steps" --trainer.max_time "$(hours $((pretrain_steps / 1500 + 1)))" \
  $(resume runs/small/pretrain/checkpoints/last.ckpt)
# shellcheck disable=SC2046
"$thunder" fit --config "$repo/configs/small.yaml" --trainer.precision "$precision" \
  --trainer.max_steps "$finetune_steps" --trainer.max_time "$(hours $((finetune_steps / 1000 + 1)))" \
  $(resume runs/small/finetune/checkpoints/last.ckpt)
