"""The DuckDB store: panels, judge outputs (long form), labels, runs and their results.

Location: ``data/fcps.duckdb`` next to the package by default, ``$FCPS_STORE`` when set, or
an explicit path (the CLI's ``--store``).

Tables (schema version :data:`LATEST_VERSION`, applied by :data:`MIGRATIONS`)::

    schema_version (version, description, applied_at)
    panels   (panel_id, name UNIQUE, schema, n_rows, n_labelled, n_judges, has_blocks,
              label_note, source, source_sha256, layout, provenance, licence,
              import_options, created_at)
    judges   (panel_id, judge_pos, name, schema, range_lo, range_hi, n_distinct, n_missing)
    items    (panel_id, row_pos, item_id, group_id, label, block)   -- labels/groups/blocks
    outputs  (panel_id, row_pos, judge_pos, output)                  -- long form, no missing
    judge_outputs VIEW (panel_id, item_id, judge, output)
    runs     (run_id, panel_id, panel_name, kind, status, label, params, seed, version,
              started_at, finished_at, seconds, timings, summary, error)
    run_candidates, run_cells                 -- a selection's candidates and audited cells
    sweep_cells, sweep_menu_cells, sweep_records   -- a calibration-growth sweep
    meta     (key, value)

Guarantees
----------
* **Atomic writes.** A panel import and a run are each written in one transaction: an
  error, a rollback or a killed process leaves no trace of them.
* **One writer per process, short holds.** DuckDB lets one process open a file read-write
  (or several read-only). Each process keeps at most one database handle per file (every
  thread gets its own cursor on it), serialises its writes, and closes the handle as soon
  as nobody uses it so other processes (the dashboard, a CLI import) get their turn. A
  process that finds the file locked retries with backoff for ``timeout`` seconds (default
  60, ``$FCPS_STORE_TIMEOUT``) and then raises :class:`StoreBusyError` with a plain
  message; DuckDB's lock error never reaches the user. Waiting processes touch a marker
  file next to the store, and a holder that sees it yields between operations.
* **Names are data.** Every value goes through query parameters; identifiers in SQL text
  are this module's constants. Exported CSV cells that a spreadsheet would run as a
  formula are neutralised (:func:`neutralise_cell`).
"""

from __future__ import annotations

import csv
import datetime as _dt
import hashlib
import io as _io
import json
import math
import os
import random
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from .errors import FCPSError
from .panel import MISSING, Panel

__all__ = ["Store", "StoreError", "StoreBusyError", "default_store_path", "resolve_store_path",
           "DEFAULT_PATH", "LATEST_VERSION", "MIGRATIONS", "validate_name", "neutralise_cell"]

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "data" / "fcps.duckdb"
ENV_PATH = "FCPS_STORE"
ENV_TIMEOUT = "FCPS_STORE_TIMEOUT"
DEFAULT_TIMEOUT = 60.0
MAX_NAME_LENGTH = 120
#: a holder that sees a waiter yields after holding this long (seconds) ...
HOLD_SECONDS = 0.5
#: ... and stays closed this long before reopening, so the waiter (polling faster) gets in
YIELD_SECONDS = 0.25
POLL_MAX_SECONDS = 0.05


class StoreError(FCPSError):
    """A store operation cannot be done (unknown panel, name taken, bad name, newer schema)."""


class StoreBusyError(StoreError):
    """Another process kept the store locked for longer than the timeout."""


def default_store_path() -> Path:
    """``$FCPS_STORE`` when set, else ``data/fcps.duckdb`` next to the package."""
    env = os.environ.get(ENV_PATH, "").strip()
    return Path(env).expanduser() if env else DEFAULT_PATH


def resolve_store_path(path: str | os.PathLike | None = None) -> Path:
    return Path(path).expanduser() if path else default_store_path()


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)


# -- schema and migrations -----------------------------------------------------------------

