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
  ``hong [at] naver [dot] com``, ``hong at naver dot com``),

and keeps the way back: :meth:`NormalView.original_span` turns a span of the view into the span of the original
characters it came from (a removed character inside a span is covered by it).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

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


@dataclass(frozen=True)
class NormalView:
    """A normalised text and the way back to the original.

    ``changes`` lists, in order, ``(view_start, original_start, view_length)`` of every original character the
    view changed (one original character each; ``view_length`` 0 for a removed one); between changes, view and
    original advance together. ``view_starts`` are the first members, for bisection.
    """

    original: str
    text: str
    changes: tuple[tuple[int, int, int], ...] = ()
    view_starts: tuple[int, ...] = ()

    def _origin(self, position: int) -> tuple[int, int]:
        """The original characters ``[start, end)`` that view character ``position`` comes from."""
        i = bisect.bisect_right(self.view_starts, position) - 1
        if i < 0:
            return position, position + 1
        view_start, original_start, length = self.changes[i]
        if position < view_start + length:
            return original_start, original_start + 1
        start = original_start + 1 + position - (view_start + length)
        return start, start + 1

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the view's span ``[start, end)`` (``end > start``): every original character that
        made it, invisible ones between them included."""
        if not self.changes:
            return start, end
        return self._origin(start)[0], self._origin(end - 1)[1]


# what a clerk types as a dash between digits, though no dash: the Hangul vowel ㅡ (compatibility, conjoining and
# half-width forms), the katakana long vowel mark ー (and its half-width form), the tilde and wave dashes
DIGIT_DASHES = "\u3161\u1173\uffda\u30fc\uff70~\u301c\uff5e"
# one or two line ends (or HTML ``<br>``) with the spaces around them: a text wrapped at its margin
_BREAK = r"(?:[ \t]*(?:\r\n|\r|\n|<[bB][rR][ \t]*/?>)){1,2}[ \t]*"
# several characters the view writes as one (or none): (pattern, what the match becomes)
_RUNS = (
    (re.compile(rf"(?<=\d[-{DASHES}]){_BREAK}(?=\d)|(?<=\d){_BREAK}(?=[-{DASHES}]\d)"), ""),  # a wrapped digit group
    (re.compile(f"(?<=\\d)[{DIGIT_DASHES}](?=\\d)"), "-"),  # 010ㅡ1234ㅡ5678, 010~1234~5678
    # an address wrapped after a dot (hong@naver.⏎com)
    (re.compile(r"(?i)(?<=[a-z0-9]\.)[ \t]*\r?\n[ \t]*(?=(?:com|net|org|kr|co|go|ac|or|ne|info|biz|io|me)\b)"), ""),
    (re.compile(r"(?i)(?<=[a-z0-9_.+-])[ \t]*[(\[][ \t]*at[ \t]*[)\]][ \t]*(?=[a-z0-9])"), "@"),
    (re.compile(r"(?i)(?<=[a-z0-9])[ \t]*[(\[][ \t]*dot[ \t]*[)\]][ \t]*(?=[a-z0-9])"), "."),
    (re.compile(r"(?i)(?<=[a-z0-9_.+-]) at (?=[a-z0-9-]+(?: dot |\.)[a-z]{2,})"), "@"),
    (re.compile(r"(?i)(?<=[a-z0-9]) dot (?=(?:com|net|org|kr|co|go|ac|or|ne|info|biz|io|me)\b)"), "."),
)


@lru_cache(maxsize=2)
def normal_view(text: str) -> NormalView:
    """The normalised view of ``text`` (cached: the recognizers of one document read it in turn)."""
    table, pattern = _replacements()
    edits = {m.start(): (m.end(), table[m.group()]) for m in pattern.finditer(text)}  # start -> (end, becomes)
    for run, becomes in _RUNS:
        for m in run.finditer(text):
            if m.end() > m.start() and not any(m.start() <= s < m.end() for s in edits if s != m.start()):
                edits[m.start()] = (m.end(), becomes)
    if not edits:
        return NormalView(text, text)
    parts, changes, shift, last = [], [], 0, 0
    for start in sorted(edits):
        end, becomes = edits[start]
        if start < last:
            continue  # inside an earlier edit
        parts += (text[last:start], becomes)
        changes.append((start + shift, start, len(becomes)))  # the first character becomes ``becomes``
        changes += [(start + shift + len(becomes), position, 0) for position in range(start + 1, end)]  # the rest: none
        shift += len(becomes) - (end - start)
        last = end
    parts.append(text[last:])
    return NormalView(text, "".join(parts), tuple(changes), tuple(change[0] for change in changes))
