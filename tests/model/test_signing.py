"""Signed artefacts (``thunder export --sign``, ``--verify``; :mod:`thunder.model.signing`): a model that is not the one
signed, file for file, is refused with one line naming it, before anything of it is read."""

from __future__ import annotations

import base64
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from helpers import RepeatedBatch, token_batch, trainer, write_keys, write_tiny_export

from thunder.cli import main
from thunder.deid.pipeline import Deidentifier
from thunder.model import signing
from thunder.model.loader import Artefact
from thunder.model.signing import SignatureError

pytest.importorskip("model_signing.signing", reason="needs the sign extra: pip install 'thunder-deid[sign]'")
pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> tuple[Path, Path]:
    return write_keys(tmp_path_factory.mktemp("keys"))


@pytest.fixture(scope="module")
def signed(tmp_path_factory, keys) -> Path:
    """A tiny export signed with ``keys``."""
    export = write_tiny_export(tmp_path_factory.mktemp("signed") / "export")
    assert signing.sign(export, keys[0]) == export / signing.SIGNATURE
    return export


def _copy(export: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(export, tmp_path / export.name))


def refused(call: Callable[[], object], *words: str) -> str:
    """The message of the SignatureError ``call`` raises: one line, holding each of ``words``."""
    with pytest.raises(SignatureError) as error:
        call()
    message = str(error.value)
    assert "\n" not in message and all(word in message for word in words), message
    return message


def test_a_signed_export_verifies_and_loads(signed: Path, keys: tuple[Path, Path]) -> None:
    assert signing.verify(signed, keys[1]) == signed / "model.sig"
    loaded = Artefact.open(signed, verify=keys[1]).classifier()
    assert loaded.self_test is not None
    deidentifier = Deidentifier.from_pretrained(signed, verify=keys[1])
    assert deidentifier.model is not None


def _flip_byte(export: Path) -> None:
    data = bytearray((export / "model.safetensors").read_bytes())
    data[-4000] ^= 0x01
    (export / "model.safetensors").write_bytes(bytes(data))


def _edit_threshold(export: Path) -> None:
    info = json.loads((export / "thunder.json").read_text(encoding="utf-8"))
    info["operating_point"] = {"threshold": 0.999, "grow_threshold": 0.1}
    (export / "thunder.json").write_text(json.dumps(info), encoding="utf-8")


def _alter_signed_manifest(export: Path) -> None:
    """The signed statement itself rewritten to describe edited files (the DSSE signature no longer fits)."""
    bundle = json.loads((export / "model.sig").read_text(encoding="utf-8"))
    statement = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
    statement["predicate"]["resources"][0]["digest"] = "0" * 64
    bundle["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    (export / "model.sig").write_text(json.dumps(bundle), encoding="utf-8")


TAMPERING: dict[str, tuple[Callable[[Path], object], str]] = {
    "one flipped byte in the weights": (_flip_byte, "does not match its signature (changed: model.safetensors)"),
    "an edited threshold": (_edit_threshold, "does not match its signature (changed: thunder.json)"),
    "an added file": (lambda e: (e / "notes.txt").write_text("x"), "(added: notes.txt)"),
    "a removed file": (lambda e: (e / "config.json").unlink(), "(removed: config.json)"),
    "no signature": (lambda e: (e / "model.sig").unlink(), "not signed (no "),
    "an altered signature": (_alter_signed_manifest, "does not verify with"),
    "a signature that is not one": (lambda e: (e / "model.sig").write_text("{}"), "cannot be checked"),
    "a symbolic link": (lambda e: (e / "vocab.link").symlink_to(e / "config.json"), "symlink"),
}


@pytest.mark.parametrize("case", list(TAMPERING))
def test_a_changed_export_is_refused(signed: Path, keys: tuple[Path, Path], tmp_path: Path, case: str) -> None:
    export = _copy(signed, tmp_path)
    signing.verify(export, keys[1])  # the copy verifies before it is changed
    tamper, message = TAMPERING[case]
    tamper(export)
    refused(lambda: signing.verify(export, keys[1]), str(export), message)
    refused(lambda: Artefact.open(export, verify=keys[1]), str(export), message)


def test_another_key_and_bad_keys_are_refused(signed: Path, tmp_path: Path, keys: tuple[Path, Path]) -> None:
    _, other = write_keys(tmp_path, "other")
    refused(lambda: signing.verify(signed, other), str(signed), f"signed with another key than {other}")
    _, p384 = write_keys(tmp_path, "p384", ec.SECP384R1())
    refused(lambda: signing.verify(signed, p384), "signed with another key")
    refused(lambda: signing.verify(signed, tmp_path / "absent.pub"), "absent.pub: cannot read the public key")
    refused(lambda: signing.verify(signed, keys[0]), f"{keys[0]}: not a PEM elliptic-curve public key")
    refused(lambda: signing.check_private_key(keys[1]), f"{keys[1]}: not an unencrypted PEM elliptic-curve private")
    refused(lambda: signing.sign(signed, tmp_path / "absent.pem"), "absent.pem: cannot read the private key")
    refused(lambda: Deidentifier.from_pretrained(signed, verify=other), "signed with another key")


def test_a_single_file_is_signed_beside_it(tmp_path: Path, keys: tuple[Path, Path]) -> None:
    checkpoint = tmp_path / "model.ckpt"
    checkpoint.write_bytes(bytes(range(256)) * 64)
    assert signing.sign(checkpoint, keys[0]) == tmp_path / "model.ckpt.sig"
    signing.verify(checkpoint, keys[1])
    data = bytearray(checkpoint.read_bytes())
    data[100] ^= 0x01
    checkpoint.write_bytes(bytes(data))
    refused(lambda: signing.verify(checkpoint, keys[1]), f"{checkpoint}: does not match its signature (changed")
    (tmp_path / "model.ckpt.sig").unlink()
    refused(lambda: Artefact.open(checkpoint, verify=keys[1]), f"{checkpoint}: not signed (no {checkpoint}.sig")


def test_without_model_signing_the_message_says_what_to_install(signed, keys, monkeypatch) -> None:
    for name in ("model_signing", "model_signing.signing", "model_signing.verifying"):
        monkeypatch.setitem(sys.modules, name, None)
    refused(lambda: signing.verify(signed, keys[1]), str(signed), "pip install 'thunder-deid[sign]'")
    refused(lambda: signing.sign(signed, keys[0]), "pip install 'thunder-deid[sign]'")


# ----------------------------------------------------------------------------------------------- commands


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory, tokenizer, label_set) -> Path:
    from thunder.model.modules import TokenClassifier

    tmp = tmp_path_factory.mktemp("checkpoint")
    fit = trainer(tmp, 1)
    fit.fit(TokenClassifier(backbone="tiny", lr=1e-3),
            datamodule=RepeatedBatch(token_batch(tokenizer, label_set), tokenizer, label_set))  # fmt: skip
    fit.save_checkpoint(tmp / "model.ckpt")
    return tmp / "model.ckpt"


