"""Random-weight encoders with their own tokenizers, written as a pretrained model is published on the Hugging Face
hub (``config.json``, ``model.safetensors`` with the masked-LM head, the tokenizer's files), for what needs a
pretrained backbone but no hub: the tests, ``configs/pretrained/tiny-bert.yaml``, and speed measurements of the
shapes of public Korean encoders (``tools/bench_deid.py --backbone DIR``). The weights are random: such a
model measures speed and exercises loading, never quality.

    .venv/bin/python tools/random_backbone.py tiny-bert runs/pretrained/tiny-bert
    .venv/bin/python tools/random_backbone.py klue-roberta-base runs/pretrained/klue-roberta-base-shape

Shapes (:data:`SHAPES`): ``tiny-bert`` (BERT, WordPiece), ``tiny-deberta`` (DeBERTa-v2, SentencePiece Unigram,
200 embedding rows more than tokens, as mDeBERTa-v3 has), ``klue-roberta-base`` (RoBERTa-base with KLUE's WordPiece
special tokens, 32,000 tokens) and ``mdeberta-v3-base`` (DeBERTa-v3-base, SentencePiece Unigram, 250,102 tokens with
``[MASK]`` last, 251,000 embedding rows). The tokenizer is trained on the packaged demo judgments, its vocabulary
filled with ``[unusedN]`` tokens (which no text reaches) up to the public model's size.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import AutoConfig, AutoModelForMaskedLM, BertTokenizer, DebertaV2Tokenizer

from thunder.model.backbones import DEBERTA_V3

BERT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
KLUE_SPECIALS = ("[CLS]", "[PAD]", "[SEP]", "[UNK]", "[MASK]")
DEBERTA_SPECIALS = ("[PAD]", "[CLS]", "[SEP]", "[UNK]")  # [MASK] comes after the vocabulary


@dataclass(frozen=True)
class Shape:
    """A backbone's architecture and tokenizer kind."""

    model_type: str
    tokenizer: str  # "wordpiece" or "unigram"
    specials: tuple[str, ...]
    config: dict[str, Any]
    tokens: int | None = None  # the public tokenizer's size (None: as trained)
    extra_rows: int = 0  # embedding rows past the tokenizer's
    trained_vocab: int = 2000


SHAPES = {
    "tiny-bert": Shape("bert", "wordpiece", BERT_SPECIALS, {"hidden_size": 64, "num_hidden_layers": 2,
                       "num_attention_heads": 2, "intermediate_size": 128, "max_position_embeddings": 512}),
    "tiny-deberta": Shape("deberta-v2", "unigram", DEBERTA_SPECIALS, {**DEBERTA_V3, "hidden_size": 64,
                          "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 128,
                          "position_buckets": 64, "max_position_embeddings": 512}, extra_rows=200),
    "klue-roberta-base": Shape("roberta", "wordpiece", KLUE_SPECIALS, {"hidden_size": 768, "num_hidden_layers": 12,
                               "num_attention_heads": 12, "intermediate_size": 3072, "max_position_embeddings": 514},
                               tokens=32000, trained_vocab=8000),
    "mdeberta-v3-base": Shape("deberta-v2", "unigram", DEBERTA_SPECIALS, {**DEBERTA_V3, "hidden_size": 768,
                              "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
                              "max_position_embeddings": 512}, tokens=250102, extra_rows=898, trained_vocab=8000),
}  # fmt: skip


def demo_texts() -> list[str]:
    """The packaged demo judgments, placeholders filled with demo mentions (the tokenizer's training text)."""
    from thunder.documents.annotation import iter_corpus
    from thunder.synthesis.mentions import DEMO_MENTIONS, MentionBank
    from thunder.synthesis.synthesizer import Synthesizer
    from thunder.taxonomy import Taxonomy

    root = Path(__file__).resolve().parents[1] / "thunder" / "resources" / "demo" / "annotated"
    taxonomy = Taxonomy.load()
    synthesizer = Synthesizer(taxonomy, MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS]), seed=0)
    return [synthesizer(doc).text for doc in iter_corpus(root, errors="skip")]


