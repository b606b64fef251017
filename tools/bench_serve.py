"""Load test of the de-identification service (``thunder serve``) on the loopback interface.

Starts the service in its own process on 127.0.0.1 (a free port) once per ``--runtimes`` entry (see
``tools/bench_deid.py``: ``before`` is the pipeline before ``thunder.model.inference``, ``onnx-int8`` the model exported with
``thunder export --onnx int8``), then for each number of concurrent clients sends ``POST /v1/deid`` requests with the
packaged demo judgments (placeholders filled) over keep-alive connections, each client sending its next request as
soon as the last is answered, to each server in turn (a change of load hits them alike). Every level is bounded by
``--requests`` and ``--seconds``, whichever comes first. Prints throughput (requests/s, characters/s, the ratio to the
first runtime at the same level), p50 / p99 latency per level, and the batch sizes the server formed.

    .venv/bin/python tools/bench_serve.py                                 # random 'small' preset (speed only)
    .venv/bin/python tools/bench_serve.py --model runs/small/finetune/checkpoints/last.ckpt --clients 1 8
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))
from bench_deid import RUNTIMES, demo_documents  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_child(args: argparse.Namespace) -> None:
    """The server process: a random preset model (or --model) on one --runtimes entry, the service on 127.0.0.1."""
    import tempfile

    import torch
    from bench_deid import build_runtimes, random_model

    from thunder.model.loader import Artefact
    from thunder.service.app import create_app, serve

    if args.threads:
        torch.set_num_threads(args.threads)
    parts = Artefact.open(args.model).classifier()[:3] if args.model else random_model(args.preset, demo_documents(), 512)
    with tempfile.TemporaryDirectory() as work:
        deidentifier = build_runtimes(args.runtimes, *parts, Path(work), "cpu", args.model)[args.runtimes[0]][0]
        deidentifier.batch_size = args.window_batch
        app = create_app(deidentifier, max_batch_size=args.max_batch_size, max_wait=args.max_wait_ms / 1000)
        serve(app, "127.0.0.1", args.port, graceful_timeout=10)


def wait_ready(port: int, process: subprocess.Popen, timeout: float = 3600) -> None:  # ONNX export included
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/health")
            if connection.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not start")


def batch_counts(port: int) -> tuple[int, int]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/health")
    batches = json.loads(connection.getresponse().read())["batches"]
    return batches["calls"], batches["documents"]


def run_level(port: int, bodies: list[bytes], clients: int, requests: int, seconds: float) -> dict:
    """``clients`` threads, each with its own connection, until ``requests`` answers or ``seconds`` pass."""
    latencies: list[float] = []
    failures: list[int] = []
    lock = threading.Lock()
    issued = [0]
    deadline = time.monotonic() + seconds

    def client() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while time.monotonic() < deadline:
            with lock:
                if issued[0] >= requests:
                    return
                body = bodies[issued[0] % len(bodies)]
                issued[0] += 1
            started = time.perf_counter()
            connection.request("POST", "/v1/deid", body=body, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            elapsed = time.perf_counter() - started
            with lock:
                (latencies if response.status == 200 else failures).append(elapsed if response.status == 200
                                                                          else response.status)  # fmt: skip
        connection.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    latencies.sort()
    done = len(latencies)
    chars = sum(len(json.loads(bodies[i % len(bodies)])["text"]) for i in range(done))
    return {
        "clients": clients, "requests": done, "failed": len(failures), "seconds": wall,
        "rps": done / wall, "chars_per_s": chars / wall,
        "p50_ms": 1000 * statistics.median(latencies) if latencies else float("nan"),
        "p99_ms": 1000 * latencies[min(done - 1, int(0.99 * done))] if latencies else float("nan"),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="export directory or .ckpt (default: a random --preset model)")
    parser.add_argument("--preset", default="small", help="preset of the random model (default: small)")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--requests", type=int, default=200, help="requests per level at most")
    parser.add_argument("--seconds", type=float, default=60, help="seconds per level at most")
    parser.add_argument("--max-batch-size", type=int, default=4, help="documents per model call (server)")
    parser.add_argument("--max-wait-ms", type=float, default=5.0, help="batch collection wait (server)")
    parser.add_argument("--window-batch", type=int, default=8, help="windows per forward pass (server)")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads of each server (torch, ONNX Runtime)")
    parser.add_argument("--runtimes", nargs="+", choices=RUNTIMES, default=["before", "onnx-int8"],
                        help="one server each (tools/bench_deid.py: before = the pipeline before thunder.model.inference)")
    parser.add_argument("--serve-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_child:
        return serve_child(args)

    texts = demo_documents()
    bodies = [json.dumps({"text": text}, ensure_ascii=False).encode("utf-8") for text in texts]
    servers: dict[str, tuple[int, subprocess.Popen]] = {}
    try:
        for runtime in args.runtimes:  # one server per runtime, all started before any level is measured
            port = free_port()
            command = [sys.executable, __file__, "--serve-child", "--port", str(port), "--preset", args.preset,
                       "--max-batch-size", str(args.max_batch_size), "--max-wait-ms", str(args.max_wait_ms),
                       "--window-batch", str(args.window_batch), "--runtimes", runtime]  # fmt: skip
            command += ["--model", args.model] if args.model else []
            command += ["--threads", str(args.threads)] if args.threads else []
            servers[runtime] = port, subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_ready(port, servers[runtime][1])
            run_level(port, bodies, 4, 16, 60)  # warm-up
        print(f"model: {args.model or f'random {args.preset!r} preset (untrained: speed only)'}; "
              f"{len(texts)} demo judgments, mean {sum(map(len, texts)) // len(texts)} characters; "
              f"server max batch {args.max_batch_size} documents, wait {args.max_wait_ms} ms; "
              f"{os.cpu_count()} CPUs, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        print(f"{'runtime':<10} {'clients':>7} {'requests':>8} {'failed':>6} {'req/s':>7} {'ratio':>6} {'chars/s':>9} "
              f"{'p50 ms':>8} {'p99 ms':>8} {'docs/batch':>10}")  # fmt: skip
        for clients in args.clients:  # the runtimes one after another at each level: load changes hit them alike
            first = None
            for runtime, (port, _) in servers.items():
                calls, documents = batch_counts(port)
                r = run_level(port, bodies, clients, args.requests, args.seconds)
                calls, documents = (after - before for after, before in zip(batch_counts(port), (calls, documents)))
                first = first or r["rps"]
                print(f"{runtime:<10} {r['clients']:>7} {r['requests']:>8} {r['failed']:>6} {r['rps']:>7.2f} "
                      f"{r['rps'] / first:>6.2f} {r['chars_per_s']:>9,.0f} {r['p50_ms']:>8.0f} {r['p99_ms']:>8.0f} "
                      f"{documents / max(calls, 1):>10.1f}", flush=True)  # fmt: skip
        print(f"load average at the end {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    finally:
        for _, process in servers.values():
            process.terminate()
            process.wait(timeout=60)


if __name__ == "__main__":
    sys.exit(main())
