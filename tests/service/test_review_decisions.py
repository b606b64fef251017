"""Issue 67: re-applying reproduces exactly the clerk's decisions. Random reviews (accept, reject one occurrence,
relabel every occurrence, move an edge, add a span) of random judgments are sent to ``/v1/apply`` as the review page
sends them (one label per entity, the letters shown, the rejected occurrences); the answer keeps every rejected
occurrence as written, replaces every accepted or added span with the letter shown for it (a new entity with a letter
no other holds), replaces nothing else but further occurrences of the replaced texts, and re-applying that answer as
the page adopts it changes nothing."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thunder.deid.mapping import replacing_edits
from thunder.deid.operators import entity_key
from thunder.deid.overlaps import REVIEWER
from thunder.deid.pipeline import Deidentifier
from thunder.language.particles import PARTICLE_RUN
from thunder.service.app import create_app, running

NAMES = ("홍길동", "김영희", "윤태식", "한상철")
WORDS = ("신호", "신호등", "신호대기", "목동", "아파트", "거래처", "행복분식")
# the phone number: the recognizers' own span; 송파구: a region the policy keeps from the model, a clerk's to add
FILLER = ("피고인", "피해자", "만났다", "그때", "010-2345-6789", "송파구")
PARTICLES = ("", "", "은", "이", "가", "를", "의", "에게", "와")
SEPARATORS = (" ", " ", ", ", ". ", "\n")
LABELS = ("내국인이름", "닉네임", "주소", "가게", "도로")


@pytest.fixture(scope="module")
def service() -> str:
    with running(create_app(Deidentifier())) as (url, _):
        yield url


def apply(url: str, body: dict) -> dict:
    request = urllib.request.Request(url + "/v1/apply", data=json.dumps(body).encode("utf-8"), method="POST",
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        raise AssertionError(f"/v1/apply answered {error.code}: {error.read().decode()}") from None


judgments = st.lists(st.tuples(st.sampled_from(NAMES + WORDS + FILLER), st.sampled_from(PARTICLES),
                               st.sampled_from(SEPARATORS)), min_size=2, max_size=14)  # fmt: skip


def entity_labels(text: str, spans: list[dict]) -> dict[str, str]:
    """Entity -> the label the page shows for all its mentions: its most confident span's (review.js
    ``entityLabels``)."""
    best: dict[str, dict] = {}
    for s in spans:
        key = entity_key(text[s["start"] : s["end"]])
        if key not in best or s["score"] > best[key]["score"]:
            best[key] = s
    return {key: s["label"] for key, s in best.items()}


def review_body(text: str, spans: list[dict]) -> dict:
    """What the review page sends on re-apply (review.js ``applyBody``): the accepted and added spans, each entity
    with its most confident span's label; the letter every entity shows (rejected ones too); the rejected ranges."""
    kept = [s for s in spans if s["state"] != "rejected"]
    labels = entity_labels(text, kept)
    letters: dict[str, str] = {}
    for s in spans:
        if s["placeholder"]:
            letters.setdefault(entity_key(text[s["start"] : s["end"]]), s["placeholder"])
    return {
        "text": text,
        "spans": [{"start": s["start"], "end": s["end"], "label": labels[entity_key(text[s["start"] : s["end"]])],
                   "score": s["score"], "source": s["source"]} for s in kept],  # fmt: skip
        "letters": [{"text": key, "letter": letter} for key, letter in letters.items()],
        "rejected": [{"start": s["start"], "end": s["end"]} for s in spans if s["state"] == "rejected"],
    }


def adopted(answer: dict, before: list[dict]) -> list[dict]:
    """The page's review after a re-apply (review.js ``adopt``): the answer's spans, and the rejected ones."""
    spans = [{**s, "state": "added" if s["source"] == REVIEWER else "accepted"} for s in answer["spans"]]
    return sorted(spans + [s for s in before if s["state"] == "rejected"], key=lambda s: s["start"])


def decide(draw, text: str, words: list[tuple[int, int]], spans: list[dict]) -> list[dict]:
    """A clerk's random review of ``spans``: each one accepted, rejected, relabelled (every occurrence of its
    text), or one edge moved by a character (the span becomes the clerk's); then words no span touches added."""
    spans = [dict(s) for s in spans]
    for span in spans:
        choice = draw(st.sampled_from(["accept", "accept", "reject", "relabel", "start", "end"]))
        if choice == "reject":
            span["state"] = "rejected"
        elif choice == "relabel":
            label = draw(st.sampled_from(LABELS))
            key = entity_key(text[span["start"] : span["end"]])
            for other in spans:
                if entity_key(text[other["start"] : other["end"]]) == key:
                    other["label"] = label
        elif choice in ("start", "end"):
            start, end = span["start"], span["end"]
            if choice == "start" and end - start > 2:
                start += 1  # the first character left in
            # the end one character further over a letter (a particle too), never into a neighbour, or pulled back
            elif choice == "end" and end < len(text) and text[end].isalnum() and not any(
                    o["start"] <= end < o["end"] for o in spans):  # fmt: skip
                end += 1
            elif choice == "end" and end - start > 2:
                end -= 1
            span.update(start=start, end=end, source=REVIEWER, placeholder="", score=1.0, state="added")
    for start, end in words:
        if not any(s["start"] < end and start < s["end"] for s in spans) and draw(st.integers(0, 4)) == 0:
            spans.append({"start": start, "end": end, "label": draw(st.sampled_from(LABELS)), "score": 1.0,
                          "source": REVIEWER, "placeholder": "", "state": "added"})  # fmt: skip
    return sorted(spans, key=lambda s: s["start"])


