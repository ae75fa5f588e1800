"""Where the store lives and how long a process waits for it."""

from __future__ import annotations

import datetime as _dt
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


def default_store_path() -> Path:
    """``$FCPS_STORE`` when set, else ``data/fcps.duckdb`` next to the package."""
    env = os.environ.get(ENV_PATH, "").strip()
    return Path(env).expanduser() if env else DEFAULT_PATH


def resolve_store_path(path: str | os.PathLike | None = None) -> Path:
    return Path(path).expanduser() if path else default_store_path()


def utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)
