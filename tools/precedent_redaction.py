"""How much of a published court decision a de-identifier replaces, and what it replaces.

Korean court decisions are not protected by copyright (Copyright Act art. 7) and the courts publish them already
de-identified, so on ``benchmarks/precedents/precedents.jsonl`` nearly every replaced character is over-redaction.
This prints, over the whole set, the share of characters replaced (of the non-whitespace characters, the
denominator of ``thunder evaluate``'s over-redaction, and of all characters) broken down

- by the replaced span's source: ``model``, ``propagated`` (another occurrence of a detected text) or a recognizer;
- by the decision's kind (civil, criminal, administrative, family, tax, patent);
- by the kind of text replaced: statute references (``형법 제62조 제1항``, ``제62조의2``), court names
  (``서울고등법원``, ``대구가정법원 안동지원``), procedural roles and terms (원고, 피고인, 원심, 재판장, 상고이유, 소외 ...),
  names the courts publish (judges in the signature, prosecutors, counsel), the courts' own de-identification marks
  (``피고인 1``, ``공소외 2``, ``○○○``: :mod:`thunder.language.court_marks`; replacing one hides nothing) and everything
  else;

and the most often replaced texts. The categories are regular expressions over the original text, written for this
report (a character matched by several counts once, in the order above).

    PYTHONPATH=. .venv/bin/python tools/precedent_redaction.py --model runs/small/finetune/checkpoints/last.ckpt
    PYTHONPATH=. .venv/bin/python tools/precedent_redaction.py            # the recognizers alone
    PYTHONPATH=. .venv/bin/python tools/precedent_redaction.py --model M \
        --data ../shared/corpus/legal-ko/precedents.jsonl.xz --part held_out   # legal-ko's held-out decisions

``--data`` is any JSONL (or ``.jsonl.xz``) of ``{id, kind, text}`` records; ``--part held_out`` reads only the held-out
share of a corpus that training reads the rest of (:func:`thunder.documents.corpus.held_out`), ``all`` (the default)
every record. ``--policy`` sets the publication policy's options (:class:`thunder.deid.policy.PublicationPolicy`, as
JSON: ``'{"propagate_share": 0}'``); with ``--cache`` the model's outputs are kept in a file, so that a run with
another policy skips the model (``tools/prediction_cache.py``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from prediction_cache import cached_predictions  # tools/prediction_cache.py

from thunder.deid.pipeline import DeidResult, PipelineOptions
from thunder.deid.policy import PublicationPolicy
from thunder.documents.corpus import PARTS, plan
from thunder.documents.corpus import records as corpus_records
from thunder.language.court_marks import court_marks

DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "precedents" / "precedents.jsonl"
CATEGORIES = ("statute reference", "court name", "procedural term", "published official", "court mark", "other")
_ARTICLE = r"제\s*\d+\s*(?:조|항|호(?!증)|목)(?:\s*의\s*\d+)?"  # not an exhibit number (갑 제1호증)
STATUTE = re.compile(
    rf"(?:[가-힣]+(?:법|법률|령|규칙)\s*)?{_ARTICLE}(?:\s*(?:,\s*)?(?:{_ARTICLE}|전단|후단|본문|단서))*"
)
COURT = re.compile(
    r"[가-힣]{1,8}(?:지방법원|고등법원|가정법원|행정법원|회생법원|군사법원|지법|고법|가법)(?:\s*\([가-힣]+\))?"
    r"(?:\s+[가-힣]{1,4}지원)?|대법원|특허법원|특허심판원|헌법재판소"
)
PROCEDURAL = re.compile(
    "|".join(
        sorted(
            "원고 피고 피고인 원심 원심판결 제1심 제1심판결 당심 재판장 주심 대법관 대법원장 판사 군판사 상고 상고인 피상고인 "
            "상고이유 항소 항소인 피항소인 항소이유 항고인 피항고인 재항고인 검사 군검사 변호인 소송대리인 변호사 담당변호사 "
            "변리사 법무법인 청구인 피청구인 상대방 사건본인 신청인 피신청인 채권자 채무자 참가인 승계참가인 소외 소외인 공소외 "
            "신청외 신청외인 증인 피해자 망인 주문 이유 청구취지 항소취지 변론종결 판시사항 판결요지 참조조문 참조판례 전문 "
            "범죄사실 증거의 요지 법령의 적용 양형의 이유".split(),
            key=len,
            reverse=True,
        )
    )
)
SIGNATURE = re.compile(r"^(?:판사|대법관|군판사|대법원장)\s.*$", re.M)
COUNSEL_NAME = re.compile(r"(?<=변호사 )[가-힣]{2,4}|(?<=변리사 )[가-힣]{2,4}|(?<=변호사)[가-힣]{2,4}(?=외)")
PROSECUTOR_LINE = re.compile(r"^【(?:군 )?검\s*사】.*$", re.M)


def categories(text: str) -> list[int]:
    """Index into :data:`CATEGORIES` of every character of ``text`` (the first matching category wins)."""
    found = [len(CATEGORIES) - 1] * len(text)
    layers = [
        [STATUTE],
        [COURT],
        [PROCEDURAL],
        [SIGNATURE, COUNSEL_NAME, PROSECUTOR_LINE],
    ]
    for mark in court_marks(text):  # the weakest layer: every layer above overwrites it
        found[mark.start : mark.end] = [CATEGORIES.index("court mark")] * (mark.end - mark.start)
    for index in reversed(range(len(layers))):  # later layers first, so earlier ones overwrite them
        for pattern in layers[index]:
            for match in pattern.finditer(text):
                found[match.start() : match.end()] = [index] * (match.end() - match.start())
    return found


def breakdown(records: list[dict], results: list[DeidResult], top: int) -> dict:
    """Replaced non-whitespace characters by source, kind and category, and the most often replaced texts."""
    total = {"characters": 0, "non_whitespace": 0, "replaced": 0}
    by_source: Counter[str] = Counter()
    by_category: dict[str, Counter[str]] = {name: Counter() for name in CATEGORIES}
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    texts: Counter[tuple[str, str]] = Counter()
    for record, result in zip(records, results):
        text = record["text"]
        kinds = categories(text)
        non_space = sum(not c.isspace() for c in text)
        total["characters"] += len(text)
        total["non_whitespace"] += non_space
        by_kind[record["kind"]]["non_whitespace"] += non_space
        by_kind[record["kind"]]["documents"] += 1
        for span in result.spans:
            replaced = [i for i in range(span.start, span.end) if not text[i].isspace()]
            total["replaced"] += len(replaced)
            by_source[span.source] += len(replaced)
            by_kind[record["kind"]]["replaced"] += len(replaced)
            for i in replaced:
                by_category[CATEGORIES[kinds[i]]][span.source] += 1
            texts[text[span.start : span.end].strip(), span.source] += 1
    return {
        "total": total,
        "by_source": dict(by_source.most_common()),
        "by_kind": {kind: dict(counts) for kind, counts in sorted(by_kind.items())},
        "by_category": {name: dict(counts.most_common()) for name, counts in by_category.items()},
        "top_texts": [{"text": t, "source": s, "count": n} for (t, s), n in texts.most_common(top)],
    }


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.2f}%" if whole else "–"


def report(figures: dict, system: str) -> str:
    total = figures["total"]
    replaced, non_space = total["replaced"], total["non_whitespace"]
    marks = sum(figures["by_category"]["court mark"].values())
    lines = [
        f"## Published precedents: {system}",
        "",
        f"Replaced: {replaced:,} of {non_space:,} non-whitespace characters ({_pct(replaced, non_space)}); "
        f"{_pct(replaced, total['characters'])} of all {total['characters']:,} characters; outside the courts' own "
        f"marks {_pct(replaced - marks, non_space)}.",
        "",
        "| source | replaced chars | share of text | share of replaced |",
        "|---|---|---|---|",
    ]
    for source, count in figures["by_source"].items():
        lines.append(f"| {source} | {count:,} | {_pct(count, non_space)} | {_pct(count, replaced)} |")
    lines += ["", "| kind | documents | non-whitespace chars | replaced | share |", "|---|---|---|---|---|"]
    for kind, counts in figures["by_kind"].items():
        lines.append(
            f"| {kind} | {counts['documents']} | {counts['non_whitespace']:,} | {counts.get('replaced', 0):,} | "
            f"{_pct(counts.get('replaced', 0), counts['non_whitespace'])} |"
        )
    lines += ["", "| replaced text is | chars | share of replaced | by source |", "|---|---|---|---|"]
    for name, counts in figures["by_category"].items():
        count = sum(counts.values())
        sources = ", ".join(f"{source} {n:,}" for source, n in counts.items()) or "–"
        lines.append(f"| {name} | {count:,} | {_pct(count, replaced)} | {sources} |")
    lines += ["", "Most often replaced texts:", "", "| count | source | text |", "|---|---|---|"]
    for row in figures["top_texts"]:
        lines.append(f"| {row['count']} | {row['source']} | {row['text'].replace('|', '¦').replace(chr(10), ' ')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="export directory or .ckpt (default: the recognizers alone)")
    parser.add_argument("--data", type=Path, default=DATA, help="JSONL of {id, kind, text} (default: %(default)s)")
    parser.add_argument("--part", choices=PARTS, default="all", help="which records of a corpus with a held-out share")
    parser.add_argument("--threshold", type=float, default=PipelineOptions.threshold)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-length", type=int, help="window length in tokens (default: the model's training windows)")
    parser.add_argument("--stride", type=int, help="tokens shared by consecutive windows (default: the model's)")
    parser.add_argument("--top", type=int, default=40, help="most often replaced texts to list")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument("--policy", default="{}", help="publication policy options as JSON (default: its defaults)")
    parser.add_argument("--cache", type=Path, help="JSON file for the model's token outputs (needs --model)")
    args = parser.parse_args(argv)
    try:
        records = [record for span in plan([args.data]) for record in corpus_records(span, args.part)]
        for record in records:
            if not isinstance(record.get("text"), str) or "kind" not in record:
                raise ValueError(f"{record['_where']}: a record needs 'text' and 'kind'")
        if args.cache and not args.model:
            raise ValueError("--cache keeps a model's outputs: give --model")
        policy = json.loads(args.policy)
        if not isinstance(policy, dict):
            raise ValueError(f"--policy must be a JSON object of policy options, got {args.policy!r}")
        options = PipelineOptions(model=args.model, recognizers_only=args.model is None, threshold=args.threshold, batch_size=args.batch_size,
                                  max_length=args.max_length, stride=args.stride)  # fmt: skip
        deidentifier = options.build(PublicationPolicy(**policy))
    except (OSError, ValueError, TypeError) as error:
        print(f"precedent_redaction: {error}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    texts = [r["text"] for r in records]
    if args.cache:
        key = {"model": args.model, "threshold": deidentifier.operating_point.threshold}
        predictions = cached_predictions(deidentifier, texts, key, args.cache, args.batch_size)
        results = [deidentifier.finish(text, prediction) for text, prediction in zip(texts, predictions)]
    else:
        results = []
        for first in range(0, len(records), args.batch_size):
            results += deidentifier.deidentify_batch(texts[first : first + args.batch_size])
            print(f"\r{len(results)}/{len(records)} documents", end="", file=sys.stderr)
    print(f"\r{len(records)} documents in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    figures = breakdown(records, results, args.top)
    figures["meta"] = {"model": args.model, "threshold": args.threshold if args.model else None, "data": str(args.data),
                       "part": args.part, "documents": len(records), "policy": policy}  # fmt: skip
    print(report(figures, args.model or "recognizers"))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
