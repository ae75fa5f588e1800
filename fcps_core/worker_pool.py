"""The worker processes the cross-fitted folds run on: joblib/loky's reusable pool.

:func:`run_tasks` runs tasks in the pool (or in the calling process when there is one job
or one task); every task's seed and data are fixed before it starts, so where a task runs
changes no result. A worker's process is the folds' own, so its allocator keeps freed
memory for reuse (:func:`in_worker`, :func:`fcps_core.process_memory.keep_freed_memory`),
and it ends when the process that started it is gone (:func:`exit_with_parent`).

Nothing of this package but the allocator settings is imported here.
"""

from __future__ import annotations

import functools
import os
import threading
import time
import warnings

from .process_memory import keep_freed_memory

#: per thread, the open :func:`closes_its_tasks` calls (innermost last), each a :class:`_Scope`
_OPEN = threading.local()
#: joblib's pool is one per process: one :func:`closes_its_tasks` call's tasks in it at a time
#: (:func:`wait_for_pool_turn`); reentrant, so a call nested in one on the same thread shares it
_POOL_TURN = threading.RLock()


class _Scope:
    """One open :func:`closes_its_tasks` call: the pool generators it started, and whether
    it holds the pool's turn."""

    __slots__ = ("generators", "has_turn")

    def __init__(self):
        self.generators: list = []
        self.has_turn = False


def pool_workers(jobs: int) -> int:
    """The worker processes :func:`run_tasks` runs tasks on for ``jobs`` (joblib's count:
    -1 is every core)."""
    from joblib import effective_n_jobs
    return max(1, effective_n_jobs(jobs))


#: seconds between a worker's looks at its parent (:func:`exit_with_parent`)
PARENT_CHECK_SECONDS = 1.0
_watching_parent = False


def exit_with_parent() -> None:
    """In a worker process: a daemon thread that ends the process once its parent is gone
    (the parent process id changes when the parent dies: the orphan is re-parented).

    A selection killed outright (SIGKILL, the out-of-memory killer) cannot shut its pool
    down, and loky's workers do not notice: one that finished its fold blocks for good
    writing its result to a pipe nobody reads, holding the fold's memory (seen alive 10
    minutes after its parent). Started with a worker's first task, once per process; a look
    costs one system call. (A worker that never got a task ends on loky's idle timeout,
    300 s. Where a parent's death re-parents no process, as on Windows, it never fires.)"""
    global _watching_parent
    if _watching_parent:
        return
    _watching_parent = True
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(1)
    threading.Thread(target=watch, name="fcps-parent-watch", daemon=True).start()


def in_worker(func, *args):
    """``func(*args)`` in a worker process of :func:`run_tasks`, whose allocator keeps
    freed memory for reuse (the process is the folds' own) and which ends with its parent
    (:func:`exit_with_parent`)."""
    keep_freed_memory()
    exit_with_parent()
    return func(*args)


def run_tasks(jobs: int, func, tasks: list[tuple], then: tuple = (), queue_all: bool = False,
              background: bool = False):
    """``func(*task)`` for every task, in task order, as an iterator. With ``jobs`` != 1
    and several tasks they run in worker processes (joblib/loky) that start now, so the
    caller's own work overlaps them; otherwise each runs in this process when its result is
    asked for. Every task's seed and data are fixed before it starts, so the results equal
    a sequential run. ``then``: further (function, arguments) calls queued behind the tasks
    in the worker processes, their results yielded after the tasks'; without workers they
    are not run (the caller computes them itself when it needs them). ``queue_all``: every
    task is queued now (joblib's ``pre_dispatch="all"``), so tasks started by a later call
    queue behind all of these, not behind the first few. Inside :func:`closes_its_tasks`
    the pool's generator is registered to be closed when that call ends. ``background``:
    a single task also runs in a worker process (with ``jobs`` != 1), so it overlaps the
    caller's own work rather than waiting for the caller to ask for it."""
    if jobs != 1 and (len(tasks) > 1 or (background and tasks)):
        from joblib import Parallel, delayed
        wait_for_pool_turn()
        calls = [delayed(in_worker)(func, *t) for t in tasks] + [delayed(in_worker)(f, *args) for f, args in then]
        results = Parallel(n_jobs=jobs, return_as="generator",
                           **({"pre_dispatch": "all"} if queue_all else {}))(calls)
        scopes = getattr(_OPEN, "scopes", None)
        if scopes:
            scopes[-1].generators.append(results)
        return results
    return (func(*t) for t in tasks)


def wait_for_pool_turn(waiting=None, every: float = 0.5) -> None:
    """Inside a :func:`closes_its_tasks` call: take the process's pool for that call, until
    it ends (:func:`run_tasks` takes it before its first task goes to the pool; a caller
    that can report takes it first, with ``waiting``). While a call on another thread has
    it, ``waiting()`` is called every ``every`` seconds (a progress line; it may raise, as a
    dashboard page stopped by its user does, to give up the wait). Nothing outside such a
    call, or when this call (or one it is nested in) has the turn.

    Why one call at a time: an interrupted call shuts the shared pool down as it unwinds
    (:func:`closes_its_tasks`), which failed every other selection running in it at that
    moment ("the executor underlying Parallel has been shutdown": two dashboard sessions,
    or two threads of a pipeline). Two selections at once would share the same cores
    anyway, so the second loses little by starting its folds when the first is done."""
    scopes = getattr(_OPEN, "scopes", None)
    if not scopes or scopes[-1].has_turn:
        return
    while not _POOL_TURN.acquire(timeout=every):
        if waiting is not None:
            waiting()
    scopes[-1].has_turn = True


def closes_its_tasks(fn):
    """Decorator: every pool generator :func:`run_tasks` starts during ``fn`` (on its thread)
    is closed when ``fn`` returns or raises, there and then, and the pool's turn it took
    (:func:`wait_for_pool_turn`) is then given back.

    joblib's pool is shared by the process, and closing a generator it has not finished
    shuts that pool down (joblib aborts the generator's pending tasks). Left to the garbage
    collector, an interrupted selection's generators live on in its exception's traceback
    (a dashboard page stopped by a second click keeps it) and are collected during the next
    selection, whose own generator then fails with "the executor underlying Parallel has
    been shutdown". Closed when the interrupted call unwinds, they shut the pool down
    before the next selection starts one of its own."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        scopes = getattr(_OPEN, "scopes", None)
        if scopes is None:
            scopes = _OPEN.scopes = []
        scope = _Scope()
        scopes.append(scope)
        try:
            return fn(*args, **kwargs)
        finally:
            scopes.pop()
            try:
                with warnings.catch_warnings():
                    # joblib warns that the tasks a closed generator leaves are cancelled:
                    # here that is the point
                    warnings.simplefilter("ignore", UserWarning)
                    for results in reversed(scope.generators):
                        results.close()
            finally:
                if scope.has_turn:      # after the close: the pool is down before another call starts
                    _POOL_TURN.release()
    return wrapper
