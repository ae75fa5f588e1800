"""The SQL export in each dialect (``export --format sql --dialect duckdb|postgres|sqlite``)
scores a table as ``score`` scores the same file.

The statement of every family and of the default predictor (a crossfit ``tie_average`` of
members) runs in DuckDB, in SQLite (Python's stdlib ``sqlite3``) and, when the machine has
PostgreSQL's server binaries (Debian's ``postgresql`` package), in a PostgreSQL server this
module starts on a Unix socket in a temporary directory and stops at the end. Each engine
reads the panel file twice: every column as text (exact), and with number columns typed
(BIGINT/DOUBLE where every cell is an integer/a number, as DuckDB's ``read_csv`` infers).
Expected numbers come from ``FCPSPredictor.predict`` on the panel ``score`` reads (the
predictor's schemas, no labels); the default predictor is also compared with the ``score``
command's own output, at its printed precision (six decimals).
"""

from __future__ import annotations

import csv
import glob
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import duckdb
import numpy as np
import pytest

from fcps_core import FAMILIES, FCPSPredictor, PredictorError, make_blocks, read_panel
from fcps_core.cli.main import main
from fcps_core.deploy.sql import DIALECTS, predictor_sql
from fcps_core.selection import select
from test_sql_export import (_edit, continuous_csv, discrete_csv, handmade, python_scores, roundtrip,
                             selected)

ROOT = Path(__file__).resolve().parents[1]
#: SQL and Python do the same IEEE operations; only exp() and literal parsing may differ
#: in the last place. The printed precision of ``score`` is 1e-6.
TOL = 1e-9


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("dialectpanels")
    # continuous judges; binary (four spellings), categorical and rubric judges; pairwise
    # and rubric judges (the shipped LLMBar panel)
    return {"continuous": continuous_csv(tmp / "continuous.csv", rows=300),
            "discrete": discrete_csv(tmp / "discrete.csv", rows=300),
            "llmbar": ROOT / "data" / "llmbar.csv"}


@pytest.fixture(scope="module")
def panels(files):
    return {name: read_panel(str(path)) for name, path in files.items()}


# -- loading a CSV file into each engine -----------------------------------------------------

