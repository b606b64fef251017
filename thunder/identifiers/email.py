"""이메일주소: ``user@domain``."""

from __future__ import annotations

import random
import re

from faker.providers.internet.ko_KR import Provider as _FakerInternet

from thunder.identifiers import user_id
from thunder.identifiers.base import Identifier, PatternRecognizer
from thunder.identifiers.context import MentionContext

NAME = "email"
# the top-level domains written in Hangul (IANA's root zone: .한국, .닷컴, .닷넷, .삼성)
HANGUL_TOP_LEVEL_DOMAINS = ("한국", "닷컴", "닷넷", "삼성")


class EmailAddress(PatternRecognizer):
    """E-mail addresses (0.95; 0.9 with spaces around the ``@``), internationalised ones too: Hangul in the user
    name (with no Latin letter, which would take a word glued before it: ``메일kim@``) and the host
    (``홍길동@예시.한국``), under a Latin, punycode (``xn--``) or Hangul top-level domain
    (:data:`HANGUL_TOP_LEVEL_DOMAINS`, which a particle may follow: ``홍길동@예시.한국으로``)."""

    name = "email"
    identifier = NAME
    pattern = re.compile(
        r"(?P<id>(?:(?<![A-Za-z0-9_.+-])[A-Za-z0-9_.+-]+|(?<![A-Za-z0-9가-힣_.+-])[가-힣][가-힣0-9_.+-]*)"
        r" ?@ ?(?:[A-Za-z0-9가-힣-]+\.)+"
        rf"(?:[A-Za-z]{{2,}}|xn--[A-Za-z0-9-]+|{'|'.join(HANGUL_TOP_LEVEL_DOMAINS)}))"
        r"(?![A-Za-z0-9_-])"
    )

    def score(self, match: re.Match, text: str) -> float:
        return 0.9 if " " in match.group("id") else 0.95


_EMAIL_DOMAINS = tuple(_FakerInternet.free_email_domains) + ("naver.com", "naver.com", "kakao.com", "daum.net")


def generate(rng: random.Random, context: MentionContext) -> str:
    """``user@domain`` with a Korean free-mail domain."""
    return f"{user_id.generate(rng, context).replace('.', '_')}@{rng.choice(_EMAIL_DOMAINS)}"


IDENTIFIER = Identifier(NAME, EmailAddress, generate)
