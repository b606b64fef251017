"""The HTTP service: endpoints (good, malformed, oversized, concurrent), batching, every kind of model, logs free of
request text, and what an administrator needs to expose it: a token, TLS, a time limit, cancellation when the client
leaves, no-store answers, an API description served from the package, answers on shutdown; and ``thunder serve`` as
a process with a real (tiny) model."""

from __future__ import annotations

import datetime
import http.client
import io
import json
import logging
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from helpers import FILLER, build_tiny_model, write_tiny_export
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thunder.cli import main  # noqa: E402
from thunder.deid.mapping import Mapping, MappingKey, reidentify  # noqa: E402
from thunder.deid.pipeline import Deidentifier  # noqa: E402
from thunder.deid.triage import NO_MODEL_RISK, TriageRule  # noqa: E402
from thunder.model.integrity import unverified_allowed  # noqa: E402
from thunder.service.app import create_app, running, serve  # noqa: E402
from thunder.taxonomy import LabelSet, Taxonomy  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SECRET_NAME = "홍비밀"
SECRET_PHONE = "010-7777-1234"
SECRET_TEXT = f"피고인 {SECRET_NAME}은 {SECRET_PHONE}로 전화하였고 주민등록번호는 900101-1234568, 끝."
LIMIT = 20_000
TOKEN = "s3cret-token-for-the-court-0123"


class LogCapture(logging.Handler):
    """Every log record of every logger (all threads), formatted with its traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, fragment: str, timeout: float = 10) -> str:
        """The first line holding ``fragment`` (access lines are written just after the answer)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [line for line in self.lines if fragment in line]
            if found:
                return found[0]
            time.sleep(0.05)
        raise AssertionError(f"no log line with {fragment!r}")


@pytest.fixture(scope="module")
def logs():
    capture, root = LogCapture(), logging.getLogger()
    previous = root.level
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    yield capture
    root.removeHandler(capture)
    root.setLevel(previous)


class Recording(Deidentifier):
    """Recognizers only; notes the size of every batch and can be made slow or failing."""

    def __init__(self, delay: float = 0.0, fail: bool = False) -> None:
        super().__init__()
        self.delay, self.fail, self.batches = delay, fail, []
        self.entered = threading.Event()

    def predict_tokens(self, texts):  # the model step, also under triage
        self.batches.append(len(texts))
        self.entered.set()
        time.sleep(self.delay)
        if self.fail:  # like the pipeline's own errors, the message quotes the text
            raise RuntimeError(f"cannot remove {texts[0]!r}")
        return super().predict_tokens(texts)


@pytest.fixture(scope="module")
def key(tmp_path_factory) -> MappingKey:
    return MappingKey.generate(tmp_path_factory.mktemp("key") / "serve.key")


@pytest.fixture(scope="module")
def service(logs, key):
    deidentifier = Recording(delay=0.05)
    app = create_app(deidentifier, max_request_bytes=LIMIT, max_documents=4, max_batch_size=8, max_wait=0.02, key=key)
    with running(app) as (url, _):
        yield url, deidentifier


def request(url: str, path: str, body=None, raw: bytes | None = None, method: str | None = None,
            token: str | None = None, context: ssl.SSLContext | None = None):  # fmt: skip
    """``(status, JSON answer or None, headers)`` of one request."""
    data = raw if raw is not None else None if body is None else json.dumps(body).encode("utf-8")
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    req = urllib.request.Request(url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60, context=context) as response:
            status, content, answer_headers = response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        status, content, answer_headers = error.code, error.read(), dict(error.headers)
    try:
        return status, json.loads(content), answer_headers
    except ValueError:
        return status, None, answer_headers


def post(url: str, path: str, body=None, raw: bytes | None = None, token: str | None = None):
    status, data, _ = request(url, path, body, raw, token=token)
    return status, data


# ----------------------------------------------------------------------------------------------- endpoints


def test_deid_endpoint(service) -> None:
    url, _ = service
    status, data = post(url, "/v1/deid", {"text": SECRET_TEXT})
    assert status == 200
    assert SECRET_PHONE not in data["text"] and "900101-1234568" not in data["text"]
    assert data["text"] == "피고인 A는 B로 전화하였고 주민등록번호는 C, 끝."  # the name after its role, the phone, the RRN
    name, phone = data["spans"][:2]
    assert set(phone) == {"start", "end", "text", "label", "category", "tier1", "placeholder", "score", "source", "origin"}
    assert SECRET_TEXT[phone["start"] : phone["end"]] == phone["text"] == SECRET_PHONE
    assert (name["text"], name["source"]) == (SECRET_NAME, "named_in_role")
    status, data = post(url, "/v1/deid", {"text": SECRET_TEXT, "operator": "tag", "threshold": 0.3})
    assert status == 200 and "[전화번호]" in data["text"]
    assert post(url, "/v1/deid", {"text": ""}) == (200, {"text": "", "spans": [], "risk": None, "unmarked_risk": None, "suggestions": [],
                                                     "risk_reason": NO_MODEL_RISK})  # fmt: skip


def test_deid_answers_carry_possible_misses_and_a_risk(service) -> None:
    """Triage: a place left in that may be an identifier is a suggestion beside the spans, never replaced."""
    url, _ = service
    text = "연락처010-2345-6789로 연락하였다."  # the phone is replaced; the word it was glued to is left in
    status, data = post(url, "/v1/deid", {"text": text})
    assert status == 200 and data["text"] == "연락처A로 연락하였다."
    (miss,) = data["suggestions"]
    assert (miss["text"], miss["source"], miss["reason"], miss["label"]) == ("연락처", "possible_miss", "cut_word", "전화번호")
    assert text[miss["start"] : miss["end"]] == "연락처" and miss["placeholder"] == "A"
    assert miss["score"] == TriageRule().cut_word_weight
    assert (data["risk"], data["risk_reason"]) == (None, NO_MODEL_RISK)  # no model: nothing can judge the rest
    status, data = post(url, "/v1/deid/batch", {"documents": [text, "전화 010-1111-2222로 연락하였다."]})
    assert [r["risk"] for r in data["results"]] == [None, None]
    assert [len(r["suggestions"]) for r in data["results"]] == [1, 0]
    with running(create_app(Deidentifier(), triage=None)) as (plain, _):
        status, data = post(plain, "/v1/deid", {"text": text})
    assert status == 200 and set(data) == {"text", "spans"}


