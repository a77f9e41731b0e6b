"""Reading the generated dashboards: panels (rows included), targets, variables, links."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
JSON_DIR = REPO / "dashboards" / "json"


def load_all() -> dict[str, dict]:
    boards = {}
    for path in sorted(JSON_DIR.glob("*.json")):
        boards[path.stem] = json.loads(path.read_text(encoding="utf-8"))
    return boards


def panels(board: dict) -> list[dict]:
    """Every panel, rows' nested panels included, rows themselves excluded."""
    out = []
    for p in board.get("panels", []):
        if p.get("type") == "row":
            out.extend(p.get("panels", []))
        else:
            out.append(p)
    return out


@dataclass(frozen=True)
class Target:
    uid: str
    panel: str
    ref: str
    expr: str
    instant: bool
    repeat: str | None


def targets(boards: dict[str, dict]) -> list[Target]:
    out = []
    for uid, b in boards.items():
        for p in panels(b):
            for t in p.get("targets", []):
                out.append(Target(uid, p.get("title", ""), t.get("refId", ""), t["expr"],
                                  bool(t.get("instant")), p.get("repeat")))
    return out


def variables(board: dict) -> list[dict]:
    return board.get("templating", {}).get("list", [])


def custom_options(var: dict) -> list[tuple[str, str]]:
    """Grafana's custom-variable syntax: comma-separated, each 'text : value' or a bare value."""
    out = []
    for part in re.findall(r"(?:\\,|[^,])+", var.get("query", "")):
        part = part.strip().replace("\\,", ",")
        m = re.match(r"^\s*(.+)\s:\s(.+)$", part)
        out.append((m.group(1).strip(), m.group(2).strip()) if m else (part, part))
    return out


LINK_UID = re.compile(r"/d/([A-Za-z0-9_-]+)")


def link_targets(board: dict, all_boards: dict[str, dict]) -> set[str]:
    """uids a dashboard links to: URL links (/d/<uid>) and tag-based dashboard lists."""
    found = set()
    links = list(board.get("links", []))
    for p in panels(board):
        links += p.get("links", [])
        for o in p.get("fieldConfig", {}).get("defaults", {}).get("links", []) or []:
            links.append(o)
    for link in links:
        if link.get("type") == "dashboards":
            tags = set(link.get("tags") or [])
            found |= {u for u, b in all_boards.items() if tags <= set(b.get("tags", []))}
        for m in LINK_UID.finditer(link.get("url", "")):
            found.add(m.group(1))
    return found
