"""Write Thunder's self-written demo corpus and demo mention lists into ``thunder/resources/demo/``.

Every sentence pattern and every mention word below was written for Thunder; nothing comes from the
SNU Thunder-DeID release. The output is reproducible: the same seed gives byte-identical files.

    python tools/make_demo_corpus.py                 # writes thunder/resources/demo/
    python tools/make_demo_corpus.py --docs-per-type 40 --seed 20240611 --out thunder/resources/demo
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "thunder" / "resources" / "demo"
CASE_TYPES = ("crime_of_violence", "fraud", "indecent_act_by_compulsion")

# --------------------------------------------------------------------------------------------------
# Placeholder rendering
# --------------------------------------------------------------------------------------------------

# particle written in its after-consonant form -> form after a vowel (longest first)
PARTICLES = (
    ("으로부터", "로부터"),
    ("으로서", "로서"),
    ("으로", "로"),
    ("이라는", "라는"),
    ("이라고", "라고"),
    ("이었다", "였다"),
    ("이며", "며"),
    ("이고", "고"),
    ("이다", "다"),
    ("이나", "나"),
    ("과", "와"),
    ("은", "는"),
    ("을", "를"),
    ("이", "가"),
)

# role -> label when a template uses the role without the document choosing a label for it
ROLE_LABELS = {
    "d2": "내국인이름", "v": "내국인이름", "v2": "내국인이름", "v3": "내국인이름", "w": "내국인이름",
    "w2": "내국인이름", "p": "내국인이름", "rrn": "주민등록번호", "phone": "전화번호", "phone2": "전화번호",
    "acct": "계좌번호", "acct2": "계좌번호", "card": "신용카드번호", "car": "차량번호", "car2": "차량번호",
    "email": "이메일주소", "id": "아이디", "nick": "닉네임", "co": "주식회사", "co2": "주식회사",
    "bank": "은행", "bank2": "은행", "sbank": "저축은행", "cardco": "카드회사", "hosp": "병원",
    "clinic": "의원", "apt": "아파트", "offi": "오피스텔", "villa": "빌라", "bldg": "빌딩",
    "stn": "지하철역", "park": "공원", "site": "사이트", "realtor": "공인중개사", "builder": "건설업체",
    "univ": "대학교", "hs": "고등학교", "ms": "중학교", "es": "초등학교", "fv": "중국인이름",
    "fv2": "베트남이름", "shop": "가게", "salon": "미용실",
}

# venue labels and the common noun a judgment writes after the placeholder
VENUES = {
    "노래방": "노래방", "주점": "주점", "한식당": "식당", "고깃집": "고깃집", "커피": "카페",
    "PC방": "PC방", "편의점": "편의점", "모텔": "모텔", "호텔": "호텔", "단란주점": "단란주점",
    "마트": "마트", "미용실": "미용실", "가게": "가게",
}

# upper address levels written before an "...아래주소" placeholder (public administrative names)
ADDRESS_UPPER = {
    "구아래주소": ("서울 강남구", "서울 마포구", "서울 송파구", "서울 관악구", "서울 노원구", "서울 영등포구",
               "서울특별시 중랑구", "부산 해운대구", "부산 사하구", "부산광역시 부산진구", "인천 남동구",
               "인천 부평구", "대구 수성구", "대구 달서구", "광주 북구", "광주광역시 광산구", "대전 서구",
               "대전 유성구", "울산 남구", "수원시 영통구", "수원시 팔달구", "성남시 분당구", "고양시 일산동구",
               "청주시 흥덕구", "전주시 완산구", "창원시 성산구", "안산시 단원구", "천안시 동남구", "포항시 북구"),
    "시아래주소": ("논산시", "김해시", "평택시", "경기 화성시", "경기 시흥시", "파주시", "의정부시", "원주시",
               "충북 충주시", "전남 여수시", "경북 구미시", "경남 양산시", "강원 춘천시", "세종특별자치시",
               "제주시", "익산시", "군산시", "아산시", "남양주시", "김포시"),
    "군아래주소": ("경남 창녕군", "충남 부여군", "전남 해남군", "경북 칠곡군", "강원 홍천군", "충북 음성군",
               "전북 완주군", "경기 양평군", "경기도 가평군", "경상북도 의성군", "전라남도 무안군"),
    "도아래주소": ("제주특별자치도", "경기도", "강원특별자치도", "충청남도"),
}
ADDRESS_WEIGHTS = (("구아래주소", 10), ("시아래주소", 6), ("군아래주소", 3), ("도아래주소", 1))


@dataclass
class Entity:
    label: str
    letter: str
    vowel_final: bool
    style: str = ""           # per-entity rendering choice (venue / company / address styles)
    upper: str = ""           # upper address levels


@dataclass
class Doc:
    """One document under construction: entities get letters in order of first appearance."""

    rng: random.Random
    roles: dict[str, str] = field(default_factory=dict)      # role -> label chosen for this document
    entities: dict[str, Entity] = field(default_factory=dict)
    next_index: int = 0

    def __post_init__(self) -> None:
        self.next_index = self.rng.choice((0, 0, 1))          # letter A sometimes stands for the defendant

    def _letter(self) -> str:
        index, self.next_index = self.next_index, self.next_index + 1
        letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
        return letters[index] if index < 26 else letters[index // 26 - 1] + letters[index % 26]

    def entity(self, role: str) -> Entity:
        if role not in self.entities:
            label = self.roles.get(role) or ROLE_LABELS[role]
            entity = Entity(label, self._letter(), self.rng.random() < 0.5)
            if label in VENUES:
                entity.style = self.rng.choices(("noun", "quoted", "inside", "bare"), (6, 3, 2, 1))[0]
                if entity.style == "inside" and not (label.endswith(VENUES[label]) and VENUES[label][0] > "~"):
                    entity.style = "noun"                      # "E모텔" only where the tag ends with the noun
            elif label == "주식회사":
                entity.style = self.rng.choices(("after", "before", "paren", "bare"), (4, 3, 2, 2))[0]
            elif label.endswith("아래주소"):
                entity.upper = self.rng.choice(ADDRESS_UPPER[label])
                if label == "구아래주소" and self.rng.random() < 0.06:
                    entity.label = "구이하주소"                # a suffix variant the corpus also uses
            self.entities[role] = entity
        return self.entities[role]

    def placeholder(self, role: str, form: str) -> tuple[str, bool]:
        """Placeholder text for a role and whether a following particle sees a vowel-final word."""
        e = self.entity(role)
        tag = e.label
        if tag.endswith(("아래주소", "이하주소")):
            return f"{e.upper} <<<{tag}>>>{e.letter}<<</{tag}>>>", e.vowel_final
        if form == "*":                                       # venue with its common noun / company with suffix
            if e.label in VENUES:
                noun = VENUES[e.label]
                if e.style == "inside":
                    return f"<<<{tag}>>>{e.letter}{noun}<<</{tag}>>>", _vowel_final(noun)
                if e.style == "quoted":
                    return f"'<<<{tag}>>>{e.letter}<<</{tag}>>>' {noun}", _vowel_final(noun)
                if e.style == "bare":
                    return f"<<<{tag}>>>{e.letter}<<</{tag}>>>", e.vowel_final
                return f"<<<{tag}>>>{e.letter}<<</{tag}>>> {noun}", _vowel_final(noun)
            if e.label == "주식회사":
                core = f"<<<{tag}>>>{e.letter}<<</{tag}>>>"
                if e.style == "after":
                    return f"{core} 주식회사", True
                if e.style == "before":
                    return f"주식회사 {core}", e.vowel_final
                if e.style == "paren":
                    return f"(주){core}", e.vowel_final
                return core, e.vowel_final
        return f"<<<{tag}>>>{e.letter}<<</{tag}>>>", e.vowel_final

    def render(self, template: str) -> str:
        """Fill ``{role}`` / ``{role*}`` slots; particles are written after-consonant and agree with the entity."""
        out: list[str] = []
        pos = 0
        for match in re.finditer(r"\{(\w+)(\*?)\}('|\([^(){}]*\))?", template):
            out.append(template[pos:match.start()])
            text, vowel = self.placeholder(match.group(1), match.group(2))
            out.append(text + (match.group(3) or ""))
            pos = match.end()
            for consonant_form, vowel_form in PARTICLES:
                if template.startswith(consonant_form, pos):
                    out.append(vowel_form if vowel else consonant_form)
                    pos += len(consonant_form)
                    break
        out.append(template[pos:])
        return "".join(out)


def _vowel_final(word: str) -> bool:
    code = ord(word[-1]) - 0xAC00
    return not (0 <= code < 11172 and code % 28)


# --------------------------------------------------------------------------------------------------
# Small generated facts: dates, money, courts, sentences
# --------------------------------------------------------------------------------------------------

COURTS = ("서울중앙지방법원", "서울동부지방법원", "서울남부지방법원", "서울북부지방법원", "서울서부지방법원",
          "의정부지방법원", "인천지방법원", "수원지방법원", "수원지방법원 성남지원", "춘천지방법원",
          "대전지방법원", "대전지방법원 천안지원", "청주지방법원", "대구지방법원", "대구지방법원 서부지원",
          "부산지방법원", "부산지방법원 동부지원", "울산지방법원", "창원지방법원", "창원지방법원 마산지원",
          "광주지방법원", "광주지방법원 순천지원", "전주지방법원", "제주지방법원")
PRIOR_CRIMES = ("사기죄", "상해죄", "폭행죄", "특수폭행죄", "특수상해죄", "업무방해죄", "재물손괴죄",
                "도로교통법위반(음주운전)죄", "강제추행죄", "공무집행방해죄", "전자금융거래법위반죄",
                "협박죄", "절도죄", "주거침입죄", "횡령죄")


def date(rng: random.Random, year: int, month: int | None = None, day: bool = True) -> str:
    m = month or rng.randint(1, 12)
    return f"{year}. {m}. {rng.randint(1, 28)}." if day else f"{year}. {m}."


def time(rng: random.Random) -> str:
    return f"{rng.randint(0, 23):02d}:{rng.choice((0, 0, 10, 20, 30, 40, 50, 5, 15, 45)):02d}경"


def when(rng: random.Random, year: int, month: int) -> str:
    roll = rng.random()
    if roll < 0.6:
        return f"{date(rng, year, month)} {time(rng)}"
    if roll < 0.8:
        return f"{date(rng, year, month)}경"
    return f"{date(rng, year, month, day=False)} {rng.choice(('초순', '중순', '하순', '일자불상'))}경"


def money(rng: random.Random, low: int = 10, high: int = 5000) -> str:
    """An amount between ``low`` and ``high`` ten-thousand won, written in one of the judgments' styles."""
    man = rng.randint(low, high)
    if rng.random() < 0.4 and man < 1000:
        return f"{man * 10000 + rng.choice((0, 0, 5000)):,}원"
    if man >= 10000:
        eok, rest = divmod(man, 10000)
        return f"{eok}억 {rest:,}만 원" if rest else f"{eok}억 원"
    return f"{man:,}만 원"


