"""The folds' worker pool (fcps_core/worker_pool.py): with several jobs and tasks the tasks
run in worker processes, in task order, each with its result; with one job, here."""

from __future__ import annotations

import os

from fcps_core.worker_pool import run_tasks


def test_tasks_run_in_worker_processes_in_task_order():
    ran_on = list(run_tasks(2, os.getpid, [(), (), (), ()]))
    assert len(ran_on) == 4 and os.getpid() not in ran_on
    assert list(run_tasks(2, abs, [(-3,), (4,), (-5,)])) == [3, 4, 5]
    assert list(run_tasks(1, os.getpid, [(), ()])) == [os.getpid()] * 2


def test_an_interrupted_selection_leaves_the_next_one_a_working_pool():
    """A dashboard page stopped mid-selection (a second click) raises out of the progress
    callback, and the page keeps the exception, whose traceback holds the interrupted call's
    pool generators. Collected during the next selection they used to shut joblib's shared
    pool down under it ("the executor underlying Parallel has been shutdown", a traceback on
    the page); the interrupted call now closes them as it unwinds."""
    import gc
    from fcps_core import make_blocks
    from fcps_core.selection import FCPSSelector
    from fcps_core.paper.synthetic import make_regime
    panel = make_regime("additive", rows=3000, judges=8, seed=1, group_size=2)
    blocks = make_blocks(panel, seed=0)

    class Stop(Exception):
        pass

    def stopping(frac, msg):
        if frac > 0.3:
            raise Stop
    kept = []
    try:
        FCPSSelector(n_jobs=2, seed=0, progress=stopping).fit(panel, blocks)
    except Stop as exc:
        kept.append(exc)
    assert kept, "the selection was not interrupted"

    def collecting(frac, msg):
        if kept and frac > 0.1:           # the page lets go of the old run while the new one runs
            kept.clear()
            gc.collect()
    result = FCPSSelector(n_jobs=2, seed=0, progress=collecting).fit(panel, blocks)
    assert not kept and result.selected_dict()["family"]


def test_a_single_background_task_runs_in_a_worker_process():
    """``background=True``: one task goes to a worker too (it overlaps the caller's work);
    without it one task runs here when its result is asked for."""
    assert list(run_tasks(2, os.getpid, [()], background=True)) != [os.getpid()]
    assert list(run_tasks(2, os.getpid, [()])) == [os.getpid()]
    assert list(run_tasks(1, os.getpid, [()], background=True)) == [os.getpid()]


def test_a_selection_stopped_on_one_thread_leaves_another_threads_selection_running():
    """Two dashboard sessions (or two threads of a pipeline) select at once in one process;
    one is stopped by its user. Its unwinding shuts joblib's shared pool down, which failed
    the other with "the executor underlying Parallel has been shutdown"; the pool now
    serves one selection at a time (worker_pool.wait_for_pool_turn)."""
    import threading
    import time
    from fcps_core import make_blocks
    from fcps_core.selection import FCPSSelector
    from fcps_core.paper.synthetic import make_regime
    panel = make_regime("additive", rows=6000, judges=8, seed=1, group_size=2)
    blocks = make_blocks(panel, seed=0)

    class Stop(Exception):
        pass
    outcome = {}

    def stopped():
        def stopping(frac, msg):
            if frac > 0.3:
                raise Stop
        try:
            FCPSSelector(n_jobs=2, seed=0, progress=stopping).fit(panel, blocks)
            outcome["stopped"] = "finished"
        except Stop:
            outcome["stopped"] = "stopped"

    def running():
        try:
            outcome["running"] = FCPSSelector(n_jobs=2, seed=0).fit(panel, blocks).selected_dict()["family"]
        except Exception as exc:      # the failure this test is about
            outcome["running"] = exc
    first = threading.Thread(target=running)
    first.start()
    time.sleep(1.0)                   # its folds are in the pool
    second = threading.Thread(target=stopped)
    second.start()
    first.join(300)
    second.join(300)
    assert outcome["stopped"] == "stopped"
    assert isinstance(outcome["running"], str), outcome["running"]


def test_waiting_for_the_pool_reports_until_the_other_call_is_done():
    import threading
    from fcps_core.worker_pool import closes_its_tasks, wait_for_pool_turn
    holding, release = threading.Event(), threading.Event()

    @closes_its_tasks
    def other():
        wait_for_pool_turn()
        holding.set()
        release.wait(10)

    calls = []

    @closes_its_tasks
    def mine():
        def waiting():
            calls.append(1)
            if len(calls) == 3:
                release.set()
        wait_for_pool_turn(waiting, every=0.05)
        wait_for_pool_turn(waiting, every=0.05)     # held now: returns at once
        return len(calls)
    thread = threading.Thread(target=other)
    thread.start()
    assert holding.wait(10)
    assert mine() == 3
    thread.join(10)
    assert mine() == 3                              # free again: no wait, no further report
