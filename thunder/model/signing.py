"""Signed model artefacts: OpenSSF ``model-signing`` with an elliptic-curve key pair, no network.

:func:`sign` hashes every file of an artefact (SHA-256 per file, the ``model-signing`` manifest) and signs the
manifest with a PEM private key (P-256, P-384 or P-521); :func:`verify` checks that signature with the PEM public key
and that every file is still the one signed, before anything of the artefact is read. Where the signature lies
(:func:`signature_path`):

- a directory (an export, a release, a sharded checkpoint): ``model.sig`` inside it, left out of the hashing; every
  other file counts (a changed, added or removed file is refused; symbolic links are refused);
- a single file (a ``.ckpt``): ``FILE.sig`` beside it (``model.ckpt.sig``).

Whatever goes wrong is a :class:`SignatureError` whose message is one line naming the artefact (or the key) and what
is wrong. ``thunder export --sign KEY`` signs what it writes; ``--verify PUB`` on the commands that load a model goes
through :meth:`thunder.model.loader.Artefact.open`. Needs the ``sign`` extra: ``pip install 'thunder-deid[sign]'``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

SIGNATURE = "model.sig"  # a directory's signature, inside it
INSTALL = "pip install 'thunder-deid[sign]'"
_MISMATCH = {  # the files model-signing's message names (the repr of a list: quotes may come escaped)
    "changed": re.compile(r"Hash mismatch for \\*'([^'\\]+)"),
    "added": re.compile(r"Extra files found in model \\*'[^']*\\*': ([^'\"\\\]]+)"),
    "removed": re.compile(r"Missing files in model \\*'[^']*\\*': ([^'\"\\\]]+)"),
}


class SignatureError(ValueError):
    """An artefact that cannot be shown to be the one signed: no signature, another key, a changed file; or a key
    or signature that cannot be used. The message is one line naming the file."""


def signature_path(artefact: str | Path) -> Path:
    """Where the signature of ``artefact`` lies: ``model.sig`` inside a directory, ``FILE.sig`` beside a file."""
    artefact = Path(artefact)
    return artefact / SIGNATURE if artefact.is_dir() else artefact.with_name(artefact.name + ".sig")


def _library(artefact: Path, doing: str) -> Any:
    try:
        import model_signing.hashing
        import model_signing.signing
        import model_signing.verifying
    except ImportError as error:  # model-signing 1.1 imports pyOpenSSL without requiring it: the extra names both
        raise SignatureError(f"{doing} {artefact} needs model-signing ({error}): {INSTALL}") from None
    return model_signing


def _hashing(library: Any, artefact: Path) -> Any:
    """Every file of the artefact but its own signature (git files too: nothing is left out unsaid)."""
    ignored = [SIGNATURE] if artefact.is_dir() else []
    return library.hashing.Config().set_ignored_paths(paths=ignored, ignore_git_paths=False)


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def _signer(library: Any, private_key: Path) -> Any:
    try:
        return library.signing.Config().use_elliptic_key_signer(private_key=private_key)
    except OSError as error:
        raise SignatureError(f"{private_key}: cannot read the private key ({error.strerror or error})") from None
    except Exception as error:  # noqa: BLE001 - not PEM, encrypted, not an elliptic-curve key, an unsupported curve
        raise SignatureError(f"{private_key}: not an unencrypted PEM elliptic-curve private key (P-256, P-384 or "
                             f"P-521; {_one_line(error)})") from None  # fmt: skip


def check_private_key(private_key: str | Path) -> None:
    """Refuse a private key :func:`sign` could not use (before an artefact is written to be signed with it)."""
    private_key = Path(private_key)
    _signer(_library(private_key, "signing with"), private_key)


def sign(artefact: str | Path, private_key: str | Path) -> Path:
    """Sign ``artefact`` (a directory or a file) with the PEM elliptic-curve ``private_key``; the signature's path
    (:func:`signature_path`, written over an older signature)."""
    artefact, private_key = Path(artefact), Path(private_key)
    if not artefact.exists():
        raise SignatureError(f"{artefact}: nothing to sign there")
    library = _library(artefact, "signing")
    target = signature_path(artefact)
    try:
        _signer(library, private_key).set_hashing_config(_hashing(library, artefact)).sign(artefact, target)
    except SignatureError:
        raise
    except Exception as error:  # noqa: BLE001 - a symbolic link in the directory, an unreadable file
        raise SignatureError(f"{artefact}: cannot be signed ({_one_line(error)})") from None
    return target


def verify(artefact: str | Path, public_key: str | Path) -> Path:
    """Check that ``artefact`` is, file for file, what the key pair of ``public_key`` (PEM) signed; its signature's
    path, or :class:`SignatureError` (no signature, another key, a changed, added or removed file)."""
    artefact, public_key = Path(artefact), Path(public_key)
    if not artefact.exists():
        raise SignatureError(f"{artefact}: model not found")
    library = _library(artefact, "verifying")
    signature = signature_path(artefact)
    if not signature.is_file():
        raise SignatureError(f"{artefact}: not signed (no {signature}; sign it with thunder export --sign KEY)")
    try:
        verifier = library.verifying.Config().use_elliptic_key_verifier(public_key=public_key)
    except OSError as error:
        raise SignatureError(f"{public_key}: cannot read the public key ({error.strerror or error})") from None
    except Exception as error:  # noqa: BLE001 - not PEM, a private key, not an elliptic-curve key
        raise SignatureError(f"{public_key}: not a PEM elliptic-curve public key (P-256, P-384 or P-521; "
                             f"{_one_line(error)})") from None  # fmt: skip
    try:
        verifier.set_hashing_config(_hashing(library, artefact)).verify(artefact, signature)
    except Exception as error:  # noqa: BLE001 - fail closed: whatever the library raises, the artefact is refused
        raise SignatureError(_refusal(artefact, signature, public_key, error)) from None
    return signature


def _refusal(artefact: Path, signature: Path, public_key: Path, error: Exception) -> str:
    """The one line saying why ``model-signing`` refused ``artefact``."""
    text = str(error)
    if type(error).__name__ == "InvalidSignature":
        return f"{artefact}: the signature {signature} does not verify with {public_key} (altered signature?)"
    if text.startswith("Key mismatch"):
        return f"{artefact}: signed with another key than {public_key}"
    if text.startswith("Signature mismatch"):
        found = []
        for what, pattern in _MISMATCH.items():
            names = sorted({n.strip() for m in pattern.findall(text) for n in m.split(",")} - {"", "."})
            if names:
                found.append(f"{what}: {', '.join(names)}")
        return f"{artefact}: does not match its signature ({'; '.join(found) or 'changed since it was signed'})"
    return f"{artefact}: the signature {signature} cannot be checked ({_one_line(error)})"
