"""The worker processes the cross-fitted folds run on: joblib/loky's reusable pool.

:func:`run_tasks` runs tasks in the pool (or in the calling process when there is one job
or one task); every task's seed and data are fixed before it starts, so where a task runs
changes no result. A worker's process is the folds' own, so its allocator keeps freed
memory for reuse (:func:`in_worker`, :func:`fcps_core.process_memory.keep_freed_memory`).

A program that knows it is about to select on a large panel starts the pool early
(:func:`start_workers`, on a thread), so that the workers' start-up (a new interpreter
importing numpy, SciPy and the selection package) overlaps its own work, reading the panel
file, instead of following it; if it fails before the folds it stops them at once
(:func:`stop_workers`), so its exit does not wait for workers still starting.

Nothing of this package is imported at module level: the command line starts the pool
before anything heavy is loaded.
"""

from __future__ import annotations

from .process_memory import keep_freed_memory

#: the thread starting the worker processes ahead of the folds (:func:`start_workers`)
_starting: list = []


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
    and several tasks they run in worker processes (joblib/loky) that start now (or were
    started by :func:`start_workers`), so the caller's own work overlaps them; otherwise
    each runs in this process when its result is asked for. Every task's seed and data are
    fixed before it starts, so the results equal a sequential run. ``then``: further
    (function, arguments) calls queued behind the tasks in the worker processes, their
    results yielded after the tasks'; without workers they are not run (the caller computes
    them itself when it needs them). ``queue_all``: every task is queued now (joblib's
    ``pre_dispatch="all"``), so tasks started by a later call queue behind all of these,
    not behind the first few."""
    if jobs != 1 and len(tasks) > 1:
        from joblib import Parallel, delayed
        _wait_for_start()
        calls = [delayed(in_worker)(func, *t) for t in tasks] + [delayed(in_worker)(f, *args) for f, args in then]
        return Parallel(n_jobs=jobs, return_as="generator", **({"pre_dispatch": "all"} if queue_all else {}))(calls)
    return (func(*t) for t in tasks)


def _import_modules(modules: tuple[str, ...]) -> bool:
    """Run in each worker process by :func:`start_workers`: import ``modules``, the imports
    its first task would otherwise begin with."""
    import importlib
    for name in modules:
        importlib.import_module(name)
    return True


def start_workers(jobs: int = -1, modules: tuple[str, ...] = ()) -> bool:
    """Start the pool's worker processes on a thread and return at once; each worker
    imports ``modules`` (what the caller's tasks will need: the pool knows no task of its
    own). :func:`run_tasks` waits for the thread before its first tasks
    and finds the pool running (the same settings, so joblib reuses it). Nothing starts
    with fewer than two workers or when a start is under way; no result depends on it.
    Returns whether it started them."""
    if _starting or pool_workers(jobs) < 2:
        return False
    import threading

    def start() -> None:
        from joblib import Parallel, delayed
        try:
            Parallel(n_jobs=jobs)(delayed(in_worker)(_import_modules, modules) for _ in range(pool_workers(jobs)))
        except Exception:       # stopped by stop_workers, or a worker died: run_tasks starts its own
            pass
    thread = threading.Thread(target=start, name="fcps-start-workers", daemon=True)
    thread.start()
    _starting.append(thread)
    return True


def _wait_for_start() -> None:
    """Wait for :func:`start_workers`' thread, if one runs (its pool is then the tasks')."""
    while _starting:
        _starting.pop().join()


def stop_workers() -> bool:
    """Stop the pool's worker processes now, those still starting included (killed: the
    caller has no task in them), so that its exit does not wait for their start-up.
    joblib keeps its reusable pool in loky's module state and offers no public call to stop
    it; where that state is not found (another joblib), nothing is stopped and the exit
    waits for the start-up as it would have. Returns whether a pool was stopped."""
    try:
        from joblib.externals.loky import reusable_executor
    except ImportError:
        return False
    executor = getattr(reusable_executor, "_executor", None)
    if executor is None:
        return False
    executor.shutdown(wait=False, kill_workers=True)
    _starting.clear()
    return True
