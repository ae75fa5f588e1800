"""SQL text for the compiled predictor (:mod:`fcps_core.deploy.sql`): quoting, exact DOUBLE
literals, and the expressions that mirror numpy's arithmetic order (pairwise sums,
``rowwise_dot``, ``np.interp``), each spelled for one :class:`Dialect` (DuckDB, PostgreSQL,
SQLite: what differs between them is listed in the ``sql`` module's docstring and
implemented here, nowhere else)."""

from __future__ import annotations

import math
import re
import sys
from decimal import Decimal

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
    """A DuckDB DOUBLE literal that parses back to exactly ``x`` (``DUCKDB.num``)."""
    return DUCKDB.num(x)


def _repr_e(x: float) -> str:
    """The shortest round-trip repr of a finite ``x``, always in exponent form (``0.5e0``)."""
    x = float(x)
    if not math.isfinite(x):
        raise PredictorError(f"predictor holds a non-finite number ({x})")
    r = repr(x)
    return r if "e" in r else r + "e0"


#: Python's float() of a plain ASCII decimal: optional sign, digits with at most one point
#: (at least one digit), optional exponent
_PG_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
#: spellings PostgreSQL casts to float8 without any risk of its out-of-range error
#: (at most 15 digits each side of the point, a two-digit exponent)
_PG_SAFE = r"^[+-]?[0-9]{0,15}\.?[0-9]{0,15}([eE][+-]?[0-9]{1,2})?$"
#: spellings whose exact value PostgreSQL's numeric holds (an exponent below 10**4; and at
#: most _PG_LONGEST characters, checked apart: its regular expressions repeat at most 255)
_PG_BOUNDED = r"^[+-]?[0-9.]+([eE][+-]?0*[0-9]{1,4})?$"
_PG_LONGEST = 1000
#: the smallest magnitude that rounds to infinity (2**1024 - 2**970), and the largest that
#: rounds to zero (2**-1075, half the smallest subnormal; a tie rounds to even, i.e. 0)
_OVERFLOW = format(Decimal(2) ** 1024 - Decimal(2) ** 970, "f")
_UNDERFLOW = format(Decimal(2) ** -1075, "f")


