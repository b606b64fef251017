"""Korean upper administrative units (the 17 provinces and metropolitan cities): their cities, counties and
districts, every common spelling of their names, and the address form of an entity key.

:data:`PROVINCES` is the table synthesis draws addresses from (:mod:`thunder.synthesis.mentions`); :func:`address_key` and
:func:`address_spellings` let de-identification treat ``서울특별시 강남구 …``, ``서울시 강남구 …`` and ``서울 강남구 …``
as one entity (:func:`thunder.deid.operators.entity_key`); :func:`upper_units` finds the upper levels of addresses, which
courts publish (``서울 마포구 <<<구아래주소>>>``), for the pipeline's non-identifier step (:mod:`thunder.deid.protection`).
"""

from __future__ import annotations

import re

from thunder.language.particles import PARTICLE_RUN, run_agrees

# province -> (short names written in addresses, {city or county ("" for a metropolitan city itself): districts})
PROVINCES: dict[str, tuple[tuple[str, ...], dict[str, tuple[str, ...]]]] = {
    "서울특별시": (("서울",), {"": tuple(
        "종로구 중구 용산구 성동구 광진구 동대문구 중랑구 성북구 강북구 도봉구 노원구 은평구 서대문구 마포구 양천구 강서구 "
        "구로구 금천구 영등포구 동작구 관악구 서초구 강남구 송파구 강동구".split())}),
    "부산광역시": (("부산",), {"": tuple("중구 서구 동구 영도구 부산진구 동래구 남구 북구 해운대구 사하구 금정구 강서구 연제구 "
                                    "수영구 사상구".split()), "기장군": ()}),
    "대구광역시": (("대구",), {"": tuple("중구 동구 서구 남구 북구 수성구 달서구".split()), "달성군": (), "군위군": ()}),
    "인천광역시": (("인천",), {"": tuple("중구 동구 미추홀구 연수구 남동구 부평구 계양구 서구".split()), "강화군": (),
                          "옹진군": ()}),
    "광주광역시": (("광주",), {"": tuple("동구 서구 남구 북구 광산구".split())}),
    "대전광역시": (("대전",), {"": tuple("동구 중구 서구 유성구 대덕구".split())}),
    "울산광역시": (("울산",), {"": tuple("중구 남구 동구 북구".split()), "울주군": ()}),
    "세종특별자치시": (("세종",), {"": ()}),
    "경기도": (("경기",), {
        "수원시": ("장안구", "권선구", "팔달구", "영통구"), "성남시": ("수정구", "중원구", "분당구"),
        "고양시": ("덕양구", "일산동구", "일산서구"), "용인시": ("처인구", "기흥구", "수지구"),
        "안산시": ("상록구", "단원구"), "안양시": ("만안구", "동안구"), **dict.fromkeys(
            "부천시 남양주시 화성시 평택시 의정부시 시흥시 파주시 김포시 광명시 광주시 군포시 하남시 오산시 이천시 안성시 "
            "의왕시 양주시 구리시 포천시 여주시 동두천시 과천시 가평군 양평군 연천군".split(), ())}),
    "강원특별자치도": (("강원", "강원도"), dict.fromkeys(
        "춘천시 원주시 강릉시 동해시 태백시 속초시 삼척시 홍천군 횡성군 영월군 평창군 정선군 철원군 화천군 양구군 인제군 "
        "고성군 양양군".split(), ())),
    "충청북도": (("충북",), {"청주시": ("상당구", "서원구", "흥덕구", "청원구"), **dict.fromkeys(
        "충주시 제천시 보은군 옥천군 영동군 증평군 진천군 괴산군 음성군 단양군".split(), ())}),
    "충청남도": (("충남",), {"천안시": ("동남구", "서북구"), **dict.fromkeys(
        "공주시 보령시 아산시 서산시 논산시 계룡시 당진시 금산군 부여군 서천군 청양군 홍성군 예산군 태안군".split(), ())}),
    "전북특별자치도": (("전북", "전라북도"), {"전주시": ("완산구", "덕진구"), **dict.fromkeys(
        "군산시 익산시 정읍시 남원시 김제시 완주군 진안군 무주군 장수군 임실군 순창군 고창군 부안군".split(), ())}),
    "전라남도": (("전남",), dict.fromkeys(
        "목포시 여수시 순천시 나주시 광양시 담양군 곡성군 구례군 고흥군 보성군 화순군 장흥군 강진군 해남군 영암군 무안군 "
        "함평군 영광군 장성군 완도군 진도군 신안군".split(), ())),
    "경상북도": (("경북",), {"포항시": ("남구", "북구"), **dict.fromkeys(
        "경주시 김천시 안동시 구미시 영주시 영천시 상주시 문경시 경산시 의성군 청송군 영양군 영덕군 청도군 고령군 성주군 "
        "칠곡군 예천군 봉화군 울진군 울릉군".split(), ())}),
    "경상남도": (("경남",), {"창원시": ("의창구", "성산구", "마산합포구", "마산회원구", "진해구"), **dict.fromkeys(
        "진주시 통영시 사천시 김해시 밀양시 거제시 양산시 의령군 함안군 창녕군 고성군 남해군 하동군 산청군 함양군 거창군 "
        "합천군".split(), ())}),
    "제주특별자치도": (("제주", "제주도"), dict.fromkeys(("제주시", "서귀포시"), ())),
}  # fmt: skip

# spellings recognised but not generated: the metropolitan cities as "…시" (광주시 is a city of 경기도, not one of them)
_OTHER_SPELLINGS = {p: (p[:2] + "시",) for p in PROVINCES if p.endswith(("광역시", "특별시", "특별자치시"))}
del _OTHER_SPELLINGS["광주광역시"]

