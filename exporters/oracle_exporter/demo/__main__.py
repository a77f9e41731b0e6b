"""``python -m oracle_exporter.demo``: write every demo recording that is missing (``make demo``)."""
from __future__ import annotations

import sys

from . import ensure_all

if __name__ == "__main__":
    for p in ensure_all():
        print(f"{p} ({p.stat().st_size:,} bytes)", file=sys.stderr)
