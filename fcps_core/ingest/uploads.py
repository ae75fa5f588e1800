"""Uploaded bytes saved under the store directory, named by content hash, and the cleanup
that keeps that folder from growing forever."""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import tempfile
import time
from pathlib import Path
from typing import Iterable


from ..errors import PanelError
from .files import DEFAULT_LIMITS, ImportLimits, MB, UPLOAD_SUFFIXES, sizes_over


# -- cleanup bounds --------------------------------------------------------------------------
# An upload is kept while a stored panel was imported from it (its SHA-256 is a panel's
# source_sha256). Any other upload (previewed, rejected, a traffic file, a panel whose import
# failed or that was deleted since) is removed when a new upload is saved and either

#: ... it is older than this many hours, or
UPLOAD_MAX_AGE_HOURS = 24.0
#: ... the unreferenced uploads together exceed this many bytes (oldest removed first).
UPLOAD_MAX_BYTES = 512 * MB
#: An upload (or a half-written ``.part`` of a killed writer) younger than this many seconds
#: is never removed: another page or process may be about to read what it just wrote.
UPLOAD_GRACE_SECONDS = 120.0

#: the names :func:`save_upload` gives (32 hex digits of the SHA-256 and a known suffix)
UPLOAD_NAME = re.compile(r"([0-9a-f]{32})(" + "|".join(re.escape(s) for s in UPLOAD_SUFFIXES) + r")")
PART_NAME = re.compile(r"\.upload-.*\.part")


# -- uploads ---------------------------------------------------------------------------------

def save_upload(data: bytes, filename: str, store_dir: str | os.PathLike,
                *, limits: ImportLimits = DEFAULT_LIMITS, keep: Iterable[str] | None = None) -> Path:
    """Write uploaded bytes under ``<store_dir>/uploads/`` and return the path.

    The user's file name contributes only its suffix (from :data:`UPLOAD_SUFFIXES`); the
    stored name is the content's SHA-256, so no name (``../x``, absolute paths, NUL bytes,
    symlinks planted in the folder) can place a file outside the upload folder.

    With ``keep`` (the SHA-256 of every stored panel's source, ``Store.source_digests()``)
    the folder is cleaned afterwards (:func:`clean_uploads`); the upload just written is
    never removed. A full device raises :class:`PanelError` and leaves no partial file.
    """
    if len(data) > limits.max_bytes:
        raise PanelError(f"the upload is {sizes_over(len(data), limits.max_bytes)}",
                         hint="split the file or drop unused columns")
    low = os.path.basename(str(filename).replace("\\", "/")).lower()
    suffix = next((s for s in sorted(UPLOAD_SUFFIXES, key=len, reverse=True) if low.endswith(s)), None)
    if suffix is None or "\x00" in str(filename):
        raise PanelError(f"upload {os.path.basename(str(filename))[:80]!r} is not a panel file",
                         hint="upload a .csv, .tsv, .parquet or .jsonl file (optionally .gz)")
    folder = (Path(store_dir) / "uploads").resolve()
    digest = hashlib.sha256(data).hexdigest()
    # The final component is not resolved: os.replace swaps a planted symlink for the file
    # instead of following it.
    target = folder / (digest[:32] + suffix)
    if target.parent != folder or os.sep in target.name:
        raise PanelError("refusing to write the upload outside the store's upload folder")
    tmp = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".upload-", suffix=".part")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)   # atomic: a reader never sees half an upload
    except BaseException as exc:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise PanelError(f"no space left on device while saving the upload under {folder}; "
                             "nothing was saved", hint="free some space and upload it again") from exc
        raise
    if keep is not None:
        clean_uploads(store_dir, keep=set(keep) | {digest}, protect=(target,))
    return target


def clean_uploads(store_dir: str | os.PathLike, *, keep: Iterable[str] = (),
                  protect: Iterable[str | os.PathLike] = (), now: float | None = None,
                  max_age_hours: float | None = None, max_bytes: int | None = None,
                  grace_seconds: float | None = None) -> list[Path]:
    """Remove uploads under ``<store_dir>/uploads/`` that no stored panel came from; returns
    what was removed.

    ``keep`` holds SHA-256 digests (full or their first 32 digits) of uploads to keep (the
    stored panels' ``source_sha256``); ``protect`` paths are never removed. Any other
    upload goes once older than ``max_age_hours``, and then, oldest first, while the rest
    exceed ``max_bytes``; nothing younger than ``grace_seconds`` goes (defaults: this
    module's ``UPLOAD_*`` constants, read at each call). Half-written
    ``.part`` files of killed writers older than the grace period go too. Only regular
    files with the names :func:`save_upload` gives are touched (never a symlink's target,
    never another file); a file that vanished meanwhile (another cleaner) is skipped.
    """
    folder = Path(store_dir) / "uploads"
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    now = time.time() if now is None else now
    max_age_hours = UPLOAD_MAX_AGE_HOURS if max_age_hours is None else max_age_hours
    max_bytes = UPLOAD_MAX_BYTES if max_bytes is None else max_bytes
    grace_seconds = UPLOAD_GRACE_SECONDS if grace_seconds is None else grace_seconds
    kept = {str(k).lower()[:32] for k in keep}
    protected = {os.path.realpath(p) for p in protect}
    candidates = []                     # (mtime, size, path, expired) of removable files
    young = 0                           # bytes of unreferenced uploads in their grace period
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(st.st_mode) or os.path.realpath(entry.path) in protected:
            continue
        age = now - st.st_mtime
        if PART_NAME.fullmatch(entry.name):
            if age > grace_seconds:
                candidates.append((st.st_mtime, 0, Path(entry.path), True))
            continue
        m = UPLOAD_NAME.fullmatch(entry.name)
        if m is None or m.group(1) in kept:
            continue
        if age <= grace_seconds:
            young += st.st_size
            continue
        candidates.append((st.st_mtime, st.st_size, Path(entry.path), age > max_age_hours * 3600))
    candidates.sort(key=lambda c: c[0])          # oldest first
    total = young + sum(c[1] for c in candidates)
    removed = []
    for mtime, size, path, expired in candidates:
        if not expired and total <= max_bytes:
            continue
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            continue                    # not ours to force (permissions): leave it
        removed.append(path)
        total -= size
    return removed
