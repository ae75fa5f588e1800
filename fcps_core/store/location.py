"""Where the store lives and how long a process waits for it."""

from __future__ import annotations

import datetime as _dt
import errno
import os
import time
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


# -- files that are not (or no longer) fcps stores ----------------------------------------------

#: an empty file younger than this (seconds) may be a store another process is creating: it
#: is left to DuckDB (and its lock) rather than refused at once
CREATING_SECONDS = 10.0
#: what to do when ``--store`` names a file that is not a usable store
STORE_FIX = ("point --store (or $FCPS_STORE) at an fcps store file, or at a path that does not "
             "exist yet to start a new store")
#: DuckDB's words for a database file cut short or corrupted (read errors, not lock errors)
DAMAGE_TEXTS = ("could not read enough bytes", "corrupt", "checksum", "not a valid duckdb database")
_KNOWN_FILES = ((b"PAR1", "a Parquet file"), (b"SQLite format 3\x00", "an SQLite database"),
                (b"PK\x03\x04", "a ZIP archive (an Excel workbook?)"), (b"\x1f\x8b", "a gzip file"),
                (b"%PDF", "a PDF document"))


def shown_path(path) -> str:
    """A path on one line (control characters escaped): a file name cannot forge a line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in os.fspath(path))


def not_a_store(path, *, wait_for_new: bool = True) -> StoreError | None:
    """The error for an existing ``path`` that cannot be a DuckDB database (a directory, an
    empty file, CSV text, a Parquet or SQLite file...), found from its first bytes before
    DuckDB opens it, so such a file is never handed to DuckDB (which may treat a ``.csv``
    name as a query, try to download an extension for an SQLite file, or write to it).
    None when the file is absent or starts like a DuckDB database (``DUCK`` at byte 8), and
    with ``wait_for_new`` for an empty file younger than :data:`CREATING_SECONDS` (a store
    another process is creating; DuckDB's lock decides, and its refusal comes back here
    with ``wait_for_new=False``)."""
    shown = shown_path(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        return StoreError(f"{shown} is a directory, not an fcps store file; {STORE_FIX}")
    except OSError:
        return None                     # unreadable: DuckDB's open says why (permissions)
    if head[8:12] == b"DUCK":
        return None
    if not head and wait_for_new:
        try:
            young = time.time() - os.stat(path).st_mtime < CREATING_SECONDS
        except OSError:
            return None
        if young:
            return None     # another process may be creating the store: DuckDB's lock decides
    if not head:
        what = "the file is empty"
    else:
        what = next((f"it is {name}, not a DuckDB database" for magic, name in _KNOWN_FILES if head.startswith(magic)), None)
        if what is None:
            try:
                text = head.decode("utf-8")
                printable = all(c.isprintable() or c in "\t\r\n" for c in text)
            except UnicodeDecodeError:
                printable = False
            what = ("it holds text (a CSV file?), not a DuckDB database" if printable
                    else "it does not start like a DuckDB database")
    return StoreError(f"{shown} is not a readable fcps store: {what} (the file was not changed); {STORE_FIX}")


def is_damage(exc: BaseException) -> bool:
    """A DuckDB error that says the database file is cut short or corrupted."""
    text = str(exc).lower()
    return any(t in text for t in DAMAGE_TEXTS)


def damaged_store_error(path) -> StoreError:
    return StoreError(f"{shown_path(path)} is not a readable fcps store: the database file is damaged "
                      "or truncated (a copy that did not finish, or a broken disk); it was not changed. "
                      f"Restore it from a backup, or {STORE_FIX}")


def foreign_database_error(path, tables: list[str]) -> StoreError:
    shown = ", ".join(repr(t) for t in tables[:3]) + (" ..." if len(tables) > 3 else "")
    return StoreError(f"{shown_path(path)} is not a readable fcps store: it is a DuckDB database of something "
                      f"else (tables {shown}, no fcps schema; the file was not changed); {STORE_FIX}")