MIGRATIONS: list[tuple[int, str, tuple[str, ...]]] = [
    (1, "panels, judges, items, judge outputs (long form), runs, candidates, cells", (
        """CREATE TABLE panels (
            panel_id INTEGER PRIMARY KEY, name VARCHAR NOT NULL UNIQUE, schema VARCHAR NOT NULL,
            n_rows BIGINT NOT NULL, n_labelled BIGINT NOT NULL, n_judges INTEGER NOT NULL,
            has_blocks BOOLEAN NOT NULL, label_note VARCHAR, source VARCHAR,
            source_sha256 VARCHAR, layout VARCHAR, provenance VARCHAR, licence VARCHAR,
            import_options VARCHAR, created_at TIMESTAMP NOT NULL)""",
        """CREATE TABLE judges (
            panel_id INTEGER NOT NULL, judge_pos INTEGER NOT NULL, name VARCHAR NOT NULL,
            schema VARCHAR NOT NULL, range_lo DOUBLE, range_hi DOUBLE, n_distinct BIGINT,
            n_missing BIGINT, PRIMARY KEY (panel_id, judge_pos))""",
        # No key constraints on the two large tables: an index over 10^7 output rows would
        # cost more than the whole import; the writer builds them consistent by construction.
        """CREATE TABLE items (
            panel_id INTEGER NOT NULL, row_pos INTEGER NOT NULL, item_id VARCHAR NOT NULL,
            group_id VARCHAR NOT NULL, label DOUBLE, block VARCHAR)""",
        """CREATE TABLE outputs (
            panel_id INTEGER NOT NULL, row_pos INTEGER NOT NULL, judge_pos INTEGER NOT NULL,
            output VARCHAR NOT NULL)""",
        """CREATE VIEW judge_outputs AS
            SELECT o.panel_id, i.item_id, j.name AS judge, o.output
            FROM outputs o JOIN items i USING (panel_id, row_pos)
            JOIN judges j USING (panel_id, judge_pos)""",
        """CREATE TABLE runs (
            run_id INTEGER PRIMARY KEY, panel_id INTEGER NOT NULL, panel_name VARCHAR NOT NULL,
            kind VARCHAR NOT NULL CHECK (kind IN ('select', 'sweep')),
            status VARCHAR NOT NULL CHECK (status IN ('done', 'failed')),
            label VARCHAR, params VARCHAR NOT NULL, seed BIGINT, version VARCHAR NOT NULL,
            started_at TIMESTAMP, finished_at TIMESTAMP NOT NULL, seconds DOUBLE,
            timings VARCHAR, summary VARCHAR, error VARCHAR)""",
        """CREATE TABLE run_candidates (
            run_id INTEGER NOT NULL, cand_index INTEGER NOT NULL, path_rule VARCHAR,
            path VARCHAR, judges VARCHAR, K INTEGER, family VARCHAR, params VARCHAR,
            grid_size INTEGER, val_mse DOUBLE, val_nll DOUBLE, val_risk DOUBLE, val_se DOUBLE,
            test_mse DOUBLE, test_nll DOUBLE, Q_K DOUBLE, S_K DOUBLE, H_K DOUBLE,
            unseen_val DOUBLE, unseen_test DOUBLE, V_cell DOUBLE, V_proxy DOUBLE,
            cell_pressure_sum DOUBLE, selected BOOLEAN NOT NULL,
            PRIMARY KEY (run_id, cand_index))""",
        """CREATE TABLE run_cells (
            run_id INTEGER NOT NULL, cand_index INTEGER NOT NULL, cell_pos INTEGER NOT NULL,
            pattern VARCHAR, N_z BIGINT, mean_label DOUBLE, prediction DOUBLE, freq_val DOUBLE,
            freq_test DOUBLE, unseen BOOLEAN)""",
    )),
    (2, "calibration-growth sweeps (cells per budget and menu, per-split records), metadata", (
        """CREATE TABLE sweep_cells (
            run_id INTEGER NOT NULL, n_M INTEGER NOT NULL, splits INTEGER, delta DOUBLE,
            delta_se DOUBLE, ci_low DOUBLE, ci_high DOUBLE, table_test_mse DOUBLE,
            scalar_test_mse DOUBLE, table_K_mean DOUBLE, unseen_mean DOUBLE,
            V_cell_mean DOUBLE, V_proxy_mean DOUBLE, regret_vs_K_le_3 DOUBLE,
            regret_vs_K_le_3_se DOUBLE, detail VARCHAR)""",
        """CREATE TABLE sweep_menu_cells (
            run_id INTEGER NOT NULL, n_M INTEGER NOT NULL, menu VARCHAR NOT NULL,
            test_mse_mean DOUBLE, test_mse_se DOUBLE, oracle_test_mse_mean DOUBLE,
            oracle_test_mse_se DOUBLE, K_mean DOUBLE, K_sd DOUBLE, K_mode INTEGER,
            K_mode_share DOUBLE, unseen_mean DOUBLE, V_cell_mean DOUBLE, V_proxy_mean DOUBLE,
            pairwise_share DOUBLE, family_shares VARCHAR)""",
        """CREATE TABLE sweep_records (
            run_id INTEGER NOT NULL, split INTEGER NOT NULL, n_M INTEGER NOT NULL,
            menu VARCHAR NOT NULL, test_mse DOUBLE, test_nll DOUBLE, val_mse DOUBLE, K INTEGER,
            family VARCHAR, path_rule VARCHAR, unseen_test DOUBLE, V_cell DOUBLE,
            V_proxy DOUBLE, H_K DOUBLE, pairwise BOOLEAN, oracle_test_mse DOUBLE)""",
        "CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
    )),
]
LATEST_VERSION = MIGRATIONS[-1][0]
#: every table, in the order a panel/run delete must clear them (children first)
RUN_CHILD_TABLES = ("run_candidates", "run_cells", "sweep_cells", "sweep_menu_cells", "sweep_records")
CONTENT_TABLES = ("panels", "judges", "items", "outputs", "runs") + RUN_CHILD_TABLES + ("meta",)


def _newer_store(version: int) -> StoreError:
    return StoreError(f"the store was written by a newer fcps (schema version {version}; this "
                      f"fcps knows up to {LATEST_VERSION}); upgrade fcps to use it")


def migrate(cur, *, target: int | None = None) -> list[int]:
    """Bring the store's schema to ``target`` (default: the latest); each step is one
    transaction. Returns the versions applied."""
    target = LATEST_VERSION if target is None else target
    cur.execute("BEGIN TRANSACTION")
    cur.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, "
                "description VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)")
    current = cur.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0]
    cur.execute("COMMIT")
    if current > LATEST_VERSION:
        raise _newer_store(current)
    applied = []
    for version, description, statements in MIGRATIONS:
        if version <= current or version > target:
            continue
        cur.execute("BEGIN TRANSACTION")
        try:
            for sql in statements:
                cur.execute(sql)
            cur.execute("INSERT INTO schema_version VALUES (?, ?, ?)", [version, description, _now()])
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        applied.append(version)
    return applied


def _version(con) -> int:
    """The store's schema version (0 when it has none yet)."""
    try:
        return int(con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0])
    except Exception as exc:            # no schema_version table: an empty database file
        import duckdb
        if isinstance(exc, duckdb.CatalogException):
            return 0
        raise


# -- process-wide access to one store file ---------------------------------------------------

def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return "lock" in text and ("conflicting" in text or "could not set" in text)


