"""이메일주소: ``user@domain``."""

from __future__ import annotations

import random
import re

from faker.providers.internet.ko_KR import Provider as _FakerInternet

from thunder.identifiers import user_id
from thunder.identifiers.base import Identifier, PatternRecognizer
from thunder.identifiers.context import MentionContext

NAME = "email"


class EmailAddress(PatternRecognizer):
    """E-mail addresses (0.95; 0.9 with spaces around the ``@``)."""

    name = "email"
    identifier = NAME
    pattern = re.compile(
        r"(?<![A-Za-z0-9_.+-])(?P<id>[A-Za-z0-9_.+-]+ ?@ ?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})"
        r"(?![A-Za-z0-9_-])"
    )

    def score(self, match: re.Match, text: str) -> float:
        return 0.9 if " " in match.group("id") else 0.95


_EMAIL_DOMAINS = tuple(_FakerInternet.free_email_domains) + ("naver.com", "naver.com", "kakao.com", "daum.net")


def generate(rng: random.Random, context: MentionContext) -> str:
    """``user@domain`` with a Korean free-mail domain."""
    return f"{user_id.generate(rng, context).replace('.', '_')}@{rng.choice(_EMAIL_DOMAINS)}"


IDENTIFIER = Identifier(NAME, EmailAddress, generate)
