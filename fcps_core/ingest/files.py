"""Supported formats, size limits, the file checks done before any parsing, and the
file-named errors every reader raises."""

from __future__ import annotations

import csv
import errno
import gzip
import hashlib
import io as _io
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
_CHUNK = 4 * MB
#: bytes of a text file's start read to sniff its encoding and delimiter
HEAD_BYTES = 64 * 1024
_CANDIDATES = (",", ";", "\t", "|")


@dataclass(frozen=True)
class ImportLimits:
    """Upper bounds an import enforces while reading, each with its own clear error.

    max_bytes : file size on disk, and the decompressed size of a .gz file, default 200 MB.
    max_rows : data rows (items for a wide file, item x judge rows for a long one).
    max_judges : judge columns (or distinct judges of a long file).
    max_distinct_outputs : distinct outputs of one non-numeric judge; more is free text,
        which cannot form table cells (numeric judges are binned and exempt).
    max_cell_bytes : one cell (UTF-8 bytes), default 1 MiB.
    max_line_bytes : one line of a CSV/TSV file (UTF-8 bytes), default 8 MiB; a header
        line counts too.
    """

    max_bytes: int = 200 * MB
    max_rows: int = 2_000_000
    max_judges: int = 1_000
    max_distinct_outputs: int = 1_000
    max_cell_bytes: int = MB
    max_line_bytes: int = 8 * MB

    def __post_init__(self) -> None:
        flags = {"max_bytes": " (--max-mb)", "max_rows": " (--max-rows)", "max_judges": " (--max-judges)",
                 "max_distinct_outputs": " (--max-distinct)"}
        for field_name in ("max_bytes", "max_rows", "max_judges", "max_distinct_outputs",
                           "max_cell_bytes", "max_line_bytes"):
            if getattr(self, field_name) < 1:
                raise PanelError(f"import limit {field_name}{flags.get(field_name, '')} must be at least 1")


DEFAULT_LIMITS = ImportLimits()


def sizes_over(size: int, limit: int) -> str:
    """``200.5 MB, above the import limit of 200 MB``: a size over a limit, in bytes when the
    megabytes would read as equal (``200.0 MB, above ... 200 MB`` for 23 bytes over)."""
    have, cap = f"{size / MB:.1f}", f"{limit / MB:.4g}"
    if float(have) <= float(cap):
        return f"{size:,} bytes, above the import limit of {limit:,} bytes ({cap} MB)"
    return f"{have} MB, above the import limit of {cap} MB"


def size_text(nbytes: int) -> str:
    """``1 MiB``, ``8 MiB``, ``2,048 bytes``: a limit as a user reads it."""
    if nbytes >= MB and nbytes % MB == 0:
        return f"{nbytes // MB:,} MiB"
    return f"{nbytes:,} bytes"


# -- errors that name the file -----------------------------------------------------------------

class FileError(PanelError):
    """A :class:`PanelError` found in a file, shown as one line that names the file first:
    ``FILE line N, column 'C': what is wrong (what to do)``."""

    def __init__(self, message: str, *, file: str, line: int | None = None,
                 column: str | None = None, hint: str | None = None):
        super().__init__(message, line=line, column=column, hint=hint)
        self.file = file
        located = line is not None or column is not None
        self.message = f"{file}{' ' if located else ': '}{self.message}"
        self.args = (self.message,)


def shown_name(path: str | os.PathLike) -> str:
    """A path as the user gave it, printable on one line (control characters escaped)."""
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def in_file(exc: PanelError, name: str) -> PanelError:
    """``exc`` naming the file ``name`` (an error that already names its file is kept)."""
    if isinstance(exc, FileError):
        return exc
    return FileError(exc.detail, file=name, line=exc.line, column=exc.column, hint=exc.hint)


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


@dataclass(frozen=True)
class ContentScan:
    """What one pass over a text file's (decompressed) bytes found.

    ``newlines`` (line feeds) bounds the records of a file without a lone CR.
    ``lone_cr``: a carriage return not followed by a line feed (old Mac line ends, or a CR
    inside a quoted field), which DuckDB's CSV reader can misread; ``loose_quotes``: a quote
    next to a space or tab that is not the delimiter (`` "A"`` after a comma), which DuckDB
    reads as a quoted field and Python's csv module as text. Either sends the file to the
    row-by-row reader.
    """

    size: int
    lone_cr: bool = False
    loose_quotes: bool = False
    newlines: int | None = None     # line feeds: a bound on the records (None: not counted)
    #: a cell may hold a comma (a number with a decimal comma?): a comma in a file with
    #: another delimiter, a quote in a comma-delimited one (True when not scanned)
    commas: bool = True


