"""Build every dashboard of the pack as Grafana JSON (with grafana-foundation-sdk).

    from mixin.dashboards.build import build_all, render
    boards = build_all(cfg)        # {uid: dashboard JSON model}
    render(boards["oracle-redo"])  # the file text (sorted keys, 2-space indent)

mixin.generate writes them to dashboards/json/<uid>.json.
"""
from __future__ import annotations

import json

from grafana_foundation_sdk.cog.encoder import JSONEncoder

from mixin.config import Config
from mixin.dashboards import capacity, host_boards, oracle_boards, wallboard

BUILDERS = {
    "oracle-wallboard": wallboard.build,
    "oracle-capacity": capacity.build,
    "oracle-redo": oracle_boards.redo,
    "oracle-waits": oracle_boards.waits,
    "oracle-memory": oracle_boards.memory,
    "host-storage": host_boards.storage,
    "host-cpu": host_boards.cpu,
    "host-zfs": host_boards.zfs,
}


def _number_panels(board: dict) -> dict:
    """Stable panel ids in layout order (Grafana needs them unique; the SDK leaves them unset)."""
    for i, panel in enumerate(board.get("panels", []), start=1):
        panel["id"] = i
    return board


def build_all(cfg: Config) -> dict[str, dict]:
    boards = {}
    for uid, fn in BUILDERS.items():
        board = json.loads(json.dumps(fn(cfg).build(), cls=JSONEncoder))
        if board.get("uid") != uid:
            raise RuntimeError(f"dashboard builder for {uid} produced uid {board.get('uid')!r}")
        boards[uid] = _number_panels(board)
    return boards


def render(board: dict) -> str:
    return json.dumps(board, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
