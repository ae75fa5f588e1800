"""Supported formats, size limits and the file checks done before any parsing."""

from __future__ import annotations

import gzip
import hashlib
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path


from ..errors import PanelError


FORMATS = ("csv", "tsv", "parquet", "jsonl")
_SUFFIXES = {".csv": "csv", ".txt": "csv", ".tsv": "tsv", ".tab": "tsv", ".parquet": "parquet",
             ".pq": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}
#: upload file names are rebuilt from these suffixes only (see :func:`save_upload`)
UPLOAD_SUFFIXES = (".csv", ".tsv", ".tab", ".txt", ".parquet", ".pq", ".jsonl", ".ndjson",
                   ".json", ".csv.gz", ".tsv.gz", ".tab.gz", ".txt.gz", ".jsonl.gz",
                   ".ndjson.gz", ".json.gz")
MB = 1024 * 1024


@dataclass(frozen=True)
class ImportLimits:
    """Upper bounds an import enforces, each with its own clear error.

    max_bytes : file size on disk, and the decompressed size of a .gz file, default 200 MB.
    max_rows : data rows (items for a wide file, item x judge rows for a long one).
    max_judges : judge columns (or distinct judges of a long file).
    max_distinct_outputs : distinct outputs of one non-numeric judge; more is free text,
        which cannot form table cells (numeric judges are binned and exempt).
    """

    max_bytes: int = 200 * MB
    max_rows: int = 2_000_000
    max_judges: int = 1_000
    max_distinct_outputs: int = 1_000

    def __post_init__(self) -> None:
        for field_name in ("max_bytes", "max_rows", "max_judges", "max_distinct_outputs"):
            if getattr(self, field_name) < 1:
                raise PanelError(f"import limit {field_name} must be at least 1")


DEFAULT_LIMITS = ImportLimits()


# -- files ---------------------------------------------------------------------------------

def _base_suffix(path: str) -> tuple[str, bool]:
    low = path.lower()
    gz = low.endswith(".gz")
    return Path(low[:-3] if gz else low).suffix, gz


def detect_format(path: str, fmt: str | None = None) -> str:
    """``fmt`` when given, else from the extension (``.gz`` ignored); unknown means CSV."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise PanelError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
        return fmt
    suffix, _ = _base_suffix(path)
    return _SUFFIXES.get(suffix, "csv")


def check_input_file(path: str, limits: ImportLimits) -> int:
    if not os.path.exists(path):
        raise PanelError(f"file {path!r} does not exist")
    if os.path.isdir(path):
        raise PanelError(f"{path!r} is a directory, not a panel file")
    if not stat.S_ISREG(os.stat(path).st_mode):
        # A pipe would block the reader forever and a device may never end: only files
        # whose size is known before reading are read.
        raise PanelError(f"{path!r} is not a regular file (a pipe, device or socket)",
                         hint="save the data to a file and import that file")
    size = os.path.getsize(path)
    if size > limits.max_bytes:
        raise PanelError(f"file is {size / MB:.1f} MB, above the import limit of "
                         f"{limits.max_bytes / MB:.0f} MB",
                         hint="split the file, drop unused columns, or raise the limit with --max-mb")
    if path.lower().endswith(".gz"):
        _check_decompressed_size(path, limits)
    return size


def _check_decompressed_size(path: str, limits: ImportLimits) -> None:
    """A gzip file's content counts against the same limit: a few MB can expand to
    gigabytes. Decompressed in chunks and counted, never held; stops at the limit."""
    total = 0
    try:
        with gzip.open(path, "rb") as fh:
            while True:
                chunk = fh.read(4 * MB)
                if not chunk:
                    return
                total += len(chunk)
                if total > limits.max_bytes:
                    raise PanelError(f"{os.path.basename(path)!r} expands to more than the import limit "
                                     f"of {limits.max_bytes / MB:.0f} MB",
                                     hint="split the file, drop unused columns, or raise the limit with --max-mb")
    except (OSError, EOFError, zlib.error) as exc:
        raise PanelError(f"{os.path.basename(path)!r} is not a valid gzip file ({exc})",
                         hint="re-compress it with gzip or import the uncompressed file") from None


def read_head_bytes(path: str, nbytes: int = 1 << 20) -> bytes:
    """The first ``nbytes`` (decompressed) bytes of a file."""
    try:
        if path.lower().endswith(".gz"):
            with gzip.open(path, "rb") as fh:
                return fh.read(nbytes)
        with open(path, "rb") as fh:
            return fh.read(nbytes)
    except (OSError, EOFError, zlib.error) as exc:
        raise PanelError(f"{os.path.basename(path)!r} is not a valid gzip file ({exc})",
                         hint="re-compress it with gzip or import the uncompressed file") from None


def file_sha256(path: str) -> str:
    """SHA-256 of the file's bytes (recorded as the panel's source fingerprint)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
