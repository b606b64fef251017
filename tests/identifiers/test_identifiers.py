"""The identifier catalogue: validators, recognition, generator <-> recognizer agreement, labels from the taxonomy,
and user recognizers and generators plugged in by ``class_path``."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from thunder.deid.recognizers.registry import load_recognizers, recognize
from thunder.identifiers import CATALOGUE, PatternRecognizer, card_number
from thunder.identifiers import business_registration_number as brn
from thunder.identifiers import foreign_registration_number as frn
from thunder.identifiers import resident_registration_number as rrn
from thunder.identifiers.context import MentionContext
from thunder.synthesis.mentions import MentionBank, MentionError
from thunder.taxonomy import Taxonomy

REPO = Path(__file__).resolve().parents[2]
MEDICAL = REPO / "configs" / "taxonomies" / "medical_records.yaml"
ALL = load_recognizers()
WITH_RECOGNIZER = sorted(name for name, identifier in CATALOGUE.items() if identifier.recognizer)
AFTER_THEIR_WORD = {"user_id"}  # no shape of their own: found only right after the word that names them


def _weighted(digits: str, weights: tuple[int, ...]) -> int:
    return sum(int(d) * w for d, w in zip(digits, weights))


# ------------------------------------------------------------------------------------------------ validators


@pytest.mark.parametrize(
    ("valid", "number", "expected"),
    [
        (rrn.check_digit_valid, "900101-1234568", True),
        (rrn.check_digit_valid, "900101-1234567", False),
        (rrn.check_digit_valid, "900101-123456", False),  # 12 digits
        (frn.check_digit_valid, "900101-5123452", True),  # (13 - 200 % 11) % 10 = 2
        (frn.check_digit_valid, "900101-5123458", False),  # the resident-number check digit of the same body
        (brn.check_digit_valid, "124-81-00998", True),  # a published company number
        (brn.check_digit_valid, "124-81-00997", False),
        (card_number.luhn_valid, "4111-1111-1111-1111", True),
        (card_number.luhn_valid, "4111-1111-1111-1112", False),
        (card_number.luhn_valid, "4111-11", False),  # too short for a card
    ],
)
def test_validators(valid, number: str, expected: bool) -> None:
    assert valid(number) is expected


@given(st.text("0123456789", min_size=12, max_size=12))
def test_registration_check_digits_follow_the_published_formulas(first12: str) -> None:
    total = _weighted(first12, (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5))
    assert rrn.check_digit(first12) == (11 - total % 11) % 10
    assert frn.check_digit(first12) == (13 - total % 11) % 10


@given(st.text("0123456789", min_size=9, max_size=9))
def test_business_check_digit_follows_the_published_formula(first9: str) -> None:
    total = _weighted(first9, (1, 3, 7, 1, 3, 7, 1, 3)) + int(first9[8]) * 5 + int(first9[8]) * 5 // 10
    assert brn.check_digit(first9) == (10 - total % 10) % 10


# ------------------------------------------------------------------------------------------------ recognition


def found(text: str) -> list[tuple[str, str, float]]:
    return [(text[s.start : s.end], s.source, s.score) for s in recognize(text, ALL)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # numbers issued since Oct 2020 have random digits after the gender digit: never rejected
        ("주민등록번호 210315-3847261 인", ("210315-3847261", "resident_registration_number", 0.7)),
        ("주민번호 2103153847261", ("2103153847261", "resident_registration_number", 0.6)),
        # 13 bare digits with a birth date and a Korean gender digit: a resident number whatever the check digit
        ("번호 9001011234567 입니다", ("9001011234567", "resident_registration_number", 0.5)),
        ("외국인등록번호 900101-5123452", ("900101-5123452", "foreign_registration_number", 0.95)),
        ("외국인등록번호 210101-5123459", ("210101-5123459", "foreign_registration_number", 0.75)),
        ("사업자등록번호 124-81-00998", ("124-81-00998", "business_registration_number", 0.95)),
        ("(124-81-00998)", ("124-81-00998", "business_registration_number", 0.8)),
        ("사업자등록번호 124-81-00997", ("124-81-00997", "business_registration_number", 0.6)),
        ("사업자번호 1248100998", ("1248100998", "business_registration_number", 0.85)),
        ("여권번호 M123A4567", ("M123A4567", "passport_number", 0.9)),
        ("여권(M12345678)을", ("M12345678", "passport_number", 0.85)),
        ("운전면허번호 11-12-345678-90", ("11-12-345678-90", "driver_license_number", 0.95)),
        ("면허증(서울 12-345678-90)", ("서울 12-345678-90", "driver_license_number", 0.95)),
        ("운전면허번호 111234567890", ("111234567890", "driver_license_number", 0.8)),
        ("승용차 98노1234", ("98노1234", "vehicle_plate", 0.85)),  # a vehicle word outweighs the case shape
        ("피고인은 17자9388 개인택시 기사", ("17자9388", "vehicle_plate", 0.8)),  # a word after it, no amount
        ("고객센터 1588-1234", ("1588-1234", "phone_number", 0.8)),
        ("99-12-345678-90", ("99-12-345678-90", "bank_account_number", 0.55)),  # region 99 does not exist
        ("접속 IP 192.168.010.020 에서", ("192.168.010.020", "ip_address", 0.9)),  # zero-padded octets
        ("https://www.예시.한국/a 에 게시", ("https://www.예시.한국/a", "url", 0.9)),  # a Hangul host, path kept
        ("https://xn--9n2bp8q.xn--3e0b707e/path 참조", ("https://xn--9n2bp8q.xn--3e0b707e/path", "url", 0.9)),
        # a judgment's text wrapped at its margin inside a number
        ("주민등록번호 900101-\n1234568 인", ("900101-\n1234568", "resident_registration_number", 0.95)),
        ("전화 010-1234-\n5678 로", ("010-1234-\n5678", "phone_number", 0.9)),
        # e-mail addresses written to dodge collectors
        ("이메일 hong(at)naver.com 으로", ("hong(at)naver.com", "email", 0.95)),
        ("이메일 hong [at] naver [dot] com 으로", ("hong [at] naver [dot] com", "email", 0.95)),
        ("이메일 hong at naver dot com 으로", ("hong at naver dot com", "email", 0.95)),
        # a dash typed as the Hangul vowel ㅡ, the katakana ー or a tilde; two line breaks or a <br> inside a number
        ("전화 010ㅡ1234ㅡ5678 로", ("010ㅡ1234ㅡ5678", "phone_number", 0.9)),
        ("주민등록번호 900101ㅡ1234568 인", ("900101ㅡ1234568", "resident_registration_number", 0.95)),
        ("주민등록번호 900101ㅡ1234567 인", ("900101ㅡ1234567", "resident_registration_number", 0.7)),  # issue 71's
        ("전화 ０１０ー１２３４ー５６７８ 로", ("０１０ー１２３４ー５６７８", "phone_number", 0.9)),
        ("전화 010~1234~5678 로", ("010~1234~5678", "phone_number", 0.9)),
        ("전화 010-1234-<br>5678 로", ("010-1234-<br>5678", "phone_number", 0.9)),
        ("전화 010-1234-\n\n5678 로", ("010-1234-\n\n5678", "phone_number", 0.9)),
        ("주민등록번호 900101-\n\n1234568 인", ("900101-\n\n1234568", "resident_registration_number", 0.95)),
        ("이메일 hong@naver.\ncom 으로", ("hong@naver.\ncom", "email", 0.95)),
        # a URL's user name and password go with it, whole; ftp, link shorteners, punycode hosts without a scheme
        ("주소 https://hongkd:pa55w0rd@example.com/x 참조", ("https://hongkd:pa55w0rd@example.com/x", "url", 0.97)),
        ("주소 ftp://files.example.com/a.zip 참조", ("ftp://files.example.com/a.zip", "url", 0.9)),
        ("링크 bit.ly/3xYzAb 참조", ("bit.ly/3xYzAb", "url", 0.8)),
        ("주소 xn--9n2bp8q.xn--3e0b707e 참조", ("xn--9n2bp8q.xn--3e0b707e", "url", 0.85)),
        # issue 71: Hangul e-mail addresses, @ and dots written in Hangul, numbers read out, IPv6, letters glued on
        ("연락처 홍길동@예시.한국 으로", ("홍길동@예시.한국", "email", 0.95)),
        ("이메일 홍길동@예시.한국으로 보냈다", ("홍길동@예시.한국", "email", 0.95)),
        ("이메일 hong@naver.com으로 보냈다", ("hong@naver.com", "email", 0.95)),
        ("이메일 hong 골뱅이 naver 닷컴 으로", ("hong 골뱅이 naver 닷컴", "email", 0.95)),
        ("이메일 hong 골뱅이 naver 닷 컴 으로", ("hong 골뱅이 naver 닷 컴", "email", 0.95)),
        ("이메일 hong골뱅이naver점com으로", ("hong골뱅이naver점com", "email", 0.95)),
        ("이메일 hong 앳 daum 쩜 넷 으로", ("hong 앳 daum 쩜 넷", "email", 0.95)),
        ("이메일 kim_88 골뱅이 korea 점 ac 점 케이알 로", ("kim_88 골뱅이 korea 점 ac 점 케이알", "email", 0.95)),
        ("전화 공일공 일이삼사 오육칠팔 로", ("공일공 일이삼사 오육칠팔", "phone_number", 0.9)),
        ("전화 공일공-일이삼사-오육칠팔로 연락", ("공일공-일이삼사-오육칠팔", "phone_number", 0.9)),
        ("전화 영일영 일이삼사 오육칠팔 로", ("영일영 일이삼사 오육칠팔", "phone_number", 0.9)),
        ("전화 공일공일이삼사오육칠팔 로", ("공일공일이삼사오육칠팔", "phone_number", 0.8)),  # no separator, as 01012345678
        ("전화 010-일이삼사-5678 로", ("010-일이삼사-5678", "phone_number", 0.9)),
        ("접속 IP 2001:db8::8a2e:370:7334 에서", ("2001:db8::8a2e:370:7334", "ip_address", 0.9)),
        ("로그 ::ffff:192.0.2.1 기록", ("::ffff:192.0.2.1", "ip_address", 0.8)),
        ("전화 010-1234-0001kd12 로", ("010-1234-0001kd12", "phone_number", 0.9)),
    ],
)
def test_recognition(text: str, expected: tuple[str, str, float]) -> None:
    assert found(text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "번호 9002301234567 입니다",  # 13 bare digits, bad check digit, no context word, no such day (Feb 30)
        "번호 9001019234567 입니다",  # ... no Korean gender digit
        "1248100998",  # 10 bare digits need a context word and a valid check digit
        "제품 M12345678X",  # inside a longer code
        "면허번호 991234567890",  # bare digits with an unknown region code
        "2020고단1234, 2021. 3. 4. 14:30경, 1,000,000원",
        # the same in full-width forms, and the shapes the variants admit next to their look-alikes
        "２０２０고단１２３４, ２０２１． ３． ４． １４：３０경, １，０００，０００원",
        "계좌로 100 200 300원을 송금하였다",  # spaced digit groups after 계좌: an amount
        "사업자 매출 1234567890원",  # 10 digits after 사업자: an amount
        "목차 1.2.3.4 항목",  # four small numbers joined by dots: an outline number, not an IP address
        "형법 제347조 제1항, 2019. 10. 12.자 결정",
        "회의는 at 3 dot 으로",  # "at" and "dot" without an address around them
        "2019. 10.\n12. 선고",  # a date wrapped at the margin stays a date
        "기간 2019~2020, 제1~3항, 100~200만원, 1ㅡ2",  # ranges and a Hangul dash between small numbers
        "14:30:25경 도착, 비율 2:1:1, 시각 12:30",  # times and ratios: no IPv6 address
        "영일만 일대에서 일이삼사 순서로 공일공 번",  # Sino-Korean numerals that are no mobile number
        "강남점 com 매장, 판매점 넷, 골뱅이 무침",  # Hangul dot and @ words without an address around them
        "공소외 32가 2005. 3월경 직접, 피고인 2가 2019. 3. 1. 만났다, 1가 1200만 원",  # a mark, its particle, a date
    ],
)
def test_look_alikes(text: str) -> None:
    assert found(text) == []


# ------------------------------------------------------------------------------------------------ generators


def _context(name: str, left: str) -> tuple[PatternRecognizer, MentionContext]:
    recognizer = next(r for r in ALL if getattr(r, "identifier", None) == name)
    return recognizer, MentionContext(recognizer.label, ((left, " 입니다."),))


@pytest.mark.parametrize("name", WITH_RECOGNIZER)
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), with_context=st.booleans())
def test_generated_mentions_are_recognized_by_their_own_recognizer(name: str, seed: int, with_context: bool) -> None:
    recognizer, _ = _context(name, "")
    named = (with_context or name in AFTER_THEIR_WORD) and recognizer.context
    left = f"피고인의 {recognizer.context[0]} " if named else "피고인은 "
    _, context = _context(name, left)
    value = CATALOGUE[name].generate(random.Random(seed), context)
    text = f"{left}{value} 입니다."
    spans = [(text[s.start : s.end], s.label, s.source) for s in recognize(text, ALL)]
    assert spans == [(value, recognizer.label, recognizer.name)]


def test_generated_resident_numbers_include_random_tails_and_all_are_recognized() -> None:
    rng, context = random.Random(0), MentionContext("주민등록번호", ())
    numbers = [rrn.generate(rng, context) for _ in range(400)]
    valid = sum(map(rrn.check_digit_valid, numbers))
    assert 300 < valid < 400  # most carry the check digit; about 10% (issued since Oct 2020) a random last digit
    assert all(recognize(f"주민등록번호 {n}", load_recognizers(["resident_registration_number"])) for n in numbers)


def test_catalogue_entries_are_consistent() -> None:
    for name, identifier in CATALOGUE.items():
        assert identifier.name == name and callable(identifier.generate)
        assert identifier.recognizer is None or identifier.recognizer.identifier == name


# ------------------------------------------------------------------------------------------------ labels


def test_labels_come_from_the_taxonomy() -> None:
    default = Taxonomy.load()
    for recognizer in ALL:
        cls = type(recognizer)
        assert "label" not in vars(cls), f"{cls.__name__} writes its label in code"
        source = next(filter(default.filled_by, (recognizer.identifier, *recognizer.fallback_identifiers)))
        assert [recognizer.label] == [label.name for label in default.filled_by(source)]
        assert (recognizer.category, recognizer.tier1) == (
            default.labels[recognizer.label].category,
            default.labels[recognizer.label].tier1,
        )


def test_another_taxonomy_names_the_labels() -> None:
    medical = Taxonomy.load(MEDICAL)
    by_name = {r.name: r for r in load_recognizers(taxonomy=medical)}
    assert (by_name["phone_number"].label, by_name["phone_number"].category) == ("연락처", "환자정보")
    assert by_name["bank_account_number"].label == "계좌번호"  # not in that taxonomy: the packaged one's
    from thunder.deid.pipeline import Deidentifier
    from thunder.taxonomy import LabelSet

    result = Deidentifier(label_set=LabelSet(medical))("보호자 연락처 010-1234-5678로")
    assert [(s.text, s.label, s.category) for s in result.spans] == [("010-1234-5678", "연락처", "환자정보")]


def test_a_taxonomy_may_give_ip_addresses_a_label_of_their_own() -> None:
    spans = recognize("접속 IP 192.168.10.20", load_recognizers(["ip_address"]))
    assert [(s.label, s.category) for s in spans] == [("URL", "URL")]  # the packaged taxonomy has no label for them
    own = Taxonomy.from_dict(
        {"categories": {"통신": {"": {"IP주소": {"tier1": "direct", "source": "generator:ip_address"}}}}}
    )
    spans = recognize("접속 IP 192.168.10.20", load_recognizers(["ip_address"], taxonomy=own))
    assert [(s.label, s.category, s.tier1) for s in spans] == [("IP주소", "통신", "direct")]


def test_a_recognizer_without_a_label_anywhere_is_refused() -> None:
    with pytest.raises(ValueError, match="no label of taxonomy .* has source 'generator:employee_id'"):
        EmployeeId()


# ------------------------------------------------------------------------------------------------ user parts


class EmployeeId(PatternRecognizer):
    """A user's identifier: ``EMP-12345``."""

    name = "employee_id"
    identifier = "employee_id"
    pattern = re.compile(r"(?<![A-Za-z0-9-])(?P<id>[A-Z]{3}-\d{5})(?![\d-])")
    context = ("사번",)


