"""The procfs fixture generator moved to dbhost_exporter.demo.procs (see make_fixtures.py);
importing this name gives the real module."""
import sys

from dbhost_exporter.demo import procs as _procs

sys.modules[__name__] = _procs
