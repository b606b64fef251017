"""Time ``thunder --help`` and every command's ``--help`` as whole processes: the median, fastest and slowest wall
seconds of ``--runs`` runs after one warm-up (``thunder --help`` answers without importing Lightning, torch or
transformers; each command imports only what its options need; the help of fit, validate, test and predict, which
LightningCLI renders, is printed from the user's cache after the warm-up: thunder.commands.help_cache).

    python tools/bench_help.py                      # every command, 5 runs each
    python tools/bench_help.py --runs 9 deid evaluate
    XDG_CACHE_HOME=/dev/null python tools/bench_help.py fit    # no cache: LightningCLI renders the help every run
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from thunder.cli import EXTRA_COMMANDS, TRAINER_COMMANDS


def command_lines(names: list[str]) -> list[list[str]]:
    """``thunder --help`` and, for each command named (all by default), its ``--help`` (each subcommand's)."""
    lines = [[]] if not names else []
    lines += [[name] for name in TRAINER_COMMANDS if not names or name in names]
    for name, target in EXTRA_COMMANDS.items():
        if names and name not in names:
            continue
        subcommands = list(target) if isinstance(target, dict) else [None]
        lines += [[name, *([sub] if sub else [])] for sub in subcommands]
    return [[*line, "--help"] for line in lines]


def wall_seconds(args: list[str], runs: int) -> list[float]:
    """Wall seconds of ``runs`` runs of ``python -m thunder ARGS`` after one warm-up (each must exit 0)."""
    times = []
    for run in range(runs + 1):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "thunder", *args], check=True, stdout=subprocess.DEVNULL)
        if run:
            times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commands", nargs="*", help="commands to time (default: thunder --help and every command)")
    parser.add_argument("--runs", type=int, default=5, help="counted runs of each command line (default 5)")
    options = parser.parse_args()
    print(f"{'command line':<36} {'median s':>9} {'min s':>7} {'max s':>7}")
    for args in command_lines(options.commands):
        times = wall_seconds(args, options.runs)
        line = " ".join(["thunder", *args])
        print(f"{line:<36} {statistics.median(times):>9.2f} {min(times):>7.2f} {max(times):>7.2f}")


if __name__ == "__main__":
    main()
