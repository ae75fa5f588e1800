"""SQL text for the compiled predictor (:mod:`fcps_core.deploy.sql`): quoting, exact DOUBLE
literals, and the expressions that mirror numpy's arithmetic order (pairwise sums,
``rowwise_dot``, ``np.interp``). Everything here is plain SQL that DuckDB runs; see the
``sql`` module's docstring for other engines."""

from __future__ import annotations

import math
import re
import sys

from ..errors import PredictorError

#: a table name: up to three dot-separated plain identifiers (catalog.schema.table)
TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}")

# Python's str.strip() removes every character with str.isspace(); float() strips the same
# set except the four ASCII separators \x1c-\x1f (it then refuses them). DuckDB's trim()
# without a set and its casts strip fewer, so the SQL passes the exact sets.
WS_ALL = "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
WS_FLOAT = "".join(c for c in WS_ALL if c not in "\x1c\x1d\x1e\x1f")


def quote_ident(name: str) -> str:
    """``name`` as a quoted SQL identifier (embedded double quotes doubled)."""
    if not isinstance(name, str) or name == "" or "\x00" in name:
        raise PredictorError(f"cannot name a SQL column {name!r}: it is empty or holds a NUL character")
    return '"' + name.replace('"', '""') + '"'


def quote_table(table: str) -> str:
    """A validated table name (``name``, ``schema.name`` or ``catalog.schema.name``, each
    part letters, digits and underscores), each part quoted; anything else is refused
    rather than spliced into SQL."""
    if not isinstance(table, str) or not TABLE_NAME.fullmatch(table):
        raise PredictorError(f"table name {table!r} is not allowed: use letters, digits and underscores, "
                             "optionally schema.table (create a view for anything else)")
    return ".".join(quote_ident(p) for p in table.split("."))


def sql_str(s: str) -> str:
    if "\x00" in s:
        raise PredictorError(f"output {s!r} holds a NUL character, which SQL text cannot carry")
    return "'" + s.replace("'", "''") + "'"


def sql_num(x: float) -> str:
    """A DOUBLE literal that parses back to exactly ``x``: the shortest round-trip repr,
    always in exponent form (``0.5e0``), which DuckDB types DOUBLE (``0.5`` would be a
    DECIMAL, and DECIMAL arithmetic rounds differently)."""
    x = float(x)
    if not math.isfinite(x):
        raise PredictorError(f"predictor holds a non-finite number ({x})")
    r = repr(x)
    if "e" not in r:
        r += "e0"
    return f"({r})" if r.startswith("-") else r


def sql_chars(s: str) -> str:
    # Control and Unicode space characters spelled as chr(): the SQL text stays printable.
    return " || ".join(f"chr({ord(c)})" for c in s)


#: the two whitespace sets as SQL expressions (DuckDB folds them to constants)
SQL_WS_ALL = sql_chars(WS_ALL)
SQL_WS_FLOAT = sql_chars(WS_FLOAT)


def member_of(expr: str, values) -> str:
    """``expr IN (values)`` as a simple CASE: DuckDB plans an IN list of six or more values
    as a join that evaluates ``expr`` on every row, outside the enclosing CASE branch (the
    trim() below then costs ~0.8 s per million cells); a CASE keeps it lazy."""
    return "CASE " + expr + " " + " ".join(f"WHEN {sql_str(v)} THEN TRUE" for v in values) + " ELSE FALSE END"


def sql_case(subject: str | None, branches: list[tuple[str, str]], default: str) -> str:
    """``CASE [subject] WHEN .. THEN .. ELSE default END`` (just ``default`` when empty)."""
    if not branches:
        return default
    head = f"CASE {subject} " if subject is not None else "CASE "
    return head + " ".join(f"WHEN {w} THEN {t}" for w, t in branches) + f" ELSE {default} END"


def clip01(expr: str) -> str:
    """np.clip(x, 0, 1) (no argument is NULL or NaN where it is used)."""
    return f"least(greatest({expr}, 0e0), 1e0)"


def pairwise_sum(terms: list[str]) -> str:
    """The sum of ``terms`` in numpy's pairwise order (``np.add.reduce`` along a contiguous
    axis: sequential below 8 terms, eight running partial sums up to 128, halves above), so
    ``scores.mean(axis=1)`` is reproduced to the last bit."""
    n = len(terms)
    if n == 0:
        return "0e0"
    if n < 8:
        out = terms[0]
        for t in terms[1:]:
            out = f"({out} + {t})"
        return out
    if n <= 128:
        r = list(terms[:8])
        i = 8
        while i < n - (n % 8):
            r = [f"({r[k]} + {terms[i + k]})" for k in range(8)]
            i += 8
        out = f"((({r[0]} + {r[1]}) + ({r[2]} + {r[3]})) + (({r[4]} + {r[5]}) + ({r[6]} + {r[7]})))"
        for t in terms[i:]:
            out = f"({out} + {t})"
        return out
    half = n // 2
    half -= half % 8
    return f"({pairwise_sum(terms[:half])} + {pairwise_sum(terms[half:])})"


def dot_sql(start: float, terms: list[str], weights) -> str:
    """``rowwise_dot``: start + t_0 w_0 + t_1 w_1 + ..., added left to right."""
    out = sql_num(start)
    for t, w in zip(terms, weights):
        out = f"({out} + ({t} * {sql_num(w)}))"
    return out


def isotonic_sql(x: str, xs, ys) -> str:
    """``IsotonicMap.predict`` of the column ``x``: ``np.interp(x, xs, ys)`` -- the first
    value left of the first threshold, the last from the last one on, and in between
    ``slope_j * (x - x_j) + y_j`` with numpy's slope ``(y_{j+1} - y_j) / (x_{j+1} - x_j)``
    (computed here with the same IEEE operations). The segment is found by a balanced tree
    of comparisons (depth log2 of the number of steps), not a linear CASE."""
    xs = [float(v) for v in xs]
    ys = [float(v) for v in ys]
    n = len(xs)
    if n == 0 or n != len(ys):
        raise PredictorError("predictor file is malformed: an isotonic map needs as many thresholds as values")
    if n == 1:
        return sql_num(ys[0])
    if any(not b > a for a, b in zip(xs, xs[1:])):
        raise PredictorError("predictor file is malformed: isotonic thresholds must be strictly increasing")

    def seg(j: int) -> str:
        slope = (ys[j + 1] - ys[j]) / (xs[j + 1] - xs[j])
        if not math.isfinite(slope):
            raise PredictorError("predictor file is malformed: isotonic thresholds too close to interpolate")
        return f"(({sql_num(slope)} * ({x} - {sql_num(xs[j])})) + {sql_num(ys[j])})"

    def tree(lo: int, hi: int) -> str:      # x_lo <= x < x_hi
        if hi - lo == 1:
            return seg(lo)
        mid = (lo + hi) // 2
        return f"CASE WHEN {x} < {sql_num(xs[mid])} THEN {tree(lo, mid)} ELSE {tree(mid, hi)} END"

    return (f"CASE WHEN {x} < {sql_num(xs[0])} THEN {sql_num(ys[0])} "
            f"WHEN {x} >= {sql_num(xs[-1])} THEN {sql_num(ys[-1])} ELSE {tree(0, n - 1)} END")
