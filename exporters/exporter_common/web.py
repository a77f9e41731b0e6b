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
import sys
import threading
import time
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
    if _TLS_VERSIONS[min_v] > _TLS_VERSIONS[max_v]:   # every handshake would fail
        raise tls.error("min_version", f"{min_v} is above max_version {max_v}")
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
    _cipher_suites(tls, ctx, tls.str_list("cipher_suites"))
    if tls.bool("prefer_server_cipher_suites", True):
        ctx.options |= ssl.OP_CIPHER_SERVER_PREFERENCE
    _curves(tls, ctx, tls.str_list("curve_preferences"))
    tls.reject_unknown()
    return ctx


# Go's cipher suite names (crypto/tls, as exporter-toolkit reads them) -> OpenSSL's. As in Go,
# the list applies to TLS 1.2 and below; TLS 1.3 suites are fixed (their names are accepted).
_CIPHERS = {
    "TLS_RSA_WITH_RC4_128_SHA": "RC4-SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA": "DES-CBC3-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA": "ECDHE-ECDSA-RC4-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA": "ECDHE-RSA-RC4-SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA": "ECDHE-RSA-DES-CBC3-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": "ECDHE-ECDSA-CHACHA20-POLY1305",
}
_TLS13_CIPHERS = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}
# Go's curve names -> OpenSSL's group names
_CURVES = {"CurveP256": "prime256v1", "CurveP384": "secp384r1", "CurveP521": "secp521r1", "X25519": "X25519"}


def _cipher_suites(tls: Fields, ctx: ssl.SSLContext, names: list[str]) -> None:
    if not names:
        return
    unknown = [n for n in names if n not in _CIPHERS and n not in _TLS13_CIPHERS]
    if unknown:
        raise tls.error("cipher_suites", f"unknown cipher suite {unknown[0]!r} (Go names, e.g. "
                                         "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)")
    tls12 = [_CIPHERS[n] for n in names if n in _CIPHERS]
    if not tls12:
        return
    try:
        ctx.set_ciphers(":".join(tls12))
    except ssl.SSLError:
        raise tls.error("cipher_suites", f"none of {', '.join(n for n in names if n in _CIPHERS)} "
                                         "is available in this OpenSSL") from None
    have = {c["name"] for c in ctx.get_ciphers()}
    missing = [n for n in names if n in _CIPHERS and _CIPHERS[n] not in have]
    if missing:
        raise tls.error("cipher_suites", f"{missing[0]} is not available in this OpenSSL")


def _curves(tls: Fields, ctx: ssl.SSLContext, names: list[str]) -> None:
    if not names:
        return
    unknown = [n for n in names if n not in _CURVES]
    if unknown:
        raise tls.error("curve_preferences", f"unknown curve {unknown[0]!r}, expected one of {', '.join(_CURVES)}")
    if len(names) > 1:   # Python's ssl module (SSLContext.set_ecdh_curve) sets exactly one group
        raise tls.error("curve_preferences", "this exporter can apply one curve only (Python's ssl module "
                                             f"sets a single key exchange group), got {len(names)}")
    try:
        ctx.set_ecdh_curve(_CURVES[names[0]])
    except (ValueError, ssl.SSLError) as exc:
        raise tls.error("curve_preferences", f"{names[0]} is not available in this OpenSSL: {exc}") from None


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


def _bcrypt_cost(hashed: bytes) -> int:
    """The cost (log2 rounds) of a $2b$NN$... hash."""
    try:
        return int(hashed.split(b"$")[2])
    except (IndexError, ValueError):
        return 10


