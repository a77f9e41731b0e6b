"""HTTP serving shared by both exporters.

* Routes are plain callables ``handler(query) -> Response``; ``/metrics`` is one
  of them, so each exporter decides what a scrape means.
* ``--web.config.file`` uses the Prometheus exporter-toolkit format:
  ``tls_server_config`` (cert_file, key_file, client_auth_type, client_ca_file,
  min_version, max_version) and ``basic_auth_users`` (user: bcrypt hash).
* TLS handshakes happen in the worker thread, so one slow client cannot stall
  the listener.
"""
from __future__ import annotations

import base64
import hashlib
import html
import logging
import socket
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable
from urllib.parse import parse_qs, urlsplit

import bcrypt

from .config import ConfigError, ErrorList, Fields, load_yaml

log = logging.getLogger(__name__)


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[dict[str, list[str]], dict[str, str]], Response]

_TLS_VERSIONS = {
    "TLS10": ssl.TLSVersion.TLSv1,
    "TLS11": ssl.TLSVersion.TLSv1_1,
    "TLS12": ssl.TLSVersion.TLSv1_2,
    "TLS13": ssl.TLSVersion.TLSv1_3,
}
_CLIENT_AUTH = {
    "NoClientCert": ssl.CERT_NONE,
    "RequestClientCert": ssl.CERT_OPTIONAL,
    "RequireAnyClientCert": ssl.CERT_REQUIRED,
    "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
    "RequireAndVerifyClientCert": ssl.CERT_REQUIRED,
}


@dataclass
class WebConfig:
    ssl_context: ssl.SSLContext | None = None
    users: dict[str, bytes] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


def load_web_config(path: str | None) -> WebConfig:
    """Parse an exporter-toolkit web config file; None means plain HTTP, no auth.
    Every problem of the file is reported at once; a file that cannot be read names the flag."""
    if not path:
        return WebConfig()
    try:
        doc = load_yaml(path)
    except ConfigError as exc:
        raise ConfigError(f"--web.config.file {path}", None, exc.message) from None
    root = Fields(path, "", doc)
    root.declare("tls_server_config", "basic_auth_users", "http_server_config")
    cfg = WebConfig()
    errs = ErrorList()
    with errs.part():
        cfg.ssl_context = _tls(root)
    with errs.part():
        cfg.users = _users(root, path)
    with errs.part():
        http_cfg = root.sub("http_server_config")
        http_cfg.bool("http2", True)
        cfg.headers = http_cfg.str_map("headers")
        http_cfg.reject_unknown()
    with errs.part():
        root.reject_unknown()
    errs.check()
    return cfg


def _tls(root: Fields) -> ssl.SSLContext | None:
    tls = root.sub("tls_server_config")
    if not tls.data:
        return None
    # relative paths are relative to the web config file (as in exporter-toolkit)
    cert = tls.file_path("cert_file", required=True)
    key = tls.file_path("key_file", required=True)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise tls.error("cert_file", f"cannot load certificate {cert} with key {key}: "
                                     f"{getattr(exc, 'strerror', None) or exc}") from None
    min_v = tls.str("min_version", "TLS12")
    max_v = tls.str("max_version", "TLS13")
    for key_name, value in (("min_version", min_v), ("max_version", max_v)):
        if value not in _TLS_VERSIONS:
            raise tls.error(key_name, f"must be one of {', '.join(_TLS_VERSIONS)}, got {value!r}")
    ctx.minimum_version = _TLS_VERSIONS[min_v]
    ctx.maximum_version = _TLS_VERSIONS[max_v]
    auth = tls.str("client_auth_type", "NoClientCert")
    if auth not in _CLIENT_AUTH:
        raise tls.error("client_auth_type", f"must be one of {', '.join(_CLIENT_AUTH)}, got {auth!r}")
    ctx.verify_mode = _CLIENT_AUTH[auth]
    ca = tls.file_path("client_ca_file")
    if ca:
        try:
            ctx.load_verify_locations(ca)
        except (OSError, ssl.SSLError) as exc:
            raise tls.error("client_ca_file", f"cannot load CA file {ca}: "
                                              f"{getattr(exc, 'strerror', None) or exc}") from None
    elif auth in ("VerifyClientCertIfGiven", "RequireAndVerifyClientCert"):
        raise tls.error("client_ca_file", f"is required with client_auth_type {auth}")
    tls.str_list("cipher_suites")
    tls.bool("prefer_server_cipher_suites", True)
    tls.str_list("curve_preferences")
    tls.reject_unknown()
    return ctx


