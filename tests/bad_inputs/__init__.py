"""Generators for the bad-input corpus (``tests/test_bad_input_corpus.py``) and its
benchmark (``bench/bench_bad_inputs.py``). Not a test module.

Nothing large or binary is committed: every hostile file (gzip bombs, UTF-16, Parquet,
binary noise, 5-million-number predictors) is generated at run time from the few
builders below. The base environment of a case is

* ``good.csv``: a valid 60-row wide pairwise panel (items it0..it59, groups g0..g29 of two
  items, labels 0/1 alternating, judges j1..j3 answering A/B/tie);
* ``traffic.csv``: the same rows without the label column;
* ``store.duckdb``: a store holding that panel as ``earlier`` and one selection run
  (run 1, with its predictor);
* ``model.json`` (a ``table`` predictor) and ``logit.json`` (a ``logistic`` predictor),
  both calibrated on ``good.csv``.

:func:`make_base` builds it once; :func:`prepare` copies it into a case's directory.
:func:`run_process` runs a command in a child process with a wall-clock timeout and a
resident-memory watchdog, and reports the child's own peak RSS (``os.wait4``).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable
MB = 1024 * 1024
RUN_ID = 1          # the stored selection of the base store


# -- panel contents ------------------------------------------------------------------------

def panel_rows(n: int = 60, judges: int = 3, seed: int = 0, labels: bool = True) -> list[list[str]]:
    """A valid wide pairwise panel, header first: labels alternate 0/1, two items per
    group, judges agree with the label 85 %, 75 %, 65 % of the time, a few ties."""
    rng = random.Random(seed)
    header = ["item_id", "group_id"] + (["label"] if labels else []) + [f"j{k + 1}" for k in range(judges)]
    rows = [header]
    for i in range(n):
        y = i % 2
        outs = []
        for k in range(judges):
            acc = 0.85 - 0.2 * k / max(judges - 1, 1)
            if rng.random() < 0.05:
                outs.append("tie")
            else:
                outs.append("A" if (rng.random() < acc) == (y == 1) else "B")
        rows.append([f"it{i}", f"g{i // 2}"] + ([str(y)] if labels else []) + outs)
    return rows


def _quote(cell: str, sep: str) -> str:
    if any(c in cell for c in (sep, '"', "\r", "\n")):
        return '"' + cell.replace('"', '""') + '"'
    return cell


def csv_bytes(rows: list[list[str]], sep: str = ",", eol: str = "\n", encoding: str = "utf-8",
              bom: bytes = b"") -> bytes:
    text = "".join(sep.join(_quote(c, sep) for c in r) + eol for r in rows)
    return bom + text.encode(encoding)


def good_csv(**kw) -> bytes:
    return csv_bytes(panel_rows(), **kw)


def with_cell(row: int, col: int, value: str, rows: list[list[str]] | None = None) -> list[list[str]]:
    """The good panel with one cell replaced (``row`` 0 is the header; file line = row + 1)."""
    rows = [list(r) for r in (rows or panel_rows())]
    rows[row][col] = value
    return rows


def with_column(col: int, fn, rows: list[list[str]] | None = None) -> list[list[str]]:
    """The good panel with every data cell of a column set to ``fn(i)``."""
    rows = [list(r) for r in (rows or panel_rows())]
    for i, r in enumerate(rows[1:]):
        r[col] = fn(i)
    return rows


def long_rows(n_items: int = 20, judges=("m1", "m2", "m3"), label: bool = True) -> list[list[str]]:
    """A valid long panel: item_id, judge, output[, label], one row per (item, judge)."""
    rng = random.Random(1)
    rows = [["item_id", "judge", "output"] + (["label"] if label else [])]
    for i in range(n_items):
        y = i % 2
        for j in judges:
            out = "A" if (rng.random() < 0.8) == (y == 1) else "B"
            rows.append([f"i{i}", j, out] + ([str(y)] if label else []))
    return rows


def jsonl_bytes(rows: list[list[str]], numeric_label: bool = True) -> bytes:
    header, body = rows[0], rows[1:]
    lines = []
    for r in body:
        obj = dict(zip(header, r))
        if numeric_label and "label" in obj and obj["label"] not in ("",):
            try:
                obj["label"] = int(obj["label"])
            except ValueError:
                pass
        lines.append(json.dumps(obj))
    return ("\n".join(lines) + "\n").encode()


def parquet_bytes(columns: list[tuple[str, list]]) -> bytes:
    """A Parquet file from (name, values) pairs; names may repeat (pyarrow allows it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    table = pa.Table.from_arrays([pa.array(v) for _, v in columns], names=[n for n, _ in columns])
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def good_parquet_columns() -> list[tuple[str, list]]:
    rows = panel_rows()
    cols = list(zip(*rows[1:]))
    out = []
    for name, values in zip(rows[0], cols):
        out.append((name, [int(v) for v in values] if name == "label" else list(values)))
    return out


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def gzip_bomb(expanded_mb: int, header: bytes = b"item_id,group_id,label,j1,j2,j3\n") -> bytes:
    """A multi-member gzip file: the header, then ``expanded_mb`` identical members each
    expanding to 1 MiB of CSV rows. A few KB per 1 MiB; built without compressing gigabytes."""
    line = b"x,g,0,A,B,A\n"
    member = gzip.compress(line * (MB // len(line)), compresslevel=9, mtime=0)
    return gzip.compress(header, mtime=0) + member * expanded_mb


def noise(nbytes: int, seed: int = 0) -> bytes:
    return random.Random(seed).randbytes(nbytes)


# -- the base environment ------------------------------------------------------------------

BASE_FILES = ("good.csv", "traffic.csv", "store.duckdb", "model.json", "logit.json")


def make_base(folder: Path) -> Path:
    """Build the base environment once (about 2 s): files, store, predictors."""
    from fcps_core.cli.main import main
    from fcps_core.ingest import import_file
    from fcps_core.store import Store
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "good.csv").write_bytes(good_csv())
    (folder / "traffic.csv").write_bytes(csv_bytes(panel_rows(labels=False)))
    store_path = folder / "store.duckdb"
    store = Store(store_path)
    import_file(store, str(folder / "good.csv"), name="earlier", licence="MIT")
    store.set_meta("seed_version", "bad-input corpus")      # the dashboard must not seed it
    base = ["--store", str(store_path), "--choice", "argmin", "--n-boot", "10", "--quiet", "--force"]
    with _quiet():
        code1 = main(["select", "earlier", "--families", "table", "--save",
                      "--save-model", str(folder / "model.json"), *base])
        code2 = main(["select", str(folder / "good.csv"), "--families", "logistic",
                      "--save-model", str(folder / "logit.json"), *base])
    if (code1, code2) != (0, 0):
        raise RuntimeError(f"base environment: select exited {code1}, {code2}")
    runs = Store(store_path).runs()
    if [r["run_id"] for r in runs] != [RUN_ID]:
        raise RuntimeError(f"base environment: expected run {RUN_ID}, found {runs}")
    del store
    import gc
    gc.collect()
    return folder


class _quiet:
    """Silence stdout/stderr of the in-process selects that build the base."""

    def __enter__(self):
        self._saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = io.StringIO()

    def __exit__(self, *exc):
        sys.stdout, sys.stderr = self._saved
        return False


def prepare(base: Path, tmp: Path) -> dict[str, str]:
    """Copy the base environment into ``tmp``; the placeholders a case's command uses."""
    tmp = Path(tmp)
    tmp.mkdir(parents=True, exist_ok=True)
    for name in BASE_FILES:
        shutil.copyfile(Path(base) / name, tmp / name)
    wal = Path(base) / "store.duckdb.wal"
    if wal.exists():
        shutil.copyfile(wal, tmp / "store.duckdb.wal")
    return {"tmp": str(tmp), "store": str(tmp / "store.duckdb"), "good": str(tmp / "good.csv"),
            "traffic": str(tmp / "traffic.csv"), "model": str(tmp / "model.json"),
            "logit": str(tmp / "logit.json"), "run": str(RUN_ID)}


def child_env(env: dict[str, str]) -> dict[str, str]:
    """Process environment of a case: the case's store is the default, a locked store
    fails fast, the project is importable."""
    out = dict(os.environ)
    out["FCPS_STORE"] = env["store"]
    out["FCPS_STORE_TIMEOUT"] = "10"
    out["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(TESTS)] + ([out["PYTHONPATH"]] if out.get("PYTHONPATH") else []))
    return out


# -- a child process with a timeout and a memory watchdog -----------------------------------

def _rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its descendants (MiB), from /proc."""
    total = 0.0
    todo = [pid]
    seen = set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) / 1024
                        break
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            pass
    return total


#: a small launcher between the measuring parent and the command: Linux folds the forking
#: process's memory high-water mark into the child's ru_maxrss (at fork and at execve), so
#: the command is forked from this ~10 MB interpreter, not from a parent that has loaded
#: the library; the launcher writes the command's own ru_maxrss (KiB) to argv[1].
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as fh:
    fh.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def run_process(argv: list[str], *, cwd: str, env: dict[str, str], timeout: float = 60,
                mem_limit_mb: float = 2048, stdin=subprocess.DEVNULL) -> dict:
    """Run ``argv`` (through :data:`LAUNCHER`); kill its process group on timeout or when
    its resident memory passes ``mem_limit_mb``. Returns code, stdout, stderr, seconds,
    peak_mb (the command's ru_maxrss, its waited-for descendants included, or the
    watchdog's largest /proc sample when higher or when the command was killed) and
    ``killed`` (None, 'timeout' or 'memory')."""
    import tempfile
    fd, rss_file = tempfile.mkstemp(prefix="fcps-rss-")
    os.close(fd)
    out_f = io.BytesIO()
    err_f = io.BytesIO()
    start = time.perf_counter()
    proc = subprocess.Popen([PYTHON, "-I", "-S", "-c", LAUNCHER, rss_file, *argv], cwd=cwd, env=env,
                            stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    killed: list[str] = []
    done = threading.Event()

    def pump(src, dst):
        for chunk in iter(lambda: src.read(65536), b""):
            if dst.tell() < 4 * MB:
                dst.write(chunk)
        src.close()

    threads = [threading.Thread(target=pump, args=(proc.stdout, out_f), daemon=True),
               threading.Thread(target=pump, args=(proc.stderr, err_f), daemon=True)]
    for t in threads:
        t.start()
    watch_peak = [0.0]

    def watchdog():
        # never waits on the child (os.wait4 below reaps it): polls /proc until done
        while not done.wait(0.05):
            rss = _rss_mb(proc.pid)
            watch_peak[0] = max(watch_peak[0], rss)
            reason = "memory" if rss > mem_limit_mb else (
                "timeout" if time.perf_counter() - start > timeout else None)
            if reason:
                killed.append(reason)
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                return

    dog = threading.Thread(target=watchdog, daemon=True)
    dog.start()
    _, status, _ = os.wait4(proc.pid, 0)
    done.set()
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    try:                    # descendants left behind (a loky pool) go with the group
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for t in threads:
        t.join(5)
    dog.join(1)
    try:
        peak = int(Path(rss_file).read_text() or 0) / 1024
    except (OSError, ValueError):
        peak = 0.0
    finally:
        os.unlink(rss_file)
    code = proc.returncode
    if code > 128 and not killed:
        code = -(code - 128)            # the command died of a signal
    return {"code": code, "stdout": out_f.getvalue().decode("utf-8", "replace"),
            "stderr": err_f.getvalue().decode("utf-8", "replace"), "seconds": seconds,
            "peak_mb": max(peak, watch_peak[0]),
            "killed": killed[0] if killed else None}