def age(rng: random.Random, low: int = 19, high: int = 70) -> str:
    return f"{rng.choice(('남', '여'))}, {rng.randint(low, high)}세"


def sentence_text(rng: random.Random, roll: float | None = None) -> str:
    """A sentence such as '징역 1년에 집행유예 2년을' (``roll`` in [0.35, 0.7) forces a suspended one)."""
    roll = rng.random() if roll is None else roll
    if roll < 0.35:
        return f"벌금 {rng.choice((100, 150, 200, 300, 500, 700, 1000))}만 원을"
    months = rng.choice(("6월", "8월", "10월", "1년", "1년 2월", "1년 6월", "2년"))
    if roll < 0.7:
        return f"징역 {months}에 집행유예 {rng.choice(('1년', '2년', '3년'))}을"
    return f"징역 {months}을"


# --------------------------------------------------------------------------------------------------
# Sentence patterns (all written for Thunder)
# --------------------------------------------------------------------------------------------------

HEADERS = ("범죄사실", "[범죄사실]", "범 죄 사 실", "", "", "")

PRIOR_RECORD = (
    "피고인은 {d} {court}에서 {crime}로 {sent} 선고받고 {d2} 그 판결이 확정되었다.",
    "피고인은 {d} {court}에서 {crime} 등으로 {sent} 선고받아 {d2} 그 형의 집행을 종료하였다.",
    "[범죄전력] 피고인은 {d} {court}에서 {crime}로 {sent} 선고받았고, 그 판결은 {d2} 확정되었다.",
    "피고인은 {d} {court}에서 {crime}로 {susp} 선고받고 현재 그 집행유예 기간 중에 있다.",
    "피고인은 {d} {court}에서 {crime}로 {sent} 선고받은 전력이 있다.",
    "1. 범죄전력\n피고인은 {d} {court}에서 {crime}로 {sent} 선고받고 {d2} 그 판결이 확정되었다.\n2. 범죄사실",
)

FRAUD_BACKGROUND = (
    "피고인은 {co*}의 영업부장으로 근무하던 사람이다.",
    "피고인은 피해자 {v}과 같은 동네에 살며 알고 지내던 사이이다.",
    "피고인은 {addr}에 있는 {place*}을 운영하던 사람으로, 별다른 재산 없이 수천만 원의 채무를 부담하고 있었다.",
    "피고인은 피해자 {v}의 고교 동창으로, 피해자와는 20년 가까이 친분을 유지해 왔다.",
    "피고인은 {realtor}에서 중개보조원으로 일하면서 피해자 {v}을 알게 되었다.",
    "피고인은 일정한 직업이 없고 신용불량 상태로 매월 이자를 갚기도 어려운 형편이었다.",
    "피고인과 {d2}은 인터넷 커뮤니티에서 알게 된 사이로, 함께 중고 물품 거래를 가장하여 돈을 가로채기로 공모하였다.",
    "피고인은 {builder}의 현장소장이라고 자신을 소개하며 피해자 {v}에게 접근하였다.",
)

