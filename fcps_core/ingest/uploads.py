"""Uploaded bytes saved under the store directory, named by content hash."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


from ..errors import PanelError
from .files import DEFAULT_LIMITS, ImportLimits, MB, UPLOAD_SUFFIXES


# -- uploads ---------------------------------------------------------------------------------

def save_upload(data: bytes, filename: str, store_dir: str | os.PathLike,
                *, limits: ImportLimits = DEFAULT_LIMITS) -> Path:
    """Write uploaded bytes under ``<store_dir>/uploads/`` and return the path.

    The user's file name contributes only its suffix (from :data:`UPLOAD_SUFFIXES`); the
    stored name is the content's SHA-256, so no name (``../x``, absolute paths, NUL bytes,
    symlinks planted in the folder) can place a file outside the upload folder.
    """
    if len(data) > limits.max_bytes:
        raise PanelError(f"the upload is {len(data) / MB:.1f} MB, above the import limit of "
                         f"{limits.max_bytes / MB:.0f} MB", hint="split the file or drop unused columns")
    low = os.path.basename(str(filename).replace("\\", "/")).lower()
    suffix = next((s for s in sorted(UPLOAD_SUFFIXES, key=len, reverse=True) if low.endswith(s)), None)
    if suffix is None or "\x00" in str(filename):
        raise PanelError(f"upload {os.path.basename(str(filename))[:80]!r} is not a panel file",
                         hint="upload a .csv, .tsv, .parquet or .jsonl file (optionally .gz)")
    folder = (Path(store_dir) / "uploads").resolve()
    folder.mkdir(parents=True, exist_ok=True)
    # The final component is not resolved: os.replace swaps a planted symlink for the file
    # instead of following it.
    target = folder / (hashlib.sha256(data).hexdigest()[:32] + suffix)
    if target.parent != folder or os.sep in target.name:
        raise PanelError("refusing to write the upload outside the store's upload folder")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".upload-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)   # atomic: a reader never sees half an upload
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return target