BAD_BODIES = [
    ("/v1/deid", b"{}", "request body: Value error, give text or document (base64), one of the two"),
    ("/v1/deid", b'{"document": "UEs="}', "request body: Value error, a document needs its filename"),
    ("/v1/deid", b'{"text": 5}', "text: Input should be a valid string"),
    ("/v1/deid", b'{"text": "x", "operator": "shred"}', "operator: Input should be 'mask', 'placeholder', 'surrogate'"),
    ("/v1/deid", b'{"text": "x", "operator": "thunder.deid.operators.MaskOperator"}', "operator: Input should be"),
    ("/v1/deid", b'{"text": "x", "threshold": 1.5}', "threshold: Input should be less than 1"),
    ("/v1/deid", b'{"text": "x", "threshold": true}', "threshold: Input should be a valid number"),
    ("/v1/deid", b'{"text": "x", "threshold": NaN}', "threshold: Input should be a finite number"),
    ("/v1/deid", b'{"text": "x", "mapping": "yes"}', "mapping: Input should be a valid boolean"),
    ("/v1/deid", b'{"text": "\\ud800 lone surrogate"}', "malformed JSON: "),  # 500 before
    ("/v1/deid", b'{"text": "\\udc00"}', "malformed JSON: "),
    ("/v1/deid", b"[" * 10_000, "malformed JSON: recursion limit exceeded"),
    ("/v1/deid", b'{"text": "x", "n": 1' + b"0" * 5000 + b"}", "malformed JSON: number out of range"),
    ("/v1/deid", b'{"text": "x"} trailing', "malformed JSON: trailing characters"),
    ("/v1/deid", b"", "malformed JSON: EOF while parsing a value"),
    ("/v1/deid/batch", b'{"documents": [5]}', "documents[0]: Value error, a document is a string or an object"),
    ("/v1/deid/batch", b'{"documents": [{"id": "x"}]}', "documents[0].text: Field required"),
    ("/v1/deid/batch", b'{"documents": "one"}', "documents: Input should be a valid array"),
    ("/v1/apply", b'{"text": "x", "spans": [[0, 1]]}', "spans[0]: Input should be an object"),
    ("/v1/apply", b'{"text": "x", "spans": [{"start": -1, "end": 1, "label": "a"}]}', "spans[0].start: Input should be"),
    ("/v1/apply", b'{"text": "xy", "spans": [{"start": 0, "end": 1, "label": "\\ud83d"}]}', "malformed JSON: "),
    ("/v1/apply", b'{"text": "x", "spans": [{"start": 0, "end": 1, "label": "a", "score": Infinity}]}', "spans[0].score: Input should be a finite"),
    ("/v1/apply", '{"text": "x", "spans": [], "letters": [{"text": "홍비밀", "letter": "a1"}]}'.encode(), "letters[0].letter: String should match pattern"),
    # issue 71: a key twice was taken silently, the last one winning
    ("/v1/deid", '{"text": "홍비밀", "text": "x"}'.encode(), "malformed JSON: 'text' appears twice in one object"),
    ("/v1/apply", b'{"text": "xy", "spans": [{"start": 0, "end": 1, "start": 1, "label": "a"}]}', "malformed JSON: 'start' appears twice"),
    ("/v1/deid", '{"text": "x", "홍비밀": 1, "홍비밀": 2}'.encode(), "malformed JSON: a key appears twice in one object"),
]


@pytest.mark.parametrize("path, raw, reason", BAD_BODIES)
def test_every_bad_body_is_a_400_with_a_reason(service, path: str, raw: bytes, reason: str) -> None:
    status, data = post(service[0], path, raw=raw)
    assert status == 400 and data["error"].startswith(reason), data


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
FIELDS = st.fixed_dictionaries({}, optional={"text": JSON | st.text(), "documents": JSON, "spans": JSON,
                                             "operator": JSON, "threshold": JSON, "mapping": JSON, "id": JSON})  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(["/v1/deid", "/v1/deid/batch", "/v1/apply"]), body=FIELDS | JSON)
def test_no_body_gives_a_500(service, path: str, body) -> None:
    status, data = post(service[0], path, raw=json.dumps(body).encode())
    assert status in (200, 400, 413) and (status == 200 or data["error"]), (status, data)


def test_non_utf8_gives_400(service) -> None:
    url, _ = service
    status, data = post(url, "/v1/deid", raw=b'{"text": "\xff\xfe"}')
    assert (status, data["error"]) == (400, "request body is not valid UTF-8 (byte 10: invalid start byte)")
    status, data = post(url, "/v1/deid", raw=b"[1, 2]")
    assert (status, data["error"]) == (400, "request body: Input should be an object")
    status, data = post(url, "/v1/deid", raw='{"text": "홍비밀'.encode())
    assert status == 400 and data["error"].startswith("malformed JSON: EOF while parsing a string at line 1")
    assert SECRET_NAME not in data["error"]


def raw_post(url: str, path: str, body, chunked: bool = False) -> tuple[int, dict]:
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    if chunked:
        connection.request("POST", path, body=iter(body), encode_chunked=True,
                           headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})  # fmt: skip
    else:
        connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    result = response.status, json.loads(response.read())
    connection.close()
    return result


def test_oversized_requests_give_413(service) -> None:
    url, _ = service
    big = json.dumps({"text": SECRET_TEXT * 400}).encode()
    assert len(big) > LIMIT
    expected = (413, {"error": f"request body larger than the limit of {LIMIT} bytes"})
    assert raw_post(url, "/v1/deid", big) == expected
    assert raw_post(url, "/v1/deid", [big[i : i + 4096] for i in range(0, len(big), 4096)], chunked=True) == expected
    assert post(url, "/v1/deid", {"text": "010-1234-5678"})[0] == 200  # the server goes on
    status, data = post(url, "/v1/deid/batch", {"documents": ["a"] * 5})
    assert (status, data["error"]) == (413, "5 documents; at most 4 per request")


