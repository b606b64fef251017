"""The publication policy: what a court publishes as it is, and how far a detected text reaches; validated here, once.

A :class:`PublicationPolicy` says

- which officials' names stay in the text (``keep_officials``: judges, prosecutors, counsel, as courts publish them;
  the names of the roles left out are replaced whatever the model says);
- whether the upper levels of an address stay (``keep_regions``: ``서울 마포구 A``);
- which text the model's spans never replace: legal text (``legal_text``: statute references, courts, procedural
  terms, ... of :mod:`thunder.language.legal`, plus any words added) and ``protected_words`` (CCTV, KTX, 신원미상, ...);
- how far a model span reaches: its text replaces its other occurrences only from ``propagate_threshold``, where the
  detection took at least ``propagate_share`` of them itself, and when it is none of the ``genre_words``
  (:mod:`thunder.language.genre`, and the general nouns of Korean of :mod:`thunder.synthesis.vocabulary`) nor a short
  number (:meth:`PublicationPolicy.spreads`); a dictionary noun only to the occurrences the model scores at least
  ``propagate_evidence`` (:meth:`PublicationPolicy.spreads_to`).

:mod:`thunder.deid.protection` turns the first three into the text no model span may replace; the pipeline, the
service, ``thunder deid``, ``evaluate`` and ``predict`` all take one policy object. Spans of every other source
(recognizers, the officials' rule, reviewers) are never dropped and always spread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar, Literal, Sequence

from thunder.identifiers.base import ScoredSpan
from thunder.language.genre import load_genre_words
from thunder.language.legal import OFFICIAL_ROLES
from thunder.language.morphemes import common_vocabulary
from thunder.synthesis.vocabulary import load_general_nouns

__all__ = ["PROPAGATE_EVIDENCE", "PROPAGATE_SHARE", "PROPAGATE_THRESHOLD", "PROTECTED_WORDS", "SPREADING_NUMBER", "PublicationPolicy"]

PROPAGATE_THRESHOLD = 0.5  # a model span spreads to its text's other occurrences from this score (docs/pipeline.md)
PROPAGATE_SHARE = 0.1  # ... and where the detection took at least this share of those occurrences itself
PROPAGATE_EVIDENCE = 0.01  # ... and a dictionary noun's only to occurrences the model gives at least this 1 - P(O)
SPREADING_NUMBER = 6  # a model span of digits and punctuation only spreads from this many characters
PROTECTED_WORDS: tuple[str, ...] = (
    # the release's fixed list
    "CCTV", "TV", "KTX", "SRT", "GPS", "ATM", "CPU", "GPU", "SSD", "USB", "PDF", "HTML", "HTTP", "URL", "API", "AI",
    "DNA", "HIV", "IT", "NGO", "신개념", "코스닥", "코스피", "암호화폐", "신원미상", "임원진", "혈중알코올농도", "이메일",
    "주민등록번호", "차량번호", "계좌번호",
    # legal terms in a name's place
    "성명불상", "성명불상자", "신원불상", "신원불상자", "불상자", "공소외", "상피고인", "피고인", "피해자", "고소인",
    "고발인", "증인", "참고인", "변호인", "검사",
)  # fmt: skip
Role = Literal["judge", "prosecutor", "counsel"]


@dataclass(frozen=True)
class PublicationPolicy:
    """What stays in a published judgment and how far a detected text reaches (see the module).

    Args:
        keep_officials: the roles whose names stay in the text, as courts publish them: judge (the signature block),
            prosecutor, counsel (defence counsel, attorneys and their firms, the state's litigation officers); the
            names of the roles left out are replaced, whatever the model says.
        keep_regions: the upper levels of an address stay in the text, as courts mostly publish them: the province,
            city, county and district names a model span starts with (``서울 마포구 월드컵로 12`` -> ``서울 마포구 A``)
            or that are all it holds; false replaces them with the rest, as a court sometimes replaces an address
            whole (docs/pipeline.md).
        legal_text: the model's spans never replace legal text (statute references and names, courts, procedural
            roles and terms, exhibits, precedents, case numbers): true, a list of words to add to the lexicon, or
            false (off).
        protected_words: the model's spans that are only a protected word are dropped: true for the built-in list
            (CCTV, KTX, ATM, 신원미상, ...), a list of words, or none.
        genre_words: common words a model span never propagates: true for the packaged lists (the judgment genre's
            and the general nouns of Korean), a file (one word a line) or a list of words, or false (none).
        propagate_threshold: a model span's text replaces its other occurrences in the document only from this
            score (its tokens' mean 1 - P(O)).
        propagate_share: ... and only where the detection (model and recognizers) took at least this share of the
            text's occurrences itself: a word marked once in a hundred occurrences is the model's slip, not an
            entity the rest of the document names (0: no such condition).
        propagate_evidence: a model span whose text Mecab-ko reads as the common vocabulary of its dictionary
            (a noun ``신호``, ``조합원``, a compound ``계열은행``, a known place ``캄보디아``, an adverb, a verb)
            spreads only to the occurrences where the model itself gives some token at least this 1 - P(O); names,
            unknown and foreign words spread to every occurrence that is a word of its own (0: all of them too).
        spread_names: a text replaced anywhere in the document as a person's name (of the person label or its
            category, two to five Hangul syllables, a surname first) is replaced at every occurrence that is a word
            of its own, whatever its score, the share the detection took, Mecab-ko's reading or the model's evidence
            there, in text the policy keeps too (legal text, a kept official's name); one left all the same fails
            the document (true, the default; false: it spreads as any other text).
    """

    GROUP: ClassVar[str] = "publication policy"
    ADVANCED: ClassVar[tuple[str, ...]] = ("protected_words", "genre_words", "propagate_threshold", "propagate_share",
                                           "propagate_evidence", "spread_names")  # fmt: skip

    keep_officials: list[Role] = field(default_factory=lambda: list(OFFICIAL_ROLES))
    keep_regions: bool = True
    legal_text: bool | list[str] = True
    protected_words: bool | list[str] | None = None
    genre_words: bool | str | list[str] = True
    propagate_threshold: float = PROPAGATE_THRESHOLD
    propagate_share: float = PROPAGATE_SHARE
    propagate_evidence: float = PROPAGATE_EVIDENCE
    spread_names: bool = True

    def __post_init__(self) -> None:
        roles = self.keep_officials
        if isinstance(roles, str) or not isinstance(roles, Sequence):
            raise ValueError(f"keep_officials must be a list of roles among {list(OFFICIAL_ROLES)}, got {roles!r}")
        if unknown := set(roles) - set(OFFICIAL_ROLES):
            raise ValueError(f"keep_officials must be among {list(OFFICIAL_ROLES)}, got {sorted(unknown)}")
        for name in ("keep_regions", "spread_names"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")
        _words(self.legal_text, "legal_text")
        _words(self.protected_words, "protected_words")
        for name in ("propagate_threshold", "propagate_share", "propagate_evidence"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
        self.no_propagation  # a genre-words file that cannot be read fails here, before any document

    @property
    def kept_officials(self) -> tuple[str, ...]:
        """The roles whose names stay, in :data:`~thunder.language.legal.OFFICIAL_ROLES` order."""
        return tuple(role for role in OFFICIAL_ROLES if role in set(self.keep_officials))

    @property
    def replaced_officials(self) -> tuple[str, ...]:
        """The roles whose names are replaced (source ``officials``)."""
        return tuple(role for role in OFFICIAL_ROLES if role not in self.kept_officials)

    @property
    def legal_words(self) -> tuple[str, ...] | None:
        """The words added to the legal lexicon (``()`` for the lexicon alone), None when legal text is off."""
        return _words(self.legal_text, "legal_text")

    @property
    def protected(self) -> frozenset[str]:
        """The protected words."""
        return frozenset(_words(self.protected_words, "protected_words", PROTECTED_WORDS) or ())

    @cached_property
    def no_propagation(self) -> frozenset[str]:
        """The words a model span never propagates: the genre words and, with the packaged lists, the general
        nouns of Korean."""
        general_nouns = frozenset(load_general_nouns()) if self.genre_words is True else frozenset()
        return load_genre_words(self.genre_words) | general_nouns

    def spreads(self, key: str, span: ScoredSpan, marked_share: float = 1.0) -> bool:
        """Whether ``span`` (text ``key``, of whose occurrences the detection took ``marked_share``:
        :func:`thunder.deid.overlaps.marked_shares`) is propagated: always, unless a model span below
        ``propagate_threshold`` or ``propagate_share``, on a word of :attr:`no_propagation`, or a short number (no
        letter, under :data:`SPREADING_NUMBER` characters: ``11`` would spread into every date and amount that holds
        it); a propagated span itself is no seed."""
        if span.source == "model":
            short_number = len(key) < SPREADING_NUMBER and not any(c.isalpha() for c in key)
            return (span.score >= self.propagate_threshold and marked_share >= self.propagate_share
                    and key not in self.no_propagation and not short_number)  # fmt: skip
        return span.source != "propagated"

    def spreads_to(self, key: str, score: float | None) -> bool:
        """Whether a model span's text ``key`` spreads to an occurrence where the model gives at most ``score``
        (``None``: no model output is known there, as for spans sent back by a reviewer): everywhere, unless ``key``
        is the dictionary's common vocabulary (:func:`~thunder.language.morphemes.common_vocabulary`: ``조합원``,
        ``계열은행``, ``캄보디아``, ``더군다나``) and
        ``score`` is under :attr:`propagate_evidence`."""
        if score is None or not self.propagate_evidence:
            return True
        return score >= self.propagate_evidence or not common_vocabulary(key)


def _words(spec: bool | Sequence[str] | None, name: str, builtin: Sequence[str] = ()) -> tuple[str, ...] | None:
    """A word-list option: ``True`` -> ``builtin``, a list -> its words stripped, ``False``/``None`` -> None."""
    if spec is None or spec is False:
        return None
    if spec is True:
        return tuple(builtin)
    if isinstance(spec, str) or not all(isinstance(word, str) and word.strip() for word in spec):
        raise ValueError(f"{name} must be true, false or a list of non-empty words, got {spec!r}")
    return tuple(word.strip() for word in spec)