class EmployeeIdGenerator:
    """A user's generator: ``<prefix>-NNNNN``."""

    def __init__(self, prefix: str = "EMP") -> None:
        self.prefix = prefix

    def sample(self, rng: random.Random, context: MentionContext) -> str:
        return f"{self.prefix}-{rng.randint(0, 99999):05d}"


STAFF_TAXONOMY = """
name: staff-records
categories:
  직원정보:
    식별:
      직원이름: {tier1: direct, source: "generator:korean_name"}
      사번: {tier1: direct}
"""
STAFF_DOCS = [
    "직원 <<<직원이름>>>A<<</직원이름>>>(사번 <<<사번>>>B<<</사번>>>)은 2021. 3. 4. 출근하지 않았다.",
    "<<<직원이름>>>C<<</직원이름>>>의 사번은 <<<사번>>>D<<</사번>>>이고, <<<직원이름>>>A<<</직원이름>>>와 같은 팀이다.",
]


def _staff_config(tmp_path: Path) -> dict:
    (tmp_path / "staff.yaml").write_text(STAFF_TAXONOMY, encoding="utf-8")
    docs = tmp_path / "annotated" / "staff"
    docs.mkdir(parents=True)
    for index, doc in enumerate(STAFF_DOCS):
        (docs / f"{index}.md").write_text(doc, encoding="utf-8")
    return yaml.safe_load(
        f"""
data:
  class_path: thunder.data.DeIdDataModule
  init_args:
    data_dir: {tmp_path / "annotated"}
    train_dirs: [{tmp_path / "annotated"}]
    mention_dirs: []
    taxonomy: {tmp_path / "staff.yaml"}
    max_length: 64
    stride: 16
    generators:
      사번: {{class_path: {__name__}.EmployeeIdGenerator, init_args: {{prefix: STF}}}}
recognizers:
  - {{class_path: {__name__}.EmployeeId, init_args: {{label: 사번}}}}
"""
    )