class _FileAccess:
    """At most one DuckDB handle per store file in this process, shared by all threads.

    The handle is opened read-only when only readers need it and read-write when a writer
    does (a writer waits for read-only users to finish, then reopens). It is closed as soon
    as the last user leaves, so another process can take the file between operations.
    """

    def __init__(self, path: Path):
        self.path = path
        self.pid = os.getpid()
        self.cond = threading.Condition()
        self.write_lock = threading.Lock()    # one writer at a time in this process
        self.local = threading.local()        # the current thread's open transaction
        self.con = None
        self.mode: str | None = None
        self.users = 0
        self.opened_at = 0.0
        self.closed_at = -math.inf
        self.draining = False
        self.schema_ready = False

    @property
    def marker(self) -> Path:
        return self.path.with_name(self.path.name + ".wait")

    def _waiter_seen(self) -> bool:
        try:
            return time.time() - self.marker.stat().st_mtime < 1.0
        except OSError:
            return False

    def _signal_waiting(self) -> None:
        try:
            self.marker.touch()
        except OSError:
            pass   # a read-only folder: waiting still works, only without the courtesy

    def _open(self, mode: str, deadline: float, timeout: float):
        import duckdb
        delay = 0.01
        holder = "another process"
        while True:
            try:
                if mode == "ro":
                    return duckdb.connect(str(self.path), read_only=True)
                self.path.parent.mkdir(parents=True, exist_ok=True)
                return duckdb.connect(str(self.path))
            except duckdb.Error as exc:
                if not _is_lock_error(exc):
                    if isinstance(exc, (duckdb.IOException, duckdb.InvalidInputException,
                                        duckdb.SerializationException)):
                        raise StoreError(f"{self.path} is not a readable fcps store "
                                         f"({str(exc).splitlines()[0][:160]})") from None
                    raise
                pid = re.search(r"PID (\d+)", str(exc))
                holder = f"another process (pid {pid.group(1)})" if pid else "another process"
            if time.monotonic() >= deadline:
                raise StoreBusyError(
                    f"the store {self.path} is busy: {holder} kept it locked for {timeout:g} s; "
                    f"try again when it is done (or wait longer with ${ENV_TIMEOUT}=SECONDS)") from None
            self._signal_waiting()
            time.sleep(delay * (0.5 + random.random()))   # jitter: waiters do not collide
            delay = min(delay * 1.5, POLL_MAX_SECONDS)

    def _close(self) -> None:
        con, self.con, self.mode = self.con, None, None
        self.draining = False
        self.closed_at = time.monotonic()
        if con is not None:
            con.close()

    def acquire(self, write: bool, timeout: float):
        """The shared connection, opened in a mode that allows ``write``."""
        deadline = time.monotonic() + timeout
        with self.cond:
            if os.getpid() != self.pid:        # forked child: the parent's handle is not ours
                self.__init__(self.path)
            while True:
                if self.con is not None:
                    held = time.monotonic() - self.opened_at
                    wrong_mode = write and self.mode == "ro"
                    if not self.draining and not wrong_mode and not (
                            held > HOLD_SECONDS and self._waiter_seen()):
                        self.users += 1
                        return self.con
                    self.draining = True       # let current users finish, then reopen
                    if self.users == 0:
                        self._close()
                    else:
                        self.cond.wait(0.05)
                    continue
                gap = self.closed_at + YIELD_SECONDS - time.monotonic()
                if gap > 0 and self._waiter_seen():
                    self.cond.wait(gap)         # another process is waiting: give it a turn
                    continue
                # A reader needs the write lock only to create or migrate the store.
                mode = "rw" if write or not self.path.exists() else "ro"
                con = self._open(mode, deadline, timeout)
                try:
                    found = _version(con) if not self.schema_ready and mode == "ro" else LATEST_VERSION
                    if found > LATEST_VERSION:
                        raise _newer_store(found)
                    if found < LATEST_VERSION:    # an old or empty file: migrate it first
                        con.close()
                        mode = "rw"
                        con = self._open(mode, deadline, timeout)
                    if not self.schema_ready:
                        if mode == "rw":
                            migrate(con)
                        self.schema_ready = True
                except BaseException:
                    con.close()
                    raise
                self.con, self.mode = con, mode
                self.opened_at = time.monotonic()
                self.users = 1
                return con

    def release(self) -> None:
        with self.cond:
            self.users -= 1
            if self.users == 0:
                self._close()                   # idle: free the file for other processes
            self.cond.notify_all()


_ACCESS: dict[str, _FileAccess] = {}
_ACCESS_LOCK = threading.Lock()


def _access_for(path: Path) -> _FileAccess:
    key = os.path.realpath(path)
    with _ACCESS_LOCK:
        acc = _ACCESS.get(key)
        if acc is None or acc.pid != os.getpid():
            acc = _ACCESS[key] = _FileAccess(Path(key))
        return acc


# -- names and cells -------------------------------------------------------------------------

def validate_name(name: str, what: str = "panel name") -> str:
    """A panel name: 1-120 printable characters without surrounding spaces. Any other
    character (quotes, ``;``, ``<``, non-ASCII) is allowed: names are stored as data."""
    if not isinstance(name, str) or not name.strip():
        raise StoreError(f"the {what} is empty", )
    if name != name.strip():
        raise StoreError(f"the {what} {name.strip()[:40]!r} has leading or trailing spaces")
    if len(name) > MAX_NAME_LENGTH:
        raise StoreError(f"the {what} has {len(name)} characters; the limit is {MAX_NAME_LENGTH}")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise StoreError(f"the {what} {name[:40]!r} contains control characters")
    if name.lower().startswith("run:"):
        raise StoreError(f"the {what} {name!r} starts with 'run:', which names runs")
    return name


_NUMBER_CHARS = set("0123456789.eE+-")


def neutralise_cell(value) -> str:
    """Text for a CSV cell that no spreadsheet runs as a formula.

    A cell beginning with ``=``, ``+``, ``-``, ``@`` (or tab / carriage return) gets a
    leading apostrophe, unless it is a plain number such as ``-0.5`` (a spreadsheet reads
    that as a number, and rewriting it would corrupt negative scores).
    """
    text = "" if value is None else str(value)
    if text[:1] in ("=", "+", "-", "@", "\t", "\r"):
        if set(text) <= _NUMBER_CHARS:
            try:
                float(text)
                return text
            except ValueError:
                pass
        return "'" + text
    return text


