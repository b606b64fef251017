"""``thunder fit|validate|test|predict --help`` kept between runs.

LightningCLI builds this help from Lightning's and torch's signatures, and importing them alone takes seconds. The help
of exactly ``thunder COMMAND --help`` (or ``-h``; no config, no other option) is therefore kept in
``$XDG_CACHE_HOME/thunder`` (``~/.cache/thunder``) with a key of everything the text depends on, and printed from there
while the key matches: Thunder's sources (paths, sizes, modification times), the installed distributions and their
versions, Python, the program name, the terminal's width and whether standard output is one, and the environment
variables jsonargparse, Lightning, colours and message translations read. Any other run, and a run whose key differs,
renders the help with LightningCLI and prints it as before; a directory that cannot be read or written is skipped.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, TextIO

from thunder.documents.outputs import write_atomic

PACKAGE = Path(__file__).resolve().parents[1]

# environment variables the help text depends on: jsonargparse's settings (JSONARGPARSE_DEFAULT_ENV shows PL_* values
# as defaults), argparse's colours (Python 3.14) and translated messages
ENVIRONMENT_PREFIXES = ("JSONARGPARSE_", "PL_")
ENVIRONMENT_NAMES = ("NO_COLOR", "FORCE_COLOR", "PYTHON_COLORS", "TERM", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def cache_directory() -> Path:
    """``$XDG_CACHE_HOME/thunder``, or ``~/.cache/thunder`` where that variable is unset or empty."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "thunder"


def help_key(command: str) -> str:
    """A digest of everything the help of ``thunder COMMAND --help`` depends on (see the module's docstring)."""
    from importlib.metadata import distributions

    sources = sorted((str(path.relative_to(PACKAGE)), stat.st_size, stat.st_mtime_ns)
                     for path in PACKAGE.rglob("*.py") for stat in [path.stat()])  # fmt: skip
    facts = {
        "command": command,
        "sources": sources,
        "distributions": sorted(f"{dist.metadata['Name']} {dist.version}" for dist in distributions()),
        "python": sys.version,
        "prog": argparse.ArgumentParser(add_help=False).prog,  # argparse's default: argv[0], `python -m` (3.14)
        "columns": shutil.get_terminal_size().columns,
        "terminal": sys.stdout.isatty(),
        "environment": sorted((name, value) for name, value in os.environ.items()
                              if name.startswith(ENVIRONMENT_PREFIXES) or name in ENVIRONMENT_NAMES),
    }  # fmt: skip
    return hashlib.sha256(json.dumps(facts).encode()).hexdigest()


class _Recording:
    """Standard output that keeps a copy of the text written to it; in all else (``isatty``, ``fileno``, the
    encoding) it is the stream it wraps, so the help is rendered exactly as without it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def print_help(command: str, render: Callable[[], None]) -> None:
    """Print the help of ``thunder COMMAND --help`` and exit with status 0: from the cache while its key matches,
    otherwise by calling ``render`` (LightningCLI, which prints the help and exits so) and keeping what it printed."""
    key = help_key(command)
    path = cache_directory() / f"help-{command}.txt"
    try:
        with open(path, encoding="utf-8", newline="") as stream:
            kept_key, _, kept_help = stream.read().partition("\n")
    except (OSError, UnicodeDecodeError):  # none yet, unreadable or damaged: rendered and written again
        kept_key = kept_help = ""
    if kept_key == key:
        sys.stdout.write(kept_help)
        raise SystemExit(0)  # as LightningCLI ends its help
    recording = _Recording(sys.stdout)
    try:
        with contextlib.redirect_stdout(recording):
            render()
    except SystemExit as exit_:
        if exit_.code in (0, None):
            try:
                write_atomic(path, f"{key}\n{''.join(recording.parts)}")
            except OSError:  # a cache directory that cannot be written: the help is printed all the same
                pass
        raise
