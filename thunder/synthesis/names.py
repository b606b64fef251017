"""Synthetic surface forms: person-name generator families, and random strings of a mention's shape.

Two name families that share no construction: ``broad`` for training (syllables from an inventory of given-name
syllables, common and rare, native Korean names, rare and two-syllable surnames, foreign names in Hangul, spaced,
dotted and part-masked forms) and ``unseen`` for the held-out test split only (syllables composed from weighted
jamo, so its names are not drawn from any inventory that training reads). All randomness comes from the
``random.Random`` passed in.
"""

from __future__ import annotations

import random
import re
from typing import Literal

from faker.providers.person.ko_KR import Provider as _FakerPerson

from thunder.identifiers.context import MentionContext, infer_gender
from thunder.taxonomy import head_noun

__all__ = ["DOUBLE_SURNAMES", "FAMILIES", "SURNAMES", "PersonNames", "ShapeNoise", "compose_syllable", "random_shape"]

FAMILIES = ("broad", "unseen")

_FAKER_SURNAMES = dict(_FakerPerson.last_names)
_RARE_SURNAMES = tuple(
    dict.fromkeys(
        c
        for c in "원천방공현함변염여추도소석선설마길연위표명기반왕금옥육인맹제모탁국어은편용예경봉사부가복태목형피두감호음빈"
        "동온시범좌팽승간상갈단견당채계묵근매야화평풍"
        if c not in _FAKER_SURNAMES
    )
)
DOUBLE_SURNAMES = ("남궁", "황보", "제갈", "선우", "독고", "사공", "서문", "동방", "어금", "망절")
SURNAMES = (*_FAKER_SURNAMES, *_RARE_SURNAMES, *DOUBLE_SURNAMES)
# common surnames keep their frequencies; every rare one weighs as much as the rarest common one / 4
_SURNAME_WEIGHTS = (
    *_FAKER_SURNAMES.values(),
    *[min(_FAKER_SURNAMES.values()) / 4] * (len(_RARE_SURNAMES) + len(DOUBLE_SURNAMES)),
)
# syllables of Korean given names, common and rare (Sino-Korean name characters and native-word syllables)
_GIVEN_SYLLABLES = tuple(
    dict.fromkeys(
        "가각간갑강개거건걸검겸경계고곤공관광교구국군권규균극근금기길나낙난남내녀년노농누늘능니다단달담당대덕도돈동두둘"
        "득등라락란람랑래량려력련렬령례로록뢰룡루류륜률륭름릉리린림립마만말매맹면명모목몽묘무묵문물미민밀바박반발방배백"
        "범법벽변별병보복본봉부분불붕비빈빛사산삼상새색생서석선설섬섭성세소속손솔송수숙순술숭슬승시식신실심아악안알암애"
        "야약양어언엄업여역연열염엽영예오옥온올완왕요용우욱운울웅원월위유육윤율융은을음응의이익인일임입자작잠장재저적전"
        "절점정제조존종좌주죽준중증지직진질집징차찬찰참창채책처척천철첨청초촌총추축춘출충취치칠침타탁탄태택토통투특파판"
        "팔평포표품풍필하학한할함합항해행향허헌혁현협형혜호혼홍화확환활황회효후훈휘휴흔흠흥희힘"
    )
)
_NATIVE_GIVEN = tuple(
    "하늘 보람 슬기 아름 한결 다온 나래 누리 가람 빛나 은별 새봄 초롱 한별 단비 이슬 하람 나리 보미 다솜 예슬 한솔 새론 "
    "두리 아라 고은 다은 소리 바다 푸름 여름 가을 겨울 봄 별 솔 결 찬솔 한빛 그루 라온 시온 로아 하랑 누리봄 아름솔".split()
)
_FAKER_GIVEN = {"male": tuple(_FakerPerson.first_names_male), "female": tuple(_FakerPerson.first_names_female)}
# foreign names as Korean judgments write them in Hangul: (given names, family names) per origin
_FOREIGN = (
    (("반 안", "티 투 항", "반 득", "티 란", "꽝 민", "티 후옌", "반 남", "티 프엉"), ("응우옌", "쩐", "레", "팜", "호앙", "부", "보", "당")),
    (("웨이", "메이", "리화", "진", "샤오밍", "하이옌", "쥔", "춘화"), ("왕", "장", "류", "천", "양", "자오", "쑨", "린")),
    (("마이클", "존", "데이비드", "제임스", "사라", "제니퍼", "로버트", "에밀리"), ("스미스", "존슨", "브라운", "윌리엄스", "밀러", "데이비스", "윌슨", "테일러")),
    (("유키", "다로", "하루카", "겐지", "아야", "히로시", "사쿠라", "나오키"), ("다나카", "스즈키", "사토", "야마모토", "나카무라", "고바야시", "와타나베", "이토")),
    (("알렉세이", "이리나", "드미트리", "나탈리아", "세르게이", "올가", "빅토르", "안나"), ("이바노프", "페트로바", "스미르노프", "쿠즈네초바", "포포프", "볼코바", "소콜로프", "김")),
    (("마리아", "호세", "안젤리카", "로드리고", "크리스틴", "마크", "제니", "조엘"), ("산토스", "레예스", "크루즈", "가르시아", "멘도사", "바우티스타", "델라크루즈", "라모스")),
    (("솜차이", "쑤다", "아논", "니파", "바야르", "오드게렐", "아지즈", "딜노자"), ("분미", "차이야", "바트", "돌고르", "카리모프", "유수포바", "라흐모노프", "통추아")),
)  # fmt: skip
_MASKS = ("○", "○", "O", "*")
_FIRST_SYLLABLE, _LAST_SYLLABLE = 0xAC00, 0xD7A3  # 가 .. 힣

