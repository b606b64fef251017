"""IPv4 addresses (``192.168.10.20``), as access logs and investigation records quote them.

A taxonomy may give them a label of their own (``source: "generator:ip_address"``); the packaged one has none, and
they take its URL label (a network address, like the host of a URL)."""

from __future__ import annotations

import random
import re

from thunder.identifiers import url
from thunder.identifiers.base import Identifier, PatternRecognizer, digits_of
from thunder.identifiers.context import MentionContext

NAME = "ip_address"
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|0?[1-9]?\d|00\d)"  # 0-255, zero-padded too (010, 007)


class IpAddress(PatternRecognizer):
    """Four octets 0-255 (zero-padded too: ``192.168.010.020``) joined by dots: 0.9 after a context word (IP, 아이피,
    접속), 0.7 without one unless every octet is a single digit (``1.2.3.4`` alone may number a section)."""

    name = NAME
    identifier = NAME
    fallback_identifiers = (url.NAME,)
    pattern = re.compile(rf"(?<![\d.])(?P<id>{_OCTET}(?:\.{_OCTET}){{3}})(?!\d|\.\d)")
    context = ("IP", "아이피", "접속")

    def score(self, match: re.Match, text: str) -> float:
        if self.near_context(text, match):
            return 0.9
        return 0.7 if len(digits_of(match.group("id"))) > 4 else 0


def generate(rng: random.Random, context: MentionContext) -> str:
    """A private (home router, office) or public IPv4 address."""
    roll = rng.random()
    if roll < 0.3:
        return f"192.168.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    if roll < 0.4:
        return f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    first = rng.choice([n for n in range(1, 224) if n not in (10, 127)])
    return f"{first}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


IDENTIFIER = Identifier(NAME, IpAddress, generate)
