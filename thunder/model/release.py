"""The published SNU Thunder-DeID models (340M / 750M / 1.5B) as Thunder models: their 595 labels and their
directories, converted in memory for the model loader (the tokenizer: :mod:`thunder.language.release_tokenizer`).

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
from pathlib import Path
from typing import Any

from thunder.language.release_tokenizer import ReleaseTokenizer
from thunder.taxonomy import LabelSet, LabelSetMismatch, Resolution, Taxonomy, UnknownTagError

RELEASE_NUM_LABELS = 595
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
    def _rebuild(cls, d: Mapping[str, Any], taxonomy: Taxonomy) -> "MappedLabelSet":
        return cls(taxonomy, d["tags"], d["mapping"])

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