def _json(value) -> str:
    return json.dumps(_plain(value), sort_keys=True, allow_nan=False)


def _plain(obj):
    """JSON-ready: NaN/inf -> None, numpy scalars -> Python, tuples -> lists."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [_plain(v) for v in obj.tolist()]
    if isinstance(obj, np.generic):
        return _plain(obj.item())
    return obj


def _num(value) -> float | None:
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _rows_to_dicts(cur) -> list[dict]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


# -- the store -------------------------------------------------------------------------------

class Store:
    """Panels and runs in one DuckDB file (see the module doc for guarantees).

    Parameters
    ----------
    path : store file; default ``$FCPS_STORE`` or ``data/fcps.duckdb``. Created with the
        latest schema on first use; an older store is migrated.
    timeout : seconds to wait for another process holding the file (default
        ``$FCPS_STORE_TIMEOUT`` or 60).
    """

    def __init__(self, path: str | os.PathLike | None = None, *, timeout: float | None = None):
        self.path = resolve_store_path(path)
        if timeout is None:
            try:
                timeout = float(os.environ.get(ENV_TIMEOUT, DEFAULT_TIMEOUT))
            except ValueError:
                raise StoreError(f"${ENV_TIMEOUT} must be a number of seconds") from None
        self.timeout = float(timeout)
        self._access = _access_for(self.path)

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    # -- connections ---------------------------------------------------------------------
    @contextmanager
    def reading(self) -> Iterator:
        """A cursor for queries; inside :meth:`transaction` it is that transaction's."""
        active = getattr(self._access.local, "cursor", None)
        if active is not None:
            yield active
            return
        local = self._access.local
        con = self._access.acquire(False, self.timeout)
        cur = con.cursor()
        local.reads = getattr(local, "reads", 0) + 1
        try:
            yield cur
        finally:
            local.reads -= 1
            cur.close()
            self._access.release()

    @contextmanager
    def transaction(self) -> Iterator:
        """One write transaction: committed when the block ends, rolled back on any error.
        Nested calls in the same thread join the outer transaction."""
        local = self._access.local
        if getattr(local, "cursor", None) is not None:
            yield local.cursor
            return
        if getattr(local, "reads", 0):
            # A read-only handle held by this very thread could never drain: fail loudly.
            raise RuntimeError("Store.transaction() inside Store.reading() in the same thread; "
                               "finish the read first")
        with self._access.write_lock:
            con = self._access.acquire(True, self.timeout)
            cur = con.cursor()
            try:
                cur.execute("BEGIN TRANSACTION")
                local.cursor = cur
                try:
                    yield cur
                except BaseException:
                    cur.execute("ROLLBACK")
                    raise
                cur.execute("COMMIT")
            finally:
                local.cursor = None
                cur.close()
                self._access.release()

    def schema_version(self) -> int:
        with self.reading() as cur:
            return int(cur.execute("SELECT max(version) FROM schema_version").fetchone()[0])

    # -- panels --------------------------------------------------------------------------
    def add_panel(self, panel: Panel, *, name: str | None = None, provenance=None,
                  licence: str | None = None, source: str | None = None,
                  source_sha256: str | None = None, layout: str | None = None,
                  import_options: dict | None = None, replace: bool = False) -> dict:
        """Store ``panel`` under ``name`` (default ``panel.name``) in one transaction.

        ``provenance`` is text or a JSON-able dict. With ``replace`` an existing panel of
        that name and its runs are deleted in the same transaction.
        """
        name = validate_name(panel.name if name is None else name)
        # Arrow tables are built before the transaction so the file is held only to write.
        import pyarrow as pa
        n = panel.n_rows
        row_pos = np.arange(n, dtype=np.int32)
        items = pa.table({
            "row_pos": row_pos,
            "item_id": pa.array(panel.item_ids.tolist(), pa.string()),
            "group_id": pa.array(panel.group_ids.tolist(), pa.string()),
            "label": pa.array(panel.labels, pa.float64(), from_pandas=True),
            "block": pa.array([None if not b else b for b in panel.blocks.tolist()]
                              if panel.blocks is not None else [None] * n, pa.string()),
        })
        judge_rows, judge_tables = [], []
        for pos, j in enumerate(panel.judges):
            if j.schema == "continuous":
                keep = ~np.isnan(j.values)
                out = pa.array(j.values[keep], pa.float64())
                n_distinct = int(len(np.unique(j.values[keep])))
            else:
                miss = j.vocab.index(MISSING) if MISSING in j.vocab else -1
                keep = j.codes != miss
                out = pa.DictionaryArray.from_arrays(pa.array(j.codes[keep].astype(np.int32)),
                                                     pa.array(j.vocab, pa.string()))
                n_distinct = len(j.vocab) - (miss >= 0)
            judge_tables.append(pa.table({"row_pos": row_pos[keep], "output": out}))
            lo, hi = j.value_range if j.value_range else (None, None)
            judge_rows.append([pos, j.name, j.schema, lo, hi, n_distinct, int(n - keep.sum())])
        prov = provenance if provenance is None or isinstance(provenance, str) else _json(provenance)
        with self.transaction() as cur:
            old = cur.execute("SELECT panel_id, created_at FROM panels WHERE name = ?", [name]).fetchone()
            if old is not None:
                if not replace:
                    raise StoreError(f"a panel named {name!r} already exists (stored {old[1]:%Y-%m-%d %H:%M}); "
                                     "choose another name, or replace it (import --replace)")
                self._delete_panel_rows(cur, old[0])
            pid = cur.execute("SELECT coalesce(max(panel_id), 0) + 1 FROM panels").fetchone()[0]
            cur.execute("INSERT INTO panels VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [pid, name, panel.schema, n, panel.n_labelled, len(panel.judges),
                         panel.blocks is not None, panel.label_note or None, source,
                         source_sha256, layout, prov, licence,
                         None if import_options is None else _json(import_options), _now()])
            cur.executemany("INSERT INTO judges VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            [[pid] + r for r in judge_rows])
            self._insert_items(cur, pid, items)
            for pos, table in enumerate(judge_tables):
                self._insert_outputs(cur, pid, pos, table, panel.judges[pos].schema == "continuous")
        return self.panel_info(name)

    # Each bulk step is its own method so a test can interrupt an import between them.
    @staticmethod
    def _insert_items(cur, pid: int, table) -> None:
        cur.register("fcps_stage_items", table)
        try:
            cur.execute("INSERT INTO items SELECT ?, row_pos, item_id, group_id, label, block "
                        "FROM fcps_stage_items", [pid])
        finally:
            cur.unregister("fcps_stage_items")

    @staticmethod
    def _insert_outputs(cur, pid: int, judge_pos: int, table, numeric: bool) -> None:
        cur.register("fcps_stage_outputs", table)
        try:
            # DuckDB prints a double as its shortest round-trip text, so a reload is exact.
            cur.execute("INSERT INTO outputs SELECT ?, row_pos, ?, CAST(output AS VARCHAR) "
                        "FROM fcps_stage_outputs", [pid, judge_pos])
        finally:
            cur.unregister("fcps_stage_outputs")

    def has_panel(self, name: str) -> bool:
        with self.reading() as cur:
            return cur.execute("SELECT count(*) FROM panels WHERE name = ?", [name]).fetchone()[0] > 0

    def panels(self) -> list[dict]:
        """Stored panels with their facts and run counts, by name."""
        with self.reading() as cur:
            cur.execute("""SELECT p.name, p.schema, p.n_rows, p.n_labelled, p.n_judges, p.source,
                                  p.licence, p.created_at, count(r.run_id) AS runs
                           FROM panels p LEFT JOIN runs r USING (panel_id)
                           GROUP BY ALL ORDER BY p.name""")
            return _rows_to_dicts(cur)

    def _panel_row(self, cur, name: str) -> dict:
        cur.execute("SELECT * FROM panels WHERE name = ?", [name])
        rows = _rows_to_dicts(cur)
        if not rows:
            known = [r[0] for r in cur.execute("SELECT name FROM panels ORDER BY name LIMIT 8").fetchall()]
            raise StoreError(f"no stored panel named {name!r}"
                             + (f"; stored panels include {', '.join(repr(k) for k in known)}" if known
                                else "; the store holds no panels yet (import one first)"))
        return rows[0]

    def panel_info(self, name: str) -> dict:
        """Everything stored about a panel except its rows: facts, judges, provenance, runs."""
        with self.reading() as cur:
            info = self._panel_row(cur, name)
            cur.execute("SELECT name, schema, range_lo, range_hi, n_distinct, n_missing FROM judges "
                        "WHERE panel_id = ? ORDER BY judge_pos", [info["panel_id"]])
            info["judges"] = _rows_to_dicts(cur)
            info["runs"] = cur.execute("SELECT count(*) FROM runs WHERE panel_id = ?",
                                       [info["panel_id"]]).fetchone()[0]
        for key in ("provenance", "import_options"):
            if info.get(key):
                try:
                    info[key] = json.loads(info[key])
                except ValueError:
                    pass    # free-text provenance stays text
        return info

    def load_panel(self, name: str, *, judges: Sequence[str] | None = None) -> Panel:
        """The stored panel, rebuilt exactly as it was imported (same codes, vocabularies,
        scalar maps and value ranges)."""
        from .ingest import judge_column
        with self.reading() as cur:
            info = self._panel_row(cur, name)
            pid, n = info["panel_id"], info["n_rows"]
            cur.execute("SELECT judge_pos, name, schema, range_lo, range_hi FROM judges "
                        "WHERE panel_id = ? ORDER BY judge_pos", [pid])
            jrows = cur.fetchall()
            if judges is not None:
                by_name = {r[1]: r for r in jrows}
                missing = [j for j in judges if j not in by_name]
                if missing:
                    raise StoreError(f"panel {name!r} has no judge {missing[0]!r}")
                jrows = [by_name[j] for j in judges]
            items = cur.execute("SELECT item_id, group_id, coalesce(label, 'NaN'::DOUBLE) AS label, "
                                "coalesce(block, '') AS block FROM items WHERE panel_id = ? "
                                "ORDER BY row_pos", [pid]).fetchnumpy()
            raw_outputs = []
            for pos, *_ in jrows:
                got = cur.execute("SELECT row_pos, output FROM outputs WHERE panel_id = ? AND "
                                  "judge_pos = ?", [pid, pos]).fetchnumpy()
                col = np.full(n, "", dtype=object)
                col[np.asarray(got["row_pos"], dtype=np.int64)] = np.asarray(got["output"], dtype=object)
                raw_outputs.append(col)
        cols = [judge_column(jname, raw, schema=schema,
                             value_range=None if lo is None else (lo, hi))
                for (pos, jname, schema, lo, hi), raw in zip(jrows, raw_outputs)]
        return Panel(item_ids=np.asarray(items["item_id"], dtype=object),
                     group_ids=np.asarray(items["group_id"], dtype=object),
                     labels=np.asarray(items["label"], dtype=float), judges=cols,
                     blocks=np.asarray(items["block"], dtype=object) if info["has_blocks"] else None,
                     name=name, label_note=info["label_note"] or "")

    def delete_panel(self, name: str) -> dict:
        """Delete a panel, its rows and its runs in one transaction; returns what went."""
        with self.transaction() as cur:
            info = self._panel_row(cur, name)
            return self._delete_panel_rows(cur, info["panel_id"])

    def _delete_panel_rows(self, cur, pid: int) -> dict:
        runs = [r[0] for r in cur.execute("SELECT run_id FROM runs WHERE panel_id = ?", [pid]).fetchall()]
        for run_id in runs:
            self._delete_run_rows(cur, run_id)
        counts = {"runs": len(runs)}
        for table in ("outputs", "items", "judges", "panels"):
            counts[table] = cur.execute(f"DELETE FROM {table} WHERE panel_id = ?", [pid]).fetchone()[0]
        return counts

    # -- runs ----------------------------------------------------------------------------
    def _new_run(self, cur, panel: str, kind: str, status: str, params: dict, seed,
                 started_at, seconds, timings, summary, error, label) -> int:
        info = self._panel_row(cur, panel)
        run_id = cur.execute("SELECT coalesce(max(run_id), 0) + 1 FROM runs").fetchone()[0]
        from . import __version__
        finished = _now()
        if started_at is None and seconds is not None:
            started_at = finished - _dt.timedelta(seconds=seconds)
        cur.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [run_id, info["panel_id"], panel, kind, status, label, _json(params),
                     None if seed is None else int(seed), __version__, started_at, finished,
                     _num(seconds), None if timings is None else _json(timings),
                     None if summary is None else _json(summary), error])
        return run_id

    def save_selection(self, result, *, panel: str, params: dict | None = None,
                       started_at: _dt.datetime | None = None, label: str | None = None,
                       if_absent: bool = False) -> int:
        """Store a :class:`~fcps_core.selection.SelectionResult` (run row, every candidate,
        the selected prefix's cells) in one transaction; returns the run id.

        ``panel`` is the stored panel the selection ran on; ``params`` defaults to the
        selector's settings and the split. ``label`` tags the run; with ``if_absent`` a
        finished run with the same label is kept and its id returned (idempotent seeding).
        """
        import pyarrow as pa
        d = result.to_dict(cells_limit=0)
        params = params if params is not None else selection_params(result)
        summary = {k: v for k, v in d.items() if k not in ("candidates", "cells", "timings")}
        sel_index = d["selected"]["index"]
        cand_cols = {c: [] for c in _CANDIDATE_COLUMNS}
        for c in d["candidates"]:
            for col in _CANDIDATE_COLUMNS:
                if col == "judges":
                    cand_cols[col].append(_json(c["judges"]))
                elif col == "params":
                    cand_cols[col].append(_json(c.get("params", {})))
                elif col == "selected":
                    cand_cols[col].append(c["index"] == sel_index)
                elif col in ("cand_index",):
                    cand_cols[col].append(int(c["index"]))
                elif col in ("path_rule", "path", "family"):
                    cand_cols[col].append(c.get(col))
                elif col in ("K", "grid_size"):
                    cand_cols[col].append(None if c.get(col) is None else int(c[col]))
                else:
                    cand_cols[col].append(_num(c.get(col)))
        candidates = pa.table(cand_cols)
        cells = d["cells"]
        cell_table = pa.table({
            "cand_index": pa.array([sel_index] * len(cells), pa.int32()),
            "cell_pos": pa.array(range(len(cells)), pa.int32()),
            "pattern": pa.array([str(c["pattern"]) for c in cells], pa.string()),
            "N_z": pa.array([int(c["N_z"]) for c in cells], pa.int64()),
            "mean_label": pa.array([_num(c["mean_label"]) for c in cells], pa.float64()),
            "prediction": pa.array([_num(c["prediction"]) for c in cells], pa.float64()),
            "freq_val": pa.array([_num(c["freq_val"]) for c in cells], pa.float64()),
            "freq_test": pa.array([_num(c["freq_test"]) for c in cells], pa.float64()),
            "unseen": pa.array([bool(c["unseen"]) for c in cells], pa.bool_()),
        })
        seconds = (d.get("timings") or {}).get("select_seconds")
        with self.transaction() as cur:
            if if_absent and (existing := self._labelled_run(cur, label)) is not None:
                return existing
            run_id = self._new_run(cur, panel, "select", "done", params, params.get("seed"),
                                   started_at, seconds, d.get("timings"), summary, None, label)
            self._insert_candidates(cur, run_id, candidates)
            self._insert_cells(cur, run_id, cell_table)
        return run_id

    @staticmethod
    def _insert_candidates(cur, run_id: int, table) -> None:
        cur.register("fcps_stage_candidates", table)
        try:
            cur.execute("INSERT INTO run_candidates SELECT ?, " + ", ".join(_CANDIDATE_COLUMNS)
                        + " FROM fcps_stage_candidates", [run_id])
        finally:
            cur.unregister("fcps_stage_candidates")

    @staticmethod
    def _insert_cells(cur, run_id: int, table) -> None:
        cur.register("fcps_stage_cells", table)
        try:
            cur.execute("INSERT INTO run_cells SELECT ?, cand_index, cell_pos, pattern, N_z, "
                        "mean_label, prediction, freq_val, freq_test, unseen FROM fcps_stage_cells",
                        [run_id])
        finally:
            cur.unregister("fcps_stage_cells")

    def save_sweep(self, result, *, panel: str, params: dict | None = None,
                   started_at: _dt.datetime | None = None, seconds: float | None = None,
                   label: str | None = None, if_absent: bool = False) -> int:
        """Store a :class:`~fcps_core.experiments.SweepResult` (per-budget cells, per-menu
        cells, per-split records) in one transaction; returns the run id (``label`` and
        ``if_absent`` as in :meth:`save_selection`)."""
        d = _plain(result.to_dict())
        params = params if params is not None else {"budgets": d.get("budgets"), **(d.get("settings") or {})}
        cells, menu_cells, records = [], [], []
        for c in d.get("cells", []):
            cells.append([int(c["n_M"]), c.get("splits")] + [_num(c.get(k)) for k in _SWEEP_CELL_NUMBERS]
                         + [_json(c)])
            for menu, m in (c.get("menus") or {}).items():
                menu_cells.append([int(c["n_M"]), menu]
                                  + [_num(m.get(k)) for k in _SWEEP_MENU_BEFORE_MODE]
                                  + [None if m.get("K_mode") is None else int(m["K_mode"])]
                                  + [_num(m.get(k)) for k in _SWEEP_MENU_AFTER_MODE]
                                  + [_json(m.get("family_shares") or {})])
        for r in d.get("records", []):
            for menu, m in (r.get("menus") or {}).items():
                records.append([int(r["split"]), int(r["n_M"]), menu, _num(m.get("test_mse")),
                                _num(m.get("test_nll")), _num(m.get("val_mse")),
                                None if m.get("K") is None else int(m["K"]), m.get("family"),
                                m.get("path_rule"), _num(m.get("unseen_test")), _num(m.get("V_cell")),
                                _num(m.get("V_proxy")), _num(m.get("H_K")),
                                None if m.get("pairwise") is None else bool(m["pairwise"]),
                                _num(m.get("oracle_test_mse"))])
        summary = {"panel": d.get("panel"), "budgets": d.get("budgets"), "settings": d.get("settings"),
                   "extra": {k: v for k, v in d.items()
                             if k not in ("panel", "budgets", "settings", "cells", "records")}}
        with self.transaction() as cur:
            if if_absent and (existing := self._labelled_run(cur, label)) is not None:
                return existing
            run_id = self._new_run(cur, panel, "sweep", "done", params, params.get("seed"),
                                   started_at, seconds, None, summary, None, label)
            for table, rows in (("sweep_cells", cells), ("sweep_menu_cells", menu_cells),
                                ("sweep_records", records)):
                if rows:
                    marks = ", ".join(["?"] * (len(rows[0]) + 1))
                    cur.executemany(f"INSERT INTO {table} VALUES ({marks})", [[run_id] + r for r in rows])
        return run_id

    def save_failed_run(self, *, panel: str, kind: str, params: dict, error: str,
                        seed: int | None = None, started_at: _dt.datetime | None = None,
                        label: str | None = None) -> int:
        """Record a run that stopped with ``error`` (status ``failed``, no results)."""
        with self.transaction() as cur:
            seconds = None if started_at is None else (_now() - started_at).total_seconds()
            return self._new_run(cur, panel, kind, "failed", params, seed, started_at, seconds,
                                 None, None, str(error), label)

    def runs(self, *, panel: str | None = None, kind: str | None = None) -> list[dict]:
        """Stored runs (newest first) with their headline result."""
        with self.reading() as cur:
            cur.execute("""SELECT r.run_id, r.panel_name AS panel, r.kind, r.status, r.label, r.seed,
                                  r.version, r.finished_at, r.seconds, c.family, c.K, c.val_mse,
                                  c.test_mse, r.error
                           FROM runs r LEFT JOIN run_candidates c
                             ON c.run_id = r.run_id AND c.selected
                           WHERE (? IS NULL OR r.panel_name = ?) AND (? IS NULL OR r.kind = ?)
                           ORDER BY r.run_id DESC""", [panel, panel, kind, kind])
            return _rows_to_dicts(cur)

    def find_run(self, label: str) -> int | None:
        """The newest finished run tagged ``label``, or None."""
        with self.reading() as cur:
            return self._labelled_run(cur, label)

    @staticmethod
    def _labelled_run(cur, label: str | None) -> int | None:
        if label is None:
            return None
        return cur.execute("SELECT max(run_id) FROM runs WHERE label = ? AND status = 'done'",
                           [label]).fetchone()[0]

    def run(self, run_id: int) -> dict:
        """A stored run in full. A selection's ``result`` has the shape of
        :meth:`SelectionResult.to_dict` (candidates, cells); a sweep's has cells and records."""
        with self.reading() as cur:
            cur.execute("SELECT * FROM runs WHERE run_id = ?", [int(run_id)])
            rows = _rows_to_dicts(cur)
            if not rows:
                raise StoreError(f"no stored run with id {run_id}; list them with: python -m fcps_core runs")
            run = rows[0]
            for key in ("params", "timings", "summary"):
                run[key] = json.loads(run[key]) if run[key] else None
            summary = run.pop("summary") or {}
            if run["kind"] == "select":
                cur.execute("SELECT * EXCLUDE (run_id) FROM run_candidates WHERE run_id = ? "
                            "ORDER BY cand_index", [run_id])
                cands = []
                for c in _rows_to_dicts(cur):
                    c = {"index": c.pop("cand_index"), **c}
                    c["judges"] = json.loads(c["judges"])
                    c["params"] = json.loads(c["params"])
                    cands.append(_plain(c))
                cur.execute("SELECT * EXCLUDE (run_id, cand_index, cell_pos) FROM run_cells "
                            "WHERE run_id = ? ORDER BY cell_pos", [run_id])
                cells = [_plain(c) for c in _rows_to_dicts(cur)]
                run["result"] = {**summary, "candidates": cands, "cells": cells,
                                 "timings": run["timings"]} if run["status"] == "done" else None
            else:
                cur.execute("SELECT detail FROM sweep_cells WHERE run_id = ? ORDER BY n_M", [run_id])
                cells = [json.loads(r[0]) for r in cur.fetchall()]
                cur.execute("SELECT * EXCLUDE (run_id) FROM sweep_records WHERE run_id = ? "
                            "ORDER BY n_M, split, menu", [run_id])
                records = [_plain(r) for r in _rows_to_dicts(cur)]
                run["result"] = {"panel": summary.get("panel"), "budgets": summary.get("budgets"),
                                 "settings": summary.get("settings"), "cells": cells,
                                 "records": records, **(summary.get("extra") or {})} \
                    if run["status"] == "done" else None
        return _plain(run)

    def delete_run(self, run_id: int) -> dict:
        with self.transaction() as cur:
            if cur.execute("SELECT count(*) FROM runs WHERE run_id = ?", [int(run_id)]).fetchone()[0] == 0:
                raise StoreError(f"no stored run with id {run_id}")
            return self._delete_run_rows(cur, int(run_id))

    @staticmethod
    def _delete_run_rows(cur, run_id: int) -> dict:
        counts = {}
        for table in RUN_CHILD_TABLES + ("runs",):
            counts[table] = cur.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id]).fetchone()[0]
        return counts

    # -- metadata and integrity -----------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        with self.reading() as cur:
            row = cur.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
            return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as cur:
            cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value])

    def content_digest(self) -> str:
        """A fingerprint of every stored row (order-independent): equal digests mean the
        same panels, rows and runs."""
        h = hashlib.sha256()
        with self.reading() as cur:
            for table in CONTENT_TABLES:
                n, s = cur.execute(f"SELECT count(*), coalesce(sum(hash(t)), 0) FROM {table} t").fetchone()
                h.update(f"{table}:{n}:{s};".encode())
        return h.hexdigest()

    # -- export --------------------------------------------------------------------------
    def export_panel(self, name: str, fmt: str, out=None) -> bytes | None:
        """The panel as a wide table (``csv``, ``parquet``) or ``json`` (facts + rows).
        Writes to ``out`` (a path) when given, else returns the bytes."""
        from .io import panel_to_wide_rows
        panel = self.load_panel(name)
        header, rows = panel_to_wide_rows(panel)
        if fmt == "json":
            info = self.panel_info(name)
            body = {"panel": info, "columns": header, "rows": rows}
            return _emit(json.dumps(_plain(body), default=str, indent=1).encode() + b"\n", out)
        return _emit_table(header, rows, fmt, out)

    def export_run(self, run_id: int, fmt: str, out=None) -> bytes | None:
        """A run as ``json`` (everything) or its main table as ``csv``/``parquet``: the
        candidates of a selection, the per-budget cells of a sweep."""
        run = self.run(run_id)
        if fmt == "json":
            return _emit(json.dumps(run, default=str, indent=1).encode() + b"\n", out)
        result = run.get("result") or {}
        if run["kind"] == "select":
            rows = [{**c, "judges": " > ".join(c["judges"]), "params": json.dumps(c["params"])}
                    for c in result.get("candidates", [])]
        else:
            rows = [{k: v for k, v in c.items() if not isinstance(v, (dict, list))}
                    for c in result.get("cells", [])]
        header = list(dict.fromkeys(k for r in rows for k in r))
        return _emit_table(header, [[r.get(k) for k in header] for r in rows], fmt, out)


