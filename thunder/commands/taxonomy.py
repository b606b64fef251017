"""``thunder taxonomy show|check``: print the taxonomy tree, check a corpus's tags against it."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Iterable

from thunder.taxonomy import ALIAS_FILE_NAME, TIER1, Label, Taxonomy, UnknownTagError


def _load_for_data(taxonomy: str | None, data: str | None) -> Taxonomy:
    alias_files = []
    if data is not None and (Path(data) / ALIAS_FILE_NAME).is_file():
        alias_files.append(Path(data) / ALIAS_FILE_NAME)
    return Taxonomy.load(taxonomy, alias_files=alias_files)


def _annotated_root(data: str) -> Path:
    root = Path(data)
    return root / "annotated" if (root / "annotated").is_dir() else root


def _rule_kind(rule: str) -> str:
    return " > ".join(step.split(":", 1)[0] for step in rule.split(" > "))


def check_command(data: str, taxonomy: str | None = None, strict: bool = False) -> None:
    """Check that every tag of an annotated corpus maps to a label.

    Args:
        data: corpus directory (with ``annotated/`` or the ``*.md``/``*.jsonl`` files themselves);
            ``DATA/tag_aliases.json`` is used as an extra alias file when present.
        taxonomy: taxonomy YAML/JSON file (default: the packaged SNU Thunder-DeID taxonomy).
        strict: also fail when a document does not parse (its tags are checked either way).

    Prints documents, tags, mentions, the share mapped, mentions per category and per rule, each unparsable
    document and each unmapped tag with file:line:column; exits non-zero if any tag is unmapped.
    """
    from thunder.documents.annotation import AnnotationError, iter_corpus, read_source, scan_tags

    tax = _load_for_data(taxonomy, data)
    failures: list[AnnotationError] = []
    tags: Counter[str] = Counter()
    per_category: Counter[str] = Counter()
    per_rule: Counter[str] = Counter()
    unmapped: dict[str, list[str]] = {}
    documents = mentions = 0

    def check(tag: str, where: str) -> None:
        tags[tag] += 1
        try:
            resolution = tax.resolve(tag)
        except UnknownTagError:
            unmapped.setdefault(tag, []).append(where)
            return
        per_category[resolution.label.category] += 1
        per_rule[_rule_kind(resolution.rule)] += 1

    for doc in iter_corpus(_annotated_root(data), errors="skip", failures=failures):
        documents += 1
        mentions += len(doc.placeholders)
        for placeholder in doc.placeholders:
            check(placeholder.tag, f"{doc.source}:{placeholder.line}:{placeholder.column}")
    failed_tags = 0
    for error in failures:
        for tag, line, column in scan_tags(read_source(error.source) or ""):
            failed_tags += 1
            check(tag, f"{error.source}:{line}:{column}")
    total = sum(tags.values())
    mapped = total - sum(len(places) for places in unmapped.values())
    share = 100.0 * mapped / total if total else 100.0
    print(f"taxonomy: {tax.name} ({tax.origin}; {len(tax.labels)} labels, fingerprint {tax.fingerprint()})")
    print(f"extra alias files: {', '.join(src for src, _ in tax.extra_aliases) or 'none'}")
    print(f"documents: {documents + len(failures)} ({documents} parsed, {len(failures)} unparsable)")
    print(f"mentions: {mentions} placeholders in parsed documents + {failed_tags} tags in unparsable ones")
    print(f"raw tags: {len(tags)} distinct, {len(tags) - len(unmapped)} mapped")
    print(f"tag occurrences: {total}, mapped {mapped} ({share:.2f}%)")
    print("\nmapped occurrences per category:")
    for category, count in per_category.most_common():
        print(f"  {category:<20} {count:>7}  ({tax.category_tier1(category)})")
    print("\nmapped occurrences per rule:")
    for rule, count in per_rule.most_common():
        print(f"  {rule:<40} {count:>7}")
    for error in failures:
        print(f"UNPARSABLE {error}")
    for tag, places in sorted(unmapped.items(), key=lambda item: -len(item[1])):
        shown = ", ".join(places[:5]) + (f", ... ({len(places)} in all)" if len(places) > 5 else "")
        print(f"UNMAPPED {tag!r}: {shown}")
    if unmapped or (strict and failures):
        sys.exit(1)


def show_command(tier: int | None = None, taxonomy: str | None = None, data: str | None = None) -> None:
    """Print the taxonomy tree.

    Args:
        tier: print down to this tier only: 1 (direct/quasi counts), 2 (categories and subcategories),
            3 or none (every label with tier 1 and mention source).
        taxonomy: taxonomy YAML/JSON file (default: the packaged SNU Thunder-DeID taxonomy).
        data: annotated corpus directory; adds the number of mentions per label, subcategory and category.
    """
    if tier not in (None, 1, 2, 3):
        raise ValueError(f"tier must be 1, 2 or 3, got {tier!r}")
    tax = _load_for_data(taxonomy, data)
    counts: Counter[str] = Counter()
    skipped: list = []
    if data is not None:
        from thunder.documents.annotation import iter_corpus

        for doc in iter_corpus(_annotated_root(data), errors="skip", failures=skipped):
            for placeholder in doc.placeholders:
                try:
                    counts[tax.resolve(placeholder.tag).label.name] += 1
                except UnknownTagError:
                    counts["<unmapped>"] += 1

    def count(labels: Iterable[Label]) -> str:
        return f"  [{sum(counts[l.name] for l in labels)}]" if data is not None else ""

    print(f"{tax.name}: {len(tax.labels)} labels, {len(tax.categories)} categories (fingerprint {tax.fingerprint()})")
    if tier == 1:
        for level in TIER1:
            labels = [l for l in tax.labels.values() if l.tier1 == level]
            print(f"{level}: {len(labels)} labels{count(labels)}")
        return
    for category, labels in tax.categories.items():
        print(f"{category} ({tax.category_tier1(category)}){count(labels)}")
        subcategories: dict[str, list[Label]] = {}
        for label in labels:
            subcategories.setdefault(label.subcategory, []).append(label)
        for subcategory, sub_labels in subcategories.items():
            print(f"  {subcategory or '-'}{count(sub_labels)}")
            if tier == 2:
                continue
            for label in sub_labels:
                print(f"    {label.name}  {label.tier1}  {label.source}{count([label])}")
    if data is not None and skipped:
        print(f"({len(skipped)} malformed documents not counted; `thunder taxonomy check` lists them)")
    if counts.get("<unmapped>"):
        print(f"unmapped mentions: {counts['<unmapped>']}")
