"""Three-tier PII taxonomy: raw tag -> Label, and the training label vocabulary (LabelSet).

Tier 1 is ``direct`` or ``quasi``; tier 2 is a category, with a subcategory below it; tier 3 is the label.
A taxonomy is a YAML or JSON file (see ``resources/taxonomy/default.yaml`` and ``configs/taxonomies/``)::

    name: my-taxonomy
    defaults: {tier1: quasi, source: list}
    normalize: {strip_whitespace: true, strip_fragments: ["(주)"], unwrap_parentheses: true,
                suffixes: [{pattern: "이하주소$", replace: "아래주소"}]}
    aliases: {raw tag: label}
    categories:
      <category>:
        <subcategory>:            # "" for labels directly under the category
          <label>: {tier1: direct, source: "generator:korean_name", aliases: [synonym, ...]}

At category granularity a category counts as ``direct`` when any of its labels is direct (a model that only
predicts categories must treat a category that may hold a name or a number as a direct identifier).

Raw tags are resolved in this order, each step recorded in ``Resolution.rule``: exact label name; alias
(the taxonomy's ``aliases``, then label aliases, then extra alias files in the order given; an alias may
point at another alias); then each normalisation step (whitespace, fragments such as ``(주)``,
parentheses, suffix rules) in turn, each followed by another lookup.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import yaml

TIER1 = ("direct", "quasi")
GRANULARITIES = ("binary", "category", "label")
SCHEMES = ("IO", "BIO")
BINARY_TYPE = "PII"
DEFAULT_PATH = Path(str(resources.files("thunder") / "resources" / "taxonomy" / "default.yaml"))
ALIAS_FILE_NAME = "tag_aliases.json"
_MAX_ALIAS_HOPS = 16
_GENERATOR_SOURCE = re.compile(r"generator:[A-Za-z_][\w.:]*")


class TaxonomyError(ValueError):
    """A taxonomy or alias file is malformed; the message names the file and the offending entry."""


class UnknownTagError(KeyError):
    """A raw tag that no rule of the taxonomy maps to a label."""

    def __init__(self, tag: str, taxonomy: str, suggestions: Sequence[str] = (), category: bool = False) -> None:
        self.tag, self.suggestions = tag, tuple(suggestions)
        hint = f" (close labels: {', '.join(suggestions)})" if suggestions else ""
        kinds = "label, alias, normalisable variant or category" if category else "label, alias or normalisable variant"
        super().__init__(f"tag {tag!r} is not a {kinds} in taxonomy {taxonomy!r}{hint}")

    def __str__(self) -> str:  # KeyError would show the repr of the message
        return str(self.args[0])


class LabelSetMismatch(ValueError):
    """A stored label set (checkpoint, export) differs from the one of the current run."""


@dataclass(frozen=True)
class Label:
    """One tier-3 label with its place in the taxonomy."""

    name: str
    category: str
    subcategory: str
    tier1: str
    source: str


@dataclass(frozen=True)
class Resolution:
    """A raw tag mapped to a label, with the rule that did it (``exact``, ``alias:호->호실``, ...)."""

    label: Label
    rule: str


@dataclass(frozen=True)
class EntityInfo:
    """What an entity type of a LabelSet stands for; ``None`` where the granularity does not determine it."""

    label: str | None
    category: str | None
    tier1: str | None


@dataclass(frozen=True)
class _SuffixRule:
    pattern: re.Pattern[str]
    replace: str


@dataclass(frozen=True)
class _Normalizer:
    strip_whitespace: bool = False
    strip_fragments: tuple[str, ...] = ()
    unwrap_parentheses: bool = False
    suffixes: tuple[_SuffixRule, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The ``normalize:`` section this normaliser was read from."""
        return {
            "strip_whitespace": self.strip_whitespace,
            "strip_fragments": list(self.strip_fragments),
            "unwrap_parentheses": self.unwrap_parentheses,
            "suffixes": [{"pattern": rule.pattern.pattern, "replace": rule.replace} for rule in self.suffixes],
        }

    def steps(self, tag: str) -> Iterable[tuple[str, str]]:
        """Yield ``(rule, tag)`` after each step that changes the tag; steps are cumulative and the rule names
        every step so far (``whitespace:구 이하주소->구이하주소 > suffix:구이하주소->구아래주소``)."""
        done: list[str] = []

        def step(kind: str, new: str) -> tuple[str, str]:
            done.append(f"{kind}:{tag}->{new}")
            return " > ".join(done), new

        if self.strip_whitespace:
            new = re.sub(r"\s+", "", tag)
            if new != tag and new:
                yield step("whitespace", new)
                tag = new
        for fragment in self.strip_fragments:
            new = tag.replace(fragment, "").strip()
            if new != tag and new:
                yield step("fragment", new)
                tag = new
        if self.unwrap_parentheses:
            match = re.fullmatch(r"\((.+)\)", tag)
            if match:
                yield step("parentheses", match.group(1))
                tag = match.group(1)
        for rule in self.suffixes:
            new = rule.pattern.sub(rule.replace, tag)
            if new != tag and new:
                yield step("suffix", new)
                tag = new


