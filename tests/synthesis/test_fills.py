"""Synthesis fidelity (issue 14): place numbers with their unit, bus routes, taxi and truck plates, crime scenes
from business lists, the annotators' ``1 생략`` notes dropped."""

from __future__ import annotations

import random
import re

import pytest

from thunder.documents.annotation import parse_annotated
from thunder.synthesis.fills import PLACE_NUMBERS, bus_route
from thunder.synthesis.mentions import DEMO_MENTIONS, MentionBank, MentionContext, load_mention_lists
from thunder.synthesis.synthesizer import Synthesizer, leftovers
from thunder.taxonomy import Taxonomy


@pytest.fixture(scope="module")
def bank(taxonomy: Taxonomy) -> MentionBank:
    return MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS])


def synthesize(taxonomy: Taxonomy, bank: MentionBank, raw: str, seed: int = 0) -> str:
    return Synthesizer(taxonomy, bank, seed=seed)(parse_annotated(raw)).text


@pytest.mark.parametrize(
    ("raw", "shape"),
    [
        ("위 아파트 <<<동>>>C<<</동>>>동 앞에서", r"위 아파트 (1\d\d|\d{1,2}|[가-라A-D])동 앞에서"),
        ("아파트 <<<동>>>D<<</동>>> <<<호실>>>E<<</호실>>>호에", r"아파트 (1\d\d|\d{1,2}|[가-라A-D])동 (\d{1,4}|B0\d)호에"),
        ("건물 <<<층>>>RA<<</층>>>층에 있는", r"건물 (\d{1,2}|지하 \d)층에 있는"),
        ("교도소 <<<호실>>>C<<</호실>>>에 수용 중인", r"교도소 (\d{1,4}|B0\d)호에 수용 중인"),
    ],
)
def test_place_numbers_carry_their_unit_once(taxonomy, bank, raw: str, shape: str) -> None:
    for seed in range(30):
        text = synthesize(taxonomy, bank, raw, seed)
        assert re.fullmatch(shape, text), text


def test_rooms_look_like_floor_and_unit() -> None:
    rooms = [PLACE_NUMBERS["호"].sample(random.Random(i), MentionContext("호", (("", "호에"),))) for i in range(400)]
    floor_unit = [r for r in rooms if re.fullmatch(r"([1-9]|1\d|2[0-5])0[1-8]", r)]
    assert len(floor_unit) > 0.6 * len(rooms)


def test_taxis_trucks_and_buses_are_filled_with_plates_and_routes(taxonomy, bank) -> None:
    assert taxonomy.resolve("택시").label.name == "차량번호"
    assert taxonomy.resolve("화물차").label.name == "차량번호"
    assert taxonomy.resolve("버스").label.name == "버스번호"
    text = synthesize(taxonomy, bank, "피해자가 운행하는 <<<택시>>>C<<</택시>>> 택시에 탑승하여")
    assert re.fullmatch(r"피해자가 운행하는 (서울|부산|대구|인천|광주|대전|울산|세종|경기|강원|충북|충남|전북|전남|경북|경남|제주)?"
                        r"\d{2,3}[바사아자배]\d{4} 택시에 탑승하여", text), text  # fmt: skip
    for seed in range(20):
        text = synthesize(taxonomy, bank, "운행 중이던 <<<버스>>>B<<</버스>>> 버스에서", seed)
        assert re.fullmatch(r"운행 중이던 (\d{1,4}(-\d)?번|[MGN]\d{4}|좌석 \d{1,3}번) 버스에서", text), text
    assert bus_route(random.Random(0), MentionContext("버스번호", (("", "번 버스"),))).endswith("번") is False


def test_crime_scenes_are_businesses_not_generic_places(taxonomy, bank) -> None:
    lists = load_mention_lists([DEMO_MENTIONS])
    businesses = {m for (category, _), ms in lists.by_folder.items() if category in ("사업체", "기관및시설") for m in ms}
    generic = {m for (category, _), ms in lists.by_folder.items() if category == "사건관련장소" for m in ms}
    for label in ("추행장소", "폭행장소", "사기장소"):
        drawn = {bank.sample(label, random.Random(i), MentionContext(label, (("", "에서"),))) for i in range(50)}
        assert drawn <= businesses and not drawn & (generic - businesses), label


@pytest.mark.parametrize(
    "raw",
    [
        "피고인은 (<<<차량번호>>>차량번호<<</차량번호>>> 1 생략) 택시를",
        "피고인은 (<<<차량번호>>>차량번호 1<<</차량번호>>> 생략) 택시를",
        "피고인은 (<<<차량번호>>>차량번호 1 생략<<</차량번호>>>) 택시를",
    ],
)
def test_redaction_notes_after_a_placeholder_are_dropped(taxonomy, bank, raw: str) -> None:
    doc = parse_annotated(raw)
    out = Synthesizer(taxonomy, bank)(doc)
    assert "생략" not in out.text and re.fullmatch(r"피고인은 \(\S+\) 택시를", out.text), out.text
    span = out.spans[0]
    assert out.text[span.end] == ")"
    assert leftovers(doc, out) == []
    # a 생략 that is part of the sentence stays
    assert "생략하고" in synthesize(taxonomy, bank, "<<<차량번호>>>A<<</차량번호>>> 생략하고")


def test_a_generated_mask_is_no_leftover_but_a_kept_one_is(taxonomy) -> None:
    from thunder.synthesis.names import PersonNames

    bank = MentionBank({"내국인이름": PersonNames("broad", foreign=0, masked=1.0, spaced=0)}, taxonomy)
    doc = parse_annotated("피해자 <<<내국인이름>>>A<<</내국인이름>>>에게")
    out = Synthesizer(taxonomy, bank)(doc)
    assert re.search(r"[○O*]", out.text) and leftovers(doc, out) == []
    kept = parse_annotated("피해자 <<<내국인이름>>>김○○<<</내국인이름>>>에게")
    out = Synthesizer(taxonomy, MentionBank({"내국인이름": _Echo()}, taxonomy))(kept)
    assert leftovers(kept, out) == ["김○○"]


class _Echo:
    def sample(self, rng: random.Random, context: MentionContext) -> str:
        return "김○○"
