"""A pretrained encoder's own tokenizer (KLUE's WordPiece, mDeBERTa's SentencePiece, ...) behind Thunder's Mecab-ko
step, so that its tokens never cross a morpheme boundary (``홍길동이`` -> pieces of ``홍길동`` and of ``이``).

1. **Morpheme split** (:mod:`thunder.language.morphemes`): the same pieces as Thunder's own tokenizer.
2. **The pretrained tokenizer on each piece**: its ``tokenizer.json`` (normalizer, pre-tokenizer, WordPiece /
   Unigram / BPE model) encodes every piece on its own, as Hugging Face does for pre-tokenized input
   (``is_split_into_words=True``), with character offsets from the fast tokenizer.
3. **Word continuations kept**: a piece that the tokenizer's own pre-tokenizer puts inside a word (``이`` after
   ``홍길동``, not after a space) is encoded as the rest of a word, as the model read it in pretraining: WordPiece
   with its continuation tokens (``##이``), SentencePiece without the word-start ``▁``, byte-level BPE without the
   prefix space. A continuation the model cannot spell without an unknown token is encoded as a word start.

The stored form is the tokenizer's ``tokenizer.json`` and ``tokenizer_config.json`` (as ``save_pretrained`` writes
them) and ``thunder_tokenizer.json`` naming :data:`PRETRAINED_FORMAT` and the Mecab versions: exports and checkpoints
carry it like Thunder's own, and the fingerprint covers the format. A model directory is read with transformers'
``AutoTokenizer`` (its fast tokenizer, local files only, no remote code); the stored form loads back exactly from
its ``tokenizer.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Hashable

import numpy as np
from tokenizers import Tokenizer
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from thunder.language.morphemes import Pieces
from thunder.language.tokenizer import ThunderTokenizer

PRETRAINED_FORMAT = "thunder-pretrained-mecab/1"
WORD_RULE = (
    "each Mecab-ko piece encoded on its own by tokenizer.json; a piece inside a word of its own pre-tokenizer, after a "
    "character that is no space, as the rest of a word (WordPiece continuation tokens, no Metaspace or ByteLevel "
    "word-start space, no Prepend normalizer) unless that gives an unknown token the word-start form does not"
)
_SPECIAL = ("pad", "cls", "sep", "unk", "mask")


class PretrainedTokenizer(ThunderTokenizer):
    """A pretrained model's fast tokenizer on Mecab-ko pieces, with Thunder's interface (offsets, windows, padding)."""

    format = PRETRAINED_FORMAT

    def __init__(self, hf: PreTrainedTokenizerFast, mecab: dict | None = None) -> None:
        super().__init__(hf, mecab)
        self._continuation = continuation_tokenizer(self._backend)
        if self._continuation is not None:
            self._continuation.encode_special_tokens = True
        self._pre = self._backend.pre_tokenizer

    def _special_ids(self, hf: PreTrainedTokenizerFast) -> tuple[int, int, int, int, int]:
        ids = [getattr(hf, f"{name}_token_id") for name in _SPECIAL]
        missing = [name for name, token_id in zip(_SPECIAL, ids) if token_id is None]
        if missing:
            raise ValueError(f"{hf.name_or_path}: the tokenizer has no {', '.join(missing)} token (a token "
                             "classifier's windows and masked-language modelling need pad, cls, sep, unk and mask)")
        return ids[0], ids[1], ids[2], ids[3], ids[4]

    @classmethod
    def from_model(cls, directory: str | Path) -> PretrainedTokenizer:
        """The tokenizer of a pretrained model's directory, as ``AutoTokenizer`` reads it (fast, local files only,
        no remote code); a directory without one is a ``ValueError`` naming it."""
        try:
            hf = AutoTokenizer.from_pretrained(str(directory), local_files_only=True, trust_remote_code=False)
        except (OSError, ValueError, KeyError, TypeError) as error:
            first = next((line for line in str(error).splitlines() if line.strip()), type(error).__name__)
            raise ValueError(f"{directory}: no tokenizer transformers can read ({first.strip()})") from None
        if not getattr(hf, "is_fast", False):
            raise ValueError(f"{directory}: the model's tokenizer has no fast (tokenizers) form; Thunder needs its "
                             "character offsets")  # fmt: skip
        return cls(hf)

    def _saved_info(self) -> dict:
        return {"format": self.format, "mecab": self.mecab, "words": WORD_RULE}

    def fingerprint_parts(self) -> dict[str, Any]:
        """The format: the Mecab step and the word continuations are part of what the model reads."""
        return {"format": self.format}

    # -- pieces

    def _piece_keys(self, pieces: Pieces) -> list[Hashable]:
        """The piece's text for a word start; ``(text,)`` for a piece the tokenizer's own pre-tokenizer puts inside a
        word, right after a character that is not a space."""
        keys = super()._piece_keys(pieces)
        if self._continuation is None:
            return keys
        inside, text = self._inside_words(pieces).tolist(), pieces.text
        return [(key,) if inside[start] and not text[start - 1].isspace() else key
                for key, start in zip(keys, pieces.edges[:-1].tolist())]  # fmt: skip

    def _inside_words(self, pieces: Pieces) -> np.ndarray:
        """Per character of the texts laid end to end, whether it is inside (not the first character of) a word of
        the tokenizer's own pre-tokenizer, each text split on its own."""
        delta = np.zeros(len(pieces.text) + 1, dtype=np.int64)
        bases = pieces.bases.tolist()
        for base, end in zip(bases[:-1], bases[1:]):
            text = pieces.text[base:end]
            words = self._pre.pre_tokenize_str(text) if self._pre is not None else [(text, (0, len(text)))]
            spans = np.array([span for _, span in words], dtype=np.int64).reshape(-1, 2) + base
            np.add.at(delta, spans[:, 0] + 1, 1)
            np.add.at(delta, spans[:, 1], -1)
        return np.cumsum(delta) > 0

    def _encode_pieces(self, pieces: list[Hashable]) -> list:
        """Word starts with the tokenizer itself, continuations with :func:`continuation_tokenizer` (a continuation
        that holds an unknown token where the word-start form holds none: the word-start form)."""
        encodings: list[Any] = [None] * len(pieces)
        starts = [i for i, piece in enumerate(pieces) if isinstance(piece, str)]
        rest = [i for i, piece in enumerate(pieces) if not isinstance(piece, str)]
        for index, encoding in zip(starts, super()._encode_pieces([pieces[i] for i in starts])):
            encodings[index] = encoding
        if rest:
            texts = [pieces[i][0] for i in rest]
            continued = self._continuation.encode_batch(texts, add_special_tokens=False)
            unknown = [k for k, encoding in enumerate(continued) if self.unk_token_id in encoding.ids]
            if unknown:
                as_starts = super()._encode_pieces([texts[k] for k in unknown])
                for k, encoding in zip(unknown, as_starts):
                    if self.unk_token_id not in encoding.ids:
                        continued[k] = encoding
            for index, encoding in zip(rest, continued):
                encodings[index] = encoding
        return encodings


