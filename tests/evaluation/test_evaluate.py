"""The evaluation harness: leaks, over-redaction, token metrics, JSON, input paths and the recognizer baseline."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from thunder.cli import main
from thunder.data import Recipe
from thunder.deid.recognizers.registry import RECOGNIZERS, Recognizer, ScoredSpan
from thunder.evaluation import evaluate as ev
from thunder.evaluation.gold import load_documents, read_gold
from thunder.evaluation.report import EvaluationReport
from thunder.synthesis.synthesizer import EntitySpan, SynthesizedDocument
from thunder.taxonomy import LabelSet, Taxonomy

NAME, PLACE = "내국인이름", "아파트"  # a direct and a quasi identifier of the default taxonomy

TEXT = "피해자 김철수와 이영희는 서울 행복아파트에서 만났다."
SPANS = {"김철수": NAME, "이영희": NAME, "행복": PLACE}


def _span(text: str, mention: str, label: str) -> EntitySpan:
    start = text.index(mention)
    return EntitySpan(start, start + len(mention), label, mention)


@dataclass(frozen=True)
class FakeSpan:
    start: int
    end: int
    label: str
    category: str | None = None
    tier1: str | None = None
    source: str = "model"


@dataclass(frozen=True)
class FakeResult:
    text: str
    spans: tuple[FakeSpan, ...]


class FakeDeidentifier:
    """Replaces fixed substrings (given per text) with the given labels; no model."""

    def __init__(self, replace: dict[str, list[tuple[str, str]]]) -> None:
        self.replace = replace

    def __call__(self, text: str) -> FakeResult:
        spans = []
        for piece, label, *source in self.replace.get(text, []):
            start = text.index(piece)
            spans.append(FakeSpan(start, start + len(piece), label, source=source[0] if source else "model"))
        return FakeResult(text, tuple(spans))


@pytest.fixture()
def hand_made(taxonomy: Taxonomy) -> EvaluationReport:
    """김철수 replaced (correct), 이영희 partly replaced and mistyped (partial leak), 행복 missed (full leak),
    "피해자" replaced though it is no identifier (over-redaction)."""
    assert taxonomy.labels[NAME].tier1 == "direct" and taxonomy.labels[PLACE].tier1 == "quasi"
    doc = SynthesizedDocument("doc-1", TEXT, tuple(_span(TEXT, m, lab) for m, lab in SPANS.items()))
    fake = FakeDeidentifier({TEXT: [("김철수", NAME), ("이영", PLACE), ("피해자", NAME)]})
    return ev.evaluate(fake, [doc], taxonomy=taxonomy, granularity="label")


def test_full_and_partial_leaks_count_a_correct_redaction_does_not(hand_made: EvaluationReport) -> None:
    assert (hand_made.leaks.mentions, hand_made.leaks.leaked, hand_made.leaks.partial) == (3, 2, 1)
    leaked = {m.text: m for m in hand_made.leaked}
    assert set(leaked) == {"이영희", "행복"}
    assert leaked["이영희"].partial and leaked["이영희"].survived == "희"
    assert not leaked["행복"].partial and leaked["행복"].survived == "행복"
    assert leaked["행복"].doc_id == "doc-1"
    assert leaked["행복"].left == TEXT[: TEXT.index("행복")] and leaked["행복"].right.startswith("아파트에서")


def test_breakdown_by_tier_category_and_label(hand_made: EvaluationReport, taxonomy: Taxonomy) -> None:
    direct, quasi = hand_made.leaks_by_tier["direct"], hand_made.leaks_by_tier["quasi"]
    assert (direct.mentions, direct.leaked, direct.rate) == (2, 1, 0.5)
    assert (quasi.mentions, quasi.leaked, quasi.rate) == (1, 1, 1.0)
    name_cat, place_cat = taxonomy.labels[NAME].category, taxonomy.labels[PLACE].category
    assert name_cat != place_cat
    assert hand_made.leaks_by_category[name_cat].to_dict() == {"mentions": 2, "leaked": 1, "partial": 1, "rate": 0.5}
    assert hand_made.leaks_by_category[place_cat].leaked == 1
    assert hand_made.leaks_by_label[NAME].mentions == 2


def test_over_redaction_counts_replaced_non_identifier_characters(hand_made: EvaluationReport) -> None:
    non_identifier = len(TEXT.replace(" ", "")) - sum(len(m) for m in SPANS)
    assert hand_made.non_identifier_chars == non_identifier
    assert hand_made.over_redacted_chars == len("피해자")
    assert hand_made.over_redaction == pytest.approx(3 / non_identifier)
    assert hand_made.over_redacted_texts == {"피해자": 1}
    assert hand_made.to_dict()["over_redaction"]["texts"] == {"피해자": 1}
    assert "- '피해자' × 1" in hand_made.format(show_leaks=True)


def test_token_metrics_binary_and_micro(hand_made: EvaluationReport) -> None:
    # one token per non-whitespace character: gold 8 identifier chars; predicted 김철수 (right), 이영 (wrong type),
    # 피해자 (not an identifier)
    assert hand_made.tokenization == ev.CHAR_TOKENIZATION
    assert hand_made.binary.precision == pytest.approx(5 / 8) and hand_made.binary.recall == pytest.approx(5 / 8)
    assert hand_made.micro.precision == pytest.approx(3 / 8) and hand_made.micro.recall == pytest.approx(3 / 8)


def test_whitespace_inside_a_mention_is_not_a_leak(taxonomy: Taxonomy) -> None:
    text = "주소는 서울 강남구 입니다"
    doc = SynthesizedDocument("d", text, (_span(text, "서울 강남구", PLACE),))
    fake = FakeDeidentifier({text: [("서울", PLACE), ("강남구", PLACE)]})
    report = ev.evaluate(fake, [doc], taxonomy=taxonomy)
    assert report.leaks.leaked == 0 and report.over_redacted_chars == 0


def test_report_json_shape_and_table(hand_made: EvaluationReport) -> None:
    data = json.loads(json.dumps(hand_made.to_dict(), ensure_ascii=False))
    assert set(data) >= {"meta", "documents", "token_metrics", "leaks", "over_redaction", "leaked_mentions"}
    assert data["leaks"]["by_tier1"]["direct"]["leaked"] == 1
    assert data["leaks"]["by_label"][NAME]["tier1"] == "direct"
    assert data["token_metrics"]["binary"]["precision"] == pytest.approx(5 / 8)
    by_category = {row["type"]: row for row in data["token_metrics"]["by_category"]}
    name_row = by_category[hand_made.label_tiers[NAME][1]]
    assert (name_row["support"], name_row["precision"], name_row["recall"]) == (6, 0.5, 0.5)
    assert [m["text"] for m in data["leaked_mentions"]] == ["이영희", "행복"]
    table = hand_made.format(show_leaks=True)
    assert "| direct | 2 | 1 | 1 | 50.00% |" in table
    assert "⟦행복⟧" in table and "doc-1" in table


def test_over_redaction_by_source_and_legal_text_replaced(tmp_path: Path, taxonomy: Taxonomy) -> None:
    text = "원심은 형법 제62조 제1항을 적용하였고, 원심의 판단에 잘못이 없다.\n판사 오현석"
    data = _write_jsonl(tmp_path / "published.jsonl", [{"id": "p-1", "text": text}])  # no spans: no identifiers
    documents = list(read_gold(data, taxonomy))
    assert documents[0].spans == ()
    fake = FakeDeidentifier({text: [("제62조", NAME), ("원심은", NAME, "model"), ("원심의", NAME, "propagated"),
                                    ("오현석", NAME, "officials")]})  # fmt: skip
    report = ev.evaluate(fake, documents, taxonomy=taxonomy, granularity="label")
    replaced = report.replacements
    assert replaced.by_source == {"model": 7, "propagated": 3, "officials": 3}
    assert report.over_redacted_chars == 13 and report.leaks.mentions == 0
    assert replaced.legal_replaced["statute reference"] == 4 and replaced.legal_replaced["official name"] == 3
    assert replaced.legal_replaced["procedural term"] == 4 and replaced.legal_chars["procedural term"] == 6  # 원심 ×2, 판사
    assert replaced.legal_chars["statute"] == 2 and replaced.legal_replaced["statute"] == 0  # 형법 stays
    table = report.format(show_leaks=True)
    assert "| propagated | 3 |" in table and "| statute reference | 7 | 4 | 57.14% |" in table
    assert "'원심의' × 1 (propagated 3 characters)" in table
    assert report.to_dict()["over_redaction"]["by_source"]["officials"] == 3


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def test_command_writes_json_with_run_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spans = [[TEXT.index(m), TEXT.index(m) + len(m), lab] for m, lab in SPANS.items()]
    data = _write_jsonl(tmp_path / "gold.jsonl", [{"id": "doc-1", "text": TEXT, "spans": spans}])
    fake = FakeDeidentifier({TEXT: [("김철수", NAME), ("이영", PLACE), ("피해자", NAME)]})
    from thunder.deid.pipeline import PipelineOptions
    from thunder.model.decoding import OperatingPoint

    fake.taxonomy, fake.operating_point = Taxonomy.load(), OperatingPoint(0.3, 0.05)
    monkeypatch.setattr(PipelineOptions, "build", lambda self, policy=None: fake)
    out = tmp_path / "report.json"
    main(["evaluate", "--model", "fake-model", "--data", str(data), "--seed", "7", "--json", str(out)])
    report = json.loads(out.read_text(encoding="utf-8"))
    meta = report["meta"]
    assert (meta["model"], meta["data"], meta["seed"]) == ("fake-model", str(data), 7)
    assert meta["thunder_version"] and meta["date"]
    assert meta["operating_point"] == {"threshold": 0.3, "grow_threshold": 0.05}  # what the model ran at
    assert report["leaks"]["all"] == {"mentions": 3, "leaked": 2, "partial": 1, "rate": 2 / 3}
    assert "| all | 3 | 2 | 1 | 66.67% |" in capsys.readouterr().out


def test_jsonl_errors_name_file_and_line(tmp_path: Path, taxonomy: Taxonomy) -> None:
    records = [{"text": "abc", "spans": []}, {"text": "abc", "spans": [[1, 9, NAME]]}]
    data = _write_jsonl(tmp_path / "bad.jsonl", records)
    with pytest.raises(ValueError, match=r"bad\.jsonl:2: span 0"):
        list(read_gold(data, taxonomy))


def test_record_without_spans_is_a_judgment_without_identifiers(tmp_path: Path, taxonomy: Taxonomy) -> None:
    """A published, already de-identified decision has no gold spans: every replaced character is over-redaction."""
    text = "원고는 피고에게 010-1234-5678로 전화하였다."
    data = _write_jsonl(tmp_path / "precedents.jsonl", [{"id": "2020다1", "text": text, "kind": "civil"}])
    (doc,) = read_gold(data, taxonomy)
    assert (doc.doc_id, doc.text, doc.spans) == ("2020다1", text, ())
    fake = FakeDeidentifier({text: [("010-1234-5678", "전화번호"), ("원고", NAME)]})
    report = ev.evaluate(fake, [doc], taxonomy=taxonomy)
    assert (report.over_redacted_chars, report.non_identifier_chars) == (15, len(text.replace(" ", "")))
    assert report.over_redacted_texts == {"010-1234-5678": 1, "원고": 1}
    assert (report.leaks.mentions, report.leaks.rate) == (0, None)


STRUCTURED = [
    ("피고인은 피해자(주민등록번호 900101-1234568)에게 휴대전화(010-1234-5678)로 연락하였다.",
     [("900101-1234568", "주민등록번호"), ("010-1234-5678", "전화번호")]),
    ("피해자는 농협 계좌(302-1234-5678-91)로 100,000원을 보냈고 신용카드(4518-4210-1234-5678)를 썼다.",
     [("302-1234-5678-91", "계좌번호"), ("4518-4210-1234-5678", "신용카드번호")]),
    ("피고인은 2021. 3. 4. 12가3456 승용차를 운전하였고(서울중앙지방법원 2020고단1234), kim.cs@example.com 으로 메일을 보냈다.",
     [("12가3456", "차량번호"), ("kim.cs@example.com", "이메일주소")]),
    ("피고인 홍길동은 피해자 김영희에게 02-123-4567로 전화하였다.",
     [("홍길동", NAME), ("김영희", NAME), ("02-123-4567", "전화번호")]),
]


def test_recognizer_baseline_leaks_no_well_formed_structured_identifier(tmp_path: Path) -> None:
    records = [
        {"id": f"s{i}", "text": text, "spans": [[text.index(m), text.index(m) + len(m), lab] for m, lab in spans]}
        for i, (text, spans) in enumerate(STRUCTURED)
    ]
    data = _write_jsonl(tmp_path / "structured.jsonl", records)
    out = tmp_path / "baseline.json"
    main(["evaluate", "--recognizers_only", "true", "--data", str(data), "--json", str(out), "--show_leaks", "true"])
    report = json.loads(out.read_text(encoding="utf-8"))
    by_label = report["leaks"]["by_label"]
    structured = {lab for _, spans in STRUCTURED for _, lab in spans} - {NAME}
    assert {lab: by_label[lab]["leaked"] for lab in structured} == {lab: 0 for lab in structured}
    # names need the model, but a role places these two (홍길동, Mecab-ko's word for "John Doe", by its shape)
    assert by_label[NAME] == {"tier1": "direct", "category": "사건관계인특정정보", "mentions": 2, "leaked": 0,
                              "partial": 0, "rate": 0.0}
    assert report["leaked_mentions"] == []
    assert report["over_redaction"]["replaced"] == 0  # dates, amounts and case numbers stay
    assert report["meta"]["recognizers_only"] and report["meta"]["model"] is None
    assert report["token_metrics"]["tokenization"] == ev.CHAR_TOKENIZATION
    assert report["token_metrics"]["binary"]["precision"] == 1.0


class NameListRecognizer(Recognizer):
    """A user recognizer given by class_path (``test_evaluate.NameListRecognizer``): marks the listed names."""

    name = "name_list"

    def __init__(self, names: list[str], label: str = NAME) -> None:
        self.names, self.label = names, label

    def find(self, text: str) -> list[ScoredSpan]:
        return [ScoredSpan(i, i + len(n), self.label, 0.9, self.name) for n in self.names if (i := text.find(n)) >= 0]


def test_evaluate_runs_a_custom_recognizer_and_operator_as_deid_would(tmp_path: Path) -> None:
    records = [{"id": f"s{i}", "text": text, "spans": [[text.index(m), text.index(m) + len(m), lab] for m, lab in spans]}
               for i, (text, spans) in enumerate(STRUCTURED)]  # fmt: skip
    data = _write_jsonl(tmp_path / "structured.jsonl", records)
    out = tmp_path / "custom.json"
    user = json.dumps([*RECOGNIZERS, {"class_path": "test_evaluate.NameListRecognizer",
                                      "init_args": {"names": ["홍길동", "김영희"]}}])  # fmt: skip
    main(["evaluate", "--recognizers_only", "--data", str(data), "--json", str(out), "--recognizers", user,
          "--operator", "mask"])  # fmt: skip
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["leaks"]["by_label"][NAME]["leaked"] == 0  # the user's recognizer found the names
    assert report["meta"]["pipeline"]["operator"] == "mask"


def test_head_nouns_choose_the_gold_convention(taxonomy: Taxonomy) -> None:
    """The same filling under both conventions; ``corpus`` gold leaves out head nouns that ``inside`` covers."""
    corpus = list(load_documents(Recipe(head_nouns="corpus"), taxonomy, split="test"))
    inside = list(load_documents(Recipe(), taxonomy, split="test"))
    assert [d.text for d in corpus] == [d.text for d in inside]
    pairs = [(a, b) for x, y in zip(corpus, inside) for a, b in zip(x.spans, y.spans)]
    assert all(a.start == b.start and a.end <= b.end for a, b in pairs)
    assert any(a.end < b.end for a, b in pairs)
    with pytest.raises(ValueError, match="head_nouns"):
        load_documents(Recipe(head_nouns="outside"), taxonomy)


def test_annotated_directory_is_synthesized_reproducibly(taxonomy: Taxonomy) -> None:
    docs = list(load_documents(Recipe(seed=3), taxonomy, limit=5))
    assert len(docs) == 5 and all(doc.spans for doc in docs)
    assert [d.text for d in load_documents(Recipe(seed=3), taxonomy, limit=5)] == [d.text for d in docs]
    assert [d.text for d in load_documents(Recipe(seed=4), taxonomy, limit=5)] != [d.text for d in docs]

    gold = {d.text: d.spans for d in docs}
    perfect = ev.evaluate(lambda text: FakeResult(text, gold[text]), docs, taxonomy=taxonomy)
    assert perfect.leaks.mentions == sum(len(d.spans) for d in docs)
    assert (perfect.leaks.leaked, perfect.over_redacted_chars) == (0, 0)
    assert perfect.binary.f1 == 1.0 and perfect.micro.f1 == 1.0

    nothing = ev.evaluate(lambda text: FakeResult(text, ()), docs, taxonomy=taxonomy)
    assert nothing.leaks.leaked == nothing.leaks.mentions and nothing.leaks.partial == 0
    assert nothing.binary.recall == 0.0


def test_split_selects_the_training_test_split(taxonomy: Taxonomy) -> None:
    from thunder.data import DEMO_CORPUS, read_corpus, split_documents

    expected = split_documents(read_corpus([DEMO_CORPUS]), (0.8, 0.1, 0.1), 0)["test"]
    docs = list(load_documents(Recipe(data_dir=str(DEMO_CORPUS)), taxonomy, split="test"))
    assert [d.doc_id for d in docs] == [d.doc_id for d in expected]


class WordTokenizer:
    """Whitespace-separated words as tokens (stands in for a model's tokenizer)."""

    def encode(self, text: str) -> SimpleNamespace:
        return SimpleNamespace(offsets=[m.span() for m in re.finditer(r"\S+", text)])


def test_model_tokenizer_and_granularity_are_taken_from_the_deidentifier(taxonomy: Taxonomy) -> None:
    text = "피해자 김철수 에게 행복 아파트"
    doc = SynthesizedDocument("d", text, (_span(text, "김철수", NAME), _span(text, "행복", PLACE)))
    fake = FakeDeidentifier({text: [("김철수", "주민등록번호"), ("행복", PLACE)]})  # same category, other label
    fake.tokenizer = WordTokenizer()
    fake.label_set = LabelSet(taxonomy, granularity="category")
    report = ev.evaluate(fake, [doc], taxonomy=taxonomy)
    assert (report.granularity, report.tokens, report.tokenization) == ("category", 5, "WordTokenizer")
    assert report.micro.f1 == 1.0  # 주민등록번호 and 내국인이름 share a category
    by_label = ev.evaluate(fake, [doc], taxonomy=taxonomy, granularity="label")
    assert by_label.micro.precision == 0.5 and by_label.binary.f1 == 1.0


def test_partial_leak_keeps_the_surviving_words(taxonomy: Taxonomy) -> None:
    text = "주소는 서울 강남구 입니다"
    doc = SynthesizedDocument("d", text, (_span(text, "서울 강남구", "구아래주소"),))
    report = ev.evaluate(FakeDeidentifier({text: [("강남구", PLACE)]}), [doc], taxonomy=taxonomy)
    (leak,) = report.leaked
    assert leak.partial and leak.survived == "서울" and report.leaks_by_tier["direct"].partial == 1


def test_jsonl_labels_resolve_through_the_taxonomy(tmp_path: Path, taxonomy: Taxonomy) -> None:
    text = "서울 강남구 역삼동 1"
    data = _write_jsonl(tmp_path / "alias.jsonl", [{"text": text, "spans": [[7, 12, "구이하주소"]]}])
    (doc,) = read_gold(data, taxonomy)
    assert doc.doc_id == "alias:1" and doc.spans[0].label == "구아래주소"
    bad = _write_jsonl(tmp_path / "unknown.jsonl", [{"text": text, "spans": [[0, 2, "없는라벨이다"]]}])
    with pytest.raises(ValueError, match=r"unknown\.jsonl:1: .*없는라벨이다"):
        list(read_gold(bad, taxonomy))


def test_untrained_model_runs_through_the_harness(tmp_path: Path, taxonomy: Taxonomy) -> None:
    """The real pipeline with a tiny untrained model: tokens and entity types come from the model."""
    from thunder.deid.pipeline import Deidentifier
    from thunder.language.tokenizer import ThunderTokenizer
    from thunder.model.modules import TokenClassifier

    docs = list(load_documents(Recipe(), taxonomy, limit=3))
    ThunderTokenizer.train([d.text for d in docs], vocab_size=300).save_pretrained(tmp_path / "tok")
    tokenizer = ThunderTokenizer.from_pretrained(tmp_path / "tok")
    label_set = LabelSet(taxonomy, granularity="category", scheme="BIO")
    model = TokenClassifier(backbone="tiny", label_set=label_set.to_dict(), tokenizer=str(tmp_path / "tok"))
    model.build()
    report = ev.evaluate(Deidentifier(model, tokenizer, label_set, max_length=64, stride=16), docs)
    assert report.granularity == "category" and report.tokenization.startswith("ThunderTokenizer")
    assert report.tokens == sum(len(tokenizer.encode(d.text).offsets) for d in docs)
    assert report.leaks.mentions == sum(len(d.spans) for d in docs)


STRUCTURED_LABELS = ("주민등록번호", "전화번호", "계좌번호", "신용카드번호", "차량번호", "이메일주소")


@pytest.mark.slow
@pytest.mark.shared_data
def test_recognizers_leak_no_structured_identifier_on_the_shared_test_split(shared_corpus: Path) -> None:
    """The issue's target for the no-model baseline: structured direct identifiers never leak (test split)."""
    taxonomy = Taxonomy.load(alias_files=[shared_corpus / "tag_aliases.json"])
    mentions = [shared_corpus / "mentions", shared_corpus / "mentions-llm"]
    recipe = Recipe(data_dir=str(shared_corpus / "annotated"), mention_dirs=mentions)
    docs = load_documents(recipe, taxonomy, split="test")
    report = ev.evaluate(None, docs, taxonomy=taxonomy)
    structured = {k: v for k, v in report.leaks_by_label.items() if k in STRUCTURED_LABELS}
    assert sum(v.mentions for v in structured.values()) > 50
    assert {k: v.leaked for k, v in structured.items()} == {k: 0 for k in structured}