class Taxonomy:
    """Labels in three tiers plus the rules that map raw (noisy) tags onto them."""

    def __init__(
        self,
        name: str,
        labels: Sequence[Label],
        aliases: Mapping[str, str] | None = None,
        extra_aliases: Sequence[tuple[str, Mapping[str, str]]] = (),
        normalizer: _Normalizer | None = None,
        origin: str = "<taxonomy>",
    ) -> None:
        self.name = name
        self.origin = origin
        self.labels: dict[str, Label] = {}
        for label in labels:
            if label.name in self.labels:
                raise TaxonomyError(f"{origin}: label {label.name!r} is defined twice")
            self.labels[label.name] = label
        self.aliases: dict[str, str] = dict(aliases or {})
        self.extra_aliases: list[tuple[str, dict[str, str]]] = [(src, dict(table)) for src, table in extra_aliases]
        self.normalizer = normalizer or _Normalizer()
        self.categories: dict[str, list[Label]] = {}
        for label in self.labels.values():
            self.categories.setdefault(label.category, []).append(label)
        self._cache: dict[str, Resolution] = {}
        for raw, target in self.aliases.items():
            if target not in self.labels and target not in self.aliases:
                raise TaxonomyError(f"{origin}: alias {raw!r} points at {target!r}, which is not a label")
            if self._lookup(raw) is None:
                raise TaxonomyError(f"{origin}: alias {raw!r} -> {target!r} loops without reaching a label")

    # ------------------------------------------------------------------ loading
    @classmethod
    def load(
        cls, path: str | Path | None = None, alias_files: Sequence[str | Path] = ()
    ) -> "Taxonomy":
        """Read a YAML/JSON taxonomy (``None``: the packaged default) plus extra ``{raw: label}`` alias files."""
        path = Path(path) if path is not None else DEFAULT_PATH
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise TaxonomyError(f"cannot read taxonomy {path}: {error}") from error
        except UnicodeDecodeError as error:
            raise TaxonomyError(f"{path}: not UTF-8 ({error})") from error
        try:
            data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
        except (json.JSONDecodeError, yaml.YAMLError) as error:
            raise TaxonomyError(f"{path}: cannot parse taxonomy: {error}") from error
        extra = [(Path(file).name, _read_alias_file(Path(file))) for file in alias_files]
        return cls.from_dict(data, origin=str(path), default_name=path.stem, extra_aliases=extra)

    @classmethod
    def from_dict(
        cls,
        data: Any,
        origin: str = "<dict>",
        default_name: str = "taxonomy",
        extra_aliases: Sequence[tuple[str, Mapping[str, str]]] = (),
    ) -> "Taxonomy":
        """Build a taxonomy from the parsed YAML/JSON structure described in the module docstring."""
        if not isinstance(data, dict):
            raise TaxonomyError(f"{origin}: expected a mapping at the top level, got {type(data).__name__}")
        unknown = set(data) - {"name", "version", "description", "defaults", "normalize", "aliases", "categories"}
        if unknown:
            raise TaxonomyError(f"{origin}: unknown top-level keys {sorted(unknown)}")
        defaults = _mapping(data.get("defaults"), f"{origin}: defaults")
        default_tier1 = defaults.get("tier1", "quasi")
        default_source = defaults.get("source", "list")
        categories = _mapping(data.get("categories"), f"{origin}: categories")
        if not categories:
            raise TaxonomyError(f"{origin}: no categories")
        labels: list[Label] = []
        aliases: dict[str, str] = dict(_alias_mapping(data.get("aliases"), f"{origin}: aliases"))
        label_aliases: dict[str, str] = {}
        for category, subcategories in categories.items():
            where = f"{origin}: categories.{category}"
            for subcategory, entries in _mapping(subcategories, where).items():
                sub_where = f"{where}.{subcategory}" if subcategory else f'{where}.""'
                for name, props in _mapping(entries, sub_where).items():
                    label_where = f"{sub_where}.{name}"
                    props = _mapping(props, label_where)
                    unknown = set(props) - {"tier1", "source", "aliases", "description"}
                    if unknown:
                        raise TaxonomyError(f"{label_where}: unknown keys {sorted(unknown)}")
                    tier1 = props.get("tier1", default_tier1)
                    source = props.get("source", default_source)
                    _check_tier1(tier1, label_where)
                    _check_source(source, label_where)
                    labels.append(Label(str(name), str(category), str(subcategory or ""), tier1, source))
                    names = props.get("aliases") or []
                    if not isinstance(names, list):
                        raise TaxonomyError(f"{label_where}: aliases must be a list, got {names!r}")
                    for alias in names:
                        label_aliases.setdefault(str(alias), str(name))
        for raw, target in label_aliases.items():
            aliases.setdefault(raw, target)
        normalizer = _read_normalizer(data.get("normalize"), f"{origin}: normalize")
        return cls(
            name=str(data.get("name") or default_name),
            labels=labels,
            aliases=aliases,
            extra_aliases=extra_aliases,
            normalizer=normalizer,
            origin=origin,
        )

    def with_alias_files(self, alias_files: Sequence[str | Path]) -> "Taxonomy":
        """A copy that also consults the given ``{raw: label}`` JSON files (after the existing aliases)."""
        extra = self.extra_aliases + [(Path(f).name, _read_alias_file(Path(f))) for f in alias_files]
        return Taxonomy(self.name, list(self.labels.values()), self.aliases, extra, self.normalizer, self.origin)

    # ------------------------------------------------------------------ resolution
    def resolve(self, raw_tag: str) -> Resolution:
        """Map a raw tag to its label; raises :class:`UnknownTagError` when no rule applies."""
        cached = self._cache.get(raw_tag)
        if cached is not None:
            return cached
        steps = self._lookup(raw_tag)
        if steps is None:
            for rule, tag in self.normalizer.steps(raw_tag):
                steps = self._lookup(tag)
                if steps is not None:
                    steps = [rule, *steps]
                    break
        if steps is None:
            close = difflib.get_close_matches(raw_tag, list(self.labels), n=3, cutoff=0.6)
            raise UnknownTagError(raw_tag, self.name, close)
        label = self.labels[steps.pop()]
        resolution = Resolution(label, " > ".join(steps) or "exact")
        self._cache[raw_tag] = resolution
        return resolution

    def labels_of(self, tag: str) -> tuple[Label, ...]:
        """The labels a tag stands for: the one it resolves to (:meth:`resolve`), else every label of the category
        it names (a category-level model's spans, a reviewer's coarse label); :class:`UnknownTagError` otherwise."""
        try:
            return (self.resolve(tag).label,)
        except UnknownTagError as error:
            if tag in self.categories:
                return tuple(self.categories[tag])
            raise UnknownTagError(tag, self.name, error.suggestions, category=True) from None

    def _lookup(self, tag: str) -> list[str] | None:
        """Exact label or alias chain; returns the alias hops followed by the label name, or None."""
        hops: list[str] = []
        seen = {tag}
        for _ in range(_MAX_ALIAS_HOPS):
            if tag in self.labels:
                return [*hops, tag]
            hop = self._alias(tag)
            if hop is None:
                return None
            kind, target = hop
            hops.append(f"{kind}:{tag}->{target}")
            if target in seen:
                return None
            seen.add(target)
            tag = target
        return None

    def _alias(self, tag: str) -> tuple[str, str] | None:
        if tag in self.aliases:
            return "alias", self.aliases[tag]
        for source, table in self.extra_aliases:
            if tag in table:
                return f"alias[{source}]", table[tag]
        return None

    # ------------------------------------------------------------------ structure
    def category_tier1(self, category: str) -> str:
        """``direct`` if any label of the category is direct, else ``quasi`` (used at category granularity)."""
        labels = self.categories.get(category)
        if not labels:
            raise KeyError(f"category {category!r} is not in taxonomy {self.name!r}")
        return "direct" if any(label.tier1 == "direct" for label in labels) else "quasi"

    def filled_by(self, generator: str) -> list[Label]:
        """The labels whose mentions come from ``generator`` (``source: "generator:<generator>"``): the labels a
        recognizer of that identifier emits."""
        return [label for label in self.labels.values() if label.source == f"generator:{generator}"]

    def to_dict(self) -> dict[str, Any]:
        """The taxonomy's full content in the YAML/JSON form :meth:`from_dict` reads (extra alias files left out)."""
        categories: dict[str, dict[str, dict[str, Any]]] = {}
        for label in self.labels.values():
            props = {k: v for k, v in asdict(label).items() if k not in ("name", "category", "subcategory")}
            categories.setdefault(label.category, {}).setdefault(label.subcategory, {})[label.name] = props
        return {"name": self.name, "normalize": self.normalizer.to_dict(), "aliases": dict(self.aliases),
                "categories": categories}  # fmt: skip

    def fingerprint(self) -> str:
        """Stable hash of the ordered label structure (names, categories, subcategories, tier 1)."""
        rows = [[l.name, l.category, l.subcategory, l.tier1] for l in self.labels.values()]
        blob = json.dumps(rows, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]

    def __repr__(self) -> str:
        return f"Taxonomy({self.name!r}, {len(self.labels)} labels, {len(self.categories)} categories)"


