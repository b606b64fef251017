"""Noun substitution: training reads the general nouns of its judgments replaced by others, as ordinary text.

The corpus's judgments hold the vocabulary of a few kinds of criminal case; a word the model never read (``왜곡``,
``발병``, ``교장`` in a civil or administrative judgment) looks to it like a name, and it replaces it. A training
recipe with ``substitute_nouns`` (:class:`thunder.data.Recipe`) lets the synthesizer replace, every epoch, that share
of the general nouns outside identifiers by nouns drawn from :data:`GENERAL_NOUNS_FILE` (general nouns of Korean,
``tools/general_nouns.py``), labelled ``O`` like the rest of the text: the model learns that an unfamiliar noun is
not an identifier for being unfamiliar, only where the text says it stands for someone.

A word is a run of Hangul; it is replaced only when Mecab-ko reads it as one general noun (``NNG``) of two syllables
or more, alone or followed by particles, which are then made to agree with the new noun (``가방과`` -> ``교실과``,
``지갑을`` -> ``가족을``). A word inside or touching an identifier, and the word right before and
after one (its context: ``피해자 A``, ``B 식당``), are never replaced, nor the words that carry a judgment's structure:
its procedural roles and terms (:data:`thunder.language.legal.TERMS_FILE`: ``피고인``, ``원심``, ``대법관``) and the common words of
the genre (:data:`thunder.language.genre.GENRE_WORDS_FILE`: ``피해자``, ``사무실``). Validation and test fillings are never
substituted.

The same nouns serve the pipeline: a model span that is exactly one of them is not propagated through the document
(:class:`thunder.deid.pipeline.Deidentifier`, ``genre_words``).
"""

from __future__ import annotations

import bisect
import random
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path

from thunder.language.genre import load_genre_words
from thunder.language.legal import TERMS_FILE, read_lexicon
from thunder.language.morphemes import word_analysis
from thunder.language.particles import PARTICLE_RUN, fix_particle
from thunder.seeds import stable_seed
from thunder.synthesis.synthesizer import SynthesizedDocument

__all__ = ["GENERAL_NOUNS_FILE", "NounSubstitution", "load_general_nouns", "structural_words"]

GENERAL_NOUNS_FILE = Path(str(resources.files("thunder") / "resources" / "vocabulary" / "general_nouns.txt"))
_HANGUL_RUN = re.compile(r"[가-힣]+")


@lru_cache(maxsize=4)
def load_general_nouns(path: str | None = None) -> tuple[str, ...]:
    """The nouns of a list file (one a line, ``#`` comments; default :data:`GENERAL_NOUNS_FILE`)."""
    source = Path(path) if path is not None else GENERAL_NOUNS_FILE
    try:
        nouns = tuple(read_lexicon(source))
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"general nouns: cannot read {source}: {error}") from None
    if not nouns:
        raise ValueError(f"general nouns: {source} lists no noun")
    return nouns


def structural_words() -> frozenset[str]:
    """The words substitution keeps: procedural roles and terms, and the packaged genre words."""
    return frozenset(read_lexicon(TERMS_FILE)) | load_genre_words(True)


def _general_noun(word: str) -> int:
    """The length of the general noun ``word`` starts with when the rest is particles only (else 0)."""
    morphemes = word_analysis(word)
    if not morphemes:
        return 0
    surface, part_of_speech, _ = morphemes[0]
    if part_of_speech != "NNG" or len(surface) < 2 or not word.startswith(surface):
        return 0
    rest = word[len(surface) :]
    return len(surface) if not rest or PARTICLE_RUN.fullmatch(rest) else 0


@dataclass(frozen=True)
class NounSubstitution:
    """Replace ``share`` of the general nouns of a synthesized document outside identifiers and their neighbouring
    words by nouns of ``nouns`` (default: the packaged list), drawn per (seed, epoch, document); nouns of ``kept``
    (default: :func:`structural_words`) stay."""

    share: float
    seed: int = 0
    nouns: tuple[str, ...] = field(default_factory=load_general_nouns)
    kept: frozenset[str] = field(default_factory=structural_words)

    def __post_init__(self) -> None:
        if not 0 <= self.share <= 1:
            raise ValueError(f"substitute_nouns must be in [0, 1], got {self.share}")

    def __call__(self, doc: SynthesizedDocument, epoch: int = 0) -> SynthesizedDocument:
        if self.share == 0:
            return doc
        rng = random.Random(stable_seed(self.seed, epoch, doc.doc_id, "nouns"))
        words = list(_HANGUL_RUN.finditer(doc.text))
        starts = [word.start() for word in words]
        kept = set()
        for span in doc.spans:  # the words a span touches, and one word each side
            first = bisect.bisect_right(starts, span.start) - 1
            last = bisect.bisect_left(starts, span.end)
            kept.update(range(max(0, first - 1), min(len(words), last + 1)))
        edits: list[tuple[int, int, str]] = []
        for index, word in enumerate(words):
            if index in kept or rng.random() >= self.share:
                continue
            noun_length = _general_noun(word.group())
            if noun_length and word.group()[:noun_length] not in self.kept:
                noun = rng.choice(self.nouns)
                edits.append((word.start(), word.end(), noun + fix_particle(noun, word.group()[noun_length:])))
        if not edits:
            return doc
        parts, shifts, cursor, shift = [], [], 0, 0  # shifts: (original offset, shift of everything from there)
        for start, end, new in edits:
            parts += [doc.text[cursor:start], new]
            shift += len(new) - (end - start)
            shifts.append((end, shift))
            cursor = end
        parts.append(doc.text[cursor:])
        ends = [end for end, _ in shifts]

        def moved(offset: int) -> int:
            before = bisect.bisect_right(ends, offset) - 1
            return offset + (shifts[before][1] if before >= 0 else 0)

        spans = tuple(replace(s, start=moved(s.start), end=moved(s.end)) for s in doc.spans)
        return SynthesizedDocument(doc.doc_id, "".join(parts), spans)
