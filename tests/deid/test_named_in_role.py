"""Person names where a judgment's wording says one stands (thunder.deid.recognizers.named_in_role), alone and in the pipeline."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import pytest

from thunder.data import Recipe
from thunder.deid.pipeline import Deidentifier
from thunder.deid.recognizers.named_in_role import NamedInRoleRecognizer, coordinated_names, split_particles
from thunder.deid.recognizers.registry import load_recognizers
from thunder.evaluation.gold import load_documents
from thunder.taxonomy import Taxonomy


def names(text: str) -> list[str]:
    return [text[s.start : s.end] for s in NamedInRoleRecognizer().find(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("피고(반소원고) 강화훈 (941217-2934459)\n주소", ["강화훈"]),  # a party with a parenthesis, before the RRN
        ("원      고     김철                인천 연수구", ["김철"]),  # a header's spaced role
        ("상 대 방  김수민  (770728-2172868)", ["김수민"]),
        ("요양병원 간호사 김처어의 사실확인서", ["김처어"]),
        ("피고인의 누나 김소리가 피해 회복을", ["김소리"]),
        ("피고의 부친 두단고로부터 증여받은", ["두단고"]),  # several particles
        ("피고의 처남인 김면규가 서명하였다", ["김면규"]),  # the role with 인
        ("피해자 김칸창(남, 35세)에게", ["김칸창"]),
        ("2022. 3. 4. 홍길순(여, 41세)을 만나", ["홍길순"]),  # sex and age alone mark a name
        ("원고 최을의 청구를 기각한다.", ["최을"]),  # 의 agrees and ends the word: the particle after the name
        ("원고 이별와의 청구를 기각한다.", ["이별와"]),  # a name ending in a particle letter that cannot be one (과)
        ("피해자 이씨는 다투었다.", ["이씨"]),  # 는 after 씨: a particle, though 이씨는 has three syllables
        ("피해자 홍길동아, 왜 그랬니.", ["홍길동"]),  # the vocative
        ("피해자 김영희랑 만났다.", ["김영희"]),
        ("피해자 최윤아에게 전화하였다.", ["최윤아"]),  # a name ending in 아: three syllables
        ("피해자 김인이(51세)의 집", ["김인이"]),  # no particle comes before the age: the whole word
        ("피고(반소원고) 연예은 (920205-2462222)", ["연예은"]),  # ... though 연예|은 reads as a word and a particle
        ("사건본인의 후견인으로 \n        강산겐(\n        980205-1234567)", ["강산겐"]),  # details wrapped
        ("원고는 소외 김서셔에게 토지를 팔았고, 소외인 황보민철은", ["김서셔", "황보민철"]),  # a non-party (civil)
        ("피고인 김철수·이영희는 공모하여", ["김철수", "이영희"]),  # names listed with middle dots
        ("물리치료사 올가·소콜로프가 휴가 중", ["올가·소콜로프"]),  # foreign names of several words
        ("토지 보상금: 원고 쿠즈네초바 이리나 662,740,000원", ["쿠즈네초바 이리나"]),
        ("학생 나탈리아 소콜로프를 제지하기 위하여", ["나탈리아 소콜로프"]),
        ("증인 마리아 진술", ["마리아"]),
        ("피고인의 형 김뜕벸이 출소 후", ["김뜕벸"]),  # relatives, workplaces and schools
        ("관리사무소장 김상호 발급의 확인서", ["김상호"]),
        ("수강료 환불 확인서(학부모 고무존 외 17명 작성)", ["고무존"]),
        ("피해자 회사 과장 박민수에게", ["박민수"]),
        ("피고인의 동생 김형수가 진술하였다", ["김형수"]),  # a name that ends like a relative (형수) is a name
        ("내원하여 의사 \n        김형준으로부터 진찰을", ["김형준"]),  # a published decision wrapped after the role
        ("원고(반소피고) 길 영길 (740608-2907411)\n주소", ["길 영길"]),  # a header's party of several words
        ("상 대 방  자오 진  (990714-2168711)", ["자오 진"]),
        ("피고  후지에  (외국인등록번호 710203-5123456)", ["후지에"]),  # a foreign registration number after it
        ("원 고  찰스 클라크\n(외국인등록번호 911203-5123456)", ["찰스 클라크"]),  # ... on the next line
        ("원 고 1. 김령항\n2. 고속상\n원고들 주소 인천 미추홀구 주안로 12\n피 고 1. 한상철\n인천 연수구 송도로 1\n"
         "2. 한국공인중개사협회\n3. 정미숙\n이 유\n1. 기초사실\n2. 소결론", ["김령항", "고속상", "한상철", "정미숙"]),  # fmt: skip
    ],
)
def test_a_name_in_a_place_where_judgments_name_people_is_found(text: str, expected: list[str]) -> None:
    assert names(text) == expected


def test_the_readings_other_words_share_decide_where_a_name_ends() -> None:
    text = "원고 오숿은 2022. 3. 원고 오숿의 유류카드를 소지하였다. 원고 오숿에 대한 처분"
    assert names(text) == ["오숿", "오숿", "오숿"]
    assert split_particles("두단고로부터") == ["두단고로", "두단고"]


@pytest.mark.parametrize(
    "text",
    [
        "원고 주장은 이유 없다.",  # a dictionary word with a particle
        "증인\n다음과 같이 진술하였다.",  # a word on the next line after a role is a word there too
        "피해자 본인의 진술",
        "증인 신문 결과",
        "피고 회사는 원고 조합에 대하여",
        "피해자 성명불상의 남자",  # a protected word
        "피고인 명의로 원고 소유의 토지",
        "피고 서울특별시, 원고 현대건설, 피해자 경산시로부터",  # places and companies
        "두 사람은 친구 사이이고, 피해자 위에 올라타",  # a word with the copula, a one-syllable noun with a particle
        "연락을 해온 피해자 이에게",  # a pronoun with a particle
        "피고 남편인 소외 1은, 피의자 신문조서의 기재, 원고 사촌언니의 중재",  # roles, compounds of common nouns
        "재판장 판사 김판사, 검사 이검사, 변호사 박변호",  # officials follow the officials policy, not this
        "피고인 김○○, 원고 A는",  # already de-identified
        "원고 주장·입증 취지, 피해자 진술·증언, 원고 미국·중국, 청구인 베트남 국적",  # words and places with dots
        "이구슥의 아버지인 자이다.",  # a predicate ending a sentence, though the dictionary knows 자이다 as a name
        "형 집행을 유예하고, 피고인은 형 선고 후 사장 명의로 김부장 과장에게",  # 형 the sentence; titles
        "원고 주식회사 한빛 (110111-1234567), 피고 사단법인 새빛 (114321-0001234)",  # organisations before a number
        "피고 대한민국 (소관 법무부), 피고인 A (900101-1234567)",
        "원고 1. 소유권이전등기절차를 이행하라.\n2. 소결론\n3. 당심판단",  # a numbered list that starts with no name
        "소외 회사의 대표이사, 소외 1은 소외 금고로부터, 소외 망인의 처",  # a non-party that is no name
        # issue 79: common nouns the dictionary holds as compounds of a noun (조합+원), compounds with particles,
        # an office or a body of a place: no names after a role, with or without particles
        "피고 조합원들은 항소하였다. 원고 조합원 김철수는 말하였다. 피고 조합장은 말했다. 피고 채권자는",
        "원고 단독명의로 등기하였다. 피고 김해군수는 처분하였고, 피고 양양군청은",
    ],
)
def test_words_in_the_places_of_names_are_left_alone(text: str) -> None:
    assert names(text) == []


def test_a_name_found_once_is_replaced_everywhere_and_the_recognizer_is_on_by_default() -> None:
    assert "named_in_role" in [r.name for r in load_recognizers()]
    text = "피고소인 손상철에 대한 고소사건에서, 원고는 손상철이 매매대금을 받고도 굴착기를 인도하지 않았다고 주장한다."
    result = Deidentifier()(text)
    assert "손상철" not in result.text
    assert [s.source for s in result.spans] == ["named_in_role", "propagated"]
    assert len({s.placeholder for s in result.spans}) == 1
    without = Deidentifier(recognizers=["resident_registration_number"])(text)
    assert without.text == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("피해자 이씨는 다투었다.", "피해자 A는 다투었다."),
        ("피해자 홍길동아, 왜 그랬니.", "피해자 A야, 왜 그랬니."),
        ("피해자 김영희랑 만났다.", "피해자 A랑 만났다."),
        ("원고 최을의 청구를 기각한다.", "원고 A의 청구를 기각한다."),
    ],
)
def test_the_particle_after_a_name_found_without_a_model_is_kept_and_fixed(text: str, expected: str) -> None:
    assert Deidentifier()(text).text == expected


@pytest.mark.parametrize("corpus", ["demo", "judgments"])
def test_every_name_it_finds_in_the_packaged_corpora_lies_on_an_identifier(corpus: str) -> None:
    """Precision on realistic text: the demo corpus's facts paragraphs and the packaged whole judgments, filled."""
    root = Path(str(importlib.resources.files("thunder") / "resources" / corpus / "annotated"))
    documents = list(load_documents(Recipe(data_dir=str(root)), Taxonomy.load()))
    recognizer = NamedInRoleRecognizer()
    found = [(doc, span) for doc in documents for span in recognizer.find(doc.text)]
    assert len(found) >= 300  # it does find names there (365 and 438 at the time of writing)
    off = [doc.text[span.start : span.end] for doc, span in found
           if not any(g.start < span.end and span.start < g.end for g in doc.spans)]  # fmt: skip
    assert off == []


