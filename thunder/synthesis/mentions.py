"""Where synthetic mentions come from: mention lists and generators, one :class:`MentionSource` per label.

A label's source is named in the taxonomy (``Label.source``): ``"list"`` takes the label's mention lists
(``<dir>/<category>/<subcategory>/<file>.json``, each file a JSON object ``{label: [surface form, ...]}``),
``"generator:<name>"`` one of :data:`GENERATORS` (names, addresses, ages, and the structured identifiers of
:mod:`thunder.identifiers`) or a ``module.Class`` path. Generators read the text around every occurrence of the
entity (:class:`MentionContext`) to stay consistent with it: a person's gender from ``(남, 29세)``, the bank
of an account number, the upper administrative levels written before a ``구아래주소`` placeholder.

All randomness comes from the ``random.Random`` passed in, so a seeded caller gets reproducible mentions.
Faker's ``ko_KR`` providers supply data (surnames with their frequencies, given names by gender, road names); they
are sampled with that ``random.Random``, never through Faker's own global state.
Upper administrative levels (province -> city/county -> district) are a table in :mod:`thunder.language.regions`; names below
them (동, 읍/면, 리, roads) are plausible but not checked against the real hierarchy.

Parsed mention files are cached per process (path, size, mtime), so building a bank again is cheap.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Protocol, Sequence, runtime_checkable

from faker.providers.address.ko_KR import Provider as _FakerAddress
from faker.providers.person.ko_KR import Provider as _FakerPerson

from thunder.identifiers import CATALOGUE
from thunder.identifiers.base import packaged_taxonomy
from thunder.identifiers.context import MentionContext, infer_gender
from thunder.language.particles import agrees, leading_particle
from thunder.language.regions import PROVINCES
from thunder.plugins import load_part
from thunder.seeds import stable_share
from thunder.synthesis.fills import PLACE_NUMBERS, POOLED_PLACES, bus_route
from thunder.synthesis.names import PersonNames

if TYPE_CHECKING:
    from thunder.taxonomy import Label, Taxonomy

__all__ = [
    "DEMO_MENTIONS",
    "GENERATORS",
    "Generator",
    "ListSource",
    "MentionBank",
    "MentionContext",
    "MentionError",
    "MentionLists",
    "MentionSource",
    "load_generator",
    "load_generators",
    "load_mention_lists",
]

DEMO_MENTIONS = Path(str(resources.files("thunder") / "resources" / "demo" / "mentions"))
_PARTICLE_TRIES = 24  # candidates drawn to find one that agrees with the particles after the placeholder


class MentionError(LookupError):
    """A label has no mention source, or a mention file is malformed."""

    def __str__(self) -> str:  # LookupError would show the repr of the message
        return str(self.args[0]) if self.args else ""


@runtime_checkable
class MentionSource(Protocol):
    """Anything that draws one surface form for an entity."""

    def sample(self, rng: random.Random, context: MentionContext) -> str: ...


class ListSource:
    """Uniform choice from a fixed list of surface forms."""

    def __init__(self, mentions: Sequence[str], name: str = "list") -> None:
        if not mentions:
            raise MentionError(f"mention list {name!r} is empty")
        self.mentions = tuple(mentions)
        self.name = name

    def sample(self, rng: random.Random, context: MentionContext) -> str:
        return self.mentions[rng.randrange(len(self.mentions))]

    def __repr__(self) -> str:
        return f"ListSource({self.name!r}, {len(self.mentions)} mentions)"


class Generator:
    """A named generator function ``(rng, context) -> str`` usable as a :class:`MentionSource`."""

    def __init__(self, name: str, function: Callable[[random.Random, MentionContext], str]) -> None:
        self.name = name
        self.function = function

    def sample(self, rng: random.Random, context: MentionContext) -> str:
        return self.function(rng, context)

    def __repr__(self) -> str:
        return f"Generator({self.name!r})"


class _MissingSource:
    def __init__(self, label: str, dirs: Sequence[Path]) -> None:
        self.label = label
        self.dirs = dirs

    def sample(self, rng: random.Random, context: MentionContext) -> str:
        raise MentionError(
            f"label {self.label!r} has no mention source: no list for it in {[str(d) for d in self.dirs]}, "
            f"no generator and no lists in its subcategory (add '<category>/<subcategory>/*.json' with a "
            f"{self.label!r} key, or give it source 'generator:<name>' in the taxonomy)"
        )


# ------------------------------------------------------------------------------------ generators

_LAST_NAMES = tuple(_FakerPerson.last_names)
_LAST_WEIGHTS = tuple(_FakerPerson.last_names.values())
_GIVEN = {"male": tuple(_FakerPerson.first_names_male), "female": tuple(_FakerPerson.first_names_female)}
# syllables of composed given names (first, second), by the gender they are commonest for
_GIVEN_SYLLABLES = {
    "male": ("민준서도예시주하지건우현승선정유진성재영동상태경병종용기규형광석", "준우호진민현훈수혁석원재영철빈성환기규진섭완식찬범윤"),
    "female": ("서지수민하윤채은예다소유현혜미나아연정선희경주보가세", "연윤아은민현영진희지원서린경숙정미나예빈주솔혜하슬"),
}


def _given_name(rng: random.Random, gender: str) -> str:
    if rng.random() < 0.5:
        return rng.choice(_GIVEN[gender])
    first, second = _GIVEN_SYLLABLES[gender]
    name = rng.choice(first) + rng.choice(second)
    return name if name[0] != name[1] else name[0] + rng.choice(second)


def korean_name(rng: random.Random, context: MentionContext) -> str:
    """A Korean full name (surname + given name) of the gender the context suggests."""
    gender = infer_gender(context) or rng.choice(("male", "female"))
    return rng.choices(_LAST_NAMES, _LAST_WEIGHTS)[0] + _given_name(rng, gender)


# ----------------------------------------------------------------------------------------- addresses
_ADMIN = PROVINCES  # upper administrative levels: province -> (short names, {city or county: districts})
_DONGS = tuple(
    "역삼동 신림동 봉천동 상계동 중계동 대치동 잠실동 화곡동 목동 신정동 구로동 가산동 대림동 신길동 당산동 합정동 망원동 "
    "서교동 성수동 행당동 금호동 옥수동 한남동 청파동 신당동 명륜동 정릉동 돈암동 미아동 수유동 쌍문동 방학동 월계동 공릉동 "
    "면목동 상봉동 중화동 휘경동 장안동 천호동 암사동 둔촌동 명일동 고덕동 가락동 문정동 방이동 석촌동 삼성동 청담동 논현동 "
    "신사동 개포동 일원동 양재동 방배동 반포동 서초동 사당동 흑석동 상도동 대방동 중동 상동 송내동 범계동 매탄동 인계동 "
    "정자동 서현동 야탑동 수내동 구월동 주안동 간석동 부평동 만수동 연산동 서면동 좌동 우동 반여동 덕천동 하단동 괴정동 "
    "범어동 만촌동 수성동 두류동 본리동 월성동 상인동 복현동 산격동 둔산동 갈마동 월평동 봉명동 노은동 용암동 율량동 "
    "가경동 복대동 상당동 금남동 치평동 월곡동 수완동 첨단동 삼산동 달동 신정동 효문동 중앙동 남산동 교동 신흥동".split()
)
_PLACE_SYLLABLES = "가강고금남내대덕동두마매명문미백보봉부북사산상서석선성송수신안양연오옥용우원월유율은장정조중지진창천청초태평하학한해현호화효흥"
_ROAD_NAMES = tuple(_FakerAddress.road_names) + tuple(
    "중앙 시청 역전 번영 동부 서부 남부 북부 평화 희망 문화 새마을 신흥 대학 공원 시장 충렬 중부 강변 산업".split()
)
_LEVEL = re.compile(r"(도|시|군|구|읍|면|동)(?:아래|이하)주소$")


def _place(rng: random.Random, suffix: str) -> str:
    return rng.choice(_PLACE_SYLLABLES) + rng.choice(_PLACE_SYLLABLES) + suffix


def _lot(rng: random.Random) -> str:
    main = rng.randint(1, 1999)
    roll = rng.random()
    if roll < 0.45:
        return f"{main}-{rng.randint(1, 99)}"
    return f"산 {rng.randint(1, 299)}" if roll < 0.5 else str(main)


def _road(rng: random.Random) -> str:
    name = rng.choice(_ROAD_NAMES)
    name += "로" if name.endswith("대") else rng.choice(("로", "로", "길", "대로"))
    if rng.random() < 0.35:
        name += f"{rng.randint(1, 80)}번길" if rng.random() < 0.5 else f"{rng.randint(1, 60)}길"
    number = str(rng.randint(1, 399))
    if rng.random() < 0.2:
        number += f"-{rng.randint(1, 30)}"
    return f"{name} {number}"


def _below_district(rng: random.Random) -> str:
    """Below a 구 (or a city without districts): 동 + lot number, or a road address."""
    return _road(rng) if rng.random() < 0.45 else f"{rng.choice(_DONGS)} {_lot(rng)}"


def _below_town(rng: random.Random) -> str:
    """Below an 읍 or 면: 리 + lot number, or a road address."""
    return _road(rng) if rng.random() < 0.3 else f"{_place(rng, '리')} {_lot(rng)}"


def _below_county(rng: random.Random) -> str:
    return f"{_place(rng, rng.choice('읍면면'))} {_below_town(rng)}"


def _below_city(rng: random.Random, districts: Sequence[str]) -> str:
    if districts and rng.random() < 0.5:
        return f"{rng.choice(districts)} {_below_district(rng)}"
    return _below_county(rng) if rng.random() < 0.15 else _below_district(rng)


def _below_province(rng: random.Random, province: str | None) -> str:
    province = province or rng.choice(tuple(p for p in _ADMIN if _ADMIN[p][1].keys() - {""}))
    units = [unit for unit in _ADMIN[province][1] if unit]
    if not units:  # metropolitan city without counties, or 세종
        return _below_metropolis(rng, province)
    unit = rng.choice(units)
    body = _below_county(rng) if unit.endswith("군") else _below_city(rng, _ADMIN[province][1][unit])
    return f"{unit} {body}"


def _below_metropolis(rng: random.Random, province: str) -> str:
    districts = _ADMIN[province][1].get("", ())
    if not districts:
        return _below_district(rng)
    return f"{rng.choice(districts)} {_below_district(rng)}"


_PROVINCE_WORDS = {
    word: province for province, (short, _) in _ADMIN.items() for word in (province, *short)
}
_UNIT_PROVINCES: dict[str, list[str]] = {}
for _province, (_, _units) in _ADMIN.items():
    for _unit, _districts in _units.items():
        for _name in (_unit, *_districts):
            if _name:
                _UNIT_PROVINCES.setdefault(_name, []).append(_province)


def _upper_levels(left: str) -> tuple[str | None, str | None, str | None]:
    """The province, city/county and district (구) written last before a placeholder
    (``"경기 성남시 분당구 "`` -> 경기도, 성남시, 분당구)."""
    province = city = district = None
    for word in re.findall(r"[가-힣]+", left[-30:]):
        if word in _PROVINCE_WORDS:
            province, city, district = _PROVINCE_WORDS[word], None, None
        elif word.endswith(("시", "군")) and word in _UNIT_PROVINCES:
            city, district = word, None
            if province not in _UNIT_PROVINCES[word]:
                province = _UNIT_PROVINCES[word][0]
        elif word.endswith("구") and word in _UNIT_PROVINCES:
            district = word
    return province, city, district


def address(rng: random.Random, context: MentionContext) -> str:
    """An address, or for ``<level>아래주소`` labels only the part below that level, consistent with the
    upper levels written before the placeholder (``성남시 <<<시아래주소>>>`` -> ``분당구 정자동 12-3``)."""
    level_match = _LEVEL.search(context.label)
    left = context.lefts[0] if context.lefts else ""
    province, city, district = _upper_levels(left)
    if level_match is None:  # a full address
        province = province or rng.choice(tuple(_ADMIN))
        short = rng.choice((province, *_ADMIN[province][0]))
        return f"{short} {_below_province(rng, province)}"
    level = level_match.group(1)
    if level == "도":
        if province and not _ADMIN[province][1].keys() - {""}:
            return _below_metropolis(rng, province)
        return _below_province(rng, province)
    if level == "시":
        if district:  # "청주시 상당구 <<<시아래주소>>>": the district is already written
            return _below_district(rng)
        if province and city is None and "" in _ADMIN[province][1]:  # 서울시 / 부산시 ...
            return _below_metropolis(rng, province)
        districts = _ADMIN[province][1].get(city, ()) if province and city else ()
        return _below_city(rng, districts)
    if level == "군":
        return _below_county(rng)
    if level in ("읍", "면"):
        return _below_town(rng)
    if level == "동":
        return _lot(rng)
    return _below_district(rng)  # 구


def age(rng: random.Random, context: MentionContext) -> str:
    """An age; ``세`` is added unless the text after the placeholder already has it."""
    value = str(rng.choices((rng.randint(14, 19), rng.randint(20, 69), rng.randint(70, 89)), (10, 80, 10))[0])
    rights = context.rights
    if not rights or any(right.lstrip().startswith(("세", "살", "대")) for right in rights):
        return value
    return value + "세"


GENERATORS: dict[str, Generator] = {
    name: Generator(name, function)
    for name, function in (
        ("korean_name", korean_name),
        ("address", address),
        ("age", age),
        ("bus_route", bus_route),
        *((identifier.name, identifier.generate) for identifier in CATALOGUE.values()),
    )
}


def load_generator(spec: str | Mapping | MentionSource) -> MentionSource:
    """A mention source from a name in :data:`GENERATORS`, a ``module.Class`` path, a ``{"class_path",
    "init_args"}`` dict or an instance (:func:`thunder.plugins.load_part`); a class must have ``sample(rng, context)
    -> str``."""
    return load_part(spec, "generator", MentionSource, GENERATORS, error=MentionError)


# numbering labels (a building 동, a floor, a room ...) without a list: small numbers
# (building 동, room 호, floor 층 and 번호 are thunder.synthesis.fills.PLACE_NUMBERS, written with their unit)
_NUMBER_LABELS = {"호선": (1, 9), "출구번호": (1, 12), "승강장번호": (1, 12), "지하철칸": (1, 10),
                  "출생연도": (1950, 2005)}  # fmt: skip


@dataclass(frozen=True)
class _NumberSource:
    """Small integers (floor, room and building numbers); a picklable :class:`MentionSource`."""

    low: int
    high: int

    def sample(self, rng: random.Random, context: MentionContext) -> str:
        return str(rng.randint(self.low, self.high))


# ------------------------------------------------------------------------------------ mention lists

_FILE_CACHE: dict[tuple[str, int, int], tuple[tuple[str, tuple[str, ...]], ...]] = {}


def _read_list_file(path: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``(label, mentions)`` pairs of one mention file (cached by path, size and mtime); a file whose values
    are not all lists (such as the combined ``all_categories.json``) yields nothing."""
    stat = path.stat()
    key = (str(path.absolute()), stat.st_mtime_ns, stat.st_size)
    cached = _FILE_CACHE.get(key)
    if cached is not None:
        return cached
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise MentionError(f"{path}: not a UTF-8 JSON mention file ({error})") from None
    if not isinstance(data, dict):
        raise MentionError(f"{path}: a mention file must hold a JSON object {{label: [mention, ...]}}")
    pairs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    if all(isinstance(value, list) for value in data.values()):
        pairs = tuple(
            (str(label).strip(), tuple(dict.fromkeys(s.strip() for s in values if isinstance(s, str) and s.strip())))
            for label, values in data.items()
        )
    _FILE_CACHE[key] = pairs
    return pairs


