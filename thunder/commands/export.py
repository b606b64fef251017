"""``thunder export``: a Thunder checkpoint as a Hugging Face model directory (and an ONNX graph of it)."""

from __future__ import annotations

import shutil


def export_command(
    checkpoint: str,
    out: str,
    tokenizer: str | None = None,
    onnx: str | None = None,
    weights: str = "float32",
    sign: str | None = None,
    verify: str | None = None,
    allow_unverified: bool = False,
) -> None:
    """Convert a Thunder checkpoint to a Hugging Face model directory (model, tokenizer, thunder.json).

    Args:
        checkpoint: a ``.ckpt`` file or a sharded checkpoint directory written by TokenClassifier or MaskedLM.
        out: new output directory; load it with ``AutoModelForTokenClassification.from_pretrained(out)``
            or ``thunder deid --model out``.
        tokenizer: tokenizer directory to use instead of the one stored in the checkpoint.
        onnx: also write an ONNX graph of a token classifier for ONNX Runtime (``pip install 'thunder-deid[onnx]'``):
            ``int8`` (linear-layer weights in int8: the fastest on a CPU) or ``fp32``; ``thunder deid|serve|predict
            --model out`` then run it (``--runtime torch`` runs the safetensors weights instead).
        weights: how the safetensors weights are stored: float32, or float16 (half the size; loaded and run in
            float32, the fingerprint and self-test those of the rounded weights).
        sign: sign the export with this private key (PEM, elliptic curve; OpenSSF model-signing, ``pip install
            'thunder-deid[sign]'``): out/model.sig covers every file, and ``--verify`` with the public key refuses
            the export wherever a byte of it changed.
        verify: refuse the checkpoint unless its signature verifies with this public key (PEM; CHECKPOINT.sig
            beside a file, model.sig inside a directory), checked before it is read.
        allow_unverified: export a model that records no fingerprint or self-test answers (stripped, or written by
            an older Thunder); the export says it is unverified, and every command refuses it without this option.
            Never signed. A model that finds none of the self-test identifiers is never exported.
    """
    from thunder.model.inference import PRECISIONS

    if onnx is not None and onnx not in PRECISIONS:
        raise ValueError(f"--onnx must be one of {', '.join(PRECISIONS)}, got {onnx!r}")
    from thunder.model import integrity, signing
    from thunder.model.export import WEIGHT_DTYPES, export_checkpoint

    if weights not in WEIGHT_DTYPES:
        raise ValueError(f"--weights must be one of {', '.join(WEIGHT_DTYPES)}, got {weights!r}")
    from thunder.model.loader import Artefact

    if sign is not None:  # a key that cannot sign is refused before anything is written
        if allow_unverified:
            raise ValueError("--sign signs verified models only: drop --allow_unverified")
        signing.check_private_key(sign)
    with integrity.unverified_allowed(allow_unverified):
        path = export_checkpoint(checkpoint, out, tokenizer, verify=verify, weights=weights)
    print(f"exported {checkpoint} to {path}")
    info = Artefact.open(path).info()
    if info.get("self_test") is not None:
        print(f"the model {integrity.detection_note(info['self_test'])}")
    if info.get("unverified"):
        print(f"the export is UNVERIFIED ({info['unverified']}): commands run it only with --allow_unverified")
    if onnx is not None:
        from thunder.model.export import write_onnx

        graph = write_onnx(path, onnx)
        print(f"wrote the ONNX graph {graph} ({onnx})")
    if sign is not None:  # last: the signature covers every file, thunder.json and the ONNX graph included
        if info.get("self_test") is not None:
            try:
                integrity.check_detection(info["self_test"], path)  # a switched-off model is never signed
            except integrity.IntegrityError:
                shutil.rmtree(path)  # nothing left that looks finished
                raise
        print(f"signed {path}: {signing.sign(path, sign)}")