class Dialect:
    """How one SQL engine spells what the compiled statement needs. ``name``: ``duckdb``,
    ``postgres`` or ``sqlite``; ``folds_case``: whether the engine matches quoted
    identifiers case-insensitively (then judges differing only by case are refused)."""

    def __init__(self, name: str):
        if name not in DIALECTS:
            raise PredictorError(f"unknown SQL dialect {name!r}; use {', '.join(DIALECTS)}")
        self.name = name
        self.folds_case = name in ("duckdb", "sqlite")
        self.ws_all = self.chars(WS_ALL)
        self.ws_float = self.chars(WS_FLOAT)

    def __repr__(self) -> str:
        return f"Dialect({self.name!r})"

    def num(self, x: float) -> str:
        """A DOUBLE literal that is exactly ``x``. DuckDB: ``0.5e0`` (exponent form is
        DOUBLE; ``0.5`` would be DECIMAL, whose arithmetic rounds differently); PostgreSQL:
        ``float8 '0.5e0'`` (any unadorned literal with a point is ``numeric``); SQLite: the
        exponent form (REAL)."""
        r = _repr_e(x)
        if self.name == "postgres":
            return f"float8 '{r}'"
        return f"({r})" if r.startswith("-") else r

    def column(self, source: str, name: str) -> str:
        """A column of the scored table. SQLite reads an unknown double-quoted name as a
        string literal, silently; qualified by the table's alias it is an error instead."""
        return f"{source}.{quote_ident(name)}" if self.name == "sqlite" else quote_ident(name)

    def text(self, x: str) -> str:
        return f"CAST({x} AS VARCHAR)" if self.name == "duckdb" else f"CAST({x} AS TEXT)"

    def trim(self, x: str, chars: str) -> str:
        return f"btrim({x}, {chars})" if self.name == "postgres" else f"trim({x}, {chars})"

    def chars(self, s: str) -> str:
        """``s`` spelled by code points (the SQL text stays printable)."""
        if self.name == "sqlite":
            return "char(" + ", ".join(str(ord(c)) for c in s) + ")"
        return " || ".join(f"chr({ord(c)})" for c in s)

    def finite(self, x: str) -> str:
        """``x`` (a DOUBLE or NULL) is a finite number. Without ``isfinite``: ``x - x`` is 0
        for a finite x, NaN for an infinite one (NULL in SQLite, which has no NaN)."""
        if self.name == "duckdb":
            return f"isfinite({x})"
        return f"(({x}) - ({x})) = {self.num(0.0)}"

    def direct_number(self, x: str) -> str:
        """The column ``x`` as a DOUBLE when it is a number as it stands (no whitespace to
        strip), else NULL or a non-finite value: the fast path for numeric cells."""
        if self.name == "duckdb":
            return f"TRY_CAST({x} AS DOUBLE)"
        if self.name == "sqlite":
            # a stored number is read as it is (CAST(real AS TEXT) keeps only 15 digits)
            return (f"CASE WHEN typeof({x}) IN ('integer', 'real') THEN CAST({x} AS REAL) "
                    f"ELSE {self.number(self.text(x))} END")
        return self.number(self.text(x))

    def number(self, t: str) -> str:
        """The text ``t`` as a DOUBLE when Python's float() reads it as a finite number
        (plain ASCII decimal spellings), else NULL (or a non-finite value)."""
        if self.name == "duckdb":
            return f"TRY_CAST({t} AS DOUBLE)"
        if self.name == "sqlite":
            # SQLite's CAST reads any prefix ('1x' is 1): the spelling is checked first, with
            # GLOB (a digit; only [0-9.eE+-]; a sign only first or after the e; one point,
            # before the e; one e with a digit on each side)
            valid = (f"{t} GLOB '*[0-9]*' AND NOT {t} GLOB '*[^-+0-9.eE]*' AND NOT {t} GLOB '*[^eE][-+]*' "
                     f"AND NOT {t} GLOB '*.*.*' AND NOT {t} GLOB '*[eE]*[eE]*' AND NOT {t} GLOB '*[eE]*.*' "
                     f"AND (NOT {t} GLOB '*[eE]*' OR {t} GLOB '*[0-9]*[eE]*[0-9]*')")
            return f"CASE WHEN {valid} THEN CAST({t} AS REAL) END"
        # PostgreSQL: a cast error would end the whole statement, so the spelling is checked
        # by regular expression, and a value float8 refuses as out of range (overflow, or a
        # non-zero value that rounds to 0) is compared as numeric first: infinite -> NULL
        # (Python's inf, a refused cell), below the smallest subnormal -> 0
        n = f"abs(CAST({t} AS numeric))"
        return (f"CASE WHEN {t} !~ '{_PG_NUMBER}' THEN NULL "
                f"WHEN {t} ~ '{_PG_SAFE}' THEN CAST({t} AS float8) "
                f"WHEN length({t}) > {_PG_LONGEST} OR {t} !~ '{_PG_BOUNDED}' THEN NULL "
                f"WHEN {n} >= {_OVERFLOW} THEN NULL "
                f"WHEN {n} <= {_UNDERFLOW} THEN {self.num(0.0)} "
                f"ELSE CAST({t} AS float8) END")

    def left_sum(self, first: str, terms: list[str]) -> str:
        """first + t_1 + t_2 + ..., added left to right. DuckDB and PostgreSQL get nested
        parentheses; SQLite's parser overflows its stack at ~100 nested parentheses, so it
        gets the unparenthesised chain, which SQL also adds left to right (its expression
        depth, 1,000, then bounds the number of terms)."""
        if self.name == "sqlite":
            return "(" + " + ".join([first] + list(terms)) + ")" if terms else first
        out = first
        for t in terms:
            out = f"({out} + {t})"
        return out

    def clip(self, x: str, lo: float, hi: float) -> str:
        """min(max(x, lo), hi) (no argument is NULL or NaN where it is used). SQLite has no
        greatest/least: its two-argument max/min are the same thing."""
        if self.name == "sqlite":
            return f"min(max({x}, {self.num(lo)}), {self.num(hi)})"
        return f"least(greatest({x}, {self.num(lo)}), {self.num(hi)})"

    def clip01(self, x: str) -> str:
        """np.clip(x, 0, 1)."""
        return self.clip(x, 0.0, 1.0)


