"""A local Alertmanager webhook receiver: every notification POSTed to it (any
path; the project's routing uses /pager for critical and /ticket for warning)
is appended as one JSON line to a log file and printed on stdout.

    python -m stack.webhook --listen 127.0.0.1:19199 --log .state/webhook/notifications.jsonl

GET /notifications returns everything received so far as a JSON array (the
end-to-end tests read it), GET /pager (any receiver path) what arrived there;
GET /-/ready answers 200 once listening; GET /metrics (Prometheus text) and /-/status
(JSON) count the notifications logged and the writes that failed.

The log survives kill -9 and a full disk: each notification is one write of one complete
line (append_line); a failed write is undone and answered 500 (Alertmanager retries),
counted in webhook_notification_log_write_failures_total and printed on stderr.

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
import os
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
# where their capacity_url / wallboard_url annotations point (mixin/config.py's DEFAULT_FLEETVIEW_URL:
# the oracle-fleetview of `make run`)
DEFAULT_FLEETVIEW = "http://127.0.0.1:19180/"


def local_runbook_rules(source_dir: Path, dest_dir: Path, webhook_url: str, names,
                        fleetview_url: str | None = None) -> bool:
    """Copies of the rule files `names` whose runbook links point at this receiver's webhook_url
    (e.g. `make run` with --webhook-port) instead of the default 127.0.0.1:19199, and whose
    capacity_url / wallboard_url links point at fleetview_url (--fleetview-port) instead of
    127.0.0.1:19180; only the annotation lines that use the defaults change (a site pack's own
    URLs stay). False, and nothing written, when both are the defaults."""
    base = webhook_url.rstrip("/") + "/"
    fleetview = (fleetview_url or DEFAULT_FLEETVIEW).rstrip("/") + "/"
    if base == DEFAULT_BASE and fleetview == DEFAULT_FLEETVIEW:
        return False
    dest_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        text = (Path(source_dir) / name).read_text(encoding="utf-8")
        text = re.sub(r"^(\s*runbook_url: )" + re.escape(DEFAULT_BASE), lambda m: m.group(1) + base, text, flags=re.M)
        text = re.sub(r"^(\s*(?:capacity|wallboard)_url: ['\"]?)" + re.escape(DEFAULT_FLEETVIEW),
                      lambda m: m.group(1) + fleetview, text, flags=re.M)
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
    """(status, HTML) for GET /docs/<path>: a rendered .md file, or a listing of a folder.
    A path the file system cannot take (a NUL byte, a name too long, a symlink loop, not
    UTF-8) is a 404 like any missing page, never an exception."""
    try:
        return _docs_page(docs, url_path)
    except (OSError, ValueError, RuntimeError, UnicodeError):
        return 404, render_markdown("# Not found\n\nNo such page (GET /docs/ lists them).", "not found")


def _docs_page(docs: Path, url_path: str) -> tuple[int, str]:
    rel = unquote(urlsplit(url_path).path, errors="strict")[len("/docs/"):]
    root = docs.resolve()
    if "\x00" in rel or len(rel) > 1024:
        return 404, render_markdown("# Not found", "not found")
    target = (root / rel).resolve()
    if target != root and root not in target.parents:
        return 404, render_markdown("# Not found", "not found")
    if target.is_dir():
        pages = sorted(p.relative_to(target).as_posix() for p in target.glob("*.md"))
        subdirs = sorted(p.name + "/" for p in target.iterdir() if p.is_dir())
        listing = "\n".join(f"- [{n}]({n})" for n in subdirs + pages)
        return 200, render_markdown(f"# docs/{rel}\n\n{listing}\n", f"docs/{rel}")
    if target.suffix != ".md" or not target.is_file():
        return 404, render_markdown(f"# Not found\n\nNo page `docs/{rel[:200]}` (GET /docs/ lists them).", "not found")
    return 200, render_markdown(target.read_text(encoding="utf-8"), target.stem)


# the links of an alert, in this order: its runbook, then its page (Grafana, else oracle-fleetview's)
_ALERT_LINKS = (("runbook_url", "runbook"), ("dashboard_url", "dashboard"), ("capacity_url", "capacity"),
          ("wallboard_url", "wallboard"))


def _alert_links(ann: dict) -> list[tuple[str, str]]:
    """An alert's links; only http(s) ones: an annotation is anybody's text (Alertmanager's API
    takes alerts without authentication), and a javascript: link would run in this page."""
    return [(text, ann[key]) for key, text in _ALERT_LINKS
            if isinstance(ann.get(key), str) and ann[key].lower().startswith(("http://", "https://"))]


def notifications_html(received: list[dict]) -> str:
    """GET /notifications in a browser: one row per alert of every notification, newest first
    (time, severity, alert, target, summary, runbook link and the alert's page: Grafana dashboard, else
    its database's capacity page or the wallboard). Programs get JSON (no text/html in
    Accept), as before."""
    rows = []
    for n in received:
        for a in n.get("alerts") or []:
            labels, ann = a.get("labels") or {}, a.get("annotations") or {}
            rows.append((n.get("received_at", ""), labels.get("severity", ""), labels.get("alertname", "?"),
                         labels.get("database") or labels.get("instance", ""), a.get("status") or n.get("status", ""),
                         ann.get("summary", ""), _alert_links(ann), n.get("path", "")))
    rows.sort(key=lambda r: r[0], reverse=True)
    e = html.escape
    body = "".join(
        f'<tr class="{e(sev)}"><td>{e(t.replace("T", " ").rstrip("Z"))}</td><td>{e(sev)}</td><td>{e(name)}'
        f'{" (resolved)" if status == "resolved" else ""}</td><td>{e(target)}</td><td>{e(summary)}</td>'
        f'<td>{" ".join(f"<a href={chr(34)}{e(url)}{chr(34)}>{e(text)}</a>" for text, url in links)}</td>'
        f'<td>{e(route)}</td></tr>'
        for t, sev, name, target, status, summary, links, route in rows)
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"30\">"
            "<title>Notifications</title><style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}"
            "td,th{border-bottom:1px solid #ddd;padding:2px 8px;text-align:left;vertical-align:top}"
            ".critical td:nth-child(2){color:#c62828;font-weight:bold}.warning td:nth-child(2){color:#ef6c00}"
            "</style></head><body><h1>Notifications received</h1>"
            f"<p>{len(rows)} alert(s) in {len(received)} notification(s), newest first. JSON: "
            "<code>curl -H 'Accept: application/json' .../notifications</code></p>"
            "<table id=\"notifications\"><tr><th>time (UTC)</th><th>severity</th><th>alert</th><th>target</th>"
            "<th>summary</th><th>runbook, page</th><th>route</th></tr>" + body + "</table></body></html>\n")


class LogWriteError(Exception):
    """A notification could not be appended to the log (full disk, I/O error, ...)."""


def append_line(path: Path, line: bytes) -> None:
    """Append one complete line to path, or nothing at all.

    A line left unterminated by an earlier writer (killed with -9 mid-write, or a write that
    failed and could not be undone) is terminated first, so the new line is never glued to
    it (readers skip the broken one). A write that fails part-way (ENOSPC) is cut back to
    the old end of the file, then the OSError propagates."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        done = 0
        try:
            while done < len(line):
                done += os.write(fd, line[done:])
        except OSError:
            if done:
                try:
                    os.ftruncate(fd, size)
                except OSError:
                    pass
            raise
    finally:
        os.close(fd)