FRAUD_SCHEMES = (
    (
        "피고인은 {t1} {addr}에 있는 {place*}에서 피해자 {v}에게 '사업 자금이 잠깐 부족하니 {m1}만 빌려주면 한 달 안에 이자를 붙여 틀림없이 갚겠다'라고 말하였다.",
        "그러나 사실 피고인은 다른 사람들에게 진 빚이 많아 피해자로부터 돈을 빌리더라도 약속한 기일에 이를 갚을 의사나 능력이 없었다.",
        "피고인은 이와 같이 피해자를 기망하여 이에 속은 피해자로부터 {t2} 피고인 명의의 {bank} 계좌({acct})로 {m1}을 송금받았다.",
    ),
    (
        "피고인은 {t1} 피해자 {v}에게 전화하여 '{co*}에 투자하면 매달 원금의 5퍼센트를 수익금으로 주고, 원금은 원하면 언제든지 돌려주겠다'라는 취지로 거짓말을 하였다.",
        "그러나 {co*}은 실제로 운영되는 사업이 없는 회사였고, 피고인은 피해자로부터 받은 돈을 개인 채무 변제와 생활비로 쓸 생각이었다.",
        "피고인은 위와 같이 피해자를 속여 {t2}경부터 {t3}경까지 모두 {n}회에 걸쳐 투자금 명목으로 합계 {m1}을 {bank}에 개설된 {co*} 명의 계좌({acct})로 송금받아 이를 편취하였다.",
    ),
    (
        "피고인은 {t1} 인터넷 중고거래 사이트인 '{site}'에 '아이폰 새 제품 판매'라는 제목으로 허위 판매글을 게시하였다.",
        "피고인은 위 글을 보고 연락해 온 피해자 {v}에게 휴대전화({phone})로 '물건 값을 먼저 보내 주면 바로 택배로 보내겠다'라는 문자메시지를 보냈다.",
        "그러나 피고인은 판매할 물건을 가지고 있지 않았으므로 대금을 받더라도 물건을 보내 줄 의사나 능력이 없었다.",
        "피고인은 이처럼 피해자를 기망하여 이에 속은 피해자로부터 같은 날 {bank} 계좌({acct})로 {m2}을 송금받아 편취하였다.",
    ),
    (
        "피고인은 {t1} {addr}에 있는 {place*}에서, 사실은 음식값을 지불할 의사나 능력이 없음에도 마치 정상적으로 대금을 치를 것처럼 행세하며 피해자 {v}에게 술과 안주를 주문하였다.",
        "피고인은 이에 속은 피해자로부터 그 자리에서 시가 합계 {m2} 상당의 술과 안주를 제공받아 재산상 이익을 취득하였다.",
    ),
    (
        "피고인은 {t1} {addr} 노상에서 피해자 {v}이 떨어뜨린 {cardco} 신용카드(카드번호 {card})를 주웠다.",
        "피고인은 같은 날 {t4} {addr2}에 있는 {place*}에서 위 신용카드를 마치 자신의 카드인 것처럼 제시하여 {m2} 상당의 물품을 구입하였다.",
        "피고인은 이를 비롯하여 그 무렵부터 {t3}까지 별지 범죄일람표 기재와 같이 모두 {n}회에 걸쳐 합계 {m1} 상당의 물품을 교부받아 편취하였다.",
    ),
    (
        "피고인은 {t1} 피해자 {v}에게 '{apt}아파트 {n}동 전세 계약을 맺어 주겠다, 보증금을 내 계좌로 보내면 집주인에게 바로 전달하겠다'라고 말하였다.",
        "그러나 피고인은 위 아파트 소유자로부터 임대차 계약 체결에 관한 권한을 위임받은 사실이 없었다.",
        "피고인은 이에 속은 피해자로부터 {t2} 전세보증금 명목으로 {m1}을 피고인의 처 {w} 명의 {bank} 계좌({acct})로 송금받아 편취하였다.",
    ),
    (
        "피고인은 {t1} 성명을 알 수 없는 전화금융사기 조직원으로부터 '저금리 대출을 해 주는 회사인데, 고객이 건네는 현금을 받아 지정하는 계좌로 보내 주면 수당을 주겠다'는 제안을 받고 이를 승낙하였다.",
        "위 조직원은 같은 날 피해자 {v}에게 전화하여 '{sbank} 직원인데, 기존 대출금을 현금으로 상환해야 저금리 대출이 가능하다'라고 거짓말을 하였다.",
        "피고인은 {t2} {stn} 앞에서 위와 같이 속은 피해자로부터 {m1}을 건네받아 이를 {bank2} 계좌({acct2})로 송금하였다.",
        "이로써 피고인은 성명불상의 조직원들과 공모하여 피해자를 기망하고 재물을 교부받았다.",
    ),
    (
        "피고인은 {t1} 피해자 {v}에게 '{co*}에 정규직으로 취업시켜 주겠다, 인사 담당자에게 인사비를 건네야 한다'라고 말하였다.",
        "그러나 피고인은 위 회사 인사 담당자를 알지 못하였고, 피해자를 취업시켜 줄 능력도 없었다.",
        "피고인은 그와 같이 피해자를 기망하여 {t2} {addr}에 있는 {place*}에서 현금 {m1}을 교부받아 편취하였다.",
    ),
    (
        "피고인은 {t1} 교통사고로 가벼운 염좌 진단을 받았음에도 {addr}에 있는 {hosp}에 입원하여 필요 이상으로 {n}일간 입원 치료를 받았다.",
        "피고인은 이를 근거로 피해자 {co*}에 보험금을 청구하여 {t2} 입원일당 등 명목으로 {m1}을 지급받았다.",
        "이로써 피고인은 피해자 회사를 기망하여 보험금을 편취하였다.",
    ),
    (
        "피고인은 {t1} {addr}에 있는 {place*}에 투숙하면서 카운터 직원인 피해자 {v}에게 '퇴실할 때 한꺼번에 숙박비를 계산하겠다'라고 말하였다.",
        "그러나 피고인은 당시 가진 돈이 없어 숙박비를 지급할 의사나 능력이 없었다.",
        "피고인은 이에 속은 피해자로부터 {t2}까지 {n}일간 객실을 제공받아 합계 {m2} 상당의 숙박 서비스를 제공받았다.",
    ),
    (
        "피고인은 {t1} 피해자 {v}에게 자신이 타던 {car} 그랜저 승용차를 {m1}에 팔겠다고 제안하였다.",
        "그러나 위 차량은 이미 {cardco}에 담보로 제공되어 있었고, 피고인은 차량을 넘겨줄 생각이 없었다.",
        "피고인은 그럼에도 피해자로부터 {t2} 계약금 명목으로 {m2}을 {bank} 계좌({acct})로 받아 이를 편취하였다.",
    ),
    (
        "피고인은 {t1} 인스타그램 메시지로 알게 된 피해자 {v}에게 아이디 '{id}'을 사용하여 '해외 코인 거래소에서 단기간에 큰 수익을 낼 수 있다'라는 메시지를 보냈다.",
        "피고인은 피해자가 관심을 보이자 이메일({email})로 가짜 수익 인증 자료를 보내며 투자를 권유하였다.",
        "피고인은 이에 속은 피해자로부터 {t2}경부터 {t3}경까지 {n}회에 걸쳐 합계 {m1}을 {w} 명의 {bank} 계좌({acct})로 송금받았다.",
    ),
)

EXTRA_FRAUD_SCHEMES = (
    (
        "피고인은 {t1} 피해자 {v}의 주민등록번호({rrn})와 휴대전화 번호를 알게 된 것을 기화로, 피해자 명의로 {sbank}에 비대면 대출을 신청하였다.",
        "피고인은 대출 심사 과정에서 피해자 본인인 것처럼 행세하며 신분증 사본과 함께 피해자 명의의 {bank} 계좌({acct})를 입금 계좌로 지정하였다.",
        "피고인은 이와 같이 {sbank} 담당 직원을 기망하여 {t2} {m1}을 대출받아 편취하였다.",
    ),
    (
        "피고인은 {t1} {addr}에 있는 {place*}에서 피해자 {v}으로부터 건네받은 {cardco} 체크카드(카드번호 {card})를 돌려주지 않고 그대로 가지고 있었다.",
        "피고인은 {t2}경부터 {t3}경까지 위 체크카드를 이용하여 {site} 등 인터넷 쇼핑몰에서 {n}회에 걸쳐 합계 {m1} 상당의 상품을 결제하였다.",
        "피고인은 위 상품을 자신의 이메일({email})로 주문 내역을 받아 본 뒤 중고로 처분하였다.",
    ),
)

FRAUD_CLOSINGS = (
    "피고인은 편취한 돈을 대부분 도박 자금과 생활비로 사용하였다.",
    "피해자 {v}은 현재까지 피해를 회복하지 못하였다.",
    "",
    "",
    "피고인은 이후 피해자 {v}의 반환 요구에도 연락을 끊고 주소를 옮겼다.",
    "피해자 {v}은 피고인과 연락이 닿지 않자 {t5} 경찰에 고소장을 제출하였다.",
)

