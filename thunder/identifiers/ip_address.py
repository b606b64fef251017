"""IP addresses (``192.168.10.20``, ``2001:db8::8a2e:370:7334``), as access logs and investigation records quote them.

A taxonomy may give them a label of their own (``source: "generator:ip_address"``); the packaged one has none, and
they take its URL label (a network address, like the host of a URL)."""

from __future__ import annotations

import ipaddress
import random
import re

from thunder.identifiers import url
from thunder.identifiers.base import Identifier, PatternRecognizer, digits_of
from thunder.identifiers.context import MentionContext

NAME = "ip_address"
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|0?[1-9]?\d|00\d)"  # 0-255, zero-padded too (010, 007)


class IpAddress(PatternRecognizer):
    """IPv4: four octets 0-255 (zero-padded too: ``192.168.010.020``) joined by dots: 0.9 after a context word (IP,
    아이피, 접속), 0.7 without one unless every octet is a single digit (``1.2.3.4`` alone may number a section).
    IPv6: hexadecimal groups joined by colons that :mod:`ipaddress` reads as an address (``2001:db8::8a2e:370:7334``,
    ``::ffff:192.0.2.1``) with at least three groups written (a time ``12:30:45`` is none): 0.9, 0.8 without a
    context word."""

    name = NAME
    identifier = NAME
    fallback_identifiers = (url.NAME,)
    pattern = re.compile(
        rf"(?<![\d.])(?P<v4>{_OCTET}(?:\.{_OCTET}){{3}})(?!\d|\.\d)"
        rf"|(?<![0-9A-Za-z:])(?P<v6>[0-9A-Fa-f]{{0,4}}(?::[0-9A-Fa-f]{{0,4}}){{2,7}}(?::{_OCTET}(?:\.{_OCTET}){{3}})?)"
        r"(?![0-9A-Za-z:.])"
    )
    context = ("IP", "아이피", "접속")

    def score(self, match: re.Match, text: str) -> float:
        if match.group("v6"):
            return (0.9 if self.near_context(text, match) else 0.8) if _ipv6(match.group("v6")) else 0
        if self.near_context(text, match):
            return 0.9
        return 0.7 if len(digits_of(match.group("v4"))) > 4 else 0


def _ipv6(candidate: str) -> bool:
    """Whether ``candidate`` is an IPv6 address with at least three groups written."""
    try:
        ipaddress.IPv6Address(candidate)
    except ValueError:
        return False
    return len([group for group in re.split(r"[:.]", candidate) if group]) >= 3


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