def check_input_file(path: str, limits: ImportLimits, *, delimiter: str | None = None) -> ContentScan:
    """Refuse what cannot be a panel file before reading it (missing, a symlink loop, a
    directory, a pipe or device, unreadable, over the size limit; a .gz whose content is
    over the limit). With ``delimiter`` the content is scanned once (:class:`ContentScan`)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _stat_error(path, exc) from None
    if stat.S_ISDIR(st.st_mode):
        raise PanelError("this is a directory, not a panel file", hint="give the path of a file inside it")
    if not stat.S_ISREG(st.st_mode):
        # A pipe would block the reader forever and a device may never end: only files
        # whose size is known before reading are read.
        raise PanelError("this is not a regular file (a pipe, device or socket)",
                         hint="save the data to a file and import that file")
    if not os.access(path, os.R_OK):
        raise PanelError("the file cannot be read (permission denied)",
                         hint="make it readable (chmod u+r) or copy it somewhere readable")
    size = st.st_size
    if size > limits.max_bytes:
        raise PanelError(f"the file is {sizes_over(size, limits.max_bytes)}",
                         hint="split the file, drop unused columns, or raise the limit with --max-mb")
    if delimiter is None and not is_gzip(path):
        return ContentScan(size)
    return _scan(path, limits, delimiter)


def _stat_error(path: str, exc: OSError) -> PanelError:
    if exc.errno == errno.ELOOP:
        return PanelError("this is a symbolic link loop: the link points back to itself through "
                          "other links and never reaches a file",
                          hint="point the link at the real file, or give the file's own path")
    if os.path.islink(path):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return PanelError(f"this is a symbolic link to {shown_name(target)!r}, which does not exist",
                          hint="point the link at an existing file, or give the file's own path")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return PanelError("the file cannot be reached (permission denied on a folder of its path)",
                          hint="check the folder permissions, or copy the file somewhere readable")
    if exc.errno == errno.ENAMETOOLONG:
        return PanelError("the path is too long for this system", hint="use a shorter path")
    return PanelError("the file does not exist", hint="check the path and the current folder")


def is_gzip(path: str) -> bool:
    return path.lower().endswith(".gz")


def _too_big(limits: ImportLimits) -> PanelError:
    return PanelError(f"the file expands to more than the import limit of {limits.max_bytes / MB:.0f} MB",
                      hint="split the file, drop unused columns, or raise the limit with --max-mb")


def _bad_gzip(exc: Exception | None = None) -> PanelError:
    why = f" ({exc})" if exc is not None else ""
    return PanelError(f"the file is not a valid gzip file{why}",
                      hint="re-compress it with gzip or import the uncompressed file")


def open_binary(path: str):
    """The file's (decompressed) bytes as a stream."""
    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")


def _scan(path: str, limits: ImportLimits, delimiter: str | None) -> ContentScan:
    """One pass over the (decompressed) content in chunks, never held whole: its size
    (a few MB of gzip can expand to gigabytes; stops at the limit) and, for a delimited
    file, the :class:`ContentScan` flags."""
    total, lone_cr, loose, newlines, commas = 0, False, False, 0, False
    comma_mark = b'"' if delimiter == "," else b","
    patterns = [] if delimiter is None else \
        [p for w in (b" ", b"\t") if w != delimiter.encode() for p in (w + b'"', b'"' + w)]
    tail = b""
    try:
        with open_binary(path) as fh:
            while True:
                chunk = fh.read(_CHUNK)
                if not chunk:
                    break
                total += len(chunk)
                if total > limits.max_bytes:
                    raise _too_big(limits)
                if delimiter is not None:
                    newlines += chunk.count(b"\n")
                    window = tail + chunk
                    # single-byte searches first (memchr): most files have no CR or no quote
                    if not lone_cr and b"\r" in window:
                        # a CR at the very end may be followed by the next chunk's LF
                        body = window[:-1] if window.endswith(b"\r") else window
                        lone_cr = body.count(b"\r") != body.count(b"\r\n")
                    if not loose and b'"' in window:
                        loose = any(p in window for p in patterns)
                    if not commas:
                        commas = comma_mark in chunk
                    tail = window[-1:]
    except (OSError, EOFError, zlib.error) as exc:
        raise _bad_gzip(exc) from None
    if tail == b"\r":
        lone_cr = True
    return ContentScan(total, lone_cr=lone_cr, loose_quotes=loose,
                       newlines=None if delimiter is None else newlines, commas=delimiter is None or commas)


def read_head_bytes(path: str, nbytes: int = 1 << 20) -> bytes:
    """The first ``nbytes`` (decompressed) bytes of a file."""
    try:
        with open_binary(path) as fh:
            return fh.read(nbytes)
    except (OSError, EOFError, zlib.error) as exc:
        if not is_gzip(path):
            raise PanelError(f"the file cannot be read ({exc.strerror or exc})") from None
        raise _bad_gzip(exc) from None


# -- what a text file looks like -----------------------------------------------------------------

