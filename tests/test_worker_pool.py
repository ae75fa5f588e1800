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