class Receiver:
    def __init__(self, log_path: Path, echo=sys.stdout, errors=sys.stderr, writer=append_line):
        self.log_path = Path(log_path)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.echo = echo
        self.errors = errors
        self.writer = writer            # tests inject failures (ENOSPC) here
        self.lock = threading.Lock()
        self.received: list[dict] = []
        self.write_failures = 0
        self.last_error = ""
        self.last_write_ok = True

    def record(self, path: str, payload: dict) -> dict:
        """Log one notification; LogWriteError (after a loud line on stderr) if it could not
        be written: the caller answers 500, so Alertmanager retries it."""
        entry = {"received_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
                 .replace("+00:00", "Z"), "path": path, **payload}
        line = json.dumps(entry, separators=(",", ":"), sort_keys=True)
        with self.lock:
            try:
                self.writer(self.log_path, (line + "\n").encode())
            except OSError as exc:
                self.write_failures += 1
                self.last_write_ok = False
                self.last_error = f"{exc.strerror or exc}"
                msg = (f"ERROR: cannot write notification to {self.log_path}: {self.last_error} "
                       f"({self.write_failures} failed so far); answered 500, Alertmanager retries it")
                if self.errors is not None:
                    print(msg, file=self.errors, flush=True)
                raise LogWriteError(msg) from None
            self.last_write_ok = True
            self.received.append(entry)
            if self.echo is not None:
                print(line, file=self.echo, flush=True)
        return entry

    def status(self) -> dict:
        with self.lock:
            return {"log": str(self.log_path), "received": len(self.received),
                    "write_failures": self.write_failures, "last_write_ok": self.last_write_ok,
                    "last_error": self.last_error}

    def metrics(self) -> str:
        st = self.status()
        return ("# HELP webhook_notifications_logged_total Notifications appended to the notification log.\n"
                "# TYPE webhook_notifications_logged_total counter\n"
                f"webhook_notifications_logged_total {st['received']}\n"
                "# HELP webhook_notification_log_write_failures_total Notifications that could not be written "
                "to the log (answered 500; Alertmanager retries).\n"
                "# TYPE webhook_notification_log_write_failures_total counter\n"
                f"webhook_notification_log_write_failures_total {st['write_failures']}\n"
                "# HELP webhook_notification_log_last_write_success 1 if the last write to the log succeeded.\n"
                "# TYPE webhook_notification_log_last_write_success gauge\n"
                f"webhook_notification_log_last_write_success {int(st['last_write_ok'])}\n")


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
            try:
                self._get()
            except Exception as exc:      # one line, never a traceback; the client gets a 500
                print(f"error: GET {self.path[:200]!r}: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr,
                      flush=True)
                self._reply(500, b'{"error":"internal error"}')

        def _get(self):
            if self.path == "/notifications" and "text/html" in (self.headers.get("Accept") or ""):
                with receiver.lock:           # a browser: the table (one reply: programs get JSON below)
                    page = notifications_html(list(receiver.received))
                self._reply(200, page.encode(), "text/html; charset=utf-8")
            elif self.path == "/metrics":
                self._reply(200, receiver.metrics().encode(), "text/plain; version=0.0.4; charset=utf-8")
            elif self.path == "/-/status":
                self._reply(200, json.dumps(receiver.status()).encode())
            elif self.path == "/notifications":
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
            except RecursionError:
                self._reply(400, b'{"error":"body is not a JSON object: nested too deeply"}')
                return
            except ValueError as exc:
                self._reply(400, json.dumps({"error": f"body is not a JSON object: {str(exc)[:200]}"}).encode())
                return
            if len(self.path) > 1024:
                self._reply(414, b'{"error":"path too long"}')
                return
            try:
                receiver.record(self.path, payload)
            except LogWriteError as exc:
                self._reply(500, json.dumps({"error": str(exc)}).encode())
                return
            self._reply(200, b'{"status":"ok"}')

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        allow_reuse_address = True

        def handle_error(self, request, client_address):
            # one line instead of socketserver's traceback (a client that hung up, a bad request)
            exc = sys.exc_info()[1]
            print(f"error: request from {client_address[0]}: {type(exc).__name__}: {str(exc)[:200]}",
                  file=sys.stderr, flush=True)

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
