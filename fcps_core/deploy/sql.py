"""A saved predictor compiled to one SQL ``SELECT`` (``python -m fcps_core export P.json --format sql``).

:func:`predictor_sql` turns an :class:`~fcps_core.deploy.predictor.FCPSPredictor` into one
statement (``WITH ... SELECT``) that scores a warehouse table in place and returns
``item_id, prediction`` for every row: the number ``FCPSPredictor.predict`` gives for the
same cells, for every family (``table``, ``backoff``, ``residual``, ``mean_iso``,
``one_coin_iso``, ``ridge_iso``, ``logistic``, ``ridge_pairwise_iso``,
``logistic_pairwise``, ``ds_jury``), as the weighted sum of the predictor's members (one
member of weight 1: that member's expression alone).

What the table must hold
------------------------
* one column per judge of the predictor, named exactly as the judge (names are quoted
  identifiers, so spaces and quotes are fine), plus the item id column (``item_column``,
  returned unchanged as ``item_id``). Other columns are ignored.
* judge cells as the panel file holds them. Any column type works: each cell is read the
  way ``fcps_core.ingest`` turns a file cell into an output --
  ``NULL``, an empty string and ``na``/``n/a``/``nan``/``null``/``none`` (any case,
  surrounding whitespace ignored) are a missing output; text outputs (pairwise, binary,
  categorical judges) are compared after stripping whitespace, case kept, and an output
  the predictor does not know that matches exactly one of its judge's calibration outputs
  up to the case of ASCII letters is read as that output, as ``score`` reads it
  (:mod:`fcps_core.deploy.outputs`; ``a`` for ``A``, never when two calibration outputs
  differ only by case; letters beyond ASCII are not folded, in Python either: SQLite's
  ``lower`` and PostgreSQL's under a C collation change ASCII letters only); rubric judges
  are compared as numbers (``'3'``, ``' 3.0 '``, ``3`` and ``3.0e0`` are the same score);
  continuous judges are parsed as numbers and binned by the predictor's bin edges.
  A VARCHAR column is always exact. A typed column (DuckDB's ``read_csv`` infers BIGINT,
  DOUBLE or BOOLEAN) is exact for rubric and continuous judges; for a text judge it is
  exact when the type prints the outputs as they were written (``0``/``1`` as BIGINT,
  ``0.0``/``1.0`` as DOUBLE, ``true``/``false`` as BOOLEAN, which a judge calibrated on
  ``True``/``False`` reads as those by the case rule above). A column that mixes spellings
  of one number in a text judge (``1`` and ``1.0``) loses them to the type: read it with
  ``all_varchar = true``.

Behaviour where Python and SQL cannot agree row by row
------------------------------------------------------
Python refuses a whole traffic file that holds a rubric or continuous output that is not a
finite number (``score`` exits with an error); the SQL returns ``prediction = NULL`` for
exactly those rows and scores the others. Python also refuses whole files for reasons that
are not about one row (a judge column empty in every row, more distinct outputs than the
import limit, an item id repeated with two labels); the SQL scores such tables row by row.
DuckDB parses a few spellings Python does not (``'+-1'`` is -1 in DuckDB, an error in
Python; a BOOLEAN column casts to 1/0) and Python parses non-ASCII digits (``'３'``) that
DuckDB does not (NULL here). A ``residual`` predictor with shrinkage 0
predicts NaN in Python on unseen patterns; the SQL gives NULL there. Everything else is
the same arithmetic in the same order as numpy (sums in numpy's pairwise order, the
isotonic interpolation of ``np.interp``, the same clipping), so predictions agree to the
last bit except the logistic link, where DuckDB's ``exp`` and numpy's may differ in the
last place (~1e-16).

Dialects
--------
``predictor_sql(..., dialect=)`` / ``export --format sql --dialect``: ``duckdb`` (the
default; DuckDB 1.x, 2.x), ``postgres`` (PostgreSQL 12 or later, a UTF8 database) and
``sqlite`` (SQLite 3.35 or later, with its math functions, as Python's ``sqlite3`` ships
it). The statement is the same CTE chain and the same arithmetic in each; what differs
(:class:`~fcps_core.deploy.sql_text.Dialect`):

* **Number literals.** DuckDB ``0.5e0`` (exponent form is DOUBLE; ``0.5`` is DECIMAL);
  PostgreSQL ``float8 '0.5e0'`` (any unadorned literal with a point or exponent is
  ``numeric``, whose arithmetic rounds differently); SQLite ``0.5e0`` (REAL).
* **Parsing a cell as a number** (``TRY_CAST`` exists in DuckDB only). PostgreSQL: a
  regular expression admits Python's plain decimal spellings, then ``CAST(.. AS float8)``;
  a value float8 would refuse with an error that ends the statement is compared as
  ``numeric`` first (beyond the largest double: NULL, Python's inf; below half the smallest
  subnormal: 0, as Python). Spellings with an exponent of five or more digits, or longer
  than 1,000 characters, are NULL (Python reads ``1e-99999`` as 0.0). SQLite: ``GLOB``
  patterns admit the same spellings (its ``CAST`` reads any prefix: ``'1x'`` is 1), a stored
  INTEGER or REAL is read as is.
* **Finite test.** DuckDB ``isfinite``; the others ``(x - x) = 0`` (NaN for an infinite
  x in PostgreSQL, NULL in SQLite, which has no NaN).
* **Functions.** ``trim(x, chars)`` is ``btrim`` in PostgreSQL; ``chr`` is ``char`` in
  SQLite; ``greatest``/``least`` are SQLite's two-argument ``max``/``min``; text casts are
  ``VARCHAR`` in DuckDB, ``TEXT`` elsewhere. ``lower`` is ASCII-only in SQLite (enough for
  the missing markers).
* **CTEs.** PostgreSQL and SQLite inline a CTE into the query that reads it, copying each
  column's expression into every reference (the isotonic tree reads its score at every
  node: exponential growth; a ``residual`` predictor ran out of memory unmarked), so both
  get ``AS MATERIALIZED``.
* **Identifiers.** Every name is a double-quoted identifier with embedded quotes doubled.
  DuckDB and SQLite match quoted identifiers case-insensitively, so two judges whose
  names differ only by case (or a judge named like the item column up to case) cannot both
  be read from one table: the export refuses such a predictor, naming both. PostgreSQL
  keeps case but cuts names to 63 bytes: names sharing their first 63 bytes are refused.
  SQLite reads an unknown double-quoted name as a string literal; its statement qualifies
  every column with the table's alias (``fcps_src."judge"``), so a missing column is an
  error there too.
* **Typed columns.** PostgreSQL prints a ``double precision`` 1.0 as ``1`` (DuckDB and
  SQLite print ``1.0``): a text judge written ``0.0``/``1.0`` needs a ``text`` or
  ``numeric`` column there. SQLite prints a REAL with 15 significant digits, which is why
  numbers stored as REAL are read without a text round trip. PostgreSQL prints doubles
  exactly only with ``extra_float_digits`` >= 1 (its default since version 12).
* **Arithmetic errors.** PostgreSQL raises an error (ending the statement) where a double
  operation overflows or underflows, which other engines and numpy let pass: only for
  absurd cells (beyond ~1e150 or below ~1e-150 in a product), never on the range a judge
  calibrated on. SQLite's expression depth is limited to 1,000, so its sums are written
  without nested parentheses (its parser overflows at ~100), and a linear family of more
  than ~990 features (a pairwise family of more than ~43 judges) is beyond it.

Other engines (not compiled to, for reference): BigQuery has no ``VALUES`` lists (use
``UNNEST([STRUCT(...), ...])``), ``SAFE_CAST`` instead of ``TRY_CAST``, ``IS_INF``/``IS_NAN``,
``CODE_POINTS_TO_STRING`` for ``chr``, and backslash escapes in strings; Snowflake has
``TRY_CAST`` only from strings and no ``isfinite``.

Size: a table family contributes one ``VALUES`` row per calibration cell. The statement is
refused (:class:`~fcps_core.errors.PredictorError`) above :data:`MAX_SQL_CELLS` cells in
all (table rows, output codes, bin edges, isotonic steps, coefficients).
"""

