"""Store connections: the handle, read and write transactions, metadata and the content digest."""

from __future__ import annotations

import hashlib
import os
from contextlib import contextmanager
from typing import Iterator


from ..errors import StoreError
from .location import (DEFAULT_TIMEOUT, ENV_TIMEOUT, damaged_store_error, disk_full_error, is_damage,
                       is_disk_full, resolve_store_path)
from .locking import access_for
from .schema import CONTENT_TABLES, RUN_CHILD_TABLES, rollback_quietly


@contextmanager
def staged(cur, name: str, table) -> Iterator[None]:
    """``table`` (Arrow) visible to SQL as ``name`` for the block. When the block fails, a
    failing unregister (DuckDB's "Current transaction is aborted") does not replace the
    error that aborted the transaction."""
    cur.register(name, table)
    done = False
    try:
        yield
        done = True
    finally:
        try:
            cur.unregister(name)
        except Exception:
            if done:
                raise


# -- the store -------------------------------------------------------------------------------

class StoreCore:
    """The connection part of :class:`~fcps_core.store.Store` (its parameters are
    documented there)."""

    def __init__(self, path: str | os.PathLike | None = None, *, timeout: float | None = None):
        self.path = resolve_store_path(path)
        if timeout is None:
            try:
                timeout = float(os.environ.get(ENV_TIMEOUT, DEFAULT_TIMEOUT))
            except ValueError:
                raise StoreError(f"${ENV_TIMEOUT} must be a number of seconds") from None
        self.timeout = float(timeout)
        self._access = access_for(self.path)

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
        except Exception as exc:
            # a file cut short fails only when a query reaches the missing part
            if is_damage(exc) and not isinstance(exc, StoreError):
                raise damaged_store_error(self.path) from None
            raise
        finally:
            local.reads -= 1
            cur.close()
            self._access.release()

    @contextmanager
    def snapshot(self) -> Iterator:
        """Like :meth:`reading`, but every query in the block sees the same committed
        state (one read transaction): a panel and its version are read together."""
        with self.reading() as cur:
            if getattr(self._access.local, "cursor", None) is cur:
                yield cur               # inside a write transaction: already one snapshot
                return
            cur.execute("BEGIN TRANSACTION")
            try:
                yield cur
            finally:
                rollback_quietly(cur)   # nothing to keep: it only read

    @contextmanager
    def transaction(self) -> Iterator:
        """One write transaction: committed when the block ends, rolled back on any error.
        Nested calls in the same thread join the outer transaction.

        A full device anywhere in it (an ``OSError`` ``ENOSPC``, or DuckDB's write error,
        failed commit or "transaction is aborted" caused by one) is rolled back and raised
        as one :class:`StoreFullError` naming the store."""
        local = self._access.local
        if getattr(local, "cursor", None) is not None:
            yield local.cursor
            return
        if getattr(local, "reads", 0):
            # A read-only handle held by this very thread could never drain: fail loudly.
            raise RuntimeError("Store.transaction() inside Store.reading() in the same thread; "
                               "finish the read first")
        try:
            with self._access.write_lock:
                con = self._access.acquire(True, self.timeout)
                cur = con.cursor()
                try:
                    cur.execute("BEGIN TRANSACTION")
                    local.cursor = cur
                    try:
                        yield cur
                        local.cursor = None
                        self._commit(cur)
                    except BaseException:
                        local.cursor = None
                        rollback_quietly(cur)
                        raise
                finally:
                    local.cursor = None
                    cur.close()
                    self._access.release()
        except Exception as exc:
            if is_disk_full(exc) and not isinstance(exc, StoreError):
                raise disk_full_error(self.path) from exc
            if is_damage(exc) and not isinstance(exc, StoreError):
                raise damaged_store_error(self.path) from None
            raise

    # The commit is its own step so a test can fail it as a full disk would.
    @staticmethod
    def _commit(cur) -> None:
        cur.execute("COMMIT")

    def schema_version(self) -> int:
        with self.reading() as cur:
            return int(cur.execute("SELECT max(version) FROM schema_version").fetchone()[0])

    # -- panels --------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        with self.reading() as cur:
            row = cur.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
            return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as cur:
            cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value])

    def content_digest(self) -> str:
        """A fingerprint of every stored row (order-independent): equal digests mean the
        same panels, rows and runs (the id counters are not content)."""
        h = hashlib.sha256()
        with self.reading() as cur:
            for table in CONTENT_TABLES:
                n, s = cur.execute(f"SELECT count(*), coalesce(sum(hash(t)), 0) FROM {table} t").fetchone()
                h.update(f"{table}:{n}:{s};".encode())
        return h.hexdigest()

    def integrity_problems(self) -> list[str]:
        """What no complete write leaves behind (rows of a panel or run that is not stored,
        a panel whose rows or outputs do not add up, a finished selection without its
        candidates, an id above its counter); empty for a sound store."""
        children = " UNION ALL ".join(f"SELECT run_id FROM {t}" for t in RUN_CHILD_TABLES)
        checks = {
            "rows of a panel that is not stored": """SELECT count(*) FROM (
                SELECT panel_id FROM items UNION ALL SELECT panel_id FROM outputs UNION ALL
                SELECT panel_id FROM judges UNION ALL SELECT panel_id FROM judge_costs UNION ALL
                SELECT panel_id FROM runs) t WHERE panel_id NOT IN (SELECT panel_id FROM panels)""",
            "rows of a run that is not stored":
                f"SELECT count(*) FROM ({children}) t WHERE run_id NOT IN (SELECT run_id FROM runs)",
            "panels whose items, judges or outputs do not add up": """SELECT count(*) FROM panels p WHERE
                p.n_rows != (SELECT count(*) FROM items i WHERE i.panel_id = p.panel_id)
                OR p.n_judges != (SELECT count(*) FROM judges j WHERE j.panel_id = p.panel_id)
                OR (SELECT count(*) FROM outputs o WHERE o.panel_id = p.panel_id)
                   != p.n_rows * p.n_judges - (SELECT coalesce(sum(n_missing), 0) FROM judges j
                                                WHERE j.panel_id = p.panel_id)""",
            "finished selections without candidates": """SELECT count(*) FROM runs r WHERE r.kind = 'select'
                AND r.status = 'done' AND NOT EXISTS (SELECT 1 FROM run_candidates c WHERE c.run_id = r.run_id)""",
            "panels without a version": "SELECT count(*) FROM panels WHERE version IS NULL",
            "ids above their counter": """SELECT (SELECT count(*) FROM runs WHERE run_id >
                    (SELECT value FROM counters WHERE name = 'run_id'))
                + (SELECT count(*) FROM panels WHERE panel_id >
                    (SELECT value FROM counters WHERE name = 'panel_id'))""",
        }
        problems = []
        with self.snapshot() as cur:
            for what, sql in checks.items():
                n = cur.execute(sql).fetchone()[0]
                if n:
                    problems.append(f"{what}: {n}")
        return problems

    # -- export --------------------------------------------------------------------------