GENERIC_EXTRAS = (
    "피고인은 {t5} 피해자 {v}의 휴대전화({phone})로 수십 차례 전화를 걸어 합의를 종용하였다.",
    "피고인은 범행 당시 지인 {w2} 명의로 개통된 휴대전화({phone2})를 사용하였다.",
    "피고인은 수사기관에서 자신을 {w2}이라고 사칭하면서 그의 주민등록번호 {rrn}을 불러 주었다.",
    "피고인은 범행 후 {car2} 승용차를 타고 {addr2} 방향으로 달아났다.",
    "피해자 {v}은 같은 날 {police}에 피해 사실을 신고하였다.",
    "피고인은 범행 전날에도 {place2*}에서 술을 마신 것으로 확인되었다.",
    "피고인은 {t5} 피해자 {v}에게 사과의 뜻을 담은 이메일({email})을 보냈으나 피해자는 이를 받아들이지 않았다.",
    "피해자 {v}은 당시 {co2*}에 다니던 회사원으로, 퇴근하던 길이었다.",
    "피고인은 {addr2}에 있는 {villa}빌라 {n}0{n}호에서 혼자 살고 있었다.",
)

VIOLENCE_BACKGROUND = (
    "피고인과 피해자 {v}은 {apt}아파트 같은 동에 사는 이웃으로, 평소 층간소음 문제로 다툼이 잦았다.",
    "피고인은 피해자 {v}과 {co*}에서 함께 근무하는 동료 사이이다.",
    "피고인은 {addr}에 있는 {place*}의 손님이고, 피해자 {v}은 그 업소의 종업원이다.",
    "피고인은 피해자 {v}과 약 2년간 교제하다가 {t5} 헤어진 사이이다.",
    "피고인은 택시 기사인 피해자 {v}과 요금 문제로 말다툼을 하던 중이었다.",
    "피해자 {v}은 피고인의 아버지이고, 피해자 {v2}은 피고인의 어머니이다.",
    "피고인은 술에 취하면 주변 사람에게 시비를 거는 습관이 있는 사람이다.",
    "피고인은 {hs}을 졸업한 후 일정한 직업 없이 지내던 사람이다.",
)

VIOLENCE_ACTS = (
    (
        "피고인은 {t1} {addr}에 있는 {place*}에서 피해자 {v}({age})이 자신을 쳐다본다는 이유로 시비를 걸다가, 주먹으로 피해자의 얼굴을 {n}회 때리고 발로 옆구리를 걷어찼다.",
        "피고인은 이로써 피해자에게 약 {w_weeks}주간의 치료가 필요한 비골 골절 등의 상해를 가하였다.",
    ),
    (
        "피고인은 {t1} {addr} 앞 도로에서, 피해자 {v}이 운전하는 {car} 차량이 자신의 차량 앞으로 끼어들었다는 이유로 화가 나 피해자의 차량을 가로막고 멈춰 세웠다.",
        "피고인은 차에서 내려 피해자에게 욕설을 하면서 손바닥으로 피해자의 뺨을 {n}회 때리고 멱살을 잡아 흔들어 폭행하였다.",
    ),
    (
        "피고인은 {t1} {addr}에 있는 피해자 {v}의 주거지에서, 피해자가 헤어지자고 한다는 이유로 부엌에 있던 위험한 물건인 식칼(총 길이 약 30cm)을 들고 피해자에게 '같이 죽자'라고 말하였다.",
        "이로써 피고인은 위험한 물건을 휴대하여 피해자를 협박하였다.",
    ),
    (
        "피고인은 {t1} {addr}에 있는 {place*} 앞에서 술에 취해 행패를 부리다가, 신고를 받고 출동한 {police} 소속 경위 {p}이 귀가를 권유하자 '니가 뭔데 나한테 명령하냐'라고 욕설을 하며 경찰관의 가슴을 양손으로 밀쳤다.",
        "이로써 피고인은 경찰관의 112 신고 처리에 관한 정당한 직무집행을 방해하였다.",
    ),
    (
        "피고인은 {t1}부터 {t4}까지 {addr}에 있는 피해자 {v}이 운영하는 {place*}에서, 술값 계산 문제로 큰소리를 지르고 의자를 집어 던지는 등 약 {n}0분간 소란을 피웠다.",
        "피고인은 이와 같이 위력으로써 피해자의 영업 업무를 방해하였다.",
    ),
    (
        "피고인은 {t1} 피해자 {v}의 휴대전화({phone})로 '돈을 갚지 않으면 너희 가족을 가만두지 않겠다'라는 내용의 문자메시지를 {n}회에 걸쳐 보냈다.",
        "이로써 피고인은 피해자를 협박하였다.",
    ),
    (
        "피고인은 {t1} {addr} 주차장에서, 피해자 {v} 소유의 {car} 벤츠 승용차가 자신의 차량 출입을 막고 있다는 이유로 화가 나 열쇠로 위 차량의 운전석 문과 보닛을 긁었다.",
        "이로써 피고인은 수리비 {m2} 상당이 들도록 피해자의 재물을 손괴하였다.",
    ),
    (
        "피고인은 {t1} {addr}에 있는 {apt}아파트 {n}동 현관 앞에서, 피해자 {v}({age})이 층간소음에 항의하였다는 이유로 피해자의 머리채를 잡아 바닥에 넘어뜨리고 발로 수회 밟았다.",
        "결국 피고인은 피해자에게 {hosp}에서 약 {w_weeks}주간의 치료가 필요한 요추 염좌 등의 상해를 입게 하였다.",
    ),
    (
        "피고인은 {t1} {stn} 승강장에서 어깨가 부딪쳤다는 이유로 피해자 {v}({age})과 말다툼을 하다가, 들고 있던 우산으로 피해자의 팔과 어깨를 {n}회 내리쳤다.",
        "이로써 피고인은 위험한 물건인 우산을 휴대하여 피해자를 폭행하였다.",
    ),
    (
        "피고인은 {t1} {car} 택시에 승객으로 탑승하여 {addr} 부근 도로를 지나던 중, 운전 중인 피해자 {v}이 목적지를 잘못 알아들었다는 이유로 뒷좌석에서 피해자의 뒤통수를 손으로 {n}회 때렸다.",
        "이로써 피고인은 운행 중인 자동차의 운전자를 폭행하였다.",
    ),
    (
        "피고인은 {t1} {addr}에 있는 {place*}에서 함께 술을 마시던 피해자 {v}과 피해자 {v2}이 자신을 무시한다는 이유로 화가 나, 맥주병으로 피해자 {v}의 머리를 1회 내리쳤다.",
        "피고인은 이를 말리던 피해자 {v2}의 얼굴을 주먹으로 {n}회 때려 피해자 {v2}에게 약 {w_weeks}주간의 치료가 필요한 안면부 타박상을 가하였다.",
    ),
    (
        "피고인은 {t1} {addr}에 있는 {co*} 사무실에서, 밀린 임금을 달라며 찾아온 피해자 {fv}({age})과 말다툼을 하던 중 피해자를 벽 쪽으로 밀쳐 넘어뜨렸다.",
        "이로 인하여 피해자는 {clinic}에서 약 {w_weeks}주간의 치료가 필요한 손목 염좌를 입었다.",
    ),
    (
        "피고인은 {t1} {park} 산책로에서 피해자 {v}이 데리고 나온 개가 자신을 보고 짖는다는 이유로 피해자와 시비가 붙었다.",
        "피고인은 피해자의 목을 한 손으로 움켜쥐고 약 1분간 놓아주지 않아 피해자를 폭행하였다.",
    ),
)

VIOLENCE_CLOSINGS = (
    "",
    "",
    "피해자 {v}은 사건 직후 {hosp} 응급실로 이송되었다.",
    "피고인은 범행 직후 현장에서 도주하였다가 {t5} 주거지에서 체포되었다.",
    "피고인은 당시 목격자인 {w}의 제지로 범행을 멈추었다.",
    "피고인의 범행 장면은 {bldg} 건물 입구에 설치된 CCTV에 녹화되었다.",
)

