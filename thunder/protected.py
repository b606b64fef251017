"""Protected words: model spans that are only a common word the model may mistake for an identifier (CCTV, KTX,
ATM, legal terms such as 신원미상) are dropped before replacement; recognizer spans are never touched.

The list follows the Thunder-DeID release's fixed protection list (its ``processing.py``) plus legal terms of
judgments that stand where a name stands (``성명불상``, ``공소외``); it does not take the release's rule that
protects every capitalised Latin word, which would keep brand and company names.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from thunder.identifiers.base import ScoredSpan
from thunder.particles import PARTICLE_RUN, leading_particle

__all__ = ["PROTECTED_WORDS", "load_protected", "protect"]

PROTECTED_WORDS: tuple[str, ...] = (
    # the release's fixed list
    "CCTV", "TV", "KTX", "SRT", "GPS", "ATM", "CPU", "GPU", "SSD", "USB", "PDF", "HTML", "HTTP", "URL", "API", "AI",
    "DNA", "HIV", "IT", "NGO", "신개념", "코스닥", "코스피", "암호화폐", "신원미상", "임원진", "혈중알코올농도", "이메일",
    "주민등록번호", "차량번호", "계좌번호",
    # legal terms in a name's place
    "성명불상", "성명불상자", "신원불상", "신원불상자", "불상자", "공소외", "상피고인", "피고인", "피해자", "고소인",
    "고발인", "증인", "참고인", "변호인", "검사",
)  # fmt: skip
_EDGE = " \t'\"‘’“”()[]<>「」『』.,"


def load_protected(spec: bool | Sequence[str] | None) -> frozenset[str]:
    """``True``: :data:`PROTECTED_WORDS`; a list: those words; ``None``/``False``/``[]``: none."""
    if spec is None or spec is False:
        return frozenset()
    if spec is True:
        return frozenset(PROTECTED_WORDS)
    if isinstance(spec, str) or not all(isinstance(word, str) and word.strip() for word in spec):
        raise ValueError(f"protected words must be true or a list of non-empty words, got {spec!r}")
    return frozenset(word.strip() for word in spec)


def _core(text: str) -> str:
    """A span's text without quotes, brackets and a trailing particle (``CCTV를`` -> ``CCTV``)."""
    core = text.strip(_EDGE)
    for cut in range(1, min(4, len(core))):
        found = leading_particle(core[-cut:])
        if found is not None and found[0] == core[-cut:]:
            return core[:-cut].strip(_EDGE)
    return core


def _whole_word(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` stands alone: no letter or digit touches it, except a particle after it
    (``증인`` of ``증인대기실`` is part of a longer name, ``CCTV`` of ``CCTV를`` is not)."""
    if start > 0 and text[start - 1].isalnum():
        return False
    particles = PARTICLE_RUN.match(text, end)
    after = particles.end() if particles else end
    return after >= len(text) or not text[after].isalnum()


def _protected(text: str, span: ScoredSpan, words: frozenset[str]) -> bool:
    mention = text[span.start : span.end]
    if mention not in words and _core(mention) not in words:
        return False
    start = span.start + len(mention) - len(mention.lstrip(_EDGE))
    return _whole_word(text, start, span.start + len(mention.rstrip(_EDGE)))


def protect(text: str, spans: Iterable[ScoredSpan], words: frozenset[str]) -> list[ScoredSpan]:
    """``spans`` without the model spans that are a protected word standing alone (not part of a longer word,
    such as ``증인`` of ``증인대기실``); spans of other sources are kept as they are."""
    if not words:
        return list(spans)
    return [span for span in spans if span.source != "model" or not _protected(text, span, words)]
