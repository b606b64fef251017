"""A person's name that a writer masked in part: a Korean surname and masks for the rest (``김○○``, ``금OOO``,
``이**``, ``홍○동``).

Judgments and the records they quote often mask names this way, and such a name still tells a reader the surname
(and with ``홍○동`` more): the court replaces it like any other name. The model has seen few of them, and a mask
has no context to learn from, so a pattern finds them: a surname (:data:`thunder.synthesis.names.SURNAMES` but ``제``, whose
masks number things: ``제○호``), then two or three masks (``○ ◯ ● * ＊``, or a run of Latin ``O`` or ``X``), a mask
(Latin too) and a syllable, or one round mask (``김○``; one asterisk after a word marks a footnote: ``원고*``),
and after it nothing but ``씨`` or ``님`` and particles. No letter, digit or mask may stand right before or after it
(``A○○``, ``○○○``); a mask that opens a word (``○○법``, ``○○아파트``) has no surname.
"""

from __future__ import annotations

import re

from thunder.identifiers.base import PatternRecognizer
from thunder.language.particles import PARTICLE_RUN
from thunder.synthesis.names import SURNAMES

_MASK = "○◯●*＊"
_ROUND = "○◯●"
_SURNAME = "|".join(sorted((s for s in SURNAMES if s != "제"), key=len, reverse=True))
# 김○○ 김** 김OO, 홍○동 홍O동, 김○ (one round mask only: an asterisk after a word is a footnote's, 원고*)
_PARTICLES_ONLY = rf"(?:{PARTICLE_RUN.pattern})(?![가-힣])"  # 이○의: the syllable after the mask is a particle
_GIVEN = rf"(?:[{_MASK}]{{2,3}}|[{_MASK}OX](?!{_PARTICLES_ONLY})[가-힣]|[{_ROUND}]|[OX]{{2,3}})"
_PATTERN = re.compile(rf"(?<![가-힣A-Za-z0-9{_MASK}])(?P<id>(?:{_SURNAME}){_GIVEN})(?![A-Za-z0-9{_MASK}])")


class MaskedNameRecognizer(PatternRecognizer):
    """Part-masked person names (see the module docstring); the label is the taxonomy's person-name label (source
    ``generator:korean_name``) unless given."""

    name = "masked_name"
    identifier = "korean_name"
    pattern = _PATTERN
    base_score = 0.9

    def score(self, match: re.Match, text: str) -> float:
        end = match.end("id")
        word_end = end
        while word_end < len(text) and "가" <= text[word_end] <= "힣":
            word_end += 1
        rest = end + (text[end : end + 1] in ("씨", "님"))  # 김○○씨는
        if word_end > rest and not PARTICLE_RUN.fullmatch(text, rest, word_end):
            return 0.0  # 이○○동: a place, not a name and a particle
        return self.base_score
