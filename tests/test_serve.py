"""The HTTP service: endpoints (good, malformed, oversized, concurrent), batching, logs free of request text,
graceful shutdown, and ``thunder serve`` as a process with a real (tiny) model."""

from __future__ import annotations

import http.client
import json
import logging
import os
import re
import signal
import socket
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

from thunder.deid import Deidentifier
from thunder.mapping import Mapping, MappingKey, reidentify
from thunder.serve import create_app, running

SECRET_NAME = "홍비밀"
SECRET_PHONE = "010-7777-1234"
SECRET_TEXT = f"피고인 {SECRET_NAME}은 {SECRET_PHONE}로 전화하였고 주민등록번호는 900101-1234568, 끝."
LIMIT = 20_000


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

    def deidentify_batch(self, texts):
        self.batches.append(len(texts))
        self.entered.set()
        time.sleep(self.delay)
        if self.fail:  # like the pipeline's own errors, the message quotes the text
            raise RuntimeError(f"cannot remove {texts[0]!r}")
        return super().deidentify_batch(texts)


@pytest.fixture(scope="module")
def key(tmp_path_factory) -> MappingKey:
    return MappingKey.generate(tmp_path_factory.mktemp("key") / "serve.key")


@pytest.fixture(scope="module")
def service(logs, key):
    deidentifier = Recording(delay=0.05)
    app = create_app(deidentifier, max_request_bytes=LIMIT, max_documents=4, max_batch_size=8, max_wait=0.02, key=key)
    with running(app) as (url, _):
        yield url, deidentifier


def request(url: str, path: str, body=None, raw: bytes | None = None, method: str | None = None):
    data = raw if raw is not None else None if body is None else json.dumps(body).encode("utf-8")
    req = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), dict(error.headers)


def post(url: str, path: str, body=None, raw: bytes | None = None):
    status, data, _ = request(url, path, body, raw)
    return status, data


# ----------------------------------------------------------------------------------------------- endpoints


def test_deid_endpoint(service) -> None:
    url, _ = service
    status, data = post(url, "/v1/deid", {"text": SECRET_TEXT})
    assert status == 200
    assert SECRET_PHONE not in data["text"] and "900101-1234568" not in data["text"]
    assert data["text"] == f"피고인 {SECRET_NAME}은 A로 전화하였고 주민등록번호는 B, 끝."
    first = data["spans"][0]
    assert set(first) == {"start", "end", "text", "label", "category", "tier1", "placeholder", "score", "source"}
    assert SECRET_TEXT[first["start"] : first["end"]] == first["text"] == SECRET_PHONE
    status, data = post(url, "/v1/deid", {"text": SECRET_TEXT, "operator": "tag", "threshold": 0.3})
    assert status == 200 and "[전화번호]" in data["text"]
    assert post(url, "/v1/deid", {"text": ""}) == (200, {"text": "", "spans": []})


@pytest.mark.parametrize(
    "body, reason",
    [
        ({}, "missing field 'text'"),
        ({"text": 5}, "field 'text' must be str, got int"),
        ({"text": "x", "operator": "shred"}, "unknown operator 'shred'"),
        ({"text": "x", "operator": "thunder.operators.MaskOperator"}, "unknown operator"),  # no imports by request
        ({"text": "x", "threshold": 1.5}, "threshold must lie strictly between 0 and 1"),
        ({"text": "x", "threshold": True}, "field 'threshold' must be int or float, got bool"),
        ({"text": "x", "mapping": "yes"}, "field 'mapping' must be bool"),
    ],
)
def test_bad_fields_are_refused_with_a_reason(service, body, reason: str) -> None:
    status, data = post(service[0], "/v1/deid", body)
    assert status == 400 and reason in data["error"]


def test_malformed_json_and_non_utf8_give_400(service) -> None:
    url, _ = service
    status, data = post(url, "/v1/deid", raw='{"text": "홍비밀'.encode())
    assert status == 400 and data["error"].startswith("malformed JSON: Unterminated string") and "line 1" in data["error"]
    status, data = post(url, "/v1/deid", raw=b'{"text": "\xff\xfe"}')
    assert (status, data["error"]) == (400, "request body is not valid UTF-8 (byte 10: invalid start byte)")
    status, data = post(url, "/v1/deid", raw=b"[1, 2]")
    assert (status, data["error"]) == (400, "expected a JSON object, got list")
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
    status, data = post(url, "/v1/deid/batch", {"documents": [{"id": "x"}]})
    assert (status, data["error"]) == (400, "documents[0] must be a string or an object with a string 'text'")