def test_batch_endpoint(service) -> None:
    url, _ = service
    body = {"documents": [SECRET_TEXT, {"id": "b", "text": "전화 010-1111-2222"}], "operator": "mask"}
    status, data = post(url, "/v1/deid/batch", body)
    assert status == 200
    assert [r["id"] for r in data["results"]] == ["0", "b"]
    assert data["results"][1]["text"] == "전화 *************"
    assert post(url, "/v1/deid/batch", {"documents": []}) == (200, {"results": []})


def test_apply_endpoint_reapplies_reviewed_spans(service) -> None:
    url, _ = service
    text = "피고인 홍길동은 피해자를 만났다. 홍길동이 먼저 때렸다."
    status, data = post(url, "/v1/apply", {"text": text, "spans": [{"start": 4, "end": 7, "label": "내국인이름"}]})
    assert status == 200
    assert data["text"] == "피고인 A는 피해자를 만났다. A가 먼저 때렸다."  # particles fixed, other mention propagated
    assert [s["source"] for s in data["spans"]] == ["reviewer", "propagated"]
    assert data["spans"][1]["origin"] == [4, 7]
    # what the page sends back: the propagated span with the span it repeats, as /v1/deid answered it
    status, again = post(url, "/v1/apply", {"text": text, "spans": [
        {"start": 4, "end": 7, "label": "내국인이름"},
        {"start": 18, "end": 21, "label": "내국인이름", "source": "propagated", "origin": [4, 7]}]})  # fmt: skip
    assert (status, again["text"]) == (200, data["text"])
    assert [(s["source"], s["origin"]) for s in again["spans"]] == [("reviewer", None), ("propagated", [4, 7])]
    status, data = post(url, "/v1/apply", {"text": text, "spans": [
        {"start": 18, "end": 21, "label": "내국인이름", "source": "propagated", "origin": [4, 99]}]})  # fmt: skip
    assert (status, data["error"]) == (400, "spans[0].origin [4, 99] is not a range inside the text (31 chars)")
    status, data = post(url, "/v1/apply", {"text": text, "spans": [{"start": 4, "end": 99, "label": "내국인이름"}]})
    assert status == 400 and data["error"] == "spans[0] [4, 99) is not a range inside the text (31 chars)"
    status, data = post(url, "/v1/apply", {"text": text, "spans": [{"start": 4, "end": 7, "label": "이름"}]})
    assert (status, data["error"]) == (400, "spans[0]: unknown label '이름' (GET /v1/labels lists them)")
    # a category (what category-level models emit) is a label a span may carry
    status, data = post(url, "/v1/apply", {"text": text, "spans": [{"start": 4, "end": 7, "label": "사건관계인특정정보"}]})
    assert status == 200 and data["text"].startswith("피고인 A는")
    assert data["spans"][0]["category"] == "사건관계인특정정보" and data["spans"][0]["tier1"] == "direct"


# ----------------------------------------------------------------------------------------------- every model


@pytest.fixture(scope="module")
def tiny_tokenizer():
    from thunder.language.tokenizer import ThunderTokenizer

    texts = [FILLER, "피고인 홍길동은 피해자 김철수에게 전화하였다.", "환자 김민수는 한빛의원에 내원하였다."] * 4
    return ThunderTokenizer.train(texts, vocab_size=400, min_frequency=1)


def tiny_deidentifier(tokenizer, taxonomy: Taxonomy, granularity: str) -> Deidentifier:
    label_set = LabelSet(taxonomy, granularity, "IO")
    return Deidentifier(build_tiny_model(tokenizer, label_set), tokenizer, label_set, max_length=32, stride=8)


MODELS = {
    "category": lambda request: tiny_deidentifier(request.getfixturevalue("tiny_tokenizer"), Taxonomy.load(), "category"),
    "label": lambda request: tiny_deidentifier(request.getfixturevalue("tiny_tokenizer"), Taxonomy.load(), "label"),
    "binary": lambda request: tiny_deidentifier(request.getfixturevalue("tiny_tokenizer"), Taxonomy.load(), "binary"),
    "user taxonomy": lambda request: tiny_deidentifier(
        request.getfixturevalue("tiny_tokenizer"), Taxonomy.load(REPO / "configs/taxonomies/medical_records.yaml"), "label"
    ),
    "SNU release": lambda request: unverified_release(request.getfixturevalue("release_dir")),
}


def unverified_release(path: Path) -> Deidentifier:
    """The release directory, which runs only unverified (it records no fingerprint)."""
    with unverified_allowed(), pytest.warns(UserWarning, match="UNVERIFIED"):
        return Deidentifier.from_pretrained(path)


@pytest.mark.parametrize("kind", MODELS)
def test_apply_takes_back_whatever_deid_answers_with_every_kind_of_model(kind: str, request, logs) -> None:
    """The review loop: the spans ``/v1/deid`` gives (category labels of a category-level model, a user taxonomy's
    labels, the release's mapped labels) go back to ``/v1/apply`` unchanged and give the same text."""
    deidentifier = MODELS[kind](request)
    text = "피고인 홍길동은 피해자 김철수에게 전화(010-2345-6789)하였다.\n" + FILLER + "환자 김민수는 한빛의원에 내원하였다."
    with running(create_app(deidentifier)) as (url, _):
        status, labels = post(url, "/v1/labels")
        status, data = post(url, "/v1/deid", {"text": text})
        assert status == 200 and data["spans"]
        model_labels = {s["label"] for s in data["spans"] if s["source"] == "model"}
        assert model_labels and model_labels <= {t["name"] for t in labels["entity_types"]}
        status, again = post(url, "/v1/apply", {"text": text, "spans": data["spans"]})
    assert status == 200, again
    assert again["text"] == data["text"]
    assert [(s["start"], s["end"], s["label"], s["category"]) for s in again["spans"]] == [
        (s["start"], s["end"], s["label"], s["category"]) for s in data["spans"]
    ]
    assert labels["granularity"] == deidentifier.label_set.granularity
    if kind == "category":
        assert model_labels <= set(Taxonomy.load().categories)


def test_mapping_from_the_service_restores_the_original(service, key, tmp_path: Path) -> None:
    url, _ = service
    status, data = post(url, "/v1/deid", {"id": "case-1", "text": SECRET_TEXT, "mapping": True})
    assert status == 200 and SECRET_PHONE not in json.dumps(data["mapping"], ensure_ascii=False)
    (tmp_path / "m.jsonl").write_text(json.dumps(data["mapping"]) + "\n", encoding="utf-8")
    record = Mapping(tmp_path / "m.jsonl", key).find(data["text"])
    assert record["doc"] == "case-1" and reidentify(data["text"], record) == SECRET_TEXT
    status, data = post(url, "/v1/deid/batch", {"documents": [SECRET_TEXT, "010-3333-4444"], "mapping": True})
    assert status == 200 and all("mapping" in r for r in data["results"])