_SIGNATURES = ((b"PK\x03\x04", "like a ZIP archive (an Excel .xlsx workbook?)", "export it as CSV (UTF-8)"),
               (b"\xd0\xcf\x11\xe0", "like an Excel .xls (or other Office) file", "export it as CSV (UTF-8)"),
               (b"\x89PNG", "like a PNG image", "give the path of the panel file"),
               (b"%PDF", "like a PDF document", "give the path of the panel file"),
               (b"\x1f\x8b", "gzip-compressed", "name it with a .gz suffix (panel.csv.gz)"),
               (b"PAR1", "like a Parquet file", "name it .parquet, or pass --format parquet"),
               (b"SQLite format 3\x00", "like an SQLite database", "export the table as CSV"))


def sniff_text(head: bytes) -> tuple[str, str] | None:
    """(``the file looks ...``, what to do) when the first bytes of a file that should be
    UTF-8 text are something else: UTF-16/UTF-32, a known binary format, binary noise."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32", "save it as UTF-8"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16", "save it as UTF-8"
    for magic, what, fix in _SIGNATURES:
        if head.startswith(magic):
            return what, fix
    if head[8:12] == b"DUCK":               # DuckDB's magic follows an 8-byte checksum
        return ("like a DuckDB database (an fcps store?)",
                "name a stored panel instead, with --store FILE (python -m fcps_core panels --store FILE "
                "lists them), or export it as CSV first")
    sample = head[:4096]
    if len(sample) >= 8 and sample.count(0) * 4 >= len(sample):
        quads = len(sample) // 4 * 4
        if sample[:quads].count(0) * 8 >= quads * 5:
            return "UTF-32 (no byte-order mark)", "save it as UTF-8"
        return "UTF-16 (no byte-order mark)", "save it as UTF-8"
    control = sum(1 for b in sample if b < 32 and b not in (9, 10, 13))
    if sample and control * 20 > len(sample):
        return "like binary data", "give the path of a CSV, TSV, Parquet or JSON Lines file"
    return None


def delimiter_name(delimiter: str) -> str:
    return "tab" if delimiter == "\t" else repr(delimiter)


def delimiter_advice(delimiter: str) -> str:
    if delimiter == "\t":
        return "the file looks tab-delimited: pass --delimiter $'\\t' or --format tsv"
    return f"the file looks {delimiter!r}-delimited: pass --delimiter {delimiter!r}"


def other_delimiter(head: bytes, delimiter: str) -> str | None:
    """The delimiter among , ; tab | (not ``delimiter``) that splits the first lines of
    ``head`` into the same number (at least two, and more than ``delimiter`` gives) of fields."""
    lines = head.decode("utf-8", "replace").lstrip("\ufeff").splitlines()
    if len(head) >= HEAD_BYTES:
        lines = lines[:-1]                      # the last line may be cut
    lines = [line for line in lines if line.strip()][:20]

    def widths(d: str) -> list[int]:
        try:
            return [len(r) for r in csv.reader(lines, delimiter=d)]
        except csv.Error:
            return []
    own = widths(delimiter)
    best, best_width = None, max(own[:1] + [1])
    for cand in _CANDIDATES:
        w = widths(cand) if cand != delimiter else []
        if w and w[0] > best_width and all(x == w[0] for x in w):
            best, best_width = cand, w[0]
    return best


def bad_utf8(path: str, header: list[str] | None, delimiter: str) -> PanelError:
    """Locate the first byte that is not UTF-8 (error path: reads the file again)."""
    with open_binary(path) as raw:
        text = _io.TextIOWrapper(raw, encoding="latin-1", newline="")
        for k, line in enumerate(iter(text.readline, ""), start=1):
            data = line.encode("latin-1")
            try:
                decoded = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                guess = "; it looks Latin-1 or Windows-1252" if looks_latin1(data) else ""
                column = None
                if header and k > 1:
                    prefix = data[:exc.start].decode("utf-8", "replace")
                    fields = next(csv.reader([prefix], delimiter=delimiter), [""])
                    column = header[len(fields) - 1] if 0 < len(fields) <= len(header) else None
                return PanelError(f"the file is not UTF-8: byte 0x{data[exc.start]:02x} cannot be "
                                  f"decoded{guess}", line=k, column=column,
                                  hint="re-save the file as UTF-8")
            if k == 1 and header is None:
                header = next(csv.reader([decoded.lstrip("\ufeff").rstrip("\r\n")], delimiter=delimiter), None)
    return PanelError("the file is not UTF-8", hint="re-save the file as UTF-8")


def looks_latin1(data: bytes) -> bool:
    """Bytes that are not UTF-8 but read as Windows-1252 / Latin-1 text."""
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return False
    return all(c.isprintable() or c in "\t\r\n" for c in text)


def file_sha256(path: str) -> str:
    """SHA-256 of the file's bytes (recorded as the panel's source fingerprint)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
