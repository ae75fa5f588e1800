"""Writing output files safely: never over something the user did not name, never half-written.

Every file the package writes for a user (predictors, predictions, exports, synthetic panels,
reports) goes through :func:`atomic_output`:

* an existing file is replaced only with ``force=True`` (the CLI's ``--force``);
* never a symlink (it is not followed), a directory, a device, a FIFO or any other non-regular
  file, and never a store file (``*.duckdb`` and its ``.wal``) -- not even with ``force``;
* the content goes to a temporary file in the same directory (``.NAME.PID.RANDOM.part``,
  locked with ``flock`` while it is written), is flushed and fsynced, and is renamed over the
  target only when complete, so a reader (or a crash) never sees half a file; on any error
  the temporary file is removed and the target is as it was (a full device says so, naming
  the output);
* the temporary file of a writer that was killed is removed by the next write of the same
  target: a ``.part`` file of exactly that name pattern that no writer holds locked, whose
  writer process is gone or which is older than :data:`STALE_PART_SECONDS`;
* the new file gets the permissions a plain ``open()`` would give it: those of the file it
  replaces, else 0666 less the umask.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..errors import FCPSError

try:                                    # POSIX; elsewhere stale .part files go by age only
    import fcntl
except ImportError:                     # pragma: no cover
    fcntl = None

STORE_SUFFIXES = (".duckdb", ".duckdb.wal", ".wal")
#: a ``.part`` file no writer holds is removed once this old even when its writer's process
#: id is alive (process ids are reused)
STALE_PART_SECONDS = 60.0
_FULL = (errno.ENOSPC, errno.EDQUOT)


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


def _part_pattern(name: str) -> re.Pattern:
    """Temporary names of ``name``: ``.NAME.PID.HEX8.part`` (this module) or
    ``.NAME.XXXXXXXX.part`` (``tempfile.mkstemp``, used by earlier versions)."""
    return re.compile(re.escape(f".{name}.") + r"(?:(\d+)\.[0-9a-f]{8}|[a-z0-9_]{8})\.part")


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True


def remove_stale_parts(target: str | os.PathLike, *, now: float | None = None) -> list[Path]:
    """Remove the temporary files killed writers of ``target`` left next to it; returns them.

    Only regular files named like this module's (or ``mkstemp``'s) temporaries of exactly
    that target are touched, and only when no writer holds them locked and their writer's
    process is gone (or, for an unknown or live process id, they are older than
    :data:`STALE_PART_SECONDS`). Best effort: anything unexpected leaves the file alone."""
    target = Path(target)
    parent = target.parent if str(target.parent) else Path(".")
    pattern = _part_pattern(target.name)
    now = time.time() if now is None else now
    removed = []
    try:
        entries = [e for e in os.scandir(parent) if pattern.fullmatch(e.name)]
    except OSError:
        return removed
    for entry in entries:
        pid = pattern.fullmatch(entry.name).group(1)
        try:
            fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                continue
            old = now - st.st_mtime > STALE_PART_SECONDS
            if not old and (pid is None or _process_alive(int(pid))):
                continue
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue                    # a live writer holds it
                except OSError:
                    if not old:
                        continue                # no locks here: only the age tells
            try:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
            except OSError:
                pass
        finally:
            os.close(fd)
    return removed


def _new_part(parent: Path, name: str) -> tuple[int, Path]:
    """Create and lock a fresh temporary file for ``name`` in ``parent`` (mode 0666 less
    the umask, as ``open()`` would create it)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = parent / f".{name}.{os.getpid()}.{secrets.token_hex(4)}.part"
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                pass                            # a filesystem without locks: age decides
        return fd, tmp
    raise OutputError(f"cannot create a temporary file next to {str(parent / name)!r}")


def _fsync_dir(parent: Path) -> None:
    try:
        fd = os.open(parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_output(path: str | os.PathLike, *, force: bool = False, mode: str = "w",
                  newline: str | None = None) -> Iterator:
    """Open a temporary file next to ``path`` for writing; on success it replaces ``path``
    (checked by :func:`check_output_path`), on error it is removed. A full device raises
    :class:`OutputError` naming ``path`` ("no space left on device ...")."""
    target = check_output_path(path, force=force)
    parent = target.parent if str(target.parent) else Path(".")
    remove_stale_parts(target)
    try:
        old_mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        old_mode = None
    try:
        fd, tmp = _new_part(parent, target.name)
    except OSError as exc:
        if exc.errno in _FULL:
            raise _disk_full(path, old_mode is not None) from None
        raise
    try:
        if old_mode is not None:
            os.fchmod(fd, old_mode)         # replacing a file keeps its permissions, as open() does
        binary = "b" in mode
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": newline})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
            check_output_path(target, force=force)      # nothing appeared there meanwhile
            os.replace(tmp, target)                     # still locked: no sweeper takes it
        _fsync_dir(parent)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and exc.errno in _FULL:
            raise _disk_full(path, old_mode is not None) from None
        raise


def _disk_full(path, existed: bool) -> OutputError:
    kept = "the old file is kept" if existed else "nothing was written"
    return OutputError(f"no space left on device writing {str(path)}; {kept} (free some space and try again)")


def write_output(path: str | os.PathLike, data: bytes | str, *, force: bool = False) -> None:
    """Write ``data`` to ``path`` through :func:`atomic_output`."""
    with atomic_output(path, force=force, mode="wb" if isinstance(data, bytes) else "w") as fh:
        fh.write(data)
