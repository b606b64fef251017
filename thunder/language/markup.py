"""Markup inside a judgment's text: HTML or XML tags, character references, markdown table cell separators and the tags
of Thunder's annotated judgments (``<<<내국인이름>>>A<<</내국인이름>>>``).

A judgment pasted from a web page or a table keeps its markup (``<td>김철수</td><td>010-1234-5678</td>``,
``김철수&nbsp;010-1234-5678``, ``| 홍길동 | 010-1234-5678 |``). A span found across it (a model's span over
``김철수</td><td>``, two cells of a markdown row) would eat the markup and join two identifiers into one;
:meth:`Markup.outside_markup` cuts a span into its pieces between the markup (a span inside one tag, such as an
attribute's value, stays whole; one inside an annotation's tag is dropped), and :func:`closing_markup` says how far
the closing tags after a word reach (``김철수</b>는``: the particle after them). A numeric character reference that
stands for a letter or a digit (``&#48;``) is text written another way, not markup (:func:`written_character`).
"""

from __future__ import annotations

import bisect
import re

# a tag (<b>, </td>, <br/>, <a href="...">, <?xml ...?>, <!DOCTYPE ...>) or a comment (at most 4 KiB: linear time);
# a tag of Thunder's annotated judgments (<<<내국인이름>>>, <<</내국인이름>>>: thunder.documents.annotation);
# a character reference (&nbsp;, &amp;, &#160;, &#xA0;); a markdown table's cell separator
MARKUP = re.compile(r"<!--.{0,4096}?-->|<<<?/?[^<>\n]{1,40}>>>?|<[/!?]?[A-Za-z][A-Za-z0-9:._-]*(?:\s[^<>]*)?/?>"
                    r"|&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});|\|", re.DOTALL)
NUMERIC_REFERENCE = re.compile(r"&#(?:([0-9]{1,7})|[xX]([0-9A-Fa-f]{1,6}));")
_CLOSING_TAGS = re.compile(r"(?:</[A-Za-z][A-Za-z0-9:._-]*\s*>|<<</[^<>\n]{1,40}>>>?)+")


class Markup:
    """The markup of one text, asked which parts of a span lie outside it."""

    def __init__(self, text: str) -> None:
        matches = [match for match in MARKUP.finditer(text) if not written_character(match.group())]
        self.ranges = [match.span() for match in matches]  # in order, disjoint
        self.starts = [start for start, _ in self.ranges]
        self.annotation = [match.group().startswith("<<") for match in matches]  # no text inside: a label's name

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def outside_markup(self, start: int, end: int) -> list[tuple[int, int]]:
        """The pieces of ``[start, end)`` outside the markup (``[(start, end)]`` where it crosses none, and where it
        lies inside one tag without touching its ``<`` or ``>``: an attribute's value; none inside an annotated
        judgment's tag, whose label is no text of the judgment)."""
        pieces, position = [], start
        for index in range(max(0, bisect.bisect_right(self.starts, start) - 1), len(self.ranges)):
            tag_start, tag_end = self.ranges[index]
            if tag_start >= end:
                break
            if tag_end <= position:
                continue
            if tag_start < start and end < tag_end and tag_end - tag_start > 1:
                return [] if self.annotation[index] else [(start, end)]  # inside one tag: an attribute's value
            if tag_start > position:
                pieces.append((position, tag_start))
            position = max(position, tag_end)
        if position < end:
            pieces.append((position, end))
        return pieces


def referenced_character(reference: str) -> str | None:
    """The printable ASCII character a numeric character reference stands for (``&#48;``, ``&#x30;``: ``0``); None
    for any other text or character."""
    found = NUMERIC_REFERENCE.fullmatch(reference)
    if found is None:
        return None
    code = int(found.group(1)) if found.group(1) is not None else int(found.group(2), 16)
    return chr(code) if 32 < code < 127 else None


def written_character(markup: str) -> bool:
    """Whether a piece of markup is a numeric character reference standing for a letter, a digit or a character of
    an address (``&#48;``: 0, ``&#x40;``: @): text written another way, which an identifier may be made of, not
    markup between two pieces of text."""
    char = referenced_character(markup)
    return char is not None and (char.isalnum() or char in "-@._+")


def closing_markup(text: str) -> int:
    """How many characters of closing tags ``text`` starts with (``</b></td>는``: 9; ``<<</내국인이름>>>은``: 12)."""
    match = _CLOSING_TAGS.match(text)
    return match.end() if match else 0
