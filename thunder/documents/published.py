"""Published decisions as training documents: the courts' marks become placeholders, the rest is no identifier.

A court publishes a decision with its own marks where identifiers stood (``피고인 1``, ``공소외 1``, ``○○○``,
``(주소 1 생략)``: :mod:`thunder.language.court_marks`). :func:`read_published` reads decisions of a legal-ko style
JSONL corpus (``{"id", "kind", "date", "text", ...}``, xz-compressed or not) and makes each chunk of a decision an
:class:`~thunder.documents.annotation.AnnotatedDocument` in which every mark that stood for an identifier is a
placeholder of its label (one letter per entity of the chunk), filled with another mention every epoch like the
annotated corpus's; every other character is text that is no identifier: statutes, courts, officials, amounts, the
ordinary words of law, commerce and daily life. That is the whole judgments of every kind of case that section
templates could only imitate, and the negatives that teach a model the language around identifiers.

Which text, and why:

- the training part of the corpus only: the held-out share of identified records
  (:func:`thunder.documents.corpus.held_out`) is the validation set of published text and never reaches training;
- decisions (not Acts), from :data:`SINCE` on: older decisions often print parties' names in clear text, which
  would be read as "no identifier";
- chunks of at most ``chunk_chars`` characters cut at line ends (one 545k-character decision would otherwise fill
  many batches); a chunk that names a company in clear text (``주식회사 한빛``: courts often keep company parties'
  names, which the taxonomy counts as identifiers) is left out, so it is never read as "no identifier";
- ``keep_marks``: the share of entities left as the court wrote them (``피고인 1``, ``○○○``), text like the rest: a
  de-identifier run over published or partly de-identified text then leaves the court's marks alone; chosen per
  entity by a stable hash, so an entity is filled or kept in every epoch alike. Marks that stand for text the policy
  keeps (``plain``) or whose meaning the context does not decide (``ignore``) stay as written too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from thunder.documents.annotation import AnnotatedDocument
from thunder.documents.corpus import plan, records
from thunder.documents.reviewed import ReviewedDocument, ReviewedSpan, annotated
from thunder.language.court_marks import MASK, court_marks
from thunder.language.legal import TERMS_FILE, read_lexicon
from thunder.seeds import stable_share
from thunder.taxonomy import Taxonomy

__all__ = ["CHUNK_CHARS", "SINCE", "chunks", "read_published"]

CHUNK_CHARS = 1500  # characters of a decision per training document at most (cut at line ends)
SINCE = 1995  # decisions from this year on: older ones often name the parties in clear text
_COMPANY = re.compile(
    r"(?:주식회사|\(주\)|㈜)\s?(?P<after>[가-힣A-Za-z][가-힣A-Za-z0-9]+)|(?P<before>[가-힣A-Za-z0-9]*[가-힣A-Za-z])\s?(?:주식회사|\(주\)|㈜)"
)
_NOT_A_NAME = re.compile(r"(?:에게|에서|로부터|으로|와의|과의|사이|명의|관련|있는|소속|대표|측|등)")


def chunks(text: str, chunk_chars: int = CHUNK_CHARS) -> Iterator[tuple[int, str]]:
    """``(offset, chunk)`` of ``text`` cut at line ends into chunks of at most ``chunk_chars`` characters (a longer
    line is a chunk of its own)."""
    start = length = 0
    for end in (m.end() for m in re.finditer(r"[^\n]*\n|[^\n]+$", text)):
        if length and end - start > chunk_chars:
            yield start, text[start : start + length]
            start += length
        length = end - start
    if length:
        yield start, text[start : start + length]


def _clear_company(text: str, covered: Sequence[tuple[int, int]], terms: frozenset[str]) -> bool:
    """Whether ``text`` names a company in clear text: a company form with a name beside it that is no court mark,
    no legal term and no function word (``피고 주식회사``, ``주식회사에게`` are none)."""
    for m in _COMPANY.finditer(text):
        name = m.group("after") or m.group("before")
        if any(start < m.end() and m.start() < end for start, end in covered) or any(c in MASK for c in name):
            continue
        if name in terms or _NOT_A_NAME.match(name) or _NOT_A_NAME.fullmatch(name[-2:]):
            continue
        return True
    return False


def read_published(
    paths: Sequence[str | Path],
    taxonomy: Taxonomy,
    chunk_chars: int = CHUNK_CHARS,
    keep_marks: float = 0.25,
    part: str = "train",
) -> list[AnnotatedDocument]:
    """Training documents from the decisions of ``paths`` (JSONL files, xz-compressed or not, or folders of them):
    one per chunk, ``doc_id`` ``{id}#{n}``, ``case_type`` the decision's kind (see the module)."""
    if not 0 <= keep_marks <= 1:
        raise ValueError(f"keep_marks must lie in [0, 1], got {keep_marks}")
    terms = frozenset(read_lexicon(TERMS_FILE))
    documents = []
    for span in plan(paths):
        if span.kind != "jsonl":
            raise ValueError(f"{span.path}: published decisions are JSONL records with an id and a text")
        for record in records(span, part):
            if record.get("kind") == "statute" or int(str(record.get("date") or "0")[:4] or 0) < SINCE:
                continue
            whole = str(record["text"])
            marks = court_marks(whole)  # over the whole decision: an entity's label is the decision's
            for index, (offset, text) in enumerate(chunks(whole, chunk_chars)):
                inside = [m for m in marks if offset <= m.start and m.end <= offset + len(text)]
                if _clear_company(text, [(m.start - offset, m.end - offset) for m in inside], terms):
                    continue
                doc_id = f"{record['id']}#{index}"
                spans = tuple(
                    ReviewedSpan(mark.start - offset, mark.end - offset, mark.label, 0, mark.entity)
                    for mark in inside
                    if mark.kind == "id" and stable_share("kept mark", record["id"], mark.entity) >= keep_marks
                )
                document = annotated(ReviewedDocument(doc_id, text, spans, record["_where"], 0), taxonomy)
                documents.append(AnnotatedDocument(document.doc_id, document.text, document.placeholders,
                                                   case_type=record.get("kind"), source=record["_where"]))  # fmt: skip
    return documents
