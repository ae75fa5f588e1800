"""Where the store lives and how long a process waits for it."""

from __future__ import annotations

import datetime as _dt
import errno
import os
from pathlib import Path


from ..errors import StoreError


DEFAULT_PATH = Path(__file__).resolve().parent.parent.parent / "data" / "fcps.duckdb"
ENV_PATH = "FCPS_STORE"
ENV_TIMEOUT = "FCPS_STORE_TIMEOUT"
DEFAULT_TIMEOUT = 60.0
#: a holder that sees a waiter yields after holding this long (seconds) ...
HOLD_SECONDS = 0.5
#: ... and stays closed this long before reopening, so the waiter (polling faster) gets in
YIELD_SECONDS = 0.25
POLL_MAX_SECONDS = 0.05


class StoreBusyError(StoreError):
    """Another process kept the store locked for longer than the timeout."""


class StoreFullError(StoreError):
    """The device holding the store (or an output file) ran out of space; the write was
    rolled back, so the store is as it was."""


#: what the OS and DuckDB say when a device is full (DuckDB reports ENOSPC as text only)
DISK_FULL_TEXTS = ("no space left on device", "disk quota exceeded")


def is_disk_full(exc: BaseException | None) -> bool:
    """True when ``exc`` or any exception it was raised from or while handling is a full
    device: an ``OSError`` with ``ENOSPC``/``EDQUOT``, or a DuckDB error saying so (DuckDB
    may report it as "Failed to commit", or hide it behind "Current transaction is
    aborted" with the real error as the context)."""
    stack, seen = [exc], set()
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if any(t in str(e).lower() for t in DISK_FULL_TEXTS):
            return True
        stack += [e.__cause__, e.__context__]
    return False


def disk_full_error(path, *, what: str = "writing the store") -> StoreFullError:
    return StoreFullError(f"no space left on device while {what} at {path}; nothing was changed "
                          "(free some space and try again)")


def default_store_path() -> Path:
    """``$FCPS_STORE`` when set, else ``data/fcps.duckdb`` next to the package."""
    env = os.environ.get(ENV_PATH, "").strip()
    return Path(env).expanduser() if env else DEFAULT_PATH


def resolve_store_path(path: str | os.PathLike | None = None) -> Path:
    return Path(path).expanduser() if path else default_store_path()


def utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)
