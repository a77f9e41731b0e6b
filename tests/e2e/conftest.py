"""The end-to-end tests import the top-level `stack` package (make run's code) and their
helpers from e2e_support.py (a unique module name: several test directories have a
conftest.py); both are on pytest's pythonpath (pyproject.toml)."""
