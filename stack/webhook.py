"""A local Alertmanager webhook receiver: every notification POSTed to it (any
path; the project's routing uses /pager for critical and /ticket for warning)
is appended as one JSON line to a log file and printed on stdout.

    python -m stack.webhook --listen 127.0.0.1:19199 --log .state/webhook/notifications.jsonl

GET /notifications returns everything received so far as a JSON array (the
end-to-end tests read it), GET /pager (any receiver path) what arrived there;
GET /-/ready answers 200 once listening.

GET /docs/<path>.md serves the repository's docs/ (or --docs DIR) as HTML: the alert
pack's runbook_url annotations point at /docs/runbooks/<Alert>.md here by default
(mixin/config.py), so a notification's runbook link opens the runbook out of the box,
and its links to docs/thresholds.md#<id> open the field-notes reference.
Each line: {"received_at": RFC3339, "path": "/pager", "receiver": ...,
"status": "firing", "alerts": [{"labels": ..., "annotations": ..., ...}], ...}
(the Alertmanager webhook payload, version 4, plus received_at and path).
"""
from __future__ import annotations

import argparse
import datetime as dt
import html
import json
import re
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

MAX_BODY = 8 * 1024 * 1024
DOCS = Path(__file__).resolve().parent.parent / "docs"
# where the shipped rules' runbook_url annotations point (mixin/config.py's default base)
DEFAULT_BASE = "http://127.0.0.1:19199/"


def local_runbook_rules(source_dir: Path, dest_dir: Path, webhook_url: str, names) -> bool:
    """Copies of the rule files `names` whose runbook links point at this receiver's webhook_url
    (e.g. `make run` with --webhook-port) instead of the default 127.0.0.1:19199; only the
    annotation lines that use the default base change (a site pack's own URLs stay). False,
    and nothing written, when webhook_url is the default."""
    base = webhook_url.rstrip("/") + "/"
    if base == DEFAULT_BASE:
        return False
    dest_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        text = (Path(source_dir) / name).read_text(encoding="utf-8")
        text = re.sub(r"^(\s*runbook_url: )" + re.escape(DEFAULT_BASE), lambda m: m.group(1) + base, text, flags=re.M)
        (dest_dir / name).write_text(text, encoding="utf-8")
    return True


# ---------------------------------------------------------------- docs as HTML
def _inline(text: str) -> str:
    """Escape, then the inline Markdown the docs use: `code`, [text](url), **bold**, *em*."""
    out, pos = [], 0
    for m in re.finditer(r"`([^`]+)`", text):
        out.append(_links(text[pos:m.start()]))
        out.append(f"<code>{html.escape(m.group(1))}</code>")
        pos = m.end()
    out.append(_links(text[pos:]))
    return "".join(out)


def _links(text: str) -> str:
    text = html.escape(text, quote=False)
    text = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)",
                  lambda m: f'<a href="{html.escape(m.group(2))}">{m.group(1)}</a>', text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)
    text = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"<em>\1</em>", text)
    return re.sub(r"&lt;br&gt;", "<br>", text)


_ANCHOR = re.compile(r'^<a id="([A-Za-z0-9_-]+)"></a>$')