def _mapping(value: Any, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TaxonomyError(f"{where}: expected a mapping, got {type(value).__name__} {value!r}")
    return value


def _alias_mapping(value: Any, where: str) -> dict[str, str]:
    table = _mapping(value, where)
    for raw, target in table.items():
        if not isinstance(target, str) or not target:
            raise TaxonomyError(f"{where}: alias {raw!r} must map to a label name, got {target!r}")
    return {str(raw): target for raw, target in table.items()}


def _check_tier1(tier1: Any, where: str) -> None:
    if tier1 not in TIER1:
        raise TaxonomyError(f"{where}: tier1 must be one of {TIER1}, got {tier1!r}")


def _check_source(source: Any, where: str) -> None:
    # generator names are checked where generators are known (thunder.synthesis.mentions.MentionBank)
    if source == "list" or (isinstance(source, str) and _GENERATOR_SOURCE.fullmatch(source)):
        return
    raise TaxonomyError(
        f"{where}: source must be 'list' or 'generator:<name>' (a generator of thunder.identifiers or "
        f"thunder.synthesis.mentions, or a module.Class path); got {source!r}"
    )


def _read_normalizer(value: Any, where: str) -> _Normalizer:
    spec = _mapping(value, where)
    unknown = set(spec) - {"strip_whitespace", "strip_fragments", "unwrap_parentheses", "suffixes"}
    if unknown:
        raise TaxonomyError(f"{where}: unknown keys {sorted(unknown)}")
    suffixes = []
    for index, rule in enumerate(spec.get("suffixes") or ()):
        rule = _mapping(rule, f"{where}.suffixes[{index}]")
        try:
            suffixes.append(_SuffixRule(re.compile(rule["pattern"]), str(rule.get("replace", ""))))
        except (KeyError, re.error) as error:
            raise TaxonomyError(f"{where}.suffixes[{index}]: needs a valid 'pattern' ({error})") from error
    return _Normalizer(
        strip_whitespace=bool(spec.get("strip_whitespace", False)),
        strip_fragments=tuple(str(f) for f in spec.get("strip_fragments") or ()),
        unwrap_parentheses=bool(spec.get("unwrap_parentheses", False)),
        suffixes=tuple(suffixes),
    )


def _read_alias_file(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise TaxonomyError(f"cannot read alias file {path}: {error}") from error
    return _alias_mapping(data, str(path))


def head_noun(text: str, label: str) -> str:
    """The generic head noun that ``text`` ends with: the longest tail it shares with the label's name
    (``국민은행`` under 은행 -> ``은행``, ``강남역`` under 지하철역 -> ``역``); ``""`` when none, or when that tail
    is all of ``text`` (``아파트`` under 아파트)."""
    for size in range(min(len(text), len(label)), 0, -1):
        if text.endswith(label[-size:]):
            return label[-size:] if size < len(text) else ""
    return ""


# ---------------------------------------------------------------------- label sets
class LabelSet:
    """The training vocabulary: entity types at one granularity, tagged IO or BIO; ``names[0] == "O"``."""

    def __init__(self, taxonomy: Taxonomy, granularity: str = "label", scheme: str = "IO") -> None:
        if granularity not in GRANULARITIES:
            raise ValueError(f"granularity must be one of {GRANULARITIES}, got {granularity!r}")
        if scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
        self.taxonomy = taxonomy
        self.granularity = granularity
        self.scheme = scheme
        if granularity == "binary":
            self.types: list[str] = [BINARY_TYPE]
        elif granularity == "category":
            self.types = list(taxonomy.categories)
        else:
            self.types = list(taxonomy.labels)
        self.names: list[str] = ["O"]
        for entity_type in self.types:
            if scheme == "BIO":
                self.names.append(f"B-{entity_type}")
            self.names.append(f"I-{entity_type}")
        self._ids = {name: index for index, name in enumerate(self.names)}
        # id -> (type, is_begin); "O" -> None
        self._tags: list[tuple[str, bool] | None] = [None] + [
            (name[2:], name.startswith("B-")) for name in self.names[1:]
        ]

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"LabelSet({self.taxonomy.name!r}, granularity={self.granularity!r}, scheme={self.scheme!r}, {len(self)} tags)"

    def entity_type(self, label: str) -> str:
        """The entity type of a tier-3 label at this granularity."""
        if label not in self.taxonomy.labels:
            raise UnknownTagError(label, self.taxonomy.name)
        if self.granularity == "binary":
            return BINARY_TYPE
        if self.granularity == "category":
            return self.taxonomy.labels[label].category
        return label

    def begin_id(self, entity_type: str) -> int:
        """Tag id that starts an entity (IO: the inside id)."""
        return self._id("B-" if self.scheme == "BIO" else "I-", entity_type)

    def inside_id(self, entity_type: str) -> int:
        """Tag id that continues an entity."""
        return self._id("I-", entity_type)

    def _id(self, prefix: str, entity_type: str) -> int:
        try:
            return self._ids[prefix + entity_type]
        except KeyError:
            raise KeyError(f"entity type {entity_type!r} is not in {self!r}") from None

    def tag(self, tag_id: int) -> tuple[str, bool] | None:
        """The entity type of a tag id and whether the tag begins an entity (``B-``); ``None`` for ``O``.
        Token spans are decoded by :func:`thunder.model.decoding.token_spans`."""
        return self._tags[tag_id]

    def describe(self, entity_type: str) -> EntityInfo:
        """Label, category and tier 1 of an entity type, where this granularity determines them."""
        if entity_type not in self.types:
            raise KeyError(f"entity type {entity_type!r} is not in {self!r}")
        if self.granularity == "label":
            label = self.taxonomy.labels[entity_type]
            return EntityInfo(label.name, label.category, label.tier1)
        if self.granularity == "category":
            return EntityInfo(None, entity_type, self.taxonomy.category_tier1(entity_type))
        return EntityInfo(None, None, None)

    def to_dict(self) -> dict:
        """JSON-ready description stored in checkpoints and exports."""
        return {
            "taxonomy": self.taxonomy.name,
            "fingerprint": self.taxonomy.fingerprint(),
            "granularity": self.granularity,
            "scheme": self.scheme,
            "names": list(self.names),
            "taxonomy_spec": self.taxonomy.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], taxonomy: Taxonomy | None = None) -> "LabelSet":
        """Rebuild a stored label set on its stored taxonomy, or on ``taxonomy`` (:class:`LabelSetMismatch` if they
        disagree). Label sets stored without their taxonomy (older artefacts) use the packaged one by default."""
        if taxonomy is None:
            spec = d.get("taxonomy_spec")
            taxonomy = Taxonomy.from_dict(spec, origin="stored taxonomy") if spec is not None else Taxonomy.load()
        try:
            label_set = cls._rebuild(d, taxonomy)
        except KeyError as error:
            raise LabelSetMismatch(f"stored label set lacks {error.args[0]!r}: {dict(d)!r:.200}") from None
        except ValueError as error:
            raise LabelSetMismatch(f"stored label set does not fit {taxonomy.name!r}: {error}") from None
        label_set.check_compatible(d)
        return label_set

    @classmethod
    def _rebuild(cls, d: Mapping[str, Any], taxonomy: Taxonomy) -> "LabelSet":
        """A label set of this class on ``taxonomy`` from the stored description ``d`` (its own fields)."""
        return cls(taxonomy, d["granularity"], d["scheme"])

    def check_compatible(self, stored: Mapping[str, Any]) -> None:
        """Raise :class:`LabelSetMismatch` unless ``stored`` (from ``to_dict``) describes this label set."""
        mine = self.to_dict()
        keys = ("fingerprint", "granularity", "scheme", "names")
        if all(stored.get(key) == mine[key] for key in keys):
            return

        def summary(d: Mapping[str, Any]) -> str:
            names = d.get("names") or []
            return (
                f"taxonomy {d.get('taxonomy')!r} (fingerprint {d.get('fingerprint')}) / granularity "
                f"{d.get('granularity')!r} / scheme {d.get('scheme')!r} / {len(names)} tags"
            )

        detail = ""
        if stored.get("names") != mine["names"]:
            theirs, ours = set(stored.get("names") or []), set(mine["names"])
            missing, extra = sorted(theirs - ours)[:5], sorted(ours - theirs)[:5]
            detail = f"; tags only in the checkpoint: {missing}; only in this run: {extra}"
            if not missing and not extra:
                detail = "; same tags in a different order"
        raise LabelSetMismatch(
            f"checkpoint trained with {summary(stored)}; this run uses {summary(mine)}{detail}. "
            "Use the taxonomy, granularity and scheme the model was trained with."
        )
