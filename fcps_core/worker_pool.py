"""The worker processes the cross-fitted folds run on: joblib/loky's reusable pool.

:func:`run_tasks` runs tasks in the pool (or in the calling process when there is one job
or one task); every task's seed and data are fixed before it starts, so where a task runs
changes no result. A worker's process is the folds' own, so its allocator keeps freed
memory for reuse (:func:`in_worker`, :func:`fcps_core.process_memory.keep_freed_memory`).

Nothing of this package but the allocator settings is imported here.
"""

from __future__ import annotations

from .process_memory import keep_freed_memory


def pool_workers(jobs: int) -> int:
    """The worker processes :func:`run_tasks` runs tasks on for ``jobs`` (joblib's count:
    -1 is every core)."""
    from joblib import effective_n_jobs
    return max(1, effective_n_jobs(jobs))


def in_worker(func, *args):
    """``func(*args)`` in a worker process of :func:`run_tasks`, whose allocator keeps
    freed memory for reuse (the process is the folds' own)."""
    keep_freed_memory()
    return func(*args)


def run_tasks(jobs: int, func, tasks: list[tuple], then: tuple = (), queue_all: bool = False):
    """``func(*task)`` for every task, in task order, as an iterator. With ``jobs`` != 1
    and several tasks they run in worker processes (joblib/loky) that start now, so the
    caller's own work overlaps them; otherwise each runs in this process when its result is
    asked for. Every task's seed and data are fixed before it starts, so the results equal
    a sequential run. ``then``: further (function, arguments) calls queued behind the tasks
    in the worker processes, their results yielded after the tasks'; without workers they
    are not run (the caller computes them itself when it needs them). ``queue_all``: every task is queued now (joblib's
    ``pre_dispatch="all"``), so tasks started by a later call queue behind all of these,
    not behind the first few."""
    if jobs != 1 and len(tasks) > 1:
        from joblib import Parallel, delayed
        calls = [delayed(in_worker)(func, *t) for t in tasks] + [delayed(in_worker)(f, *args) for f, args in then]
        return Parallel(n_jobs=jobs, return_as="generator", **({"pre_dispatch": "all"} if queue_all else {}))(calls)
    return (func(*t) for t in tasks)
