"""The whole judgments with gold spans shipped in thunder/resources/judgments/ (an evaluation set written for Thunder)."""

from __future__ import annotations

import importlib.resources
import re
from pathlib import Path

import pytest

from thunder.data import Recipe
from thunder.documents.annotation import AnnotatedDocument, read_annotated
from thunder.evaluation.evaluate import evaluate
from thunder.evaluation.gold import load_documents
from thunder.identifiers import CATALOGUE
from thunder.language.particles import leading_particle
from thunder.synthesis.mentions import DEMO_MENTIONS, MentionBank
from thunder.synthesis.synthesizer import SynthesizedDocument, Synthesizer, leftovers

KINDS = ("criminal", "civil", "family", "administrative")
MIN_PER_KIND = 10
MIN_STRUCTURED_PER_KIND = 10
# legal text that no gold span may cover: statute references, courts, case numbers, exhibits, precedents
LEGAL_TEXT = {
    "statute reference": re.compile(r"제\d+조(?:의\d+)?(?: 제\d+항)?(?: 제\d+호)?"),
    "court": re.compile(r"[가-힣]+(?:지방|가정|행정|고등)?법원(?: [가-힣]+지원)?|대법원"),
    "case number": re.compile(r"\b(?:19|20)\d\d[가-힣]{1,3}\d+\b"),
    "exhibit": re.compile(r"[갑을증](?:가|나)? ?제\d+(?:호증|호)"),
}
# officials published by courts: judges in the signature block, prosecutors, counsel, litigation officers
OFFICIAL = re.compile(r"^(?:재판장 )?판사\s+([가-힣]{2,4})$|검\s*사\s+([가-힣]{2,4})\(|변호사\s+([가-힣]{2,4})", re.M)


def judgments_root() -> Path:
    root = importlib.resources.files("thunder") / "resources" / "judgments"
    assert root.is_dir(), "thunder/resources/judgments is missing from the installed package"
    return Path(str(root))


@pytest.fixture(scope="module")
def documents() -> dict[str, list[AnnotatedDocument]]:
    annotated = judgments_root() / "annotated"
    return {
        kind: [read_annotated(path, doc_id=f"{kind}/{path.stem}", case_type=kind)
               for path in sorted((annotated / kind).glob("*.md"))]
        for kind in KINDS
    }  # fmt: skip


@pytest.fixture(scope="module")
def filled(documents, taxonomy) -> dict[str, tuple[AnnotatedDocument, SynthesizedDocument]]:
    synthesizer = Synthesizer(taxonomy, MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS]), seed=0, replacement="single")
    return {doc.doc_id: (doc, synthesizer(doc)) for docs in documents.values() for doc in docs}


def test_every_kind_has_enough_judgments_and_the_set_is_documented(documents) -> None:
    counts = {kind: len(docs) for kind, docs in documents.items()}
    assert all(count >= MIN_PER_KIND for count in counts.values()), counts
    assert sorted(p.parent.name for p in (judgments_root() / "annotated").glob("*/*.md")) == sorted(
        kind for kind, docs in documents.items() for _ in docs
    ), "a judgment lies outside the four kinds"
    readme = (judgments_root() / "README.md").read_text(encoding="utf-8")
    assert "Apache-2.0" in readme and "thunder evaluate" in readme
    assert all(re.fullmatch(r"\d\d_[a-z0-9-]+", doc.doc_id.split("/")[1]) for docs in documents.values() for doc in docs)


def test_every_tag_resolves_and_every_label_can_be_filled_from_the_packaged_lists(documents, taxonomy) -> None:
    bank = MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS])
    for docs in documents.values():
        for doc in docs:
            assert doc.placeholders, doc.doc_id
            for p in doc.placeholders:
                resolution = taxonomy.resolve(p.tag)  # raises on an unknown tag
                assert resolution.rule == "exact", (doc.doc_id, p.line, p.tag, resolution.rule)
                assert resolution.label.name not in bank.missing, (doc.doc_id, p.tag)
                assert re.fullmatch(r"[A-Z]{1,2}", p.entity), (doc.doc_id, p.line, p.entity)


def test_a_letter_is_one_entity_of_one_label(documents, taxonomy) -> None:
    for docs in documents.values():
        for doc in docs:
            labels: dict[str, set[str]] = {}
            for p in doc.placeholders:
                labels.setdefault(p.entity, set()).add(taxonomy.resolve(p.tag).label.name)
            assert all(len(names) == 1 for names in labels.values()), (doc.doc_id, labels)


def test_filled_judgments_are_whole_and_of_2000_to_10000_characters(filled) -> None:
    for doc_id, (doc, out) in filled.items():
        assert 2000 <= len(out.text) <= 10000, (doc_id, len(out.text))
        assert not leftovers(doc, out), (doc_id, leftovers(doc, out))
        lines = [line.strip() for line in out.text.splitlines() if line.strip()]
        assert "법원" in lines[0].replace(" ", ""), (doc_id, lines[0])  # header names the court
        assert re.search(r"^주\s*문$", out.text, re.M), doc_id
        assert re.search(r"^이\s*유$", out.text, re.M), doc_id
        assert re.search(r"^(?:재판장 )?판사\s+[가-힣]{2,4}$", out.text, re.M), f"{doc_id}: no judge's signature"
        assert LEGAL_TEXT["statute reference"].search(out.text), f"{doc_id}: cites no statute"


