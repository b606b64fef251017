"""``thunder data prepare``: tokenize a pretraining corpus once into LitData token shards for ``MLMDataModule``."""

from __future__ import annotations

import time


def prepare_command(
    input: list[str] | str,
    tokenizer: str,
    out: str,
    num_workers: int = 1,
    val_fraction: float = 0.01,
    text_field: str = "text",
    max_chars: int = 4096,
    chunk_bytes: str = "64MB",
) -> None:
    """Stream text / JSONL / annotated files through Mecab-ko + BPE into token shards (out/train, out/val).

    Args:
        input: files or directories searched recursively for *.txt (documents separated by blank lines), *.jsonl
            (one document per record) and *.md (annotated judgments, tags removed); one path or a list.
        tokenizer: Thunder tokenizer directory (MLMDataModule must use the same one).
        out: output directory; train with ``data.init_args.prepared_dir: OUT``.
        num_workers: tokenizing processes (LitData optimize workers). Several machines: run the same command on
            each with DATA_OPTIMIZER_NUM_NODES and DATA_OPTIMIZER_NODE_RANK set and a shared ``out``.
        val_fraction: share of documents held out for validation (a stable hash of the text).
        text_field: JSONL field holding the text (``annotated`` for the Hugging Face SNU dataset).
        max_chars: longest text given to Mecab at once (documents are cut at line ends; no token is dropped).
        chunk_bytes: size of each shard file.
    """
    from thunder.data.shards import PrepareOptions, prepare_corpus  # torch, LitData: not for --help

    options = PrepareOptions(tokenizer, max_chars=max_chars, text_field=text_field, val_fraction=val_fraction)
    start = time.perf_counter()
    inputs = [input] if isinstance(input, str) else list(input)
    manifest = prepare_corpus(inputs, out, options, num_workers=num_workers, chunk_bytes=chunk_bytes)
    elapsed = time.perf_counter() - start
    tokens = manifest["tokens"]
    print(
        f"prepared {manifest['files']} file(s), {manifest['bytes'] / 1e6:.1f} MB -> "
        + ", ".join(f"{name} {count:,} tokens" for name, count in tokens.items())
        + f" in {elapsed:.1f} s ({sum(tokens.values()) / max(elapsed, 1e-9):,.0f} tokens/s) under {out}"
    )
