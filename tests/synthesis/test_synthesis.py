"""Placeholder -> mention synthesis: determinism, spans, preserved text, corpus quirks."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thunder.documents.annotation import AnnotatedDocument, iter_corpus, parse_annotated
from thunder.identifiers.bank_account_number import BANK_ACCOUNT_FORMATS
from thunder.language.particles import agrees, fix_particle
from thunder.seeds import stable_seed
from thunder.synthesis.mentions import DEMO_MENTIONS, GENERATORS, ListSource, MentionBank
from thunder.synthesis.synthesizer import (
    SynthesisError,
    SynthesizedDocument,
    Synthesizer,
    head_outside_labels,
    leftovers,
)
from thunder.taxonomy import Taxonomy

DEMO_CORPUS = DEMO_MENTIONS.parent / "annotated"


def make_bank(taxonomy: Taxonomy, **lists: list[str]) -> MentionBank:
    """The default generators plus the given lists (everything else: a list of one odd word)."""
    sources = {}
    for label in taxonomy.labels.values():
        if label.name in lists:
            sources[label.name] = ListSource(lists[label.name])
        elif label.source.startswith("generator:"):
            sources[label.name] = GENERATORS[label.source.split(":", 1)[1]]
        else:
            sources[label.name] = ListSource([f"{label.name}멘션"])
    return MentionBank(sources, taxonomy)


def doc(raw: str, doc_id: str = "doc") -> AnnotatedDocument:
    return parse_annotated(raw, doc_id=doc_id)


_NOTE = re.compile(r"^[ \t]*(?:\d+[ \t]*)?생략(?=[ \t]*\))")


def _without_head(written: str, label: str) -> tuple[str, int]:
    """``written`` without a head noun of ``label`` left outside the span before it, and how much was cut."""
    stripped = written.lstrip(" ")
    for size in range(len(label), 0, -1):
        if stripped.startswith(label[-size:]):
            cut = len(written) - len(stripped) + size
            return written[cut:], cut
    return written, 0


def check_structure(source: AnnotatedDocument, out: SynthesizedDocument) -> None:
    """Spans are ordered, non-empty and cover the mentions; text outside placeholders is kept (a leading
    particle may have been made to agree, a head noun of the span before may stand first); no placeholder code
    is left where a placeholder was."""
    assert len(out.spans) == len(source.placeholders)
    prev_in = prev_out = 0
    label = ""

    def kept(original: str, written: str) -> bool:
        def same(text: str, end: int) -> bool:
            return text == original or text == fix_particle(out.text[:end], original)

        if same(written, prev_out):
            return True
        rest, cut = _without_head(written, label)
        return bool(cut) and same(rest, prev_out + cut)

    for p, span in zip(sorted(source.placeholders, key=lambda p: p.start), out.spans):
        assert prev_out <= span.start < span.end <= len(out.text)
        mention = out.text[span.start : span.end]
        assert mention.strip() == mention
        original, written = source.text[prev_in : p.start], out.text[prev_out : span.start]
        original = _NOTE.sub("", original, count=1) if prev_in else original  # "… 1 생략)" goes with its placeholder
        assert kept(original, written), (original, written)
        prev_in, prev_out, label = p.end, span.end, span.label
    original, written = _NOTE.sub("", source.text[prev_in:], count=1), out.text[prev_out:]
    assert kept(original, written), (original, written)
    assert "<<<" not in out.text and ">>>" not in out.text


def test_same_letter_same_mention_and_exact_spans(taxonomy: Taxonomy) -> None:
    source = doc(
        "피해자 <<<내국인이름>>>F<<</내국인이름>>>으로부터 돈을 받았고, <<<내국인이름>>>F<<</내국인이름>>>은 "
        "<<<내국인이름>>>G<<</내국인이름>>>에게 말했다. <<<내국인이름>>>F<<</내국인이름>>>의 집."
    )
    synthesizer = Synthesizer(taxonomy, make_bank(taxonomy), seed=3)
    out = synthesizer(source)
    check_structure(source, out)
    names = [out.text[s.start : s.end] for s in out.spans]
    assert names[0] == names[1] == names[3] != names[2]
    assert [s.entity for s in out.spans] == ["F", "F", "G", "F"]
    assert {s.label for s in out.spans} == {"내국인이름"}
    assert agrees(names[0], "으로부터") and agrees(names[0], "은 ")  # both particles agree with the name
    assert out.text.startswith(f"피해자 {names[0]}으로부터 돈을 받았고, {names[0]}은 {names[2]}에게 말했다.")


def test_determinism_and_replacement_modes(taxonomy: Taxonomy) -> None:
    bank = make_bank(taxonomy)
    docs = [
        doc(f"피고인 <<<내국인이름>>>A<<</내국인이름>>>은 <<<구아래주소>>>B<<</구아래주소>>>에서 {i}번 만났다.", f"d{i}")
        for i in range(12)
    ]
    per_epoch = Synthesizer(taxonomy, bank, seed=7)
    again = Synthesizer(taxonomy, bank, seed=7)
    first = [per_epoch(d, epoch=0) for d in docs]
    assert [again(d, epoch=0) for d in reversed(docs)][::-1] == first  # order and instance do not matter
    assert [per_epoch(d, epoch=1) for d in docs] != first
    assert sum(per_epoch(d, 1).text != f.text for d, f in zip(docs, first)) >= 10
    assert len({f.text.split("은")[0] for f in first}) > 6  # documents differ from each other
    assert [Synthesizer(taxonomy, bank, seed=8)(d) for d in docs] != first
    single = Synthesizer(taxonomy, bank, seed=7, replacement="single")
    assert [single(d, epoch=5) for d in docs] == [single(d, epoch=0) for d in docs]


def test_stable_seed_is_a_fixed_function() -> None:
    assert stable_seed(0, 0, "doc", "내국인이름", "A") == stable_seed(0, 0, "doc", "내국인이름", "A")
    assert stable_seed(0, 0, "doc", "내국인이름", "A") != stable_seed(0, 1, "doc", "내국인이름", "A")
    assert stable_seed(1, "x") == 0x4d8bce2375920758  # pinned: the same in every process and release
    assert 0 <= stable_seed("any") < 2**64


def test_bad_replacement_and_unknown_tags(taxonomy: Taxonomy) -> None:
    with pytest.raises(ValueError, match="replacement"):
        Synthesizer(taxonomy, make_bank(taxonomy), replacement="sometimes")
    source = parse_annotated("첫 줄\n둘째 <<<없는태그>>>A<<</없는태그>>>", source="x.md")
    with pytest.raises(SynthesisError, match=r"x\.md:2:4: .*없는태그"):
        Synthesizer(taxonomy, make_bank(taxonomy))(source)


def test_code_with_word_keeps_the_word(taxonomy: Taxonomy) -> None:
    source = doc("위 <<<모텔>>>E모텔<<</모텔>>>에서 만났다.")
    for mentions, expected in ((["하늘모텔"], "하늘모텔"), (["하늘"], "하늘모텔")):
        out = Synthesizer(taxonomy, make_bank(taxonomy, 모텔=mentions))(source)
        check_structure(source, out)
        assert out.text == f"위 {expected}에서 만났다."
        assert out.text[out.spans[0].start : out.spans[0].end] == expected


@pytest.mark.parametrize(
    ("raw", "mentions", "expected"),
    [
        ("<<<주식회사>>>D<<</주식회사>>> 주식회사 소유", ["한빛건설 주식회사"], "한빛건설 주식회사 소유"),
        ("주식회사 <<<주식회사>>>E<<</주식회사>>>의 대표", ["주식회사 한빛"], "주식회사 한빛의 대표"),
        ("<<<은행>>>N<<</은행>>>은행 계좌", ["우리은행"], "우리은행 계좌"),
        ("<<<은행>>>N<<</은행>>>은행 계좌", ["농협"], "농협은행 계좌"),
        ("<<<아파트>>>C<<</아파트>>>아파트 101동", ["래미안아파트"], "래미안아파트 101동"),
        ("<<<은행>>>은행<<</은행>>>에 갔다", ["신한은행"], "신한은행에 갔다"),  # content is the tag itself
        ("'<<<식당>>>C<<</식당>>>' 식당에서", ["소담식당"], "'소담' 식당에서"),  # quotes stay outside
    ],
)
def test_repeated_generic_words(taxonomy: Taxonomy, raw: str, mentions: list[str], expected: str) -> None:
    label = taxonomy.resolve(re.search(r"<<<([^>]+)>>>", raw).group(1)).label.name
    source = doc(raw)
    out = Synthesizer(taxonomy, make_bank(taxonomy, **{label: mentions}))(source)
    check_structure(source, out)
    assert out.text == expected


def test_head_outside_labels_follow_the_corpus_convention(taxonomy: Taxonomy, tmp_path: Path) -> None:
    """A quasi label is in the set when at least half its placeholders are followed by its head noun (of the
    label or of the raw tag, after spaces or quotes); direct labels never are."""
    aliases = tmp_path / "aliases.json"
    aliases.write_text('{"호": "호실"}', encoding="utf-8")
    taxonomy = Taxonomy.load(alias_files=[aliases])
    docs = [
        doc("<<<아파트>>>E<<</아파트>>>아파트 101동, <<<아파트>>>F<<</아파트>>> 아파트, <<<아파트>>>G<<</아파트>>> 토목공사"),
        doc("<<<가게>>>A<<</가게>>>에서, <<<가게>>>B<<</가게>>>가게, <<<가게>>>C<<</가게>>>를"),
        doc("<<<호>>>D<<</호>>>호에서 <<<지하철역>>>H<<</지하철역>>>' 역 <<<내국인이름>>>I<<</내국인이름>>>이름"),
    ]
    assert head_outside_labels(docs, taxonomy) == {"아파트", "호실", "지하철역"}
    assert head_outside_labels(docs, taxonomy, min_share=0.3) == {"아파트", "호실", "지하철역", "가게"}
    assert head_outside_labels([doc("<<<없는태그>>>A<<</없는태그>>>태그")], taxonomy) == frozenset()
    with pytest.raises(ValueError, match="min_share"):
        head_outside_labels(docs, taxonomy, min_share=0)


def test_head_noun_stays_outside_the_span(taxonomy: Taxonomy) -> None:
    source = doc("<<<아파트>>>E<<</아파트>>> 토목공사와 <<<아파트>>>F<<</아파트>>>아파트, <<<식당>>>G<<</식당>>>에서")
    bank = make_bank(taxonomy, 아파트=["래미안아파트"], 식당=["소담식당"])
    covered = {}
    for head_outside in (set(), {"아파트"}):
        out = Synthesizer(taxonomy, bank, head_outside=head_outside)(source)
        check_structure(source, out)
        assert out.text == "래미안아파트 토목공사와 래미안아파트, 소담식당에서"  # the text does not change
        covered[frozenset(head_outside)] = [out.text[s.start : s.end] for s in out.spans]
    assert covered[frozenset()] == ["래미안아파트", "래미안", "소담식당"]
    assert covered[frozenset({"아파트"})] == ["래미안", "래미안", "소담식당"]
    spaced = Synthesizer(taxonomy, make_bank(taxonomy, 아파트=["e편한세상 아파트"]), head_outside={"아파트"})(source)
    assert spaced.text[spaced.spans[0].start : spaced.spans[0].end] == "e편한세상"
    bare = Synthesizer(taxonomy, make_bank(taxonomy, 아파트=["아파트"]), head_outside={"아파트"})(source)
    assert bare.text[bare.spans[0].start : bare.spans[0].end] == "아파트"  # a mention that is only the head stays


def test_particle_is_fixed_when_no_mention_agrees(taxonomy: Taxonomy) -> None:
    source = doc("<<<식당>>>A<<</식당>>>은 문을 닫았고 <<<식당>>>B<<</식당>>>를 찾았다.")
    out = Synthesizer(taxonomy, make_bank(taxonomy, 식당=["소담식당"]))(source)
    check_structure(source, out)
    assert out.text == "소담식당은 문을 닫았고 소담식당을 찾았다."
    out = Synthesizer(taxonomy, make_bank(taxonomy, 식당=["한빛카페"]))(source)
    assert out.text == "한빛카페는 문을 닫았고 한빛카페를 찾았다."
    assert [out.text[s.start : s.end] for s in out.spans] == ["한빛카페", "한빛카페"]


def test_redaction_notes_and_masked_content_are_replaced(taxonomy: Taxonomy) -> None:
    source = doc(
        "계좌(<<<계좌번호>>>계좌번호 1 생략<<</계좌번호>>>)로, 주민번호 <<<주민등록번호>>>주민등록번호 2 생략<<</주민등록번호>>>, "
        "피해자 <<<내국인이름>>>김○○<<</내국인이름>>>"
    )
    out = Synthesizer(taxonomy, make_bank(taxonomy))(source)
    check_structure(source, out)
    assert "생략" not in out.text and "○" not in out.text and leftovers(source, out) == []
    rrn = out.text[out.spans[1].start : out.spans[1].end]
    assert re.fullmatch(r"\d{6}-\d{7}", rrn)


def test_context_links_entities(taxonomy: Taxonomy) -> None:
    """The account number follows the bank written (synthesized) before it; the address the upper levels."""
    source = doc(
        "피고인 명의의 <<<은행>>>N<<</은행>>>은행 계좌(<<<계좌번호>>>O<<</계좌번호>>>)로 송금받고, "
        "경기 성남시 <<<시아래주소>>>P<<</시아래주소>>>에서 피해자 <<<내국인이름>>>Q<<</내국인이름>>>을 만났다."
    )
    patterns = [re.escape(p).replace("\\#", "#").replace("#", r"\d") for p in BANK_ACCOUNT_FORMATS["신한은행"][1]]
    for seed in range(20):
        out = Synthesizer(taxonomy, make_bank(taxonomy, 은행=["신한은행"]), seed=seed)(source)
        check_structure(source, out)
        bank, account, address, name = (out.text[s.start : s.end] for s in out.spans)
        assert bank == "신한" and "신한은행 계좌(" in out.text
        assert any(re.fullmatch(p, account) for p in patterns), account
        assert not address.split()[0].endswith(("시", "도", "군"))
        assert agrees(name, "을")


_TAGS = ["내국인이름", "구아래주소", "식당", "은행", "계좌번호", "차량번호", "전화번호", "나이", "아이디"]
_PLAIN = st.lists(st.sampled_from(list("피고인은 에게서 을를이가과와으로 ,.()\n'") + ["돈", "말했다"]), max_size=8).map("".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.tuples(_PLAIN, st.sampled_from(_TAGS), st.sampled_from(["A", "B", "C", "AA"])), min_size=1, max_size=8),
    _PLAIN,
    st.integers(0, 3),
)
def test_random_documents(taxonomy: Taxonomy, pieces: list[tuple[str, str, str]], end: str, epoch: int) -> None:
    raw = "".join(f"{text}<<<{tag}>>>{code}<<</{tag}>>>" for text, tag, code in pieces) + end
    if not raw.strip():
        return
    source = doc(raw)
    synthesizer = Synthesizer(taxonomy, make_bank(taxonomy), seed=1)
    out = synthesizer(source, epoch)
    check_structure(source, out)
    assert out == synthesizer(source, epoch)
    by_entity: dict[tuple[str, str], set[str]] = {}
    for span in out.spans:
        by_entity.setdefault((span.label, span.entity), set()).add(out.text[span.start : span.end])
    for (label, _), surfaces in by_entity.items():
        if label in ("내국인이름", "계좌번호", "차량번호", "전화번호", "아이디"):
            assert len(surfaces) == 1


def test_demo_corpus() -> None:
    taxonomy = Taxonomy.load()
    bank = MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS])
    synthesizer = Synthesizer(taxonomy, bank, seed=0)
    docs = list(iter_corpus(DEMO_CORPUS, errors="raise"))
    assert docs
    for source in docs:
        check_structure(source, synthesizer(source))


@pytest.mark.shared_data
def test_shared_corpus(shared_corpus: Path) -> None:
    taxonomy = Taxonomy.load().with_alias_files([shared_corpus / "tag_aliases.json"])
    bank = MentionBank.from_dirs(taxonomy, [shared_corpus / "mentions", shared_corpus / "mentions-llm"])
    synthesizer = Synthesizer(taxonomy, bank, seed=0)
    docs = list(itertools.islice(iter_corpus(shared_corpus / "annotated", errors="skip"), 0, 4000, 13))
    assert len(docs) >= 300
    names = agreeing = 0
    for source in docs:
        out = synthesizer(source, epoch=1)
        check_structure(source, out)
        assert leftovers(source, out) == [], source.doc_id
        for span in out.spans:
            if span.label == "내국인이름":
                verdict = agrees(out.text[span.start : span.end], out.text[span.end : span.end + 10])
                names += verdict is not None
                agreeing += verdict is True
    assert names > 100 and agreeing == names


def test_leftovers_finds_surviving_placeholder_text() -> None:
    source = doc("피해자 <<<내국인이름>>>A<<</내국인이름>>>에게 <<<계좌번호>>>계좌번호 1 생략<<</계좌번호>>>")
    from thunder.synthesis.synthesizer import EntitySpan

    bad = SynthesizedDocument(
        "doc", "피해자 A에게 계좌번호 1 생략 <<<x>>>", (EntitySpan(4, 5, "내국인이름", "A"), EntitySpan(8, 17, "계좌번호", "계좌번호 1 생략"))
    )
    assert leftovers(source, bad) == ["A", "계좌번호 1 생략", "<<<x>>>"]
    good = SynthesizedDocument(
        "doc", "피해자 ABC에게 123", (EntitySpan(4, 7, "내국인이름", "A"), EntitySpan(10, 13, "계좌번호", "계좌번호 1 생략"))
    )
    assert leftovers(source, good) == []


_SCRIPT = """
import sys
from thunder.documents.annotation import parse_annotated
from thunder.synthesis.mentions import DEMO_MENTIONS, MentionBank
from thunder.synthesis.synthesizer import Synthesizer
from thunder.taxonomy import Taxonomy
taxonomy = Taxonomy.load()
synthesizer = Synthesizer(taxonomy, MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS]), seed=11)
raw = sys.stdin.read()
print(repr(synthesizer(parse_annotated(raw, doc_id="d1"), epoch=2)))
"""


def test_same_output_in_another_process(taxonomy: Taxonomy) -> None:
    """No dependence on Python's salted ``hash``, import order or process state."""
    import os
    import subprocess
    import sys

    raw = (
        "피고인은 <<<내국인이름>>>A<<</내국인이름>>>에게 <<<은행>>>B<<</은행>>> 계좌(<<<계좌번호>>>C<<</계좌번호>>>)로 "
        "송금하고 대구 달서구 <<<구아래주소>>>D<<</구아래주소>>>에 있는 <<<모텔>>>E모텔<<</모텔>>>에서 만났다."
    )
    outputs = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        result = subprocess.run(
            [sys.executable, "-c", _SCRIPT], input=raw, capture_output=True, text=True, env=env, check=True
        )
        outputs.add(result.stdout)
    synthesizer = Synthesizer(taxonomy, MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS]), seed=11)
    outputs.add(repr(synthesizer(parse_annotated(raw, doc_id="d1"), epoch=2)) + "\n")
    assert len(outputs) == 1
