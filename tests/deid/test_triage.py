"""Triage: possible misses (near the threshold, cut words, parts of detected entities), the risk, the review queue
of ``thunder deid`` and the triage curve of ``thunder evaluate``."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
import torch
from helpers import FILLER, NAME, KeywordModel

from thunder.cli import main
from thunder.deid.pipeline import Deidentifier, TokenPredictions
from thunder.deid.policy import PublicationPolicy
from thunder.deid.protection import Protection
from thunder.deid.recognizers.registry import ScoredSpan
from thunder.deid.triage import (
    PARTIAL_SUFFIX,
    ReviewQueue,
    Triage,
    TriagedResult,
    TriageRule,
    merge_marks,
    whole_word,
    worth_a_look,
)
from thunder.evaluation import evaluate as ev
from thunder.model.decoding import OperatingPoint
from thunder.synthesis.synthesizer import EntitySpan, SynthesizedDocument
from thunder.taxonomy import LabelSet, Taxonomy

ADDRESS = "주소"


def triaged(
    text: str, spans: list[ScoredSpan], rule: TriageRule | None = None, keep_regions: bool = True
) -> TriagedResult:
    """The triage of ``spans`` replaced in ``text`` (no model)."""
    deid = Deidentifier(recognizers=[], policy=PublicationPolicy(keep_regions=keep_regions))
    return Triage(deid, rule).triage(text, TokenPredictions([]), deid.apply(text, spans))


def span_at(text: str, mention: str, label: str = NAME, occurrence: int = 0) -> ScoredSpan:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(mention, start + 1)
    return ScoredSpan(start, start + len(mention), label, 0.99, "model")


def marks(result: TriagedResult) -> list[tuple[str, str]]:
    return [(m.text, m.reason) for m in result.suggestions]


# ----------------------------------------------------------------------------------------------- near the threshold


@pytest.fixture(scope="module")
def uncertain(tokenizer, label_set: LabelSet):
    """A context-free model: the tokens of 홍길동 score 1 - P(O) about 0.3 as a name, all others below 0.001."""
    text = "피고인 홍길동은 " + FILLER
    encoding = tokenizer.encode(text)
    name = {i for i, (s, e) in zip(encoding.ids, encoding.offsets) if 4 <= s and e <= 7}
    model = KeywordModel(tokenizer.vocab_size, len(label_set), name, label_set.inside_id(NAME))
    with torch.no_grad():
        model.table.weight[:, 0] = 14.0
        model.table.weight[sorted(name), label_set.inside_id(NAME)] = 14 - 0.85
    return text, model


def test_a_name_left_in_near_the_threshold_is_a_possible_miss(uncertain, tokenizer, label_set: LabelSet) -> None:
    text, model = uncertain
    deid = Deidentifier(model, tokenizer, label_set, recognizers=[])
    result = Triage(deid)(text)
    plain = deid(text)
    assert (result.text, result.spans) == (plain.text, plain.spans) == (text, ())  # nothing more is replaced
    (miss,) = result.suggestions
    assert (miss.text, miss.reason, miss.label, miss.source, miss.placeholder) == (
        "홍길동", "near_threshold", NAME, "possible_miss", "")  # fmt: skip
    assert 0.2 < miss.model_score < 0.4
    rule = TriageRule()
    assert miss.score == pytest.approx(rule.near_weight * (miss.model_score / 0.5) ** rule.near_power, abs=1e-3)
    unmarked = 1 - math.exp(-rule.unmarked_rate * len(text) / 10_000)  # leaks no mark points at, by the length
    assert result.unmarked_risk == pytest.approx(unmarked, abs=1e-4) and unmarked > 0
    assert result.risk == pytest.approx(1 - (1 - unmarked) * (1 - miss.score), abs=1e-4)
    assert Triage(deid, TriageRule(unmarked_rate=0))(text).risk == miss.score
    assert result.reasons() == [f"1 near the threshold, highest {miss.model_score:.2f}"]
    name_tokens = sum(1 for s, e in tokenizer.encode(text).offsets if 4 <= s and e <= 7)
    assert result.near_tokens == name_tokens >= 1  # the baseline evaluate ranks by: the tokens of 홍길동
    # the margin decides how far below the threshold a token may lie: log-odds, so odds of 1/e^margin of the threshold
    assert rule.near_floor(0.5) == pytest.approx(1 / (1 + math.exp(rule.near_margin)))
    assert Triage(deid, TriageRule(near_margin=0.5))(text).suggestions == ()  # floor 0.38 > 0.3
    assert Triage(deid, TriageRule(near_margin=0))(text).suggestions == ()
    # replaced at a lower threshold: then nothing is left to suggest
    low = Deidentifier(model, tokenizer, label_set, recognizers=[], operating_point=OperatingPoint(0.25))
    result = Triage(low)(text)
    assert result.text == low(text).text == text.replace("홍길동은", "A는") and result.suggestions == ()
    assert result.near_tokens == 0  # replaced: none left in


def test_the_calibration_of_the_risk() -> None:
    """Brier score, the share's Brier score and the reliability bins, worked by hand."""
    found = ev.calibration([0.05, 0.2, 0.25, 0.9, 1.0], [False, False, True, True, True])
    assert found["brier"] == pytest.approx((0.05**2 + 0.2**2 + 0.75**2 + 0.1**2 + 0) / 5)
    assert found["brier_of_the_share"] == pytest.approx(0.6 * 0.4) and found["mean_risk"] == pytest.approx(0.48)
    assert [(b["low"], b["documents"], b["leaking_share"]) for b in found["bins"]] == [
        (0.0, 1, 0.0), (0.1, 2, 0.5), (0.6, 2, 1.0)]  # an empty bin is left out; 1.0 falls in the last  # fmt: skip
    assert ev.calibration([], [])["brier"] is None


