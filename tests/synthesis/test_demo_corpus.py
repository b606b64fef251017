"""The self-written demo corpus shipped in thunder/resources/demo/ (used by configs/demo.yaml and the tests)."""

from __future__ import annotations

import hashlib
import importlib.resources
import importlib.util
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from thunder.taxonomy import Taxonomy

REPO_ROOT = Path(__file__).resolve().parents[2]
CASE_TYPES = ("crime_of_violence", "fraud", "indecent_act_by_compulsion")
PLACEHOLDER = re.compile(r"<<<([^<>/]+)>>>([^<>]*?)<<</\1>>>")
# particle pairs (after a final consonant, after a vowel) that must agree with the entity they follow
PARTICLE_PAIRS = (("으로부터", "로부터"), ("으로", "로"), ("이라고", "라고"), ("은", "는"), ("을", "를"), ("과", "와"))


def demo_root() -> Path:
    root = importlib.resources.files("thunder") / "resources" / "demo"
    assert root.is_dir(), "thunder/resources/demo is missing from the installed package"
    return Path(str(root))


def documents() -> dict[Path, str]:
    files = sorted((demo_root() / "annotated").rglob("*.md"))
    return {path: path.read_bytes().decode("utf-8", errors="strict") for path in files}


@pytest.fixture(scope="module")
def docs() -> dict[Path, str]:
    return documents()


def test_corpus_is_packaged_with_three_case_types(docs: dict[Path, str]) -> None:
    annotated = demo_root() / "annotated"
    counts = {case: len(list((annotated / case).glob("doc_*.md"))) for case in CASE_TYPES}
    assert all(count >= 30 for count in counts.values()), counts
    assert sum(counts.values()) == len(docs) >= 100
    assert (demo_root() / "README.md").is_file()
    assert (demo_root() / "mentions").is_dir()


def test_documents_are_short_distinct_judgments(docs: dict[Path, str]) -> None:
    assert len(set(docs.values())) == len(docs), "two demo documents are identical"
    for path, text in docs.items():
        assert 250 <= len(text) <= 1500, (path, len(text))
        assert "피고인" in text, path
        assert re.search(r"\b20\d\d\. \d{1,2}\. ", text), f"{path}: no date in the judgments' style"


def test_tags_are_well_formed_and_balanced(docs: dict[Path, str]) -> None:
    parse = _read_annotated()
    for path, text in docs.items():
        found = PLACEHOLDER.findall(text)
        assert found, path
        rest = PLACEHOLDER.sub("", text)
        assert "<<<" not in rest and ">>>" not in rest, f"{path}: unbalanced or malformed tag"
        for tag, content in found:
            assert content and content[0].isupper() and content.strip() == content, (path, tag, content)
        if parse is not None:
            parsed = parse(path)
            assert len(parsed.placeholders) == len(found), path
            assert [p.tag for p in parsed.placeholders] == [tag for tag, _ in found], path
            assert [parsed.text[p.start:p.end] for p in parsed.placeholders] == [c for _, c in found], path
            assert all(re.fullmatch(r"[A-Z]+", p.entity) for p in parsed.placeholders), f"{path}: entity not a letter"


def test_every_tag_resolves_in_the_default_taxonomy(docs: dict[Path, str], taxonomy: Taxonomy) -> None:
    tags = {tag for text in docs.values() for tag, _ in PLACEHOLDER.findall(text)}
    assert len(tags) >= 30
    labels = {taxonomy.resolve(tag).label for tag in tags}        # raises UnknownTagError naming the tag
    assert len({label.category for label in labels}) >= 5
    assert {label.tier1 for label in labels} == {"direct", "quasi"}


def test_each_letter_names_one_entity_of_one_label(docs: dict[Path, str], taxonomy: Taxonomy) -> None:
    for path, text in docs.items():
        label_of: dict[str, str] = {}
        for tag, content in PLACEHOLDER.findall(text):
            letter = re.match(r"[A-Z]+", content).group(0)
            label = taxonomy.resolve(tag).label.name
            assert label_of.setdefault(letter, label) == label, f"{path}: {letter} is {label_of[letter]} and {label}"