@dataclass(frozen=True)
class MentionLists:
    """Mention lists read from mention directories: by label, and pooled by (category, subcategory) folder."""

    by_label: dict[str, tuple[str, ...]]
    by_folder: dict[tuple[str, str], tuple[str, ...]]


def load_mention_lists(dirs: Sequence[str | Path]) -> MentionLists:
    """Read every ``<dir>/<category>[/<subcategory>]/<file>.json``; lists of the same label are merged."""
    by_label: dict[str, dict[str, None]] = {}
    by_folder: dict[tuple[str, str], dict[str, None]] = {}
    for directory in map(Path, dirs):
        if not directory.is_dir():
            raise MentionError(f"mention directory {directory} does not exist")
        for path in sorted(directory.rglob("*.json")):
            parts = path.relative_to(directory).parts
            if len(parts) < 2:  # a combined file at the top (all_categories.json)
                continue
            folder = (parts[0], parts[1] if len(parts) > 2 else "")
            for label, mentions in _read_list_file(path):
                by_label.setdefault(label, {}).update(dict.fromkeys(mentions))
                by_folder.setdefault(folder, {}).update(dict.fromkeys(mentions))
    return MentionLists(
        {label: tuple(m) for label, m in by_label.items() if m},
        {folder: tuple(m) for folder, m in by_folder.items() if m},
    )


