"""A command stopped by SIGTERM or SIGHUP unwinds as Ctrl-C does (service/process.py).

Their default action ends the process without unwinding, which left the folds' worker
processes running as orphans (parent 1) for minutes, computing and holding their memory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fcps_core.service.process import Terminated, stopping_on_termination
from store_helpers import PYTHON, ROOT, write_big_csv

linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


def _stat(pid) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), None when gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()


def _children(pid: int) -> set[int]:
    """The live processes whose parent is ``pid`` (from /proc)."""
    kids = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(entry.name)
            if fields is not None and int(fields[1]) == pid and fields[0] != "Z":
                kids.add(int(entry.name))
    return kids


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (0 when it is gone)."""
    fields = _stat(pid)
    return 0.0 if fields is None else (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cmdline(pid: int) -> str:
    """``pid``'s command line ('' once it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def _wait(done, deadline: float) -> None:
    """Poll ``done()`` every 0.2 s until it holds or ``time.monotonic()`` passes ``deadline``."""
    while time.monotonic() < deadline and not done():
        time.sleep(0.2)


def _started_workers(proc, deadline: float) -> set[int]:
    """The children of the selection ``proc`` once it has at least two (the pool's workers
    and loky's resource tracker), or what it has when it ends or ``deadline`` passes."""
    workers: set[int] = set()

    def started() -> bool:
        nonlocal workers
        if proc.poll() is not None:
            return True
        workers = _children(proc.pid)
        return len(workers) >= 2
    _wait(started, deadline)
    return workers


def _end_all(proc, workers) -> None:
    """Nothing left behind, even when a test fails."""
    if proc.poll() is None:
        proc.kill()
    for w in workers:
        if _alive(w):
            os.kill(w, signal.SIGKILL)


@linux_only
def test_sigterm_mid_selection_exits_143_and_leaves_no_worker_running(tmp_path):
    panel = tmp_path / "panel.csv"
    write_big_csv(panel, rows=40_000, judges=10, seed=3)
    out_path, err_path = tmp_path / "out", tmp_path / "err"
    workers: set[int] = set()
    # files, not pipes: a worker left running would hold a pipe open; the signal's default
    # disposition in the child, whatever the test runner's
    with open(out_path, "wb") as out_file, open(err_path, "wb") as err_file:
        proc = subprocess.Popen([PYTHON, "-m", "fcps_core", "select", str(panel), "--seed", "0", "--quiet", "--json"],
                                cwd=ROOT, stdout=out_file, stderr=err_file,
                                preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))
    try:
        workers = _started_workers(proc, time.monotonic() + 120)
        assert len(workers) >= 2, "the selection started no worker process"
        time.sleep(1.0)                    # the folds are running in them
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        err = err_path.read_text()
        assert proc.returncode == 128 + signal.SIGTERM, err
        assert err.strip().splitlines()[-1] == "fcps: terminated by SIGTERM"
        error = json.loads(out_path.read_text().strip().splitlines()[-1])
        assert error["type"] == "terminated" and error["exit"] == 143
        _wait(lambda: not any(_alive(w) for w in workers), time.monotonic() + 20)
        assert not [w for w in workers if _alive(w)], "worker processes outlived the command"
    finally:
        _end_all(proc, workers)


def test_the_signal_raises_terminated_in_the_block_and_the_handlers_come_back():
    before = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        with pytest.raises(Terminated) as caught:
            with stopping_on_termination():
                assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN)
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(1000):      # the handler runs between bytecodes
                    time.sleep(0.001)
        assert caught.value.signum == signal.SIGTERM and str(caught.value) == "SIGTERM"
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, before)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP here")
def test_an_ignored_signal_stays_ignored():
    """``nohup fcps select ...`` ignores SIGHUP: the command must not take it back."""
    before = signal.getsignal(signal.SIGHUP)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with stopping_on_termination():
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(0.05)
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)


@linux_only
def test_workers_end_when_the_selection_is_killed_outright(tmp_path):
    """SIGKILL (or the out-of-memory killer) leaves no chance to shut the pool down: the
    workers see their parent gone and end (worker_pool.exit_with_parent)."""
    panel = tmp_path / "panel.csv"
    write_big_csv(panel, rows=60_000, judges=10, seed=4)
    workers: set[int] = set()
    proc = subprocess.Popen([PYTHON, "-m", "fcps_core", "select", str(panel), "--seed", "0", "--quiet"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        workers = _started_workers(proc, deadline)
        assert len(workers) >= 2, "the selection started no worker process"
        # the pool's workers (not the resource trackers of loky and multiprocessing); a child
        # caught between its fork and its exec still shows the parent's command line, so the
        # children are read again until one shows loky's
        pool: list[int] = []

        def pool_started() -> bool:
            nonlocal pool
            workers.update(_children(proc.pid))
            pool = [w for w in workers if "LokyProcess" in _cmdline(w)]
            return bool(pool) or proc.poll() is not None
        _wait(pool_started, deadline)
        assert pool, "no loky worker among the children"
        # a worker with 1 CPU second is inside a fold (its start and imports take about a
        # third of that); one that never got a task ends on loky's own idle timeout (300 s),
        # not tested here
        _wait(lambda: proc.poll() is not None or min(map(_cpu_seconds, pool)) >= 1.0, deadline)
        assert proc.poll() is None, "the selection ended before its workers got a fold"
        proc.kill()
        proc.wait(timeout=30)
        _wait(lambda: not any(_alive(w) for w in workers), time.monotonic() + 30)
        # loky's resource tracker is not ours: it ends when the last holder of its pipe does
        left = [w for w in pool if _alive(w)]
        assert not left, "worker processes outlived their killed parent"
    finally:
        _end_all(proc, workers)
