"""Taxonomy loading and raw-tag resolution, LabelSet encode/decode and compatibility, taxonomy CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from thunder.commands.taxonomy import check_command, show_command
from thunder.documents.annotation import iter_corpus, read_source, scan_tags
from thunder.model.decoding import token_spans
from thunder.taxonomy import (
    EntityInfo,
    LabelSet,
    LabelSetMismatch,
    Taxonomy,
    TaxonomyError,
    UnknownTagError,
)

REPO = Path(__file__).resolve().parents[1]
MEDICAL = REPO / "configs" / "taxonomies" / "medical_records.yaml"
MEDICAL_DATA = REPO / "configs" / "taxonomies" / "medical_records"

SMALL = {
    "name": "small",
    "defaults": {"tier1": "quasi", "source": "list"},
    "normalize": {
        "strip_whitespace": True,
        "strip_fragments": ["(주)"],
        "unwrap_parentheses": True,
        "suffixes": [{"pattern": "이하주소$", "replace": "아래주소"}, {"pattern": "(아래주소)건물$", "replace": r"\1"}],
    },
    "aliases": {"음식점": "식당", "맛집": "음식점"},
    "categories": {
        "인물": {"인명": {"이름": {"tier1": "direct", "source": "generator:korean_name", "aliases": ["성명"]}}},
        "장소": {
            "주소": {"구아래주소": {"tier1": "direct", "source": "generator:address"}},
            "업소": {"식당": None, "주식회사": {}},
            "": {"위치기준": None},
        },
    },
}


@pytest.fixture(scope="module")
def small() -> Taxonomy:
    return Taxonomy.from_dict(SMALL, origin="small.yaml")


@pytest.fixture(scope="module")
def default() -> Taxonomy:
    return Taxonomy.load()


# ---------------------------------------------------------------------------------------------- loading
def test_small_taxonomy_structure(small: Taxonomy) -> None:
    assert list(small.labels) == ["이름", "구아래주소", "식당", "주식회사", "위치기준"]
    label = small.labels["이름"]
    assert (label.category, label.subcategory, label.tier1, label.source) == ("인물", "인명", "direct", "generator:korean_name")
    assert small.labels["위치기준"].subcategory == ""
    assert small.labels["식당"].source == "list" and small.labels["식당"].tier1 == "quasi"
    assert list(small.categories) == ["인물", "장소"]


def test_yaml_and_json_files_load_alike(tmp_path: Path, small: Taxonomy) -> None:
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(SMALL, allow_unicode=True, sort_keys=False), encoding="utf-8")
    (tmp_path / "t.json").write_text(json.dumps(SMALL, ensure_ascii=False), encoding="utf-8")
    from_yaml, from_json = Taxonomy.load(tmp_path / "t.yaml"), Taxonomy.load(tmp_path / "t.json")
    assert from_yaml.fingerprint() == from_json.fingerprint() == small.fingerprint()
    assert from_yaml.resolve("구아래주소건물") == small.resolve("구아래주소건물")


@pytest.mark.parametrize(
    "patch, message",
    [
        ({"categories": {"A": {"B": {"x": {"tier1": "secret"}}}}}, "categories.A.B.x: tier1 must be one of"),
        ({"categories": {"A": {"B": {"x": {"source": "generator:dog name"}}}}}, "source must be 'list' or 'generator:"),
        ({"categories": {"A": {"B": {"x": {"colour": 1}}}}}, "categories.A.B.x: unknown keys ['colour']"),
        ({"categories": {"A": {"B": {"x": None}}, "C": {"": {"x": None}}}}, "label 'x' is defined twice"),
        ({"categories": {"A": {"B": {"x": None}}}, "aliases": {"y": "z"}}, "alias 'y' points at 'z'"),
        ({"categories": {"A": {"B": {"x": None}}}, "aliases": {"y": "z", "z": "y"}}, "loops without reaching a label"),
        ({"categories": {"A": {"B": {"x": {"aliases": "y"}}}}}, "categories.A.B.x: aliases must be a list"),
        ({"categories": {"A": ["x"]}}, "categories.A: expected a mapping"),
        ({"categories": {}}, "no categories"),
        ({"categories": {"A": {"B": {"x": None}}}, "labels": []}, "unknown top-level keys ['labels']"),
        ({"categories": {"A": {"B": {"x": None}}}, "normalize": {"suffixes": [{"pattern": "("}]}}, "suffixes[0]"),
    ],
)
def test_malformed_taxonomy_is_named(patch: dict, message: str) -> None:
    with pytest.raises(TaxonomyError) as caught:
        Taxonomy.from_dict({"name": "bad", **patch}, origin="bad.yaml")
    assert str(caught.value).startswith("bad.yaml")
    assert message in str(caught.value)


def test_unreadable_taxonomy_files(tmp_path: Path) -> None:
    with pytest.raises(TaxonomyError, match="cannot read taxonomy"):
        Taxonomy.load(tmp_path / "missing.yaml")
    (tmp_path / "broken.yaml").write_text("categories: [", encoding="utf-8")
    with pytest.raises(TaxonomyError, match="broken.yaml: cannot parse"):
        Taxonomy.load(tmp_path / "broken.yaml")
    (tmp_path / "aliases.json").write_text('{"a": 3}', encoding="utf-8")
    with pytest.raises(TaxonomyError, match="alias 'a' must map to a label name"):
        Taxonomy.load(MEDICAL, alias_files=[tmp_path / "aliases.json"])


# ---------------------------------------------------------------------------------------------- resolution
@pytest.mark.parametrize(
    "raw, label, rule",
    [
        ("식당", "식당", "exact"),
        ("음식점", "식당", "alias:음식점->식당"),
        ("맛집", "식당", "alias:맛집->음식점 > alias:음식점->식당"),
        ("성명", "이름", "alias:성명->이름"),
        ("구이하주소", "구아래주소", "suffix:구이하주소->구아래주소"),
        ("구아래주소건물", "구아래주소", "suffix:구아래주소건물->구아래주소"),
        ("구 이하주소", "구아래주소", "whitespace:구 이하주소->구이하주소 > suffix:구이하주소->구아래주소"),
        ("(주)식당", "식당", "fragment:(주)식당->식당"),
        ("(주식회사)", "주식회사", "parentheses:(주식회사)->주식회사"),
        (" 음식점 ", "식당", "whitespace: 음식점 ->음식점 > alias:음식점->식당"),
    ],
)
def test_resolution_rules(small: Taxonomy, raw: str, label: str, rule: str) -> None:
    resolution = small.resolve(raw)
    assert resolution.label is small.labels[label]
    assert resolution.rule == rule


def test_unknown_tag_is_a_key_error_naming_the_tag(small: Taxonomy) -> None:
    with pytest.raises(KeyError):
        small.resolve("우주선")
    with pytest.raises(UnknownTagError) as caught:
        small.resolve("식당들")
    assert "'식당들'" in str(caught.value) and "small" in str(caught.value) and "식당" in str(caught.value)
    assert caught.value.tag == "식당들"


def test_alias_files_come_after_own_aliases(tmp_path: Path, small: Taxonomy) -> None:
    path = tmp_path / "tag_aliases.json"
    path.write_text(json.dumps({"가게": "식당", "음식점": "주식회사", "노상": "없는라벨"}, ensure_ascii=False), encoding="utf-8")
    extended = small.with_alias_files([path])
    assert extended.resolve("가게").rule == "alias[tag_aliases.json]:가게->식당"
    assert extended.resolve("음식점").label.name == "식당"
    with pytest.raises(UnknownTagError):
        extended.resolve("노상")  # an alias file entry pointing nowhere does not invent a label
    with pytest.raises(UnknownTagError):
        small.resolve("가게")
    assert extended.fingerprint() == small.fingerprint()  # aliases are not part of the label structure


def test_fingerprint_tracks_label_structure(small: Taxonomy) -> None:
    changed = json.loads(json.dumps(SMALL))
    changed["categories"]["장소"]["업소"]["식당"] = {"tier1": "direct"}
    assert Taxonomy.from_dict(changed).fingerprint() != small.fingerprint()
    assert Taxonomy.from_dict(SMALL).fingerprint() == small.fingerprint()


def test_default_taxonomy(default: Taxonomy) -> None:
    assert default.name == "snu-thunder-deid"
    assert len(default.labels) > 600 and len(default.categories) == 12
    direct = {"내국인이름", "주민등록번호", "전화번호", "계좌번호", "신용카드번호", "이메일주소", "구아래주소", "차량번호", "아이디"}
    assert all(default.labels[name].tier1 == "direct" for name in direct)
    assert all(default.labels[name].tier1 == "quasi" for name in ("주식회사", "모텔", "은행", "지하철역"))
    from thunder.synthesis.mentions import GENERATORS

    generators = {label.source.split(":", 1)[1] for label in default.labels.values() if label.source != "list"}
    from thunder.identifiers import CATALOGUE

    assert generators <= set(GENERATORS)  # every generator used exists
    for unused in set(GENERATORS) - generators:  # and one the taxonomy leaves out lends its label from another's
        recognizer = CATALOGUE[unused].recognizer
        assert recognizer is not None and set(recognizer.fallback_identifiers) & generators, unused
    assert [label.name for label in default.filled_by("phone_number")] == ["전화번호"]
    assert default.resolve("구이하주소").rule == "suffix:구이하주소->구아래주소"
    assert default.resolve("면").label.name == "행정면"
    assert default.category_tier1("사업체") == "quasi" and default.category_tier1("사건관계인특정정보") == "direct"


def test_default_taxonomy_covers_demo_corpus(default: Taxonomy) -> None:
    demo = REPO / "thunder" / "resources" / "demo" / "annotated"
    if not demo.is_dir():
        pytest.skip("demo corpus not present")
    tags = {p.tag for doc in iter_corpus(demo, errors="raise") for p in doc.placeholders}
    assert tags and all(default.resolve(tag) for tag in tags)


# ---------------------------------------------------------------------------------------------- label sets
@pytest.mark.parametrize("scheme", ["IO", "BIO"])
@pytest.mark.parametrize("granularity", ["binary", "category", "label"])
def test_label_set_encode_decode(small: Taxonomy, granularity: str, scheme: str) -> None:
    label_set = LabelSet(small, granularity, scheme)
    n_types = {"binary": 1, "category": 2, "label": 5}[granularity]
    assert label_set.names[0] == "O"
    assert len(label_set.names) == 1 + n_types * (2 if scheme == "BIO" else 1)
    assert len(set(label_set.names)) == len(label_set.names)
    # entities as token spans: two adjacent entities of one type (tokens 1-3 and 3-4), then one further on
    entities = [(1, 3, "이름"), (3, 4, "이름"), (6, 9, "식당")]
    ids = [0] * 10
    for start, end, label in entities:
        entity_type = label_set.entity_type(label)
        ids[start] = label_set.begin_id(entity_type)
        for index in range(start + 1, end):
            ids[index] = label_set.inside_id(entity_type)
    expected = [(s, e, label_set.entity_type(l)) for s, e, l in entities]
    if scheme == "IO":  # IO cannot separate adjacent entities of one type
        expected = [(1, 4, label_set.entity_type("이름")), expected[2]]
        assert label_set.begin_id(expected[0][2]) == label_set.inside_id(expected[0][2])
    assert token_spans(ids, label_set) == expected
    for _, _, entity_type in expected:
        assert label_set.names[label_set.inside_id(entity_type)] == f"I-{entity_type}"


def test_decode_edge_cases(small: Taxonomy) -> None:
    bio = LabelSet(small, "label", "BIO")
    b, i = bio.begin_id, bio.inside_id
    assert token_spans([], bio) == []
    assert token_spans([i("이름"), i("이름"), 0], bio) == [(0, 2, "이름")]  # I without B starts a span
    assert token_spans([b("이름"), i("식당"), i("식당")], bio) == [(0, 1, "이름"), (1, 3, "식당")]  # type change
    assert token_spans([b("식당"), b("식당")], bio) == [(0, 1, "식당"), (1, 2, "식당")]
    io = LabelSet(small, "category", "IO")
    assert token_spans([io.inside_id("인물"), io.inside_id("장소"), io.inside_id("장소")], io) == [(0, 1, "인물"), (1, 3, "장소")]
    with pytest.raises(ValueError, match="tag id 99 at position 1"):
        token_spans([0, 99], io)
    with pytest.raises(ValueError, match="tag id -100"):
        token_spans([-100], io)


def test_entity_types_and_describe(small: Taxonomy) -> None:
    label = LabelSet(small, "label")
    category = LabelSet(small, "category", "BIO")
    binary = LabelSet(small, "binary")
    assert [s.entity_type("식당") for s in (label, category, binary)] == ["식당", "장소", "PII"]
    assert label.describe("식당") == EntityInfo("식당", "장소", "quasi")
    # a category is direct as soon as one of its labels is direct
    assert category.describe("장소") == EntityInfo(None, "장소", "direct")
    assert binary.describe("PII") == EntityInfo(None, None, None)
    with pytest.raises(UnknownTagError):
        label.entity_type("우주선")
    with pytest.raises(KeyError, match="not in LabelSet"):
        category.describe("식당")
    with pytest.raises(KeyError):
        binary.inside_id("장소")
    with pytest.raises(ValueError, match="granularity"):
        LabelSet(small, "tier")
    with pytest.raises(ValueError, match="scheme"):
        LabelSet(small, "label", "BILOU")


@pytest.mark.parametrize("granularity, scheme", [("binary", "IO"), ("category", "BIO"), ("label", "BIO")])
def test_label_set_round_trip(small: Taxonomy, granularity: str, scheme: str) -> None:
    label_set = LabelSet(small, granularity, scheme)
    stored = json.loads(json.dumps(label_set.to_dict(), ensure_ascii=False))
    assert stored["fingerprint"] == small.fingerprint() and stored["taxonomy"] == "small"
    restored = LabelSet.from_dict(stored, Taxonomy.from_dict(SMALL))
    assert restored.names == label_set.names
    assert (restored.granularity, restored.scheme) == (granularity, scheme)
    label_set.check_compatible(stored)


def test_label_set_mismatch_messages(small: Taxonomy) -> None:
    stored = LabelSet(small, "category", "BIO").to_dict()
    with pytest.raises(LabelSetMismatch) as caught:
        LabelSet(small, "label", "BIO").check_compatible(stored)
    message = str(caught.value)
    assert message.startswith("checkpoint trained with taxonomy 'small'")
    assert "granularity 'category'" in message and "this run uses taxonomy 'small'" in message
    assert "granularity 'label'" in message
    medical = Taxonomy.load(MEDICAL)
    with pytest.raises(LabelSetMismatch, match="this run uses taxonomy 'medical-records'"):
        LabelSet.from_dict(stored, medical)
    with pytest.raises(LabelSetMismatch, match="lacks 'scheme'"):
        LabelSet.from_dict({"granularity": "label"}, small)
    reordered = dict(stored, names=[stored["names"][0], *reversed(stored["names"][1:])])
    with pytest.raises(LabelSetMismatch, match="same tags in a different order"):
        LabelSet(small, "category", "BIO").check_compatible(reordered)


# ---------------------------------------------------------------------------------------------- user taxonomy
def test_medical_records_taxonomy() -> None:
    taxonomy = Taxonomy.load(MEDICAL)
    assert taxonomy.name == "medical-records"
    assert len(taxonomy.labels) == 6 and list(taxonomy.categories) == ["환자정보", "의료기관정보"]
    assert taxonomy.resolve("환자 이름").label.name == "환자이름"
    assert taxonomy.resolve("휴대폰번호").rule == "alias:휴대폰번호->연락처"
    assert taxonomy.resolve("의원").label.name == "병원명"
    assert [len(LabelSet(taxonomy, g, s).names) for g in ("binary", "category", "label") for s in ("IO", "BIO")] == [
        2, 3, 3, 5, 7, 13,
    ]
    # every list label has a mention list shipped beside it, and the example records all map
    lists = {key for path in (MEDICAL_DATA / "mentions").rglob("*.json") for key in json.loads(path.read_text("utf-8"))}
    assert {l.name for l in taxonomy.labels.values() if l.source == "list"} <= lists
    docs = list(iter_corpus(MEDICAL_DATA / "annotated", errors="raise"))
    assert len(docs) >= 10
    assert {taxonomy.resolve(p.tag).label.name for d in docs for p in d.placeholders} == set(taxonomy.labels)


# ---------------------------------------------------------------------------------------------- CLI
def test_check_command_reports_coverage(capsys: pytest.CaptureFixture[str]) -> None:
    check_command(str(MEDICAL_DATA), taxonomy=str(MEDICAL))
    out = capsys.readouterr().out
    assert "documents: 12 (12 parsed, 0 unparsable)" in out
    assert "(100.00%)" in out and "환자정보" in out and "whitespace" in out


def test_check_command_fails_on_unmapped_and_lists_places(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "a.md").write_text("x <<<환자이름>>>A<<</환자이름>>> <<<우주선>>>B<<</우주선>>>", encoding="utf-8")
    (tmp_path / "cases" / "b.md").write_text("<<<병원>>>a<<<환자명>>>B<<</환자명>>><<</병원>>>", encoding="utf-8")
    with pytest.raises(SystemExit) as caught:
        check_command(str(tmp_path), taxonomy=str(MEDICAL))
    assert caught.value.code == 1
    out = capsys.readouterr().out
    assert f"UNMAPPED '우주선': {tmp_path / 'cases' / 'a.md'}:1:26" in out
    assert f"UNPARSABLE {tmp_path / 'cases' / 'b.md'}:1:10: nested tag" in out
    assert "mentions: 2 placeholders in parsed documents + 2 tags in unparsable ones" in out
    assert "tag occurrences: 4, mapped 3 (75.00%)" in out


def test_check_command_picks_up_tag_aliases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "annotated" / "x").mkdir(parents=True)
    (tmp_path / "annotated" / "x" / "a.md").write_text("<<<환자분>>>A<<</환자분>>>", encoding="utf-8")
    (tmp_path / "tag_aliases.json").write_text('{"환자분": "환자명"}', encoding="utf-8")
    check_command(str(tmp_path), taxonomy=str(MEDICAL))
    out = capsys.readouterr().out
    assert "extra alias files: tag_aliases.json" in out
    assert "alias[tag_aliases.json] > alias" in out


def test_show_command(capsys: pytest.CaptureFixture[str]) -> None:
    show_command(taxonomy=str(MEDICAL), data=str(MEDICAL_DATA))
    out = capsys.readouterr().out
    assert "medical-records: 6 labels, 2 categories" in out
    assert "환자정보 (direct)" in out and "    병동  quasi  list  [" in out
    show_command(tier=1, taxonomy=str(MEDICAL))
    assert capsys.readouterr().out.splitlines()[1:] == ["direct: 4 labels", "quasi: 2 labels"]
    with pytest.raises(ValueError, match="tier must be"):
        show_command(tier=4)


# ---------------------------------------------------------------------------------------------- shared corpus
@pytest.mark.shared_data
def test_shared_corpus_tags_all_map(shared_corpus: Path) -> None:
    taxonomy = Taxonomy.load(alias_files=[shared_corpus / "tag_aliases.json"])
    failures: list = []
    tags = [p.tag for doc in iter_corpus(shared_corpus / "annotated", errors="skip", failures=failures) for p in doc.placeholders]
    tags += [tag for error in failures for tag, _, _ in scan_tags(read_source(error.source) or "")]
    assert len(tags) > 24_000 and len(set(tags)) >= 882
    unmapped = sorted({tag for tag in set(tags) if _unmapped(taxonomy, tag)})
    assert unmapped == []
    rules = {taxonomy.resolve(tag).rule for tag in set(tags)}
    assert all(rule == "exact" or ":" in rule for rule in rules)


def _unmapped(taxonomy: Taxonomy, tag: str) -> bool:
    try:
        taxonomy.resolve(tag)
    except UnknownTagError:
        return True
    return False