INDECENT_BACKGROUND = (
    "피고인은 {co*}의 팀장이고, 피해자 {v}({age})은 같은 팀에서 일하는 신입 사원이다.",
    "피고인은 {addr}에 있는 {place*}의 업주이고, 피해자 {v}은 그곳 아르바이트생이다.",
    "피고인은 {univ} 동아리 선배로서 피해자 {v}과 알게 되었다.",
    "피고인은 {hs} 체육 교사로, 피해자 {v}은 위 학교에 재학 중인 학생이다.",
    "피고인은 랜덤채팅 애플리케이션에서 닉네임 '{nick}'을 사용하며 피해자 {v}과 대화를 나누던 사람이다.",
    "피고인은 {salon}에서 일하는 미용사이고, 피해자 {v}은 그 가게의 손님이다.",
    "피고인은 피해자 {v}의 직장 상사로, 피해자와는 업무상 자주 연락하는 사이였다.",
)

INDECENT_ACTS = (
    (
        "피고인은 {t1} {addr}에 있는 {place*}에서 회식을 하던 중 옆자리에 앉은 피해자 {v}의 허벅지를 손으로 쓰다듬고, 피해자가 자리를 옮기자 따라가 어깨를 감싸 안았다.",
        "이로써 피고인은 피해자를 강제로 추행하였다.",
    ),
    (
        "피고인은 {t1} {stn}을 지나는 지하철 전동차 안에서 승객이 많아 혼잡한 틈을 이용하여 피해자 {v}({age})의 뒤에 밀착한 뒤 손으로 피해자의 엉덩이를 만졌다.",
        "이로써 피고인은 공중이 밀집하는 장소에서 피해자를 추행하였다.",
    ),
    (
        "피고인은 {t1} {addr}에 있는 {place*} 안에서 피해자 {v}과 단둘이 남게 되자, 갑자기 피해자를 끌어안고 입을 맞추려 하였다.",
        "피해자가 이를 거부하며 밀쳐내자 피고인은 다시 피해자의 손목을 잡아 끌어당기며 가슴을 만졌다.",
        "이로써 피고인은 피해자를 강제로 추행하였다.",
    ),
    (
        "피고인은 {t1} {addr}에 있는 {offi}오피스텔 {n}0{n}호 피해자 {v}의 주거지에서, 술에 취해 잠든 피해자의 옷 속으로 손을 넣어 가슴을 만졌다.",
        "이로써 피고인은 피해자의 항거불능 상태를 이용하여 피해자를 추행하였다.",
    ),
    (
        "피고인은 {t1} 아이디 '{id}'을 이용하여 피해자 {v}에게 성적 수치심을 일으키는 사진과 메시지를 {n}회에 걸쳐 보냈다.",
        "이로써 피고인은 자기의 성적 욕망을 만족시킬 목적으로 통신매체를 통하여 성적 수치심을 일으키는 글과 그림을 상대방에게 도달하게 하였다.",
    ),
    (
        "피고인은 {t1} {car} 승용차를 운전하여 피해자 {v}을 집 앞까지 데려다주던 중, {addr} 부근 도로에 차를 세우고 조수석에 앉은 피해자의 허벅지를 만지고 피해자에게 입을 맞추었다.",
        "이로써 피고인은 피해자를 강제로 추행하였다.",
    ),
    (
        "피고인은 {t1} {addr}에 있는 {place*}에서 일하던 피해자 {v}({age})에게 다가가 '예쁘다'라고 말하며 갑자기 피해자의 허리를 감싸 안았다.",
        "피고인은 피해자가 몸을 빼자 다시 피해자의 엉덩이를 손바닥으로 {n}회 쳤다.",
    ),
    (
        "피고인은 {t1} {univ} 축제 기간 중 교내 주점에서 술을 마시던 피해자 {v}에게 다가가, 피해자의 어깨에 팔을 두르고 귀에 입김을 불어넣었다.",
        "이로써 피고인은 피해자를 강제로 추행하였다.",
    ),
    (
        "피고인은 {t1} {hs} 체육관 창고에서, 수업 준비물을 정리하던 피해자 {v}(여, 16세)의 등 뒤로 다가가 피해자를 껴안고 가슴을 만졌다.",
        "이로써 피고인은 아동·청소년인 피해자를 강제로 추행하였다.",
    ),
    (
        "피고인은 {t1} {addr}에 있는 {place*}에서, 머리를 감겨 주던 미용사인 피해자 {v}의 손목을 잡아 자신의 허벅지 쪽으로 끌어당겼다.",
        "피고인은 피해자가 놀라 손을 빼려 하자 '가만히 있어'라고 말하며 약 10초간 손을 놓아주지 않았다.",
    ),
    (
        "피고인은 {t1} {park} 벤치에 앉아 있던 피해자 {fv2}({age})에게 다가가 길을 묻는 척하다가 갑자기 피해자의 가슴을 움켜쥐었다.",
        "이로써 피고인은 피해자를 강제로 추행하였다.",
    ),
    (
        "피고인은 {t1} 피해자 {v}에게 전화({phone})를 걸어 회의 자료를 가지러 오라고 하고, 피해자가 {bldg} {n}층 사무실에 들어오자 문을 잠근 뒤 피해자를 벽으로 밀어붙이고 입을 맞추었다.",
        "이로써 피고인은 위력으로 피해자를 추행하였다.",
    ),
)

INDECENT_CLOSINGS = (
    "",
    "",
    "피해자 {v}은 범행 직후 친구인 {w}에게 피해 사실을 알리고 함께 경찰서를 찾아갔다.",
    "피고인은 수사기관에서 피해자의 신체에 손이 닿은 사실은 있으나 고의는 없었다고 주장하였다.",
    "피해자 {v}은 범행 이후 {clinic}에서 불안 증세로 치료를 받고 있다.",
)

SECOND_COUNT_PREFIX = ("2. 피해자 {v3}에 대한 범행", "나. 피해자 {v3}에 대한 사기", "[{t6date} 범행]")
SECOND_COUNT = {
    "fraud": (
        "피고인은 {t6} 피해자 {v3}에게 '급한 병원비가 필요하니 {m3}만 빌려 달라'라고 거짓말하여 이에 속은 피해자로부터 같은 날 {bank} 계좌({acct})로 {m3}을 송금받아 편취하였다.",
        "피고인은 {t6} 같은 방법으로 피해자 {v3}으로부터 {m3}을 교부받아 편취하였다.",
    ),
    "crime_of_violence": (
        "피고인은 {t6} 위 장소에서 피고인을 말리던 피해자 {v3}의 가슴을 주먹으로 {n}회 때려 폭행하였다.",
        "피고인은 {t6} 피해자 {v3}의 주거지인 {addr2} 현관문을 발로 수회 걷어차 피해자를 위협하였다.",
    ),
    "indecent_act_by_compulsion": (
        "피고인은 {t6} 같은 장소에서 피해자 {v3}의 엉덩이를 손으로 만져 피해자를 강제로 추행하였다.",
        "피고인은 {t6} {addr2}에 있는 노래연습장 복도에서 피해자 {v3}을 뒤에서 껴안아 강제로 추행하였다.",
    ),
}
SECOND_COUNT_PREFIX_OK = {"fraud": (0, 1, 2), "crime_of_violence": (0, 2), "indecent_act_by_compulsion": (0, 2)}

CO_DEFENDANT = (
    "[피고인 {d2}]",
    "피고인 {d2}은 피고인과 함께 범행을 계획하고 범행 현장에서 망을 보았다.",
    "피고인 {d2}은 피고인의 지시에 따라 피해자에게 연락하는 역할을 맡았다.",
)