from __future__ import annotations

import math
import re
import string

import numpy as np

from ..data.encoding import INT64_SAFE
from ..errors import PredictorError
from ..families import fitted_family
from ..data.stored_names import CONTROL_CHARACTERS
from ..data.panel import MISSING, MISSING_TOKENS
from .outputs import fold_targets
from .validate import check_structure, short
from .sql_text import (DIALECTS, Dialect, dialect as _dialect, dot_sql, isotonic_sql, member_of, pairwise_sum,
                       quote_ident, quote_table, sql_case, sql_str)

#: the largest statement compiled: table rows + output codes + bin edges + isotonic steps +
#: coefficients (a 1,000,000-row VALUES list is ~40 MB of SQL; warehouses cap statements)
MAX_SQL_CELLS = 1_000_000

_TEXT_SCHEMAS = ("pairwise", "binary", "categorical")
#: the scored table's alias in the statement
SOURCE = "fcps_src"
#: PostgreSQL's identifier length (NAMEDATALEN - 1 bytes): longer names are cut to it
PG_IDENT_BYTES = 63


# -- the compiler ----------------------------------------------------------------------------

def _canonical_number(tok: str) -> float | None:
    """The number a rubric token stands for, when the reader can produce that token (it
    writes every rubric output as ``_format_number(float(cell))``); None otherwise."""
    try:
        v = float(tok)
    except (TypeError, ValueError):
        return None
    # panel._format_number: integral values as integers ('3'), others as repr ('2.5')
    written = str(int(v)) if math.isfinite(v) and v.is_integer() else repr(v)
    if not math.isfinite(v) or written != tok:
        return None
    return v


