"""Writing output files safely: never over something the user did not name, never half-written.

Every file the package writes for a user (predictors, predictions, exports, synthetic panels,
reports) goes through :func:`atomic_output`:

* an existing file is replaced only with ``force=True`` (the CLI's ``--force``);
* never a symlink (it is not followed), a directory, a device, a FIFO or any other non-regular
  file, and never a store file (``*.duckdb`` and its ``.wal``) -- not even with ``force``;
* the content goes to a temporary file in the same directory, is flushed and fsynced, and is
  renamed over the target only when complete, so a reader (or a crash) never sees half a
  file; on any error the temporary file is removed and the target is as it was.
"""

from __future__ import annotations

import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import FCPSError

STORE_SUFFIXES = (".duckdb", ".duckdb.wal", ".wal")


class OutputError(FCPSError):
    """An output path that must not be written."""


def check_output_path(path: str | os.PathLike, *, force: bool = False) -> Path:
    """The target path, or a one-line :class:`OutputError` saying why it cannot be written."""
    target = Path(path)
    name = str(path)
    if name == "" or name.endswith(os.sep):
        raise OutputError(f"cannot use {name!r}: it names no file")
    if any(name.endswith(s) for s in STORE_SUFFIXES):
        raise OutputError(f"cannot use {name!r}: it looks like a store file; choose another name")
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"cannot use {name!r}: {exc.strerror or exc}") from None
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise OutputError(f"cannot use {name!r}: it is a symbolic link (not followed); name the real file")
        if stat.S_ISDIR(st.st_mode):
            raise OutputError(f"cannot use {name!r}: it is a directory; give a file name")
        if not stat.S_ISREG(st.st_mode):
            raise OutputError(f"cannot use {name!r}: it is not a regular file (a device, pipe or socket)")
        if not force:
            raise OutputError(f"cannot use {name!r}: it already exists; pass --force to replace it")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise OutputError(f"cannot use {name!r}: its directory does not exist")
    return target


@contextmanager
def atomic_output(path: str | os.PathLike, *, force: bool = False, mode: str = "w",
                  newline: str | None = None) -> Iterator:
    """Open a temporary file next to ``path`` for writing; on success it replaces ``path``
    (checked by :func:`check_output_path`), on error it is removed."""
    target = check_output_path(path, force=force)
    parent = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=parent)
    try:
        binary = "b" in mode
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": newline})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        check_output_path(target, force=force)      # nothing appeared there meanwhile
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_output(path: str | os.PathLike, data: bytes | str, *, force: bool = False) -> None:
    """Write ``data`` to ``path`` through :func:`atomic_output`."""
    with atomic_output(path, force=force, mode="wb" if isinstance(data, bytes) else "w") as fh:
        fh.write(data)
