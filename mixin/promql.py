"""A PromQL tokenizer good enough for the pack's own expressions, and what it names.

    from mixin import promql
    refs = promql.references('sum by (job, database) (rate(oracle_redo_size_bytes_total{database=~"$database"}[5m]))')
    refs.metrics      # {'oracle_redo_size_bytes_total'}
    refs.labels       # [LabelRef('database', 'oracle_redo_size_bytes_total', 'matcher'), LabelRef('job', ..., 'by'), ...]

It is not a parser: it classifies tokens (metric names, function and aggregation names, label
names in `{...}` matchers and in by / without / on / ignoring / group_left / group_right lists,
strings, numbers, durations, Grafana template variables such as $database, ${host} and
[$__rate_interval]) and tracks parentheses, which is what mixin.catalog needs to check every
metric and label the pack names. Labels made by label_replace / label_join are reported as
created (they count as declared within that expression).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
            "offset", "bool", "inf", "nan", "atan2", "start", "end"}
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
                "bottomk", "topk", "quantile", "limitk", "limit_ratio"}
LISTS = {"by", "without", "on", "ignoring", "group_left", "group_right"}

_TOKEN = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<var>\$\{[^}]*\}|\$[A-Za-z_]\w*|\[\[[^\]]*\]\])
  | (?P<range>\[[^\]]*\])
  | (?P<dur>(?:\d+(?:ms|[smhdwy]))+(?![\w.]))
  | (?P<num>0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<op>=~|!~|!=|==|<=|>=|[-+*/%^<>=(){},@])
""", re.VERBOSE)


class PromQLError(ValueError):
    pass


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    pos: int


def tokenize(expr: str) -> list[Token]:
    out, pos = [], 0
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if not m:
            raise PromQLError(f"cannot read PromQL at {expr[pos:pos + 20]!r}")
        if m.lastgroup != "ws":
            out.append(Token(m.lastgroup, m.group(), pos))
        pos = m.end()
    return out


@dataclass(frozen=True)
class LabelRef:
    label: str
    metric: str | None        # the selector's metric for a matcher; None for a list
    how: str                  # "matcher", "by", "without", "on", ..., "label_replace source"
    scope: frozenset          # the metrics whose series the label must be on (one of them)


@dataclass
class Refs:
    metrics: list[str] = field(default_factory=list)
    labels: list[LabelRef] = field(default_factory=list)
    created: set[str] = field(default_factory=set)


def _unquote(s: str) -> str:
    return s[1:-1]


def _close(tokens: list[Token], i: int) -> int:
    """Index of the ')' matching the '(' at i (or len(tokens) when unbalanced)."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j].text == "(" and tokens[j].kind == "op":
            depth += 1
        elif tokens[j].text == ")" and tokens[j].kind == "op":
            depth -= 1
            if depth == 0:
                return j
    return len(tokens)


def references(expr: str) -> Refs:
    """The metric names, label names and label_replace/label_join-created labels of `expr`."""
    toks = tokenize(expr)
    refs = Refs()
    n = len(toks)
    pending: list[tuple[str, str, int, int]] = []     # (label, how, scope start, scope end)
    i = 0
    brace_metric: str | None = None
    in_brace = False
    while i < n:
        t = toks[i]
        nxt = toks[i + 1] if i + 1 < n else None
        if t.kind == "op" and t.text == "{":
            in_brace = True
            prev = toks[i - 1] if i else None
            brace_metric = prev.text if prev is not None and prev.kind == "ident" and \
                prev.text.lower() not in KEYWORDS and prev.text not in AGGREGATIONS else None
            i += 1
            continue
        if t.kind == "op" and t.text == "}":
            in_brace, brace_metric = False, None
            i += 1
            continue
        if in_brace:
            if t.kind == "ident" and nxt is not None and nxt.text in ("=", "!=", "=~", "!~"):
                if t.text != "__name__":
                    refs.labels.append(LabelRef(t.text, brace_metric, "matcher",
                                                frozenset([brace_metric]) if brace_metric else frozenset()))
                elif toks[i + 2].kind == "str" and nxt.text == "=":
                    refs.metrics.append(_unquote(toks[i + 2].text))
            i += 1
            continue
        if t.kind != "ident":
            i += 1
            continue
        word = t.text
        if word.lower() in KEYWORDS:        # PromQL keywords (and inf, nan) are case-insensitive
            word = word.lower()
        if word in LISTS and nxt is not None and nxt.text == "(":
            end = _close(toks, i + 1)
            names = [x.text for x in toks[i + 2:end] if x.kind == "ident"]
            scope = (0, n)
            if word in ("by", "without"):
                # `agg by (l) (expr)` or `agg (expr) by (l)`: the labels are of expr's series
                if end + 1 < n and toks[end + 1].text == "(":
                    scope = (end + 1, _close(toks, end + 1))
                elif i > 0 and toks[i - 1].text == ")":
                    depth, j = 0, i - 1
                    while j >= 0:
                        if toks[j].text == ")":
                            depth += 1
                        elif toks[j].text == "(":
                            depth -= 1
                            if depth == 0:
                                break
                        j -= 1
                    scope = (j, i)
            for name in names:
                pending.append((name, word, *scope))
            i = end + 1
            continue
        if word in KEYWORDS:
            i += 1
            continue
        if nxt is not None and nxt.text == "(":
            if word in ("label_replace", "label_join"):
                end = _close(toks, i + 1)
                args, depth, cur = [], 0, []
                for x in toks[i + 2:end]:
                    if x.text in ("(", "{") and x.kind == "op":
                        depth += 1
                    elif x.text in (")", "}") and x.kind == "op":
                        depth -= 1
                    if x.text == "," and depth == 0:
                        args.append(cur)
                        cur = []
                    else:
                        cur.append(x)
                args.append(cur)
                strings = [a[0].text for a in args[1:] if len(a) == 1 and a[0].kind == "str"]
                if strings:
                    refs.created.add(_unquote(strings[0]))
                sources = [_unquote(s) for s in (strings[2:3] if word == "label_replace" else strings[2:])]
                first = _close(toks, i + 1)
                for s in sources:
                    if s:
                        pending.append((s, f"{word} source", i + 2, first))
            if word == "count_values" and i + 2 < n and toks[i + 2].kind == "str":
                refs.created.add(_unquote(toks[i + 2].text))
            i += 1
            continue
        if word in AGGREGATIONS and nxt is not None and nxt.text in ("by", "without"):
            i += 1
            continue
        refs.metrics.append(word)
        i += 1
    positions = {}
    for idx, tok in enumerate(toks):
        if tok.kind == "ident" and tok.text in refs.metrics:
            positions.setdefault(idx, tok.text)
    for name, how, start, end in pending:
        scope = frozenset(m for idx, m in positions.items() if start <= idx < end)
        refs.labels.append(LabelRef(name, None, how, scope))
    return refs


def label_values_query(query: str) -> tuple[str | None, str] | None:
    """Grafana's `label_values(selector, label)` / `label_values(label)`: (selector or None, label)."""
    m = re.fullmatch(r"\s*label_values\s*\((.*)\)\s*", query, re.S)
    if not m:
        return None
    inner = m.group(1)
    sel, _, label = inner.rpartition(",")
    return (sel.strip() or None, label.strip())
