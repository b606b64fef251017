"""아이디: online account names (romanized Korean syllables or an English word, often with digits); no pattern."""

from __future__ import annotations

import random

from thunder.identifiers.base import Identifier
from thunder.identifiers.context import MentionContext

NAME = "user_id"
_ROMAN_SYLLABLES = (
    "min", "jun", "seo", "ji", "hyun", "woo", "yoon", "soo", "young", "jin", "ho", "jae", "eun", "hye", "kyung",
    "sung", "dong", "sang", "chul", "tae", "ha", "na", "yeon", "mi", "sun", "hee", "joo", "bo", "da", "chae",
    "gyu", "won", "hoon", "seok", "bin", "ah", "ra", "yu", "ye", "in",
)  # fmt: skip
_SURNAMES_ROMAN = ("kim", "lee", "park", "choi", "jung", "kang", "cho", "yoon", "jang", "lim", "han", "shin", "oh")
_WORDS = ("sky", "blue", "happy", "star", "moon", "love", "angel", "king", "dream", "lucky", "smile", "cool", "zzang")


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


IDENTIFIER = Identifier(NAME, None, generate)