def particle_after(label: str, right: str) -> str | None:
    """``right`` if it starts with a particle that belongs to the mention (not to the label's own suffix, as
    in ``<<<학과>>>B<<</학과>>>과``), else ``None``."""
    found = leading_particle(right)
    if found is None or label.endswith(found[0]):
        return None
    return right


def repeated_word(label: str, rights: Sequence[str]) -> str | None:
    """The generic word of ``label`` (its name or a tail of it, two syllables or more) that the text writes
    right after a placeholder (``<<<은행>>>N<<</은행>>>은행``), or ``None``."""
    for right in rights:
        after = right.lstrip(" '\"‘’“”")
        for size in range(len(label), 1, -1):
            if after.startswith(label[-size:]):
                return label[-size:]
    return None


MENTION_PARTS = ("train", "heldout")
_UNSEEN_NAMES = PersonNames("unseen")


def held_out(mention: str, share: float, seed: int = 0) -> bool:
    """Whether an entity is in the held-back ``share`` of the mention lists: a stable hash of its text (spaces
    removed), the same whatever the list order, file or process."""
    return stable_share("mention-holdout", seed, "".join(mention.split())) < share


def _split_lists(lists: MentionLists, holdout: float, part: str, seed: int) -> MentionLists:
    """The ``part`` of every list: entities :func:`held_out` (``heldout``) or the others (``train``)."""
    if part not in MENTION_PARTS:
        raise ValueError(f"part must be one of {MENTION_PARTS}, got {part!r}")
    if not 0 <= holdout < 1:
        raise ValueError(f"mention holdout must be in [0, 1), got {holdout}")
    if part == "heldout" and holdout == 0:
        raise ValueError("the held-out part of the mention lists needs a holdout share > 0")
    if holdout == 0:
        return lists
    wanted = part == "heldout"

    def keep(table: Mapping) -> dict:
        parts = {key: tuple(m for m in ms if held_out(m, holdout, seed) == wanted) for key, ms in table.items()}
        return {key: ms for key, ms in parts.items() if ms}

    return MentionLists(keep(lists.by_label), keep(lists.by_folder))


