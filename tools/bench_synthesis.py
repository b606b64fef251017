"""Benchmark and fidelity check of placeholder synthesis on the shared SNU Thunder-DeID corpus.

Prints, for one worker (a single process): mention-list loading time (cold and cached), documents/s and
characters/s of synthesis; with ``--tokenizer`` also tokens/s of synthesis + tokenization + token labels
(what a training worker does per document). Fidelity: placeholder text left in the output (target 0) and the
share of Korean person names whose final consonant agrees with the particle written after them (target 100%).

    .venv/bin/python tools/bench_synthesis.py [CORPUS] [--epochs 2] [--tokenizer DIR]
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from thunder.documents.annotation import AnnotationError, iter_corpus
from thunder.language.particles import agrees
from thunder.synthesis.mentions import MentionBank
from thunder.synthesis.synthesizer import SynthesisError, Synthesizer, leftovers
from thunder.taxonomy import LabelSet, Taxonomy

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "snu-thunder-deid"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--epochs", type=int, default=2, help="synthesize every document this many times")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None, help="use only the first N documents")
    parser.add_argument("--tokenizer", type=Path, default=None, help="a ThunderTokenizer directory")
    args = parser.parse_args()
    if not (args.corpus / "annotated").is_dir():
        sys.exit(
            f"shared corpus not found at {args.corpus} (expected annotated/, mentions/, tag_aliases.json); "
            "pass its path as the first argument"
        )
    logging.disable(logging.WARNING)

    taxonomy = Taxonomy.load(alias_files=[args.corpus / "tag_aliases.json"])
    dirs = [d for d in (args.corpus / "mentions", args.corpus / "mentions-llm") if d.is_dir()]
    start = time.perf_counter()
    bank = MentionBank.from_dirs(taxonomy, dirs)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    MentionBank.from_dirs(taxonomy, dirs)
    cached = time.perf_counter() - start
    print(f"mention lists: {len(bank.sources)} labels, load {cold:.2f} s cold, {cached:.2f} s cached; "
          f"labels without any source: {len(bank.missing)} {list(bank.missing)}")

    failures: list[AnnotationError] = []
    docs = list(iter_corpus(args.corpus / "annotated", errors="skip", failures=failures))[: args.limit]
    synthesizer = Synthesizer(taxonomy, bank, seed=args.seed)
    usable, skipped = [], []
    for doc in docs:
        try:
            synthesizer(doc, 0)
            usable.append(doc)
        except SynthesisError as error:
            skipped.append(str(error))
    print(f"documents: {len(usable)} ({len(failures)} malformed, {len(skipped)} with unknown tags left out)")

    outputs = []
    start = time.perf_counter()
    for epoch in range(args.epochs):
        outputs += [(doc, synthesizer(doc, epoch)) for doc in usable]
    seconds = time.perf_counter() - start
    chars = sum(len(out.text) for _, out in outputs)
    print(f"synthesis (1 worker): {len(outputs) / seconds:,.0f} documents/s, {chars / seconds:,.0f} characters/s "
          f"({len(outputs)} documents, {args.epochs} epochs, {seconds:.2f} s)")

    left = [text for doc, out in outputs for text in leftovers(doc, out)]
    names = agreeing = 0
    for _, out in outputs:
        for span in out.spans:
            if span.label == "내국인이름":
                verdict = agrees(out.text[span.start : span.end], out.text[span.end : span.end + 12])
                names += verdict is not None
                agreeing += verdict is True
    placeholders = sum(len(out.spans) for _, out in outputs)
    examples = f" e.g. {left[:5]!r}" if left else ""
    print(f"fidelity: {len(left)} leftover placeholder texts in {placeholders:,} mentions (target 0){examples}")
    share = f"{agreeing / names:.2%}" if names else "n/a"
    print(f"fidelity: person names agreeing with the following particle: {agreeing}/{names} = {share} (target 100%)")

    if args.tokenizer is not None:
        _bench_tokens(args, taxonomy, synthesizer, usable)


def _bench_tokens(args: argparse.Namespace, taxonomy: Taxonomy, synthesizer: Synthesizer, docs: list) -> None:
    try:
        from thunder.data import token_labels
        from thunder.language.tokenizer import ThunderTokenizer
    except ImportError as error:
        print(f"tokens: skipped ({error})")
        return
    tokenizer = ThunderTokenizer.from_pretrained(args.tokenizer)
    label_set = LabelSet(taxonomy)
    tokens = 0
    start = time.perf_counter()
    for epoch in range(args.epochs):
        for doc in docs:
            out = synthesizer(doc, epoch)
            encoding = tokenizer.encode(out.text)
            token_labels(encoding.offsets, out.spans, label_set)
            tokens += len(encoding.ids)
    seconds = time.perf_counter() - start
    print(f"synthesis + tokenization + token labels (1 worker): {tokens / seconds:,.0f} tokens/s, "
          f"{len(docs) * args.epochs / seconds:,.0f} documents/s")


if __name__ == "__main__":
    main()