class _Compiler:
    """Collects the columns of the CTE chain and the lookup tables while walking the
    predictor; :meth:`sql` assembles the statement.

    fcps_in   one cleaned value per judge (token, or number + missing flag), read once
    fcps_enc  each member's table codes and scalar scores per judge, the invalid-row flag
    fcps_pat  joint-pattern ids and linear scores (each computed once, used by many CASEs)
    lookups   one VALUES list per fitted table level, LEFT JOINed on the pattern id
    """

    def __init__(self, predictor, table: str, item_column: str, d: Dialect):
        self.d = d
        self.table = quote_table(table)
        self.item = d.column(SOURCE, item_column)
        members = [m for _, m in predictor.members]
        judges = [j for m in members for j in m.judges]
        if item_column in judges:
            raise PredictorError(f"the item column {item_column!r} is also a judge of the predictor; "
                                 "name the item id column with item_column")
        check_printable_names(list(dict.fromkeys(judges)) + [item_column])
        if d.folds_case:
            check_distinct_folded(list(dict.fromkeys(judges)), item_column, d)
        else:
            check_distinct_truncated(list(dict.fromkeys(judges)), item_column)
        self.schemas = predictor.judge_schemas()
        self.tokens: dict[str, set] = {}        # judge -> every output some encoder knows
        for m in members:
            for e in m.encoders:
                self.tokens.setdefault(e.name, set()).update(e.vocab, e.scalar_map)
        self.inputs: dict[str, int] = {}        # judge -> index of its fcps_in columns
        self.in_cols: list[str] = []
        self.bad: list[str] = []
        self.enc_cols: list[str] = []
        self.pat_cols: list[str] = []
        self.lookups: list[tuple[str, str, list[str]]] = []   # (name, columns, rows)
        self.joins: list[str] = []
        self.patterns: set[str] = set()
        self.cells = 0

    def count(self, n: int) -> None:
        self.cells += int(n)
        if self.cells > MAX_SQL_CELLS:
            raise PredictorError(f"the predictor needs more than {MAX_SQL_CELLS:,} SQL cells (table rows, "
                                 "output codes, isotonic steps); it is too large to compile to one statement")

    # inputs -----------------------------------------------------------------------------
    def judge_input(self, name: str) -> int:
        """fcps_in columns of a judge, read the way ``score`` reads it: with the schema the
        predictor saw (``FCPSPredictor.judge_schemas``)."""
        if name in self.inputs:
            return self.inputs[name]
        i = len(self.inputs)
        self.inputs[name] = i
        d = self.d
        x = d.column(SOURCE, name)
        txt = d.text(x)
        missing = member_of(f"lower({d.trim(txt, d.ws_all)})", sorted(MISSING_TOKENS))
        schema = self.schemas[name]
        if schema not in _TEXT_SCHEMAS + ("rubric", "continuous"):
            raise PredictorError(f"judge {name!r} has an unknown schema {schema!r}")
        if schema in _TEXT_SCHEMAS:
            # The reader's token: the cell stripped of whitespace, '<missing>' for a missing
            # marker. A cell that already is one of the predictor's tokens (no surrounding
            # whitespace, not a missing marker) is its own token: it skips trim() with a
            # character set, DuckDB's slowest step of the lookup (docs/performance.md).
            clean = sorted(t for t in self.tokens.get(name, ())
                           if t and t == t.strip() and t.lower() not in MISSING_TOKENS)
            fast = f"WHEN {member_of(txt, clean)} THEN {txt} " if clean else ""
            stripped = d.trim(txt, d.ws_all)
            rest = (f"CASE WHEN {missing} THEN {sql_str(MISSING)} "
                    f"ELSE {self.known_token(name, stripped, stripped)} END")
            # A cell that is a known output but for the case of its letters (no surrounding
            # whitespace: a fold never has any) is read as that output before any trim();
            # a fold is never a missing marker (outputs.fold_targets), so this cannot hide one.
            folded = self.known_token(name, txt, "NULL")
            if folded != "NULL":
                rest = f"COALESCE({folded}, {rest})"
            self.in_cols.append(
                f"CASE WHEN {x} IS NULL THEN {sql_str(MISSING)} {fast}ELSE {rest} END AS j{i}_t")
            return i
        # rubric: the cell is stripped, then parsed (panel._discrete_column);
        # continuous: float() strips its own whitespace set (panel._continuous_column).
        ws = d.ws_all if schema == "rubric" else d.ws_float
        direct = d.direct_number(x)
        slow = d.number(d.trim(txt, ws))
        # A finite number is never a missing marker, so numeric cells skip the string work.
        self.in_cols.append(
            f"CASE WHEN {d.finite(direct)} THEN {direct} "
            f"WHEN {x} IS NULL OR {missing} THEN NULL "
            f"WHEN {d.finite(slow)} THEN {slow} END AS j{i}_v")
        self.in_cols.append(
            f"CASE WHEN {x} IS NULL THEN TRUE WHEN {d.finite(direct)} THEN FALSE "
            f"ELSE {missing} END AS j{i}_m")
        # Not missing and not a finite number: Python refuses the file; the row scores NULL.
        self.bad.append(f"(j{i}_v IS NULL AND NOT j{i}_m)")
        return i

    def known_token(self, name: str, token: str, other: str) -> str:
        """``token`` (a cell, or the stripped cell) read as ``FCPSPredictor.read_outputs``
        reads it (:mod:`fcps_core.deploy.outputs`) when its fold (ASCII letters in lower
        case) is the fold of exactly one output the predictor knows: that output; ``other``
        otherwise. Given the stripped cell and ``other`` the same, this is the whole rule: a
        known output is its own fold's one output unless the fold is ambiguous, when it
        stays itself too. The fold is ``replace`` of each upper-case letter the known
        folds hold (a letter they lack cannot make a cell match one), the same function in
        every dialect (SQLite's ``lower`` and PostgreSQL's under a C collation change ASCII
        letters only, DuckDB's others too)."""
        targets = fold_targets(self.tokens.get(name, ()))
        if not targets:
            return other
        folded = token
        for letter in sorted({c for key in targets for c in key if c in string.ascii_lowercase}):
            folded = f"replace({folded}, {sql_str(letter.upper())}, {sql_str(letter)})"
        return sql_case(folded, [(sql_str(k), sql_str(t)) for k, t in sorted(targets.items())], other)

    # encodings --------------------------------------------------------------------------
    def encode(self, prefix: str, k: int, enc, *, codes: bool, scores: bool) -> None:
        """``m?_c{k}`` (table code, -1 = never seen) and ``m?_s{k}`` (scalar score) of one
        judge, as ``JudgeEncoder.codes_for`` / ``scores_for`` compute them."""
        i = self.judge_input(enc.name)
        read = self.schemas[enc.name]
        if (read == "continuous") != (enc.schema == "continuous"):
            raise PredictorError(f"judge {enc.name!r} was {enc.schema} when the predictor was made but is "
                                 f"read as {read} (the members disagree); it cannot be compiled")
        if enc.schema == "continuous":
            self._encode_continuous(prefix, k, i, enc, codes, scores)
            return
        lookup = {tok: c for c, tok in enumerate(enc.vocab)}       # later duplicates win, as in codes_for
        smap = dict(enc.scalar_map)
        self.count(len(lookup) + len(smap))
        if read == "rubric":
            self._encode_rubric(prefix, k, i, enc, lookup, smap, codes, scores)
            return
        t = f"j{i}_t"
        if codes:
            self.enc_cols.append(f"CAST({sql_case(t, [(sql_str(tok), str(c)) for tok, c in lookup.items()], '-1')} "
                                 f"AS BIGINT) AS {prefix}_c{k}")
        if scores:
            self.enc_cols.append(sql_case(t, [(sql_str(tok), self.d.num(s)) for tok, s in smap.items()],
                                       self.d.num(enc.default_score)) + f" AS {prefix}_s{k}")

    def _encode_rubric(self, prefix, k, i, enc, lookup, smap, codes, scores) -> None:
        # The reader writes a rubric output as _format_number(value): a token matches the
        # rows whose value is its number; a token the reader can never write matches none.
        v, m = f"j{i}_v", f"j{i}_m"

        def branches(mapping, fmt):
            out = [(m, fmt(mapping[MISSING]))] if MISSING in mapping else []
            for tok, val in mapping.items():
                num = _canonical_number(tok)
                if num is not None:
                    out.append((f"{v} = {self.d.num(num)}", fmt(val)))
            return out

        if codes:
            self.enc_cols.append(f"CAST({sql_case(None, branches(lookup, str), '-1')} AS BIGINT) AS {prefix}_c{k}")
        if scores:
            self.enc_cols.append(sql_case(None, branches(smap, self.d.num), self.d.num(enc.default_score))
                                 + f" AS {prefix}_s{k}")

    def _encode_continuous(self, prefix, k, i, enc, codes, scores) -> None:
        v, m = f"j{i}_v", f"j{i}_m"
        edges = [float(e) for e in (enc.bin_edges or [])]
        self.count(len(edges) + 2)
        # increasing edges, a cell value per bin and a scale: deploy.validate.check_structure
        if codes:
            miss = enc.vocab.index(MISSING) if MISSING in enc.vocab else -1
            # np.searchsorted(edges, v, side='right'): the number of edges <= v
            bins = [(f"{v} < {self.d.num(e)}", str(b)) for b, e in enumerate(edges)]
            self.enc_cols.append(f"CAST({sql_case(None, [(m, str(miss))] + bins, str(len(edges)))} AS BIGINT) "
                                 f"AS {prefix}_c{k}")
        if scores:
            lo, hi = (float(s) for s in enc.scale)
            if hi > lo:
                scaled = self.d.clip01(f"(({v} - {self.d.num(lo)}) / {self.d.num(hi - lo)})")
                self.enc_cols.append(f"CASE WHEN {m} THEN {self.d.num(0.5)} ELSE {scaled} END AS {prefix}_s{k}")
            else:
                self.enc_cols.append(f"{self.d.num(0.5)} AS {prefix}_s{k}")

    # patterns and lookups ---------------------------------------------------------------
    def pattern(self, prefix: str, member, level: int) -> str:
        """Column of the joint-pattern id of judges 0..level (``prefix_patterns``: mixed
        radix over the alphabets, -1 when a code is -1)."""
        col = f"{prefix}_p{level}"
        if col in self.patterns:
            return col
        sizes = [e.alphabet_size for e in member.encoders]
        radix = 1
        for a in sizes[:level + 1]:
            if radix > INT64_SAFE // max(a, 1):
                raise PredictorError("the predictor's joint table is too large to index (over 2**62 cells)")
            radix *= a
        expr = f"{prefix}_c0"
        for k in range(1, level + 1):
            expr = f"(({expr} * {int(sizes[k])}) + {prefix}_c{k})"
        unseen = " OR ".join(f"{prefix}_c{k} < 0" for k in range(level + 1))
        self.pat_cols.append(f"CASE WHEN {unseen} THEN -1 ELSE {expr} END AS {col}")
        self.patterns.add(col)
        return col

    def lookup(self, name: str, pattern_col: str, ids, columns: list[tuple[str, np.ndarray]]) -> str | None:
        """A ``VALUES`` list (pid, columns...) LEFT JOINed on the pattern id; None when the
        table has no cell. Stored ids are sorted and distinct (``np.unique``); another order
        would make Python's binary search return something else, so such a predictor is
        refused on load and here alike (deploy.validate.check_structure)."""
        ids = [int(v) for v in ids]
        keep = [r for r, pid in enumerate(ids) if pid >= 0]      # lookup() never finds a negative id
        if not keep:
            return None
        self.count(len(keep))
        rows = ["(" + ", ".join([str(ids[r])] + [self.d.num(vals[r]) for _, vals in columns]) + ")" for r in keep]
        self.lookups.append((name, ", ".join(["pid"] + [c for c, _ in columns]), rows))
        self.joins.append(f"LEFT JOIN {name} ON {name}.pid = fcps_pat.{pattern_col}")
        return name

    # families ---------------------------------------------------------------------------
    def member(self, prefix: str, member) -> str:
        """The expression of one member's prediction."""
        model, name = member.model, member.family
        K = len(member.encoders)          # one encoder per judge: deploy.validate.check_structure
        table_like = name in ("table", "backoff", "residual")
        needs_scores = name not in ("table", "backoff")
        for k, enc in enumerate(member.encoders):
            self.encode(prefix, k, enc, codes=table_like, scores=needs_scores)
        scores = [f"{prefix}_s{k}" for k in range(K)]
        if name == "table":
            return self.d.clip01(self._table(prefix, member, model, K))
        if name == "backoff":
            return self.d.clip01(self._backoff(prefix, member, model, K))
        if name == "residual":
            return self._residual(prefix, member, model, K, scores)
        return self.d.clip01(self._scalar(prefix, name, model, scores))

    def _table(self, prefix, member, model, K) -> str:
        levels = sorted(model.tables_, reverse=True)      # each below K: check_structure
        found = []
        for level in levels:
            uniq, sums, counts = model.tables_[level]
            # JointTable's cell values, the same numpy operations: (S + alpha ybar) / (N + alpha)
            values = (np.asarray(sums, float) + model.alpha * model.ybar_) / (np.asarray(counts, float) + model.alpha)
            t = self.lookup(f"{prefix}_t{level}", self.pattern(prefix, member, level), uniq, [("v", values)])
            if t is not None:
                found.append(f"{t}.v")
        # the longest level holding the row's pattern, else the calibration mean
        return f"COALESCE({', '.join(found + [self.d.num(model.ybar_)])})" if found else self.d.num(model.ybar_)

    def _backoff(self, prefix, member, model, K) -> str:
        lam = self.d.num(model.shrinkage)
        pred = self.d.num(model.ybar_)
        for k, (uniq, sums, counts) in enumerate(model.levels_):
            t = self.lookup(f"{prefix}_b{k}", self.pattern(prefix, member, k), uniq,
                            [("s", sums), ("n", counts)])
            zero = self.d.num(0.0)
            s, n = (f"COALESCE({t}.s, {zero})", f"COALESCE({t}.n, {zero})") if t else (zero, zero)
            # (S_k + lam g_{k-1}) / (N_k + lam), an unseen sub-pattern with S = N = 0 (not
            # simply g_{k-1}: lam * g / lam need not round back to g)
            pred = f"(({s} + ({lam} * {pred})) / ({n} + {lam}))"
        return pred

    def _residual(self, prefix, member, model, K, scores) -> str:
        base = self.d.clip01(self._scalar(f"{prefix}_r", model.base, model.base_, scores))
        k = float(model.shrinkage)
        uniq = model.uniq_
        term = np.asarray(model.sums_, float) / (np.asarray(model.counts_, float) + k)   # N/(N+k) * mean residual
        t = self.lookup(f"{prefix}_res", self.pattern(prefix, member, K - 1), uniq, [("v", term)])
        if k > 0:
            # unseen: 0 / (0 + k) = 0 and base + 0 = base
            return self.d.clip01(f"({base} + COALESCE({t}.v, {self.d.num(0.0)}))" if t else base)
        # shrinkage 0: an unseen pattern is 0/0 (NaN in Python, NULL here)
        return f"CASE WHEN {t}.v IS NULL THEN NULL ELSE {self.d.clip01(f'({base} + {t}.v)')} END" if t else "NULL"

    def _scalar(self, prefix, name, model, scores) -> str:
        """A scalar family's prediction before the final clip. Linear scores go to a
        fcps_pat column (``prefix_z``) so the isotonic CASE tree reads a column."""
        K = len(scores)
        z = f"{prefix}_z"

        def column(expr: str) -> str:
            self.pat_cols.append(f"{expr} AS {z}")
            return z

        if name == "mean_iso":
            x = column(f"({pairwise_sum(scores, self.d)} / {self.d.num(K)})")      # scores.mean(axis=1)
            return self._iso(x, model.iso_)
        if name == "one_coin_iso":
            w = self._coefs(model.weights_, K)
            half, zero = self.d.num(0.5), self.d.num(0.0)
            votes = [f"CASE WHEN {s} > {half} THEN {self.d.num(wj)} WHEN {s} < {half} THEN {self.d.num(-wj)} "
                     f"ELSE {zero} END"
                     for s, wj in zip(scores, w)]
            # prior + sum_j sign(s_j - 1/2) w_j, left to right (x * +-1 and x * 0 are exact)
            return self._iso(column(self.d.left_sum(self.d.num(model.prior_logit_), votes)), model.iso_)
        if name == "ds_jury":
            w1, w0 = self._coefs(model.w1_, K), self._coefs(model.w0_, K)
            half, zero = self.d.num(0.5), self.d.num(0.0)
            # vote 1 adds w1, vote 0 adds w0, abstention adds nothing (the other term is + 0)
            expr = self.d.left_sum(self.d.num(model.prior_logit_), [
                f"CASE WHEN {s} > {half} THEN {self.d.num(a)} WHEN {s} < {half} THEN {self.d.num(b)} ELSE {zero} END"
                for s, a, b in zip(scores, w1, w0)])
            return self._iso(column(f"({self.d.num(model.orientation_)} * {expr})"), model.iso_)
        if name in ("ridge_iso", "ridge_pairwise_iso", "logistic", "logistic_pairwise"):
            feats = list(scores)
            if fitted_family(name).pairwise:
                iu, ju = np.triu_indices(K, k=1)     # pairwise_features: scores, then s_i * s_j (i < j)
                feats += [f"({scores[a]} * {scores[b]})" for a, b in zip(iu, ju)]
            coef = self._coefs(model.coef_, len(feats))
            if name.startswith("ridge"):
                if model.iso_ is None:
                    return self.d.num(model.ybar_)         # constant calibration labels
                return self._iso(column(dot_sql(model.intercept_, feats, coef, self.d)), model.iso_)
            if model.constant_:
                return self.d.num(model.ybar_)
            zc = column(self.d.clip(dot_sql(model.intercept_, feats, coef, self.d), -35.0, 35.0))
            one = self.d.num(1.0)
            return f"({one} / ({one} + exp(-{zc})))"
        raise PredictorError(f"family {name!r} cannot be compiled to SQL")

    def _coefs(self, values, n: int) -> list[float]:
        values = [float(v) for v in np.asarray(values, float).ravel()]      # n of them: check_structure
        self.count(n)
        return values

    def _iso(self, x: str, iso) -> str:
        self.count(len(iso.x_))
        return isotonic_sql(x, iso.x_, iso.y_, self.d)

    # assembly ---------------------------------------------------------------------------
    def sql(self, prediction: str, family: str) -> str:
        bad = " OR ".join(self.bad) if self.bad else "FALSE"
        # PostgreSQL and SQLite inline a CTE into its user, copying each column's expression
        # into every reference to it (the isotonic tree reads its score at every node): the
        # statement then grows exponentially. MATERIALIZED keeps each step computed once.
        mat = "" if self.d.name == "duckdb" else "MATERIALIZED "
        ctes = [
            f"fcps_in AS {mat}(\n  SELECT " + ",\n    ".join([f"{self.item} AS fcps_item"] + self.in_cols)
            + f"\n  FROM {self.table} AS {SOURCE}\n)",
            f"fcps_enc AS {mat}(\n  SELECT " + ",\n    ".join(["fcps_item", f"({bad}) AS fcps_bad"] + self.enc_cols)
            + "\n  FROM fcps_in\n)",
            f"fcps_pat AS {mat}(\n  SELECT " + ",\n    ".join(["*"] + self.pat_cols) + "\n  FROM fcps_enc\n)",
        ]
        for name, cols, rows in self.lookups:
            ctes.append(f"{name}({cols}) AS (VALUES\n  " + ",\n  ".join(rows) + "\n)")
        joins = "".join(f"\n{j}" for j in self.joins)
        return (f"-- fcps predictor ({family}) compiled by fcps_core.deploy.sql for {self.d.name}: "
                "one row per row of the table\n"
                "WITH " + ",\n".join(ctes) + "\n"
                f"SELECT fcps_item AS item_id,\n  CASE WHEN fcps_bad THEN NULL ELSE {prediction} END AS prediction\n"
                f"FROM fcps_pat{joins}\n")


