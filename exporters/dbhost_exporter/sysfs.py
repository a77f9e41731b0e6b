"""Small, exception-free readers for procfs/sysfs files.

Real sysfs attributes are short text files; a scrape must survive any of them
being missing, unreadable, truncated or garbage. Every helper returns None
instead of raising, so a collector decides what a missing value means.
"""
from __future__ import annotations

import os
import stat


def read_text(path: str) -> str | None:
    """The whole file as text (undecodable bytes replaced), or None if it cannot be read."""
    try:  # os.open/os.read: no buffered file object per read, ~2x cheaper for tiny sysfs files
        # O_NONBLOCK: a FIFO (or device node) where a file is expected must not hang the scrape
        # in open(); it is then no regular file and reads as unreadable, like node_exporter should.
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            if len(chunks) > 64:   # no sysfs/procfs file we read is anywhere near 4 MiB
                break
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "replace")


def read_str(path: str) -> str | None:
    """A one-value attribute, surrounding whitespace (sysfs pads vendor/model) stripped."""
    text = read_text(path)
    if text is None:
        return None
    return text.strip()


def parse_int(text: str | None) -> int | None:
    """Decimal, or hexadecimal with 0x (SCSI iorequest_cnt/iodone_cnt/ioerr_cnt are
    printed as ``0x%x``). Anything else, or a negative number, is None."""
    if text is None:
        return None
    text = text.strip()
    if not text:
        return None
    try:
        if text[:2] in ("0x", "0X"):
            value = int(text[2:], 16)
        else:
            value = int(text, 10)
    except ValueError:
        return None
    return value if value >= 0 else None


def read_int(path: str) -> int | None:
    return parse_int(read_text(path))


def listdir(path: str) -> list[str]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def check_mount_point(path: str, option: str) -> None:
    """A --path.* value must name an existing, readable directory: a mistyped one would otherwise
    serve success 1 with nothing in it. ConfigError (exit 2, one line) if not. An existing
    directory without what the collectors look for is reported by them (a warning once when
    there are no block devices or no processes; a failure when /proc/diskstats is missing
    while there are devices)."""
    from exporter_common.config import ConfigError   # noqa: PLC0415 (keeps this module import-light)
    if not os.path.isdir(path):
        what = "does not exist" if not os.path.exists(path) else "is not a directory"
        raise ConfigError(option, None, f"{path} {what}")
    if not os.access(path, os.R_OK | os.X_OK):
        raise ConfigError(option, None, f"{path} cannot be read")
