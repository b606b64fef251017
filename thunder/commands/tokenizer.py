"""``thunder tokenizer train``: train a Mecab-ko + BPE tokenizer on a corpus."""

from __future__ import annotations

from thunder.documents.corpus import iter_documents
from thunder.language.tokenizer import ThunderTokenizer


def train_command(
    input: list[str] | str,
    out: str,
    vocab_size: int = 32000,
    min_frequency: int = 2,
) -> None:
    """Train a Mecab-ko + BPE tokenizer and save it as a Hugging Face tokenizer directory.

    Args:
        input: text, JSONL or annotated judgment files, or directories searched recursively for them: *.txt
            (documents separated by blank lines), *.jsonl ({"text": ...} per line), *.md; one path or a list
            (--input DIR, --input '[A, B]' or --input+ A --input+ B). Read as a stream: memory does not grow with
            the corpus.
        out: output directory (tokenizer.json, tokenizer_config.json, thunder_tokenizer.json).
        vocab_size: vocabulary size including special tokens (the paper: 32000, or 128000 for the 1.5B model).
        min_frequency: minimum pair frequency for a BPE merge.
    """
    skipped: list[str] = []
    texts = iter_documents([input] if isinstance(input, str) else input, skipped=skipped)
    tokenizer = ThunderTokenizer.train(texts, vocab_size, min_frequency, show_progress=True)
    tokenizer.save_pretrained(out)
    print(f"saved a {tokenizer.vocab_size}-token tokenizer to {out}")
    if tokenizer.vocab_size < vocab_size:
        print(f"note: the corpus supports only {tokenizer.vocab_size} tokens at min_frequency={min_frequency}")
    if skipped:
        print(f"skipped {len(skipped)} malformed annotated document(s), first: {skipped[0]}")
