"""thunder.language.legal: the legal text of judgments and the published officials' names, found by text rules."""

from __future__ import annotations

import re

import pytest

from thunder.documents.annotation import iter_corpus
from thunder.language.legal import OFFICIAL_ROLES, STATUTES_FILE, TERMS_FILE, LegalText, official_names, read_lexicon


@pytest.fixture(scope="module")
def legal() -> LegalText:
    return LegalText()


def found(legal: LegalText, text: str, kind: str | None = None) -> list[str]:
    return [text[s.start : s.end] for s in legal.find(text) if kind is None or s.kind == kind]


def covered(legal: LegalText, text: str) -> str:
    """``text`` with every character of legal text replaced by ``#``."""
    chars = list(text)
    for span in legal.find(text):
        chars[span.start : span.end] = "#" * (span.end - span.start)
    return "".join(chars)


@pytest.mark.parametrize(
    "reference",
    ["제62조", "제62조의2", "제62조 의 2", "제38조 제1항 제2호", "제148조의2 제1항 제3호, 제44조 제1항", "제58조 제2항 본문",
     "제10조 제1항 전단", "제3조 제1항 후단", "제1항 제2호 가목", "같은 법 제10조", "같은 조 제2항", "동법 제5조",
     "(2003. 5. 29. 법률 제6916호로 개정되기 전의 것, 이하 같다)", "법률 제6916호", "대통령령 제18146호"],
)  # fmt: skip
def test_statute_references_of_every_shape(legal: LegalText, reference: str) -> None:
    text = f"그의 행위는 {reference}에 해당한다."
    assert covered(legal, text) == "그의 행위는 " + "#" * len(reference) + "에 해당한다."


@pytest.mark.parametrize(
    "act",
    ["형법", "민법", "도로교통법", "보호관찰 등에 관한 법률", "특정범죄 가중처벌 등에 관한 법률",
     "정보통신망이용촉진및정보보호등에관한법률", "아동ㆍ청소년의 성보호에 관한 법률", "아동·청소년의 성보호에 관한 법률",
     "집합건물의 소유 및 관리에 관한 법률", "주택법 시행령", "근로기준법 시행규칙", "특가법", "구 주택건설촉진법",
     "「문화예술진흥에 관한 법률」", "구 학교보건법"],
)  # fmt: skip
def test_listed_and_unlisted_acts(legal: LegalText, act: str) -> None:
    text = f"위 행위는 {act} 제3조에 따른다."
    assert covered(legal, text).startswith("위 행위는 " + "#" * len(act) + " ###")


def test_an_unlisted_act_is_found_by_its_shape_only() -> None:
    legal = LegalText()
    assert found(legal, "가상자산이용자보호법 제2조에 따라", "statute") == ["가상자산이용자보호법"]  # before an article
    assert found(legal, "피고인은 가상자산이용자보호법위반(시세조종)으로", "statute") == ["가상자산이용자보호법위반(시세조종)"]
    assert found(legal, "방법을 바꾸었다. 그 법은 좋다.", "statute") == []
    assert found(legal, "「만성동 도시개발사업」을 시행", "statute") == []  # 「」 around something that is not an act
    assert set(found(LegalText(["가상자산이용자보호법"]), "가상자산이용자보호법의 취지")) == {"가상자산이용자보호법"}


@pytest.mark.parametrize(
    "court",
    ["대법원", "서울고등법원", "서울중앙지방법원", "대구지방법원 안동지원", "서울가정법원", "서울행정법원", "특허법원",
     "서울회생법원", "수원지법 안산지원", "서울고등법원 (춘천재판부)", "고등군사법원", "서울중앙지방검찰청", "헌법재판소"],
)  # fmt: skip
def test_courts(legal: LegalText, court: str) -> None:
    assert court in found(legal, f"피고인은 {court}에서 재판을 받았다.", "court")


def test_precedents_exhibits_and_case_numbers(legal: LegalText) -> None:
    text = "대법원 2010. 1. 14. 선고 2009다67429 판결, [대법원 1983. 6. 28., 선고, 82누362, 판결] 참조"
    assert found(legal, text, "precedent") == ["대법원 2010. 1. 14. 선고 2009다67429 판결",
                                               "대법원 1983. 6. 28., 선고, 82누362, 판결"]  # fmt: skip
    exhibits = "갑 제1호증, 을 제2호증의 1, 갑 제1 내지 14호증, 을가 제3호증, 증 제2호의 각 기재"
    assert found(legal, exhibits, "exhibit") == ["갑 제1호증", "을 제2호증의 1", "갑 제1 내지 14호증", "을가 제3호증", "증 제2호"]
    assert found(legal, "사 건 2024고단3187 사기, 2023르10384 이혼", "case number") == ["2024고단3187", "2023르10384"]
    assert found(legal, "선고 98노1234 판결", "case number") == ["98노1234"]


@pytest.mark.parametrize(
    "identifier",
    ["12가3456", "서울12가3456", "101동 1203호", "제101동 제1203호", "2020년 3월", "010-1234-5678", "홍길동",
     "서울 강남구 테헤란로 123", "원고건설 주식회사", "이유진", "원고은"],
)  # fmt: skip
def test_identifiers_are_not_legal_text(legal: LegalText, identifier: str) -> None:
    text = f"그는 {identifier} 앞에서 보았다."
    flags = covered(legal, text)
    start = text.index(identifier)
    assert "#" not in flags[start : start + len(identifier)] or identifier in ("원고건설 주식회사",)
    if identifier == "원고건설 주식회사":  # a term inside a company's name is not a word of its own
        assert flags[start : start + len(identifier)] == identifier


