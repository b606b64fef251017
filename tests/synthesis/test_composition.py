"""Whole judgments composed around facts paragraphs: the packaged templates, letters, determinism, legal text."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest

from thunder.data import DEMO_CORPUS
from thunder.documents.annotation import AnnotatedDocument, iter_corpus, parse_annotated
from thunder.language.particles import agrees
from thunder.synthesis.composition import SLOT_NAMES, Composer
from thunder.synthesis.mentions import DEMO_MENTIONS, MentionBank, MentionContext
from thunder.synthesis.synthesizer import Synthesizer, leftovers
from thunder.synthesis.templates import SECTIONS, TemplateError, load_cases
from thunder.taxonomy import Taxonomy

STATUTE = re.compile(r"제\d+조(?:의\d+)?")


@pytest.fixture(scope="module")
def composer(taxonomy: Taxonomy) -> Composer:
    return Composer(taxonomy, seed=0)


@pytest.fixture(scope="module")
def documents() -> list[AnnotatedDocument]:
    return list(iter_corpus(DEMO_CORPUS))


@pytest.fixture(scope="module")
def synthesizer(taxonomy: Taxonomy) -> Synthesizer:
    return Synthesizer(taxonomy, MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS]), seed=0)


def template_tags(taxonomy: Taxonomy) -> set[str]:
    tags = set()
    for case in load_cases(taxonomy, SLOT_NAMES):
        for section in case.sections.values():
            for text in section.texts():
                tags |= {p.tag for p in parse_annotated(re.sub(r"\{[^{}]*\}", "0", text)).placeholders}
    return tags


def test_the_packaged_templates_parse_and_their_tags_resolve(taxonomy: Taxonomy) -> None:
    cases = load_cases(taxonomy, SLOT_NAMES)
    assert {case.kind for case in cases} == {"criminal", "civil", "family", "administrative"}
    assert sum(len(s.texts()) for case in cases for s in case.sections.values()) > 300
    tags = template_tags(taxonomy)
    assert {"내국인이름", "주민등록번호", "주소", "계좌번호"} <= tags
    for tag in tags:
        assert taxonomy.resolve(tag).label.name


def assert_every_template_label_has_a_source(taxonomy: Taxonomy, bank: MentionBank) -> None:
    for tag in template_tags(taxonomy):
        assert bank.sample(tag, random.Random(0), MentionContext(tag)).strip(), tag


def test_every_template_label_has_a_source_in_the_demo_lists(taxonomy: Taxonomy) -> None:
    assert_every_template_label_has_a_source(taxonomy, MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS]))


@pytest.mark.shared_data
def test_every_template_label_has_a_source_in_the_shared_lists(taxonomy: Taxonomy, shared_corpus: Path) -> None:
    dirs = [shared_corpus / "mentions", shared_corpus / "mentions-llm"]
    assert_every_template_label_has_a_source(taxonomy, MentionBank.from_dirs(taxonomy, dirs))


def test_composition_is_deterministic_and_varies_across_epochs(
    taxonomy: Taxonomy, composer: Composer, documents: list[AnnotatedDocument]
) -> None:
    again = Composer(taxonomy, seed=0)
    for doc in documents[:20]:
        assert composer.compose(doc, 3) == again.compose(doc, 3)
        assert len({composer.compose(doc, epoch).text for epoch in range(5)}) >= 4
    other_seed = Composer(taxonomy, seed=1)
    assert sum(composer.compose(d, 0).text != other_seed.compose(d, 0).text for d in documents[:20]) >= 18


def test_the_facts_paragraph_keeps_its_text_and_placeholders(
    composer: Composer, documents: list[AnnotatedDocument]
) -> None:
    quoted = 0
    for doc in documents:
        whole = composer.compose(doc, 0)
        body = doc.text.split("\n", 1)[1] if doc.text.startswith("범 죄 사 실\n") else doc.text
        offset = whole.text.find(body)
        if offset < 0:  # a skeleton-only case
            continue
        quoted += 1
        assert len(whole.text) > len(body) + 300
        inside = [p for p in whole.placeholders if offset <= p.start < offset + len(body)]
        assert [(p.start - offset, p.end - offset, p.tag, p.entity) for p in inside] == [
            (p.start - len(doc.text) + len(body), p.end - len(doc.text) + len(body), p.tag, p.entity)
            for p in doc.placeholders
        ]
    assert quoted > len(documents) * 0.6


def test_letters_are_consistent_across_the_document(
    taxonomy: Taxonomy, composer: Composer, documents: list[AnnotatedDocument]
) -> None:
    named = unnamed = 0
    for epoch in range(3):
        for doc in documents:
            whole = composer.compose(doc, epoch)
            facts_letters = {p.entity for p in doc.placeholders}
            labels: dict[str, set[str]] = {}
            for p in whole.placeholders:
                labels.setdefault(p.entity, set()).add(taxonomy.resolve(p.tag).label.name)
            new = {entity: names for entity, names in labels.items() if entity not in facts_letters}
            assert all(len(names) == 1 for names in new.values()), new  # a new letter is one entity
            offender = re.search(r"피고인 <<<내국인이름>>>([A-Z])<<</내국인이름>>>", _markup(doc))
            header = re.search(r"피\s*고\s*인\W* <<<(\w+)>>>([A-Z]+)<<<", _markup(whole))
            if header is None:
                continue
            if offender is not None:
                named += 1
                assert header.group(2) == offender.group(1)
            elif "A" not in facts_letters:
                unnamed += 1
                assert header.group(2) == "A"
    assert named and unnamed


def _markup(doc: AnnotatedDocument) -> str:
    """The document in the annotation format again."""
    parts, cursor = [], 0
    for p in sorted(doc.placeholders, key=lambda p: p.start):
        parts += [doc.text[cursor : p.start], f"<<<{p.tag}>>>{doc.text[p.start : p.end]}<<</{p.tag}>>>"]
        cursor = p.end
    return "".join(parts + [doc.text[cursor:]])


def test_victims_of_the_facts_are_the_plaintiffs_of_a_damages_suit(
    composer: Composer, documents: list[AnnotatedDocument]
) -> None:
    checked = 0
    for epoch in range(6):
        for doc in documents:
            whole = composer.compose(doc, epoch)
            victim = re.search(r"피해자 <<<내국인이름>>>([A-Z])<<</내국인이름>>>", _markup(doc))
            plaintiff = re.search(r"원\s*고\W* <<<내국인이름>>>([A-Z]+)<<<", _markup(whole))
            if victim and plaintiff and "손해배상" in whole.text.split("\n", 3)[2]:
                checked += 1
                assert plaintiff.group(1) == victim.group(1)
    assert checked


def test_synthesized_whole_judgments_have_statutes_outside_every_span(
    composer: Composer, synthesizer: Synthesizer, documents: list[AnnotatedDocument]
) -> None:
    kinds: Counter[str] = Counter()
    for doc in documents:
        whole = composer.compose(doc, 1)
        out = synthesizer(whole, epoch=1)
        assert leftovers(whole, out) == []
        references = [m.span() for m in STATUTE.finditer(out.text)]
        for start, end in references:
            assert not any(s.start < end and start < s.end for s in out.spans), out.text[start - 20 : end]
        kinds["statute" if references else "none"] += 1
        judge = re.search(r"(?:판사|대법관)\s+(\S+)", out.text)
        assert judge is None or not any(s.start <= judge.start(1) < s.end for s in out.spans)
    assert kinds["statute"] > 0.8 * len(documents)


def test_officials_can_be_identifiers(taxonomy: Taxonomy, documents: list[AnnotatedDocument]) -> None:
    composer = Composer(taxonomy, seed=0, officials=("judge", "prosecutor", "counsel"))
    for doc in documents[:30]:
        text = _markup(composer.compose(doc, 0))
        assert not re.search(r"(?:판사|대법관)\s+[가-힣]", text)
        assert re.search(r"(?:판사|대법관)\s+<<<내국인이름>>>[A-Z]+<<<", text)
    with pytest.raises(ValueError, match="officials"):
        Composer(taxonomy, officials=("clerk",))


def test_share_picks_that_share_of_documents_each_epoch(taxonomy: Taxonomy, documents: list[AnnotatedDocument]) -> None:
    composer = Composer(taxonomy, seed=0, share=0.3)
    picked = [composer.picks(f"doc{i}", 0) for i in range(2000)]
    assert 0.27 < sum(picked) / len(picked) < 0.33
    assert picked != [composer.picks(f"doc{i}", 1) for i in range(2000)]
    doc = documents[0]
    assert Composer(taxonomy, share=0.0)(doc, 0) is doc
    assert Composer(taxonomy, share=1.0)(doc, 0) != doc
    with pytest.raises(ValueError, match="share"):
        Composer(taxonomy, share=1.5)


def write_sections(directory: Path, kind_file: str) -> Path:
    common = (SECTIONS / "common.yaml").read_text(encoding="utf-8")
    (directory / "common.yaml").write_text(common, encoding="utf-8")
    (directory / "test.yaml").write_text(kind_file, encoding="utf-8")
    return directory


def test_a_particle_after_a_slot_agrees_with_its_value(taxonomy: Taxonomy, tmp_path: Path) -> None:
    directory = write_sections(
        tmp_path,
        "kind: test\nlists: {jobs: [요리사], ranks: [경감]}\ncases:\n  - name: one\n    layout: [top, facts]\n"
        '    sections: {top: ["{jobs}은 {ranks}는 {judge}을 만났다."]}\n',
    )
    doc = parse_annotated("피고인은 피해자 <<<내국인이름>>>B<<</내국인이름>>>을 때렸다.", doc_id="d")
    whole = Composer(taxonomy, directory=directory).compose(doc, 0)
    first = whole.text.split("\n")[0]
    assert first.startswith("요리사는 경감은 ")
    judge = first.split()[2]
    assert agrees(judge[:-1], judge[-1] + " 만났다") is True
    assert whole.text.endswith(doc.text)


@pytest.mark.parametrize(
    ("section", "reason"),
    [
        ('["<<<없는태그>>>A<<</없는태그>>>"]', "없는태그"),
        ('["{nothing}"]', "unknown slot"),
        ('["<<<내국인이름>>>홍길동<<</내국인이름>>>"]', "not a letter code"),
        ('["<<<내국인이름>>>A<<</내국인이름>>> <<<주소>>>A<<</주소>>>"]', "two tags"),
        ('["<<<내국인이름>>>A<<</내국인이름>>"]', "test.yaml"),
    ],
)
def test_a_bad_template_is_refused_naming_its_file(taxonomy: Taxonomy, tmp_path: Path, section: str, reason: str) -> None:
    directory = write_sections(tmp_path, f"kind: test\ncases:\n  - name: one\n    layout: [top]\n    sections: {{top: {section}}}\n")
    with pytest.raises(TemplateError, match=reason) as error:
        load_cases(taxonomy, SLOT_NAMES, directory)
    assert "test.yaml" in str(error.value)


def test_a_layout_naming_a_missing_section_is_refused(taxonomy: Taxonomy, tmp_path: Path) -> None:
    directory = write_sections(tmp_path, 'kind: test\ncases:\n  - name: one\n    layout: [top, nowhere]\n    sections: {top: ["x"]}\n')
    with pytest.raises(TemplateError, match="nowhere"):
        load_cases(taxonomy, SLOT_NAMES, directory)
