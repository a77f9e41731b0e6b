"""Headless Chromium for the end-to-end tests of the Grafana-free pages (issue 25): the page
as the browser built it (--dump-dom) and a screenshot (--screenshot), from Debian's chromium
package (`make deps` installs it), no WebDriver. Every Chromium runs in its own session with a
fresh profile under the test's tmp dir and its whole process group is killed when it returns,
so no browser process outlives a test.

`Element`/`parse` turn the dumped DOM into a small tree to query (html.parser, no dependency)."""
from __future__ import annotations

import os
import shutil
import signal
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

# Chromium on this machine's closed network: no background connections, no first-run, no GPU
# (the flags docs/ and .library's notes give for headless Chromium as root).
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars", "--mute-audio"]


def chromium() -> str:
    """The chromium binary, or skip naming the package that brings it."""
    exe = shutil.which("chromium") or ("/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None)
    if not exe:
        pytest.skip("chromium not installed (Debian package chromium; `make deps` installs it)")
    return exe


def _run(args: list[str], workdir: Path, timeout: float = 90) -> subprocess.CompletedProcess:
    workdir.mkdir(parents=True, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=workdir)
    argv = [chromium(), *FLAGS, f"--user-data-dir={profile}", *args]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=workdir)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        out, err = "", f"chromium timed out after {timeout}s"
    finally:
        try:                      # renderer, zygote, utility processes: the whole group
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(10)
        shutil.rmtree(profile, ignore_errors=True)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def dump_dom(url: str, workdir: Path, size: tuple[int, int] = (1920, 1080)) -> str:
    """The page's DOM after Chromium loaded it (document.documentElement.outerHTML)."""
    res = _run([f"--window-size={size[0]},{size[1]}", "--dump-dom", url], workdir)
    assert res.returncode == 0 and "<html" in res.stdout, f"chromium --dump-dom {url}: {res.stderr[-2000:]}"
    return res.stdout


def screenshot(url: str, path: Path, workdir: Path, size: tuple[int, int] = (1920, 1080)) -> Path:
    """A PNG of the page as Chromium drew it in a window of `size`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    res = _run([f"--window-size={size[0]},{size[1]}", f"--screenshot={path}", url], workdir)
    assert res.returncode == 0 and path.is_file(), f"chromium --screenshot {url}: {res.stderr[-2000:]}"
    assert png_size(path) == size, (path, png_size(path))
    return path


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def keep_for_docs(shot: Path, name: str) -> None:
    """UPDATE_DOCS_SCREENSHOTS=1: copy a screenshot to docs/img/ (the ones docs/fleetview.md shows)."""
    if os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1":
        dest = Path(__file__).resolve().parents[2] / "docs" / "img" / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, dest)


# ---------------------------------------------------------------- the dumped DOM

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Element:
    tag: str
    attrs: dict
    children: list = field(default_factory=list)    # Element or str

    def text(self) -> str:
        return " ".join("".join(c if isinstance(c, str) else " " + c.text() + " " for c in self.children).split())

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Element):
                yield from c.iter()

    def find_all(self, tag: str | None = None, **attrs) -> list["Element"]:
        """Descendants (and self) with this tag and these attribute values; class_ matches one class."""
        out = []
        for e in self.iter():
            if tag and e.tag != tag:
                continue
            ok = True
            for k, v in attrs.items():
                if k == "class_":
                    ok = v in (e.attrs.get("class") or "").split()
                else:
                    ok = e.attrs.get(k.replace("_", "-")) == v
                if not ok:
                    break
            if ok:
                out.append(e)
        return out

    def find(self, tag: str | None = None, **attrs) -> "Element":
        found = self.find_all(tag, **attrs)
        assert found, f"no <{tag or '*'} {attrs}> in the page"
        return found[0]


class _Builder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        e = Element(tag, {k: (v or "") for k, v in attrs})
        self.stack[-1].children.append(e)
        if tag not in _VOID:
            self.stack.append(e)

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse(html: str) -> Element:
    b = _Builder()
    b.feed(html)
    b.close()
    return b.root
