"""The end-to-end tests import the top-level `stack` package (make run's code)
and their helpers from e2e_support.py (a unique module name: several test
directories have a conftest.py)."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT, Path(__file__).resolve().parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
