"""A pretrained encoder's tokenizer behind Thunder's Mecab-ko step (issue 70): entity-boundary alignment and tokens per
character on the shared SNU Thunder-DeID corpus, the tokenizer's own splitting beside the Mecab pre-split, measured as
``tools/bench_tokenizer.py`` measures Thunder's own tokenizer (its ``training_and_sample`` and ``alignment``: placeholders
filled once for training, again for the 500-judgment sample; a span is aligned when neither its start nor its end falls
strictly inside a token, a token's leading spaces left out).

    .venv/bin/python tools/bench_pretrained_tokenizer.py [--tokenizer MODEL_DIR ...] [--sample 500]

Without ``--tokenizer``, stand-ins are trained on the filled corpus (the real KLUE and mDeBERTa-v3 vocabularies need
the hub): a BERT WordPiece of 32,000 tokens (KLUE-RoBERTa's kind) and a SentencePiece Unigram of 32,000 (mDeBERTa-v3's
kind, which has 250,102 multilingual pieces), with Thunder's Mecab-ko + BPE tokenizer of 32,000 as the reference.
A ``--tokenizer`` is any pretrained model directory with a tokenizer transformers reads (``hf download
klue/roberta-base`` where there is a network, then its directory here).
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace
from pathlib import Path

from bench_tokenizer import DEFAULT_CORPUS, alignment, training_and_sample
from random_backbone import SHAPES, unigram, wordpiece
from transformers import BertTokenizer, DebertaV2Tokenizer

from thunder.language.pretrained_tokenizer import PretrainedTokenizer
from thunder.language.release_tokenizer import load_tokenizer
from thunder.language.tokenizer import ThunderTokenizer

VOCAB = 32000


def without_leading_spaces(text: str, offsets: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each token's offsets less the spaces it begins with (``▁홍`` covers ``홍``), unless it is only spaces."""
    trimmed = []
    for start, end in offsets:
        while end - start > 1 and text[start].isspace():
            start += 1
        trimmed.append((start, end))
    return trimmed


def stand_ins(texts: list[str], directory: Path) -> dict[str, Path]:
    """A WordPiece and a Unigram tokenizer trained on ``texts``, saved as a pretrained model's tokenizer."""
    saved = {}
    for name, shape, train, wrap in (
        ("WordPiece 32k (KLUE's kind)", SHAPES["klue-roberta-base"], wordpiece,
         lambda backend: BertTokenizer(tokenizer_object=backend, do_lower_case=False, strip_accents=False)),
        ("Unigram 32k (mDeBERTa-v3's kind)", SHAPES["mdeberta-v3-base"], unigram,
         lambda backend: DebertaV2Tokenizer(tokenizer_object=backend, bos_token="[CLS]", eos_token="[SEP]",
                                            unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]", cls_token="[CLS]",
                                            mask_token="[MASK]")),
    ):  # fmt: skip
        backend = train(texts, replace(shape, trained_vocab=VOCAB))
        path = directory / name.split()[0].lower()
        wrap(backend).save_pretrained(path)
        print(f"trained {name}: {backend.get_vocab_size()} tokens reached", flush=True)
        saved[name] = path
    return saved


def report(name: str, sample, offsets, chars: int) -> None:
    aligned, total, kinds, _ = alignment(sample, offsets)
    tokens = sum(map(len, offsets))
    worst = ", ".join(f"{label} ({side}) {count}" for (label, side), count in kinds.most_common(3))
    print(f"  {name:<28} {100 * aligned / max(total, 1):6.2f}% ({aligned}/{total}) of entity spans on token "
          f"boundaries; {tokens / chars:.3f} tokens/char ({tokens / len(sample):.1f} per judgment)"
          + (f"; most misaligned: {worst}" if worst else ""))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--sample", type=int, default=500, help="judgments measured (default 500)")
    parser.add_argument("--tokenizer", type=Path, action="append", help="a pretrained model directory (repeatable)")
    args = parser.parse_args()
    train_texts, sample = training_and_sample(args.corpus, args.sample)
    texts = [text for text, _ in sample]
    chars = sum(map(len, texts))
    print(f"sample: {len(texts)} judgments, {chars:,} characters (fill epoch 1); training text: {len(train_texts)} "
          f"judgments (fill epoch 0)")
    with tempfile.TemporaryDirectory() as work:
        models = {str(path): path for path in args.tokenizer} if args.tokenizer else stand_ins(train_texts, Path(work))
        if not args.tokenizer:
            thunder = ThunderTokenizer.train(train_texts, VOCAB)
            print("\nThunder's Mecab-ko + BPE 32k (reference):")
            report("Mecab-ko + BPE", sample, [e.offsets for e in thunder.encode_batch(texts)], chars)
        for name, path in models.items():
            tokenizer = load_tokenizer(path)
            assert isinstance(tokenizer, PretrainedTokenizer)
            own = tokenizer.hf(texts, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
            print(f"\n{name} ({tokenizer.vocab_size:,} tokens):")
            report("its own splitting", sample, [without_leading_spaces(t, o) for t, o in zip(texts, own)], chars)
            report("behind the Mecab-ko step", sample, [e.offsets for e in tokenizer.encode_batch(texts)], chars)


if __name__ == "__main__":
    main()