class _AuthCache:
    """bcrypt is deliberately slow; remember successful checks (as exporter-toolkit does).

    An unknown user is checked against a dummy hash of the same cost as the configured
    ones, so the answer takes as long as for a known user with a wrong password: user
    names cannot be found out by timing (exporter-toolkit does the same)."""

    def __init__(self, users: dict[str, bytes]):
        self.users = users
        self.ok: set[bytes] = set()
        self.lock = threading.Lock()
        cost = max((_bcrypt_cost(h) for h in users.values()), default=4)
        self.dummy = bcrypt.hashpw(b"dummy password", bcrypt.gensalt(rounds=min(max(cost, 4), 31)))

    def check(self, header: str | None) -> bool:
        if not self.users:
            return True
        scheme, _, credentials = (header or "").strip().partition(" ")
        if scheme.lower() != "basic":      # the scheme is case-insensitive (RFC 7617; Go accepts "basic")
            return False
        try:
            user, _, password = base64.b64decode(credentials.strip(), validate=True).decode("utf-8").partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        hashed = self.users.get(user)
        key = hashlib.sha256(f"{user}\0{password}\0".encode() + (hashed or b"")).digest()
        with self.lock:
            if key in self.ok:
                return True
        try:
            good = bcrypt.checkpw(password.encode(), hashed or self.dummy) and hashed is not None
        except ValueError:  # a hash bcrypt cannot use: a failed login, never a dropped connection
            return False
        if good:
            with self.lock:
                self.ok.add(key)
        return good


# Limits of the HTTP server (exporter-toolkit / Go net/http parity, issue 15):
MAX_HEADER_BYTES = 1 << 20      # request line + headers; beyond: 431 (Go: DefaultMaxHeaderBytes, 1 MB)
HEADER_TIMEOUT = 10.0           # from the first byte of a request to the end of its headers
IDLE_TIMEOUT = 120.0            # a kept-alive connection with no new request is closed
WRITE_TIMEOUT = 60.0            # sending a response (a client that stops reading)
LISTEN_BACKLOG = 4096           # accept queue (the kernel caps it at net.core.somaxconn)
LINGER_SECONDS = 0.5            # after a 431/408: drain the client's excess before closing
LINGER_BYTES = 4 << 20
DEFAULT_MAX_REQUESTS = 40       # concurrent requests served; beyond: 503 (node_exporter's default)


class _HeaderLimit(Exception):
    """The request's headers are too large (431) or took too long (408)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class _BoundedReader:
    """Stands in for the handler's rfile while the request line and headers are read: at
    most MAX_HEADER_BYTES in all, within HEADER_TIMEOUT of the first byte, whatever the
    client's pace (each socket read gets only the time left). A slow or endless client
    costs one thread for HEADER_TIMEOUT and at most MAX_HEADER_BYTES of memory."""

    def __init__(self, rfile, sock: socket.socket, deadline: float, budget: int):
        self.rfile, self.sock, self.deadline, self.budget = rfile, sock, deadline, budget

    def readline(self, limit: int = -1) -> bytes:
        out = bytearray()
        if limit < 0:
            limit = self.budget + 1
        while len(out) < limit:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise _HeaderLimit(408, "request headers not received in time")
            self.sock.settimeout(left)
            try:
                chunk = self.rfile.peek(1)
            except (socket.timeout, TimeoutError):
                raise _HeaderLimit(408, "request headers not received in time") from None
            if not chunk:
                break
            nl = chunk.find(b"\n", 0, limit - len(out))
            take = nl + 1 if nl >= 0 else min(len(chunk), limit - len(out))
            if take > self.budget:
                raise _HeaderLimit(431, "request header fields too large")
            out += self.rfile.read(take)
            self.budget -= take
            if nl >= 0:
                break
        return bytes(out)

    def __getattr__(self, name):          # anything else (read for a body) goes to the real file
        return getattr(self.rfile, name)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG
    ssl_context: ssl.SSLContext | None = None

    def process_request(self, request, client_address):
        # Nagle off: a response is one write, but a kept-alive client must not wait for a
        # delayed ACK before the next (Go sets TCP_NODELAY on every connection too)
        try:
            request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        super().process_request(request, client_address)

    def finish_request(self, request, client_address):
        if self.ssl_context is not None:
            request.settimeout(HEADER_TIMEOUT)
            try:
                request = self.ssl_context.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as exc:
                log.debug("TLS handshake with %s failed: %s", client_address, exc)
                return
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        """One log line, never a traceback on stderr: a client that goes away mid-response
        (Prometheus does on its scrape timeout) is routine."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError, socket.timeout, ssl.SSLError)):
            log.debug("client %s: connection ended early: %s", client_address[0], exc.__class__.__name__)
        else:
            log.error("client %s: request failed: %s: %s", client_address[0], type(exc).__name__, exc)


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


