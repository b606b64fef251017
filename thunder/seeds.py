"""Seeds and shares that are the same in every process and on every machine (unlike ``hash``): what keeps synthesis,
masking, splits and held-out sets deterministic across workers, ranks and runs."""

from __future__ import annotations

import hashlib


def stable_seed(*parts: object) -> int:
    """A 64-bit seed from ``parts``."""
    data = "\x1f".join(map(str, parts)).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def stable_share(*parts: object) -> float:
    """A number in ``[0, 1)`` from ``parts``: ``stable_share(key) < share`` picks that share of keys."""
    return stable_seed(*parts) / 2**64