_CANDIDATE_COLUMNS = ("cand_index", "path_rule", "path", "judges", "K", "family", "params",
                      "grid_size", "val_mse", "val_nll", "val_risk", "val_se", "test_mse",
                      "test_nll", "Q_K", "S_K", "H_K", "unseen_val", "unseen_test", "V_cell",
                      "V_proxy", "cell_pressure_sum", "selected")
_SWEEP_CELL_NUMBERS = ("delta", "delta_se", "ci_low", "ci_high", "table_test_mse",
                       "scalar_test_mse", "table_K_mean", "unseen_mean", "V_cell_mean",
                       "V_proxy_mean", "regret_vs_K_le_3", "regret_vs_K_le_3_se")
# sweep_menu_cells columns around the integer K_mode
_SWEEP_MENU_BEFORE_MODE = ("test_mse_mean", "test_mse_se", "oracle_test_mse_mean",
                           "oracle_test_mse_se", "K_mean", "K_sd")
_SWEEP_MENU_AFTER_MODE = ("K_mode_share", "unseen_mean", "V_cell_mean", "V_proxy_mean",
                          "pairwise_share")


def selection_params(result) -> dict:
    """The settings that reproduce a selection: selector fields, blocks and seed."""
    sel = result.selector
    skip = {"progress"}
    params = {f.name: _plain(getattr(sel, f.name)) for f in fields(sel) if f.name not in skip}
    params["blocks"] = {**result.blocks.sizes(), "source": result.blocks.source,
                        "seed": result.blocks.seed}
    return params