def continuation_tokenizer(backend: Tokenizer) -> Tokenizer | None:
    """``backend`` as it encodes the rest of a word: WordPiece looking its first token up among the continuation
    tokens (``##이``), SentencePiece's ``Metaspace`` and byte-level BPE without the word-start space, no ``Prepend``
    normalizer; None where a continuation encodes as a word start does (nothing to change)."""
    text = backend.to_str()
    spec, changed = json.loads(text), json.loads(text)
    changed["normalizer"] = _without_prepend(changed.get("normalizer"))
    changed["pre_tokenizer"] = _without_word_start(changed.get("pre_tokenizer"))
    model = changed["model"]
    if model.get("type") == "WordPiece":
        prefix = model.get("continuing_subword_prefix") or "##"
        rest = {token: token_id for token, token_id in model["vocab"].items() if token.startswith(prefix)}
        model["vocab"] = {**{token[len(prefix):]: token_id for token, token_id in rest.items()}, **rest,
                          model["unk_token"]: model["vocab"][model["unk_token"]]}  # fmt: skip
    if changed == spec:
        return None
    return Tokenizer.from_str(json.dumps(changed))


def _without_prepend(normalizer: dict | None) -> dict | None:
    """A normalizer without its ``Prepend`` steps (the word-start ``▁`` of Llama-style SentencePiece)."""
    if normalizer is None or normalizer.get("type") == "Prepend":
        return None
    if normalizer.get("type") == "Sequence":
        steps = [step for step in map(_without_prepend, normalizer["normalizers"]) if step is not None]
        return {**normalizer, "normalizers": steps}
    return normalizer


def _without_word_start(pre_tokenizer: dict | None) -> dict | None:
    """A pre-tokenizer that adds no word-start marker: ``Metaspace`` never prepends, ``ByteLevel`` adds no space."""
    if pre_tokenizer is None:
        return None
    kind = pre_tokenizer.get("type")
    if kind == "Sequence":
        return {**pre_tokenizer, "pretokenizers": list(map(_without_word_start, pre_tokenizer["pretokenizers"]))}
    if kind == "Metaspace":
        return {**pre_tokenizer, "prepend_scheme": "never"}
    if kind == "ByteLevel":
        return {**pre_tokenizer, "add_prefix_space": False}
    return pre_tokenizer