def wordpiece(texts: list[str], shape: Shape) -> Tokenizer:
    """A BERT WordPiece tokenizer (no lower-casing, as Korean models keep Hangul whole)."""
    backend = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    backend.normalizer = normalizers.BertNormalizer(lowercase=False, strip_accents=False)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.decoder = decoders.WordPiece()
    backend.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=shape.trained_vocab,
                                                                  special_tokens=list(shape.specials)))  # fmt: skip
    return backend


def unigram(texts: list[str], shape: Shape) -> Tokenizer:
    """A SentencePiece-style Unigram tokenizer (``▁`` marks a word start)."""
    backend = Tokenizer(models.Unigram())
    backend.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    backend.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    backend.train_from_iterator(texts, trainers.UnigramTrainer(vocab_size=shape.trained_vocab, unk_token="[UNK]",
                                                                special_tokens=list(shape.specials)))  # fmt: skip
    return backend


def filled(backend: Tokenizer, size: int | None) -> Tokenizer:
    """``backend`` with ``[unusedN]`` tokens appended to its vocabulary up to ``size`` ids (None: as it is)."""
    spec = json.loads(backend.to_str())
    vocab = spec["model"]["vocab"]
    if size is not None:
        if isinstance(vocab, dict):  # WordPiece
            vocab |= {f"[unused{i}]": i for i in range(len(vocab), size)}
        else:  # Unigram: [piece, log probability]
            vocab += [[f"[unused{i}]", -100.0] for i in range(len(vocab), size)]
    return Tokenizer.from_str(json.dumps(spec))


def build(shape_name: str, out: Path, texts: list[str] | None = None, seed: int = 0) -> Path:
    """Write the random-weight model of ``shape_name`` with its tokenizer to ``out``."""
    shape = SHAPES[shape_name]
    texts = texts or demo_texts()
    if shape.tokenizer == "wordpiece":
        backend = filled(wordpiece(texts, shape), shape.tokens)
        backend.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[(t, backend.token_to_id(t)) for t in ("[CLS]", "[SEP]")])  # fmt: skip
        hf = BertTokenizer(tokenizer_object=backend, do_lower_case=False, strip_accents=False)
    else:
        backend = filled(unigram(texts, shape), None if shape.tokens is None else shape.tokens - 1)
        hf = DebertaV2Tokenizer(tokenizer_object=backend, bos_token="[CLS]", eos_token="[SEP]", unk_token="[UNK]",
                                sep_token="[SEP]", pad_token="[PAD]", cls_token="[CLS]",
                                mask_token="[MASK]")  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    hf.save_pretrained(out)
    tokens = len(hf)
    ids = {name: hf.convert_tokens_to_ids(getattr(hf, f"{name}_token")) for name in ("pad", "cls", "sep")}
    config = AutoConfig.for_model(shape.model_type, **shape.config, vocab_size=tokens + shape.extra_rows,
                                  pad_token_id=ids["pad"], bos_token_id=ids["cls"],
                                  eos_token_id=ids["sep"])  # fmt: skip
    torch.manual_seed(seed)
    AutoModelForMaskedLM.from_config(config).save_pretrained(out, safe_serialization=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shape", choices=sorted(SHAPES))
    parser.add_argument("out", type=Path, help="a new directory")
    args = parser.parse_args()
    if args.out.exists() and any(args.out.iterdir()):
        parser.error(f"{args.out} exists and is not empty")
    build(args.shape, args.out)
    config = json.loads((args.out / "config.json").read_text(encoding="utf-8"))
    print(f"{args.out}: random-weight {config['model_type']} ({args.shape}), vocab_size {config['vocab_size']}")


if __name__ == "__main__":
    main()
