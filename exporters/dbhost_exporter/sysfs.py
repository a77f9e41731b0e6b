"""Small, exception-free readers for procfs/sysfs files.

Real sysfs attributes are short text files; a scrape must survive any of them
being missing, unreadable, truncated or garbage. Every helper returns None
instead of raising, so a collector decides what a missing value means.
"""
from __future__ import annotations

import os

_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK
_CHUNK = 65536


def read_text(path: str) -> str | None:
    """The whole file as text (undecodable bytes replaced), or None if it cannot be read.

    For files of any length (``/proc/diskstats``, ``arcstats``, ``/proc/meminfo``): a procfs
    seq_file answers at most one kernel buffer (a page) per read, so a short read is not the end;
    it reads until a read returns nothing. No fstat: O_NONBLOCK keeps a FIFO where a file is
    expected from hanging the scrape in open() (without a writer it reads as empty, which every
    caller treats like a missing value); a directory fails the read (EISDIR) and reads as None;
    an endless character device is cut after 4 MiB."""
    try:
        fd = os.open(path, _FLAGS)
    except (OSError, ValueError):
        return None
    try:
        chunks = []
        while len(chunks) <= 64:   # no sysfs/procfs file we read is anywhere near 4 MiB
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "replace")


def read_attr(path: str) -> str | None:
    """A sysfs attribute (or a sysctl) as text, or None if it cannot be read: one open, ONE read
    and close, the cheapest way (about 3 system calls, no fstat). A sysfs attribute is at most
    one page (its show() writes into a PAGE_SIZE buffer: Documentation/filesystems/sysfs.rst) and
    kernfs hands all of it to the first read, so one read of 64 KiB (the largest page size) is the
    whole file; a longer regular file standing in for one (a test tree) is read to its end. Same
    FIFO / directory behaviour as read_text."""
    try:
        fd = os.open(path, _FLAGS)
    except (OSError, ValueError):
        return None
    try:
        data = os.read(fd, _CHUNK)
        if len(data) == _CHUNK:   # not a sysfs attribute: read the rest like read_text
            chunks = [data]
            while len(chunks) <= 64:
                data = os.read(fd, _CHUNK)
                if not data:
                    break
                chunks.append(data)
            data = b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace")


def read_str(path: str) -> str | None:
    """A one-value attribute, surrounding whitespace (sysfs pads vendor/model) stripped."""
    text = read_attr(path)
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
    return parse_int(read_attr(path))


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
