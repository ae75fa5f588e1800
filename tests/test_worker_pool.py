"""The folds' worker pool (fcps_core/worker_pool.py): started ahead of the folds it is the
pool the tasks run on; stopped, its workers are gone at once, those still starting too; and
a command line failing on a large file stops the workers it started (one error line, nothing
else on the terminal)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fcps_core.worker_pool import _wait_for_start, run_tasks, start_workers

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for child processes")


def _children(pid: int) -> set[int]:
    """The live child processes of ``pid`` (from /proc: the parent is the field after the
    state, which follows the parenthesised command name), but for the resource trackers
    (multiprocessing's and loky's: they live as long as the process that started them)."""
    out = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) != pid or fields[0] == "Z":
            continue
        try:
            tracker = b"resource_tracker" in (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if not tracker:
            out.add(int(entry.name))
    return out


def test_the_modules_workers_import_ahead_are_the_folds():
    import importlib
    from fcps_core.selection.crossfit import fold_work
    from fcps_core.service.select import FOLD_MODULES
    assert fold_work.__module__ in FOLD_MODULES
    for name in FOLD_MODULES:
        importlib.import_module(name)


def test_tasks_run_on_the_pool_started_ahead():
    start_workers(2, modules=("fcps_core.selection.crossfit",))
    _wait_for_start()
    started = _children(os.getpid())
    ran_on = set(run_tasks(2, os.getpid, [(), (), (), ()]))
    assert ran_on and ran_on <= started
    assert os.getpid() not in ran_on


_STOP_EARLY = """
import os, sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_worker_pool import _children
from fcps_core.worker_pool import start_workers, stop_workers
assert start_workers(2)
deadline = time.monotonic() + 30
while not _children(os.getpid()) and time.monotonic() < deadline:
    time.sleep(0.01)                   # some worker process exists (still starting, most likely)
assert _children(os.getpid()), "no worker started"
assert stop_workers()
deadline = time.monotonic() + 20
while _children(os.getpid()) and time.monotonic() < deadline:
    time.sleep(0.05)
print(len(_children(os.getpid())))
"""


def test_stopped_workers_are_gone_while_the_process_runs_on():
    """Without the stop, workers that finished starting stay alive (idle) until the process
    exits; stopped, they are killed, those still importing included."""
    done = subprocess.run([sys.executable, "-c", _STOP_EARLY.format(tests=str(REPO / "tests"))], cwd=str(REPO),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "0"
    assert done.stderr == ""


def test_a_large_file_that_fails_to_read_gives_one_line(tmp_path):
    """select on a file of at least WORKERS_AHEAD_BYTES starts the workers before reading
    it; the read fails on a short line: the one error line naming file and line, exit
    status 2, nothing from the stopped workers."""
    from fcps_core.service.select import WORKERS_AHEAD_BYTES
    header = "item_id,label," + ",".join(f"j{i}" for i in range(20))
    row = ",".join(["0.123456"] * 20)
    lines = [header] + [f"i{r},{r % 2},{row}" for r in range(WORKERS_AHEAD_BYTES // len(row) + 10)]
    lines[-3] = "x1,1,0.5"
    path = tmp_path / "big.csv"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size >= WORKERS_AHEAD_BYTES
    done = subprocess.run([sys.executable, "-m", "fcps_core", "select", str(path), "--seed", "0", "--quiet"],
                          cwd=str(REPO), capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    err = done.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fcps: error:") and f"line {len(lines) - 2}" in err[0], done.stderr
