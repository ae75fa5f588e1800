"""One handle per store file per process, shared by threads, with bounded retries."""

from __future__ import annotations

import math
import os
import random
import re
import threading
import time
from pathlib import Path


from ..errors import StoreError
from .location import (ENV_TIMEOUT, HOLD_SECONDS, POLL_MAX_SECONDS, YIELD_SECONDS, StoreBusyError,
                       StoreFullError, damaged_store_error, disk_full_error, foreign_database_error,
                       is_damage, is_disk_full, not_a_store)
from .schema import LATEST_VERSION, foreign_tables, migrate, newer_store_error, stored_schema_version


# -- process-wide access to one store file ---------------------------------------------------

def is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return "lock" in text and ("conflicting" in text or "could not set" in text)


class FileAccess:
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
        problem = not_a_store(self.path)
        if problem is not None:
            raise problem
        while True:
            try:
                if mode == "ro":
                    return duckdb.connect(str(self.path), read_only=True)
                self.path.parent.mkdir(parents=True, exist_ok=True)
                return duckdb.connect(str(self.path))
            except (duckdb.Error, OSError) as exc:
                if is_disk_full(exc):       # creating the file or replaying its log
                    raise disk_full_error(self.path, what="opening the store") from exc
                if isinstance(exc, OSError):
                    raise
                if not is_lock_error(exc):
                    problem = not_a_store(self.path, wait_for_new=False)
                    if problem is not None:
                        raise problem from None
                    if is_damage(exc):
                        raise damaged_store_error(self.path) from None
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
            try:
                con.close()
            except Exception:
                # Closing checkpoints the log into the file; when that fails (a full disk)
                # the committed log stays and is replayed on the next open.
                pass

    def acquire(self, write: bool, timeout: float):
        """The shared connection, opened in a mode that allows ``write``."""
        import duckdb
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
                    if not self.schema_ready:
                        # checked before any write: migrating would add fcps tables to it
                        foreign = foreign_tables(con)
                        if foreign:
                            raise foreign_database_error(self.path, foreign)
                    found = stored_schema_version(con) if not self.schema_ready and mode == "ro" else LATEST_VERSION
                    if found > LATEST_VERSION:
                        raise newer_store_error(found)
                    if found < LATEST_VERSION:    # an old or empty file: migrate it first
                        con.close()
                        mode = "rw"
                        con = self._open(mode, deadline, timeout)
                    if not self.schema_ready:
                        if mode == "rw":
                            migrate(con)
                        self.schema_ready = True
                except BaseException as exc:
                    con.close()
                    if isinstance(exc, duckdb.Error) and is_damage(exc):
                        raise damaged_store_error(self.path) from None
                    if isinstance(exc, Exception) and is_disk_full(exc) and not isinstance(exc, StoreError):
                        raise StoreFullError(f"no space left on device while upgrading the store at {self.path} "
                                         "to this fcps's schema; its data is as it was (free some space "
                                         "and try again)") from exc
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


_ACCESS: dict[str, FileAccess] = {}
_ACCESS_LOCK = threading.Lock()


def access_for(path: Path) -> FileAccess:
    key = os.path.realpath(path)
    with _ACCESS_LOCK:
        acc = _ACCESS.get(key)
        if acc is None or acc.pid != os.getpid():
            acc = _ACCESS[key] = FileAccess(Path(key))
        return acc
