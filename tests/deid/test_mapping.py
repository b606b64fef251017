"""Reversible mapping: sealed records, byte-exact restoration, wrong key and tampering refused, ``thunder reidentify``."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thunder.cli import main
from thunder.deid.mapping import (
    KEY_PREFIX,
    Mapping,
    MappingError,
    MappingKey,
    MappingWriter,
    TamperedError,
    WrongKeyError,
    apply_edits,
    read_records,
    reidentify,
    restoring_edits,
)
from thunder.deid.pipeline import Deidentifier
from thunder.deid.recognizers.registry import ScoredSpan

DEMO = Path(__file__).resolve().parents[2] / "thunder" / "resources" / "demo"
TEXT = "피고인 홍길동은 피해자 김영희(010-1234-5678)에게 900101-1234568을 알려 주었고, 홍길동이 다시 전화하였다.\r\n끝."


@pytest.fixture(scope="module")
def demo_documents() -> list[tuple[str, str, list[ScoredSpan]]]:
    """The demo judgments with their placeholders filled, and their gold spans as a stand-in for a model."""
    from thunder.documents.annotation import iter_corpus
    from thunder.synthesis.mentions import DEMO_MENTIONS, MentionBank
    from thunder.synthesis.synthesizer import Synthesizer
    from thunder.taxonomy import Taxonomy

    taxonomy = Taxonomy.load()
    synthesizer = Synthesizer(taxonomy, MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS]), seed=0)
    documents = []
    for doc in iter_corpus(DEMO / "annotated", errors="skip"):
        synthesized = synthesizer(doc)
        spans = [ScoredSpan(s.start, s.end, s.label, 0.9, "model") for s in synthesized.spans]
        documents.append((doc.doc_id, synthesized.text, spans))
    assert len(documents) > 100
    return documents


@pytest.fixture
def key(tmp_path: Path) -> MappingKey:
    return MappingKey.generate(tmp_path / "mapping.key")


def sealed_file(tmp_path: Path, key: MappingKey, texts: list[str]) -> tuple[Path, list]:
    deid = Deidentifier()
    results = [deid(text) for text in texts]
    with MappingWriter(tmp_path / "mapping.jsonl", key) as writer:
        for i, (text, result) in enumerate(zip(texts, results)):
            writer.add(f"doc{i}", text, result)
    return tmp_path / "mapping.jsonl", results


# ----------------------------------------------------------------------------------------------- restoring


@pytest.mark.parametrize("operator", ["placeholder", "tag", "mask", "surrogate"])
def test_demo_corpus_round_trip_is_byte_exact(demo_documents, operator: str, tmp_path: Path, key) -> None:
    deid = Deidentifier(operator=operator)
    outputs = []
    with MappingWriter(tmp_path / "m.jsonl", key) as writer:
        for doc_id, text, spans in demo_documents:
            result = deid.apply(text, spans + deid_recognized(deid, text))
            assert result.text != text
            outputs.append((doc_id, text, result.text))
            writer.add(doc_id, text, result)
    mapping = Mapping(tmp_path / "m.jsonl", MappingKey.load(tmp_path / "mapping.key"))
    assert len(mapping) == len(demo_documents)
    for doc_id, text, output in outputs:
        record = mapping.find(output, doc_id)
        assert record["doc"] == doc_id
        assert reidentify(output, record).encode("utf-8") == text.encode("utf-8")
        mentions = {m for entity in record["entities"] for m in entity["mentions"]}
        assert mentions and all(m in text for m in mentions)
    sealed = (tmp_path / "m.jsonl").read_text(encoding="utf-8")
    identifiers = {text[s.start : s.end] for _, text, spans in demo_documents for s in spans}
    checkable = [m for m in identifiers if len(m) >= 8 or len(m) >= 2 and not m.isascii()]  # not found by chance
    assert len(checkable) > 100 and not [m for m in checkable if m in sealed or json.dumps(m)[1:-1] in sealed]


def deid_recognized(deid: Deidentifier, text: str) -> list[ScoredSpan]:
    from thunder.deid.recognizers.registry import recognize

    return recognize(text, deid.recognizers)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text(alphabet="홍길동김철수이가은는을를과와로으 AB1-\n'”", min_size=1, max_size=60),
    st.lists(st.tuples(st.integers(0, 59), st.integers(1, 8), st.sampled_from(["내국인이름", "전화번호"])), max_size=6),
    st.sampled_from(["placeholder", "tag", "mask"]),
)
def test_edits_restore_any_output(text: str, raw: list[tuple[int, int, str]], operator: str) -> None:
    spans = [ScoredSpan(min(s, len(text)), min(s + n, len(text)), label, 0.5, "model") for s, n, label in raw]
    result = Deidentifier(recognizers=[], operator=operator).apply(text, spans)
    edits = restoring_edits(text, result.text, sorted(result.spans, key=lambda s: s.start))
    assert apply_edits(result.text, edits) == text


def test_a_particle_after_closing_quotes_is_restored_with_its_entity() -> None:
    text = "상호 '해오름한의원'이라는 곳"
    result = Deidentifier(recognizers=[]).apply(text, [ScoredSpan(4, 10, "내국인이름", 0.9, "model")])
    assert result.text == "상호 'A'라는 곳"
    assert restoring_edits(text, result.text, result.spans) == [(4, 8, "해오름한의원'이라는")]


def test_edits_fall_back_to_a_diff_when_the_spans_do_not_explain_the_output() -> None:
    original, output = "가나다 라마", "가X다 라Y"
    edits = restoring_edits(original, output, [])
    assert apply_edits(output, edits) == original


def test_identical_outputs_are_told_apart_by_document_id(tmp_path: Path, key) -> None:
    deid = Deidentifier()
    a, b = "전화 010-1234-5678", "전화 010-9876-5432"
    assert deid(a).text == deid(b).text
    with MappingWriter(tmp_path / "m.jsonl", key) as writer:
        writer.add("in/a.txt", a, deid(a))
        writer.add("in/b.txt", b, deid(b))
    mapping = Mapping(tmp_path / "m.jsonl", key)
    output = deid(a).text
    assert reidentify(output, mapping.find(output, "a.txt")) == a
    assert reidentify(output, mapping.find(output, "in/b.txt")) == b
    with pytest.raises(MappingError, match="2 mapping records with different originals"):
        mapping.find(output, "c.txt")
    with pytest.raises(MappingError, match="no mapping record"):
        mapping.find("전화 A.", "a.txt")


def test_edited_output_is_refused(tmp_path: Path, key) -> None:
    path, (result,) = sealed_file(tmp_path, key, [TEXT])
    record = Mapping(path, key).find(result.text)
    with pytest.raises(MappingError, match="differs from the de-identified output"):
        reidentify(result.text + " ", record)


# ----------------------------------------------------------------------------------------------- keys, refusal


def test_key_file_is_private_and_checked(tmp_path: Path) -> None:
    key = MappingKey.generate(tmp_path / "k")
    assert stat.S_IMODE((tmp_path / "k").stat().st_mode) == 0o600
    assert MappingKey.load(tmp_path / "k").key_id == key.key_id
    with pytest.raises(MappingError, match="exists already"):
        MappingKey.generate(tmp_path / "k")
    (tmp_path / "bad").write_text("hello\n")
    with pytest.raises(MappingError, match=r"bad: not a Thunder mapping key"):
        MappingKey.load(tmp_path / "bad")
    (tmp_path / "short").write_text(KEY_PREFIX + base64.urlsafe_b64encode(b"x" * 16).decode() + "\n")
    with pytest.raises(MappingError, match="32 bytes, got 16"):
        MappingKey.load(tmp_path / "short")
    with pytest.raises(MappingError, match="key file not found"):
        MappingKey.load(tmp_path / "missing")
    created = MappingKey.load_or_create(tmp_path / "new" / "k")
    assert MappingKey.load_or_create(tmp_path / "new" / "k").key_id == created.key_id


def test_wrong_key_is_refused(tmp_path: Path, key) -> None:
    path, _ = sealed_file(tmp_path, key, [TEXT])
    other = MappingKey.generate(tmp_path / "other.key")
    with pytest.raises(WrongKeyError, match=r"mapping.jsonl:1: written with key id .* wrong key file"):
        Mapping(path, other)
    with pytest.raises(WrongKeyError, match="use that key or a new mapping file"):
        MappingWriter(path, other)


def rewrite(path: Path, change) -> None:
    records = [record for _, record in read_records(path)]
    change(records)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def flip(text: str, at: int) -> str:
    data = bytearray(base64.b64decode(text))
    data[at] ^= 1
    return base64.b64encode(bytes(data)).decode()


@pytest.mark.parametrize(
    "change",
    [
        lambda records: records[0].update(ciphertext=flip(records[0]["ciphertext"], 5)),
        lambda records: records[0].update(ciphertext=flip(records[0]["ciphertext"], -1)),  # the GCM tag
        lambda records: records[0].update(nonce=flip(records[0]["nonce"], 0)),
        lambda records: records[0].update(lookup=records[1]["lookup"]),  # header fields are authenticated
        lambda records: records[0].update(ciphertext=records[1]["ciphertext"], nonce=records[1]["nonce"]),
        lambda records: records[0].update(ciphertext="not base64!"),
    ],
    ids=["ciphertext", "tag", "nonce", "lookup", "swapped", "garbled"],
)
def test_tampered_records_are_refused(tmp_path: Path, key, change) -> None:
    path, _ = sealed_file(tmp_path, key, [TEXT, "다른 문서 010-2222-3333"])
    rewrite(path, change)
    with pytest.raises(TamperedError, match=r"mapping.jsonl:1: authentication failed: the record was altered"):
        Mapping(path, key)


def test_malformed_mapping_lines_name_the_line(tmp_path: Path, key) -> None:
    path, _ = sealed_file(tmp_path, key, [TEXT])
    with path.open("a", encoding="utf-8") as stream:
        stream.write("{not json\n")
    with pytest.raises(MappingError, match=r"mapping.jsonl:2: not a mapping record"):
        Mapping(path, key)
    path.write_text('{"format": "something else"}\n', encoding="utf-8")
    with pytest.raises(MappingError, match=r"mapping.jsonl:1: not a Thunder mapping record"):
        Mapping(path, key)


def test_writer_appends_and_drops_a_record_cut_off_by_an_interrupted_run(tmp_path: Path, key) -> None:
    path, (first,) = sealed_file(tmp_path, key, [TEXT])
    with path.open("a", encoding="utf-8") as stream:
        stream.write('{"format": "thunder-mapping", "version": 1, "key_id": "')  # killed mid-write
    deid = Deidentifier()
    second = "피해자 010-5555-6666"
    with MappingWriter(path, key) as writer:
        writer.add("doc1", second, deid(second))
    mapping = Mapping(path, key)
    assert len(mapping) == 2
    assert reidentify(first.text, mapping.find(first.text)) == TEXT


# ----------------------------------------------------------------------------------------------- the command


def write_outputs(tmp_path: Path, key: MappingKey, documents) -> tuple[Path, dict[str, str]]:
    """What ``thunder deid --mapping`` writes: de-identified files under out/ and the mapping."""
    deid = Deidentifier()
    originals = {}
    with MappingWriter(tmp_path / "m.jsonl", key) as writer:
        for doc_id, text, spans in documents:
            name = f"{doc_id}.txt"
            result = deid.apply(text, spans)
            (tmp_path / "out" / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / "out" / name).write_bytes(result.text.encode("utf-8"))
            writer.add(f"in/{name}", text, result)
            originals[name] = text
    return tmp_path / "out", originals


def test_reidentify_command_restores_files_byte_for_byte(demo_documents, tmp_path: Path, key, capsys) -> None:
    out, originals = write_outputs(tmp_path, key, demo_documents[:20])
    main(["reidentify", "--mapping", str(tmp_path / "m.jsonl"), "--key-file", str(tmp_path / "mapping.key"),
          str(out), "--out", str(tmp_path / "restored")])  # fmt: skip
    for name, text in originals.items():
        assert (tmp_path / "restored" / name).read_bytes() == text.encode("utf-8")
    other = MappingKey.generate(tmp_path / "other.key")
    with pytest.raises(SystemExit) as exit_info:
        main(["reidentify", "--mapping", str(tmp_path / "m.jsonl"), "--key-file", other.source, str(out)])
    assert "wrong key file" in str(exit_info.value) and "m.jsonl:1" in str(exit_info.value)


def test_reidentify_command_reports_unknown_documents(tmp_path: Path, key, capsys) -> None:
    out, _ = write_outputs(tmp_path, key, [("a", TEXT, [])])
    (out / "stranger.txt").write_text("아무 관계 없는 문서", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(["reidentify", "--mapping", str(tmp_path / "m.jsonl"), "--key-file", key.source, str(out), "--out",
              str(tmp_path / "restored")])  # fmt: skip
    assert exit_info.value.code == 1
    assert "stranger.txt: no mapping record for document 'stranger.txt'" in capsys.readouterr().err
    assert (tmp_path / "restored" / "a.txt").read_bytes() == TEXT.encode("utf-8")


def test_reidentify_says_why_nothing_was_restored(tmp_path: Path, key, capsys) -> None:
    """Issue 82: inputs that hold nothing to restore end with a line saying so and what was skipped, not a bare
    ``0 restored, 0 failed`` and exit 0."""
    write_outputs(tmp_path, key, [("a", TEXT, [])])
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "scan.png").write_bytes(b"\x89PNG")
    with pytest.raises(SystemExit) as exit_info:
        main(["reidentify", "--mapping", str(tmp_path / "m.jsonl"), "--key-file", key.source, str(tmp_path / "other")])
    assert str(exit_info.value.code).startswith("thunder reidentify: error: nothing to restore: the inputs hold no")
    assert "skipped files that are not" in capsys.readouterr().err


def test_deid_command_round_trip(demo_documents, tmp_path: Path, capsys) -> None:
    """``thunder deid --mapping M --key-file K --no-span-text`` then ``thunder reidentify`` gives the inputs back."""

    inputs = tmp_path / "in"
    for doc_id, text, _ in demo_documents[:10]:
        (inputs / f"{doc_id}.txt").parent.mkdir(parents=True, exist_ok=True)
        (inputs / f"{doc_id}.txt").write_bytes(text.encode("utf-8"))
    key_file, mapping = str(tmp_path / "k"), str(tmp_path / "m.jsonl")
    main(["deid", "--recognizers_only", str(inputs), "--out", str(tmp_path / "out"), "--spans", str(tmp_path / "spans.jsonl"),
          "--mapping", mapping, "--key-file", key_file, "--no-span-text"])  # fmt: skip
    spans = [json.loads(line) for line in (tmp_path / "spans.jsonl").read_text(encoding="utf-8").splitlines()]
    assert spans and all("text" not in span for span in spans)
    main(["reidentify", "--mapping", mapping, "--key-file", key_file, str(tmp_path / "out"), "--out",
          str(tmp_path / "restored")])  # fmt: skip
    sources = [p for p in inputs.rglob("*.txt")]
    assert len(sources) == 10
    for source in sources:
        assert (tmp_path / "restored" / source.relative_to(inputs)).read_bytes() == source.read_bytes()
