"""The one table of Oracle and driver errors oracle-exporter acts on: code -> meaning, what it
tells the exporter, and whether (and how) it tries again.

Kept beside the view registry (oracle_exporter.views reads the fallback codes from here) and
imported by everything that needs a code: the live source (call timeouts, fallbacks), the
exporter (the grant a failed view needs) and oracle_exporter.sources (the fixed
``reason`` label of ``oracle_last_error_info``). Nothing here imports the package.

``on``: ``connect`` (the logon or the session failed: the whole fetch fails with ``reason``),
``view`` (one statement failed: only the collectors reading that view fail), ``call`` (a
statement ran out of time: the fetch stops there), ``logon warning`` (the logon succeeded with a
warning: oracle_password_expiring).

``retry`` says how the exporter tries again:

* ``backoff``: reconnect after 1 s, 2 s, 4 s ... up to ``reconnect_backoff_max_seconds``;
* ``new credentials`` (NEW_CREDENTIALS): the logon was refused for its credentials (wrong
  password, locked or expired account, no CREATE SESSION, ORA-01031 at logon: no SYSDG / SYSBACKUP
  privilege for the configured mode): never tried again with the same
  ones. A wrong password retried on the backoff is a failed logon every minute, and the 10th
  locks the account on the DEFAULT profile (FAILED_LOGIN_ATTEMPTS 10). The live source reads
  the password again (password_file / password_env) at every fetch and tries once more when it
  changed (its content: refusals.RefusalStore, kept across restarts), or once on a reload
  (SIGHUP, after unlocking the account; at most 3 an hour);
* ``fallback``: read the view's registered fallback for the rest of the session;
* ``fallback, recheck``: the same, but the view itself is tried again every
  FALLBACK_RETRY_SECONDS, because the error may be a missing grant that a DBA adds later;
* ``next fetch``: nothing is cached, the next scrape tries again;
* ``keep session``: the session stays (a call timeout on a healthy session).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# A fallback taken on an error that may be a missing grant is re-checked this often.
FALLBACK_RETRY_SECONDS = 600.0


@dataclass(frozen=True)
class OraError:
    code: str                  # ORA-nnnnn, or a driver code: DPY-nnnn, DPI-nnnn
    meaning: str
    on: str                    # connect | view | call
    reason: str = ""           # oracle_last_error_info{reason} when it fails a fetch
    retry: str = "backoff"
    missing_view: bool = False     # the view does not exist on this release (or is not visible)
    missing_column: bool = False   # a column this release does not have
    grant: bool = False            # on a view this release has: the monitoring user lacks the grant
    timeout: bool = False          # a call that ran out of time
    expiring: bool = False         # a warning on a successful logon: the password expires soon


# retry value of the logons refused for their credentials (see the module doc)
NEW_CREDENTIALS = "new credentials"


ERRORS: tuple[OraError, ...] = (
    # -- one view ------------------------------------------------------------------------
    OraError("ORA-00942", "table or view does not exist", "view", retry="fallback, recheck",
             missing_view=True, grant=True),
    OraError("ORA-04043", "object does not exist", "view", retry="fallback, recheck", missing_view=True, grant=True),
    OraError("ORA-00904", "invalid identifier: a column this release does not have", "view", retry="fallback",
             missing_column=True),
    # a MOUNTED database (a physical standby) or a closed PDB: only fixed tables and views (V$, GV$)
    # answer; a data dictionary view (DBA_, CDB_) is skipped, not an error (issue 22)
    OraError("ORA-01219", "database or pluggable database not open: queries allowed on fixed tables or views only",
             "view", retry="next fetch"),
    # at logon refused for its credentials (the user lacks the privilege its mode needs): tried again
    # only with new ones or on a reload, like ORA-01017, whose reason it shares
    OraError("ORA-01031", "insufficient privileges (on a view: a missing grant; at logon: no CREATE SESSION "
                          "or the SYSDG/SYSBACKUP privilege)", "connect", "logon denied", NEW_CREDENTIALS,
             grant=True),
    # -- calls ---------------------------------------------------------------------------
    OraError("DPY-4024", "call timeout exceeded (thin mode)", "call", "timeout", "keep session", timeout=True),
    OraError("DPI-1067", "call timeout exceeded (thick mode)", "call", "timeout", "keep session", timeout=True),
    OraError("ORA-03156", "OCI call timed out", "call", "timeout", "keep session", timeout=True),
    # -- the logon and the session -------------------------------------------------------
    OraError("ORA-12541", "no listener", "connect", "connection refused"),
    OraError("ORA-12545", "target host or object does not exist", "connect", "name not resolved"),
    OraError("DPY-6006", "cannot resolve the host name", "connect", "name not resolved"),
    OraError("ORA-12543", "destination host unreachable", "connect", "host unreachable"),
    OraError("ORA-12170", "connect timeout occurred", "connect", "connect timeout"),
    OraError("ORA-12535", "operation timed out", "connect", "connect timeout"),
    # refused for the credentials: tried again only with new ones (each try with a wrong
    # password is a failed logon the profile counts; ten lock the account)
    OraError("ORA-01017", "invalid username/password; logon denied", "connect", "logon denied", NEW_CREDENTIALS),
    # each its own reason (issue 22): a missing grant (password right) must not read as a wrong password
    OraError("ORA-01005", "null password given; logon denied", "connect", "null password", NEW_CREDENTIALS),
    OraError("ORA-01045", "user lacks CREATE SESSION privilege", "connect", "no create session privilege",
             NEW_CREDENTIALS),
    OraError("ORA-28009", "connection as SYS should be as SYSDBA or SYSOPER", "connect",
             "sys must connect as sysdba", NEW_CREDENTIALS),
    OraError("ORA-28000", "the account is locked", "connect", "account locked", NEW_CREDENTIALS),
    OraError("ORA-28001", "the password has expired", "connect", "password expired", NEW_CREDENTIALS),
    # warnings on a successful logon (python-oracledb: Connection.warning): the session works
    OraError("ORA-28002", "the password will expire within N days (grace period)", "logon warning",
             retry="none", expiring=True),
    OraError("ORA-28011", "the account will expire soon; change the password now", "logon warning",
             retry="none", expiring=True),
    OraError("ORA-12514", "listener does not know of the service", "connect", "unknown service"),
    OraError("ORA-12505", "listener does not know of the SID", "connect", "unknown service"),
    OraError("DPY-6001", "the service is not registered with the listener", "connect", "unknown service"),
    OraError("DPY-6003", "the SID is not registered with the listener", "connect", "unknown service"),
    OraError("DPY-6000", "the listener refused the connection", "connect", "listener refused"),
    OraError("ORA-12516", "listener could not find an available handler", "connect", "listener refused"),
    OraError("ORA-12518", "listener could not hand off the connection", "connect", "listener refused"),
    OraError("ORA-12519", "no appropriate service handler found", "connect", "listener refused"),
    OraError("ORA-12520", "listener could not find a handler for the server type", "connect", "listener refused"),
    OraError("ORA-12528", "all instances are blocking new connections", "connect", "listener refused"),
    OraError("ORA-01033", "initialization or shutdown in progress", "connect", "database not open"),
    OraError("ORA-01034", "Oracle not available", "connect", "database not open"),
    OraError("ORA-01089", "immediate shutdown or close in progress", "connect", "database not open"),
    OraError("ORA-01090", "shutdown in progress", "connect", "database not open"),
    OraError("ORA-12526", "all instances are in restricted mode", "connect", "database not open"),
    OraError("DPY-3001", "Native Network Encryption is only supported in thick mode", "connect",
             "encryption required"),
    OraError("DPY-4000", "cannot find the connect alias in tnsnames.ora", "connect", "alias not resolved"),
    OraError("DPY-4026", "cannot open the tnsnames.ora file", "connect", "alias not resolved"),
    OraError("DPY-4027", "no configuration directory to search for tnsnames.ora", "connect", "alias not resolved"),
    OraError("ORA-12154", "could not resolve the connect identifier", "connect", "alias not resolved"),
    OraError("DPY-2018", "TLS: cannot read the wallet / certificate", "connect", "tls failed"),
    OraError("ORA-28759", "failure to open the wallet file", "connect", "tls failed"),
    OraError("ORA-28860", "fatal SSL error", "connect", "tls failed"),
    OraError("ORA-29024", "certificate validation failure", "connect", "tls failed"),
    OraError("ORA-29106", "cannot import the PKCS12 wallet", "connect", "tls failed"),
    OraError("ORA-28865", "SSL connection closed", "connect", "tls failed"),
    OraError("DPY-4011", "the database or network closed the connection", "connect", "session lost"),
    OraError("ORA-03113", "end-of-file on communication channel", "connect", "session lost"),
    OraError("ORA-03114", "not connected to Oracle", "connect", "session lost"),
    OraError("ORA-03135", "connection lost contact", "connect", "session lost"),
    OraError("DPY-1001", "not connected to a database", "connect", "session lost"),
)

BY_CODE: dict[str, OraError] = {e.code: e for e in ERRORS}
if len(BY_CODE) != len(ERRORS):
    raise RuntimeError("an error code is listed twice in oracle_exporter.ora_errors.ERRORS")


def codes(flag: str) -> tuple[str, ...]:
    """The codes with that flag set (missing_view, missing_column, grant, timeout), table order."""
    return tuple(e.code for e in ERRORS if getattr(e, flag))


MISSING_VIEW = codes("missing_view")       # ("ORA-00942", "ORA-04043")
MISSING_COLUMN = codes("missing_column")   # ("ORA-00904",)
GRANT_CODES = codes("grant")               # ("ORA-00942", "ORA-04043", "ORA-01031")
TIMEOUT_CODES = codes("timeout")           # ("DPY-4024", "DPI-1067", "ORA-03156")
NOT_OPEN = ("ORA-01219",)                 # a view skipped (not an error) on a database not open
EXPIRING_CODES = codes("expiring")         # ("ORA-28002", "ORA-28011")

_CODE = re.compile(r"\b((?:ORA|DPY|DPI|TNS)-\d{4,5})\b")
# python-oracledb thin mode words a listener's REFUSE (ERR=n) "DPY-6000: Listener refused
# connection. (Similar to ORA-n)", n unpadded: the refusal means what ORA-n means.
_SIMILAR = re.compile(r"\(Similar to ORA-(\d{1,5})\)")


def similar_form(code: str) -> str:
    """How the thin driver quotes an ORA- code in a listener refusal: "(Similar to ORA-1017)"."""
    return f"(Similar to ORA-{int(code[4:])})"


def entry(text: str) -> OraError | None:
    """The table's entry for a failure text: the code a listener refusal is similar to, else
    the first code of the text the table knows (a connect error reads "DPY-6005: cannot connect
    to database.; <the cause>"); None when it names none."""
    m = _SIMILAR.search(text or "")
    if m and f"ORA-{int(m.group(1)):05d}" in BY_CODE:
        return BY_CODE[f"ORA-{int(m.group(1)):05d}"]
    return next((BY_CODE[c] for c in _CODE.findall(text or "") if c in BY_CODE), None)


def retry_for(text: str) -> str:
    """How a failed connect is tried again (the ``retry`` of its entry; ``backoff`` for a text
    the table does not know: sockets, timeouts)."""
    e = entry(text)
    return e.retry if e is not None and e.on == "connect" else "backoff"


def error_code(text: str) -> str:
    """The first ORA-/DPY-/DPI-/TNS- code in an error text, "other" when it has none."""
    m = _CODE.search(text or "")
    return m.group(1) if m else "other"


# Failures that carry no code of their own (socket errors, the exporter's own words), and the
# reason each gives, checked together with the codes of the table.
_TEXTS: dict[str, tuple[str, ...]] = {
    "recording changed": ("the recording changed under the replay",),
    "recording unreadable": ("replay: ",),
    "connection refused": ("Connection refused", "[Errno 111]"),
    "name not resolved": ("Name or service not known", "nodename nor servname", "[Errno -2]", "[Errno -3]",
                          "[Errno -5]", "Temporary failure in name resolution"),
    "host unreachable": ("No route to host", "Network is unreachable", "[Errno 113]", "[Errno 101]"),
    "logon timeout": ("the logon did not complete",),
    "connect timeout": ("DPY-6005: cannot connect to database.; timed out", "timed out"),
    "encryption required": ("Native Network Encryption",),
    "tls failed": ("[SSL",),
    # the listener closed the connection during the logon (before the session existed)
    "connection closed": ("cannot connect to database.; DPY-4011", "cannot connect to database.; [Errno 104]",
                          "Connection reset by peer"),
    "timeout": ("timeout:", "no snapshot within"),
    "session lost": ("session lost",),
}

# Checked in this order, first match wins; so "connection closed" (DPY-4011 during the logon)
# is told apart from "session lost" (DPY-4011 on a working session).
REASON_ORDER = ("recording changed", "recording unreadable", "connection refused", "name not resolved",
                "host unreachable", "logon timeout", "connect timeout", "logon denied", "null password",
                "no create session privilege", "sys must connect as sysdba", "account locked", "password expired",
                "unknown service", "listener refused", "database not open", "encryption required",
                "alias not resolved", "tls failed", "connection closed", "timeout", "session lost")


def reason_patterns() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(reason, patterns) in REASON_ORDER: the texts above and every code of that reason (an
    ORA- code also as a listener refusal quotes it: "(Similar to ORA-1017)")."""
    known = set(REASON_ORDER)
    stray = {e.reason for e in ERRORS if e.reason} - known
    if stray:
        raise RuntimeError(f"reasons {sorted(stray)} are missing from REASON_ORDER")
    return tuple((r, _TEXTS.get(r, ()) + tuple(p for e in ERRORS if e.reason == r for p in
                                               (e.code, *((similar_form(e.code),) if e.code.startswith("ORA-")
                                                          else ()))))
                 for r in REASON_ORDER)