#: characters a column name in an exported SQL file may not hold: the control characters of
#: :data:`fcps_core.data.stored_names.CONTROL_CHARACTERS` and line ends; a tab is allowed (it moves no cursor
#: beyond its line and a quoted identifier may hold it)
_UNPRINTABLE = re.compile(f"(?!\t)[{CONTROL_CHARACTERS}\r\n]")


def check_printable_names(names: list[str]) -> None:
    """Refuse a judge (or the item column) whose name holds a control or bidi-override
    character: the SQL must name the column exactly, so the file would carry an escape
    sequence to whatever terminal or editor shows it (quoting keeps the statement itself
    safe)."""
    for name in names:
        bad = _UNPRINTABLE.search(name)
        if bad is not None:
            raise PredictorError(f"judge {short(name)} holds the control character U+{ord(bad.group()):04X}: "
                                 "an SQL file naming the column would carry it to any terminal or editor "
                                 "that shows the file; rename the column in the panel and select again "
                                 "(score reads it as it is)")


def check_distinct_folded(judges: list[str], item_column: str, d: Dialect | None = None) -> None:
    """Refuse judge names (and the item column) that differ only by case: DuckDB and SQLite
    match quoted identifiers case-insensitively (ASCII letters), so ``"Judge"`` and
    ``"judge"`` would both read one column and the statement would score silently wrong
    numbers."""
    engine = "SQLite" if d is not None and d.name == "sqlite" else "DuckDB"
    seen: dict[bytes, str] = {}
    for name in [item_column] + judges:
        key = name.encode("utf-8", "surrogatepass").lower()     # ASCII letters only, as DuckDB folds
        if key in seen and seen[key] != name:
            what = "the item column" if seen[key] == item_column else "judge"
            raise PredictorError(f"{what} {short(seen[key])} and judge {short(name)} differ only by case: {engine} reads "
                                 "column names case-insensitively, so the SQL would read one column for both "
                                 "and score wrong numbers; rename one of them in the panel and select again "
                                 "(score reads them apart)")
        seen.setdefault(key, name)