def _hwpx(text: str) -> bytes:
    from hwpx import HwpxDocument

    document = HwpxDocument.new()
    document.page.set_header(text=f"피고인 {SECRET_NAME}")
    body = document.add_paragraph("피고인 ")
    body.add_run(SECRET_NAME[:1], bold=True)
    body.add_run(SECRET_NAME[1:] + text[text.index(SECRET_NAME) + len(SECRET_NAME):], italic=True)
    return document.to_bytes()


def test_deid_takes_a_document_and_answers_the_document_de_identified(service, key, tmp_path: Path) -> None:
    import base64
    import zipfile

    from thunder.documents.formats import read_bytes

    url, _ = service
    upload = base64.b64encode(_hwpx(SECRET_TEXT)).decode()
    status, data = post(url, "/v1/deid", {"document": upload, "filename": "판결.hwpx", "mapping": True})
    assert status == 200 and data["filename"] == "판결.hwpx"
    written = base64.b64decode(data["document"])
    with zipfile.ZipFile(io.BytesIO(written)) as archive:  # no identifier in any part
        for name in archive.namelist():
            content = archive.read(name)
            assert SECRET_PHONE.encode() not in content and SECRET_NAME.encode() not in content, name
    text = read_bytes("x.hwpx", written).text
    assert text == data["text"] and "피고인 A는 B로 전화하였고" in text
    original = read_bytes("x.hwpx", base64.b64decode(upload)).text
    assert all(original[s["start"] : s["end"]] == s["text"] for s in data["spans"])  # offsets of the extracted text
    (tmp_path / "m.jsonl").write_text(json.dumps(data["mapping"]) + "\n", encoding="utf-8")
    assert reidentify(text, Mapping(tmp_path / "m.jsonl", key).find(text)) == original
    status, data = post(url, "/v1/deid", {"document": upload, "filename": "판결.hwpx", "out_format": "text"})
    assert status == 200 and data["filename"] == "판결.txt"
    assert base64.b64decode(data["document"]).decode("utf-8") == data["text"]


def test_the_service_never_answers_an_identifying_name_or_id(service) -> None:
    """Class: names are data (issue 80), on the service. An upload's name comes back without folders (``/`` or
    ``\\``), and only when nothing is found in it and it holds no text replaced in the document (else ``document``
    and the suffix); a batch's ids likewise (else the position)."""
    import base64

    url, _ = service
    upload = base64.b64encode(_hwpx(SECRET_TEXT)).decode()
    for filename, answered in ((f"{SECRET_NAME}.hwpx", {"document.hwpx"}), ("800101-1234567.hwpx", {"document.hwpx"}),
                               ("..\\..\\evil.hwpx", {"evil.hwpx", "document.hwpx"}),
                               ("../../evil.hwpx", {"evil.hwpx", "document.hwpx"})):  # fmt: skip
        status, data = post(url, "/v1/deid", {"document": upload, "filename": filename})
        assert status == 200 and data["filename"] in answered, (filename, data["filename"])
    documents = [{"id": f"2020고단1_{SECRET_NAME}", "text": SECRET_TEXT}, {"id": "case-800101-1234567", "text": "끝."},
                 {"id": "plain", "text": "끝."}]  # fmt: skip
    status, data = post(url, "/v1/deid/batch", {"documents": documents})
    assert status == 200 and [r["id"] for r in data["results"]][:2] == ["0", "1"]
    assert data["results"][2]["id"] in ("plain", "2")


def test_apply_writes_the_reviewed_document_back_in_its_format(service) -> None:
    """The review page's download of a document: ``/v1/deid`` answers the text its reader extracted, ``/v1/apply``
    takes it back with the document and the reviewed spans and answers the document with exactly those replaced; a
    text that is not the document's is refused, since the offsets would fall elsewhere."""
    import base64

    from thunder.documents.formats import read_bytes

    url, _ = service
    upload = base64.b64encode(_hwpx(SECRET_TEXT)).decode()
    status, first = post(url, "/v1/deid", {"document": upload, "filename": "판결.hwpx"})
    extracted = first["extracted"]
    assert status == 200 and extracted == read_bytes("판결.hwpx", base64.b64decode(upload)).text
    assert {".hwpx", ".docx", ".pdf"} <= set(request(url, "/health")[1]["documents"])
    phone = next(s for s in first["spans"] if s["text"] == SECRET_PHONE)
    kept = [{"start": s["start"], "end": s["end"], "label": s["label"]} for s in first["spans"] if s is not phone]
    body = {"text": extracted, "spans": kept, "rejected": [{"start": phone["start"], "end": phone["end"]}],
            "document": upload, "filename": "판결.hwpx"}  # fmt: skip
    status, data = post(url, "/v1/apply", body)
    assert status == 200 and data["filename"] == "판결.hwpx"
    written = read_bytes("판결.hwpx", base64.b64decode(data["document"])).text
    assert written == data["text"] and SECRET_PHONE in written and SECRET_NAME not in written
    status, data = post(url, "/v1/apply", {**body, "text": extracted + " "})
    assert status == 400 and data["error"].startswith("text: not the text the document's reader extracts")
    status, data = post(url, "/v1/apply", {**body, "filename": None})
    assert status == 400 and "a document needs its filename" in data["error"]


@pytest.mark.parametrize("body, status, reason", [
    ({"document": "bm90IGEgemlw", "filename": "a.docx"}, 400, "document refused: corrupt or truncated"),
    ({"document": "UEsDBA==", "filename": "a.hwpx"}, 400, "document refused: corrupt or truncated"),
    ({"document": "%%%", "filename": "a.hwpx"}, 400, "document: not valid base64"),
    ({"document": "AAAA", "filename": "a.hwp"}, 400, "document refused: corrupt or truncated: not an HWP 5 file"),
    ({"document": "AAAA", "filename": "a.exe"}, 415, "filename: .exe is not a document format read here"),
    ({"document": "AAAA", "filename": "a.hwpx", "text": "x"}, 400, "give text or document"),
])  # fmt: skip
def test_a_bad_document_is_refused_with_its_one_line_reason(service, body, status: int, reason: str) -> None:
    url, _ = service
    got, data = post(url, "/v1/deid", body)
    assert got == status and reason in data["error"] and "\n" not in data["error"]


