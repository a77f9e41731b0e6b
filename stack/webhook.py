"""A local Alertmanager webhook receiver: every notification POSTed to it (any
path; the project's routing uses /pager for critical and /ticket for warning)
is appended as one JSON line to a log file and printed on stdout.

    python -m stack.webhook --listen 127.0.0.1:19199 --log .state/webhook/notifications.jsonl

GET /notifications returns everything received so far as a JSON array (the
end-to-end tests read it); GET /-/ready answers 200 once listening.
Each line: {"received_at": RFC3339, "path": "/pager", "receiver": ...,
"status": "firing", "alerts": [{"labels": ..., "annotations": ..., ...}], ...}
(the Alertmanager webhook payload, version 4, plus received_at and path).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MAX_BODY = 8 * 1024 * 1024


class Receiver:
    def __init__(self, log_path: Path, echo=sys.stdout):
        self.log_path = Path(log_path)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.echo = echo
        self.lock = threading.Lock()
        self.received: list[dict] = []

    def record(self, path: str, payload: dict) -> dict:
        entry = {"received_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
                 .replace("+00:00", "Z"), "path": path, **payload}
        line = json.dumps(entry, separators=(",", ":"), sort_keys=True)
        with self.lock:
            self.received.append(entry)
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(line + "\n")
            if self.echo is not None:
                print(line, file=self.echo, flush=True)
        return entry


def make_server(host: str, port: int, receiver: Receiver) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def _reply(self, status: int, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/notifications":
                with receiver.lock:
                    body = json.dumps(receiver.received).encode()
                self._reply(200, body)
            elif self.path in ("/-/ready", "/-/healthy"):
                self._reply(200, b"OK\n", "text/plain")
            else:
                self._reply(404, b'{"error":"POST notifications to any path; GET /notifications"}')

        def do_POST(self):
            try:
                length = int(self.headers.get("Content-Length", "0"))
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY:
                self._reply(400, b'{"error":"missing or too large Content-Length"}')
                return
            raw = self.rfile.read(length)
            try:
                payload = json.loads(raw)
                if not isinstance(payload, dict):
                    raise ValueError("not a JSON object")
            except ValueError as exc:
                self._reply(400, json.dumps({"error": f"body is not a JSON object: {exc}"}).encode())
                return
            receiver.record(self.path, payload)
            self._reply(200, b'{"status":"ok"}')

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        allow_reuse_address = True

    return Server((host, port), Handler)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m stack.webhook", description=__doc__.split("\n\n")[0])
    p.add_argument("--listen", default="127.0.0.1:19199", help="host:port (default 127.0.0.1:19199)")
    p.add_argument("--log", default=".state/webhook/notifications.jsonl", help="JSON Lines file to append to")
    args = p.parse_args(argv)
    host, _, port = args.listen.rpartition(":")
    if not port.isdigit():
        print(f"error: --listen: expected host:port, got {args.listen!r}", file=sys.stderr)
        return 2
    try:
        server = make_server(host or "127.0.0.1", int(port), Receiver(Path(args.log)))
    except OSError as exc:
        print(f"error: cannot listen on {args.listen}: {exc.strerror}", file=sys.stderr)
        return 2

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    print(f"webhook receiver listening on http://{args.listen}, logging to {args.log}", file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
