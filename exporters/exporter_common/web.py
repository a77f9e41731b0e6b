"""HTTP serving shared by both exporters.

* Routes are plain callables ``handler(query) -> Response``; ``/metrics`` is one
  of them, so each exporter decides what a scrape means.
* ``--web.config.file`` uses the Prometheus exporter-toolkit format:
  ``tls_server_config`` (cert_file, key_file, client_auth_type, client_ca_file,
  min_version, max_version) and ``basic_auth_users`` (user: bcrypt hash).
* One event-loop thread (selectors) accepts, runs TLS handshakes and reads request
  headers of every connection without blocking; a bounded pool of workers
  (--web.max-requests) runs the routes and writes the answers. An idle or slow
  connection costs a socket, never a thread, and every phase has a deadline.
* bcrypt checks run one at a time, successful ones are cached (exporter-toolkit).
* An answer is gzip-compressed when the client accepts it (Accept-Encoding), as node_exporter does.
* A route may share one answer between concurrent requests (exporter_common.coalesce): a request
  that only waits for an answer in progress takes no --web.max-requests slot.
"""
from __future__ import annotations

import base64
import hashlib
import html
import logging
import socket
import ssl
import threading
import time
import zlib
from dataclasses import dataclass, field
import re
import selectors
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from email.utils import formatdate
from http import HTTPStatus
from typing import Callable
from urllib.parse import parse_qs, urlsplit

import bcrypt
import yaml

from .config import ConfigError, ErrorList, Fields, load_yaml

log = logging.getLogger(__name__)


class Response:
    """An answer. ``body``: bytes, or a list of byte strings (an exposition of tens of megabytes
    in its pieces): sent in blocks joined from the pieces (``_send_response``), never made whole
    unless something reads ``body``."""

    __slots__ = ("status", "_body", "_pieces", "content_type", "headers")

    def __init__(self, status: int = 200, body: "bytes | list[bytes]" = b"",
                 content_type: str = "text/plain; charset=utf-8", headers: dict[str, str] | None = None):
        self.status = status
        self._body, self._pieces = (None, list(body)) if isinstance(body, (list, tuple)) else (body, None)
        self.content_type = content_type
        self.headers = {} if headers is None else headers

    @property
    def body(self) -> bytes:
        if self._body is None:
            self._body = b"".join(self._pieces)
        return self._body

    @property
    def payload(self) -> "bytes | list[bytes]":
        """The body as it was given (the pieces, not joined)."""
        return self._pieces if self._body is None else self._body

    def length(self) -> int:
        """The body's length in bytes (Content-Length), without joining its pieces."""
        return len(self._body) if self._body is not None else sum(map(len, self._pieces))

    def __repr__(self) -> str:
        return f"Response({self.status}, {self.length()} bytes, {self.content_type!r})"


Handler = Callable[[dict[str, list[str]], dict[str, str]], Response]
# a route's claim() (exporter_common.coalesce): no answer to wait for and no slot to make one
CLAIM_REFUSED = object()

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


# Headers of every answer that the server writes itself: one from the web config would contradict
# the body's framing or encoding (a Content-Encoding on a plain body, a second Content-Length).
_OWN_HEADERS = frozenset({"content-length", "content-encoding", "content-type", "transfer-encoding", "connection",
                          "keep-alive", "date", "server", "trailer", "upgrade", "www-authenticate"})


_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")      # a field name (RFC 9110 5.1)
_BAD_VALUE = re.compile(r"[^\t\x20-\x7e]")       # CR, LF, NUL (other header lines), beyond ASCII (re-encoded)


