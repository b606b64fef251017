"""Sort the leaked mentions of ``thunder evaluate --json`` reports by cause: what the pipeline keeps on purpose, what
the corpus's own annotators leave outside their spans, what its training text writes unmarked, what the model missed.

    .venv/bin/python tools/leak_causes.py REPORT.json [REPORT.json ...] [--model CKPT] [--min_unmarked 5] [--top 5]
        [--json FILE]

Each leaked mention gets the first cause that applies:

- ``regions kept``: only the province, city, county or district names that begin an address survived
  (:func:`thunder.language.regions.upper_units`, what ``keep_regions`` keeps: ``서울 마포구`` of ``서울 마포구 월드컵로 12``);
- ``head noun outside``: only the label's generic head noun that ends the mention survived (``교회`` of ``순복음인천교회``
  under 교회), for a label whose training placeholders the annotators mostly follow with that noun
  (:func:`thunder.synthesis.synthesizer.head_outside_labels`: ``thunder evaluate --head_nouns corpus`` scores
  without them);
- ``written unmarked in training``: the training split's text, outside its placeholders, writes the mention at the
  start of a word at least ``--min_unmarked`` times (``사무실``, ``구글``; a bare number with the unit after it:
  ``7층``): the corpus the model learnt from calls that text an ordinary word;
- ``missed``: the rest.

The training split is the one of the recipe stored with the model the report evaluated (``meta.model``; ``--model``
names another), read as ``thunder evaluate`` reads it, whatever data the report scored (the gold set's too). The
tables give each cause's leaked mentions per tier and as a share of the report's mentions; with several reports also
their sum.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from thunder.commands.evaluate import RecipeOptions
from thunder.data.recipe import Filler
from thunder.documents.annotation import AnnotatedDocument
from thunder.language.regions import upper_units
from thunder.model.loader import Artefact
from thunder.synthesis.synthesizer import head_outside_labels
from thunder.taxonomy import UnknownTagError, head_noun

CAUSES = ("regions kept", "head noun outside", "written unmarked in training", "missed")
TIERS = ("direct", "quasi")
_WORD_START = r"(?<![가-힣A-Za-z0-9])"


class UnmarkedText:
    """Counts, in documents' text outside their placeholders, how often a text begins a word."""

    def __init__(self, documents: Iterable[AnnotatedDocument]) -> None:
        parts = []
        for doc in documents:
            chars = list(doc.text)
            for p in doc.placeholders:
                chars[p.start : p.end] = "\0" * (p.end - p.start)
            parts.append("".join(chars))
        self._text = "\n".join(parts)
        self._counts: dict[str, int] = {}

    def count(self, text: str) -> int:
        if text not in self._counts:
            self._counts[text] = len(re.findall(_WORD_START + re.escape(text), self._text))
        return self._counts[text]


def _parts(survived: str) -> list[str]:
    return [part.strip() for part in survived.split("…") if part.strip()]


def regions_kept(mention: Mapping[str, Any]) -> bool:
    """Only the upper units that begin the mention survived."""
    units = upper_units(mention["text"])
    return bool(mention["partial"] and units) and " ".join(_parts(mention["survived"])).split() == (
        mention["text"][: units[-1][1]].split()
    )


def head_noun_outside(mention: Mapping[str, Any], head_outside: Mapping[str, Collection[str]]) -> bool:
    """Only the head noun ending the mention survived (the longest tail it shares with the label's name or one of
    the label's raw tags: ``호`` of ``2203호`` under 호실), where the corpus keeps that noun outside."""
    label = mention["label"]
    if not mention["partial"] or label not in head_outside:
        return False
    head = max((head_noun(mention["text"].rstrip(), word) for word in (label, *head_outside[label])), key=len)
    return bool(head) and _parts(mention["survived"]) == [head]


def written_form(mention: Mapping[str, Any]) -> str:
    """The mention's text as a word of running text: a bare number with the character after it (its unit)."""
    text = mention["text"].strip()
    return text + mention["right"][:1] if text.isdigit() else text


def cause(
    mention: Mapping[str, Any], head_outside: Mapping[str, Collection[str]], unmarked: UnmarkedText, min_unmarked: int
) -> str:
    """The first of :data:`CAUSES` that applies to a leaked mention of a report."""
    if regions_kept(mention):
        return CAUSES[0]
    if head_noun_outside(mention, head_outside):
        return CAUSES[1]
    if unmarked.count(written_form(mention)) >= min_unmarked:
        return CAUSES[2]
    return CAUSES[3]


Training = Callable[[str], tuple[dict[str, set[str]], UnmarkedText]]