def _datamodule(config: dict):
    """The data module as ``thunder fit --config`` builds it (LightningCLI's jsonargparse)."""
    from jsonargparse import ArgumentParser
    from lightning.pytorch import LightningDataModule

    parser = ArgumentParser()
    parser.add_subclass_arguments(LightningDataModule, "data")
    return parser.instantiate(parser.parse_object({"data": config["data"]})).data


def test_user_recognizer_and_generator_by_class_path(tmp_path: Path) -> None:
    config = _staff_config(tmp_path)
    datamodule = _datamodule(config)
    datamodule.setup("fit")
    train = datamodule.datasets["train"]
    staff_id = datamodule.label_set.inside_id("사번")
    for index in range(len(train)):
        document = train.synthesize(index, epoch=0)
        ids = [document.text[s.start : s.end] for s in document.spans if s.label == "사번"]
        assert ids and all(re.fullmatch(r"STF-\d{5}", i) for i in ids), document.text
        assert any(staff_id in example["labels"] for example in train[(0, index)])  # in the training labels

    from thunder.deid.pipeline import Deidentifier

    deid = Deidentifier(label_set=datamodule.label_set, recognizers=config["recognizers"])
    text = train.synthesize(0, epoch=0).text
    spans = [(s.text, s.label, s.category, s.source) for s in deid(text).spans]
    staff = re.search(r"STF-\d{5}", text).group()
    assert (staff, "사번", "직원정보", "employee_id") in spans
    assert staff not in deid(text).text