# jamo of the ``unseen`` family: (weight per initial consonant, vowel, final consonant index)
_INITIAL_WEIGHTS = (5, 0.2, 3, 3, 0.1, 1, 3, 3, 0.1, 5, 0.2, 8, 5, 0.1, 3, 0.3, 1, 1, 5)  # ㄱㄲㄴㄷㄸㄹㅁㅂㅃㅅㅆㅇㅈㅉㅊㅋㅌㅍㅎ
_VOWEL_WEIGHTS = (8, 1.5, 0.5, 0.02, 3, 1, 3, 0.3, 4, 0.6, 0.02, 0.3, 0.7, 3, 0.6, 0.02, 0.3, 1.5, 1.5, 0.4, 6)  # ㅏ..ㅣ
_FINALS = {0: 16, 1: 1.5, 4: 5, 8: 1.5, 16: 1, 17: 0.3, 19: 0.1, 21: 5}  # none ㄱ ㄴ ㄹ ㅁ ㅂ ㅅ ㅇ


def compose_syllable(rng: random.Random) -> str:
    """One Hangul syllable composed from weighted jamo (the ``unseen`` family's syllable model)."""
    initial = rng.choices(range(19), _INITIAL_WEIGHTS)[0]
    vowel = rng.choices(range(21), _VOWEL_WEIGHTS)[0]
    final = rng.choices(tuple(_FINALS), tuple(_FINALS.values()))[0]
    return chr(0xAC00 + (initial * 21 + vowel) * 28 + final)


class PersonNames:
    """A person-name generator of one family (``sample(rng, context) -> str``, a ``MentionSource``).

    Args:
        family: ``broad`` (training) or ``unseen`` (the held-out test split; never use it for training).
        foreign: share of foreign names written in Hangul (``broad`` only).
        masked: share of part-masked forms such as ``홍○동``, ``김○○`` (``broad`` only).
        spaced: share of names written with a space or a middle dot after the surname (``broad`` only).
        any_syllable: share of given names whose syllables are drawn uniformly from all 11,172 Hangul syllables
            (``broad`` only): names no inventory holds, so that only the context tells them.
    """

    def __init__(
        self,
        family: Literal["broad", "unseen"] = "broad",
        foreign: float = 0.06,
        masked: float = 0.03,
        spaced: float = 0.02,
        any_syllable: float = 0.2,
    ) -> None:
        if family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
        for name, share in (("foreign", foreign), ("masked", masked), ("spaced", spaced), ("any_syllable", any_syllable)):
            if not 0 <= share <= 1:
                raise ValueError(f"{name} must be in [0, 1], got {share}")
        if foreign + masked + spaced > 1:
            raise ValueError(f"foreign + masked + spaced must be at most 1, got {foreign + masked + spaced}")
        self.family, self.foreign, self.masked, self.spaced = family, foreign, masked, spaced
        self.any_syllable = any_syllable

    def sample(self, rng: random.Random, context: MentionContext) -> str:
        if self.family == "unseen":
            return self._unseen(rng)
        roll = rng.random()
        if roll < self.foreign:
            return self._foreign(rng)
        surname, given = self._surname(rng), self._given(rng, context)
        if roll < self.foreign + self.masked:
            return self._masked(rng, surname, given)
        if roll < self.foreign + self.masked + self.spaced:
            return surname + rng.choice((" ", "·")) + given
        return surname + given

    def __repr__(self) -> str:
        return f"PersonNames({self.family!r})"

    @staticmethod
    def _surname(rng: random.Random) -> str:
        return rng.choices(SURNAMES, _SURNAME_WEIGHTS)[0]

    def _given(self, rng: random.Random, context: MentionContext) -> str:
        any_syllable = rng.random() < self.any_syllable
        if not any_syllable:
            roll = rng.random()
            if roll < 0.25:
                return rng.choice(_FAKER_GIVEN[infer_gender(context) or rng.choice(("male", "female"))])
            if roll < 0.3:
                return rng.choice(_NATIVE_GIVEN)
        size = rng.choices((1, 2, 3), (8, 87, 5))[0]
        if any_syllable:
            return "".join(chr(rng.randint(_FIRST_SYLLABLE, _LAST_SYLLABLE)) for _ in range(size))
        return "".join(rng.choice(_GIVEN_SYLLABLES) for _ in range(size))

    @staticmethod
    def _foreign(rng: random.Random) -> str:
        given, family = rng.choice(_FOREIGN)
        first, last = rng.choice(given), rng.choice(family)
        if len(last) == 1 or rng.random() < 0.3:  # Chinese and Vietnamese order: family name first
            return last + rng.choice(("", " ")) + first if len(last) == 1 else f"{last} {first}"
        return first + rng.choice((" ", "·", "")) + last

    @staticmethod
    def _masked(rng: random.Random, surname: str, given: str) -> str:
        mask = rng.choice(_MASKS)
        if len(given) >= 2 and rng.random() < 0.5:  # 홍○동
            return surname + mask + given[1:]
        return surname + mask * max(len(given), 2 if rng.random() < 0.7 else 1)

    @staticmethod
    def _unseen(rng: random.Random) -> str:
        size = rng.choices((1, 2, 3), (7, 85, 8))[0]
        return PersonNames._surname_unseen(rng) + "".join(compose_syllable(rng) for _ in range(size))

    @staticmethod
    def _surname_unseen(rng: random.Random) -> str:
        return rng.choices(tuple(_FAKER_SURNAMES), tuple(_FAKER_SURNAMES.values()))[0]