def command_error(args: list[str]) -> str:
    """The one line a ``thunder`` command ends with (it must end with one)."""
    with pytest.raises(SystemExit) as exit:
        main(args)
    assert isinstance(exit.value.code, str) and "\n" not in exit.value.code, exit.value.code
    return exit.value.code


def test_export_signs_what_it_wrote(checkpoint: Path, keys: tuple[Path, Path], tmp_path: Path, capsys) -> None:
    out = tmp_path / "export"
    main(["export", "--checkpoint", str(checkpoint), "--out", str(out), "--sign", str(keys[0])])
    assert f"signed {out}: {out / 'model.sig'}" in capsys.readouterr().out
    signing.verify(out, keys[1])
    main(["deid", "--model", str(out), "--verify", str(keys[1]), "--out", str(tmp_path / "deid"),
          str(_text(tmp_path))])  # fmt: skip
    assert (tmp_path / "deid" / "a.txt").is_file()
    _edit_threshold(out)
    error = command_error(["deid", "--model", str(out), "--verify", str(keys[1]), str(_text(tmp_path))])
    assert error == f"thunder deid: error: {out}: does not match its signature (changed: thunder.json)"


def test_export_refuses_a_bad_key_and_an_unsigned_source_before_writing(checkpoint, keys, tmp_path) -> None:
    out = tmp_path / "export"
    error = command_error(["export", "--checkpoint", str(checkpoint), "--out", str(out), "--sign", str(keys[1])])
    assert error.startswith(f"thunder export: error: {keys[1]}: not an unencrypted PEM") and not out.exists()
    error = command_error(["export", "--checkpoint", str(checkpoint), "--out", str(out), "--verify", str(keys[1])])
    assert error == (f"thunder export: error: {checkpoint}: not signed (no {checkpoint}.sig; sign it with thunder "
                     "export --sign KEY)") and not out.exists()  # fmt: skip
    signed = tmp_path / "model.ckpt"
    shutil.copy(checkpoint, signed)
    signing.sign(signed, keys[0])
    main(["export", "--checkpoint", str(signed), "--out", str(out), "--verify", str(keys[1])])
    assert (out / "thunder.json").is_file() and not (out / "model.sig").exists()  # verified; not signed unless asked


def test_verify_needs_a_model(keys: tuple[Path, Path], tmp_path: Path) -> None:
    error = command_error(["deid", "--recognizers_only", "--verify", str(keys[1]), str(_text(tmp_path))])
    assert error == "thunder deid: error: --verify checks the signature of a model; --recognizers_only runs none"


def _text(tmp_path: Path) -> Path:
    source = tmp_path / "in" / "a.txt"
    source.parent.mkdir(exist_ok=True)
    source.write_text("피고인 홍길동은 010-1234-5678로 연락하였다.\n", encoding="utf-8")
    return source
