"""rev-views #4, in headless Chromium: in the dense layout (more than wallboard.DENSE tiles) the
names of the tiles that matter are not cut: 8-character DB_NAMEs (WMSPRD01 / WMSPRD02), a
DB_UNIQUE_NAME like HRPRD_STBY, RAC nodes racnode01 / racnode02 must read in full beside their
state, and 222 databases and 154 hosts still fit one 1920x1080 screen. The page is the real
render(); a measuring script is appended to a copy (the page itself has none)."""
from __future__ import annotations

import json
import re

import pytest

from browser_support import chromium as require_chromium
from browser_support import dump_dom
from fleetview import wallboard
from fleetview.core import load_spec

pytestmark = pytest.mark.slow

NAMES = ["WMSPRD01", "WMSPRD02", "HRPRD_STBY", "HRPRD_PRIM", "FINPRD_DG2"]
HOSTS = ["racnode01", "racnode02", "db01.dc1", "db01.dc2"]

MEASURE = """<script>
const out = {cut: [], height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth};
for (const a of document.querySelectorAll('a.t.dense')) {
  const s = a.querySelector('span');
  if (s.scrollWidth > s.clientWidth) out.cut.push(a.dataset.name);
}
const pre = document.createElement('pre'); pre.id = 'measure'; pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"""


def test_dense_tiles_show_whole_names_and_fit_the_screen(tmp_path):
    require_chromium()
    levels = [2, 1, 3, 0]
    dbs = [wallboard.Tile(n, "database", levels[i % 4]) for i, n in enumerate(NAMES)]
    dbs += [wallboard.Tile(f"DB{i:03d}PRD", "database", 0) for i in range(222 - len(NAMES))]
    hosts = [wallboard.Tile(n, "host", 2) for n in HOSTS] + [wallboard.Tile(f"dbhost{i:03d}", "host", 0)
                                                             for i in range(154 - len(HOSTS))]
    board = wallboard.Board(dbs, hosts, [], [])
    page = wallboard.render(board, load_spec(), "http://prom:9090")
    assert '<main class="dense">' in page
    (tmp_path / "wb.html").write_text(page.replace("</body>", MEASURE + "</body>"))
    dom = dump_dom((tmp_path / "wb.html").as_uri(), tmp_path / "chromium")
    got = json.loads(re.search(r'<pre id="measure">(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"'))
    assert [n for n in got["cut"] if n in NAMES + HOSTS] == [], got["cut"]
    assert got["height"] <= 1080 and got["width"] <= 1920, got
