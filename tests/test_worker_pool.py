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