def test_triage_keeps_the_pipelines_spans_for_batches_and_windows(tokenizer, label_set: LabelSet) -> None:
    text = "".join(f"{i}번째 문장에서 피고인 홍길동은 {FILLER}" for i in range(6))
    encoding = tokenizer.encode(text)
    name = {i for i, (s, e) in zip(encoding.ids, encoding.offsets) if text[s:e] in "홍길동"}
    model = KeywordModel(tokenizer.vocab_size, len(label_set), name, label_set.inside_id(NAME))
    deid = Deidentifier(model, tokenizer, label_set, max_length=32, stride=8, batch_size=3)
    texts = [text, "", "전화 010-1234-5678로 연락하였다."]
    for result, plain in zip(Triage(deid).deidentify_batch(texts), deid.deidentify_batch(texts)):
        assert (result.text, result.spans) == (plain.text, plain.spans)


# ----------------------------------------------------------------------------------------------- cut words and parts


def test_the_rest_of_a_cut_word_is_a_possible_miss_its_particles_are_not() -> None:
    text = "피고인은 증평송산지구칸타빌아파트에서 구늑힌쳔에게 101동 1001호를 팔았고, 홍길동이 이를 알았다."
    spans = [span_at(text, "증평송산지구칸타빌", "아파트"), span_at(text, "늑힌쳔"), span_at(text, "101동 1001", ADDRESS),
             span_at(text, "홍길동")]  # fmt: skip
    result = triaged(text, spans)
    assert marks(result) == [("구", "cut_word")]  # not 에서, 에게, 아파트 and 호 (kept: head nouns), 이
    (second,) = result.suggestions
    assert (second.label, second.placeholder) == (NAME, "B")
    rule = TriageRule()
    clean = math.exp(-rule.unmarked_rate * len(text) / 10_000) * (1 - rule.cut_word_weight)
    assert result.risk == pytest.approx(1 - clean, abs=1e-4)
    unkept = triaged(text, spans, TriageRule(cut_word_keep=()))
    assert marks(unkept) == [("아파트", "cut_word"), ("구", "cut_word"), ("호", "cut_word")]
    assert (unkept.suggestions[0].label, unkept.suggestions[0].placeholder) == ("아파트", "A")
    assert marks(triaged(text, spans, TriageRule(cut_word_weight=0))) == []


def test_the_syllable_after_a_short_name_is_a_rest_even_when_it_reads_as_a_particle() -> None:
    text = "피해자 박갬에게 김철수가 강쑨으로부터 받은 돈을 주었고, 이는 서구에서 있었다."
    spans = [span_at(text, "박갬"), span_at(text, "김철수"), span_at(text, "강쑨"), span_at(text, "서구", ADDRESS)]
    assert marks(triaged(text, spans)) == [("에", "cut_word"), ("으", "cut_word")]  # not 가 (a full name), 에서 (no name)
    category = [replace_label(span, "사건관계인특정정보") if span.label == NAME else span for span in spans]
    assert marks(triaged(text, category)) == [("에", "cut_word"), ("으", "cut_word")]
    assert marks(triaged(text, spans, TriageRule(full_name_syllables=0))) == []
    assert marks(triaged(text, spans, TriageRule(full_name_syllables=4))) == [
        ("에", "cut_word"), ("가", "cut_word"), ("으", "cut_word")]  # fmt: skip
    with pytest.raises(ValueError, match="full_name_syllables must be a whole number of at least 0"):
        TriageRule(full_name_syllables=-1)