def check_decisions(text: str, body: dict, answer: dict) -> None:
    """The answer to ``body`` carries out exactly the decisions in it."""
    got = answer["spans"]
    edits = replacing_edits(text, answer["text"], [_Span(s["start"], s["end"]) for s in got])
    for kept in body["rejected"]:  # each rejected occurrence kept as written
        assert not any(start < kept["end"] and kept["start"] < end for start, end, _ in edits), (kept, answer["text"])
    sent_keys = set()
    for span in body["spans"]:
        key = entity_key(text[span["start"] : span["end"]])
        sent_keys.add(key)
        if span["source"] == REVIEWER:  # the clerk's bounds, a particle the pipeline keeps after a name aside
            assert any(s["start"] == span["start"] and s["end"] <= span["end"]
                       and (s["end"] == span["end"] or PARTICLE_RUN.fullmatch(text, s["end"], span["end"]))
                       for s in got), (span, got)  # fmt: skip
        else:  # a detected span: replaced, within a longer occurrence of a replaced text or less a particle
            assert any(s["start"] <= span["start"] and (span["end"] <= s["end"] or PARTICLE_RUN.fullmatch(
                text, s["end"], span["end"])) for s in got), (span, got)  # fmt: skip
    sent = {s["start"]: s["end"] for s in body["spans"]}
    for span in got:  # nothing else: what was sent (less a particle), and further occurrences of its texts
        assert span["source"] == "propagated" or span["end"] == sent.get(span["start"]) or PARTICLE_RUN.fullmatch(
            text, span["end"], sent.get(span["start"], 0)), span  # fmt: skip
        assert entity_key(span["text"]) in sent_keys, span
    labels = {(s["start"], s["end"]): s["label"] for s in body["spans"]}
    shown = {kept["text"]: kept["letter"] for kept in body["letters"]}
    letters: dict[str, str] = {}
    for span in got:  # the label sent; one letter per entity, the letter shown kept, a new one a free letter
        key = entity_key(span["text"])
        assert span["label"] == labels.get((span["start"], span["end"]), span["label"]), span
        assert letters.setdefault(key, span["placeholder"]) == span["placeholder"], (key, got)
        if key in shown:
            assert span["placeholder"] == shown[key], (key, span, shown)
        else:
            assert span["placeholder"] not in shown.values(), (key, span, shown)
    assert len(set(letters.values())) == len(letters), letters


class _Span:
    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(judgment=judgments, data=st.data())
def test_re_applying_reproduces_the_clerks_decisions(service: str, judgment, data) -> None:
    text, words = "", []
    for word, particle, separator in judgment:
        words.append((len(text), len(text) + len(word)))
        text += word + particle + separator
    detected = [w for w in words if text[w[0] : w[1]] in NAMES + WORDS and data.draw(st.booleans())]
    first = apply(service, {"text": text, "spans": [  # what the model and recognizers found (the first answer)
        {"start": start, "end": end, "label": data.draw(st.sampled_from(LABELS)), "source": "model",
         "score": data.draw(st.sampled_from([0.55, 0.7, 0.95]))} for start, end in detected]})  # fmt: skip
    review = decide(data.draw, text, words, [{**s, "state": "accepted"} for s in first["spans"]])
    body = review_body(text, review)
    answer = apply(service, body)
    check_decisions(text, body, answer)
    shown = entity_labels(text, answer["spans"])  # what the page shows once it adopts the answer
    again = apply(service, review_body(text, adopted(answer, review)))
    assert again["text"] == answer["text"]  # re-applying changes nothing
    assert [(s["start"], s["end"], s["placeholder"], s["label"]) for s in again["spans"]] == [
        (s["start"], s["end"], s["placeholder"], shown[entity_key(s["text"])]) for s in answer["spans"]]


def test_a_reviewers_shrunk_span_keeps_its_bounds(service: str) -> None:
    """The clerk shrinks one occurrence of ``홍길동`` to ``홍길``: the longer text replaced elsewhere does not spread
    over it again (its ``동`` stays), and re-applying keeps it so."""
    text = "피고인 홍길동은 홍길동에게 말했다. 홍길동이 왔다."
    second = text.index("홍길동", 5)
    spans = [{"start": 4, "end": 7, "label": "내국인이름", "source": "model", "score": 0.9},
             {"start": second, "end": second + 2, "label": "내국인이름", "source": REVIEWER}]  # fmt: skip
    answer = apply(service, {"text": text, "spans": spans})
    assert answer["text"] == "피고인 A는 B동에게 말했다. A가 왔다."
    assert [(s["text"], s["source"]) for s in answer["spans"]] == [("홍길동", "model"), ("홍길", REVIEWER),
                                                                  ("홍길동", "propagated")]  # fmt: skip


def test_a_reviewers_span_is_not_grown_over_the_particle_it_leaves(service: str) -> None:
    """The clerk reads the third ``윤태식이`` as ``윤태식`` + ``이`` and pulls its end back: the span stays so."""
    text = "윤태식이는 왔다. 윤태식이의 집. 윤태식이 말했다."
    third = text.rindex("윤태식이")
    spans = [{"start": 0, "end": 4, "label": "내국인이름", "source": "model", "score": 0.9},
             {"start": third, "end": third + 3, "label": "내국인이름", "source": REVIEWER}]  # fmt: skip
    answer = apply(service, {"text": text, "spans": spans})
    assert (third, third + 3) in {(s["start"], s["end"]) for s in answer["spans"]}
