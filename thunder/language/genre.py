"""Common words of the judgment genre, measured by document frequency over a corpus of judgments.

A model span whose text is such a word (``원심``, ``피해자``, ``사무실``) is replaced where the model found it, but its
other occurrences are not replaced with it: one doubtful span on a common word must not spread through a document
(:func:`thunder.deid.pipeline.Deidentifier.apply`). The packaged list (:data:`GENRE_WORDS_FILE`) is measured by
``tools/genre_words.py`` over Thunder's own demo corpus; a court can measure one over its own judgments and pass it
as ``--genre_words FILE``.

A word is a run of Hangul between non-Hangul characters, counted also without its particles (``피해자에게`` ->
``피해자``); a placeholder of an annotated judgment is no word (an identifier is never counted as common).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path

from thunder.language.particles import PARTICLE_RUN, run_agrees

__all__ = ["GENRE_WORDS_FILE", "common_words", "document_frequencies", "load_genre_words", "words_of"]

GENRE_WORDS_FILE = Path(str(resources.files("thunder") / "resources" / "legal" / "genre_words.txt"))
_HANGUL_RUN = re.compile(r"[가-힣]+")


def words_of(text: str) -> set[str]:
    """The distinct words of ``text`` (two syllables or more), each also without a particle that agrees with it
    (``피고인은`` -> ``피고인은``, ``피고인``)."""
    words = set()
    for run in _HANGUL_RUN.findall(text):
        words.add(run)
        for cut in range(max(2, len(run) - 4), len(run)):
            found = PARTICLE_RUN.fullmatch(run, cut)
            if found and run_agrees(run[:cut], run[cut:]):
                words.add(run[:cut])
                break
    return {word for word in words if len(word) >= 2}


def document_frequencies(texts: Iterable[str]) -> tuple[Counter[str], int]:
    """How many of ``texts`` hold each word, and how many texts there were."""
    counts: Counter[str] = Counter()
    documents = 0
    for text in texts:
        counts.update(words_of(text))
        documents += 1
    return counts, documents


def common_words(texts: Iterable[str], min_share: float = 0.02, min_documents: int = 3) -> list[tuple[str, int]]:
    """``(word, documents)`` of the words found in at least ``min_share`` of ``texts`` (and ``min_documents``), most
    frequent first."""
    if not 0 < min_share <= 1:
        raise ValueError(f"min_share must lie in (0, 1], got {min_share}")
    counts, documents = document_frequencies(texts)
    least = max(min_documents, min_share * documents)
    return sorted(((w, n) for w, n in counts.items() if n >= least), key=lambda item: (-item[1], item[0]))


def load_genre_words(spec: bool | str | Sequence[str] | None) -> frozenset[str]:
    """``True``: the packaged list; a path: a list file (one word a line, optionally followed by a tab and its
    count; ``#`` comments); a list: those words; ``False``/``None``: none (every detection may spread)."""
    if spec is None or spec is False:
        return frozenset()
    if spec is True:
        spec = str(GENRE_WORDS_FILE)
    if isinstance(spec, (str, Path)):
        try:
            lines = Path(spec).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise ValueError(f"genre words: cannot read {spec}: {error}") from None
        return frozenset(line.split("\t")[0].strip() for line in lines if line.strip() and not line.startswith("#"))
    if not all(isinstance(word, str) and word.strip() for word in spec):
        raise ValueError(f"genre words must be true, false, a file or a list of non-empty words, got {spec!r}")
    return frozenset("".join(word.split()) for word in spec)