def _read_csv(path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


_INT = re.compile(r"\s*[+-]?[0-9]+\s*")


def _column_type(cells: list[str]) -> str:
    """BIGINT when every non-empty cell is an integer, DOUBLE when every one is a number,
    TEXT otherwise (DuckDB's read_csv inference, without BOOLEAN)."""
    filled = [c for c in cells if c.strip()]
    if filled and all(_INT.fullmatch(c) for c in filled):
        return "BIGINT"
    try:
        if filled and all(np.isfinite(float(c)) for c in filled):
            return "DOUBLE"
    except ValueError:
        pass
    return "TEXT"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _keyed(rows) -> dict[str, float | None]:
    out = {str(item).strip(): (None if p is None else float(p)) for item, p in rows}
    assert len(out) == len(rows)
    return out


def duckdb_scores(sql: str, path, typed: bool, schemas=None) -> dict:
    con = duckdb.connect()
    con.execute(f"CREATE TABLE traffic AS SELECT * FROM read_csv('{path}', all_varchar = {str(not typed).lower()})")
    return _keyed(con.execute(sql).fetchall())


def sqlite_scores(sql: str, path, typed: bool, schemas=None) -> dict:
    header, rows = _read_csv(path)
    types = [_column_type([r[k] for r in rows]) if typed else "TEXT" for k in range(len(header))]
    con = sqlite3.connect(":memory:")
    # typed: values stored as Python ints/floats (no declared type: stored as given)
    cols = ", ".join(_ident(h) + ("" if typed else " TEXT") for h in header)
    con.execute(f"CREATE TABLE traffic ({cols})")

    def value(cell, t):
        if t == "TEXT":
            return cell
        if not cell.strip():
            return None
        return int(cell) if t == "BIGINT" else float(cell)

    con.executemany(f"INSERT INTO traffic VALUES ({', '.join('?' * len(header))})",
                    [[value(c, t) for c, t in zip(r, types)] for r in rows])
    return _keyed(con.execute(sql).fetchall())


# -- a PostgreSQL server for the module -----------------------------------------------------

class Postgres:
    """A throw-away PostgreSQL cluster on a Unix socket (no TCP), driven with ``psql`` (no
    Python driver needed). As root the server runs as the ``postgres`` user (it refuses to
    run as root); its directory is made with ``tempfile`` under /tmp rather than in
    pytest's tmp_path, whose parents are private to the user running pytest and whose path
    may exceed the 107-byte limit of a socket path."""

    def __init__(self, bindir: str, psql: str):
        self.bindir = bindir
        self.psql_path = psql
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            import pwd
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                pytest.skip("running as root and there is no 'postgres' user to run the server as")
            runuser = shutil.which("runuser")
            if runuser is None:
                pytest.skip("running as root and runuser (util-linux) is missing to start the server as postgres")
            self.as_user = [runuser, "-u", "postgres", "--"]
        self.dir = tempfile.mkdtemp(prefix="fcps-pg-", dir="/tmp")
        if self.as_user:
            shutil.chown(self.dir, "postgres")
        self.data = os.path.join(self.dir, "data")
        self.started = False

    def run(self, *cmd, **kw):
        return subprocess.run(self.as_user + list(cmd), capture_output=True, text=True, timeout=120, **kw)

    def start(self) -> None:
        init = self.run(os.path.join(self.bindir, "initdb"), "-D", self.data, "-E", "UTF8", "--no-locale",
                        "-A", "trust", "-U", "fcps")
        assert init.returncode == 0, init.stderr
        start = self.run(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-l",
                         os.path.join(self.dir, "log"), "-w", "-o",
                         f"-k {self.dir} -c listen_addresses='' -c fsync=off", "start")
        assert start.returncode == 0, start.stderr + start.stdout
        self.started = True

    def stop(self) -> None:
        if self.started:
            self.run(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-m", "fast", "-w", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)

    def psql(self, script: str) -> str:
        """Run ``script`` with psql; its output unaligned, fields split by \\x1f."""
        out = subprocess.run([self.psql_path, "-X", "-q", "-A", "-t", "-F", "\x1f",
                              "-v", "ON_ERROR_STOP=1", "-h", self.dir, "-U", "fcps", "-d", "postgres"],
                             input=script, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[:2000]
        return out.stdout

    def scores(self, sql: str, path, typed: bool, schemas=None) -> dict:
        """``sql`` run on the file loaded as text or typed. PostgreSQL prints the double 1.0
        as '1' (DuckDB and SQLite print '1.0'), so a text judge's decimal column is typed
        NUMERIC, which keeps the spelling (see the sql module docstring)."""
        header, rows = _read_csv(path)
        types = [_column_type([r[k] for r in rows]) if typed else "TEXT" for k in range(len(header))]
        text_judges = {j for j, s in (schemas or {}).items() if s not in ("rubric", "continuous")}

        def pg_type(h, t):
            if t == "DOUBLE":
                return "NUMERIC" if h in text_judges else "DOUBLE PRECISION"
            return t

        cols = ", ".join(f"{_ident(h)} {pg_type(h, t)}" for h, t in zip(header, types))
        quoted = str(path).replace("'", "''")
        out = self.psql(f"DROP TABLE IF EXISTS traffic;\nCREATE TABLE traffic ({cols});\n"
                        f"\\copy traffic FROM '{quoted}' WITH (FORMAT csv, HEADER true)\n{sql};\n")
        rows = [line.split("\x1f") for line in out.splitlines() if line]
        return _keyed([(item, p if p != "" else None) for item, p in rows])


def postgres_bindir() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


@pytest.fixture(scope="module")
def postgres():
    bindir = postgres_bindir()
    psql = None if bindir is None else next(
        (p for p in (os.path.join(bindir, "psql"), shutil.which("psql")) if p and os.path.exists(p)), None)
    if bindir is None or psql is None or not os.path.exists(os.path.join(bindir, "pg_ctl")):
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl, psql): apt-get install postgresql")
    server = Postgres(bindir, psql)
    try:
        server.start()
        yield server
    finally:
        server.stop()


def engine_scores(dialect: str, request):
    if dialect == "duckdb":
        return duckdb_scores
    if dialect == "sqlite":
        return sqlite_scores
    return request.getfixturevalue("postgres").scores


def assert_dialect_matches(pred: FCPSPredictor, path, dialect: str, request, tol: float = TOL) -> dict:
    sql = predictor_sql(pred, dialect=dialect)
    expected = python_scores(pred, path)
    run = engine_scores(dialect, request)
    for typed in (False, True):
        got = run(sql, path, typed, pred.judge_schemas())
        assert got.keys() == expected.keys()
        diff = max(abs(got[k] - v) for k, v in expected.items())
        assert diff <= tol, (pred.family, dialect, "typed" if typed else "text", diff)
    return expected


# -- every family and the default predictor, in every dialect --------------------------------

@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("name", ["continuous", "discrete", "llmbar"])
@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_scores_as_predict(panels, files, request, dialect, name, family):
    pred = selected(panels, name, family)
    assert pred.families == [family] and pred.members[0][0] == 1.0
    assert_dialect_matches(pred, files[name], dialect, request)


_default: dict = {}


def default_predictor(panels, name: str) -> FCPSPredictor:
    """The library's default deployment (crossfit, tie_average of the menu's tied
    candidates; 2 folds x 1 repeat to stay fast)."""
    if name not in _default:
        panel = panels[name]
        result = select(panel, make_blocks(panel, split="1:2:1", seed=0), paths=["info_first"],
                        protocol="crossfit", folds=2, repeats=1, choice="tie_average", estimate="none",
                        with_baselines=False)
        _default[name] = roundtrip(result.predictor())
    return _default[name]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("name", ["continuous", "discrete"])
def test_the_default_predictor_equals_the_score_command(panels, files, request, tmp_path, capsys, monkeypatch,
                                                        dialect, name):
    pred = default_predictor(panels, name)
    assert len(pred.members) >= 2
    assert_dialect_matches(pred, files[name], dialect, request)
    # and the score command's own file, at its printed precision
    monkeypatch.setenv("FCPS_STORE", str(tmp_path / "store.duckdb"))
    model, out = tmp_path / "model.json", tmp_path / "scores.csv"
    pred.save(str(model))
    assert main(["score", str(model), str(files[name]), "--out", str(out)]) == 0, capsys.readouterr().err
    with open(out, newline="", encoding="utf-8") as fh:
        printed = {r["item_id"]: r["prediction"] for r in csv.DictReader(fh)}
    got = engine_scores(dialect, request)(predictor_sql(pred, dialect=dialect), files[name], False)
    assert printed.keys() == got.keys()
    assert all(f"{got[k]:.6f}" == v for k, v in printed.items())


# -- cells the dialects read differently from DuckDB -----------------------------------------

@pytest.mark.parametrize("dialect", DIALECTS)
def test_odd_number_spellings_and_missing_markers(panels, files, request, tmp_path, dialect):
    # Spellings Python's float() reads ('1.', '.5', '+.5e1', exponent forms, whitespace),
    # missing markers in any case, and cells Python refuses (NULL rows in SQL: checked apart)
    spellings = ["1.", ".5", "+.5e1", "-2.5E-1", " 3e0 ", "\t0.25\n", "NA", "nULL", "", "0.000001e6",
                 "1e-320", "-0"]

    def edits(i, col, cell):
        return spellings[i] if col in ("c0", "c2") and i < len(spellings) else cell

    edited = _edit(files["continuous"], tmp_path / "spellings.csv", edits)
    for family in ("table", "logistic", "mean_iso"):
        assert_dialect_matches(selected(panels, "continuous", family), edited, dialect, request)


@pytest.mark.parametrize("dialect", ["postgres", "sqlite"])
def test_cells_python_refuses_score_null_and_never_fail_the_statement(panels, files, request, tmp_path, dialect):
    # Python refuses a file holding these (score exits with an error); the SQL scores the
    # row NULL and every other row as usual. In PostgreSQL a bad cast would end the whole
    # statement: 1e999 overflows, 1e-400 underflows float8, 1e99999 is beyond numeric.
    bad = ["abc", "1e999", "-1e400", "1x", "1.2.3", "e5", "+-1", "1e5+", "--1", "1e99999", "inf"]
    fine = {"1e-400": 0.0}          # Python reads it as 0.0

    def edits(i, col, cell):
        if col != "c1":
            return cell
        return bad[i] if i < len(bad) else list(fine)[0] if i == len(bad) else cell

    edited = _edit(files["continuous"], tmp_path / "bad.csv", edits)
    pred = selected(panels, "continuous", "logistic")
    assert "c1" in pred.judges
    got = engine_scores(dialect, request)(predictor_sql(pred, dialect=dialect), edited, False)
    items = [r[0] for r in _read_csv(edited)[1]]
    assert [got[i] for i in items[:len(bad)]] == [None] * len(bad)
    # the other rows equal Python on the file without the refused cells
    clean = _edit(edited, tmp_path / "clean.csv", lambda i, col, cell: "" if col == "c1" and i < len(bad) else cell)
    expected = python_scores(pred, clean)
    assert None not in [got[k] for k in items[len(bad):]]
    assert max(abs(got[k] - expected[k]) for k in items[len(bad):]) <= TOL


# -- identifiers ------------------------------------------------------------------------------

def _names_panel(path: Path, names: list[str], rows: int = 120) -> Path:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, rows)
    header = ["item_id", "label"] + names
    body = [[f"i{i}", str(y[i])] + [str(int(y[i] if rng.random() < 0.8 else 1 - y[i])) for _ in names]
            for i in range(rows)]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([header] + body)
    return path


@pytest.mark.parametrize("dialect", DIALECTS)
def test_judge_names_with_quotes_spaces_and_unicode(tmp_path, request, dialect):
    names = ['say "yes"', "it's; DROP TABLE traffic; --", "Jüdge ✓"]
    path = _names_panel(tmp_path / "names.csv", names)
    panel = read_panel(str(path))
    for family in ("table", "logistic"):
        pred = handmade(panel, names, family)
        assert '"say ""yes"""' in predictor_sql(pred, dialect=dialect)
        assert_dialect_matches(pred, path, dialect, request)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_names_differing_only_by_case_are_refused_where_the_dialect_folds_case(tmp_path, request, dialect):
    path = _names_panel(tmp_path / "case.csv", ["Judge", "judge"])
    # named: judges differing only by case are refused by the reader unless named
    pred = handmade(read_panel(str(path), judges=["Judge", "judge"]), ["Judge", "judge"], "table")
    if dialect == "postgres":
        # PostgreSQL keeps the case of quoted names: the two columns are read apart
        assert_dialect_matches(pred, path, dialect, request)
    else:
        with pytest.raises(PredictorError, match="differ only by case"):
            predictor_sql(pred, dialect=dialect)


def test_postgres_refuses_names_it_would_cut_to_the_same_63_bytes(tmp_path):
    long = "j" * 63
    path = _names_panel(tmp_path / "long.csv", [long + "a", long + "b"])
    pred = handmade(read_panel(str(path)), [long + "a", long + "b"], "table")
    with pytest.raises(PredictorError, match="first 63 bytes"):
        predictor_sql(pred, dialect="postgres")
    predictor_sql(pred, dialect="duckdb")          # DuckDB and SQLite keep long names
    predictor_sql(pred, dialect="sqlite")


def test_sqlite_reports_a_missing_judge_column_instead_of_reading_a_string(tmp_path, panels):
    # SQLite reads an unknown double-quoted name as a string literal; the compiled SQL
    # qualifies every column, so a table without the judge is an error, not wrong numbers.
    pred = selected(panels, "discrete", "table")
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE traffic (item_id TEXT)")
    con.execute("INSERT INTO traffic VALUES ('a')")
    with pytest.raises(sqlite3.OperationalError, match="no such column"):
        con.execute(predictor_sql(pred, dialect="sqlite")).fetchall()


def test_an_unknown_dialect_is_refused(panels):
    with pytest.raises(PredictorError, match="unknown SQL dialect 'mysql'"):
        predictor_sql(selected(panels, "discrete", "table"), dialect="mysql")


def test_the_duckdb_statement_is_the_default(panels):
    pred = selected(panels, "discrete", "logistic")
    assert predictor_sql(pred) == predictor_sql(pred, dialect="duckdb")
    sqls = {d: predictor_sql(pred, dialect=d) for d in DIALECTS}
    assert "TRY_CAST" in sqls["duckdb"] and "isfinite" in sqls["duckdb"]
    for d in ("postgres", "sqlite"):
        assert "TRY_CAST" not in sqls[d] and "isfinite" not in sqls[d]
    assert "chr(" not in sqls["sqlite"] and "greatest" not in sqls["sqlite"]
    assert "float8 '" in sqls["postgres"] and "btrim(" in sqls["postgres"]


# -- the CLI ----------------------------------------------------------------------------------

def test_cli_export_takes_a_dialect(files, panels, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FCPS_STORE", str(tmp_path / "store.duckdb"))
    pred = selected(panels, "discrete", "ds_jury")
    model = tmp_path / "model.json"
    pred.save(str(model))
    for d in DIALECTS:
        out = tmp_path / f"model-{d}.sql"
        assert main(["export", str(model), "--format", "sql", "--dialect", d, "--out", str(out)]) == 0
        assert out.read_text(encoding="utf-8") == predictor_sql(FCPSPredictor.load(str(model)), dialect=d)
    assert main(["export", str(model), "--format", "sql", "--out", str(tmp_path / "default.sql")]) == 0
    assert (tmp_path / "default.sql").read_text(encoding="utf-8") == predictor_sql(pred)
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["export", str(model), "--format", "sql", "--dialect", "mysql"])
    assert "mysql" in capsys.readouterr().err


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_wide_pairwise_predictor_runs(request, dialect):
    # 12 judges: 78 pairwise products in one sum (SQLite's parser overflows at ~100 nested
    # parentheses: its sums are written without them)
    path = ROOT / "data" / "hanna.csv"
    hanna = read_panel(str(path))
    pred = handmade(hanna, hanna.judge_names[:12], "logistic_pairwise")
    assert_dialect_matches(pred, path, dialect, request)


def test_the_deploy_page_offers_every_dialect(panels):
    # app_pages/deploy.py: a select box over SQL_DIALECTS feeds sql_text
    import json
    from fcps_app.deploy import SQL_DIALECTS, sql_text
    assert tuple(SQL_DIALECTS) == DIALECTS
    pred = selected(panels, "discrete", "backoff")
    doc = json.dumps(pred.to_dict(), default=float)
    for d in DIALECTS:
        assert sql_text(doc, d) == predictor_sql(pred, dialect=d)
    page = (ROOT / "app_pages" / "deploy.py").read_text(encoding="utf-8")
    assert 'selectbox("SQL dialect", list(SQL_DIALECTS)' in page and "sql_text(predictor_json, dialect)" in page
