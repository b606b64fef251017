"""A model is what it claims, or it does not run: finite weights, a fingerprint over every part, a known-answer test.

- :func:`check_finite`: every floating-point weight is finite (a NaN or infinite bias switches a classifier off);
- :func:`fingerprint`: one SHA-256 over the weights (names, dtypes, shapes, bytes), the operating point, the label set,
  the tokenizer's fingerprint, the windows the model was trained on (when it stores them), the architecture
  (:func:`architecture`: the configuration keys that change outputs) and the digest of an export's ONNX graph, written
  into checkpoints (``checkpoint["thunder"]["fingerprint"]``) and exports (``thunder.json``) and compared at load: an
  edited threshold, position setting or graph entry, or flipped bytes, are refused;
- :func:`self_test`: the model's token tags and scores on the packaged sentences of
  ``resources/model/self_test.jsonl`` at the stored operating point, recorded beside the fingerprint when the model
  is written; at load they must come out again (:func:`check_self_test`), so a model whose fingerprint was rewritten
  to match edited weights is still refused when it answers otherwise. The runtime that de-identifies answers them
  too (:func:`check_runtime`: an ONNX graph, not only the weights it was made from). ``thunder export`` says how many
  of the sentences' identifiers the model finds (:func:`detection_note`): a model switched off finds none.

A model that records no fingerprint or no self-test answers (stripped, or written by an older Thunder), or an export
written from such a model, is refused unless the caller allows unverified models (:func:`unverified_allowed`:
``--allow_unverified``; then it runs with a warning, and runs record it). ``thunder export`` refuses a model that finds
none of the self-test identifiers (:func:`check_detection`): a switched-off model is never given a fresh fingerprint. A signature (:mod:`thunder.model.signing`: ``thunder export --sign``, ``--verify``) is what
protects against someone who rewrites the fingerprint and the answers too.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from importlib import resources
from typing import Any

import torch
from torch import Tensor

from thunder.model.decoding import OperatingPoint
from thunder.model.inference import Runtime, predict_windows

SELF_TEST_FORMAT = "thunder-self-test/1"
FINGERPRINT_FORMAT = 2  # 2: the architecture and the ONNX graph's digest are fingerprinted too (1: neither; read still)
ARCHITECTURE_KEYS = (  # configuration keys that change what an encoder answers (others: bookkeeping, training only)
    "model_type", "vocab_size", "hidden_size", "embedding_size", "num_hidden_layers", "num_attention_heads",
    "attention_head_size", "intermediate_size", "hidden_act", "max_position_embeddings", "type_vocab_size",
    "layer_norm_eps", "position_embedding_type", "relative_attention", "max_relative_positions", "position_buckets",
    "pos_att_type", "position_biased_input", "share_att_key", "norm_rel_ebd", "num_labels",
)  # fmt: skip
SCORE_TOLERANCE = 0.02  # largest score difference between the recorded and the found answers (GPU TF32 vs CPU)
MAX_LENGTH = 128
MIN_FOUND = 1  # the self-test identifiers a model must find to be exported (one on another domain's taxonomy)
_UNVERIFIED_ALLOWED: ContextVar[bool] = ContextVar("unverified_allowed", default=False)


class IntegrityError(ValueError):
    """A model whose weights, operating point or answers are not those it was written with."""


@contextmanager
def unverified_allowed(allow: bool = True) -> Iterator[None]:
    """Within the block (``allow``), a model that cannot be verified loads with a warning instead of being refused
    (``--allow_unverified``)."""
    token = _UNVERIFIED_ALLOWED.set(allow or _UNVERIFIED_ALLOWED.get())
    try:
        yield
    finally:
        _UNVERIFIED_ALLOWED.reset(token)


def unverified(source: Any, what: str) -> None:
    """Refuse a model that cannot be verified (``what``: why), or warn when unverified models are allowed."""
    if not _UNVERIFIED_ALLOWED.get():
        raise IntegrityError(f"{source}: {what}, so it cannot be checked to be the model it claims; refusing it "
                             "(export it again from its checkpoint, or give --allow_unverified)")  # fmt: skip
    warnings.warn(f"{source}: {what}; running it UNVERIFIED (--allow_unverified)", stacklevel=3)


def check_finite(state: Mapping[str, Tensor], source: Any) -> None:
    """Refuse weights holding NaN or infinite values (one line naming the first such tensor)."""
    for name, tensor in state.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise IntegrityError(f"{source}: the weight {name} holds non-finite values (NaN or infinite); refusing it")


def fingerprint(
    state: Mapping[str, Tensor],
    operating_point: Mapping[str, Any] | None,
    label_set: Mapping[str, Any] | None,
    tokenizer: Mapping[str, Any] | None,
    windows: Mapping[str, Any] | None = None,
    unverified_source: str | None = None,
    architecture: Mapping[str, Any] | None = None,
    graph: str | None = None,
) -> str | None:
    """The SHA-256 over the weights in name order and the other parts as canonical JSON (``windows`` and
    ``unverified_source`` only when the model stores them, ``architecture`` and ``graph``, the ONNX graph's SHA-256 or
    None, only in :data:`FINGERPRINT_FORMAT` 2, so models written before keep theirs); None for sharded weights (a
    training run's local shards: the export computes it)."""
    digest = hashlib.sha256()
    for name in sorted(state):
        tensor = state[name]
        if type(tensor) is not Tensor and not isinstance(tensor, torch.nn.Parameter):
            return None  # DTensor and the like
        data = tensor.detach().to("cpu").contiguous()
        digest.update(json.dumps([name, str(data.dtype), list(data.shape)]).encode())
        digest.update(data.view(torch.uint8).numpy().tobytes() if data.numel() else b"")
    parts = {"operating_point": operating_point, "label_set": label_set, "tokenizer": tokenizer}
    if windows is not None:
        parts["windows"] = windows
    if unverified_source is not None:
        parts["unverified"] = unverified_source
    if architecture is not None:
        parts |= {"architecture": architecture, "graph": graph}
    digest.update(json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode())
    return digest.hexdigest()


def architecture(config: Any) -> dict[str, Any]:
    """The keys of a Hugging Face ``config`` that change what the model answers (:data:`ARCHITECTURE_KEYS`)."""
    values = config.to_dict()
    return {key: values[key] for key in ARCHITECTURE_KEYS if key in values}


def covered(stored: Mapping[str, Any], config: Any) -> dict[str, Any]:
    """The parts a stored fingerprint of format 2 covers beyond the first format's: the architecture of ``config`` and
    the ONNX graph's digest that ``stored`` (``thunder.json``) records (None without a graph)."""
    if stored.get("fingerprint_format") != FINGERPRINT_FORMAT:
        return {}
    graph = stored.get("onnx")
    return {"architecture": architecture(config), "graph": graph.get("sha256") if isinstance(graph, Mapping) else None}


def check_fingerprint(stored: str | None, found: str | None, source: Any) -> None:
    """Refuse an artefact whose parts are not the ones it was written with; warn when it records no fingerprint."""
    if stored is None:
        unverified(source, "no fingerprint recorded (stripped, or written by an older Thunder)")
        return
    if found is not None and stored != found:
        raise IntegrityError(f"{source}: the weights, operating point, label set, tokenizer, architecture or graph are "
                             "not the ones the "
                             f"model was written with (fingerprint {found[:12]}, recorded {stored[:12]}); refusing it")


@cache
def sentences() -> tuple[dict[str, Any], ...]:
    """The packaged self-test sentences: ``{"text", "mentions"}`` (identifiers no recognizer covers)."""
    path = resources.files("thunder") / "resources" / "model" / "self_test.jsonl"
    return tuple(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def self_test(runtime: Runtime, tokenizer: Any, point: OperatingPoint) -> dict[str, Any]:
    """The model's answers on the self-test sentences at ``point``: each token's tag and score (1 - P(O))."""
    texts = [s["text"] for s in sentences()]
    encodings = tokenizer.encode_batch(texts)
    windows = tokenizer.windows_of(encodings, MAX_LENGTH, MAX_LENGTH // 4)
    predictions = predict_windows(runtime, windows, len(texts), len(windows), point, tokenizer.pad)
    return {
        "format": SELF_TEST_FORMAT,
        "operating_point": point.to_dict(),
        "tags": [p.tags for p in predictions],
        "scores": [[round(score, 4) for score in p.scores] for p in predictions],
        "offsets": [[list(o) for o in p.offsets] for p in predictions],
    }


def check_self_test(recorded: Mapping[str, Any] | None, found: Mapping[str, Any], tolerance: float, source: Any) -> None:
    """Refuse a model whose answers differ from the recorded ones: taken at another operating point, a score more
    than ``tolerance`` away, or another verdict (an identifier or not) where the recorded score is not within
    ``tolerance`` of the threshold."""
    if recorded is None:
        unverified(source, "no self-test answers recorded (stripped, or written by an older Thunder)")
        return
    if recorded.get("format") != SELF_TEST_FORMAT or recorded.get("offsets") != found["offsets"]:
        raise IntegrityError(f"{source}: the recorded self-test is not this version's (or the tokenizer changed); "
                             "export the model again")  # fmt: skip
    if recorded.get("operating_point") != found["operating_point"]:
        raise IntegrityError(f"{source}: the self-test was answered at the operating point "
                             f"{recorded.get('operating_point')}, the model claims {found['operating_point']}; "
                             "refusing it")  # fmt: skip
    threshold = found["operating_point"]["threshold"]
    differing = sum(
        abs(old - new) > tolerance or ((tag_old == 0) != (tag_new == 0) and abs(old - threshold) > tolerance)
        for olds, news, tags_old, tags_new in zip(recorded["scores"], found["scores"], recorded["tags"], found["tags"])
        for old, new, tag_old, tag_new in zip(olds, news, tags_old, tags_new)
    )
    if differing:
        total = sum(len(tags) for tags in found["tags"])
        raise IntegrityError(f"{source}: the model answers the self-test differently from when it was written "
                             f"({differing} of {total} tokens): its weights or operating point changed; refusing it")


def check_runtime(runtime: Runtime, tokenizer: Any, point: OperatingPoint, recorded: Mapping[str, Any] | None,
                  tolerance: float, source: Any) -> dict[str, Any]:  # fmt: skip
    """The self-test on the runtime that de-identifies (an ONNX graph), against the answers recorded from the weights
    within ``tolerance`` (its precision's): a graph that answers otherwise is refused; its answers."""
    answers = self_test(runtime, tokenizer, point)
    check_self_test(recorded, answers, tolerance, source)
    return answers


def missed_mentions(answers: Mapping[str, Any]) -> list[str]:
    """The self-test sentences' identifiers the answers do not tag whole (a character outside every tagged token)."""
    missed = []
    for sentence, tags, offsets in zip(sentences(), answers["tags"], answers["offsets"]):
        tagged = {c for tag, (start, end) in zip(tags, offsets) if tag for c in range(start, end)}
        for mention in sentence["mentions"]:
            start = sentence["text"].index(mention)
            if any(c not in tagged for c in range(start, start + len(mention)) if not sentence["text"][c].isspace()):
                missed.append(mention)
    return missed


def detection_note(answers: Mapping[str, Any]) -> str:
    """``finds 9 of the 9 identifiers of the self-test at its operating point`` (and the first it misses)."""
    missed = missed_mentions(answers)
    total = sum(len(s["mentions"]) for s in sentences())
    note = f"finds {total - len(missed)} of the {total} identifiers of the self-test at its operating point"
    return note + (f" (misses {missed[0]!r}: undertrained, or an operating point out of its range?)" if missed else "")


def check_detection(answers: Mapping[str, Any], source: Any) -> None:
    """Refuse a model that finds fewer than :data:`MIN_FOUND` of the self-test identifiers (switched off): it is not
    exported or signed."""
    total = sum(len(s["mentions"]) for s in sentences())
    if total - len(missed_mentions(answers)) < MIN_FOUND:
        raise IntegrityError(f"{source}: the model {detection_note(answers)} (switched off?); refusing to "
                             "export it")  # fmt: skip


def verify(
    state: Mapping[str, Tensor],
    runtime: Runtime,
    tokenizer: Any,
    point: OperatingPoint,
    parts: Sequence[Mapping[str, Any] | None],
    stored: Mapping[str, Any],
    tolerance: float,
    source: Any,
    config: Any,
) -> dict[str, Any]:
    """Every check above for a model being loaded: finite weights, the fingerprint over ``state`` and ``parts``
    (label set, tokenizer fingerprint), the stored windows and what :func:`covered` adds (the architecture of
    ``config``, the graph's digest) against ``stored["fingerprint"]``, the self-test answers
    against ``stored["self_test"]``; the answers found. An export written from an unverified model
    (``stored["unverified"]``) is itself unverified."""
    check_finite(state, source)
    if stored.get("unverified"):
        unverified(source, f"exported from a model that was not verified ({stored['unverified']})")
    label_set, tokenizer_print = parts
    found = fingerprint(state, point.to_dict(), label_set, tokenizer_print, stored.get("windows"), stored.get("unverified"),
                        **covered(stored, config))
    check_fingerprint(stored.get("fingerprint"), found, source)
    answers = self_test(runtime, tokenizer, point)
    check_self_test(stored.get("self_test"), answers, tolerance, source)
    return answers


def record(state: Mapping[str, Tensor], runtime: Runtime, tokenizer: Any, point: OperatingPoint,
           label_set: Mapping[str, Any], tokenizer_print: Mapping[str, Any], config: Any,
           windows: Mapping[str, Any] | None = None, unverified_source: str | None = None) -> dict[str, Any]:  # fmt: skip
    """What a checkpoint or export records: ``{"fingerprint", "fingerprint_format", "self_test"}`` (nothing for
    sharded weights); an ONNX graph added later refingerprints it (:func:`thunder.model.export.write_onnx`)."""
    digest = fingerprint(state, point.to_dict(), label_set, tokenizer_print, windows, unverified_source,
                         architecture(config))  # fmt: skip
    if digest is None:
        return {}
    answers = self_test(runtime, tokenizer, point)
    return {"fingerprint": digest, "fingerprint_format": FINGERPRINT_FORMAT, "self_test": answers}