SPELLINGS: dict[str, tuple[str, ...]] = {
    province: tuple(sorted({province, *short, *_OTHER_SPELLINGS.get(province, ())}, key=lambda w: (-len(w), w)))
    for province, (short, _) in PROVINCES.items()
}  # every written form of each province, longest first
_CANONICAL = {spelling: province for province, spellings in SPELLINGS.items() for spelling in spellings}
_SPELLING = re.compile("|".join(sorted(_CANONICAL, key=len, reverse=True)))
# 세종 has no city or county: its town (읍/면) and district (동) names, recognised after the province (not generated)
_SEJONG = tuple("조치원읍 연기면 연동면 부강면 금남면 장군면 연서면 전의면 전동면 소정면 한솔동 새롬동 나성동 다정동 도담동 "
                "어진동 해밀동 아름동 종촌동 고운동 보람동 대평동 소담동 반곡동".split())  # fmt: skip
_UNITS = {
    province: tuple(sorted({n for unit, districts in units.items() for n in (unit, *districts) if n}
                           | set(_SEJONG if province == "세종특별자치시" else ()), key=lambda w: (-len(w), w)))
    for province, (_, units) in PROVINCES.items()
}  # fmt: skip
PLACE_NAMES = frozenset(_CANONICAL) | frozenset(n for names in _UNITS.values() for n in names)
"""Every province spelling and every city, county and district name (``경산시``, ``강남구``, ``서울``)."""
# unit names that start with a province spelling (부산진구, 광주시 of 경기도, 제주시): the key is that unit, not the province
_UNIT_NAMES = tuple(n for names in _UNITS.values() for n in names if _SPELLING.match(n))
# a 동/리 with its lot number or a road with its building number written right after the province (``서울 역삼동
# 123``, ``세종 한누리대로 2130``); not after 시/도 (광주시, 제주시 are names of their own)
_LOWER = re.compile(r"(?![시도])[가-힣]{1,4}?(?:동|리|로|길)(?:산)?[0-9]")


def _province_and_rest(key: str) -> tuple[str, str] | None:
    """The province a whitespace-free key starts with and the rest, when the rest starts with a lower unit."""
    found = _SPELLING.match(key)
    if found is None or key.startswith(_UNIT_NAMES):
        return None
    province, rest = _CANONICAL[found.group()], key[found.end() :]
    if rest.startswith(_UNITS[province]) or _LOWER.match(rest):
        return province, rest
    return None


def address_key(key: str) -> str:
    """``key`` (whitespace-free) with a leading province spelling made the full name, when what follows it is a
    lower administrative unit: ``서울강남구역삼동123`` and ``서울시강남구…`` -> ``서울특별시강남구…``.

    Nothing else changes: ``서울``, ``경기도중``, ``광주시오포읍…`` (a city of 경기도), ``부산은행`` stay as they are.
    """
    split = _province_and_rest(key)
    return key if split is None else split[0] + split[1]


def address_spellings(key: str) -> tuple[str, ...]:
    """Every written form of a key :func:`address_key` returns (the key itself first): ``서울특별시강남구…`` ->
    ``서울특별시강남구…``, ``서울시강남구…``, ``서울강남구…``; any other key alone."""
    split = _province_and_rest(key)
    if split is None or split[0] + split[1] != key:
        return (key,)
    province, rest = split
    return (key, *(spelling + rest for spelling in SPELLINGS[province] if spelling != province))


_HANGUL_WORD = re.compile(r"[가-힣]+")
_UPPER_NAMES = frozenset(_CANONICAL) | frozenset(
    name for _, units in PROVINCES.values() for unit, districts in units.items() for name in (unit, *districts) if name
)  # PLACE_NAMES without 세종's towns and 동s, which are below its province as 읍/면/동 are elsewhere


def _unit_length(word: str) -> int:
    """The length of the unit name ``word`` is, alone or before particles that agree with it; 0 for no unit."""
    for end in range(len(word), 1, -1):
        name, rest = word[:end], word[end:]
        if name in _UPPER_NAMES and (not rest or (PARTICLE_RUN.fullmatch(rest) and run_agrees(name, rest))):
            return end
    return 0


def upper_units(text: str) -> list[tuple[int, int]]:
    """Where ``text`` names upper administrative units, which courts publish as the start of an address: province,
    city, county and district names, each a word of its own, in a run of two or more (``서울 마포구``, ``창원시
    마산회원구``) or alone when the name has three syllables or more (``화성시``, ``마포구에서``: the name without its
    particles). A lone two-syllable name (``서울``, ``동구``, ``세종``) may be a person's name or a word and is left
    out, as are names inside longer words (``마포구청``, ``부산은행``) and towns (읍/면): courts replace these with the
    rest of the address (``김해시 <<<시아래주소>>>``)."""
    found: list[tuple[int, int]] = []
    run: list[tuple[int, int, int]] = []  # the run's names so far: (start, end of the name, end of its word)
    for word in [*_HANGUL_WORD.finditer(text), None]:
        length = _unit_length(word.group()) if word else 0
        # a name continues the run when only spaces part it from the last one, which had no particle
        joined = word is not None and run and run[-1][1] == run[-1][2] and text[run[-1][1] : word.start()].isspace()
        if not (length and (joined or not run)):
            if len(run) > 1 or (run and run[0][1] - run[0][0] >= 3):
                found += [(start, end) for start, end, _ in run]
            run = []
        if length:
            run.append((word.start(), word.start() + length, word.end()))
    return found