def test_an_oversized_document_gives_413(service) -> None:
    import base64

    url, _ = service
    status, data = post(url, "/v1/deid", {"document": base64.b64encode(b"x" * LIMIT).decode(), "filename": "a.docx"})
    assert status == 413 and "limit" in data["error"]


def test_mapping_needs_a_server_key(logs) -> None:
    with running(create_app(Deidentifier())) as (url, _):
        status, data = post(url, "/v1/deid", {"text": SECRET_TEXT, "mapping": True})
    assert (status, data["error"]) == (400, "mapping requested, but the server was started without --key_file")


def test_health_labels_and_page(service) -> None:
    url, _ = service
    status, data, _ = request(url, "/health")
    assert status == 200 and data["status"] == "ok" and data["max_request_bytes"] == LIMIT
    assert data["model"] is None and data["token_required"] is False and data["threshold"] is None
    status, data, _ = request(url, "/v1/labels")
    assert any(label["name"] == "내국인이름" for label in data["labels"]) and data["entity_types"] == []
    with urllib.request.urlopen(url + "/", timeout=30) as response:
        assert b"<title>Thunder review</title>" in response.read()
        assert response.headers["Content-Security-Policy"].startswith("default-src 'self'")
    with urllib.request.urlopen(url + "/static/review.js", timeout=30) as response:
        assert b"/v1/apply" in response.read()


# ----------------------------------------------------------------------------------------------- batching


def test_concurrent_requests_are_batched_and_answered_each_with_its_own_result(service) -> None:
    url, deidentifier = service
    before = len(deidentifier.batches)
    texts = [f"문서 {i}: 전화 010-{1000 + i}-{2000 + i}, 끝." for i in range(24)]
    with ThreadPoolExecutor(max_workers=24) as pool:
        answers = list(pool.map(lambda t: post(url, "/v1/deid", {"text": t}), texts))
    for i, (status, data) in enumerate(answers):
        assert status == 200 and data["text"] == f"문서 {i}: 전화 A, 끝."
        assert data["spans"][0]["text"] == f"010-{1000 + i}-{2000 + i}"
    sizes = deidentifier.batches[before:]
    assert sum(sizes) == 24 and max(sizes) > 1 and max(sizes) <= 8


def test_a_large_batch_request_takes_turns_with_others(logs) -> None:
    """A 12-document request goes through the model in slices of max_batch_size; a request arriving meanwhile is
    answered before the big one ends."""
    deidentifier = Recording(delay=0.2)
    with running(create_app(deidentifier, max_batch_size=2, max_documents=12)) as (url, _):
        with ThreadPoolExecutor(max_workers=2) as pool:
            big = pool.submit(post, url, "/v1/deid/batch", {"documents": [f"전화 010-1111-{1000 + i}" for i in range(12)]})
            assert deidentifier.entered.wait(10)
            small = pool.submit(post, url, "/v1/deid", {"text": SECRET_TEXT})
            assert small.result(timeout=30)[0] == 200
            assert not big.done()
            status, data = big.result(timeout=30)
    assert status == 200 and [r["text"] for r in data["results"]] == ["전화 A"] * 12
    assert max(deidentifier.batches) == 2 and sum(deidentifier.batches) == 13


def test_failures_inside_the_pipeline_are_reported_without_the_text(logs) -> None:
    with running(create_app(Recording(fail=True))) as (url, _):
        status, data = post(url, "/v1/deid", {"text": SECRET_TEXT})
    assert (status, data) == (500, {"error": "internal error while de-identifying (RuntimeError)"})
    assert "de-identification failed: RuntimeError" in logs.text


def test_logs_carry_sizes_and_timings_never_text_nor_paths(service, logs) -> None:
    url, _ = service
    assert post(url, "/v1/deid", {"text": SECRET_TEXT})[0] == 200
    secret_path = urllib.parse.quote("hong.gildong@example.co.kr_900101-1234568")
    for path in ("/" + urllib.parse.quote(SECRET_NAME), "/static/" + secret_path, "/docs/assets/" + secret_path):
        assert request(url, path)[0] == 404
    assert request(url, "/static/review.css")[0] == 200
    logs.wait_for("GET /static/review.css 200")
    assert len([line for line in logs.lines if "GET <other> 404" in line]) >= 3
    line = next(line for line in reversed(logs.lines) if "POST /v1/deid 200" in line)
    assert re.fullmatch(r"thunder\.service INFO POST /v1/deid 200 in=\d+B out=\d+B \d+\.\dms", line)
    for secret in (SECRET_NAME, SECRET_PHONE, "900101-1234568", "%ED%99%8D", "hong.gildong"):  # %ED%99%8D: 홍
        assert secret not in logs.text


# ----------------------------------------------------------------------------------------------- administrator


def test_a_token_guards_the_api_and_nothing_else(logs) -> None:
    with running(create_app(Recording(), token=TOKEN)) as (url, _):
        status, data, headers = request(url, "/v1/deid", {"text": SECRET_TEXT})
        assert (status, data["error"]) == (401, "this server needs a token: Authorization: Bearer <token>")
        assert headers["www-authenticate"] == "Bearer"
        assert post(url, "/v1/deid", {"text": SECRET_TEXT}, token=TOKEN[:-1] + "x") == (401, {"error": "wrong token"})
        assert post(url, "/v1/labels", token="wrong")[0] == 401
        for path in ("/v1/deid/batch", "/v1/apply"):
            assert post(url, path, {"text": "x", "documents": [], "spans": []})[0] == 401
        assert post(url, "/v1/deid", {"text": SECRET_TEXT}, token=TOKEN)[0] == 200
        for path in ("/", "/static/review.js", "/health", "/docs", "/openapi.json"):  # no data in these
            assert request(url, path)[0] == 200, path
        assert request(url, "/health")[1]["token_required"] is True
    assert TOKEN not in logs.text


