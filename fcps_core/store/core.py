"""Store connections: the handle, read and write transactions, metadata and the content digest."""

from __future__ import annotations

import hashlib
import os
from contextlib import contextmanager
from typing import Iterator


from ..errors import StoreError
from .location import DEFAULT_TIMEOUT, ENV_TIMEOUT, resolve_store_path
from .locking import access_for
from .schema import CONTENT_TABLES


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