# ----------------------------------------------------------------------------------------- random shapes

_ADDRESS_UNITS = "도시군구읍면동리로길가"
_WORD = re.compile(r"\S+")


def _kept_tail(word: str, label: str) -> int:
    """How many trailing characters of ``word`` stay: the longest tail it shares with the label's name
    (``국민은행`` under 은행 keeps ``은행``, ``강남역`` under 지하철역 keeps ``역``), else an administrative
    unit ending an address word (``역삼동`` keeps ``동``)."""
    head = head_noun(word, label)
    if head:
        return len(head)
    if "주소" in label and len(word) > 1 and word[-1] in _ADDRESS_UNITS:
        return 1
    return 0


def random_shape(mention: str, rng: random.Random, label: str = "") -> str:
    """A random string of ``mention``'s shape: each Hangul syllable, digit and Latin letter replaced by a random
    one of its kind (syllables from the given-name inventory, digits keeping a non-zero lead), spaces and
    punctuation kept, and the generic tail of each word the label names (``은행``, ``동``) kept."""
    out = []
    cursor = 0
    for match in _WORD.finditer(mention):
        out.append(mention[cursor : match.start()])
        word = match.group()
        keep = _kept_tail(word, label)
        body = word[: len(word) - keep]
        out.append("".join(_random_char(char, rng, index == 0) for index, char in enumerate(body)) + word[len(body) :])
        cursor = match.end()
    out.append(mention[cursor:])
    return "".join(out)


def _random_char(char: str, rng: random.Random, first: bool) -> str:
    if "가" <= char <= "힣":
        return rng.choice(_GIVEN_SYLLABLES)
    if char.isdigit():
        return str(rng.randint(1, 9)) if first and char != "0" else str(rng.randint(0, 9))
    if "A" <= char <= "Z":
        return chr(rng.randint(65, 90))
    if "a" <= char <= "z":
        return chr(rng.randint(97, 122))
    return char


class ShapeNoise:
    """A ``MentionSource`` that replaces a share of another source's mentions with :func:`random_shape` strings,
    so that only the context tells they are identifiers."""

    def __init__(self, source: object, share: float, label: str = "") -> None:
        if not 0 <= share <= 1:
            raise ValueError(f"random mention share must be in [0, 1], got {share}")
        self.source, self.share, self.label = source, share, label

    def sample(self, rng: random.Random, context: MentionContext) -> str:
        mention = self.source.sample(rng, context)  # type: ignore[attr-defined]
        if rng.random() < self.share:
            return random_shape(mention, rng, context.label or self.label)
        return mention

    def __repr__(self) -> str:
        return f"ShapeNoise({self.source!r}, {self.share})"