def test_a_busy_port_is_one_line_before_the_model_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 82: ``thunder serve --port`` on a port another server holds ends with one line naming the port, before
    any model loads (no page address of the other server, no raw errno)."""
    import thunder.deid.pipeline as pipeline

    monkeypatch.setattr(pipeline.PipelineOptions, "build", lambda *args: pytest.fail("the model loaded"))
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        with pytest.raises(SystemExit) as refused:
            main(["serve", "--port", str(port), "--recognizers_only"])
    assert str(refused.value).startswith(f"thunder serve: error: --port {port}: cannot listen on 127.0.0.1:{port} (")
    assert str(refused.value).endswith("another server?); choose another port")


def test_binding_beyond_loopback_needs_a_token(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as refused:
        main(["serve", "--host", "0.0.0.0"])
    assert str(refused.value) == (
        "thunder serve: error: --host 0.0.0.0 reaches beyond this machine: give --token_file (a token clients must send)"
    )
    with pytest.raises(ValueError, match="reaches beyond this machine"):  # the library refuses too
        serve(create_app(Deidentifier()), host="192.168.1.10")
    (tmp_path / "short").write_text("abc\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="short: the token must be one line of at least 16 printable characters"):
        main(["serve", "--host", "0.0.0.0", "--token-file", str(tmp_path / "short")])
    with pytest.raises(SystemExit, match="--ssl_certfile and --ssl_keyfile go together"):
        main(["serve", "--ssl-certfile", str(tmp_path / "short")])
    with pytest.raises(SystemExit, match=r"--ssl_certfile .*short / --ssl_keyfile .*short: "):
        main(["serve", "--ssl-certfile", str(tmp_path / "short"), "--ssl-keyfile", str(tmp_path / "short")])
    with pytest.raises(SystemExit, match="--request_timeout must be positive"):
        main(["serve", "--request-timeout", "0"])


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (PEM files)."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(private.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .sign(private, hashes.SHA256())
    )  # fmt: skip
    cert, key = directory / "cert.pem", directory / "key.pem"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))  # fmt: skip
    return cert, key


def test_tls(tmp_path: Path, logs) -> None:
    cert, key = self_signed(tmp_path)
    with running(create_app(Recording()), ssl_certfile=str(cert), ssl_keyfile=str(key)) as (url, _):
        assert url.startswith("https://")
        context = ssl.create_default_context(cafile=str(cert))
        status, data, _ = request(url, "/v1/deid", {"text": SECRET_TEXT}, context=context)
        assert status == 200 and SECRET_PHONE not in data["text"]
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
            request(url, "/health")  # an unknown certificate is not trusted
        with pytest.raises((ConnectionError, http.client.HTTPException)):
            plain = http.client.HTTPConnection("127.0.0.1", int(url.rsplit(":", 1)[1]), timeout=10)
            plain.request("GET", "/health")
            plain.getresponse()


def test_requests_past_the_time_limit_get_504(logs) -> None:
    deidentifier = Recording(delay=5.0)
    with running(create_app(deidentifier, request_timeout=0.5)) as (url, _):
        started = time.monotonic()
        status, data = post(url, "/v1/deid", {"text": SECRET_TEXT})
        assert (status, data) == (504, {"error": "no answer within the time limit of 0.5 s (--request_timeout)"})
        assert time.monotonic() - started < 4.5  # answered at the limit, not when the model is done


def test_a_client_that_hangs_up_stops_the_model_between_batches(tiny_tokenizer, logs) -> None:
    """The model stops before its next forward pass once the only request of its batch has gone."""
    label_set = LabelSet(Taxonomy.load(), "category", "IO")
    model = build_tiny_model(tiny_tokenizer, label_set)
    passes: list[float] = []
    model.register_forward_pre_hook(lambda *_: passes.append(time.monotonic()))
    deidentifier = Deidentifier(model, tiny_tokenizer, label_set, max_length=16, stride=4, batch_size=1)
    text = (FILLER * 300)[:30_000]
    with running(create_app(deidentifier)) as (url, _):
        port = int(url.rsplit(":", 1)[1])
        client = socket.create_connection(("127.0.0.1", port))
        body = json.dumps({"text": text}).encode()
        client.sendall(b"POST /v1/deid HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       b"Content-Length: %d\r\n\r\n%s" % (len(body), body))  # fmt: skip
        deadline = time.monotonic() + 60
        while len(passes) < 20:
            assert time.monotonic() < deadline, "the model did not start"
            time.sleep(0.01)
        client.close()  # the clerk closed the tab
        logs.wait_for("POST /v1/deid 499")
        time.sleep(0.5)
        stopped = len(passes)
        time.sleep(1.0)
        assert len(passes) == stopped, "the model went on computing for a client that left"
        assert stopped < 1000  # of more than 2,000 windows
        assert post(url, "/v1/deid", {"text": "전화 010-2345-6789"})[0] == 200  # the model is free


def test_every_answer_says_no_store(service) -> None:
    url, _ = service
    answers = [request(url, path) for path in ("/", "/static/review.js", "/health", "/v1/labels", "/docs",
                                               "/openapi.json", "/docs/assets/swagger-ui.css", "/nothing")]  # fmt: skip
    answers += [request(url, "/v1/deid", {"text": SECRET_TEXT}), request(url, "/v1/deid", raw=b"{"),
                request(url, "/v1/deid/batch", {"documents": ["a"] * 5})]  # fmt: skip
    assert {status for status, _, _ in answers} == {200, 400, 404, 413}
    for status, _, headers in answers:
        assert headers["cache-control"] == "no-store", (status, headers)


def test_the_api_description_and_its_docs_come_from_the_package(service) -> None:
    url, _ = service
    status, schema, _ = request(url, "/openapi.json")
    assert status == 200
    assert {"/v1/deid", "/v1/deid/batch", "/v1/apply", "/v1/labels", "/health"} <= set(schema["paths"])
    body = schema["paths"]["/v1/deid"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/DeidRequest"}
    components = schema["components"]["schemas"]
    assert {"DeidRequest", "BatchRequest", "ApplyRequest", "ReviewedSpan", "DocumentAnswer"} <= set(components)
    assert "required" not in components["DeidRequest"]  # text, or a document with its filename
    for request_body in ("DeidRequest", "ApplyRequest"):  # a document reviewed goes back in its own format
        assert {"text", "document", "filename", "out_format"} <= set(components[request_body]["properties"])
    assert "extracted" in components["DocumentAnswer"]["properties"]
    with urllib.request.urlopen(url + "/docs", timeout=30) as response:
        page = response.read().decode()
    references = re.findall(r"""(?:src|href)=["']([^"']+)""", page)
    assert references and all(ref.startswith("/docs/assets/") for ref in references), references
    assert "http" not in page.replace("url: '/openapi.json'", "")  # no CDN, no validator badge
    for reference in references:
        with urllib.request.urlopen(url + reference, timeout=30) as response:
            assert response.status == 200 and len(response.read()) > 100


# ----------------------------------------------------------------------------------------------- shutdown


def test_graceful_shutdown_finishes_in_flight_requests(logs) -> None:
    deidentifier = Recording(delay=1.0)
    with running(create_app(deidentifier)) as (url, server):
        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(post, url, "/v1/deid", {"text": SECRET_TEXT})
            assert deidentifier.entered.wait(10)
            server.should_exit = True  # what SIGINT / SIGTERM do
            status, data = pending.result(timeout=30)
        assert status == 200 and SECRET_PHONE not in data["text"]
        deadline = time.monotonic() + 10
        with pytest.raises(urllib.error.URLError):  # stopped listening: the connection is refused
            while time.monotonic() < deadline:
                request(url, "/health")
                time.sleep(0.05)


def test_shutdown_answers_a_256_document_batch_that_cannot_finish(logs) -> None:
    """64 model calls of 0.3 s do not fit in a graceful timeout of 3 s: the request is answered 503 (not 500,
    not a reset connection) before the timeout ends, and the model stops."""
    deidentifier = Recording(delay=0.3)
    app = create_app(deidentifier, max_documents=256, max_batch_size=4)
    with running(app, graceful_timeout=3) as (url, server):
        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(request, url, "/v1/deid/batch", {"documents": [SECRET_TEXT] * 256})
            assert deidentifier.entered.wait(10)
            started = time.monotonic()
            server.should_exit = True
            status, data, headers = pending.result(timeout=30)
            answered = time.monotonic() - started
    assert (status, data) == (503, {"error": "the server is shutting down: send the request again"})
    assert headers["retry-after"] == "10" and answered < 3
    assert sum(deidentifier.batches) < 256


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_serve_command_with_a_tiny_model(tmp_path: Path) -> None:
    """``thunder serve --model EXPORT --token-file F`` as its own process: answers with the token, shows no model
    path, and on SIGTERM with a 256-document batch in flight answers it (not 500) and stops cleanly."""
    export = write_tiny_export(tmp_path / "export")
    (tmp_path / "token").write_text(TOKEN + "\n", encoding="utf-8")
    port = free_port()
    command = [sys.executable, "-m", "thunder", "serve", "--model", str(export), "--port", str(port),
               "--key-file", str(tmp_path / "k"), "--token-file", str(tmp_path / "token"), "--max_length", "32",
               "--stride", "8", "--graceful_timeout", "4"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                health = request(url, "/health")[1]
                break
            except (urllib.error.URLError, ConnectionError):
                assert process.poll() is None and time.monotonic() < deadline, "thunder serve did not start"
                time.sleep(0.2)
        assert health["model"] == {"granularity": "label", "types": len(Taxonomy.load().labels)}
        assert str(export) not in json.dumps(health)
        assert post(url, "/v1/deid", {"text": SECRET_TEXT})[0] == 401
        status, data = post(url, "/v1/deid", {"text": SECRET_TEXT * 3, "mapping": True}, token=TOKEN)
        assert status == 200 and SECRET_PHONE not in data["text"]
        record = MappingKey.load(tmp_path / "k").open(data["mapping"])
        assert reidentify(data["text"], record) == SECRET_TEXT * 3
        with ThreadPoolExecutor(max_workers=1) as pool:
            batch = pool.submit(post, url, "/v1/deid/batch", {"documents": [SECRET_TEXT * 5] * 256}, token=TOKEN)
            time.sleep(1.0)
            process.send_signal(signal.SIGTERM)
            status, data = batch.result(timeout=60)
        assert status in (200, 503), (status, data)
        if status == 503:
            assert data == {"error": "the server is shutting down: send the request again"}
        else:
            assert len(data["results"]) == 256
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=60)[0]
    assert process.returncode in (0, -signal.SIGTERM), output  # uvicorn re-raises the signal once it has stopped
    assert "POST /v1/deid 200 in=" in output and "Application shutdown complete" in output
    assert "Traceback" not in output and " 500 " not in output
    for secret in (SECRET_NAME, SECRET_PHONE, str(export), TOKEN):
        assert secret not in output


def test_a_reviewers_span_is_replaced_whatever_its_characters(service) -> None:
    """A chat nickname of emoji after 대화명 is the clerk's decision: replaced, never dropped; a span that cannot be
    applied (only spaces) is refused with the reason, never answered 200 without it."""
    url, _ = service
    text = "피해자는 대화명 🐯🦁 으로 접속하였다."
    start = text.index("🐯🦁")
    status, data = post(url, "/v1/apply", {"text": text, "spans": [{"start": start, "end": start + 2, "label": "닉네임"}]})
    assert status == 200 and "🐯🦁" not in data["text"] and data["text"] == "피해자는 대화명 A 으로 접속하였다."
    assert [(s["text"], s["source"]) for s in data["spans"]] == [("🐯🦁", "reviewer")]
    status, data = post(url, "/v1/apply", {"text": text, "spans": [{"start": 8, "end": 9, "label": "닉네임"}]})
    assert status == 400 and "could not be applied" in data["error"]


def test_accepting_a_word_never_rewrites_the_words_it_is_part_of(service) -> None:
    """Accepting the dashed ``신호`` replaces ``신호`` where it stands as a word, never inside ``신호등`` or
    ``신호대기`` (issue 56)."""
    url, _ = service
    text = "신호등이 설치된 교차로에서 신호대기를 위하여 정차하였는데, 피고인은 신호를 무시하였다. 신호가 바뀌었다."
    start = text.index("신호를")
    status, data = post(url, "/v1/apply", {"text": text, "spans": [{"start": start, "end": start + 2, "label": "닉네임"}]})
    assert status == 200
    assert data["text"] == "신호등이 설치된 교차로에서 신호대기를 위하여 정차하였는데, 피고인은 A를 무시하였다. A가 바뀌었다."
    assert [s["text"] for s in data["spans"]] == ["신호", "신호"]


def test_re_applying_keeps_the_letters_the_review_shows(service) -> None:
    """Issue 67: entities keep the letters sent with the spans (particles agree with them), a new entity takes the
    next free letter after them, skipping a letter that stands alone in the text; without letters, as before."""
    url, _ = service
    text = "피고인 홍길동은 송파구에서 김영희를 만났다. 홍길동이 김영희에게 전화하였다. 증 제D호."
    spans = [{"start": text.index(word), "end": text.index(word) + 3, "label": label}
             for word, label in (("홍길동", "내국인이름"), ("송파구", "도로"), ("김영희", "내국인이름"))]  # fmt: skip
    status, plain = post(url, "/v1/apply", {"text": text, "spans": spans})
    assert status == 200 and plain["text"].startswith("피고인 A는 B에서 C를 만났다.")
    letters = [{"text": "홍길동", "letter": "L"}, {"text": "김 영희", "letter": "C"}]  # whitespace aside
    status, data = post(url, "/v1/apply", {"text": text, "spans": spans, "letters": letters})
    assert status == 200, data
    assert data["text"] == "피고인 L은 M에서 C를 만났다. L이 C에게 전화하였다. 증 제D호."  # particles agree with L
    assert [(s["text"], s["placeholder"]) for s in data["spans"]] == [
        ("홍길동", "L"), ("송파구", "M"), ("김영희", "C"), ("홍길동", "L"), ("김영희", "C")]  # fmt: skip
    letters = [{"text": "홍길동", "letter": "C"}, {"text": "김영희", "letter": "B"}, {"text": "송파구", "letter": "C"}]
    status, data = post(url, "/v1/apply", {"text": text, "spans": spans, "letters": letters})
    assert status == 200 and data["text"].startswith("피고인 C는 E에서 B를 만났다.")  # C claimed twice: 송파구 is new; D stands


# ----------------------------------------------------------------------------------------------- issue 71


def _raw(url: str, path: str, body: bytes, content_type: str | None) -> tuple[int, dict]:
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    connection.request("POST", path, body=body, headers={"Content-Type": content_type} if content_type else {})
    response = connection.getresponse()
    result = response.status, json.loads(response.read())
    connection.close()
    return result


@pytest.mark.parametrize("path", ["/v1/deid", "/v1/deid/batch", "/v1/apply"])
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None])
def test_a_body_not_sent_as_json_is_a_415(service, path: str, content_type: str | None) -> None:
    """A browser posts text/plain or a form to any site without asking first (no CORS preflight): only JSON is read."""
    status, data = _raw(service[0], path, b'{"text": "x", "documents": ["x"], "spans": []}', content_type)
    media = content_type.split(";")[0] if content_type else None
    assert (status, data) == (415, {"error": "the body must be sent as Content-Type: application/json ("
                                             + (f"got {media!r})" if media else "none given)")})  # fmt: skip
    assert _raw(service[0], "/v1/deid", b'{"text": "x"}', "Application/JSON; charset=utf-8")[0] == 200


