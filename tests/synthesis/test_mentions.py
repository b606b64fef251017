"""Mention generators (validity, context consistency) and MentionBank loading."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thunder.identifiers import phone_number, vehicle_plate
from thunder.identifiers.bank_account_number import BANK_ACCOUNT_FORMATS
from thunder.identifiers.card_number import CARD_PREFIXES, luhn_check_digit
from thunder.identifiers.context import REFERENCE_YEAR, MentionContext, infer_birth_year, infer_gender
from thunder.identifiers.resident_registration_number import check_digit as rrn_check_digit
from thunder.language.particles import agrees, has_final_consonant
from thunder.synthesis import mentions as m
from thunder.synthesis.mentions import DEMO_MENTIONS, GENERATORS, ListSource, MentionBank, MentionError
from thunder.taxonomy import Taxonomy

EXPECTED_GENERATORS = {
    "korean_name", "resident_number", "phone_number", "account_number", "card_number", "vehicle_plate",
    "address", "email", "url", "user_id", "age", "foreign_registration_number", "business_registration_number",
    "passport_number", "driver_license_number", "bus_route", "ip_address",
}  # fmt: skip
FALLBACK_ONLY = {"ip_address"}  # the packaged taxonomy gives IPv4 addresses its URL label


def ctx(label: str, *occurrences: tuple[str, str]) -> MentionContext:
    return MentionContext(label, tuple(occurrences))


def draws(name: str, context: MentionContext, n: int = 200) -> list[str]:
    return [GENERATORS[name].sample(random.Random(seed), context) for seed in range(n)]


def test_generator_names_match_the_taxonomy_contract() -> None:
    named = {label.source.split(":", 1)[1] for label in Taxonomy.load().labels.values() if label.source != "list"}
    assert set(GENERATORS) == EXPECTED_GENERATORS and named == EXPECTED_GENERATORS - FALLBACK_ONLY


@pytest.mark.parametrize("name", sorted(EXPECTED_GENERATORS))
def test_generators_are_deterministic_and_non_empty(name: str) -> None:
    context = ctx("구아래주소" if name == "address" else name, ("피해자 ", "에게"))
    first = draws(name, context, 50)
    assert first == draws(name, context, 50)
    assert all(isinstance(x, str) and x.strip() == x and x for x in first)
    assert len(set(first)) > 25  # varied


# ----------------------------------------------------------------------------------- names, gender


@pytest.mark.parametrize(
    ("occurrence", "gender"),
    [
        (("피해자 ", "(남, 29세)에게"), "male"),
        (("피해자 ", "(여, 1990년생)을"), "female"),
        (("피해자 ", "(여)은"), "female"),
        (("피해자 ", "(남자, 30세)"), "male"),
        (("피해자 ", "(52세, 여)는"), "female"),
        (("피해자 ", "(가명, 남, 1985년생)"), "male"),
        (("피해자 ", "(가명)에게"), None),
        (("피해자 ", "(남양주시 거주)에게"), None),
        (("피고인의 아내 ", "에게"), "female"),
        (("피해자의 남편인 ", "은"), "male"),
        (("피고인의 여자친구인 ", "과"), "female"),
        (("피해자 ", "에게"), None),
        (("남양주시에 사는 ", "에게"), None),
    ],
)
def test_gender_from_context(occurrence: tuple[str, str], gender: str | None) -> None:
    assert infer_gender(ctx("내국인이름", occurrence)) == gender


def test_explicit_gender_outweighs_a_kinship_word() -> None:
    context = ctx("내국인이름", ("아내 ", "이"), ("피해자 ", "(남, 40세)는"))
    assert infer_gender(context) == "male"


@pytest.mark.parametrize("gender", ["male", "female"])
def test_names_follow_the_gender(gender: str) -> None:
    right = "(남, 29세)에게" if gender == "male" else "(여, 29세)에게"
    first, second = m._GIVEN_SYLLABLES[gender]
    other = set(m._GIVEN["female" if gender == "male" else "male"]) - set(m._GIVEN[gender])
    for name in draws("korean_name", ctx("내국인이름", ("피해자 ", right))):
        assert re.fullmatch(r"[가-힣]{2,4}", name)
        surname = next(s for s in sorted(m._LAST_NAMES, key=len, reverse=True) if name.startswith(s))
        given = name[len(surname) :]
        assert given not in other
        assert given in m._GIVEN[gender] or (given[0] in first and given[1] in second)


@pytest.mark.parametrize("particle", ["은", "는", "이", "가", "을", "를", "과", "와", "으로", "로", "이라는", "라는"])
def test_bank_draws_names_that_agree_with_the_particle(particle: str) -> None:
    bank = MentionBank({"내국인이름": GENERATORS["korean_name"]})
    context = ctx("내국인이름", ("피해자 ", f"{particle} 말했다"), ("", f"{particle}, "))
    for seed in range(60):
        name = bank.sample("내국인이름", random.Random(seed), context)
        assert agrees(name, f"{particle} ") is True, (name, particle)


def test_bank_prefers_agreeing_list_entries_and_falls_back_to_any() -> None:
    bank = MentionBank({"a": ListSource(["사과", "수박", "포도"]), "b": ListSource(["사과"])})
    context = ctx("a", ("", "을 샀다"))
    assert {bank.sample("a", random.Random(s), context) for s in range(30)} == {"수박"}
    assert bank.sample("b", random.Random(0), ctx("b", ("", "을 샀다"))) == "사과"  # nothing agrees


# ----------------------------------------------------------------------------------- numbers


def _valid_rrn(rrn: str) -> re.Match[str]:
    match = re.fullmatch(r"(\d\d)(\d\d)(\d\d)-(\d)\d{5}(\d)", rrn)
    assert match, rrn
    # the check digit is not asserted: about 10% are numbers issued since Oct 2020 (random last digit)
    assert 1 <= int(match.group(2)) <= 12 and 1 <= int(match.group(3)) <= 31
    return match


def test_rrn_check_digit_known_value() -> None:
    # 9*2 + 0*3 + 0*4 + 1*5 + 0*6 + 1*7 + 1*8 + 2*9 + 3*2 + 4*3 + 5*4 + 6*5 = 124; 124 % 11 = 3; 11 - 3 = 8
    assert rrn_check_digit("900101123456") == 8
    assert rrn_check_digit("000000000000") == 1  # (11 - 0) % 10


@pytest.mark.parametrize(
    ("right", "year", "digits"),
    [
        ("(여, 1990년생)", "90", "2"),
        ("(남, 1985. 3. 2.생)", "85", "1"),
        ("(남, 2003년생)", "03", "3"),
        ("(여, 2001년 5월생)", "01", "4"),
        ("(남, 29세)", f"{(REFERENCE_YEAR - 29) % 100:02d}", "1"),
        ("(만 40세, 여)", f"{(REFERENCE_YEAR - 40) % 100:02d}", "2"),
        ("", None, "1234"),
    ],
)
def test_resident_numbers(right: str, year: str | None, digits: str) -> None:
    for rrn in draws("resident_number", ctx("주민등록번호", ("", right)), 100):
        match = _valid_rrn(rrn)
        if year is not None:
            assert match.group(1) == year
        assert match.group(4) in digits


def test_birth_year_needs_a_parenthesis_after_the_mention() -> None:
    assert infer_birth_year(ctx("x", ("", "(여, 1990년생)"))) == 1990
    assert infer_birth_year(ctx("x", ("", "에게 1990년생이라고"))) is None


_AREA = "|".join(phone_number.AREA_CODES)


def test_phone_numbers() -> None:
    pattern = re.compile(rf"010-\d{{4}}-\d{{4}}|070-\d{{4}}-\d{{4}}|02-\d{{3,4}}-\d{{4}}|(?:{_AREA})-\d{{3}}-\d{{4}}")
    numbers = draws("phone_number", ctx("전화번호", ("전화번호 ", ")")), 300)
    assert all(pattern.fullmatch(n) for n in numbers), [n for n in numbers if not pattern.fullmatch(n)]
    assert any(not n.startswith("010") for n in numbers)
    mobile = draws("phone_number", ctx("전화번호", ("피해자의 휴대전화(", ")")))
    assert all(re.fullmatch(r"010-\d{4}-\d{4}", n) for n in mobile)
    service = draws("phone_number", ctx("전화번호", ("은행 콜센터 번호(", ")")))
    assert all(re.fullmatch(r"1[56]\d\d-\d{4}", n) for n in service)


def _pattern_regex(pattern: str) -> str:
    return re.escape(pattern).replace("\\#", "#").replace("#", r"\d")


@pytest.mark.parametrize(
    ("left", "bank"),
    [("피고인 명의 카카오뱅크 계좌(", "카카오뱅크"), ("농협 계좌(계좌번호 ", "NH농협은행"), ("신한은행 ", "신한은행"),
     ("우리은행 계좌(", "우리은행"), ("KB국민은행(", "KB국민은행"), ("대구은행 계좌 ", "대구은행")],
)  # fmt: skip
def test_account_numbers_follow_the_bank_in_the_context(left: str, bank: str) -> None:
    patterns = [_pattern_regex(p) for p in BANK_ACCOUNT_FORMATS[bank][1]]
    for number in draws("account_number", ctx("계좌번호", (left, ")로")), 50):
        assert any(re.fullmatch(p, number) for p in patterns), (bank, number)


def test_account_numbers_without_a_bank_use_some_bank_format() -> None:
    patterns = [_pattern_regex(p) for _, formats in BANK_ACCOUNT_FORMATS.values() for p in formats]
    numbers = draws("account_number", ctx("계좌번호", ("계좌(", ")")))
    assert all(any(re.fullmatch(p, n) for p in patterns) for n in numbers)
    assert len({n.count("-") for n in numbers}) > 1


def _luhn_ok(number: str) -> bool:
    digits = [int(d) for d in number]
    total = sum(d if i % 2 == 0 else (d * 2 - 9 if d * 2 > 9 else d * 2) for i, d in enumerate(reversed(digits)))
    return total % 10 == 0


@given(st.text("0123456789", min_size=1, max_size=20))
def test_luhn_check_digit(payload: str) -> None:
    assert _luhn_ok(payload + str(luhn_check_digit(payload)))


def test_card_numbers() -> None:
    prefixes = [p for group, _ in CARD_PREFIXES for p in group]
    for card in draws("card_number", ctx("신용카드번호", ("카드(", ")")), 300):
        assert re.fullmatch(r"\d{4}-\d{4}-\d{4}-\d{4}|\d{4}-\d{6}-\d{5}", card), card
        digits = card.replace("-", "")
        assert _luhn_ok(digits)
        assert any(digits.startswith(p) for p in prefixes)
        assert len(digits) == (15 if digits[:2] in ("34", "37") else 16)


_PLATE = re.compile(rf"(?:{'|'.join(vehicle_plate.PLATE_REGIONS)})?\d{{2,3}}[가-힣]\d{{4}}")


def test_vehicle_plates() -> None:
    plates = draws("vehicle_plate", ctx("차량번호", ("피고인 운전의 ", " 승용차")), 300)
    assert all(_PLATE.fullmatch(p) for p in plates)
    assert any(re.fullmatch(r"\d{3}[가-힣]\d{4}", p) for p in plates)  # current format
    assert any(re.fullmatch(r"[가-힣]{2}\d{2}[가-힣]\d{4}", p) for p in plates)  # older regional format
    letters = {re.search(r"\d([가-힣])\d", p).group(1) for p in plates}
    assert letters <= set(vehicle_plate.PLATE_PRIVATE + vehicle_plate.PLATE_RENTAL)
    taxis = draws("vehicle_plate", ctx("차량번호", ("피해자와 (", ") 택시에 승차")))
    assert {re.search(r"\d([가-힣])\d", p).group(1) for p in taxis} <= set(vehicle_plate.PLATE_COMMERCIAL)


# ----------------------------------------------------------------------------------- addresses

_UPPER_WORD = re.compile(r"^[가-힣]+(?:도|특별시|광역시|특별자치시)$")


def _words(address: str) -> list[str]:
    return address.split()


def test_address_below_district_has_no_upper_levels() -> None:
    for address in draws("address", ctx("구아래주소", ("청주시 상당구 ", "에 있는"))):
        first = _words(address)[0]
        assert re.fullmatch(r"[가-힣0-9]+(?:동|로|길|대로)(?:\d+번?길)?", first), address
        assert not first.endswith(("시", "군", "구", "읍", "면"))
        assert re.search(r"\d", address)


def test_address_below_city_uses_the_city_districts() -> None:
    seen_district = False
    for address in draws("address", ctx("시아래주소", ("경기 성남시 ", "에 있는"))):
        first = _words(address)[0]
        assert not first.endswith(("시", "군", "도")), address
        if first.endswith("구"):
            assert first in ("수정구", "중원구", "분당구"), address
            seen_district = True
    assert seen_district


def test_address_below_city_after_a_written_district_starts_below_it() -> None:
    for address in draws("address", ctx("시아래주소", ("청주시 상당구 ", "에서"))):
        assert not _words(address)[0].endswith(("구", "시", "군")), address


def test_address_below_province_stays_in_the_province() -> None:
    units = set(m._ADMIN["경상남도"][1])
    for address in draws("address", ctx("도아래주소", ("경남 ", "에 있는"))):
        assert _words(address)[0] in units, address


def test_address_below_county_starts_with_a_town() -> None:
    for address in draws("address", ctx("군아래주소", ("전남 장흥군 ", "에 있는"))):
        assert re.fullmatch(r"[가-힣]+[읍면]", _words(address)[0]), address


@pytest.mark.parametrize("label", ["읍아래주소", "면아래주소"])
def test_address_below_town(label: str) -> None:
    for address in draws("address", ctx(label, ("경주시 외동읍 ", "에 있는"))):
        first = _words(address)[0]
        assert re.fullmatch(r"[가-힣]+리|[가-힣0-9]+(?:로|길)(?:\d+번?길)?", first), address


def test_full_address_starts_at_the_top() -> None:
    provinces = {w for p, (short, _) in m._ADMIN.items() for w in (p, *short)}
    for address in draws("address", ctx("주소", ("주소: ", ""))):
        assert _words(address)[0] in provinces, address
        assert len(_words(address)) >= 3


# ----------------------------------------------------------------------------------- online, age


def test_emails_urls_and_user_ids() -> None:
    for value in draws("email", ctx("이메일주소", ("계정(", ")"))):
        assert re.fullmatch(r"[a-z][a-z0-9_]*@[a-z0-9.]+\.[a-z]+", value), value
    for value in draws("url", ctx("URL", ("주소(", ")"))):
        assert re.fullmatch(r"(?:https?://)?(?:www\.)?[a-z0-9.]+\.[a-z]+(?:/[A-Za-z0-9/]*)?", value), value
    for value in draws("user_id", ctx("아이디", ("위챗 아이디 '", "'"))):
        assert re.fullmatch(r"[a-z][a-z0-9_.]*[a-z0-9]", value), value


def test_age_adds_se_only_where_the_text_lacks_it() -> None:
    bare = draws("age", ctx("나이", ("(여, ", "세)")))
    assert all(re.fullmatch(r"\d{2}", a) and 14 <= int(a) <= 89 for a in bare)
    assert all(re.fullmatch(r"\d{2}세", a) for a in draws("age", ctx("나이", ("당시 ", "의 피해자"))))


# ----------------------------------------------------------------------------------- MentionBank


def _write(root: Path, relative: str, data: object) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


@pytest.fixture()
def small_taxonomy() -> Taxonomy:
    return Taxonomy.from_dict(
        {
            "name": "small",
            "aliases": {"음식점": "식당"},
            "categories": {
                "사건관계인특정정보": {"인명": {"내국인이름": {"tier1": "direct", "source": "generator:korean_name"}}},
                "사업체": {"외식업": {"식당": {}, "분식집": {}}, "금융": {"은행": {}}},
                "지리정보": {"주소": {"구아래주소": {"source": "generator:address"}}},
                "조직": {"단체": {"모임": {}}},
                "사건관련숫자정보": {"장소관련번호": {"층": {}}},
            },
        }
    )


def test_bank_from_dirs(tmp_path: Path, small_taxonomy: Taxonomy) -> None:
    _write(tmp_path / "a", "사업체/외식업/식당.json", {"식당": ["한빛식당", "소담식당"], "음식점": ["고향집"]})
    _write(tmp_path / "b", "사업체/금융.json", {"은행": ["우리은행", "하나은행"]})  # file directly under a category
    _write(tmp_path / "b", "사업체/외식업/식당.json", {"식당": ["한빛식당", "별미식당"]})
    _write(tmp_path / "a", "all_categories.json", {"사업체": {"외식업": {"식당": ["중첩"]}}})
    bank = MentionBank.from_dirs(small_taxonomy, [tmp_path / "a", tmp_path / "b"])
    assert isinstance(bank.source("식당"), ListSource)
    assert set(bank.source("식당").mentions) == {"한빛식당", "소담식당", "고향집", "별미식당"}  # merged, alias key
    assert bank.source("음식점") is bank.source("식당")  # raw tags resolve through the taxonomy
    assert set(bank.source("은행").mentions) == {"우리은행", "하나은행"}
    assert bank.source("내국인이름") is GENERATORS["korean_name"]
    assert set(bank.source("분식집").mentions) == set(bank.source("식당").mentions)  # subcategory fallback
    assert re.fullmatch(r"\d+", bank.sample("층", random.Random(0), ctx("층", ("", "층"))))  # numbering fallback
    assert bank.missing == ("모임",)
    with pytest.raises(MentionError, match="'모임'"):
        bank.sample("모임", random.Random(0), ctx("모임"))
    with pytest.raises(MentionError, match="모임"):
        MentionBank.from_dirs(small_taxonomy, [tmp_path / "a"], strict=True)
    with pytest.raises(MentionError, match="없는"):
        MentionBank.from_dirs(small_taxonomy, [tmp_path / "없는"])
    with pytest.raises(MentionError, match="no mention source for label '없음'"):
        bank.source("없음")


def test_bank_rejects_malformed_files(tmp_path: Path, small_taxonomy: Taxonomy) -> None:
    (tmp_path / "사업체" / "외식업").mkdir(parents=True)
    (tmp_path / "사업체" / "외식업" / "식당.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(MentionError, match="식당.json"):
        MentionBank.from_dirs(small_taxonomy, [tmp_path])


def test_mention_files_are_parsed_once(tmp_path: Path, small_taxonomy: Taxonomy, monkeypatch) -> None:
    _write(tmp_path, "사업체/외식업/식당.json", {"식당": ["한빛식당"]})
    MentionBank.from_dirs(small_taxonomy, [tmp_path])
    monkeypatch.setattr(m.json, "loads", lambda *a, **k: pytest.fail("re-parsed a cached mention file"))
    assert MentionBank.from_dirs(small_taxonomy, [tmp_path]).source("식당").mentions == ("한빛식당",)


def test_demo_mentions_cover_the_default_taxonomy() -> None:
    taxonomy = Taxonomy.load()
    bank = MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS])
    rng = random.Random(0)
    for label in taxonomy.labels:
        if label not in bank.missing:
            mention = bank.sample(label, rng, ctx(label, ("", "에서")))
            assert mention.strip(), label


@pytest.mark.shared_data
def test_shared_mention_lists(shared_corpus: Path) -> None:
    taxonomy = Taxonomy.load().with_alias_files([shared_corpus / "tag_aliases.json"])
    bank = MentionBank.from_dirs(taxonomy, [shared_corpus / "mentions", shared_corpus / "mentions-llm"])
    lists = [s for s in bank.sources.values() if isinstance(s, ListSource)]
    assert sum(len(s.mentions) for s in lists) > 10_000
    assert bank.source("은행").mentions and "우리은행" in bank.source("은행").mentions
    assert has_final_consonant(bank.sample("내국인이름", random.Random(1), ctx("내국인이름", ("", "은 ")))) is True


def test_bank_prefers_mentions_ending_with_the_repeated_generic_word() -> None:
    bank = MentionBank({"은행": ListSource(["새마을금고", "우리은행", "수협"])})
    context = ctx("은행", ("명의의 ", "은행 계좌"))
    assert {bank.sample("은행", random.Random(s), context) for s in range(20)} == {"우리은행"}
    assert m.repeated_word("조합아파트", ["아파트 101동"]) == "아파트"
    assert m.repeated_word("은행", ["은 말했다"]) is None
