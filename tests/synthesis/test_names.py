"""thunder.synthesis.names: the broad training and the unseen test name families, random strings of a mention's shape."""

from __future__ import annotations

import random
import re

import pytest

from thunder.data import with_random_mentions
from thunder.synthesis.mentions import DEMO_MENTIONS, MentionBank, MentionContext
from thunder.synthesis.names import _NATIVE_GIVEN, DOUBLE_SURNAMES, SURNAMES, PersonNames, ShapeNoise, random_shape
from thunder.taxonomy import Taxonomy

PERSON = MentionContext("내국인이름", (("피해자 ", "(여, 31세)에게"),))


def draws(source, n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [source.sample(rng, PERSON) for _ in range(n)]


def split_name(name: str) -> tuple[str, str]:
    surname = next(s for s in sorted(SURNAMES, key=len, reverse=True) if name.startswith(s))
    return surname, name[len(surname) :]


def test_broad_family_covers_every_form_the_issue_names() -> None:
    names = draws(PersonNames("broad"), 4000)
    korean = [n for n in draws(PersonNames("broad", foreign=0), 4000) if re.fullmatch(r"[가-힣]+", n)]
    given_lengths = {len(split_name(n)[1]) for n in korean}
    assert {1, 2, 3} <= given_lengths
    assert any(n.startswith(DOUBLE_SURNAMES) for n in korean)  # 남궁, 황보, ...
    assert any(" " in n and len(n) > 5 for n in names)  # foreign names in Hangul (응우옌 반 안, 마이클 존슨)
    assert any("·" in n for n in names)
    assert any(re.fullmatch(r"[가-힣]{1,2}[○O*][가-힣]", n) for n in names)  # 홍○동
    assert any(re.fullmatch(r"[가-힣]{1,2}[○O*]{2,}", n) for n in names)  # 김○○
    assert len(set(names)) > 0.85 * len(names)
    assert all(re.fullmatch(r"[가-힣 ·○O*]+", n) for n in names)
    # given names of any Hangul syllable, not only the inventory's (about 20% of the Korean names)
    from thunder.synthesis.names import _GIVEN_SYLLABLES

    outside = [n for n in korean if set(split_name(n)[1]) - set(_GIVEN_SYLLABLES) - set("".join(_NATIVE_GIVEN))]
    assert 0.1 < len(outside) / len(korean) < 0.3
    inventory_only = [n for n in draws(PersonNames("broad", foreign=0, any_syllable=0), 2000) if re.fullmatch(r"[가-힣]+", n)]
    assert len([n for n in inventory_only if set(split_name(n)[1]) - set(_GIVEN_SYLLABLES)]) < 0.25 * len(inventory_only)


def test_families_are_seeded_and_differ_in_construction() -> None:
    broad, unseen = PersonNames("broad"), PersonNames("unseen")
    assert draws(broad, 50, seed=3) == draws(broad, 50, seed=3)
    training = set(draws(broad, 20000))
    test = draws(unseen, 2000, seed=1)
    assert all(re.fullmatch(r"[가-힣]{2,5}", n) for n in test)
    overlap = sum(name in training for name in test) / len(test)
    assert overlap < 0.05, f"{overlap:.1%} of unseen-family names are also broad-family names"


def test_name_families_load_by_class_path_and_options_are_checked() -> None:
    from thunder.synthesis.mentions import load_generator

    source = load_generator({"class_path": "thunder.synthesis.names.PersonNames", "init_args": {"foreign": 0.2}})
    assert isinstance(source, PersonNames) and source.foreign == 0.2 and source.sample(random.Random(0), PERSON)
    with pytest.raises(ValueError, match="family"):
        PersonNames("rare")
    with pytest.raises(ValueError, match="at most 1"):
        PersonNames(foreign=0.6, masked=0.6)
    with pytest.raises(ValueError, match="any_syllable must be in"):
        PersonNames(any_syllable=1.5)


@pytest.mark.parametrize(
    ("mention", "label", "kept"),
    [("국민은행", "은행", "은행"), ("강남역", "지하철역", "역"), ("서울 강남구 역삼동 123-4", "주소", None), ("홍길동", "내국인이름", "")],
)
def test_random_shape_keeps_the_shape_and_the_generic_tail(mention: str, label: str, kept: str | None) -> None:
    rng = random.Random(0)
    outputs = {random_shape(mention, rng, label) for _ in range(20)}
    assert len(outputs) > 15 and mention not in outputs
    for out in outputs:
        assert len(out) == len(mention)
        for a, b in zip(mention, out):
            kind = lambda c: "h" if "가" <= c <= "힣" else "d" if c.isdigit() else c  # noqa: E731
            assert kind(a) == kind(b)
        if kept:
            assert out.endswith(kept)
    if kept is None:  # address words keep their unit: 구, 동
        assert all(re.fullmatch(r"[가-힣]{2} [가-힣]{2}구 [가-힣]{2}동 \d{3}-\d", out) for out in outputs)


def test_shape_noise_replaces_its_share_and_spares_structured_identifiers() -> None:
    taxonomy = Taxonomy.load()
    bank = MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS])
    noisy = with_random_mentions(bank, 1.0)
    context = MentionContext("아파트", (("", "에서"),))
    lists = set(bank.source("아파트").mentions)
    assert all(noisy.sample("아파트", random.Random(i), context) not in lists for i in range(20))
    assert noisy.source("전화번호") is bank.source("전화번호")  # a structured identifier keeps its pattern
    assert ShapeNoise(bank.source("아파트"), 0.0).sample(random.Random(0), context) in lists
    with pytest.raises(ValueError):
        with_random_mentions(bank, 1.5)
