"""Configuration errors and small YAML helpers shared by both exporters.

A bad configuration must end the program with exit status 2 and one line that
names the file, the field and what is wrong -- never a traceback; a file with
several problems gets one such line each (ErrorList collects them, ConfigErrors
carries them), so a user fixes them all in one go.
"""
from __future__ import annotations

import contextlib
import difflib
import math
import os
from typing import Any, Callable, Iterator, TypeVar

T = TypeVar("T")

import yaml


class ConfigError(Exception):
    """A problem with a configuration file or a command-line value."""

    def __init__(self, source: str, field: str | None, message: str):
        self.source = source
        self.field = field
        self.message = message
        where = f"{source}: {field}" if field else source
        super().__init__(f"{where}: {message}")

    def all(self) -> list["ConfigError"]:
        """Every problem this error stands for (one, or several for ConfigErrors)."""
        return [self]


class ConfigErrors(ConfigError):
    """Several problems of one configuration, reported together (one line each)."""

    def __init__(self, errors: list[ConfigError]):
        self.errors = [e for err in errors for e in err.all()]
        first = self.errors[0]
        super().__init__(first.source, first.field, first.message)
        self.args = ("\n".join(str(e) for e in self.errors),)

    def all(self) -> list[ConfigError]:
        return list(self.errors)

    def __str__(self) -> str:
        return self.args[0]


class ErrorList:
    """Collect the ConfigErrors of independent parts of a file, then raise them all::

        errs = ErrorList()
        with errs.part():
            timeout = root.number("timeout_seconds", 10)
        name = errs.value(lambda: db.str("name", required=True))   # None if it failed
        errs.check()
    """

    def __init__(self) -> None:
        self.errors: list[ConfigError] = []

    @contextlib.contextmanager
    def part(self) -> Iterator[None]:
        try:
            yield
        except ConfigError as exc:
            self.errors.extend(exc.all())

    def value(self, fn: Callable[[], T], default: Any = None) -> T:
        try:
            return fn()
        except ConfigError as exc:
            self.errors.extend(exc.all())
            return default

    def check(self) -> None:
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise ConfigErrors(self.errors)


# Deeper than this is no configuration anyone writes; PyYAML's composer recurses per level,
# so a hostile or broken file (thousands of "[" or "a:" levels) would end in RecursionError.
MAX_NESTING = 64
# Numbers in config files are seconds and counts; anything larger is a typo (and a
# 400-digit integer would not even convert to a float).
MAX_NUMBER = 1e9


class StrictYAMLError(yaml.MarkedYAMLError):
    """A duplicate key or too deep nesting, with the line of the offending node."""


