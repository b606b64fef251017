"""Section templates of whole judgments (``resources/sections``, written for Thunder): read, and checked against a
taxonomy, before any composition.

A template file holds a kind of case (criminal, civil, family, administrative; first instance or appeal): its
sections (:class:`Section`: header, 주문, 증거의 요지, 법령의 적용, ...), their layout, the ``roles`` that bind template
letters to the facts paragraph's people and the ``officials`` whose names are placeholders; ``common.yaml`` holds the
lists slots draw from. :func:`load_cases` reads them all into :class:`Case` objects; any fault is a
:class:`TemplateError` naming the file and the section. :mod:`thunder.synthesis.composition` composes them.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from thunder.documents.annotation import AnnotationError, parse_annotated
from thunder.taxonomy import Taxonomy, UnknownTagError

SECTIONS = Path(str(resources.files("thunder") / "resources" / "sections"))
COMMON_FILE = "common.yaml"
ROLES = ("offender", "victim", "other")
OFFICIALS = ("judge", "prosecutor", "counsel")
OFFICIAL_TAG = "내국인이름"  # the tag of an official's name when ``officials`` makes it a placeholder
FIRM_TAG = "법무법인"
FACTS = "facts"  # the layout entry of the corpus paragraph

SLOT = re.compile(r"\{([a-z_]+)(?::([^{}\n]+))?\}")


class TemplateError(ValueError):
    """A section template that cannot be used; the message names the file and the template."""


@dataclass(frozen=True)
class Section:
    """One section's text: a variant (one chosen), then ``pick`` of the ``lines`` (each a choice of alternatives,
    kept in order), then a tail variant."""

    variants: tuple[str, ...]
    lines: tuple[tuple[str, ...], ...] = ()
    pick: tuple[int, int] = (0, 0)
    tails: tuple[str, ...] = ()

    def texts(self) -> tuple[str, ...]:
        """Every template string of the section."""
        return (*self.variants, *(text for line in self.lines for text in line), *self.tails)

    def render(self, rng: random.Random) -> str:
        parts = [rng.choice(self.variants)] if self.variants else []
        if self.lines:
            count = min(rng.randint(*self.pick), len(self.lines))
            parts += [rng.choice(self.lines[i]) for i in sorted(rng.sample(range(len(self.lines)), count))]
        if self.tails:
            parts.append(rng.choice(self.tails))
        return "\n".join(part.strip("\n") for part in parts)


@dataclass(frozen=True)
class Case:
    """One kind of judgment: its sections in ``layout`` order (each with the probability it is written), the roles
    of its letters, the sections written once per defendant (``each``) and its lists of slot values."""

    kind: str
    name: str
    weight: float
    roles: Mapping[str, str]
    layout: tuple[tuple[str, float], ...]
    sections: Mapping[str, Section]
    lists: Mapping[str, tuple[str, ...]]
    crimes: Mapping[str, tuple[tuple[str, str], ...]]
    each: frozenset[str] = frozenset()
    source: str = ""

    @property
    def quotes_facts(self) -> bool:
        return any(name == FACTS for name, _ in self.layout)


# ----------------------------------------------------------------------------------------------- loading


def load_cases(taxonomy: Taxonomy, slots: Collection[str], directory: str | Path | None = None) -> tuple[Case, ...]:
    """The cases of every ``*.yaml`` file of ``directory`` (default: the packaged sections) but ``common.yaml``, which
    holds the lists and crimes all files share. Every template is checked: its slots are among ``slots`` (the values
    composition makes) or its lists, its markup parses, its placeholders hold letter codes and its tags resolve in
    ``taxonomy``; else :class:`TemplateError`."""
    directory = Path(directory) if directory is not None else SECTIONS
    common = _read_yaml(directory / COMMON_FILE)
    lists = _lists(common.get("lists", {}), directory / COMMON_FILE)
    crimes = _crimes(common.get("crimes", {}), directory / COMMON_FILE)
    cases = []
    for path in sorted(directory.glob("*.yaml")):
        if path.name != COMMON_FILE:
            cases += _read_cases(path, lists, crimes)
    if not cases:
        raise TemplateError(f"{directory}: no section files (*.yaml besides {COMMON_FILE})")
    for case in cases:
        _check_case(case, taxonomy, slots)
    return tuple(cases)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise TemplateError(f"{path}: cannot read section templates: {error}") from None
    if not isinstance(data, dict):
        raise TemplateError(f"{path}: a section file holds a mapping")
    return data


def _strings(value: Any, where: str) -> tuple[str, ...]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise TemplateError(f"{where}: expected a text or a non-empty list of texts")
    return tuple(values)


def _lists(value: Any, where: str | Path) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise TemplateError(f"{where}: lists: expected a mapping of list names to texts")
    return {str(name): _strings(items, f"{where}: lists.{name}") for name, items in value.items()}


def _crimes(value: Any, where: Path) -> dict[str, tuple[tuple[str, str], ...]]:
    if not isinstance(value, dict) or "default" not in value:
        raise TemplateError(f"{where}: crimes: expected a mapping of case types (and 'default') to crimes")
    crimes = {}
    for case_type, entries in value.items():
        if not isinstance(entries, list) or not all(isinstance(e, dict) and {"name", "statute"} <= e.keys() for e in entries):
            raise TemplateError(f"{where}: crimes.{case_type}: expected a list of {{name, statute}}")
        crimes[str(case_type)] = tuple((str(e["name"]), str(e["statute"])) for e in entries)
    return crimes


def _section(value: Any, where: str) -> Section:
    if not isinstance(value, dict):
        return Section(_strings(value, where))
    unknown = value.keys() - {"variants", "lines", "pick", "tails"}
    if unknown:
        raise TemplateError(f"{where}: unknown keys {sorted(unknown)} (variants, lines, pick, tails)")
    lines = value.get("lines", [])
    if not isinstance(lines, list):
        raise TemplateError(f"{where}.lines: expected a list")
    pick = value.get("pick", [len(lines), len(lines)])
    if not (isinstance(pick, list) and len(pick) == 2 and all(isinstance(n, int) for n in pick) and 0 <= pick[0] <= pick[1]):
        raise TemplateError(f"{where}.pick: expected [least, most] line counts")
    return Section(
        _strings(value["variants"], f"{where}.variants") if "variants" in value else (),
        tuple(_strings(line, f"{where}.lines[{i}]") for i, line in enumerate(lines)),
        (pick[0], pick[1]),
        _strings(value["tails"], f"{where}.tails") if "tails" in value else (),
    )


def _layout(value: Any, where: str) -> tuple[tuple[str, float], ...]:
    if not isinstance(value, list) or not value:
        raise TemplateError(f"{where}: expected a list of section names (or {{name: probability}})")
    layout = []
    for item in value:
        name, probability = (item, 1.0) if isinstance(item, str) else next(iter(item.items()), (None, None))
        if not isinstance(name, str) or not isinstance(probability, (int, float)) or not 0 < probability <= 1:
            raise TemplateError(f"{where}: {item!r} is not a section name or {{name: probability in (0, 1]}}")
        if isinstance(item, dict) and len(item) != 1:
            raise TemplateError(f"{where}: {item!r}: one section per entry")
        layout.append((name, float(probability)))
    return tuple(layout)


def _read_cases(path: Path, common_lists: Mapping[str, tuple[str, ...]], crimes: Mapping) -> list[Case]:
    data = _read_yaml(path)
    kind, weight = data.get("kind"), data.get("weight", 1.0)
    if not isinstance(kind, str) or not isinstance(weight, (int, float)) or weight < 0:
        raise TemplateError(f"{path}: needs 'kind' (a name) and 'weight' (>= 0)")
    lists = {**common_lists, **_lists(data.get("lists", {}), path)}
    shared = {name: _section(value, f"{path}: sections.{name}") for name, value in (data.get("sections") or {}).items()}
    cases = []
    for index, entry in enumerate(data.get("cases") or []):
        where = f"{path}: cases[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise TemplateError(f"{where}: a case needs a 'name'")
        roles = {**(data.get("roles") or {}), **(entry.get("roles") or {})}
        bad = {letter: role for letter, role in roles.items() if role not in ROLES or not re.fullmatch("[A-Z]{1,3}", str(letter))}
        if bad:
            raise TemplateError(f"{where}: roles {bad}: a role binds a letter code to one of {', '.join(ROLES)}")
        own = {name: _section(value, f"{where}.sections.{name}") for name, value in (entry.get("sections") or {}).items()}
        case_weight = entry.get("weight", 1.0)
        if not isinstance(case_weight, (int, float)) or case_weight < 0:
            raise TemplateError(f"{where}: weight must be >= 0")
        cases.append(
            Case(
                kind, entry["name"], float(weight) * float(case_weight), roles, _layout(entry.get("layout"), f"{where}.layout"),
                {**shared, **own}, {**lists, **_lists(entry.get("lists", {}), where)}, crimes,
                frozenset(entry.get("each") or data.get("each") or ()), f"{path.name}: {entry['name']}",
            )  # fmt: skip
        )
    if not cases:
        raise TemplateError(f"{path}: no cases")
    return cases


def _check_case(case: Case, taxonomy: Taxonomy, slots: Collection[str]) -> None:
    for name, _ in case.layout:
        if name != FACTS and name not in case.sections:
            raise TemplateError(f"{case.source}: layout names section {name!r}, which is not written")
    for name in case.each:
        if name not in case.sections:
            raise TemplateError(f"{case.source}: each names section {name!r}, which is not written")
    for name, section in case.sections.items():
        for text in section.texts():
            _check_template(text, case, f"{case.source}: section {name}: {text[:30]!r}...", taxonomy, slots)


def _check_template(text: str, case: Case, where: str, taxonomy: Taxonomy, slots: Collection[str]) -> None:
    for match in SLOT.finditer(text):
        if match.group(1) not in slots and match.group(1) not in case.lists:
            raise TemplateError(f"{where}: unknown slot {{{match.group(1)}}}")
    blank = SLOT.sub("0", text)
    try:
        parsed = parse_annotated(blank, source=where)
    except AnnotationError as error:
        raise TemplateError(str(error)) from None
    tags: dict[str, str] = {}
    for placeholder in parsed.placeholders:
        if not re.fullmatch("[A-Z]{1,3}", placeholder.entity):
            raise TemplateError(f"{where}: placeholder {placeholder.tag!r} holds {placeholder.entity!r}, not a letter code")
        try:
            taxonomy.resolve(placeholder.tag)
        except UnknownTagError as error:
            raise TemplateError(f"{where}: {error}") from None
        if tags.setdefault(placeholder.entity, placeholder.tag) != placeholder.tag:
            raise TemplateError(f"{where}: letter {placeholder.entity} stands for two tags")