POLICE = ("서울강남경찰서", "부산해운대경찰서", "인천남동경찰서", "수원영통경찰서", "대구수성경찰서", "광주북부경찰서")

SCHEMES = {
    "fraud": (FRAUD_BACKGROUND, FRAUD_SCHEMES, FRAUD_CLOSINGS),
    "crime_of_violence": (VIOLENCE_BACKGROUND, VIOLENCE_ACTS, VIOLENCE_CLOSINGS),
    "indecent_act_by_compulsion": (INDECENT_BACKGROUND, INDECENT_ACTS, INDECENT_CLOSINGS),
}


def make_document(case_type: str, rng: random.Random) -> str:
    """One judgment-style excerpt for ``case_type`` (placeholders in the shared corpus's format)."""
    doc = Doc(rng)
    doc.roles["place"] = rng.choice(sorted(VENUES))
    doc.roles["place2"] = rng.choice(sorted(VENUES))
    doc.roles["addr"] = rng.choices([a for a, _ in ADDRESS_WEIGHTS], [w for _, w in ADDRESS_WEIGHTS])[0]
    doc.roles["addr2"] = rng.choices([a for a, _ in ADDRESS_WEIGHTS], [w for _, w in ADDRESS_WEIGHTS])[0]
    doc.roles["hs"] = rng.choice(("고등학교", "중학교"))
    doc.roles["fv"] = rng.choice(("중국인이름", "베트남이름"))
    doc.roles["fv2"] = rng.choice(("중국인이름", "베트남이름"))
    doc.roles["hosp"] = rng.choice(("병원", "병원", "의원"))
    year = rng.randint(2016, 2023)
    m1, m2, m6 = sorted(rng.sample(range(1, 13), 3))      # events of the year in order
    n1, n2 = sorted(rng.sample(range(1, 13), 2))           # later events, next year
    t6date = date(rng, year, m6)
    facts = {
        "t1": when(rng, year, m1), "t2": date(rng, year, m2), "t3": date(rng, year + 1, n1), "t4": time(rng),
        "t5": date(rng, year + 1, n2), "t6": f"{t6date} {time(rng)}", "t6date": t6date,
        "m1": money(rng, 100, 20000), "m2": money(rng, 5, 300), "m3": money(rng, 30, 3000),
        "n": str(rng.randint(2, 9)), "w_weeks": str(rng.randint(2, 8)), "age": age(rng),
        "police": rng.choice(POLICE),
    }
    background, acts, closings = SCHEMES[case_type]
    lines: list[str] = []
    header = rng.choice(HEADERS)
    if rng.random() < 0.45:
        record_year = year - rng.randint(1, 4)
        record = rng.choice(PRIOR_RECORD)
        sentenced, final = sorted(rng.sample(range(1, 13), 2))
        lines.append(record.format(d=date(rng, record_year, sentenced), d2=date(rng, record_year, final),
                                   court=rng.choice(COURTS),
                                   crime=rng.choice(PRIOR_CRIMES), sent=sentence_text(rng),
                                   susp=sentence_text(rng, 0.5)))
    if header and not any(line.endswith("범죄사실") for line in lines):
        lines.append(header)
    if rng.random() < 0.15:
        lines.append(rng.choice(CO_DEFENDANT))
    for sentence in rng.sample(background, rng.choice((0, 1, 1))):
        lines.append(sentence)
    scheme_pool = acts + EXTRA_FRAUD_SCHEMES if case_type == "fraud" else acts
    lines.extend(rng.choice(scheme_pool))
    for sentence in rng.sample(GENERIC_EXTRAS, rng.choice((0, 1, 1, 2))):
        lines.append(sentence)
    if rng.random() < 0.4:
        prefix_index = rng.choice(SECOND_COUNT_PREFIX_OK[case_type])
        if rng.random() < 0.6:
            lines.append(SECOND_COUNT_PREFIX[prefix_index])
        lines.append(rng.choice(SECOND_COUNT[case_type]))
    closing = rng.choice(closings)
    if closing:
        lines.append(closing)
    text = "\n".join(_fill(doc, line, facts, rng) for line in lines)
    return text + "\n"


def _fill(doc: Doc, template: str, facts: dict[str, str], rng: random.Random) -> str:
    """Substitute plain facts (dates, money, ...) first, then render entity slots."""
    def fact(match: re.Match[str]) -> str:
        key = match.group(1)
        if key in facts:
            return facts[key]
        if key == "age":
            return age(rng)
        return match.group(0)
    template = re.sub(r"\{(\w+)\}", fact, template)
    return doc.render(template)


# --------------------------------------------------------------------------------------------------
# Mention lists (invented names; public administrative region names)
# --------------------------------------------------------------------------------------------------

STEMS = ("한빛", "푸른솔", "새봄", "다온", "해오름", "청솔", "늘품", "가온", "동방", "대성", "삼화", "세진", "우성",
         "태평", "금강", "백두", "한결", "온누리", "바른", "하늘", "은하", "별빛", "솔내음", "소담", "도담", "라온",
         "누리", "정담", "옛골", "명가", "황금", "진주", "보람", "초록", "들꽃", "햇살", "달빛", "아람", "나래",
         "다솜", "미소", "한마음", "그린", "블루", "스카이", "골드", "로얄", "센트럴", "리버", "오션", "해담",
         "윤슬", "모아", "큰숲", "청맥", "참빛", "성원", "동해", "서해", "남산", "북악", "한강", "낙동", "금빛")
ENGLISH = ("K", "JS", "HN", "ONE", "MIRAE", "NEO", "STAR", "ACE", "PRIME", "DH", "HS", "SJ", "BLUE", "NEW")
PLACE_WORDS = ("중앙", "역전", "시청앞", "시장", "먹자골목", "신도시", "중부", "동부", "남부", "북부", "본점", "2호점")
INDUSTRY = ("상사", "물산", "산업", "테크", "건설", "개발", "유통", "푸드", "엔지니어링", "통상", "전자", "화학",
            "인터내셔널", "네트웍스", "솔루션", "에너지", "종합건설", "코퍼레이션", "바이오", "F&B", "모빌리티")
APT_BRANDS = ("파크빌", "하이츠", "리버뷰", "센트럴시티", "그린타운", "해피트리", "스카이뷰", "드림빌", "한마을",
              "주공", "신도브래뉴", "참좋은", "가든", "포레스트", "더샵원", "골드클래스")