def test_a_dictionary_noun_shaped_like_a_name_is_a_name_after_a_role() -> None:
    """``홍길동`` is a common noun to Mecab-ko (the dictionary's everyman); after a role it is a name, as README's
    example without a model says: three syllables, a common surname first, no general noun of Korean."""
    found = NamedInRoleRecognizer().find
    text = "피고인 홍길동은 피해자 김영희에게 전화하였다."
    assert [text[s.start : s.end] for s in found(text)] == ["홍길동", "김영희"]
    for text in ("피고인 이야기는 다르다.", "피고인 구치소에서", "원고 주장은 이유 없다.", "증인 신문조서"):
        assert found(text) == [], text


def test_a_name_ending_in_a_syllable_that_reads_as_a_particle_is_replaced_whole() -> None:
    """김영은, 박성은: names Mecab-ko reads whole keep their last syllable; only the particle after them is fixed."""
    deid = Deidentifier()
    assert deid("피고인 김영은이 말했다. 피고인 박성은은 갔다.").text == "피고인 A가 말했다. 피고인 B는 갔다."


def test_names_that_are_dictionary_words_are_left_to_the_model_as_the_readme_says() -> None:
    """README: without a model, a name after a role word that Mecab-ko reads as a dictionary word, alone or with its
    particle (정미|래는), stays (issue 68)."""
    deid = Deidentifier()
    for text in ("피고인 장미는 갔다.", "증인 한결은 갔다.", "피고인 정미래는 갔다."):
        assert deid(text).text == text
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "`피고인 장미`, `증인 한결`, `피고인 정미래는`, left to the model" in readme


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("증인 최별겨, 김주무, 박존허의 진술", "증인 A, B, C의 진술"),  # a list after a role: each joined name
        ("피고인 홍길동과 김뎐던이 만났다", "피고인 A와 B가 만났다"),  # 과/와, a name Mecab-ko reads as odd pieces
        ("피고인 김철수 및 이영희는", "피고인 A 및 B는"),
        ("피고인 홍길동과 공모하여", "피고인 A와 공모하여"),  # what was done with the person: a verb
        ("피해자 김철수와 다투다가", "피해자 A와 다투다가"),
        ("피고인 홍길동, 사기, 횡령", "피고인 A, 사기, 횡령"),  # words
        ("증인 최별겨, 송하, 김주무(35세)의 진술", "증인 A, B, C(35세)의 진술"),  # a common noun between two names
        ("증인 최별겨, 송하와 김주무(35세)는 송하의 집에서", "증인 A, B와 C(35세)는 B의 집에서"),
        ("증인 최별겨, 송하의 진술", "증인 A, 송하의 진술"),  # after one name only: a word
        ("증인 최별겨가 왔다. 최별겨, 송하, 김주무(35세)가 갔다.", "증인 A가 왔다. A, B, C(35세)가 갔다."),  # found before
        ("피고인 조미김이 왔다. 조미김, 도시락김 등", "피고인 A가 왔다. A, 도시락김 등"),  # ... only ends a list there
        ("피고인 홍길동, 사기, 김주무(35세)", "피고인 A, 사기, B(35세)"),  # legal text between names
        ("피고인 홍길동, 서울, 김주무(35세)", "피고인 A, 서울, B(35세)"),  # a place
    ],
)  # fmt: skip
def test_names_joined_to_a_found_name_are_names(text: str, expected: str) -> None:
    """Issue 66: a name joined to a found one by 과/와, a comma or 및 is a person's name too (found again from those
    found), unless it reads as a verb or a word; listed between two names, a word that starts with a surname is one
    unless it is legal text, a common word of the genre or a place, and there a name found elsewhere in the document
    counts as one."""
    assert Deidentifier()(text).text == expected


def test_a_word_of_a_sentence_before_a_listed_name_is_no_name() -> None:
    """A word before a comma and a found name is a name only as it stands: a dictionary word with a particle or an
    ending after it (사안|에서, 부부|인데) closes a clause, however it starts, as a count does (400주이고); a name is still one."""
    for text in ("이혼을 구한 사안에서, 김보잴이 왔다.", "법률상 부부인데, 안여챈이 왔다.", "준거법은 민법인데, 김처텽이 왔다.",
                 "주식이 400주이고, 김처텽이 왔다."):  # nor a count
        name = text.rindex(", ") + 2
        assert coordinated_names(text, [(name, name + 3)]) == [], text
    for listed in ("최별겨", "김하은", "이수가"):
        text = f"증인 {listed}, 김보잴이 왔다."
        assert coordinated_names(text, [(text.index("김보잴"), text.index("김보잴") + 3)]) == [(3, 6)], text