def make_server(listen: str, routes: dict[str, Handler], web: WebConfig,
                max_requests: int = DEFAULT_MAX_REQUESTS) -> ThreadingHTTPServer:
    """max_requests: requests served at once (0: no limit); more get 503 at once, as with
    node_exporter's --web.max-requests, so a burst cannot pile up threads and memory."""
    auth = _AuthCache(web.users)
    extra_headers = dict(web.headers)
    slots = threading.BoundedSemaphore(max_requests) if max_requests > 0 else None

    class RequestHandler(BaseHTTPRequestHandler):
        server_version = "exporter"
        protocol_version = "HTTP/1.1"
        timeout = WRITE_TIMEOUT

        def log_message(self, fmt, *args):  # route access logs to debug
            log.debug("%s %s", self.address_string(), fmt % args)

        def handle_one_request(self):
            """The stdlib's, with bounded request headers and an idle timeout between requests."""
            real = self.rfile
            try:
                self.connection.settimeout(IDLE_TIMEOUT)
                try:
                    first = real.peek(1)          # idle: waiting for the next request
                except (socket.timeout, TimeoutError):
                    self.close_connection = True
                    return
                if not first:
                    self.close_connection = True
                    return
                self.rfile = _BoundedReader(real, self.connection, time.monotonic() + HEADER_TIMEOUT,
                                            MAX_HEADER_BYTES)
                try:
                    self.raw_requestline = self.rfile.readline(65537)
                    if len(self.raw_requestline) > 65536:
                        self.requestline = self.request_version = self.command = ""
                        self.send_error(414)
                        return
                    if not self.raw_requestline:
                        self.close_connection = True
                        return
                    ok = self.parse_request()
                except _HeaderLimit as exc:
                    self.requestline = self.request_version = self.command = ""
                    self.close_connection = True
                    self._send(Response(exc.status, (str(exc) + "\n").encode(), headers={"Connection": "close"}))
                    self.wfile.flush()
                    self._linger()
                    return
                finally:
                    self.rfile = real
                    self.connection.settimeout(WRITE_TIMEOUT)
                if not ok:
                    return
                method = getattr(self, "do_" + self.command, None)
                if method is None:
                    self.send_error(501, f"Unsupported method ({self.command!r})")
                    return
                method()
                self.wfile.flush()
            except (socket.timeout, TimeoutError) as exc:
                self.log_error("Request timed out: %r", exc)
                self.close_connection = True

        def _linger(self):
            """Half-close, then read and drop what the client still sends for a moment, so
            that closing with unread data (a TCP reset) does not destroy the answer before
            the client reads it (Go's closeWriteAndWait does the same). Bounded in time and
            bytes; nothing is kept."""
            sock = self.connection
            try:
                sock.shutdown(socket.SHUT_WR)
                deadline = time.monotonic() + LINGER_SECONDS
                buf = bytearray(65536)
                drained = 0
                while drained < LINGER_BYTES:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    sock.settimeout(left)
                    n = sock.recv_into(buf)
                    if not n:
                        break
                    drained += n
            except (OSError, ValueError):
                pass

        def _send(self, resp: Response, head_only: bool = False):
            self.send_response(resp.status)
            self.send_header("Content-Type", resp.content_type)
            self.send_header("Content-Length", str(len(resp.body)))
            for k, v in {**extra_headers, **resp.headers}.items():
                self.send_header(k, v)
            # headers and body in one write (one segment train, no Nagle/delayed-ACK stall)
            self._headers_buffer.append(b"\r\n")
            data = b"".join(self._headers_buffer)
            self._headers_buffer = []
            self.wfile.write(data if head_only else data + resp.body)

        def _handle(self, head_only: bool):
            if slots is not None and not slots.acquire(blocking=False):
                self._send(Response(503, b"too many concurrent requests (--web.max-requests)\n"), head_only)
                return
            try:
                self._serve(head_only)
            finally:
                if slots is not None:
                    slots.release()

        def _serve(self, head_only: bool):
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