REGIONS = {
    # 행정구군시읍면동: public administrative division names (Statistics Korea / MOIS lists are public facts)
    "행정시": ["수원시", "성남시", "고양시", "용인시", "부천시", "안산시", "안양시", "남양주시", "화성시", "평택시",
            "의정부시", "시흥시", "파주시", "김포시", "광명시", "춘천시", "원주시", "강릉시", "청주시", "충주시",
            "천안시", "아산시", "논산시", "전주시", "익산시", "군산시", "목포시", "여수시", "순천시", "포항시",
            "구미시", "경주시", "안동시", "창원시", "김해시", "진주시", "양산시", "거제시", "제주시", "서귀포시"],
    "행정군": ["가평군", "양평군", "연천군", "홍천군", "횡성군", "평창군", "정선군", "음성군", "진천군", "괴산군",
            "부여군", "서천군", "예산군", "홍성군", "완주군", "고창군", "부안군", "해남군", "무안군", "담양군",
            "보성군", "칠곡군", "의성군", "청도군", "울진군", "창녕군", "함안군", "거창군", "남해군", "기장군"],
    "행정구": ["종로구", "중구", "용산구", "성동구", "광진구", "동대문구", "중랑구", "성북구", "강북구", "도봉구",
            "노원구", "은평구", "서대문구", "마포구", "양천구", "강서구", "구로구", "금천구", "영등포구", "동작구",
            "관악구", "서초구", "강남구", "송파구", "강동구", "해운대구", "부산진구", "사하구", "수영구", "남동구",
            "부평구", "연수구", "수성구", "달서구", "광산구", "유성구", "영통구", "분당구", "일산동구", "흥덕구"],
    "행정읍": ["봉담읍", "남양읍", "오포읍", "진접읍", "화도읍", "와부읍", "문막읍", "홍천읍", "음성읍", "진천읍",
            "부여읍", "홍성읍", "예산읍", "봉동읍", "고창읍", "해남읍", "무안읍", "왜관읍", "창녕읍", "기장읍"],
    "행정면": ["서종면", "청평면", "설악면", "내면", "서면", "북면", "남면", "동면", "금왕면", "덕산면", "규암면",
            "임천면", "광시면", "소양면", "운주면", "상하면", "송지면", "청계면", "지천면", "영산면", "칠원면",
            "가조면", "삼동면", "정관면", "일광면"],
    "행정동": ["역삼동", "삼성동", "대치동", "서교동", "합정동", "망원동", "잠실동", "문정동", "신림동", "봉천동",
            "상계동", "중계동", "여의도동", "당산동", "면목동", "우동", "좌동", "괴정동", "전포동", "구월동",
            "간석동", "부평동", "범어동", "만촌동", "운암동", "일곡동", "둔산동", "봉명동", "삼산동", "달동",
            "매탄동", "영통동", "정자동", "서현동", "장항동", "복대동", "가경동", "효자동", "상남동", "고잔동",
            "신부동", "쌍용동", "장성동", "양덕동", "내동", "외동", "연동", "노형동", "이도동", "아라동"],
}
CHINESE_SURNAMES = ("왕", "리", "장", "류", "천", "양", "자오", "황", "저우", "우", "쉬", "쑨", "마", "주", "후", "궈")
CHINESE_GIVEN = ("웨이", "팡", "리나", "민", "징", "레이", "타오", "쥔", "옌", "하오", "신이", "즈강", "샤오린",
                 "위밍", "춘화", "덩펑", "칭", "보원")
VIET_SURNAMES = ("응우옌", "쩐", "레", "팜", "호앙", "판", "부", "당", "부이", "도", "응오", "즈엉")
VIET_MIDDLE = ("반", "티", "득", "꽝", "민", "타인", "후")
VIET_GIVEN = ("안", "흐엉", "린", "남", "뚜언", "호아", "투", "중", "푸옹", "바오", "하", "롱", "짱", "끄엉")
ID_WORDS = ("sky", "moon", "blue", "happy", "lucky", "star", "tiger", "haru", "dream", "coco", "mint", "rain",
            "sunny", "king", "angel", "bear", "jjang", "hana", "duri", "nabi")
NICK_WORDS = ("달빛소년", "새벽별", "밤하늘", "행복한곰", "고독한늑대", "딸기우유", "초코칩", "바람개비", "파란고래",
              "노을빛", "꼬마마법사", "무지개", "여름바다", "겨울나무", "시골청년", "도시남자", "커피한잔",
              "구름빵", "작은새", "호랑나비", "민트향기", "새싹", "푸른하늘", "별똥별", "햇살가득")
EMAIL_DOMAINS = ("example.com", "example.kr", "mail.example.net", "demo-mail.kr", "testmail.co.kr")


def _stem_names(rng: random.Random, patterns: tuple[str, ...], count: int) -> list[str]:
    """``count`` distinct names from patterns using {s} (stem), {e} (English), {p} (place word), {i} (industry)."""
    names: set[str] = set()
    while len(names) < count:
        pattern = rng.choice(patterns)
        names.add(pattern.format(s=rng.choice(STEMS), e=rng.choice(ENGLISH), p=rng.choice(PLACE_WORDS),
                                 i=rng.choice(INDUSTRY), b=rng.choice(APT_BRANDS), n=rng.randint(1, 9),
                                 g=rng.choice([d for d in REGIONS["행정동"] if len(d) > 2])[:-1]))
    return sorted(names)


# label -> (mentions path relative to mentions/, name patterns, how many)
LIST_LABELS = {
    "주식회사": ("사업체/기업일반/주식회사.json", ("{s}{i}", "{e}{i}", "{s}{e}", "{g}{i}", "{s}"), 60),
    "건설업체": ("사업체/건설/건설업체.json", ("{s}건설", "{s}종합건설", "{e}건설", "{g}토건", "{s}건업"), 30),
    "은행": ("사업체/금융/은행.json", None, 0),
    "저축은행": ("사업체/금융/저축은행.json", ("{s}저축은행", "{g}저축은행", "{e}저축은행"), 25),
    "카드회사": ("사업체/금융/카드회사.json", ("{s}카드", "{e}카드", "{s}페이카드"), 20),
    "모텔": ("사업체/숙박업/모텔.json", ("{s}모텔", "{s} 모텔", "{e}모텔", "{g}모텔", "모텔 {s}"), 40),
    "호텔": ("사업체/숙박업/호텔.json", ("{s}호텔", "호텔 {s}", "{e} 호텔", "{g}관광호텔", "{s}비즈니스호텔"), 30),
    "한식당": ("사업체/외식업/한식당.json", ("{s}식당", "{s}밥상", "{g}할매국밥", "{s}한정식", "{s}집밥", "{g}기사식당"), 45),
    "고깃집": ("사업체/외식업/고깃집.json", ("{s}갈비", "{s}숯불구이", "{g}삼겹살", "{s}한우", "{s}고기집", "{s}정육식당"), 40),
    "주점": ("사업체/외식업/주점.json", ("{s}포차", "{s}호프", "{s}실내포장마차", "{g}이자카야", "{s}술집", "{s} 펍"), 40),
    "커피": ("사업체/외식업/커피.json", ("{s}커피", "카페 {s}", "{e} COFFEE", "{s}로스터리", "{g}다방"), 35),
    "노래방": ("사업체/오락및스포츠/노래방.json", ("{s}노래방", "{s}코인노래방", "{e}노래연습장", "{s}노래타운"), 30),
    "PC방": ("사업체/오락및스포츠/PC방.json", ("{s}PC방", "{e} PC카페", "{s}피시방", "{g}PC존"), 25),
    "편의점": ("사업체/도소매및유통/편의점.json", ("{s}마트24 {g}점", "{e}25 {g}점", "{s}편의점", "데일리{s} {g}점"), 25),
    "가게": ("사업체/도소매및유통/가게.json", ("{s}과일가게", "{s}반찬가게", "{g}철물점", "{s}잡화", "{s}꽃집", "{s}떡집"), 35),
    "마트": ("사업체/도소매및유통/마트.json", ("{s}마트", "{g}할인마트", "{s}식자재마트", "{e}마트 {g}점"), 30),
    "미용실": ("사업체/미용욕탕신체관리서비스/미용실.json", ("{s}헤어", "헤어{s}", "{s}미용실", "{e} 헤어살롱", "{s}뷰티"), 30),
    "공인중개사": ("사업체/부동산중개및임대매매/공인중개사.json", ("{s}공인중개사사무소", "{g}부동산", "{s}부동산중개", "{e}공인중개사"), 30),
    "단란주점": ("사업체/유흥업/단란주점.json", ("{s}단란주점", "{s}노래주점", "{e}", "{s}가요주점"), 25),
    "병원": ("기관및시설/의료기관/병원.json", ("{s}병원", "{g}중앙병원", "{s}재활병원", "{s}요양병원", "{e}병원", "{s}한방병원"), 40),
    "의원": ("기관및시설/의료기관/의원.json", ("{s}정형외과의원", "{s}내과의원", "{s}치과의원", "{s}의원", "{g}가정의학과의원", "{s}정신건강의학과의원"), 40),
    "대학교": ("기관및시설/교육기관/대학교.json", ("{s}대학교", "{g}대학교", "{s}과학기술대학교", "{s}여자대학교"), 25),
    "초등학교": ("기관및시설/교육기관/초등학교중학교고등학교.json", ("{g}초등학교", "{s}초등학교"), 25),
    "중학교": ("기관및시설/교육기관/초등학교중학교고등학교.json", ("{g}중학교", "{s}중학교", "{s}여자중학교"), 25),
    "고등학교": ("기관및시설/교육기관/초등학교중학교고등학교.json", ("{g}고등학교", "{s}고등학교", "{s}여자고등학교", "{s}공업고등학교"), 30),
    "아파트": ("기관및시설/주거시설/아파트.json", ("{g}{b}", "{s}{b}", "{g}{s}{b}{n}차", "{s}", "{g}{n}단지"), 50),
    "오피스텔": ("기관및시설/주거시설/빌라오피스텔.json", ("{s}", "{s}타워", "{e}{s}", "{g}{s}", "{s}스테이"), 30),
    "빌라": ("기관및시설/주거시설/빌라오피스텔.json", ("{s}빌라", "{s}빌", "{s}하우스", "{g}{s}빌라"), 25),
    "빌딩": ("기관및시설/상업시설/빌딩.json", ("{s}빌딩", "{s}타워", "{e}타워", "{g}프라자", "{s}센터"), 35),
    "지하철역": ("기관및시설/사회기반시설/지하철역.json", None, 0),
    "공원": ("기관및시설/주민편의시설/공원.json", ("{g}근린공원", "{s}공원", "{g}어린이공원", "{s}호수공원"), 30),
    "사이트": ("방송통신서비스/플랫폼일반/사이트.json", ("{s}마켓", "{s}장터", "{e}마켓", "{s}나라", "{s}중고"), 25),
}
BANKS = ["국민은행", "신한은행", "우리은행", "하나은행", "농협은행", "기업은행", "수협은행", "부산은행", "경남은행",
         "광주은행", "전북은행", "제주은행", "대구은행", "SC제일은행", "한국씨티은행", "카카오뱅크", "케이뱅크",
         "토스뱅크", "산업은행", "새마을금고", "신협", "우체국", "지역농협", "KB국민은행", "NH농협은행"]