class MentionBank:
    """One :class:`MentionSource` per taxonomy label; draws mentions that agree with the particles that
    follow their placeholders."""

    def __init__(
        self, sources: Mapping[str, MentionSource], taxonomy: Taxonomy | None = None, missing: Sequence[str] = ()
    ) -> None:
        self.sources = dict(sources)
        self.taxonomy = taxonomy
        self.missing = tuple(missing)  # labels that have no source (sampling them raises MentionError)

    @classmethod
    def from_dirs(
        cls,
        taxonomy: Taxonomy,
        dirs: Sequence[str | Path],
        *,
        strict: bool = False,
        generators: Mapping[str, str | Mapping | MentionSource] | None = None,
        holdout: float = 0.0,
        part: str = "train",
        holdout_seed: int = 0,
    ) -> "MentionBank":
        """Sources for every label of ``taxonomy``: its lists from ``dirs`` (source ``"list"``) or its generator;
        ``generators`` (``{label: spec}``, see :func:`load_generator`) replaces the source of those labels.

        With ``holdout`` > 0 the lists are split by entity (:func:`held_out`): ``part="train"`` keeps the rest,
        ``part="heldout"`` only the held-back share, and fills person names (the ``korean_name`` generator and
        :class:`thunder.synthesis.names.PersonNames`) from the ``unseen`` name family, which training never uses.

        A ``"list"`` label without a list falls back to the generator the packaged taxonomy gives a label of that
        name (or alias: ``휴대전화번호``, ``구이하주소``), then to small numbers
        for numbering labels (층, 호실 ...), then to the pooled lists of its subcategory folder, then of its
        category folder. A label left
        with nothing raises :class:`MentionError` naming it when sampled (at once with ``strict=True``).
        """
        dirs = [Path(d) for d in dirs]
        lists = _split_lists(load_mention_lists(dirs), holdout, part, holdout_seed)
        by_label: dict[str, list[str]] = {}
        for key, mentions in lists.by_label.items():
            name = key if key in taxonomy.labels else _resolve(taxonomy, key)
            if name is not None:
                by_label.setdefault(name, []).extend(mentions)
        sources = load_generators(generators or {}, taxonomy)
        missing = []
        for label in taxonomy.labels.values():
            if label.name in sources:
                continue
            source = _source_for(label, by_label, lists.by_folder)
            if source is None:
                missing.append(label.name)
                source = _MissingSource(label.name, dirs)
            sources[label.name] = source
        if part == "heldout":
            for name, source in sources.items():
                if source is GENERATORS["korean_name"] or isinstance(source, PersonNames):
                    sources[name] = _UNSEEN_NAMES
        if strict and missing:
            raise MentionError(f"labels without a mention source in {[str(d) for d in dirs]}: {', '.join(missing)}")
        return cls(sources, taxonomy, missing)

    def source(self, label: str) -> MentionSource:
        """The source of a label (canonical name, or a raw tag the taxonomy resolves)."""
        source = self.sources.get(label)
        if source is None and self.taxonomy is not None:
            name = _resolve(self.taxonomy, label)
            source = self.sources.get(name) if name else None
        if source is None:
            raise MentionError(f"no mention source for label {label!r}")
        return source

    def sample(self, label: str, rng: random.Random, context: MentionContext) -> str:
        """A mention for one entity, preferring one that agrees with the particles after its occurrences and
        ends with the generic word the text repeats after it (``우리은행`` before ``은행 계좌``)."""
        source = self.source(label)
        name = context.label or label
        rights = [r for r in (particle_after(name, right) for right in context.rights) if r]
        generic = repeated_word(name, context.rights)
        best, best_score, full = "", -1, len(rights) + bool(generic)
        for _ in range(_PARTICLE_TRIES if full else 1):
            mention = source.sample(rng, context)
            score = sum(agrees(mention, right) is not False for right in rights)
            score += bool(generic) and mention.endswith(generic)
            if score > best_score:
                best, best_score = mention, score
            if score == full:
                break
        return best