def test_procedural_terms_start_a_word_and_end_it(legal: LegalText) -> None:
    text = "원고들은 원심판결에 대하여 입주자대표회의를 상대로 지연손해금과 하자보수비를 청구하였고, 원고은은 이유진과 위 반도 식당에서"
    assert found(legal, text, "procedural term") == ["원고", "원심판결", "입주자대표회의", "지연손해금", "하자보수비"]
    header = "피 고 인 홍길동\n주 문\n이 유\n판 결 선 고 2024. 10. 17.\n이 유리는 만났다."
    assert found(legal, header, "procedural term") == ["피 고 인", "주 문", "이 유", "판 결 선 고"]


def test_a_term_made_a_verb_is_still_a_term(legal: LegalText) -> None:
    text = "원고는 취득세를 감면받은 뒤 심판청구한 바 있고, 상표가 출원되었으며 부과처분은 경정시켰다. 감면세는 원고은과 출원소가"
    assert found(legal, text, "procedural term") == ["원고", "취득세", "감면", "심판청구", "상표", "출원", "부과처분", "경정"]


@pytest.mark.parametrize(
    ("text", "terms"),
    [("특허심판원은 확인대상발명이 통상의 기술자가 선행발명으로부터 쉽게 실시할 수 있다며 심판청구를 기각하는 심결을 하였다.",
      ["특허심판원", "확인대상발명", "통상의 기술자", "선행발명", "심판청구", "심결"]),
     ("등록상표와 선등록상표는 지정상품이 같고 호칭이 유사하여 일반 수요자에게 출처의 혼동을 일으킨다.",
      ["등록상표", "선등록상표", "지정상품", "호칭", "일반 수요자", "출처의 혼동"]),
     ("처분청은 그를 과점주주로 보아 제2차 납세의무자로 지정하고 취득세 부과처분을 한 뒤 경정청구를 거부하였다.",
      ["처분청", "과점주주", "제2차 납세의무자", "취득세", "부과처분", "경정청구"]),
     ("디자인 하우스 대표 홍길동은 한국특허정보원과 특허법인 한빛에 출원을 맡겼다.", ["출원"]),
     ("피고소인의 진술 중 개인식별정보와 비공개대상정보를 가리고, 법정상속분과 특별수익을 따졌다.",
      ["피고소인", "개인식별정보", "비공개대상정보", "법정상속분", "특별수익"]),
     ("피고인은 향정신성의약품 메트암페타민(이하 '필로폰'이라 한다)을 매수하고 마약김밥 가게에 갔다.",
      ["피고인", "향정신성의약품", "메트암페타민", "필로폰"])],
)  # fmt: skip
def test_the_vocabulary_of_each_kind_of_case(legal: LegalText, text: str, terms: list[str]) -> None:
    """The procedure and tests of patent, trademark, tax, disclosure, inheritance and narcotics cases are legal text;
    the bare 디자인, 특허 and 마약 that start or end trade names are not."""
    assert found(legal, text, "procedural term") == terms


def test_the_lexicons_are_whole() -> None:
    acts, terms = read_lexicon(STATUTES_FILE), read_lexicon(TERMS_FILE)
    assert len(acts) >= 500 and len(terms) >= 500
    for entries in (acts, terms):
        compact = [re.sub(r"[\s·ㆍ]", "", entry) for entry in entries]
        assert len(set(compact)) == len(compact), "an entry is listed twice"
    assert all(len(term.replace(" ", "")) >= 2 for term in terms), "a one-syllable term would match everywhere"


SIGNED = """변 호 인 변호사 문태경(국선)
변호인 법무법인 새솔 담당변호사 곽윤재, 안소민
검 사 윤서진(기소), 한지오(공판)
【군 검 사】 대위(진) 이연용(기소), 대위 장천수(공판)
원고 소송대리인 변호사 김용달
(소송대리인 법무법인(유한) 광장 외 1인)
소송수행자 윤도준, 한채이
피고인은 변호사 홍길동에게 돈을 주었다.
법정대리인 친권자 모 김영희
재판장 판사 표하랑
판사 최수겸
대법관 오성환(재판장) 정태균 윤일영(주심) 김덕주
"""


def test_official_names_on_the_lines_that_give_them() -> None:
    names = {role: [SIGNED[o.start : o.end] for o in official_names(SIGNED, [role]) if not o.firm]
             for role in OFFICIAL_ROLES}  # fmt: skip
    assert names["judge"] == ["표하랑", "최수겸", "오성환", "정태균", "윤일영", "김덕주"]
    assert names["prosecutor"] == ["윤서진", "한지오", "이연용", "장천수"]
    assert names["counsel"] == ["문태경", "곽윤재", "안소민", "김용달", "윤도준", "한채이"]  # not 홍길동 of the prose
    firms = [SIGNED[o.start : o.end] for o in official_names(SIGNED, OFFICIAL_ROLES) if o.firm]
    assert firms == ["새솔", "광장"]


@pytest.mark.shared_data
def test_the_corpus_gold_spans_are_almost_never_legal_text(shared_corpus) -> None:
    """Over the corpus's 4,000 facts paragraphs, the placeholders (identifiers) and legal text hardly meet: a few
    annotations of case numbers (사건번호) and 「…」 names; the model spans this would drop are that few."""
    legal = LegalText()
    placeholders = touched = 0
    for doc in iter_corpus(shared_corpus / "annotated", errors="skip"):
        spans = legal.find(doc.text)
        for p in doc.placeholders:
            placeholders += 1
            touched += any(s.start < p.end and p.start < s.end for s in spans)
    assert placeholders > 20_000 and touched / placeholders < 0.001, (touched, placeholders)