def _headers_as_written(path: str) -> dict[str, str]:
    """http_server_config.headers with every value the text written in the file (YAML reads an
    unquoted ``yes`` as a boolean and ``010`` as 8; exporter-toolkit, reading into strings, keeps the
    text): the file read again with every scalar a string. {} if that reading finds no such mapping."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = yaml.load(fh, Loader=yaml.BaseLoader)     # noqa: S506 (BaseLoader builds strings only)
        headers = doc["http_server_config"]["headers"]
    except Exception:  # the checked reading (load_yaml, Fields) reports what is wrong with the file
        return {}
    return {k: v for k, v in headers.items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(headers, dict) else {}


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
        written = _headers_as_written(path)     # `X-XSS-Protection: 0`, `X: yes`, `X: 010` sent as written
        cfg.headers = {name: written.get(name, value) for name, value in cfg.headers.items()}
        lower: dict[str, str] = {}
        problems: list[str] = []         # every header's problem in one message, not one per start
        for name, value in list(cfg.headers.items()):
            if not _TOKEN.fullmatch(name):
                problems.append(f"{name!r} is not a header name (letters, digits and !#$%&'*+-.^_`|~ only, no spaces)")
            if _BAD_VALUE.search(value):
                problems.append(f"the value of {name!r} has a line break, a control character or a character "
                                f"outside ASCII (sent as written, it could not be read back the same)")
            if name.lower() in lower:
                problems.append(f"{lower[name.lower()]!r} and {name!r} are one header (names are case-insensitive): "
                                f"give it once")
            lower[name.lower()] = name
            if name.lower() == "vary":      # a list: no empty elements (RFC 9110 5.6.1)
                cfg.headers[name] = ", ".join(v.strip() for v in value.split(",") if v.strip())
                if not cfg.headers[name]:
                    del cfg.headers[name]
            if name.lower() in _OWN_HEADERS:
                problems.append(f"{name!r} is set by the exporter itself (framing, encoding or content of each "
                                f"answer); add response headers such as Strict-Transport-Security, X-Frame-Options, "
                                f"X-Content-Type-Options, Content-Security-Policy")
        if problems:
            raise http_cfg.error("headers", "; ".join(problems))
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
        self.bcrypt_lock = threading.Lock()
        cost = max((_bcrypt_cost(h) for h in users.values()), default=4)
        self.dummy = bcrypt.hashpw(b"dummy password", bcrypt.gensalt(rounds=min(max(cost, 4), 31)))

    def check(self, header: str | None) -> bool:
        if not self.users:
            return True
        basic = _basic_credentials(header)
        if basic is None:
            return False
        user, password = basic
        hashed = self.users.get(user)
        key = _cache_key(user, password, hashed)
        with self.lock:
            if key in self.ok:
                return True
        # one bcrypt check at a time (exporter-toolkit's bcryptMtx): password guessing costs at most
        # one core, and the scrapes whose credentials are cached go on meanwhile
        with self.bcrypt_lock:
            with self.lock:
                if key in self.ok:          # checked by another request while this one waited
                    return True
            try:
                good = bcrypt.checkpw(password.encode(), hashed or self.dummy) and hashed is not None
            except ValueError:  # a hash bcrypt cannot use: a failed login, never a dropped connection
                return False
        if good:
            with self.lock:
                self.ok.add(key)
        return good

    def known_good(self, header: str | None) -> bool:
        """True when ``check`` would pass without a bcrypt check (no users, or credentials
        already checked): cheap enough for the event loop."""
        if not self.users:
            return True
        basic = _basic_credentials(header)
        if basic is None:
            return False
        user, password = basic
        hashed = self.users.get(user)
        if hashed is None:
            return False
        key = _cache_key(user, password, hashed)
        with self.lock:
            return key in self.ok


def _cache_key(user: str, password: str, hashed: bytes | None) -> bytes:
    """The key of a checked credential in the cache of good ones: the user, the password and
    the hash it was checked against (a changed hash invalidates it)."""
    return hashlib.sha256(f"{user}\0{password}\0".encode() + (hashed or b"")).digest()


def _basic_credentials(header: str | None) -> tuple[str, str] | None:
    """(user, password) of a Basic Authorization header, None when it is not one. The scheme is
    case-insensitive (RFC 7617; Go accepts "basic")."""
    scheme, _, credentials = (header or "").strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, _, password = base64.b64decode(credentials.strip(), validate=True).decode("utf-8").partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    return user, password


# Limits of the HTTP server (exporter-toolkit / Go net/http parity, issue 15):
MAX_HEADER_BYTES = 1 << 20      # request line + headers; beyond: 431 (Go: DefaultMaxHeaderBytes, 1 MB)
MAX_HEADERS = 100               # header lines; beyond: 431 (as http.client)
MAX_REQUEST_LINE = 65536        # beyond: 414
HEADER_TIMEOUT = 10.0           # from the first byte of a request (or the TLS handshake's start) to the end of its headers
IDLE_TIMEOUT = 120.0            # a connection with no new request is closed
WRITE_TIMEOUT = 60.0            # sending a response (a client that stops reading)
LISTEN_BACKLOG = 4096           # accept queue (the kernel caps it at net.core.somaxconn)
LINGER_SECONDS = 0.5            # after a 431/408: drain the client's excess before closing
LINGER_BYTES = 256 << 10          # (Go drains nothing: it half-closes and waits 0.5 s)
DEFAULT_MAX_REQUESTS = 40       # concurrent requests served; beyond: 503 (node_exporter's default)
MAX_WORKERS_UNLIMITED = 64      # worker threads with --web.max-requests=0 (requests then queue)
READS_PER_EVENT = 2             # socket reads of 64 KiB per connection per loop turn (fairness)
_SWEEP = 0.1                    # seconds between two looks for connections past their deadline

_HEAD_END = re.compile(rb"\r?\n\r?\n")
_REASONS = {code.value: code.phrase for code in HTTPStatus}

# connection states (in the event loop unless BUSY)
_HANDSHAKE, _IDLE, _HEADERS, _BUSY, _LINGER = range(5)


class _Conn:
    __slots__ = ("sock", "addr", "state", "buf", "deadline", "scan", "drained", "want_write", "eof")

    def __init__(self, sock, addr, state: int, deadline: float):
        self.sock, self.addr, self.state, self.deadline = sock, addr, state, deadline
        self.buf = bytearray()
        self.scan = 0           # where to look for the end of the headers next
        self.drained = 0
        self.want_write = False
        self.eof = False            # the client half-closed: answer what it sent, then close


class _Request:
    __slots__ = ("method", "target", "version", "headers", "keep_alive")

    def __init__(self, method: str, target: str, version: str, headers: dict[str, str], keep_alive: bool):
        self.method, self.target, self.version, self.headers, self.keep_alive = (
            method, target, version, headers, keep_alive)


BLOCK = 1 << 20         # a body in pieces is written in blocks of about this many bytes (few GIL hand-overs)
PROGRESS = 1 << 20      # ... and must move this many bytes per WRITE_TIMEOUT (a client that reads too slowly)


def _blocks(pieces: list[bytes], first: bytes = b""):
    """``first`` and ``pieces`` joined into blocks of about BLOCK bytes (the last one shorter), one
    at a time: a body of tens of megabytes is never made whole."""
    block = [first] if first else []
    held = len(first)
    for piece in pieces:
        block.append(piece)
        held += len(piece)
        if held >= BLOCK:
            yield b"".join(block)
            block, held = [], 0
    if block:
        yield b"".join(block)


def _send_response(sock, head: bytes, body: "bytes | list[bytes]") -> None:
    """Headers and body in gathered writes (no Nagle/delayed-ACK stall between them, and no copy
    of a body of tens of megabytes); TLS sockets have no sendmsg: two writes (TCP_NODELAY). A body
    in pieces (an exposition of tens of thousands of families' lines) is joined and written a
    block at a time, each block dropped before the next is joined: tens of megabytes made whole
    cost a page fault per page every time, and a write of the pieces as they are costs the
    kernel more per piece than the copy. It must move PROGRESS bytes within each period of the
    socket's timeout (WRITE_TIMEOUT), not just a block: a client reading a kilobyte a second
    is cut, as a whole body in one write cut it, instead of holding a worker for hours."""
    if isinstance(body, list):
        limit = sock.gettimeout()
        deadline = None if limit is None else time.monotonic() + limit
        moved = 0
        for block in _blocks(body, head):
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"the client took {limit:g} s to read less than {PROGRESS} bytes")
                sock.settimeout(left)
            sock.sendall(block)
            moved += len(block)
            if moved >= PROGRESS and deadline is not None:
                moved, deadline = 0, time.monotonic() + limit
        return
    if isinstance(sock, ssl.SSLSocket) or not hasattr(sock, "sendmsg"):
        sock.sendall(head)
        if body:
            sock.sendall(body)
        return
    bufs = [memoryview(head), memoryview(body)] if body else [memoryview(head)]
    while bufs:
        sent = sock.sendmsg(bufs)
        while bufs and sent >= len(bufs[0]):
            sent -= len(bufs[0])
            bufs.pop(0)
        if bufs and sent:
            bufs[0] = bufs[0][sent:]


GZIP_LEVEL = 1          # zlib level of a gzip answer: 14x smaller expositions at 200 MB/s (level 6: 17x, 83 MB/s)
GZIP_MIN = 1024         # bytes: a shorter answer is sent as it is (the gzip framing would be most of it)


def accepts_gzip(value: str | None) -> bool:
    """True if an Accept-Encoding header value admits gzip (RFC 9110 12.5.3): ``gzip`` (or
    ``x-gzip``) with a q-value above 0, or ``*`` above 0 with gzip not refused by name. Prometheus
    sends ``gzip`` unless its scrape config says ``enable_compression: false`` (then ``identity``)."""
    if not value:
        return False
    named = star = None
    for item in value.split(","):
        coding, _, params = item.partition(";")
        coding = coding.strip().lower()
        q = 1.0
        for param in params.split(";"):
            key, _, val = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(val.strip())
                except ValueError:
                    q = 0.0             # a q-value that is not a number: not an acceptance
        if coding in ("gzip", "x-gzip"):
            named = q if named is None else max(named, q)
        elif coding == "*":
            star = q
    if named is not None:
        return named > 0
    return star is not None and star > 0


def gzipped(resp: Response) -> Response:
    """``resp`` compressed (gzip, one member, GZIP_LEVEL), its pieces joined and compressed a block
    at a time: the answer's memory is the compressed size plus a block, not a whole copy. zlib
    runs without the GIL: the other threads go on meanwhile."""
    packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)
    payload = resp.payload
    out = [packer.compress(block) for block in (_blocks(payload) if isinstance(payload, list) else (payload,))]
    out.append(packer.flush())
    headers = {**resp.headers, "Content-Encoding": "gzip"}
    add_vary(headers, "Accept-Encoding")
    return Response(resp.status, [c for c in out if c], resp.content_type, headers)


def add_vary(headers: dict[str, str], name: str) -> None:
    """Name the request header ``name`` in the answer's Vary header (in place): one Vary field,
    whatever the case of its key, an operator's own names (web config headers) kept, ``*`` left
    alone (it already says every header)."""
    if not name:
        return
    for key, value in headers.items():
        if key.lower() == "vary":
            names = [v.strip().lower() for v in value.split(",")]
            if name.lower() not in names and "*" not in names:
                headers[key] = f"{value}, {name}" if value.strip() else name
            return
    headers["Vary"] = name


def _with_headers(extra: dict[str, str], own: dict[str, str]) -> dict[str, str]:
    """The web config's headers with the handler's on top; the Vary names of both kept in one
    field (the operator's ``Vary: Origin`` and the metrics route's ``Vary: Accept`` alike)."""
    headers = dict(extra)
    for key, value in own.items():
        if key.lower() == "vary":
            for name in value.split(","):
                add_vary(headers, name.strip())
        else:
            headers[key] = value
    return headers


def _head(resp: Response, close: bool, http10: bool = False) -> bytes:
    """The status line and headers; ``http10``: the request was HTTP/1.0, whose client takes an
    answer as the connection's last unless it says ``Connection: keep-alive``."""
    lines = [f"HTTP/1.1 {resp.status} {_REASONS.get(resp.status, '')}",
             "Server: exporter", f"Date: {formatdate(usegmt=True)}",
             f"Content-Type: {resp.content_type}", f"Content-Length: {resp.length()}"]
    lines += [f"{k}: {v}" for k, v in resp.headers.items()]
    if close:
        lines.append("Connection: close")
    elif http10:
        lines.append("Connection: keep-alive")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")


def _response_bytes(resp: Response, head_only: bool, close: bool) -> bytes:
    """A short answer, headers and body in one piece."""
    head = _head(resp, close)
    return head if head_only else head + resp.body


# Request fields that are one value, not a list: a second line is ignored (Go's Header.Get reads the first).
# (Two Authorization lines are joined, and so never match a user: 401, the safe answer.)
_FIRST_LINE_WINS = frozenset({"x-prometheus-scrape-timeout-seconds"})


def _parse_head(data: bytes) -> _Request | tuple[int, str]:
    """The request line and headers (without the blank line), or (status, reason) to refuse it."""
    text = data.decode("latin-1")
    lines = re.split(r"\r?\n", text)
    words = lines[0].split()
    if len(words) != 3 or not words[2].startswith("HTTP/"):
        return 400, f"bad request line {lines[0][:100]!r}"
    method, target, version = words
    try:
        major, minor = (int(x) for x in version[5:].split(".", 1))
    except ValueError:
        return 400, f"bad HTTP version {version[:20]!r}"
    if major != 1:
        return 505, f"HTTP version {version[:20]} not supported"
    if len(lines) - 1 > MAX_HEADERS:
        return 431, "too many headers"
    headers: dict[str, str] = {}
    seen: dict[str, str] = {}       # lower-case name -> the key it is kept under
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            return 400, "bad header line"
        value = value.strip()
        key = seen.setdefault(name.lower(), name)
        if key in headers:          # a field sent in several lines is one list, in order (RFC 9110 5.3)
            if key.lower() in _FIRST_LINE_WINS:
                continue
            value = f"{headers[key]}, {value}" if headers[key] and value else headers[key] or value
        headers[key] = value
    conn = {t.strip() for t in next((v for k, v in headers.items() if k.lower() == "connection"), "").lower().split(",")}
    keep = "close" not in conn and (minor >= 1 or "keep-alive" in conn)
    if "transfer-encoding" in seen or \
            next((v for k, v in headers.items() if k.lower() == "content-length"), "0").strip() != "0":
        keep = False            # a body is never read: the connection cannot carry another request
    return _Request(method, target, version, headers, keep)


class Server:
    """An HTTP/1.1 server for scrapes: one event-loop thread (selectors) accepts connections, runs
    TLS handshakes and reads request headers for every connection without blocking; complete
    requests go to a bounded pool of worker threads (--web.max-requests), which run the route and
    write the answer. An idle or slow connection costs a socket and a buffer, never a thread;
    every phase has a deadline (handshake and headers HEADER_TIMEOUT, idle IDLE_TIMEOUT, writing
    WRITE_TIMEOUT). The interface is socketserver's where the exporters use it: serve_forever,
    shutdown, server_close, server_address, request_queue_size."""

    request_queue_size = LISTEN_BACKLOG

    def __init__(self, sock: socket.socket, serve_request: Callable[..., tuple[Response, bool]],
                 ssl_context: ssl.SSLContext | None, max_requests: int,
                 claim: Callable[[_Request, Callable[[], bool]], object] | None = None,
                 headers: dict[str, str] | None = None):
        """``claim(request, take_slot)``, when the request's route shares answers between
        requests (exporter_common.coalesce): None if it does not for this request; else a token
        for ``serve_request(request, token)`` that waits for an answer in progress (no
        --web.max-requests slot) or leads a new one (``take_slot()`` took a slot for it), or
        CLAIM_REFUSED when there is no slot to lead one."""
        self.socket = sock
        self.server_address = sock.getsockname()
        self.ssl_context = ssl_context
        self._serve_request = serve_request
        self._claim = claim
        self._headers = dict(headers or {})     # the web config's, on the server's own short answers too
        self.max_requests = max_requests
        self._pool = ThreadPoolExecutor(max_workers=max_requests if max_requests > 0 else MAX_WORKERS_UNLIMITED,
                                        thread_name_prefix="http")
        self._sel = selectors.DefaultSelector()
        self._conns: dict[socket.socket, _Conn] = {}
        self._returned: deque[_Conn] = deque()     # connections a worker hands back (kept alive)
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._inflight = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._stopped = threading.Event()
        self._stopped.set()

    # -- the loop ---------------------------------------------------------------------------
    def serve_forever(self, poll_interval: float = 0.5) -> None:
        self._stopped.clear()
        self.socket.setblocking(False)
        self._sel.register(self.socket, selectors.EVENT_READ, None)
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        next_sweep = time.monotonic() + _SWEEP
        try:
            while not self._stop.is_set():
                timeout = min(poll_interval, max(0.0, next_sweep - time.monotonic()))
                for key, events in self._sel.select(timeout):
                    if key.fileobj is self.socket:
                        self._accept()
                    elif key.fileobj is self._wake_r:
                        try:
                            while self._wake_r.recv(4096):
                                pass
                        except OSError:
                            pass
                    else:
                        conn = key.data
                        if conn.state == _BUSY:
                            continue
                        self._step(conn)
                while self._returned:
                    self._resume(self._returned.popleft())
                now = time.monotonic()
                if now >= next_sweep:
                    next_sweep = now + _SWEEP
                    for conn in [c for c in self._conns.values() if c.state != _BUSY and c.deadline <= now]:
                        self._expire(conn)
        finally:
            for fileobj in (self.socket, self._wake_r):
                try:
                    self._sel.unregister(fileobj)
                except (KeyError, ValueError):
                    pass
            self._stopped.set()

    def shutdown(self) -> None:
        self._stop.set()
        self._wake()
        self._stopped.wait()

    def server_close(self) -> None:
        self._stop.set()
        self._wake()
        self.socket.close()
        for conn in list(self._conns.values()):
            if conn.state != _BUSY:
                self._close(conn)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass

    def _accept(self) -> None:
        for _ in range(64):
            try:
                sock, addr = self.socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:       # EMFILE and the like: keep serving the connections we have
                log.warning("accept failed: %s", exc)
                return
            try:
                # Nagle off: a response is one write, but a kept-alive client must not wait for a
                # delayed ACK before the next (Go sets TCP_NODELAY on every connection too)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
            sock.setblocking(False)
            now = time.monotonic()
            if self.ssl_context is not None:
                try:
                    sock = self.ssl_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
                except (ssl.SSLError, OSError) as exc:
                    log.debug("TLS with %s failed: %s", addr, exc)
                    sock.close()
                    continue
                conn = _Conn(sock, addr, _HANDSHAKE, now + HEADER_TIMEOUT)
            else:
                conn = _Conn(sock, addr, _IDLE, now + IDLE_TIMEOUT)
            self._conns[sock] = conn
            self._sel.register(sock, selectors.EVENT_READ, conn)
            if conn.state == _HANDSHAKE:
                self._step(conn)

    def _watch(self, conn: _Conn, write: bool) -> None:
        if conn.want_write != write:
            conn.want_write = write
            self._sel.modify(conn.sock, selectors.EVENT_WRITE if write else selectors.EVENT_READ, conn)

    def _step(self, conn: _Conn) -> None:
        """The connection is readable (or writable during a handshake): move it on."""
        try:
            if conn.state == _HANDSHAKE:
                try:
                    conn.sock.do_handshake()
                except ssl.SSLWantReadError:
                    self._watch(conn, False)
                    return
                except ssl.SSLWantWriteError:
                    self._watch(conn, True)
                    return
                self._watch(conn, False)
                conn.state = _IDLE
                conn.deadline = time.monotonic() + IDLE_TIMEOUT
            if conn.state == _LINGER:
                self._drain(conn)
                return
            self._read(conn)
        except (ssl.SSLError, OSError) as exc:
            log.debug("client %s: connection ended early: %s", conn.addr[0], exc.__class__.__name__)
            self._close(conn)

    def _read(self, conn: _Conn) -> None:
        """At most READS_PER_EVENT reads per readiness event (and what TLS already decrypted), so
        that clients sending at full speed (a header flood) share the loop fairly with the rest."""
        limit = MAX_HEADER_BYTES + 4
        reads = 0
        while reads < READS_PER_EVENT or (isinstance(conn.sock, ssl.SSLSocket) and conn.sock.pending()):
            reads += 1
            try:
                chunk = conn.sock.recv(65536)
            except (BlockingIOError, ssl.SSLWantReadError):
                break
            except ssl.SSLWantWriteError:
                break
            if not chunk:                         # the client is done sending: answer what it sent
                conn.eof = True
                break
            if not conn.buf and not chunk.strip(b"\r\n"):
                continue                          # blank lines between requests are ignored (RFC 9112)
            if conn.state == _IDLE:
                conn.state = _HEADERS
                conn.deadline = time.monotonic() + HEADER_TIMEOUT
            conn.buf += chunk
            if len(conn.buf) > limit:
                break
        self._parse(conn)
        if conn.eof and conn.state in (_IDLE, _HEADERS):
            self._close(conn)

    def _parse(self, conn: _Conn) -> None:
        if conn.state not in (_IDLE, _HEADERS) or not conn.buf:
            return
        while conn.buf[:1] in (b"\r", b"\n"):
            del conn.buf[:1]
        if not conn.buf:
            return
        end = _HEAD_END.search(conn.buf, max(0, conn.scan - 3))
        if end is None or end.start() > MAX_HEADER_BYTES:
            first_line = conn.buf.find(b"\n")
            if (first_line < 0 and len(conn.buf) > MAX_REQUEST_LINE) or first_line > MAX_REQUEST_LINE:
                self._refuse(conn, 414, "request line too long")
            elif len(conn.buf) > MAX_HEADER_BYTES:
                self._refuse(conn, 431, "request header fields too large")
            conn.scan = len(conn.buf)
            return
        head = bytes(conn.buf[:end.start()])
        del conn.buf[:end.end()]
        conn.scan = 0
        if head.find(b"\n") > MAX_REQUEST_LINE or (b"\n" not in head and len(head) > MAX_REQUEST_LINE):
            self._refuse(conn, 414, "request line too long")
            return
        request = _parse_head(head)
        if isinstance(request, tuple):
            self._refuse(conn, *request)
            return
        token = None
        if self._claim is not None:
            try:
                token = self._claim(request, self._take_slot)
            except Exception as exc:     # never the loop's end: served the ordinary way
                log.error("client %s: claim failed: %s: %s", conn.addr[0], type(exc).__name__, exc)
        if token is None:
            full = not self._take_slot()
        else:                       # a request that waits for an answer in progress costs no slot
            full = token is CLAIM_REFUSED
        if full:
            body = b"too many concurrent requests (--web.max-requests)\n"
            self._answer_and_close(conn, Response(503, body, headers=dict(self._headers)), request.method == "HEAD")
            return
        if conn.eof:
            request.keep_alive = False
        conn.state = _BUSY
        self._sel.unregister(conn.sock)
        conn.want_write = False
        self._pool.submit(self._work, conn, request, token)

    def _take_slot(self) -> bool:
        with self._lock:
            if self.max_requests > 0 and self._inflight >= self.max_requests:
                return False
            self._inflight += 1
            return True

    # -- workers -----------------------------------------------------------------------------
    def _work(self, conn: _Conn, request: _Request, token=None) -> None:
        keep = False
        counted = token is None or token.leads
        try:
            resp, head_only = self._serve_request(request) if token is None else self._serve_request(request, token)
            keep = request.keep_alive and not self._stop.is_set()
            head = _head(resp, close=not keep, http10=request.version == "HTTP/1.0")
            conn.sock.settimeout(WRITE_TIMEOUT)
            _send_response(conn.sock, head, b"" if head_only else resp.payload)
            conn.sock.setblocking(False)
        except (ConnectionError, TimeoutError, socket.timeout, ssl.SSLError, OSError) as exc:
            log.debug("client %s: connection ended early: %s", conn.addr[0], exc.__class__.__name__)
            keep = False
        except Exception as exc:     # never a traceback on stderr for one request
            log.error("client %s: request failed: %s: %s", conn.addr[0], type(exc).__name__, exc)
            keep = False
        finally:
            if counted:
                with self._lock:
                    self._inflight -= 1
        if keep:
            self._returned.append(conn)
        else:
            self._close_sock(conn.sock)
            self._returned.append(conn)     # the loop forgets it
        self._wake()

    def _resume(self, conn: _Conn) -> None:
        if conn.sock.fileno() < 0:
            self._conns.pop(conn.sock, None)
            return
        conn.state = _IDLE if not conn.buf.strip(b"\r\n") else _HEADERS
        conn.deadline = time.monotonic() + (IDLE_TIMEOUT if conn.state == _IDLE else HEADER_TIMEOUT)
        try:
            self._sel.register(conn.sock, selectors.EVENT_READ, conn)
        except (ValueError, KeyError, OSError):
            self._close(conn)
            return
        self._parse(conn)           # a pipelined request already read
        if conn.state in (_IDLE, _HEADERS) and isinstance(conn.sock, ssl.SSLSocket) and conn.sock.pending():
            self._step(conn)

    # -- refusals and closing ----------------------------------------------------------------
    def _refuse(self, conn: _Conn, status: int, reason: str) -> None:
        log.debug("client %s: %d %s", conn.addr[0], status, reason)
        resp = Response(status, (reason + "\n").encode(), headers=dict(self._headers))
        if status in (408, 431):
            self._answer_and_linger(conn, resp)
        else:
            self._answer_and_close(conn, resp, False)

    def _send_now(self, conn: _Conn, data: bytes) -> bool:
        """A short answer written from the loop: what the socket takes at once (a client that does
        not read a few hundred bytes loses them)."""
        try:
            conn.sock.send(data)
            return True
        except (ssl.SSLError, OSError):
            return False

    def _answer_and_close(self, conn: _Conn, resp: Response, head_only: bool) -> None:
        self._send_now(conn, _response_bytes(resp, head_only, close=True))
        self._close(conn)

    def _answer_and_linger(self, conn: _Conn, resp: Response) -> None:
        """Answer, half-close, then read and drop what the client still sends for a moment, so
        that closing with unread data (a TCP reset) does not destroy the answer before the client
        reads it (Go's closeWriteAndWait does the same). Bounded in time and bytes."""
        if not self._send_now(conn, _response_bytes(resp, False, close=True)):
            self._close(conn)
            return
        try:
            conn.sock.shutdown(socket.SHUT_WR)    # (TLS: what follows is read as raw bytes, and dropped)
        except OSError:
            self._close(conn)
            return
        conn.buf = bytearray()
        conn.state = _LINGER
        conn.deadline = time.monotonic() + LINGER_SECONDS
        self._drain(conn)

    def _drain(self, conn: _Conn) -> None:
        reads = 0
        while conn.drained < LINGER_BYTES:
            reads += 1
            if reads > READS_PER_EVENT:
                return
            try:
                n = len(conn.sock.recv(65536))
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return
            except (ssl.SSLError, OSError):
                break
            if not n:
                break
            conn.drained += n
        self._close(conn)

    def _expire(self, conn: _Conn) -> None:
        if conn.state == _HEADERS:
            self._answer_and_linger(conn, Response(408, b"request headers not received in time\n",
                                                   headers=dict(self._headers)))
        else:                            # idle, handshake never finished, linger over
            self._close(conn)

    def _close(self, conn: _Conn) -> None:
        self._conns.pop(conn.sock, None)
        try:
            self._sel.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        self._close_sock(conn.sock)

    @staticmethod
    def _close_sock(sock) -> None:
        try:
            sock.close()
        except OSError:
            pass


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
                max_requests: int = DEFAULT_MAX_REQUESTS, compression: bool = True) -> Server:
    """max_requests: requests served at once (0: no limit); more get 503 at once, as with
    node_exporter's --web.max-requests, so a burst cannot pile up threads and memory.
    compression: gzip a 200 answer of GZIP_MIN bytes or more to a client that accepts it
    (--web.disable-compression: never)."""
    auth = _AuthCache(web.users)
    extra_headers = dict(web.headers)

    def claim(request: _Request, take_slot: Callable[[], bool]):
        """In the event loop: for a GET/HEAD with good (already checked) credentials to a route
        that shares answers between requests, CoalescedRoute.claim; else None."""
        if request.method not in ("GET", "HEAD"):
            return None
        url = urlsplit(request.target)
        route_claim = getattr(routes.get(url.path), "claim", None)
        if route_claim is None or not auth.known_good(
                next((v for k, v in request.headers.items() if k.lower() == "authorization"), None)):
            return None
        return route_claim(parse_qs(url.query), dict(request.headers), take_slot)

    def serve_request(request: _Request, token=None) -> tuple[Response, bool]:
        head_only = request.method == "HEAD"
        if request.method not in ("GET", "HEAD"):
            return Response(501, f"Unsupported method ({request.method!r})\n".encode(),
                            headers=extra_headers), False
        if not auth.check(next((v for k, v in request.headers.items() if k.lower() == "authorization"), None)):
            return Response(401, b"Unauthorized\n", headers={**extra_headers,
                                                             "WWW-Authenticate": 'Basic realm="exporter"'}), head_only
        url = urlsplit(request.target)
        handler = routes.get(url.path)
        if handler is None:
            return Response(404, b"Not Found\n", headers=extra_headers), head_only
        try:
            if token is None:
                resp = handler(parse_qs(url.query), dict(request.headers))
            else:
                resp = handler.joined(token, parse_qs(url.query), dict(request.headers))
        except Exception:  # never let a handler kill the connection silently
            log.exception("handler for %s failed", url.path)
            resp = Response(500, b"internal error, see exporter log\n")
        resp = Response(resp.status, resp.payload, resp.content_type, _with_headers(extra_headers, resp.headers))
        if compression and resp.status == 200 and resp.length() >= GZIP_MIN \
                and not any(k.lower() == "content-encoding" for k in resp.headers):
            add_vary(resp.headers, "Accept-Encoding")     # gzip or not, this answer depends on Accept-Encoding
            if accepts_gzip(next((v for k, v in request.headers.items() if k.lower() == "accept-encoding"), None)):
                resp = gzipped(resp)    # a HEAD too: the same headers (and Content-Length) as the GET's
        return resp, head_only

    host, port = parse_listen_address(listen)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    if host == "":
        family = socket.AF_INET6 if socket.has_ipv6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6 and host == "":
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind((host, port))
        sock.listen(LISTEN_BACKLOG)
    except OSError as exc:
        sock.close()
        raise ConfigError("--web.listen-address", None, f"cannot listen on {listen}: {exc.strerror}") from None
    return Server(sock, serve_request, web.ssl_context, max_requests, claim, web.headers)