class StrictLoader(yaml.SafeLoader):
    """yaml.SafeLoader that rejects a key given twice in one mapping (PyYAML keeps the
    last one silently: a second ``databases:`` would drop the first list) and nesting
    deeper than MAX_NESTING. Merge keys (``<<``) may still be overridden, as YAML says."""

    _depth = 0

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > MAX_NESTING:
                mark = self.peek_event().start_mark
                raise StrictYAMLError(problem=f"nested deeper than {MAX_NESTING} levels", problem_mark=mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = self.construct_object(key_node)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:
                    continue
                if first is not key_node:
                    raise StrictYAMLError(
                        problem=f"duplicate key {key!r} (first at line {first.start_mark.line + 1}); "
                                "keep one: YAML would silently use the last",
                        problem_mark=key_node.start_mark)
        return super().construct_mapping(node, deep)


def strict_yaml(text: str) -> Any:
    """yaml.safe_load with StrictLoader: duplicate keys and too deep nesting are errors
    (StrictYAMLError, a yaml.YAMLError with problem_mark)."""
    loader = StrictLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def yaml_error_message(exc: yaml.YAMLError) -> str:
    """One line for a YAML error: 'line L, column C: problem' (duplicate key: 'line L: ...')."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if isinstance(exc, StrictYAMLError) and mark is not None:
        return f"line {mark.line + 1}: {problem}"
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    return f"invalid YAML{where}: {problem}"


def load_yaml(path: str) -> Any:
    """Read a YAML file; any problem becomes a ConfigError naming the file (and the line
    and key of a duplicate key)."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise ConfigError(path, None, "file not found") from None
    except IsADirectoryError:
        raise ConfigError(path, None, "is a directory, expected a YAML file") from None
    except PermissionError:
        raise ConfigError(path, None, "permission denied") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(path, None, f"not UTF-8 text ({exc.reason})") from None
    try:
        return strict_yaml(text)
    except yaml.YAMLError as exc:
        raise ConfigError(path, None, yaml_error_message(exc)) from None
    except RecursionError:      # belt and braces: MAX_NESTING stops this first
        raise ConfigError(path, None, "invalid YAML: nested too deeply") from None


def _short(value: Any, limit: int = 40) -> str:
    """repr(value), cut to `limit` characters (a 400-digit number in an error line)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** limit:
        return f"an integer of {len(str(abs(value)))} digits"
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def resolve_path(config_file: str, value: str) -> str:
    """``value`` from ``config_file``: absolute as is, relative against the file's directory."""
    if os.path.isabs(value):
        return value
    return os.path.join(os.path.dirname(os.path.abspath(config_file)), value)


class Fields:
    """Typed access to one mapping of a config file, with the field path in errors.

    >>> f = Fields("x.yml", "databases[0]", {"name": "a"})
    >>> f.str("name")
    'a'
    """

    def __init__(self, source: str, path: str, data: Any):
        self.source = source
        self.path = path
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ConfigError(source, path or None, f"expected a mapping, got {type(data).__name__}")
        self.data = data
        self._used: set[str] = set()

    def _field(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(self.source, self._field(key), message)

    def _get(self, key: str, default: Any, required: bool) -> Any:
        self._used.add(key)
        if key not in self.data or self.data[key] is None:
            if required:
                raise self.error(key, "is required")
            return default
        return self.data[key]

    def str(self, key: str, default: str | None = None, required: bool = False) -> str | None:
        value = self._get(key, default, required)
        if value is default and not required:
            return value
        if not isinstance(value, str) or (required and not value.strip()):
            raise self.error(key, f"expected a non-empty string, got {value!r}")
        return value

    def number(self, key: str, default: float | None = None, minimum: float | None = None,
               required: bool = False) -> float | None:
        value = self._get(key, default, required)
        if value is default and not required:
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(key, f"expected a number, got {_short(value)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise self.error(key, f"expected a finite number, got {value!r}")
        if abs(value) > MAX_NUMBER:
            raise self.error(key, f"must be <= {MAX_NUMBER:.0e}, got {_short(value)}")
        if minimum is not None and value < minimum:
            raise self.error(key, f"must be >= {minimum}, got {value!r}")
        return value

    def bool(self, key: str, default: bool = False) -> bool:
        value = self._get(key, default, False)
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {value!r}")
        return value

    def file_path(self, key: str, required: bool = False) -> str | None:
        """A file path. Relative paths are relative to the config file's directory,
        as in Prometheus and exporter-toolkit, not to the working directory: every
        path field of every config goes through here."""
        value = self.str(key, None, required)
        return resolve_path(self.source, value) if value else value

    def str_list(self, key: str, default: list[str] | None = None) -> list[str]:
        value = self._get(key, default if default is not None else [], False)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(key, f"expected a list of strings, got {value!r}")
        return list(value)

    def str_map(self, key: str) -> dict[str, str]:
        value = self._get(key, {}, False)
        if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, (str, int, float)) for k, v in value.items()):
            raise self.error(key, f"expected a mapping of strings, got {value!r}")
        return {k: str(v) for k, v in value.items()}

    def sub(self, key: str) -> "Fields":
        value = self._get(key, {}, False)
        return Fields(self.source, self._field(key), value)

    def list_of(self, key: str, required: bool = False) -> list["Fields"]:
        value = self._get(key, [], required)
        if not isinstance(value, list):
            raise self.error(key, f"expected a list, got {type(value).__name__}")
        return [Fields(self.source, f"{self._field(key)}[{i}]", item) for i, item in enumerate(value)]

    def declare(self, *keys: str) -> None:
        """Known keys a failed part of the parse may not have reached (not unknown fields)."""
        self._used.update(keys)

    def reject_unknown(self) -> None:
        """Fail on keys nobody asked for: a typo must not be silently ignored. Every unknown
        key is reported, with the known key it most resembles ("did you mean ...?")."""
        known = sorted(k for k in self._used if isinstance(k, str))
        errors = []
        for key in sorted(set(self.data) - self._used, key=str):
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            hint = (f" (did you mean {close[0]}?)" if close else f" (known: {', '.join(known[:24])})" if known
                    else " (nothing is configured here)")
            errors.append(self.error(str(key), "unknown field" + hint))
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise ConfigErrors(errors)


def read_secret_file(path: str) -> str:
    """A secret file's first line, without its line ending (spaces inside and around are kept:
    they may be part of the password). The one reader of password_file (at load and at every
    logon attempt); OSError when it cannot be read."""
    with open(path, encoding="utf-8") as fh:
        line = fh.readline()
    return line.rstrip("\r\n")


def secret_from(fields: Fields, file_key: str, env_key: str, what: str) -> str:
    """Read a secret from a file (relative to the config file) or an environment variable named in the config."""
    path = fields.file_path(file_key)
    env = fields.str(env_key)
    if path and env:
        raise fields.error(file_key, f"give either {file_key} or {env_key}, not both")
    if path:
        try:
            value = read_secret_file(path)
        except OSError as exc:
            raise fields.error(file_key, f"cannot read {what} file {path!r}: {exc.strerror}") from None
        if not value:
            raise fields.error(file_key, f"{what} file {path!r} is empty")
        return value
    if env:
        value = os.environ.get(env)
        if value is None:
            raise fields.error(env_key, f"environment variable {env} is not set")
        if not value:   # as an empty file: a logon with it is refused (ORA-01005), a failed logon
            raise fields.error(env_key, f"environment variable {env} is empty")
        return value
    raise fields.error(file_key, f"a {what} is required: set {file_key} or {env_key}")
