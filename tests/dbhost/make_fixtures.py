"""The fixture tree generator moved to dbhost_exporter.demo.tree (``make run DEMO=1``
serves it at run time, and the stack must not import the tests). This name stays so
the tests and benchmarks keep importing ``make_fixtures``: importing it gives the
real module, and ``python tests/dbhost/make_fixtures.py DIR`` still writes a tree."""
import sys

from dbhost_exporter.demo import tree as _tree

if __name__ == "__main__":
    sys.exit(_tree.main())
sys.modules[__name__] = _tree
