"""ThunderTokenizer.train from a streamed corpus: full 32k vocabularies, texts of any length."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from thunder.documents.corpus import iter_documents
from thunder.language.tokenizer import ThunderTokenizer


def generated_corpus(words: int = 40_000, repeats: int = 3, seed: int = 0) -> Iterator[str]:
    """Lines of random 2-4 syllable Hangul words (any of the 11,172 syllables), each word ``repeats`` times."""
    rng = random.Random(seed)
    vocabulary = ["".join(chr(0xAC00 + rng.randrange(11172)) for _ in range(rng.randint(2, 4))) for _ in range(words)]
    order = vocabulary * repeats
    rng.shuffle(order)
    for start in range(0, len(order), 200):
        yield " ".join(order[start : start + 200]) + "\n"


def test_training_from_a_streamed_corpus_reaches_32k(tmp_path: Path) -> None:
    path = tmp_path / "corpus.txt"
    with open(path, "w", encoding="utf-8") as file:
        file.writelines(line + "\n" for line in generated_corpus())  # blank-line separated documents
    tokenizer = ThunderTokenizer.train(iter_documents([path]), vocab_size=32_000)  # a generator, read once
    assert tokenizer.vocab_size == 32_000
    text = "피고인 홍길동은 2024. 3. 5. 서울중앙지방법원에서\n\n  판결을 받았다. 😀"
    assert tokenizer.decode(tokenizer.encode(text).ids) == text
    vocab = tokenizer.hf.get_vocab()
    # merges never cross a Mecab piece: no learned token holds a space inside or two words
    assert not any(" " in token.lstrip(" ").replace("Ġ", " ").strip() for token in vocab)


def test_a_single_long_text_is_given_to_mecab_in_parts() -> None:
    line = " ".join(["서울중앙지방법원에서", "판결을", "받았다"] * 40_000) + "\n"  # 0.8M characters, one line
    tokenizer = ThunderTokenizer.train(iter([line, line]), vocab_size=300)
    assert tokenizer.decode(tokenizer.encode("판결을 받았다").ids) == "판결을 받았다"
