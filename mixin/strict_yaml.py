"""The mixin's YAML reader: PyYAML's safe loader, but a mapping that names one key twice is an
error (plain YAML keeps the last value silently, so `R2: {value: 0.004}` written twice, or a
threshold's `value` given twice, would quietly lose one of them).

    from mixin import strict_yaml
    doc = strict_yaml.load_file("site.yml")      # raises strict_yaml.YamlError, one line

Every error is one line naming the file and the line: `site.yml: line 4: duplicate key 'R2'
(first at line 2)`, `site.yml: line 3: not valid YAML: mapping values are not allowed here`.
"""
from __future__ import annotations

from pathlib import Path

import yaml


class YamlError(ValueError):
    """A file that cannot be read, is not YAML, or names a mapping key twice (one line)."""


class DuplicateKeyError(yaml.constructor.ConstructorError):
    def __init__(self, key, line: int, first: int):
        super().__init__(None, None, f"duplicate key {key!r} (first at line {first})", None)
        self.key, self.line, self.first = key, line, first


class StrictLoader(yaml.SafeLoader):
    """SafeLoader that rejects a key given twice in one mapping (merge keys `<<` excepted)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    hash(key)
                except TypeError:
                    continue          # SafeLoader reports an unhashable key itself
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise DuplicateKeyError(key, line, seen[key])
                seen[key] = line
        return super().construct_mapping(node, deep=deep)



def loads(text: str, src: str = "<string>"):
    """Parse YAML text; errors name `src`."""
    try:
        return yaml.load(text, Loader=StrictLoader)  # noqa: S506 (a SafeLoader subclass)
    except RecursionError:
        raise YamlError(f"{src}: nested too deeply to be a site or thresholds file") from None
    except DuplicateKeyError as exc:
        raise YamlError(f"{src}: line {exc.line}: duplicate key {exc.key!r} (first at line {exc.first})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}:" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        problem = " ".join(str(problem).split())
        raise YamlError(f"{src}:{where} not valid YAML: {problem}") from None


def load_file(path: str | Path):
    """Read and parse one YAML file; every error is a YamlError of one line naming the file."""
    src = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise YamlError(f"{src}: cannot read: {exc.strerror}") from None
    return loads(text, src)