def render_markdown(text: str, title: str) -> str:
    """The Markdown subset of docs/ (headings, paragraphs, lists, code blocks, tables,
    anchors) as one HTML page; everything else is escaped text."""
    body: list[str] = []
    para: list[str] = []
    lines = text.splitlines()
    i = 0

    def flush():
        if para:
            body.append("<p>" + _inline(" ".join(para)) + "</p>")
            para.clear()

    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            body.append("<pre><code>" + html.escape("\n".join(lines[i + 1:j])) + "</code></pre>")
            i = j + 1
            continue
        m = re.match(r"^(#{1,6}) (.*)$", line)
        if m:
            flush()
            n = len(m.group(1))
            body.append(f"<h{n}>{_inline(m.group(2))}</h{n}>")
        elif _ANCHOR.match(line.strip()):
            flush()
            body.append(f'<a id="{_ANCHOR.match(line.strip()).group(1)}"></a>')
        elif line.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(lines[i])
                i += 1
            cells = [[c.strip() for c in re.split(r"(?<!\\)\|", r.strip()[1:-1])] for r in rows]
            head, rest = cells[0], [c for c in cells[1:] if not all(re.fullmatch(r":?-+:?", x) for x in c)]
            anchor = re.compile(r'<a id="([A-Za-z0-9_-]+)"></a>')

            def cell(c: str) -> str:
                ids = anchor.findall(c)
                return "".join(f'<a id="{a}"></a>' for a in ids) + _inline(anchor.sub("", c))
            body.append("<table><tr>" + "".join(f"<th>{cell(c)}</th>" for c in head) + "</tr>"
                        + "".join("<tr>" + "".join(f"<td>{cell(c)}</td>" for c in r) + "</tr>" for r in rest)
                        + "</table>")
            continue
        elif re.match(r"^\s*[-*] ", line):
            flush()
            items = []
            while i < len(lines) and (re.match(r"^\s*[-*] ", lines[i]) or
                                      (items and lines[i].startswith("  ") and lines[i].strip())):
                if re.match(r"^\s*[-*] ", lines[i]):
                    items.append(re.sub(r"^\s*[-*] ", "", lines[i]))
                else:
                    items[-1] += " " + lines[i].strip()
                i += 1
            body.append("<ul>" + "".join(f"<li>{_inline(x)}</li>" for x in items) + "</ul>")
            continue
        elif not line.strip():
            flush()
        elif not line.lstrip().startswith("<!--"):
            para.append(line.strip())
        i += 1
    flush()
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + html.escape(title) + "</title>"
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}"
            "code,pre{background:#f4f4f4}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
            "padding:2px 6px;vertical-align:top}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def docs_page(docs: Path, url_path: str) -> tuple[int, str]:
    """(status, HTML) for GET /docs/<path>: a rendered .md file, or a listing of a folder."""
    rel = unquote(urlsplit(url_path).path)[len("/docs/"):]
    root = docs.resolve()
    target = (root / rel).resolve()
    if target != root and root not in target.parents:
        return 404, render_markdown("# Not found", "not found")
    if target.is_dir():
        pages = sorted(p.relative_to(target).as_posix() for p in target.glob("*.md"))
        subdirs = sorted(p.name + "/" for p in target.iterdir() if p.is_dir())
        listing = "\n".join(f"- [{n}]({n})" for n in subdirs + pages)
        return 200, render_markdown(f"# docs/{rel}\n\n{listing}\n", f"docs/{rel}")
    if target.suffix != ".md" or not target.is_file():
        return 404, render_markdown(f"# Not found\n\nNo page `docs/{rel}` (GET /docs/ lists them).", "not found")
    return 200, render_markdown(target.read_text(encoding="utf-8"), target.stem)


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


def make_server(host: str, port: int, receiver: Receiver, docs: Path = DOCS) -> ThreadingHTTPServer:
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
            elif self.path == "/docs" or self.path.startswith("/docs/"):
                status, page = docs_page(docs, self.path if self.path != "/docs" else "/docs/")
                self._reply(status, page.encode(), "text/html; charset=utf-8")
            elif re.fullmatch(r"/[A-Za-z0-9_-]{1,64}", self.path):
                # a receiver's URL (/pager, /ticket) opens too: what arrived there
                with receiver.lock:
                    body = json.dumps([n for n in receiver.received if n.get("path") == self.path]).encode()
                self._reply(200, body)
            else:
                self._reply(404, b'{"error":"POST notifications to any path; GET /notifications, /<path> or /docs/"}')

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
    p.add_argument("--docs", default=str(DOCS), help="folder served as HTML under /docs/ (default: the repository's docs/)")
    args = p.parse_args(argv)
    host, _, port = args.listen.rpartition(":")
    if not port.isdigit():
        print(f"error: --listen: expected host:port, got {args.listen!r}", file=sys.stderr)
        return 2
    try:
        server = make_server(host or "127.0.0.1", int(port), Receiver(Path(args.log)), Path(args.docs))
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
