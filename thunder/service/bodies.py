"""The HTTP service's request and response bodies: pydantic models (strict, no NaN) that validate what clients send
and describe it in ``/openapi.json``, the body reader (size limit, UTF-8, one-line reasons that never quote the
request's text) and the labels a reviewed span may carry."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any, Literal, TypeVar

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from starlette.requests import ClientDisconnect

from thunder.deid.operators import OPERATORS
from thunder.deid.pipeline import Deidentifier, DeidResult, DetectedSpan
from thunder.deid.recognizers.registry import ScoredSpan
from thunder.deid.triage import PossibleMiss, TriagedResult

DRAIN_BYTES = 64 * 2**20  # an oversized request body up to this size is read and dropped before the 413
Body = TypeVar("Body", bound=BaseModel)
OperatorName = Literal[tuple(sorted(OPERATORS))]


class RequestError(Exception):
    """A request refused with ``status`` and a reason that never quotes the request's text."""

    def __init__(self, status: int, reason: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.headers = status, reason, headers


class _Body(BaseModel):
    model_config = ConfigDict(strict=True, allow_inf_nan=False)  # no "1" for 1, no true for 1.0, no NaN


class Replacement(_Body):
    operator: OperatorName | None = Field(None, description="one operator for every entity")
    mapping: bool = Field(False, description="add the sealed entity table (the server needs --key_file)")


class Options(Replacement):
    threshold: float | None = Field(None, gt=0, lt=1, description="identifier when 1 - P(O) exceeds it")


class Upload(_Body):
    """A judgment as courts write it, sent with a request and answered written back in its own format."""

    document: str | None = Field(
        None, description="a DOCX, HWPX or PDF file, base64; answered with the de-identified file (document, base64) "
        "and its name (filename); offsets are those of the text its reader extracts"
    )
    filename: str | None = Field(None, max_length=255, description="the document's name: its suffix names its format")
    out_format: Literal["docx", "hwpx", "text"] | None = Field(
        None, description="what the document is written as (default: its own format; a PDF as text)"
    )

    @model_validator(mode="after")
    def _named(self) -> "Upload":
        if self.document is not None and not self.filename:
            raise ValueError("a document needs its filename (its suffix names its format)")
        return self


class DeidRequest(Options, Upload):
    text: str | None = Field(None, description="the text to de-identify (or give a document)")
    id: str = Field("request", description="the document's name in the mapping record")

    @model_validator(mode="after")
    def _text_or_document(self) -> "DeidRequest":
        if (self.text is None) == (self.document is None):
            raise ValueError("give text or document (base64), one of the two")
        return self


class Document(_Body):
    id: str | None = None
    text: str

    @model_validator(mode="before")
    @classmethod
    def _plain_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"text": value}
        if not isinstance(value, dict):
            raise ValueError("a document is a string or an object with a string 'text'")
        return value


class BatchRequest(Options):
    documents: list[Document] = Field(description='texts, or {"id", "text"} objects (ids default to positions)')


class ReviewedSpan(_Body):
    start: int = Field(ge=0, description="code point offset, as in Python")
    end: int
    label: str = Field(description="a taxonomy label or category, or an entity type of the model (GET /v1/labels)")
    score: float = 1.0
    source: str = "reviewer"
    origin: tuple[int, int] | None = Field(
        None, description="a propagated span: the [start, end) of the span whose text it repeats, as /v1/deid answers"
    )


class KeptLetter(_Body):
    text: str = Field(description="an entity's text (whitespace aside, as GET /v1/deid grouped it)")
    letter: str = Field(pattern=r"^[A-Z]{1,4}$", description="the placeholder letter it keeps")


class RejectedRange(_Body):
    start: int = Field(ge=0)
    end: int = Field(ge=0)


class ApplyRequest(Replacement, Upload):
    text: str = Field(description="the text the spans are in; with a document, the text its reader extracts")
    spans: list[ReviewedSpan] = Field(description="exactly the spans to replace (the review page's re-apply)")
    id: str = "request"
    letters: list[KeptLetter] = Field(
        [], description="the letters the review shows: each entity keeps its letter, a new one takes the next free "
        "letter (empty: letters in order of appearance)"
    )
    rejected: list[RejectedRange] = Field(
        [], description="occurrences the reviewer rejected: kept as written, whatever is replaced elsewhere"
    )


class DeidAnswer(BaseModel):
    text: str
    spans: list[DetectedSpan]
    risk: float | None = Field(
        None, description="chance that an identifier was left in, by the triage rule; null when nothing can judge it"
    )
    risk_reason: str | None = Field(None, description="why risk is null (the server runs without a model)")
    unmarked_risk: float | None = Field(
        None, description="the part of risk no suggestion carries: the risk once every suggestion is decided (the "
        "review page recomputes the risk from it and the undecided suggestions' scores)"
    )
    suggestions: list[PossibleMiss] | None = Field(
        None, description="possible misses: places left in that may be identifiers (not replaced; source possible_miss)"
    )
    mapping: dict | None = Field(None, description="present when asked for: one line of a mapping file")


class DocumentAnswer(DeidAnswer):
    document: str | None = Field(None, description="the de-identified document, base64 (when a document was sent)")
    filename: str | None = Field(None, description="the de-identified document's name (its format's suffix)")
    extracted: str | None = Field(
        None, description="POST /v1/deid with a document: the text its reader extracted, which the offsets count in "
        "(what /v1/apply takes back as text with the document)"
    )


class BatchResult(DeidAnswer):
    id: str


class BatchAnswer(BaseModel):
    results: list[BatchResult]


class ErrorAnswer(BaseModel):
    error: str = Field(description="the reason; it never quotes the request's text")