def test_the_syllable_after_a_short_name_the_document_shows_whole_is_no_rest() -> None:
    """Mentions of a two-syllable name followed by different particles (``오숿은``, ``오숿의``, ``오숿에``), or one
    followed by no letter, show where the name ends: no mark after any of them; followed by the same syllable every
    time (``박갬에게``, ``박갬에서``), the syllable may still be the name's last one."""
    differing = "원고 오숿은 2022. 3. 원고 오숿의 유류카드를 썼고, 원고 오숿에 대한 처분이다."
    assert marks(triaged(differing, [span_at(differing, "오숿")])) == []
    alone = "피해자 박갬에게 돈을 주었다. 증인 박갬."
    assert marks(triaged(alone, [span_at(alone, "박갬")])) == []
    same = "피해자 박갬에게 돈을 주었다. 피해자 박갬에서 시작되었다."
    assert marks(triaged(same, [span_at(same, "박갬")])) == [("에", "cut_word"), ("에", "cut_word")]


def test_parts_of_a_detected_entity_left_elsewhere_are_possible_misses() -> None:
    text = ("피고인 홍길동은 서울 강남구 테헤란로 123에서 피해자를 만났다. 길동이 먼저 때렸고, 홍씨는 길동무와 도망하였다. "
            "피해자는 테헤란로 123 앞에서 쓰러졌다. 남궁민수는 길동을 보았다.")  # fmt: skip
    spans = [span_at(text, "홍길동"), span_at(text, "서울 강남구 테헤란로 123", ADDRESS), span_at(text, "남궁민수")]
    result = triaged(text, spans, keep_regions=False)  # the address whole: its lone street is a part of it
    found = [(m.text, m.reason, m.placeholder) for m in result.suggestions]
    assert found == [("길동", "entity_part", "A"), ("홍씨", "entity_part", "A"), ("테헤란로 123", "entity_part", "B"),
                     ("길동", "entity_part", "A")]  # not 길동무: part of another word  # fmt: skip
    published = triaged(text, spans)  # by default 서울 강남구 stays: the street is the entity, replaced everywhere
    assert "테헤란로" not in published.text and [m.text for m in published.suggestions] == ["길동", "홍씨", "길동"]
    assert result.reasons() == ["3 part of a detected entity (A)", "1 part of a detected entity (B)"]
    assert all("길동" not in reason for reason in result.reasons())  # reasons never quote the text
    # a category-level model's person spans carry the category: their parts count too
    category = [replace_label(spans[0], "사건관계인특정정보")]
    assert [m.text for m in triaged(text, category).suggestions] == ["길동", "홍씨", "길동"]
    # not a person: no given name is looked for
    assert [m.text for m in triaged(text, [replace_label(spans[0], "아파트")]).suggestions] == []
    assert triaged(text, spans, TriageRule(part_weight=0)).suggestions == ()


def replace_label(span: ScoredSpan, label: str) -> ScoredSpan:
    return ScoredSpan(span.start, span.end, label, span.score, span.source)


def test_overlapping_marks_merge_into_the_most_probable_one() -> None:
    text = "연락처010-1234-5678"
    result = triaged(text, [ScoredSpan(3, 16, "전화번호", 0.9, "phone_number")])
    (cut,) = result.suggestions
    near = type(cut)(1, 5, text[1:5], "내국인이름", None, None, cut.score / 2, "near_threshold", model_score=0.1)
    (merged,) = merge_marks(text, [cut, near])
    assert (merged.start, merged.end, merged.text, merged.reason, merged.score) == (0, 5, text[:5], "cut_word", cut.score)
    assert len(merge_marks(text, [cut, type(cut)(6, 7, "2", "x", None, None, 0.1, "near_threshold")])) == 2