def check_distinct_truncated(judges: list[str], item_column: str) -> None:
    """Refuse names (judges and the item column) that PostgreSQL cannot tell apart: it
    cuts an identifier to its first 63 bytes (at a character boundary), so two long names
    sharing those bytes would read one column."""
    seen: dict[bytes, str] = {}
    for name in [item_column] + judges:
        raw = name.encode("utf-8", "surrogatepass")
        cut = raw[:PG_IDENT_BYTES].decode("utf-8", "ignore").encode("utf-8")
        if cut in seen and seen[cut] != name:
            what = "the item column" if seen[cut] == item_column else "judge"
            raise PredictorError(f"{what} {short(seen[cut])} and judge {short(name)} share their first "
                                 f"{PG_IDENT_BYTES} bytes: PostgreSQL cuts column names there, so the SQL would "
                                 "read one column for both; rename one of them in the panel and select again")
        seen.setdefault(cut, name)


def predictor_sql(predictor, table: str = "traffic", *, item_column: str = "item_id",
                  dialect: str = "duckdb") -> str:
    """One SQL ``SELECT`` scoring every row of ``table`` with ``predictor``.

    ``table`` holds one column per judge (named as the judge) and the item id column
    ``item_column``; the statement returns ``item_id, prediction`` for every row, the value
    ``predictor.predict`` gives on the same cells (``prediction`` is NULL on a row Python
    would refuse: see the module docstring). ``dialect``: the engine the statement is
    written for, one of :data:`DIALECTS` (``duckdb``, ``postgres``, ``sqlite``; how they
    differ: the module docstring). Raises :class:`PredictorError` for an unknown dialect,
    a table name that is not a plain (dotted) identifier, a predictor above
    :data:`MAX_SQL_CELLS` cells, judge names the dialect cannot tell apart, or a malformed
    predictor.
    """
    check_structure(predictor)        # the rules every predictor is loaded with (deploy.validate)
    compiler = _Compiler(predictor, table, item_column, _dialect(dialect))
    try:
        # FCPSPredictor.predict: sum(weight * member), added in member order; a weight of 1
        # multiplies nothing (one member: its own expression, bit for bit)
        total = None
        for i, (w, m) in enumerate(predictor.members):
            part = compiler.member(f"m{i}", m)
            if w != 1.0:
                part = f"({compiler.d.num(w)} * {part})"
            total = part if total is None else f"({total} + {part})"
        prediction = total
    except PredictorError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # a file that loads but whose parts do not fit together (from_dict checks less)
        raise PredictorError(f"predictor file is malformed: {exc!r}") from None
    return compiler.sql(prediction, predictor.family)
