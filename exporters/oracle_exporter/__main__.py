"""``python -m oracle_exporter`` = the ``oracle-exporter`` console script."""
import sys

from .cli import main

sys.exit(main())
