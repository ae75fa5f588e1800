"""The set-up of a program that owns its process (the command line), before it works.

The library never changes a host's process-wide settings on its behalf (the dashboard, a
user's pipeline); a program whose process is its own may: the command line keeps freed
memory for reuse (:func:`fcps_core.process_memory.keep_freed_memory`), as the selection's
fold workers do, and ends on a termination signal the way it ends on Ctrl-C
(:func:`stopping_on_termination`).
"""

from __future__ import annotations

import contextlib
import signal

from ..process_memory import keep_freed_memory

#: the signals that end a command as Ctrl-C does: a service manager's or ``timeout``'s stop
#: (SIGTERM) and a closed terminal (SIGHUP)
TERMINATION_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Terminated(BaseException):
    """A termination signal arrived (:func:`stopping_on_termination`). A BaseException, as
    KeyboardInterrupt is, so no ``except Exception`` on the way up swallows it; ``signum``
    is the signal's number (the command exits with 128 + it, the shell's convention)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def prepare_own_process() -> None:
    """Settings for a process that runs one command and exits: glibc keeps freed memory
    for reuse rather than faulting fresh pages in for every large array (a no-op off
    Linux or glibc; results do not depend on it)."""
    keep_freed_memory()


@contextlib.contextmanager
def stopping_on_termination():
    """While the block runs, SIGTERM and SIGHUP raise :class:`Terminated` in the main thread
    instead of ending the process on the spot.

    Their default action ends the process without unwinding: the folds' worker processes
    (joblib/loky) then live on as orphans, computing and holding their memory, and a
    command's temporary files stay. Raised as an exception, the signal unwinds the command
    as Ctrl-C does: the pool's generators close and shut the workers down
    (:func:`fcps_core.worker_pool.closes_its_tasks`), store writes roll back, temporary
    copies are removed. A signal the process ignores (``nohup`` ignores SIGHUP) stays
    ignored. A second signal while the first unwinds ends the process at once (the default
    action is back). The previous handlers are restored when the block ends. Only in the
    main thread (Python delivers signals there); elsewhere the block changes nothing."""
    import threading
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}

    def terminate(signum, frame):
        for sig in previous:
            signal.signal(sig, signal.SIG_DFL)
        raise Terminated(signum)
    for sig in TERMINATION_SIGNALS:
        if signal.getsignal(sig) == signal.SIG_DFL:
            previous[sig] = signal.signal(sig, terminate)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
