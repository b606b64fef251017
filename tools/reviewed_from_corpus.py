"""Write annotated judgments as if a clerk had reviewed them: the review page's download format, for adaptation
experiments (docs/experiments/2026-12-01-adaptation.md).

The first N judgments of a split of a training recipe's corpus (the split's own shuffled order, so 25 of them are
the first 25 of the 50), filled once from the mentions training sees (epoch 0, ``--seed``), are written as
``{"id", "text", "spans": [[start, end, label], ...]}`` lines, one file per count:

    .venv/bin/python tools/reviewed_from_corpus.py --config configs/small.yaml --data DIR --counts 25 50 100 --out OUT
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from thunder.commands.data import config_data_section
from thunder.data import Filler, Recipe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="a training config: its data section is the recipe")
    parser.add_argument("--data", default=None, help="annotated judgments instead of the recipe's data_dir")
    parser.add_argument("--split", default="train", choices=("train", "val", "test"))
    parser.add_argument("--counts", type=int, nargs="+", required=True, help="judgments per file")
    parser.add_argument("--seed", type=int, default=0, help="filling seed")
    parser.add_argument("--out", type=Path, required=True, help="folder for reviewed-N.jsonl")
    args = parser.parse_args()
    recipe = Recipe.from_dict(config_data_section(args.config).get("init_args") or {})
    if args.data:
        recipe = recipe.replace(data_dir=None)  # the corpus given replaces the config's: not looked for
    recipe = recipe.located([Path(args.config).resolve().parent], args.config)  # as thunder fit reads the config
    recipe = recipe.replace(seed=args.seed, **({"data_dir": args.data} if args.data else {}))
    filler = Filler(recipe, recipe.load_taxonomy())
    documents = filler.documents()[args.split]
    if max(args.counts) > len(documents):
        parser.error(f"the {args.split} split has {len(documents)} judgments, fewer than {max(args.counts)}")
    synthesizer = filler.synthesizer("train")
    filled = [synthesizer(document, epoch=0) for document in documents[: max(args.counts)]]
    args.out.mkdir(parents=True, exist_ok=True)
    for count in args.counts:
        lines = [
            json.dumps({"id": doc.doc_id, "text": doc.text, "spans": [[s.start, s.end, s.label] for s in doc.spans]},
                       ensure_ascii=False) + "\n"
            for doc in filled[:count]
        ]  # fmt: skip
        path = args.out / f"reviewed-{count}.jsonl"
        path.write_text("".join(lines), encoding="utf-8")
        print(f"{path}: {count} judgments, {sum(len(doc.spans) for doc in filled[:count])} spans")


if __name__ == "__main__":
    main()