def test_particles_after_an_entity_agree_throughout_the_document(docs: dict[Path, str]) -> None:
    """Synthesis fixes particles from the mention; the source must be self-consistent per entity."""
    checked = 0
    for path, text in docs.items():
        forms: dict[str, set[bool]] = defaultdict(set)
        for match in re.finditer(r"<<<[^<>/]+>>>([A-Z]+)<<</[^<>]+>>>(\([^()]*\)|')?(\S*)", text):
            following = match.group(3)
            for consonant_form, vowel_form in PARTICLE_PAIRS:
                if following.startswith(consonant_form):
                    forms[match.group(1)].add(True)
                    break
                if following.startswith(vowel_form):
                    forms[match.group(1)].add(False)
                    break
        inconsistent = [letter for letter, seen in forms.items() if len(seen) > 1]
        assert not inconsistent, f"{path}: particles disagree after {inconsistent}"
        checked += len(forms)
    assert checked >= 100, "too few placeholders followed by a particle to exercise particle correction"


def test_mention_lists_mirror_the_taxonomy_tree(docs: dict[Path, str], taxonomy: Taxonomy) -> None:
    mentions = demo_root() / "mentions"
    listed: dict[str, list[str]] = {}
    for path in sorted(mentions.rglob("*.json")):
        content = json.loads(path.read_bytes().decode("utf-8"))
        folder = path.parent.relative_to(mentions).parts
        for label, values in content.items():
            assert isinstance(values, list) and values, (path, label)
            assert all(isinstance(v, str) and v.strip() == v and v for v in values), (path, label)
            assert len(set(values)) == len(values), (path, label)
            listed[label] = values
            if label.startswith("행정"):
                continue
            known = taxonomy.labels[label]
            assert folder == tuple(p for p in (known.category, known.subcategory) if p), (path, label)
            assert 20 <= len(values) <= 60, (path, label, len(values))
    used = {taxonomy.resolve(tag).label for text in docs.values() for tag, _ in PLACEHOLDER.findall(text)}
    missing = sorted(label.name for label in used if label.source == "list" and label.name not in listed)
    assert not missing, f"list-sourced labels used by the demo corpus without a demo mention list: {missing}"
    regions = json.loads((mentions / "지리정보" / "지역명" / "행정구군시읍면동.json").read_text(encoding="utf-8"))
    assert {"행정시", "행정군", "행정구", "행정동"} <= set(regions)
    assert all(name.endswith("동") for name in regions["행정동"])


def test_generator_reproduces_the_packaged_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = REPO_ROOT / "tools" / "make_demo_corpus.py"
    if not script.is_file():
        pytest.skip("tools/make_demo_corpus.py is not part of this installation")
    spec = importlib.util.spec_from_file_location("make_demo_corpus", script)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)       # dataclasses look their module up while loading
    spec.loader.exec_module(module)
    readme = (demo_root() / "README.md").read_text(encoding="utf-8")
    seed = int(re.search(r"--seed (\d+)", readme).group(1))
    per_type = int(re.search(r"--docs-per-type (\d+)", readme).group(1))
    stats = module.write_corpus(tmp_path, per_type, seed)
    def files(root: Path) -> dict[Path, bytes]:       # the demo tokenizer beside them is built by another tool
        paths = [root / "README.md", *(root / "annotated").rglob("*"), *(root / "mentions").rglob("*")]
        return {p.relative_to(root): p.read_bytes() for p in paths if p.is_file()}
    packaged, generated = files(demo_root()), files(tmp_path)
    assert len(generated) > 150
    assert generated == packaged, "the packaged demo corpus differs from tools/make_demo_corpus.py output"
    assert f"{stats['documents']} documents" in readme


def test_no_document_is_copied_from_the_shared_corpus(docs: dict[Path, str], shared_corpus: Path) -> None:
    demo = {hashlib.sha256(text.encode("utf-8")).hexdigest() for text in docs.values()}
    for path in (shared_corpus / "annotated").rglob("*.md"):
        assert hashlib.sha256(path.read_bytes()).hexdigest() not in demo, path


def _read_annotated():
    """thunder.documents.annotation.read_annotated where that module exists (parsing is tested in its own module)."""
    try:
        from thunder.documents.annotation import read_annotated
    except ImportError:
        return None
    return read_annotated