def _users(root: Fields, path: str) -> dict[str, bytes]:
    users = root._get("basic_auth_users", {}, False)
    if not isinstance(users, dict):
        raise root.error("basic_auth_users", "expected a mapping of user name to bcrypt hash")
    out: dict[str, bytes] = {}
    for user, hashed in users.items():
        if not isinstance(hashed, str) or not hashed.startswith(("$2a$", "$2b$", "$2y$")):
            raise ConfigError(path, f"basic_auth_users.{user}", "expected a bcrypt hash ($2y$...)")
        # Python's bcrypt accepts $2b$; $2y$ (htpasswd) is the same algorithm.
        encoded = hashed.replace("$2y$", "$2b$", 1).encode()
        try:
            bcrypt.checkpw(b"", encoded)
        except ValueError:
            raise ConfigError(path, f"basic_auth_users.{user}", "not a valid bcrypt hash") from None
        out[str(user)] = encoded
    return out


class _AuthCache:
    """bcrypt is deliberately slow; remember successful checks (as exporter-toolkit does)."""

    _DUMMY = bcrypt.hashpw(b"dummy", bcrypt.gensalt(rounds=4))

    def __init__(self, users: dict[str, bytes]):
        self.users = users
        self.ok: set[bytes] = set()
        self.lock = threading.Lock()

    def check(self, header: str | None) -> bool:
        if not self.users:
            return True
        if not header or not header.startswith("Basic "):
            return False
        try:
            user, _, password = base64.b64decode(header[6:], validate=True).decode("utf-8").partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        hashed = self.users.get(user)
        key = hashlib.sha256(f"{user}\0{password}\0".encode() + (hashed or b"")).digest()
        with self.lock:
            if key in self.ok:
                return True
        try:
            good = bcrypt.checkpw(password.encode(), hashed or self._DUMMY) and hashed is not None
        except ValueError:  # a hash bcrypt cannot use: a failed login, never a dropped connection
            return False
        if good:
            with self.lock:
                self.ok.add(key)
        return good


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    ssl_context: ssl.SSLContext | None = None

    def finish_request(self, request, client_address):
        if self.ssl_context is not None:
            request.settimeout(10)
            try:
                request = self.ssl_context.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as exc:
                log.debug("TLS handshake with %s failed: %s", client_address, exc)
                return
        super().finish_request(request, client_address)


def landing_page(title: str, links: list[tuple[str, str]], extra_html: str = "") -> Response:
    items = "".join(f'<li><a href="{html.escape(href)}">{html.escape(text)}</a></li>' for href, text in links)
    body = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
            f"<body><h1>{html.escape(title)}</h1><ul>{items}</ul>{extra_html}</body></html>")
    return Response(200, body.encode(), "text/html; charset=utf-8")


def parse_listen_address(addr: str) -> tuple[str, int]:
    """``:9100``, ``127.0.0.1:9100``, ``[::1]:9100`` -> (host, port)."""
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError("--web.listen-address", None, f"expected [host]:port, got {addr!r}")
    host = host.strip("[]")
    return host, int(port)


def make_server(listen: str, routes: dict[str, Handler], web: WebConfig) -> ThreadingHTTPServer:
    auth = _AuthCache(web.users)
    extra_headers = dict(web.headers)

    class RequestHandler(BaseHTTPRequestHandler):
        server_version = "exporter"
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # route access logs to debug
            log.debug("%s %s", self.address_string(), fmt % args)

        def _send(self, resp: Response, head_only: bool = False):
            self.send_response(resp.status)
            self.send_header("Content-Type", resp.content_type)
            self.send_header("Content-Length", str(len(resp.body)))
            for k, v in {**extra_headers, **resp.headers}.items():
                self.send_header(k, v)
            self.end_headers()
            if not head_only:
                self.wfile.write(resp.body)

        def _handle(self, head_only: bool):
            if not auth.check(self.headers.get("Authorization")):
                self._send(Response(401, b"Unauthorized\n",
                                    headers={"WWW-Authenticate": 'Basic realm="exporter"'}), head_only)
                return
            url = urlsplit(self.path)
            handler = routes.get(url.path)
            if handler is None:
                self._send(Response(404, b"Not Found\n"), head_only)
                return
            try:
                resp = handler(parse_qs(url.query), dict(self.headers.items()))
            except Exception:  # never let a handler kill the connection silently
                log.exception("handler for %s failed", url.path)
                resp = Response(500, b"internal error, see exporter log\n")
            self._send(resp, head_only)

        def do_GET(self):
            self._handle(False)

        def do_HEAD(self):
            self._handle(True)

    host, port = parse_listen_address(listen)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    if host == "":
        family = socket.AF_INET6 if socket.has_ipv6 else socket.AF_INET

    server_cls = type("Server", (_Server,), {"address_family": family})
    if family == socket.AF_INET6 and host == "":
        class DualStack(server_cls):  # type: ignore[misc, valid-type]
            def server_bind(self):
                self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
                super().server_bind()
        server_cls = DualStack
    try:
        server = server_cls((host, port), RequestHandler)
    except OSError as exc:
        raise ConfigError("--web.listen-address", None, f"cannot listen on {listen}: {exc.strerror}") from None
    server.ssl_context = web.ssl_context
    return server