#: the dialects predictor_sql compiles to (the first is the default)
DIALECTS = ("duckdb", "postgres", "sqlite")
DUCKDB = Dialect("duckdb")


def dialect(name: "str | Dialect") -> Dialect:
    """The :class:`Dialect` called ``name`` (PredictorError for an unknown one)."""
    return name if isinstance(name, Dialect) else Dialect(name)


#: the two whitespace sets as DuckDB expressions (DuckDB folds them to constants)
SQL_WS_ALL = DUCKDB.ws_all
SQL_WS_FLOAT = DUCKDB.ws_float


def member_of(expr: str, values) -> str:
    """``expr IN (values)`` as a simple CASE: DuckDB plans an IN list of six or more values
    as a join that evaluates ``expr`` on every row, outside the enclosing CASE branch (the
    trim() below then runs on every row, docs/performance.md); a CASE keeps it lazy."""
    return "CASE " + expr + " " + " ".join(f"WHEN {sql_str(v)} THEN TRUE" for v in values) + " ELSE FALSE END"


def sql_case(subject: str | None, branches: list[tuple[str, str]], default: str) -> str:
    """``CASE [subject] WHEN .. THEN .. ELSE default END`` (just ``default`` when empty)."""
    if not branches:
        return default
    head = f"CASE {subject} " if subject is not None else "CASE "
    return head + " ".join(f"WHEN {w} THEN {t}" for w, t in branches) + f" ELSE {default} END"


def clip01(expr: str, d: Dialect = DUCKDB) -> str:
    """np.clip(x, 0, 1) (no argument is NULL or NaN where it is used)."""
    return d.clip01(expr)


def pairwise_sum(terms: list[str], d: Dialect = DUCKDB) -> str:
    """The sum of ``terms`` in numpy's pairwise order (``np.add.reduce`` along a contiguous
    axis: sequential below 8 terms, eight running partial sums up to 128, halves above), so
    ``scores.mean(axis=1)`` is reproduced to the last bit."""
    n = len(terms)
    if n == 0:
        return d.num(0.0)
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
    return f"({pairwise_sum(terms[:half], d)} + {pairwise_sum(terms[half:], d)})"


def dot_sql(start: float, terms: list[str], weights, d: Dialect = DUCKDB) -> str:
    """``rowwise_dot``: start + t_0 w_0 + t_1 w_1 + ..., added left to right."""
    return d.left_sum(d.num(start), [f"({t} * {d.num(w)})" for t, w in zip(terms, weights)])


def isotonic_sql(x: str, xs, ys, d: Dialect = DUCKDB) -> str:
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
        return d.num(ys[0])
    if any(not b > a for a, b in zip(xs, xs[1:])):
        raise PredictorError("predictor file is malformed: isotonic thresholds must be strictly increasing")

    def seg(j: int) -> str:
        slope = (ys[j + 1] - ys[j]) / (xs[j + 1] - xs[j])
        if not math.isfinite(slope):
            raise PredictorError("predictor file is malformed: isotonic thresholds too close to interpolate")
        return f"(({d.num(slope)} * ({x} - {d.num(xs[j])})) + {d.num(ys[j])})"

    def tree(lo: int, hi: int) -> str:      # x_lo <= x < x_hi
        if hi - lo == 1:
            return seg(lo)
        mid = (lo + hi) // 2
        return f"CASE WHEN {x} < {d.num(xs[mid])} THEN {tree(lo, mid)} ELSE {tree(mid, hi)} END"

    return (f"CASE WHEN {x} < {d.num(xs[0])} THEN {d.num(ys[0])} "
            f"WHEN {x} >= {d.num(xs[-1])} THEN {d.num(ys[-1])} ELSE {tree(0, n - 1)} END")