def test_generators_from_plain_init_args_and_taxonomy_paths(tmp_path: Path) -> None:
    from thunder.data import DeIdDataModule

    init_args = _staff_config(tmp_path)["data"]["init_args"]
    datamodule = DeIdDataModule(**init_args)  # the YAML dict itself, not instantiated by jsonargparse
    assert isinstance(datamodule.generators["사번"], EmployeeIdGenerator)
    with pytest.raises(MentionError, match="label '부서' is not in taxonomy 'staff-records'"):
        DeIdDataModule(**{**init_args, "generators": {"부서": "phone_number"}})
    with pytest.raises(MentionError, match="no_such_module"):
        DeIdDataModule(**{**init_args, "generators": {"사번": {"class_path": "no_such_module.Generator"}}})
    # a taxonomy may name a generator class by path too
    path_taxonomy = STAFF_TAXONOMY.replace(
        "사번: {tier1: direct}", f'사번: {{source: "generator:{__name__}.EmployeeIdGenerator"}}'
    )
    bank = MentionBank.from_dirs(Taxonomy.from_dict(yaml.safe_load(path_taxonomy)), [])
    assert re.fullmatch(r"EMP-\d{5}", bank.sample("사번", random.Random(0), MentionContext("사번")))
    unknown = STAFF_TAXONOMY.replace("사번: {tier1: direct}", '사번: {source: "generator:dog_name"}')
    with pytest.raises(MentionError, match="unknown generator 'dog_name'"):
        MentionBank.from_dirs(Taxonomy.from_dict(yaml.safe_load(unknown)), [])


def test_list_labels_without_lists_take_the_packaged_taxonomys_generator() -> None:
    from thunder.synthesis.mentions import GENERATORS

    listed = {
        "categories": {"x": {"": {name: {} for name in ("휴대전화번호", "카드번호", "구이하주소", "여권번호", "메모")}}}
    }
    bank = MentionBank.from_dirs(Taxonomy.from_dict(listed), [])
    assert bank.source("휴대전화번호") is GENERATORS["phone_number"]  # an alias of 전화번호
    assert bank.source("카드번호") is GENERATORS["card_number"]
    assert bank.source("구이하주소") is GENERATORS["address"]  # normalised to 구아래주소
    assert bank.source("여권번호") is GENERATORS["passport_number"]
    assert bank.missing == ("메모",)