def test_a_span_dropped_by_the_policy_is_refused_with_its_reason(service) -> None:
    url, _ = service
    text = "피고인은 서울중앙지방법원에 출석하였다.  그뿐이다."
    court, blank = text.index("서울중앙지방법원"), text.index("  ")
    cases = [((court, court + 8, "model"), "the publication policy keeps a model's span over this text"),
             ((blank, blank + 2, "reviewer"), "it holds only whitespace"),
             ((len(text) - 1, len(text), "model"), 'it holds no letter or digit; send it with source "reviewer"')]  # fmt: skip
    for (start, end, source), reason in cases:
        spans = [{"start": start, "end": end, "label": "닉네임", "source": source}]
        status, data = post(url, "/v1/apply", {"text": text, "spans": spans})
        assert status == 400 and data["error"].startswith(f"spans[0] [{start}, {end}) could not be applied ({reason}")
    spans = [{"start": court, "end": court + 8, "label": "닉네임", "source": "reviewer"}]
    assert post(url, "/v1/apply", {"text": text, "spans": spans})[1]["text"].startswith("피고인은 A에")


def test_a_client_that_leaves_while_sending_is_a_499_at_info(service, logs) -> None:
    """A slow client's hang-up is the client's doing: no ERROR, no 500 in the log."""
    url, _ = service
    start = len(logs.lines)
    with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1]))) as client:
        client.sendall(b"POST /v1/deid HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       b"Content-Length: 1000\r\n\r\n{\"text\": \"")  # fmt: skip
        time.sleep(0.3)
    deadline = time.monotonic() + 10
    while not any("POST /v1/deid 499" in line for line in logs.lines[start:]):
        assert time.monotonic() < deadline, logs.lines[start:]
        time.sleep(0.05)
    new = logs.lines[start:]
    assert not any(" ERROR " in line or " 500 " in line for line in new), new
    assert [line for line in new if "POST /v1/deid 499" in line][0].startswith("thunder.service INFO ")


def test_headers_sent_too_slowly_time_out(logs) -> None:
    """Headers a byte at a time hold a connection no longer than the limit; a request in flight past it, and a
    second request on a kept-alive connection, are answered."""
    with running(create_app(Recording(delay=1.0)), header_timeout=0.5) as (url, _):
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
            client.sendall(b"POST /v1/deid HTTP/1.1\r\nHost: x\r\n")
            started = time.monotonic()
            answer = client.recv(1000)
            assert answer.startswith(b"HTTP/1.1 408 ") and client.recv(1000) == b""
            assert time.monotonic() - started < 5
        logs.wait_for("closed a connection whose request headers took longer than 0.5 s")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for _ in range(2):  # each answer takes 1 s, twice the header limit
            connection.request("POST", "/v1/deid", body=b'{"text": "010-1234-5678"}',
                               headers={"Content-Type": "application/json"})  # fmt: skip
            response = connection.getresponse()
            assert (response.status, json.loads(response.read())["text"]) == (200, "A")
            time.sleep(0.2)
        connection.close()
