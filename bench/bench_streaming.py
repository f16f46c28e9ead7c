"""Measure what the streaming transport costs per chunk, against reading the same bytes from a bare socket.

A loopback server answers every request with one prebuilt server-sent-events body: N chunks in the OpenAI form
(``data: {"choices":[{"delta":{"content":"..."}}]}``), then ``data: [DONE]``. Each round reads that body three ways,
in the same run, so the ratios compare like with like on whatever machine runs it:

(a) ``socket``: connect, send a minimal request, ``recv`` until the server closes. No parsing: the floor any
    client pays to move these bytes over loopback.
(a') ``socket+json``: the same, then ``json.loads`` of each event: the floor any client that reads the events
    at all pays (the parse is most of the work per chunk).
(b) ``http+sse``: ``HttpTransport.stream``: ``http.client``, the budgeted socket (deadline and read timeout checked
    before every read), line-by-line event parsing into the candidate, a callback per piece.
(c) ``scripted``: ``ScriptedTransport.stream`` over the same N pieces, no network at all: the candidate and the
    per-chunk probe call alone.

It prints the median time per round and per chunk, (b)/(a), (b)/(a'), and the transport's own cost per chunk
beyond (a'). It is a script, not a test: the numbers depend on
the machine. It talks to 127.0.0.1 only and stops by itself.

Run from the repository root: ``python -m bench.bench_streaming [--chunks 2000] [--rounds 7]``.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from lab.messages import ChatRequest, Message
from lab.transport.http import HttpTransport
from lab.transport.scripted import ScriptedTransport, Stream
from lab.transport.streaming import streaming_request

_KEY = "bench-key-not-secret"
_PIECE = "word "


def _sse_body(chunks: int) -> bytes:
    event = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": _PIECE}}]}
    line = b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n"
    last = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return line * chunks + b"data: " + json.dumps(last).encode() + b"\n\ndata: [DONE]\n\n"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    body = b""


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(self.server.body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


def _bare_socket(port: int) -> Callable[..., int]:
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 2\r\nConnection: close\r\n\r\n{}"
    )

    def read(keep: Callable[[bytes], None] | None = None) -> int:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(request)
            total = 0
            while data := sock.recv(16 * 1024):
                total += len(data)
                if keep is not None:
                    keep(data)
            return total

    return read


def _bare_socket_parsed(port: int) -> Callable[[], int]:
    recv = _bare_socket_bytes(port)

    def read() -> int:
        body = recv()
        return sum(
            len(json.loads(line[6:]).get("choices", ())) for line in body.split(b"\n") if line.startswith(b"data: {")
        )

    return read


def _bare_socket_bytes(port: int) -> Callable[[], bytes]:
    count = _bare_socket(port)
    kept: list[bytes] = []

    def recv() -> bytes:
        kept.clear()
        count(kept.append)
        return b"".join(kept)

    return recv


def _http_stream(url: str, request: ChatRequest) -> Callable[[], int]:
    transport = HttpTransport(url, _KEY, deadline=30)
    pieces = [0]

    def on_delta(piece: str) -> None:
        pieces[0] += 1

    def read() -> int:
        pieces[0] = 0
        reply = transport.stream(request, on_delta=on_delta)
        return len(reply.content or "") + pieces[0]

    return read


def _scripted(chunks: int, request: ChatRequest) -> Callable[[], int]:
    stream = Stream((_PIECE,) * chunks)

    def read() -> int:
        reply = ScriptedTransport([stream]).stream(request, on_delta=lambda piece: None)
        return len(reply.content or "")

    return read


def _median_seconds(read: Callable[[], object], rounds: int) -> float:
    read()  # warm up: imports, the first connection
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        read()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=2000, help="events per stream (default 2000)")
    parser.add_argument("--rounds", type=int, default=7, help="measured rounds per way (default 7)")
    args = parser.parse_args(argv)
    if args.chunks < 1 or args.rounds < 1:
        print("error: --chunks and --rounds must be at least 1", file=sys.stderr)
        return 2
    server = _Server(("127.0.0.1", 0), _Handler)
    server.body = _sse_body(args.chunks)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        request = streaming_request(ChatRequest("m", (Message("user", "q"),)))
        rows = [
            ("socket (recv only)", _median_seconds(_bare_socket(port), args.rounds)),
            ("socket + json.loads per event", _median_seconds(_bare_socket_parsed(port), args.rounds)),
            (
                "http+sse (HttpTransport.stream)",
                _median_seconds(_http_stream(f"http://127.0.0.1:{port}/v1", request), args.rounds),
            ),
            ("scripted (no network)", _median_seconds(_scripted(args.chunks, request), args.rounds)),
        ]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    size = len(server.body)
    print(
        f"{args.chunks} chunks, {size:,} bytes per stream, loopback, median of {args.rounds} rounds"
        f" (Python {sys.version.split()[0]})"
    )
    for name, seconds in rows:
        print(f"  {name:<33} {seconds * 1e3:8.2f} ms/stream  {seconds / args.chunks * 1e6:7.2f} us/chunk")
    baseline, parsed, http = rows[0][1], rows[1][1], rows[2][1]
    print(f"streaming transport / bare socket: {http / baseline:.1f}x")
    print(f"streaming transport / socket + json.loads: {http / parsed:.2f}x")
    print(f"the transport's own cost per chunk beyond the parse: {(http - parsed) / args.chunks * 1e6:.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