def make_mentions(rng: random.Random) -> dict[str, dict[str, list[str]]]:
    """Mention lists as {relative json path: {label: [mentions]}}."""
    files: dict[str, dict[str, list[str]]] = {}
    for label, (path, patterns, count) in LIST_LABELS.items():
        if label == "은행":
            mentions = BANKS
        elif label == "지하철역":
            mentions = sorted({name[:-1] + "역" for name in rng.sample([d for d in REGIONS["행정동"] if len(d) > 2], 30)}
                              | {name[:-1] + "역" for name in rng.sample(REGIONS["행정구"], 10)})
        else:
            mentions = _stem_names(rng, patterns, count)
        files.setdefault(path, {})[label] = list(mentions)
    files["지리정보/지역명/행정구군시읍면동.json"] = {key: list(values) for key, values in REGIONS.items()}
    people = files.setdefault("사건관계인특정정보/인명/외국인이름.json", {})
    people["중국인이름"] = _combos(rng, 30, lambda: rng.choice(CHINESE_SURNAMES) + rng.choice(CHINESE_GIVEN))
    people["베트남이름"] = _combos(rng, 30, lambda: " ".join((rng.choice(VIET_SURNAMES), rng.choice(VIET_MIDDLE),
                                                             rng.choice(VIET_GIVEN))))
    online = files.setdefault("사건관계인특정정보/아이디-닉네임/닉네임대화명아이디.json", {})
    online["아이디"] = _combos(rng, 40, lambda: f"{rng.choice(ID_WORDS)}{rng.choice(('', '_', ''))}{rng.randint(1, 9999)}")
    online["닉네임"] = _combos(rng, 25, lambda: rng.choice(NICK_WORDS) + rng.choice(("", "", str(rng.randint(1, 99)))))
    files["URL/이메일주소.json"] = {"이메일주소": _combos(
        rng, 30, lambda: f"{rng.choice(ID_WORDS)}{rng.choice(('.', '_', ''))}{rng.randint(1, 999)}@{rng.choice(EMAIL_DOMAINS)}")}
    return files


def _combos(rng: random.Random, count: int, make) -> list[str]:
    names: set[str] = set()
    while len(names) < count:
        names.add(make())
    return sorted(names)


# --------------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------------

PLACEHOLDER = re.compile(r"<<<([^<>/]+)>>>(.*?)<<</\1>>>")


def write_corpus(out: Path, docs_per_type: int, seed: int) -> dict[str, int]:
    """Write annotated/, mentions/ and README.md under ``out``; returns corpus statistics."""
    rng = random.Random(seed)
    for sub in ("annotated", "mentions"):
        shutil.rmtree(out / sub, ignore_errors=True)
    texts: set[str] = set()
    stats = {"documents": 0, "characters": 0, "placeholders": 0}
    labels: set[str] = set()
    for case_type in CASE_TYPES:
        folder = out / "annotated" / case_type
        folder.mkdir(parents=True)
        index = 0
        while index < docs_per_type:
            text = make_document(case_type, rng)
            if text in texts or len(text) < 250:
                continue
            texts.add(text)
            (folder / f"doc_{index:03d}.md").write_text(text, encoding="utf-8")
            index += 1
            stats["documents"] += 1
            stats["characters"] += len(text)
            found = PLACEHOLDER.findall(text)
            stats["placeholders"] += len(found)
            labels.update(tag for tag, _ in found)
    stats["labels"] = len(labels)
    stats["mention_labels"] = 0
    stats["mentions"] = 0
    for path, content in make_mentions(rng).items():
        target = out / "mentions" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(content, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        stats["mention_labels"] += len(content)
        stats["mentions"] += sum(len(v) for v in content.values())
    (out / "README.md").write_text(README.format(seed=seed, docs=docs_per_type, **stats,
                                                  label_list=", ".join(sorted(labels))), encoding="utf-8")
    return stats


README = """# Thunder demo corpus

A small corpus of Korean criminal-judgment-style excerpts (범죄사실 / 범죄전력 sections for three case types:
crime_of_violence, fraud, indecent_act_by_compulsion) in the SNU Thunder-DeID annotation format
(`<<<label>>>A<<</label>>>`, one letter per entity within a document, particles written after the placeholder, upper
address levels before `…아래주소` placeholders), plus mention lists under `mentions/<category>/<subcategory>/<file>.json`
in the same layout as the real release. It exists so that `configs/demo.yaml` and the unit tests can train and test every
part of Thunder without the real (CC BY-NC-SA) corpus. All sentences, names and mentions were written for Thunder (the
administrative region names and bank names are public facts); nothing was copied from the SNU Thunder-DeID release. It is
distributed under the same license as Thunder itself. The people, companies and events are fictitious.

Produced by `python tools/make_demo_corpus.py --docs-per-type {docs} --seed {seed}` (reproducible: the same seed gives
byte-identical files), which combines hand-written sentence patterns with random dates, amounts, courts and entity roles.
Statistics: {documents} documents, {characters:,} characters, {placeholders:,} placeholders, {labels} distinct tags
({label_list}); {mention_labels} mention-list labels with {mentions:,} mentions.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--docs-per-type", type=int, default=40)
    parser.add_argument("--seed", type=int, default=20240611)
    args = parser.parse_args()
    stats = write_corpus(args.out, args.docs_per_type, args.seed)
    print(json.dumps(stats, ensure_ascii=False))


if __name__ == "__main__":
    main()