def test_apply_endpoint_reapplies_reviewed_spans(service) -> None:
    url, _ = service
    text = "피고인 홍길동은 피해자를 만났다. 홍길동이 먼저 때렸다."
    status, data = post(url, "/v1/apply", {"text": text, "spans": [{"start": 4, "end": 7, "label": "내국인이름"}]})
    assert status == 200
    assert data["text"] == "피고인 A는 피해자를 만났다. A가 먼저 때렸다."  # particles fixed, other mention propagated
    assert [s["source"] for s in data["spans"]] == ["reviewer", "propagated"]
    status, data = post(url, "/v1/apply", {"text": text, "spans": [{"start": 4, "end": 99, "label": "내국인이름"}]})
    assert status == 400 and "is not a range inside the text" in data["error"]
    status, data = post(url, "/v1/apply", {"text": text, "spans": [{"start": 4, "end": 7, "label": "이름"}]})
    assert (status, data["error"]) == (400, "spans[0]: unknown label '이름' (GET /v1/labels lists them)")
    status, data = post(url, "/v1/apply", {"text": text, "spans": [[4, 7]]})
    assert status == 400 and data["error"] == "spans[0] must be an object with start, end and label"


def test_mapping_from_the_service_restores_the_original(service, key, tmp_path: Path) -> None:
    url, _ = service
    status, data = post(url, "/v1/deid", {"id": "case-1", "text": SECRET_TEXT, "mapping": True})
    assert status == 200 and SECRET_PHONE not in json.dumps(data["mapping"], ensure_ascii=False)
    (tmp_path / "m.jsonl").write_text(json.dumps(data["mapping"]) + "\n", encoding="utf-8")
    record = Mapping(tmp_path / "m.jsonl", key).find(data["text"])
    assert record["doc"] == "case-1" and reidentify(data["text"], record) == SECRET_TEXT
    status, data = post(url, "/v1/deid/batch", {"documents": [SECRET_TEXT, "010-3333-4444"], "mapping": True})
    assert status == 200 and all("mapping" in r for r in data["results"])


def test_mapping_needs_a_server_key(logs) -> None:
    with running(create_app(Deidentifier())) as (url, _):
        status, data = post(url, "/v1/deid", {"text": SECRET_TEXT, "mapping": True})
    assert (status, data["error"]) == (400, "mapping requested, but the server was started without --key-file")


def test_health_labels_and_page(service) -> None:
    url, _ = service
    status, data, _ = request(url, "/health")
    assert status == 200 and data["status"] == "ok" and data["max_request_bytes"] == LIMIT
    status, data, _ = request(url, "/v1/labels")
    assert any(label["name"] == "내국인이름" for label in data["labels"])
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


def test_failures_inside_the_pipeline_are_reported_without_the_text(logs) -> None:
    with running(create_app(Recording(fail=True))) as (url, _):
        status, data = post(url, "/v1/deid", {"text": SECRET_TEXT})
    assert (status, data) == (500, {"error": "internal error while de-identifying (RuntimeError)"})
    assert "de-identification failed: RuntimeError" in logs.text


def test_logs_carry_sizes_and_timings_never_text(service, logs) -> None:
    url, _ = service
    assert post(url, "/v1/deid", {"text": SECRET_TEXT})[0] == 200
    request(url, "/" + urllib.parse.quote(SECRET_NAME))  # an unknown path with text in it
    deadline = time.monotonic() + 10  # the access line is written just after the response
    while not any("GET <other> 404" in line for line in logs.lines) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any("GET <other> 404" in line for line in logs.lines)
    line = next(line for line in reversed(logs.lines) if "POST /v1/deid 200" in line)
    assert re.fullmatch(r"thunder\.serve INFO POST /v1/deid 200 in=\d+B out=\d+B \d+\.\dms", line)
    for secret in (SECRET_NAME, SECRET_PHONE, "900101-1234568", "%ED%99%8D"):  # %ED%99%8D: 홍 in a URL
        assert secret not in logs.text


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_serve_command_with_a_tiny_model(tmp_path: Path) -> None:
    """``thunder serve --model EXPORT`` as its own process: answers, then stops cleanly on SIGTERM."""
    sys.path.insert(0, str(Path(__file__).parent))
    from test_deid import write_tiny_export

    export = write_tiny_export(tmp_path / "export")
    port = free_port()
    command = [sys.executable, "-m", "thunder", "serve", "--model", str(export), "--port", str(port),
               "--key-file", str(tmp_path / "k"), "--max_length", "32", "--stride", "8"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                assert request(url, "/health")[1]["model"] == str(export)
                break
            except (urllib.error.URLError, ConnectionError):
                assert process.poll() is None and time.monotonic() < deadline, "thunder serve did not start"
                time.sleep(0.2)
        status, data = post(url, "/v1/deid", {"text": SECRET_TEXT * 3, "mapping": True})
        assert status == 200 and SECRET_PHONE not in data["text"]
        record = MappingKey.load(tmp_path / "k").open(data["mapping"])
        assert reidentify(data["text"], record) == SECRET_TEXT * 3
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=60)[0]
    assert process.returncode in (0, -signal.SIGTERM), output  # uvicorn re-raises the signal once it has stopped
    assert "POST /v1/deid 200 in=" in output and "Application shutdown complete" in output
    assert SECRET_NAME not in output and SECRET_PHONE not in output