def test_each_kind_has_structured_identifiers(documents, taxonomy) -> None:
    structured = {
        label.name for label in taxonomy.labels.values()
        if label.source.startswith("generator:") and label.source.split(":", 1)[1] in CATALOGUE
    }  # fmt: skip
    found_labels: set[str] = set()
    for kind, docs in documents.items():
        found = [taxonomy.resolve(p.tag).label.name for doc in docs for p in doc.placeholders]
        found = [name for name in found if name in structured]
        assert len(found) >= MIN_STRUCTURED_PER_KIND, (kind, len(found))
        found_labels |= set(found)
    assert {"주민등록번호", "전화번호", "계좌번호", "신용카드번호", "차량번호", "사업자등록번호"} <= found_labels


def _legal_text_in_spans(text: str, spans: list[tuple[int, int]]) -> list[str]:
    """The legal-text matches of ``text`` that overlap one of ``spans``."""
    return [
        f"{kind} {match.group()!r}"
        for kind, pattern in LEGAL_TEXT.items()
        for match in pattern.finditer(text)
        if any(start < match.end() and match.start() < end for start, end in spans)
    ]


def _placeholders_as(doc: AnnotatedDocument, filler: str) -> tuple[str, list[tuple[int, int]]]:
    """The annotated text with every placeholder written as ``filler``, and the placeholders' new spans."""
    parts, spans, cursor, length = [], [], 0, 0
    for p in sorted(doc.placeholders, key=lambda p: p.start):
        parts.append(doc.text[cursor : p.start])
        length += p.start - cursor
        parts.append(filler)
        spans.append((length, length + len(filler)))
        length += len(filler)
        cursor = p.end
    parts.append(doc.text[cursor:])
    return "".join(parts), spans


def test_no_placeholder_stands_in_legal_text(documents) -> None:
    # a placeholder read as a number or a syllable must not complete a statute reference, court or case number
    for docs in documents.values():
        for doc in docs:
            for filler in ("0", "가"):
                text, spans = _placeholders_as(doc, filler)
                assert not _legal_text_in_spans(text, spans), (doc.doc_id, _legal_text_in_spans(text, spans))


def test_no_gold_span_covers_legal_text_or_an_official(filled) -> None:
    for doc_id, (_, out) in filled.items():
        covered = [(span.start, span.end) for span in out.spans]
        assert not _legal_text_in_spans(out.text, covered), (doc_id, _legal_text_in_spans(out.text, covered))
        officials = list(OFFICIAL.finditer(out.text))
        assert officials, doc_id
        for match in officials:
            start, end = next((match.start(g), match.end(g)) for g in (1, 2, 3) if match.group(g))
            assert not any(s < end and start < e for s, e in covered), f"{doc_id}: official {match.group()!r} in a span"


def test_an_entitys_particles_agree_with_one_another(documents, taxonomy) -> None:
    for docs in documents.values():
        for doc in docs:
            finals: dict[tuple[str, str], set[str]] = {}
            for p in doc.placeholders:
                found = leading_particle(doc.text[p.end : p.end + 12])
                if found is None or found[1] == ("으로", "로") and found[0] == "로":  # 로 also follows a final ㄹ
                    continue
                form, (after_consonant, _) = found
                key = (taxonomy.resolve(p.tag).label.name, p.entity)
                finals.setdefault(key, set()).add("consonant" if form == after_consonant else "vowel")
            assert all(len(kinds) == 1 for kinds in finals.values()), (doc.doc_id, finals)


def test_recognizers_find_every_structured_identifier_and_replace_no_legal_text(taxonomy) -> None:
    recipe = Recipe(data_dir=str(judgments_root() / "annotated"))
    report = evaluate(None, load_documents(recipe, taxonomy), taxonomy=taxonomy)
    recognized = {name for name, identifier in CATALOGUE.items() if identifier.recognizer is not None}
    labels = {label.name for label in taxonomy.labels.values() if label.source.split(":", 1)[-1] in recognized}
    counts = {label: count for label, count in report.leaks_by_label.items() if label in labels}
    assert sum(count.mentions for count in counts.values()) >= 100
    assert all(count.leaked == 0 for count in counts.values()), counts
    assert report.over_redaction == 0.0


def _sentences(text: str) -> set[str]:
    """The sentences of a judgment of 30 characters or more, spaces removed."""
    pieces = re.split(r"(?<=다\.)|\n", text)
    return {"".join(piece.split()) for piece in pieces if len("".join(piece.split())) >= 30}


def test_no_sentence_is_copied_from_the_shared_corpus(documents, shared_corpus: Path) -> None:
    tag = re.compile(r"<{2,3}/?[^<>\n]*>{2,3}")
    corpus: set[str] = set()
    for path in (shared_corpus / "annotated").rglob("*.md"):
        corpus |= _sentences(tag.sub("", path.read_text(encoding="utf-8", errors="replace")))
    assert len(corpus) > 10000
    for docs in documents.values():
        for doc in docs:
            copied = _sentences(doc.text) & corpus
            assert not copied, (doc.doc_id, sorted(copied)[:3])