@pytest.mark.parametrize("option, value, message", [
    ("near_margin", -1, "near_margin must be a number of at least 0"),
    ("near_weight", 1, r"near_weight must lie in \[0, 1\)"),
    ("cut_word_weight", True, r"cut_word_weight must lie in \[0, 1\)"),
    ("part_weight", float("nan"), r"part_weight must lie in \[0, 1\)"),
    ("part_min_chars", 1, "part_min_chars must be a whole number of at least 2"),
])  # fmt: skip
def test_rule_options_out_of_range_are_refused(option: str, value, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TriageRule(**{option: value})


# ----------------------------------------------------------------------------------------------- the review queue


def result_with(risk: float, misses: int = 0) -> TriagedResult:
    miss = triaged("연락처010-1234-5678", [ScoredSpan(3, 16, "전화번호", 0.9, "phone_number")]).suggestions[0]
    return TriagedResult("", (), risk, (miss,) * misses)


def read_queue(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_review_queue_is_ranked_and_written_at_the_end(tmp_path: Path) -> None:
    path = tmp_path / "queue.jsonl"
    queue = ReviewQueue(path)
    queue.add("a", "a.txt", result_with(0.1))
    queue.add("b", "b.txt", result_with(0.6, misses=2))
    queue.add("c", None, result_with(0.1))
    assert not path.exists() and (tmp_path / f"queue.jsonl{PARTIAL_SUFFIX}").exists()  # the journal, flushed
    queue.close()
    assert read_queue(path) == [
        {"id": "b", "file": "b.txt", "risk": 0.6, "possible_misses": 2, "reasons": ["2 rest of a word cut by a replacement (A)"]},
        {"id": "a", "file": "a.txt", "risk": 0.1, "possible_misses": 0, "reasons": []},
        {"id": "c", "risk": 0.1, "possible_misses": 0, "reasons": []},
    ]  # fmt: skip
    assert not (tmp_path / f"queue.jsonl{PARTIAL_SUFFIX}").exists()


def test_the_review_queue_resumes_a_run_and_a_killed_runs_journal(tmp_path: Path) -> None:
    path = tmp_path / "queue.jsonl"
    first = ReviewQueue(path)
    first.add("a", "a.txt", result_with(0.2))
    first.add("b", "b.txt", result_with(0.3))
    first.close()
    killed = ReviewQueue(path, keep=lambda r: True)
    killed.add("c", "c.txt", result_with(0.9))
    killed.add("d", "d.txt", result_with(0.5))  # its output was never written: done again next time
    killed.journal.close()  # killed: no close(), the queue file is the first run's
    assert [r["id"] for r in read_queue(path)] == ["b", "a"]
    done = {("a.txt", "a"), ("b.txt", "b"), ("c.txt", "c")}
    resumed = ReviewQueue(path, keep=lambda r: (r.get("file"), r["id"]) in done)
    resumed.add("d", "d.txt", result_with(0.4))
    resumed.add("a", "a.txt", result_with(0.05))  # done again (--overwrite of one document): replaced
    resumed.close()
    assert [(r["id"], r["risk"]) for r in read_queue(path)] == [("c", 0.9), ("d", 0.4), ("b", 0.3), ("a", 0.05)]
    ReviewQueue(path).close()  # nothing kept, nothing done: an empty queue
    assert path.read_text(encoding="utf-8") == ""


def test_a_file_that_is_not_a_review_queue_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text('{"id": "a", "risk": 0.5}\nmy notes\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"notes.jsonl:2: not a line of a review queue"):
        ReviewQueue(path)
    assert path.read_text(encoding="utf-8").endswith("my notes\n")


def test_thunder_deid_writes_the_review_queue_and_resumes(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "glued.txt").write_text("연락처010-2345-6789로 연락하였다.", encoding="utf-8")
    (inputs / "clean.txt").write_text("전화 010-1111-2222로 연락하였다.", encoding="utf-8")
    queue, out = tmp_path / "queue.jsonl", tmp_path / "out"
    main(["deid", "--recognizers_only", str(inputs), "--out", str(out), "--review_queue", str(queue)])
    assert read_queue(queue) == [  # no model: no risk, in the order done
        {"id": str(inputs / "clean.txt"), "file": "clean.txt", "risk": None, "possible_misses": 0, "reasons": []},
        {"id": str(inputs / "glued.txt"), "file": "glued.txt", "risk": None, "possible_misses": 1,
         "reasons": ["1 rest of a word cut by a replacement (A)"]},
    ]  # fmt: skip
    assert (out / "glued.txt").read_text(encoding="utf-8") == "연락처A로 연락하였다."
    (inputs / "later.txt").write_text("연락처010-3333-4444과 계좌번호를 알려 주었다.", encoding="utf-8")
    main(["deid", "--recognizers_only", str(inputs), "--out", str(out), "--review_queue", str(queue), "--cut_word_weight", "0.3"])
    assert [(r["file"], r["possible_misses"]) for r in read_queue(queue)] == [("clean.txt", 0), ("glued.txt", 1),
                                                                              ("later.txt", 1)]  # fmt: skip
    with pytest.raises(SystemExit, match="--review_queue .* is an input file"):
        main(["deid", "--recognizers_only", str(inputs), "--out", str(out), "--review_queue", str(inputs / "clean.txt")])


# ----------------------------------------------------------------------------------------------- the triage curve


def test_the_triage_curve_of_thunder_evaluate(tmp_path: Path) -> None:
    """Three documents: one whose leaked name a mark finds (risk > 0), one leaking without a mark, one clean."""
    texts = ["담당자홍길동010-2345-6789로 연락하였다.", "김철수는 집에 있었다.", "전화 010-1111-2222로 연락하였다."]
    gold = [[_gold(texts[0], "홍길동", NAME), _gold(texts[0], "010-2345-6789", "전화번호")],
            [_gold(texts[1], "김철수", NAME)], [_gold(texts[2], "010-1111-2222", "전화번호")]]  # fmt: skip
    docs = [SynthesizedDocument(f"d{i}", t, tuple(g)) for i, (t, g) in enumerate(zip(texts, gold))]
    rule = TriageRule(unmarked_rate=0)  # the marks alone (a longer document otherwise ranks higher)
    report = ev.evaluate(Deidentifier(), docs, taxonomy=Taxonomy.load(), triage=rule)
    curve = report.triage
    assert (curve.documents, curve.leaked_mentions, curve.leaking_documents) == (3, 2, 2)
    assert [(r["documents"], r["leaked_mentions"], r["leaking_documents"]) for r in curve.rows] == [
        (1, 1, 1), (1, 1, 1), (1, 1, 1), (2, 2, 2)]  # the riskiest first; 50% of 3 documents is 2  # fmt: skip
    assert (curve.marks, curve.marks_on_leaks, curve.found_by_marks, curve.mark_recall) == (1, 1, 1, 0.5)
    chars = sum(1 for t in texts for c in t if not c.isspace())
    assert (curve.marked_chars, curve.chars, curve.marked_share) == (6, chars, 6 / chars)  # 담당자홍길동
    data = json.loads(json.dumps(report.to_dict(), ensure_ascii=False))["triage"]
    assert data["mark_recall"] == 0.5 and data["rows"][2] == {"share": 0.2, "documents": 1, "leaked_mentions": 1,
                                                              "leaking_documents": 1,
                                                              "leaking_documents_by_near_tokens": 1}  # fmt: skip
    risk = curve.rows and report.triage.calibration["mean_risk"] * 3  # one document has a mark, the others none
    assert risk > 0 and report.triage.calibration["brier"] == pytest.approx(((risk - 1) ** 2 + 1) / 3)
    assert report.triage.calibration["brier_of_the_share"] == pytest.approx(2 / 9)
    table = report.format()
    assert "| 20% (1) | 50.00% (1/2) | 50.00% (1/2) | 50.00% (1/2) |" in table
    assert "Brier score" in table
    assert "Possible misses: 1 marks (1 rest of a word cut by a replacement)" in table
    assert ev.evaluate(Deidentifier(), docs, taxonomy=Taxonomy.load()).triage is None
    # the command reports it (Markdown and --json)
    data_file = tmp_path / "gold.jsonl"
    data_file.write_text("".join(json.dumps({"id": d.doc_id, "text": d.text, "spans": [[s.start, s.end, s.label]
                                             for s in d.spans]}, ensure_ascii=False) + "\n" for d in docs),
                         encoding="utf-8")  # fmt: skip
    out = tmp_path / "report.json"
    main(["evaluate", "--recognizers_only", "true", "--data", str(data_file), "--json", str(out), "--unmarked_rate", "0"])
    saved = json.loads(out.read_text(encoding="utf-8"))
    stored = json.loads(json.dumps(dataclasses.asdict(rule), ensure_ascii=False))  # tuples as JSON lists
    assert saved["triage"]["rows"] == data["rows"] and saved["meta"]["triage"] == stored


def _gold(text: str, mention: str, label: str) -> EntitySpan:
    start = text.index(mention)
    return EntitySpan(start, start + len(mention), label, mention)


@pytest.mark.parametrize(
    ("text", "word", "worth"),
    [
        ("피고인 홍길동은 서울중앙지방법원에 출석하였다.", "서울중앙지방법원", False),  # a court: legal text
        ("피고인 홍길동은 서울중앙지방법원에 출석하였다.", "은", False),  # a particle
        ("원고와 피고는 계약을 맺었다.", "원고", False),  # a procedural role
        ("그 부분은 한 곳이다.", "한", False),  # a lone syllable
        ("피해자 김영희와 만났다.", "김영희", True),
        ("반도체 공장에서 일하였다.", "반도체", True),  # a common noun: only the model's score tells it apart
    ],
)
def test_a_near_threshold_mark_is_worth_a_look_only_where_accepting_it_could_help(
    text: str, word: str, worth: bool
) -> None:
    start = text.index(word)
    protected = Protection(PublicationPolicy()).coverage(text)
    assert worth_a_look(text, start, start + len(word), protected) is worth


def test_no_rest_mark_on_a_head_noun_left_after_a_replaced_name() -> None:
    """Issue 67: ``A아파트``, ``B은행``, ``C지점``, ``D모텔``: the generic noun after a replaced name is no mark."""
    text = "피고인은 칸타빌아파트에서 국민은행 역삼지점의 직원과 만나 장미모텔로 갔고, 그 뒤 송산단지로 갔다."
    spans = [span_at(text, mention, ADDRESS) for mention in ("칸타빌", "국민", "역삼", "장미", "송산")]
    assert marks(triaged(text, spans)) == [("단지", "cut_word")]  # only the rest that is no generic head noun


@pytest.mark.parametrize(
    ("text", "run", "word"),
    [
        ("그는 거래처인 회사에 갔다.", "처인", "거래처인"),  # begins inside a word: the whole word
        ("그는 거래처에게 갔다.", "처", "거래처"),  # its particles aside
        ("그는 신호등 앞에 섰다.", "신호", "신호등"),  # ends inside a word
        ("피해자 김영희와 만났다.", "영희", "김영희"),  # a name the model was sure of only in part
        ("피해자 김영희와 만났다.", "김영희와", "김영희와"),  # a whole word already
    ],
)
def test_a_near_threshold_run_inside_a_word_is_widened_to_the_word(text: str, run: str, word: str) -> None:
    """Issue 67: no mark is a part of a word (``처인`` of ``거래처인``): the run becomes the word, less its particles."""
    start = text.index(run)
    left = text.index(word)
    assert whole_word(text, start, start + len(run), bytearray(len(text))) == (left, left + len(word))
    replaced = bytearray(len(text))
    replaced[start - 1] = 1  # a replaced character stops the widening
    assert whole_word(text, start, start + len(run), replaced)[0] == start


@pytest.mark.parametrize(
    ("text", "replaced_word", "word", "worth"),
    [
        ("그는 칸타빌아파트에서 살았다.", "칸타빌", "아파트", False),  # a head noun after a replacement
        ("그는 칸타빌아파트에서 살았다.", "칸타빌", "아파트에서", False),
        ("그는 국민은행에 갔다.", "국민", "은행", False),
        ("그는 장미모텔로 갔다.", "장미", "모텔", False),
        ("그는 송산늑힌쳔에게 갔다.", "송산", "늑힌쳔", True),  # the rest of a cut word that is no head noun
        ("그는 아파트에서 살았다.", None, "아파트", True),  # not after a replacement: the model's score decides
    ],
)
def test_a_near_threshold_mark_is_no_head_noun_left_after_a_replacement(
    text: str, replaced_word: str | None, word: str, worth: bool
) -> None:
    start = text.index(word)
    replaced = bytearray(len(text))
    if replaced_word:
        at = text.index(replaced_word)
        replaced[at : at + len(replaced_word)] = b"\x01" * len(replaced_word)
    protected = Protection(PublicationPolicy()).coverage(text)
    keep = TriageRule().cut_word_keep
    assert worth_a_look(text, start, start + len(word), protected, replaced, keep) is worth
    assert worth_a_look(text, start, start + len(word), protected)  # judged alone, as before