def load_generators(
    specs: Mapping[str, str | Mapping | MentionSource], taxonomy: Taxonomy
) -> dict[str, MentionSource]:
    """``{label: generator spec}`` (from YAML) -> ``{canonical label: MentionSource}``; a label the taxonomy does
    not know, or a spec that does not load, raises :class:`MentionError` naming it."""
    sources: dict[str, MentionSource] = {}
    for label, spec in specs.items():
        name = _resolve(taxonomy, str(label))
        if name is None:
            raise MentionError(f"generators: label {label!r} is not in taxonomy {taxonomy.name!r}")
        sources[name] = load_generator(spec)
    return sources


def _packaged_generator(name: str) -> MentionSource | None:
    """The generator the packaged taxonomy gives a label of this name (or alias, or normalised variant)."""
    label = _resolve(packaged_taxonomy(), name)
    source = packaged_taxonomy().labels[label].source if label else ""
    return GENERATORS.get(source.split(":", 1)[1]) if source.startswith("generator:") else None


def _resolve(taxonomy: Taxonomy, tag: str) -> str | None:
    try:
        return taxonomy.resolve(tag).label.name
    except KeyError:
        return None


def _source_for(
    label: Label, lists: Mapping[str, Sequence[str]], folders: Mapping[tuple[str, str], Sequence[str]]
) -> MentionSource | None:
    if label.source.startswith("generator:"):
        name = label.source.split(":", 1)[1]
        if name not in GENERATORS and "." not in name.replace(":", "."):
            raise MentionError(f"label {label.name!r}: unknown generator {name!r} (known: {', '.join(GENERATORS)})")
        return load_generator(name)
    # entries such as "E모텔" under 모텔 are placeholder codes the list authors left in: not mentions
    mentions = [m for m in lists.get(label.name, ()) if not ("A" <= m[0] <= "Z" and m[1:] in ("", label.name))]
    if mentions:
        return ListSource(mentions, label.name)
    generator = _packaged_generator(label.name)
    if generator is not None:
        return generator
    if label.name in PLACE_NUMBERS:
        return PLACE_NUMBERS[label.name]
    if label.name in _NUMBER_LABELS:
        return _NumberSource(*_NUMBER_LABELS[label.name])
    pooled = tuple(dict.fromkeys(m for folder in POOLED_PLACES.get(label.name, ()) for m in folders.get(folder, ())))
    if pooled:  # crime scenes: businesses, not the generic place lists of their category
        return ListSource(pooled, f"{label.name} <- {len(POOLED_PLACES[label.name])} business folders")
    pool = folders.get((label.category, label.subcategory))
    if pool:
        return ListSource(pool, f"{label.category}/{label.subcategory}")
    pool = tuple(dict.fromkeys(m for (category, _), ms in folders.items() if category == label.category for m in ms))
    return ListSource(pool, label.category) if pool else None

