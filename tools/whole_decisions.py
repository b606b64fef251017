"""Whole published decisions nobody tuned on: what a de-identifier replaces in them, and what it leaks once the
courts' marks are filled with names and organisations.

Both sets are legal-ko's held-out share (:func:`thunder.documents.corpus.held_out`: never read by training, nor used
to choose any word of a list), read whole, beside ``benchmarks/precedents`` (the set the pipeline was tuned on):

1. **published**: every held-out decision as the court published it (307: criminal 36, family 42, civil 46, tax 58,
   administrative 62, patent 63). Nearly every replaced character is over-redaction, but for the persons' names
   older decisions published in clear. Per kind: the share of non-whitespace characters replaced, the share of the
   text replaced on what Mecab-ko reads as a person's name (``임광순``), the share of what is replaced that is
   propagated (another occurrence of a detected text), and the propagated spans that sit inside a longer word
   (``신호`` in ``신호등``: none should).
2. **filled**: the held-out decisions from 1995 on whose text names no company in clear (as
   :func:`thunder.documents.published.read_published` reads them), every court mark that stood for an identifier
   (``피고인 1``, ``소외 2``, ``甲``, ``○○○``, ``○○병원``) filled once with a mention training never saw (the recipe's
   held-back part of the mention lists, its seed), particles fixed: every filled mark is a gold span. Per kind: names
   leaked, organisations leaked (companies, organisations, institutions), the other labels, and the share of the
   text outside the gold spans replaced; the names whose last syllable Mecab-ko reads as a verb, suffix, ending or
   particle (``정미|하``) as a group of their own.

    PYTHONPATH=. .venv/bin/python tools/whole_decisions.py --model runs/small/finetune/checkpoints/last.ckpt \\
        --cache /tmp/whole-decisions

``--policy`` sets publication policy options as JSON (``'{"propagate_evidence": 0}'``); ``--cache DIR`` keeps the
model's outputs of each set (``tools/prediction_cache.py``), so a run with another policy skips the model.
``--development N`` measures N decisions of legal-ko's training share instead (drawn with a fixed seed, both sets
made of them the same way): a set to find and try a rule on, so that the held-out share only measures it.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from prediction_cache import cached_predictions  # tools/prediction_cache.py

from thunder.commands.evaluate import RecipeOptions
from thunder.data import Filler
from thunder.deid.pipeline import Deidentifier, DeidResult, PipelineOptions
from thunder.deid.overlaps import word_of_its_own
from thunder.deid.policy import PublicationPolicy
from thunder.documents.corpus import plan, records
from thunder.documents.published import read_published
from thunder.evaluation.evaluate import evaluate
from thunder.evaluation.report import EvaluationReport, LeakCount
from thunder.language.morphemes import inside_word, is_person, word_analysis
from thunder.synthesis.synthesizer import SynthesizedDocument

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "legal-ko" / "precedents.jsonl.xz"
PRECEDENTS = ROOT / "benchmarks" / "precedents" / "precedents.jsonl"
NAME = "내국인이름"
ORGANISATIONS = frozenset({"사업체", "조직", "기관및시설"})  # the taxonomy's categories of companies and bodies
VERB_LIKE = ("V", "XS", "E", "J")  # parts of speech of a last syllable that reads as no part of a name


def verb_like(name: str) -> bool:
    """Whether Mecab-ko reads the last syllable of ``name`` as a verb, suffix, ending or particle (``정미|하``)."""
    morphemes = word_analysis(name.replace(" ", ""))
    return bool(morphemes) and morphemes[-1][1].startswith(VERB_LIKE)


def name_survivors(deid: Deidentifier, text: str, result: DeidResult) -> Counter[str]:
    """The occurrences, as words of their own, of a text the result replaced as a person's name
    (:meth:`~thunder.deid.pipeline.Deidentifier.person_names`: no common noun the model gave a person's label) that its
    output still holds in clear (issue 79: none should)."""
    return Counter(name for name in deid.person_names(text, result.spans)
                   for m in re.finditer(re.escape(name), result.text)
                   if word_of_its_own(result.text, m.start(), m.end()))  # fmt: skip


def published_figures(docs: list[dict], results: list[DeidResult], deid: Deidentifier,
                      survivors_seen: Counter[str]) -> dict[str, dict[str, int]]:  # fmt: skip
    """Per kind (and ``all``): documents, non-whitespace characters, replaced, of it persons' names
    (:func:`~thunder.language.morphemes.is_person`) and propagated, propagated spans inside a longer word, and
    found-name survivors (:func:`name_survivors`; their texts counted into ``survivors_seen``)."""
    figures: dict[str, Counter[str]] = defaultdict(Counter)
    for record, result in zip(docs, results):
        text = record["text"]
        for kind in (record["kind"], "all"):
            row = figures[kind]
            row["documents"] += 1
            row["characters"] += sum(not c.isspace() for c in text)
            survivors = name_survivors(deid, text, result)
            row["survivors"] += survivors.total()
            if kind == "all":
                survivors_seen.update(survivors)
            for span in result.spans:
                replaced = sum(not c.isspace() for c in text[span.start : span.end])
                row["replaced"] += replaced
                # a person's name by Mecab-ko: what older decisions published in clear, and a court removes today
                named = is_person(word_analysis("".join(text[span.start : span.end].split())))
                row["names"] += replaced if named else 0
                if span.source == "propagated":
                    row["propagated"] += replaced
                    row["inside_words"] += inside_word(text, span.start, span.end)
    return {kind: dict(row) for kind, row in sorted(figures.items())}


def filled_figures(documents: list[SynthesizedDocument], report: EvaluationReport, results: dict[str, DeidResult],
                   deid: Deidentifier) -> dict[str, object]:  # fmt: skip
    """Leaks of names (and of verb-like names apart), organisations and the rest, from one report, found-name
    survivors (:func:`name_survivors`) and the texts of the names and organisations leaked."""
    leaked = {(m.doc_id, m.start, m.end) for m in report.leaked}
    groups: dict[str, LeakCount] = defaultdict(LeakCount)
    labels = report.label_tiers  # label -> (tier 1, category)
    for doc in documents:
        for span in doc.spans:
            category = labels.get(span.label, ("", ""))[1]
            group = "names" if span.label == NAME else "organisations" if category in ORGANISATIONS else "other"
            is_leak = (doc.doc_id, span.start, span.end) in leaked
            groups[group].add(is_leak, False)
            if group == "names" and verb_like(doc.text[span.start : span.end]):
                groups["names, verb-like ending"].add(is_leak, False)
    return {
        **{group: {"mentions": count.mentions, "leaked": count.leaked} for group, count in sorted(groups.items())},
        "over_redaction": report.over_redaction,
        "survivors": sum(name_survivors(deid, doc.text, results[doc.text]).total() for doc in documents),
        "leaked_names": [m.text for m in report.leaked if m.label == NAME],
        "leaked_organisations": [m.text for m in report.leaked if labels.get(m.label, ("", ""))[1] in ORGANISATIONS],
    }


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.2f}%" if whole else "–"


def run(deid: Deidentifier, texts: list[str], cache: Path | None, name: str, model: str | None) -> list[DeidResult]:
    """``deid``'s results on ``texts``, the model's outputs read from (or written to) ``cache/name.json``."""
    key = {"model": model, "threshold": deid.operating_point.threshold, "set": name}
    path = cache / f"{name}.json" if cache else None
    predictions = cached_predictions(deid, texts, key, path, deid.batch_size)
    return [deid.finish(text, prediction) for text, prediction in zip(texts, predictions)]


def _sample(items: list, size: int | None) -> list:
    """``size`` of ``items`` drawn with a fixed seed, in their order; all of them where ``size`` is ``None``."""
    if size is None or size >= len(items):
        return items
    return [items[i] for i in sorted(random.Random(0).sample(range(len(items)), size))]


def published_table(figures: dict[str, dict[str, dict[str, int]]]) -> list[str]:
    lines = ["| set | kind | documents | replaced | persons' names (of the text) | propagated (of replaced) "
             "| propagated inside a word | found-name survivors |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, kinds in figures.items():
        for kind, row in kinds.items():
            lines.append(f"| {name} | {kind} | {row['documents']} | {_pct(row.get('replaced', 0), row['characters'])} | "
                         f"{_pct(row.get('names', 0), row['characters'])} | "
                         f"{_pct(row.get('propagated', 0), row.get('replaced', 0))} | {row.get('inside_words', 0)} | "
                         f"{row.get('survivors', 0)} |")
    return lines


def filled_table(figures: dict[str, dict]) -> list[str]:
    groups = ("names", "names, verb-like ending", "organisations", "other")
    lines = ["| kind | " + " | ".join(f"{g} leaked" for g in groups) + " | over-redaction | found-name survivors |",
             "|---|" + "---|" * (len(groups) + 2)]  # fmt: skip
    for kind, row in figures.items():
        cells = [f"{_pct(row[g]['leaked'], row[g]['mentions'])} ({row[g]['leaked']}/{row[g]['mentions']})"
                 if g in row else "–" for g in groups]  # fmt: skip
        lines.append(f"| {kind} | " + " | ".join(cells) + f" | {100 * row['over_redaction']:.2f}% | {row['survivors']} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="export directory or .ckpt")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="legal-ko decisions (default: %(default)s)")
    parser.add_argument("--precedents", type=Path, default=PRECEDENTS, help="the tuning set, side by side")
    parser.add_argument("--policy", default="{}", help="publication policy options as JSON (default: its defaults)")
    parser.add_argument("--cache", type=Path, help="folder for the model's outputs of each set")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument("--development", type=int, metavar="N",
                        help="N decisions of the training share instead of the held-out share, to develop rules on")  # fmt: skip
    args = parser.parse_args(argv)
    part, share, tag = ("held_out", "held-out", "") if args.development is None else \
        ("train", "training sample", f"-train{args.development}")  # fmt: skip
    try:
        policy = json.loads(args.policy)
        if not isinstance(policy, dict):
            raise ValueError(f"--policy must be a JSON object of policy options, got {args.policy!r}")
        deid = PipelineOptions(model=args.model).build(PublicationPolicy(**policy))
        if args.development is not None and args.development < 1:
            raise ValueError(f"--development must be a number of decisions of 1 or more, got {args.development}")
        decisions = _sample([r for s in plan([args.corpus]) for r in records(s, part) if r.get("kind") != "statute"],
                            args.development)  # fmt: skip
        tuned = [r for s in plan([args.precedents]) for r in records(s, "all")]
        recipe, source = RecipeOptions().recipe(args.model)
        if not recipe.mention_holdout:
            raise ValueError(f"the recipe of {source} holds back no mentions (mention_holdout 0): filled decisions "
                             "need mentions training never saw")  # fmt: skip
    except (OSError, ValueError, TypeError) as error:
        print(f"whole_decisions: {error}", file=sys.stderr)
        return 2
    if args.cache:
        args.cache.mkdir(parents=True, exist_ok=True)
    published, survivors_seen = {}, Counter()
    for name, docs, key in (("precedents (tuned on)", tuned, "precedents"),
                            (f"legal-ko {share}", decisions, f"legal-ko{tag}")):  # fmt: skip
        published[name] = published_figures(docs, run(deid, [r["text"] for r in docs], args.cache, key, args.model),
                                            deid, survivors_seen)  # fmt: skip

    filler = Filler(recipe, deid.taxonomy)
    synthesizer = filler.synthesizer("heldout")
    marked = _sample(read_published([args.corpus], deid.taxonomy, chunk_chars=sys.maxsize, keep_marks=0, part=part),
                     args.development)  # fmt: skip
    documents = [synthesizer(doc, epoch=0) for doc in marked]
    results = dict(zip([d.text for d in documents], run(deid, [d.text for d in documents], args.cache,
                                                         f"filled{tag}", args.model)))  # fmt: skip
    filled = {}
    for kind in sorted({doc.case_type for doc in marked}) + ["all"]:
        chosen = [d for d, m in zip(documents, marked) if kind in ("all", m.case_type)]
        report = evaluate(lambda text: results[text], chosen, taxonomy=deid.taxonomy, tokenizer=deid.tokenizer)
        filled[kind] = filled_figures(chosen, report, results, deid)
    print("## Published decisions as published\n")
    print("\n".join(published_table(published)))
    print(f"\n## Decisions of the {share} with filled marks ({len(documents)} decisions)\n")
    print("\n".join(filled_table(filled)))
    print("\nLeaked names: " + ", ".join(filled["all"]["leaked_names"]))
    print("Leaked organisations: " + ", ".join(filled["all"]["leaked_organisations"]))
    print("Found-name survivors of the published decisions, most common: "
          + ", ".join(f"{text} {count}" for text, count in survivors_seen.most_common(30)))  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps({"published": published, "filled": filled, "policy": policy,
                                         "model": args.model}, ensure_ascii=False, indent=1) + "\n")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
