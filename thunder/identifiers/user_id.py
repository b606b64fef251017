"""아이디: online account names (romanized Korean syllables or an English word, often with digits), found where the
text names them."""

from __future__ import annotations

import random
import re

from thunder.identifiers.base import Identifier, PatternRecognizer
from thunder.identifiers.context import MentionContext

NAME = "user_id"
_ROMAN_SYLLABLES = (
    "min", "jun", "seo", "ji", "hyun", "woo", "yoon", "soo", "young", "jin", "ho", "jae", "eun", "hye", "kyung",
    "sung", "dong", "sang", "chul", "tae", "ha", "na", "yeon", "mi", "sun", "hee", "joo", "bo", "da", "chae",
    "gyu", "won", "hoon", "seok", "bin", "ah", "ra", "yu", "ye", "in",
)  # fmt: skip
_SURNAMES_ROMAN = ("kim", "lee", "park", "choi", "jung", "kang", "cho", "yoon", "jang", "lim", "han", "shin", "oh")
_WORDS = ("sky", "blue", "happy", "star", "moon", "love", "angel", "king", "dream", "lucky", "smile", "cool", "zzang")


class UserId(PatternRecognizer):
    """An account name right after the word that names it (``아이디``, ``계정``, ``ID``, ``닉네임``, ``대화명``; a colon, a
    particle and an opening quote may stand between): Latin letters and digits joined by ``. _ -``, at least three
    characters with a letter (0.85: ``텔레그램 아이디 'raye.6'``, ``ID: kim_01``), a full stop after it ending the
    sentence (``아이디 gildong77.``). An account name has no shape of its own, so without such a word it is the
    model's to find; an e-mail address or URL is their recognizers'."""

    name = "user_id"
    identifier = NAME
    context = ("아이디", "계정", "ID", "닉네임", "대화명")  # the pattern starts with one of them
    pattern = re.compile(
        r"(?:아이디|계정명?|닉네임|대화명|(?<![A-Za-z])(?i:id))[ \t]*(?:[:：][ \t]*)?(?:은|는|이|가|을|를|인|으로|로)?"
        r"[ \t]*['\"‘’“”「『(\[]?[ \t]*"
        r"(?P<id>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?![A-Za-z0-9@]|[._-][A-Za-z0-9]|:/)"
    )

    def score(self, match: re.Match, text: str) -> float:
        handle = match.group("id")
        return self.base_score if len(handle) >= 3 and re.search("[A-Za-z]", handle) else 0.0


def generate(rng: random.Random, context: MentionContext) -> str:
    """An online account name: romanized Korean syllables or an English word, often with digits."""
    roll = rng.random()
    if roll < 0.45:
        base = rng.choice(_SURNAMES_ROMAN) + "".join(rng.choice(_ROMAN_SYLLABLES) for _ in range(rng.randint(1, 2)))
    elif roll < 0.75:
        base = "".join(rng.choice(_ROMAN_SYLLABLES) for _ in range(2))
    else:
        base = rng.choice(_WORDS) + rng.choice(("", "_", "")) + rng.choice(_ROMAN_SYLLABLES)
    if rng.random() < 0.65:
        base += rng.choice(("", "", "_", ".")) + str(rng.choice((rng.randint(1, 99), rng.randint(1970, 2009))))
    return base.strip("._")


IDENTIFIER = Identifier(NAME, UserId, generate)
