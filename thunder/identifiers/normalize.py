"""The view of a text the recognizers match on: identifiers as a clerk may type them, in plain ASCII form.

A judgment may write ``０１０－１２３４－５６７８`` (full-width), ``010–1234–5678`` (an en dash), ``010-12\u200b34-5678``
(a zero-width space inside) or ``010\u00a01234\u00a05678`` (no-break spaces). :func:`normal_view` maps

- compatibility forms whose NFKC form is one printable ASCII character (full-width and half-width forms, no-break
  and typographic spaces, small forms, mathematical letters and digits) to that character; circled, parenthesised,
  superscript and other enclosed forms stay as they are, and so does Hangul;
- the dash variants (hyphens, en/em dashes, minus signs, ...) to ``-``;
- invisible characters (zero-width spaces and joiners, word joiner, byte-order mark, soft hyphen) to nothing;
- a line break (one or two, or an HTML ``<br>``) inside a group of digits to nothing (``900101-\n1234567``,
  ``010-1234-<br>5678``: a judgment's text wrapped at its margin), and one after an address's dot (``hong@naver.\ncom``);
- what a clerk types as a dash between two digits (the Hangul ``ㅡ``, the katakana ``ー``, ``~``) to ``-``;
- the ways an e-mail address is written to dodge collectors to ``@`` and ``.`` (``hong(at)naver.com``,
  ``hong [at] naver [dot] com``, ``hong at naver dot com``, ``hong 골뱅이 naver 닷컴``, ``naver 점 com``: the Hangul
  words :data:`AT_WORDS` and :data:`DOT_WORDS` between Latin letters or digits, a top-level domain spelt in Hangul
  from :data:`HANGUL_DOMAINS`);
- a mobile number read out in Sino-Korean numerals (``공일공 일이삼사 오육칠팔``, ``영일영-…``) to its digits;
- digits typed one by one with spaces between (``0 1 0 - 1 2 3 4 - 5 6 7 8``: eight or more) to the digits, a resident
  or mobile number wrapped inside a digit group (``800101-123⏎4567``) joined when the parts make the group, and HTML
  numeric character references (``&#48;``, ``&#x30;``) to the ASCII character they stand for,

and keeps the way back: the view is a :class:`~thunder.language.views.TextView`, whose
:meth:`~thunder.language.views.TextView.original_span` turns a span of the view into the span of the original
characters it came from (a removed character inside a span is covered by it, a run written as one covered whole).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from functools import lru_cache
from typing import Callable

from thunder.language.markup import NUMERIC_REFERENCE, referenced_character
from thunder.language.views import TextView

DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u2796\ufe58\ufe63\uff0d"
INVISIBLE = "\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"
# decomposition tags of compatibility forms that stand for the plain character (not circled, squared, super/sub...)
_PLAIN_FORMS = ("<wide>", "<narrow>", "<noBreak>", "<font>", "<small>", "<compat>")
# where such forms live: Latin-1, general punctuation to number forms, the ideographic space, half/full-width and
# small forms, mathematical letters and digits
_SCANNED = ((0x00A0, 0x0100), (0x2000, 0x2190), (0x3000, 0x3001), (0xFE00, 0x10000), (0x1D400, 0x1D800))


@lru_cache(maxsize=1)
def _replacements() -> tuple[dict[str, str], re.Pattern]:
    """Every character the view changes, with what it becomes, and a pattern finding them."""
    table = {c: "-" for c in DASHES} | {c: "" for c in INVISIBLE}
    for first, last in _SCANNED:
        for code in range(first, last):
            char = chr(code)
            if char in table or not unicodedata.decomposition(char).startswith(_PLAIN_FORMS):
                continue
            plain = unicodedata.normalize("NFKC", char)
            if len(plain) == 1 and plain != char and plain.isascii() and plain.isprintable():
                table[char] = plain
    return table, re.compile("[" + "".join(map(re.escape, sorted(table))) + "]")


# what a clerk types as a dash between digits, though no dash: the Hangul vowel ㅡ (compatibility, conjoining and
# half-width forms), the katakana long vowel mark ー (and its half-width form), the tilde and wave dashes
DIGIT_DASHES = "\u3161\u1173\uffda\u30fc\uff70~\u301c\uff5e"
# one or two line ends (or HTML ``<br>``) with the spaces around them: a text wrapped at its margin
_BREAK = r"(?:[ \t]*(?:\r\n|\r|\n|<[bB][rR][ \t]*/?>)){1,2}[ \t]*"
# the Hangul words a clerk writes for the @ and the dot of an e-mail address, and top-level domains spelt in Hangul
AT_WORDS = ("골뱅이", "골뱅", "앳")
DOT_WORDS = ("닷", "쩜", "점")
HANGUL_DOMAINS = {"컴": "com", "넷": "net", "케이알": "kr", "오알지": "org"}
_DOMAINS = "com|net|org|kr|co|go|ac|or|ne|info|biz|io|me"  # what a written-out dot may stand before
# Sino-Korean numerals (공/영 0, 일 1, ..., 구 9) as a mobile number is read out: 01X, then 3-4 and 4 digits
SINO_DIGITS = {"공": "0", "영": "0", "일": "1", "이": "2", "삼": "3", "사": "4", "오": "5", "육": "6", "륙": "6",
               "칠": "7", "팔": "8", "구": "9"}  # fmt: skip
_SINO = "[0-9" + "".join(SINO_DIGITS) + "]"
_SINO_SEPARATOR = f"[ \\t.\\-{DASHES}{DIGIT_DASHES}]?"
# digits typed one by one with spaces between (0 1 0 - 1 2 3 4 - 5 6 7 8): eight or more, each alone
_SPACED_DIGITS = re.compile(rf"(?<![\d.])\d(?:(?: | ?[-{DASHES}] ?)\d){{7,}}(?!\d)")
# a resident number or a mobile number wrapped inside one of its digit groups (800101-123⏎4567, 010-1234-56⏎78)
_CUT_GROUP = re.compile(rf"(?<!\d)(\d{{6}}-(\d{{1,6}})|01\d-\d{{3,4}}-(\d{{1,3}})){_BREAK}(\d{{1,6}})(?!\d)")
# several characters the view writes as one (or none): (pattern, what the match becomes)
_RUNS: tuple[tuple[re.Pattern, str | Callable[[re.Match], str]], ...] = (
    (re.compile(rf"(?<=\d[-{DASHES}]){_BREAK}(?=\d)|(?<=\d){_BREAK}(?=[-{DASHES}]\d)"), ""),  # a wrapped digit group
    (_CUT_GROUP, lambda match: _joined_group(match)),
    (_SPACED_DIGITS, lambda match: re.sub(f"[ {DASHES}]", lambda c: "" if c.group() == " " else "-", match.group())),
    (NUMERIC_REFERENCE, lambda match: referenced_character(match.group()) or match.group()),  # &#48; &#x30;
    (re.compile(f"(?<=\\d)[{DIGIT_DASHES}](?=\\d)"), "-"),  # 010ㅡ1234ㅡ5678, 010~1234~5678
    # an address wrapped after a dot (hong@naver.⏎com)
    (re.compile(rf"(?i)(?<=[a-z0-9]\.)[ \t]*\r?\n[ \t]*(?=(?:{_DOMAINS})(?![a-z0-9]))"), ""),
    (re.compile(r"(?i)(?<=[a-z0-9_.+-])[ \t]*[(\[][ \t]*at[ \t]*[)\]][ \t]*(?=[a-z0-9])"), "@"),
    (re.compile(r"(?i)(?<=[a-z0-9])[ \t]*[(\[][ \t]*dot[ \t]*[)\]][ \t]*(?=[a-z0-9])"), "."),
    (re.compile(r"(?i)(?<=[a-z0-9_.+-]) at (?=[a-z0-9-]+(?: dot |\.)[a-z]{2,})"), "@"),
    (re.compile(rf"(?i)(?<=[a-z0-9]) dot (?=(?:{_DOMAINS})(?![a-z0-9]))"), "."),
    (re.compile(rf"(?i)(?<=[a-z0-9_.+-])[ \t]*(?:{'|'.join(AT_WORDS)})[ \t]*(?=[a-z0-9])"), "@"),  # hong 골뱅이 naver
    (re.compile(rf"(?i)(?<=[a-z0-9])[ \t]*(?:{'|'.join(DOT_WORDS)})[ \t]*(?=(?:{_DOMAINS})(?![a-z0-9]))"), "."),
    (re.compile(rf"(?i)(?<=[a-z0-9])[ \t]*(?:{'|'.join(DOT_WORDS)}|\.)[ \t]*({'|'.join(HANGUL_DOMAINS)})"),
     lambda match: "." + HANGUL_DOMAINS[match.group(1)]),  # naver 닷컴, naver 점 컴
    (re.compile(f"(?<![가-힣])(?:0|공|영)(?:1|일)[016789공영일육칠팔구]{_SINO_SEPARATOR}{_SINO}{{3,4}}"
                f"{_SINO_SEPARATOR}{_SINO}{{4}}(?!{_SINO})"),
     lambda match: "".join(SINO_DIGITS.get(char, char) for char in match.group())),  # 공일공 일이삼사 오육칠팔
)


def _joined_group(match: re.Match) -> str:
    """A cut digit group joined when its two parts make the group's length (7 after a resident number's dash, 4 at
    a mobile number's end); else the text as it is."""
    before = match.group(2) if match.group(2) is not None else match.group(3)
    whole = 7 if match.group(2) is not None else 4
    return match.group(1) + match.group(4) if len(before) + len(match.group(4)) == whole else match.group()


@lru_cache(maxsize=2)
def normal_view(text: str) -> TextView:
    """The normalised view of ``text`` (cached: the recognizers of one document read it in turn)."""
    table, pattern = _replacements()
    edits = {m.start(): (m.end(), table[m.group()]) for m in pattern.finditer(text)}  # start -> (end, becomes)
    starts = sorted(edits)
    for run, becomes in _RUNS:
        for m in run.finditer(text):
            written = becomes if isinstance(becomes, str) else becomes(m)
            inside = bisect.bisect_right(starts, m.start())  # the first edit starting after the run's start
            if written == m.group() or m.end() == m.start() or inside < len(starts) and starts[inside] < m.end():
                continue  # nothing to write, or an edit inside the run: the run is left out
            if m.start() not in edits:
                bisect.insort(starts, m.start())
            edits[m.start()] = (m.end(), written)
    return TextView.of_edits(text, edits)


@lru_cache(maxsize=4096)
def normal_text(text: str) -> str:
    """The normalised view's text alone, cached apart from the document's view (an entity's key, asked for every
    span: ``&#48;10-…`` and ``010-…``, ``김\u200b민수`` and ``김민수`` are one entity)."""
    return normal_view.__wrapped__(text).text
