"""URL: web addresses with a scheme or ``www.``."""

from __future__ import annotations

import random
import re

from thunder.identifiers import user_id
from thunder.identifiers.base import Identifier, PatternRecognizer
from thunder.identifiers.context import MentionContext

NAME = "url"


_TAIL = r"[^\s<>\"'가-힣]*[^\s<>\"'가-힣.,;:!?)\]}]"  # trailing punctuation and closing brackets left out
_HOST = (  # Hangul labels (예시.한국), punycode; a Hangul ending only before a path or a break (else: a particle)
    r"(?:[a-z0-9가-힣](?:[a-z0-9가-힣-]*[a-z0-9가-힣])?\.)+"
    r"(?:xn--[a-z0-9-]+(?![a-z0-9-])|[a-z]{2,}(?![a-z0-9-])|[가-힣]{2,}(?=[/?#:\s.,;)\]]|$))(?!\.[a-z0-9가-힣])"
)
_PATH = rf"(?:[/?#]{_TAIL}|/)?"  # a path stops before Hangul, as a particle follows (/a에서)
_START = r"(?i:(?:https?|s?ftp|ftps)://|www\.)"  # a scheme (web or file transfer) or www.
_USER = r"[^\s/?#@<>\"'가-힣]+@"  # a user name and password (https://hongkd:pa55w0rd@example.com)
TOP_LEVEL_DOMAINS = (
    "co.kr", "or.kr", "go.kr", "ac.kr", "ne.kr", "re.kr", "pe.kr", "kr", "com", "net", "org", "info", "biz", "io",
    "me", "tv", "app", "dev", "shop", "site", "xyz", "jp", "cn", "us", "uk",
    "ly", "gl", "gd", "co", "to", "cc", "link",  # link shorteners: bit.ly, goo.gl, is.gd, t.co, han.gl, ...
)  # fmt: skip


class Url(PatternRecognizer):
    """URLs with a scheme (``http``, ``https``, ``ftp``, ``sftp``, ``ftps``) or ``www.`` in any case (0.9;
    internationalised hosts too: ``https://www.예시.한국/a``, punycode ``xn--``; 0.97 with a user name or password,
    ``https://hongkd:pa55w0rd@example.com/x``, so that the whole URL goes, not the address-like part), a host under a
    common top-level domain or a link shortener followed by a path (``blog.naver.com/hong1234``, ``bit.ly/3xYz``:
    0.8), or a punycode host without a scheme (``xn--9n2bp8q.xn--3e0b707e``: 0.85); trailing punctuation and closing
    brackets are left out."""

    name = "url"
    identifier = NAME
    _DOMAINS = "|".join(re.escape(domain) for domain in TOP_LEVEL_DOMAINS)
    pattern = re.compile(
        rf"(?P<id>{_START}(?:{_USER})?(?i:{_HOST}){_PATH}"
        rf"|{_START}{_TAIL}"
        rf"|(?<![\w.@/-])(?i:(?:[a-z0-9-]+\.)+(?:{_DOMAINS}))/{_TAIL}"
        rf"|(?<![\w.@/-])(?i:(?=[a-z0-9.-]*xn--)(?:[a-z0-9-]+\.)+[a-z0-9-]*[a-z0-9])(?![a-z0-9-]){_PATH})"
    )

    def score(self, match: re.Match, text: str) -> float:
        url = match.group("id")
        if re.match(_START, url):  # a user name or password inside outweighs the e-mail address it looks like
            return 0.97 if "@" in url.split("/", 3)[2 if "://" in url else 0] else 0.9
        return 0.85 if "xn--" in url.lower() else 0.8


def generate(rng: random.Random, context: MentionContext) -> str:
    """A URL of a Korean blog, cafe, open chat, shop or a plain site."""
    name = user_id.generate(rng, context).replace(".", "").replace("_", "")
    roll = rng.randrange(7)
    if roll == 0:
        return f"https://blog.naver.com/{name}/{rng.randint(220000000000, 223999999999)}"
    if roll == 1:
        return f"https://cafe.naver.com/{name}/{rng.randint(1, 99999)}"
    if roll == 2:
        return f"https://{name}.tistory.com/{rng.randint(1, 999)}"
    if roll == 3:
        code = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789") for _ in range(8))
        return f"https://open.kakao.com/o/{code}"
    if roll == 4:
        return f"https://smartstore.naver.com/{name}"
    if roll == 5:
        return f"https://cafe.daum.net/{name}"
    scheme = rng.choice(("https://", "http://", "www.", "https://www."))
    return f"{scheme}{name}.{rng.choice(('com', 'co.kr', 'kr', 'net'))}"


IDENTIFIER = Identifier(NAME, Url, generate)