def _emit(data: bytes, out) -> bytes | None:
    if out is None:
        return data
    tmp = Path(f"{out}.{os.getpid()}.part")
    tmp.write_bytes(data)
    os.replace(tmp, out)       # a reader never sees half an export
    return None


def _emit_table(header: list, rows: list, fmt: str, out) -> bytes | None:
    if fmt == "csv":
        buf = _io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([neutralise_cell(h) for h in header])
        for r in rows:
            w.writerow([neutralise_cell(_csv_value(v)) for v in r])
        return _emit(buf.getvalue().encode("utf-8"), out)
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq
        cols = {}
        for k, h in enumerate(header):
            vals = [_plain(r[k]) for r in rows]
            cols[f"{h}" if h not in cols else f"{h}_{k}"] = pa.array(
                [None if v is None else v for v in vals]) if _uniform(vals) else \
                pa.array([None if v is None else str(v) for v in vals], pa.string())
        buf = pa.BufferOutputStream()
        pq.write_table(pa.table(cols), buf)
        return _emit(buf.getvalue().to_pybytes(), out)
    raise StoreError(f"unknown export format {fmt!r}; use csv, parquet or json")


def _uniform(vals: list) -> bool:
    kinds = {type(v) for v in vals if v is not None}
    return len(kinds) <= 1 or kinds <= {int, float}


def _csv_value(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ""
    return str(v)