class ModelTraining:
    """The training split of the recipe stored with a model, as ``thunder evaluate`` reads it, read once per model:
    the labels whose head nouns it keeps outside, each with the raw tags written for it there, and its unmarked text."""

    def __init__(self) -> None:
        self._read: dict[str, tuple[dict[str, set[str]], UnmarkedText]] = {}

    def __call__(self, model: str) -> tuple[dict[str, set[str]], UnmarkedText]:
        if model not in self._read:
            artefact = Artefact.open(model)
            if artefact.recipe() is None:
                raise ValueError(f"{model} stores no training recipe: no training split to read")
            recipe, _ = RecipeOptions().recipe(model)
            taxonomy = artefact.classifier(weights=False).label_set.taxonomy
            if recipe.alias_files:
                taxonomy = taxonomy.with_alias_files(recipe.alias_files)
            train = Filler(recipe, taxonomy).documents()["train"]
            tags: dict[str, set[str]] = {label: set() for label in head_outside_labels(train, taxonomy)}
            for doc in train:
                for p in doc.placeholders:
                    try:
                        label = taxonomy.resolve(p.tag).label.name
                    except UnknownTagError:
                        continue
                    if label in tags:
                        tags[label].add("".join(p.tag.split()))
            self._read[model] = (tags, UnmarkedText(train))
        return self._read[model]


def tally(report: Mapping[str, Any], training: Training, min_unmarked: int, model: str | None = None
          ) -> tuple[Counter, dict[str, Counter]]:  # fmt: skip
    """(leaked mentions per (cause, tier), the leaked texts per cause) of one report, against the training split of
    ``model`` (by default the one the report evaluated)."""
    model = model or report["meta"].get("model")
    if not model:
        raise ValueError("the report names no model (a recognizers-only run): --model names the one to read")
    head_outside, unmarked = training(model)
    counts: Counter = Counter()
    texts: dict[str, Counter] = {c: Counter() for c in CAUSES}
    for mention in report["leaked_mentions"]:
        found = cause(mention, head_outside, unmarked, min_unmarked)
        counts[found, mention["tier1"]] += 1
        texts[found][mention["text"]] += 1
    return counts, texts


def table(name: str, counts: Counter, mentions: Mapping[str, int], texts: Mapping[str, Counter], top: int) -> str:
    total = sum(mentions.values())
    header = "| cause | direct | quasi | all | of all mentions | most leaked texts |"
    lines = [f"## {name}", "", header, "|---|---|---|---|---|---|"]
    for c in (*CAUSES, None):
        row = {t: sum(n for (k, tier), n in counts.items() if tier == t and (c is None or k == c)) for t in TIERS}
        share = f"{sum(row.values()) / total:.2%}" if total else "–"
        common = ", ".join(f"{t} {n}" for t, n in texts[c].most_common(top)) if c else ""
        cells = (c or "all leaks", row["direct"], row["quasi"], sum(row.values()), share, common)
        lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    lines.append(f"\nmentions: {total} ({', '.join(f'{t} {n}' for t, n in mentions.items())})")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", help="JSON reports of thunder evaluate --json")
    parser.add_argument("--min_unmarked", type=int, default=5, help="unmarked occurrences that make a text ordinary")
    parser.add_argument("--top", type=int, default=5, help="leaked texts shown per cause")
    parser.add_argument("--model", help="the model whose training split to read (default: each report's own)")
    parser.add_argument("--json", help="write the counts here")
    args = parser.parse_args(argv)
    if args.min_unmarked < 1:
        parser.error(f"--min_unmarked must be at least 1, got {args.min_unmarked}")
    training, out = ModelTraining(), {}
    summed, summed_mentions, summed_texts = Counter(), Counter(), {c: Counter() for c in CAUSES}
    for path in args.reports:
        try:
            report = json.loads(Path(path).read_text(encoding="utf-8"))
            counts, texts = tally(report, training, args.min_unmarked, args.model)
            mentions = {t: report["leaks"]["by_tier1"].get(t, {}).get("mentions", 0) for t in TIERS}
        except (OSError, ValueError, KeyError) as error:
            print(f"leak_causes: {path}: {error}", file=sys.stderr)
            return 2
        print(table(path, counts, mentions, texts, args.top) + "\n")
        summed.update(counts)
        summed_mentions.update(mentions)
        for c in CAUSES:
            summed_texts[c].update(texts[c])
        out[path] = {f"{c}/{t}": counts[c, t] for c in CAUSES for t in TIERS} | {"mentions": mentions}
    if len(args.reports) > 1:
        print(table(f"{len(args.reports)} reports together", summed, summed_mentions, summed_texts, args.top))
    if args.json:
        Path(args.json).write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