REQUESTS = (DeidRequest, BatchRequest, ApplyRequest)
_FIELDS = {name for model in (*REQUESTS, Document, ReviewedSpan, KeptLetter, RejectedRange)
           for name in model.model_fields}  # fmt: skip


def _location(parts: tuple) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in parts).lstrip(".")


def reason(error: ValidationError) -> str:
    """The first problem of a body, e.g. ``spans[0].label: Field required`` (pydantic never quotes the input)."""
    first = error.errors(include_url=False, include_input=False, include_context=False)[0]
    if first["type"] == "json_invalid":
        return f"malformed JSON: {first['msg'].removeprefix('Invalid JSON: ')}"
    return f"{_location(first['loc']) or 'request body'}: {first['msg']}"


async def read_body(request: Request, limit: int, model: type[Body]) -> Body:
    """The request's body as ``model``; 415 unless it is sent as JSON (a form or text a browser posts without asking
    first is not), 413 past ``limit`` bytes, 400 with a reason for anything malformed (a key twice in one object
    too), 499 when the client hangs up while sending it."""
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media != "application/json":
        got = f"got {media[:80]!r}" if media else "none given"
        raise RequestError(415, f"the body must be sent as Content-Type: application/json ({got})")
    too_large = RequestError(413, f"request body larger than the limit of {limit} bytes")
    declared = request.headers.get("content-length")
    if declared is not None and not declared.isdigit():
        raise RequestError(400, "bad Content-Length header")
    if declared is not None and int(declared) > DRAIN_BYTES:
        raise too_large  # answered at once; the connection closes
    body, seen = bytearray(), 0
    try:
        async for chunk in request.stream():  # an oversized body is read to its end (up to DRAIN_BYTES) and dropped,
            seen += len(chunk)  # so that the client, still sending, receives the 413
            if seen > DRAIN_BYTES:
                raise too_large
            if seen <= limit:
                body += chunk
    except ClientDisconnect:  # a client's choice, not the server's error
        raise RequestError(499, "the client closed the connection while sending the body") from None
    if seen > limit:
        raise too_large
    try:
        text = bytes(body).decode("utf-8")
    except UnicodeDecodeError as error:
        raise RequestError(400, f"request body is not valid UTF-8 (byte {error.start}: {error.reason})") from None
    try:
        parsed = model.model_validate_json(text)  # lone surrogates, NaN, deep nesting: refused here
    except ValidationError as error:
        raise RequestError(400, reason(error)) from None
    json.loads(text, object_pairs_hook=_unique_keys)  # pydantic keeps the last of two equal keys without a word
    return parsed


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict; a key twice is a 400 (naming it when it is a field of the API, never text)."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            name = repr(key) if key in _FIELDS else "a key"
            raise RequestError(400, f"malformed JSON: {name} appears twice in one object")
        seen.add(key)
    return dict(pairs)


def span_labels(deidentifier: Deidentifier) -> dict[str, tuple[str | None, str | None]]:
    """Every label a span may carry, with its category and tier 1: the taxonomy's labels and categories, the
    model's entity types (a category- or binary-level model emits those) and the recognizers' labels; so
    whatever ``/v1/deid`` answers, ``/v1/apply`` takes back."""
    taxonomy = deidentifier.taxonomy
    known = {name: (label.category, label.tier1) for name, label in taxonomy.labels.items()}
    for category in taxonomy.categories:
        known.setdefault(category, (category, taxonomy.category_tier1(category)))
    label_set = deidentifier.label_set
    for entity_type in label_set.types if label_set is not None else ():
        info = label_set.describe(entity_type)
        known.setdefault(info.label or entity_type, (info.category, info.tier1))
    for recognizer in deidentifier.recognizers:
        known.setdefault(recognizer.label, (getattr(recognizer, "category", None), getattr(recognizer, "tier1", None)))
    return known


def reviewed_spans(body: ApplyRequest, known: dict[str, tuple[str | None, str | None]]) -> list[ScoredSpan]:
    spans = []
    for i, span in enumerate(body.spans):
        if span.label not in known:
            raise RequestError(400, f"spans[{i}]: unknown label {span.label!r} (GET /v1/labels lists them)")
        if not span.start < span.end <= len(body.text):
            raise RequestError(
                400, f"spans[{i}] [{span.start}, {span.end}) is not a range inside the text ({len(body.text)} chars)"
            )
        if span.origin is not None and not 0 <= span.origin[0] < span.origin[1] <= len(body.text):
            raise RequestError(
                400, f"spans[{i}].origin {list(span.origin)} is not a range inside the text ({len(body.text)} chars)"
            )
        spans.append(ScoredSpan(span.start, span.end, span.label, span.score, span.source, *known[span.label],
                                origin=span.origin))  # fmt: skip
    for i, kept in enumerate(body.rejected):
        if not kept.start < kept.end <= len(body.text):
            raise RequestError(
                400, f"rejected[{i}] [{kept.start}, {kept.end}) is not a range inside the text ({len(body.text)} chars)"
            )
        if any(s.start < kept.end and kept.start < s.end for s in spans):
            raise RequestError(400, f"rejected[{i}] [{kept.start}, {kept.end}) overlaps a span to replace")
    return spans


def result_json(result: DeidResult) -> dict:
    answer = {"text": result.text, "spans": [asdict(span) for span in result.spans]}
    if isinstance(result, TriagedResult):
        answer.update(risk=result.risk, unmarked_risk=result.unmarked_risk,
                      suggestions=[asdict(miss) for miss in result.suggestions])  # fmt: skip
        if result.risk_reason:
            answer.update(risk=None, unmarked_risk=None, risk_reason=result.risk_reason)
    return answer
