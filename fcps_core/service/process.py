"""The set-up of a program that owns its process (the command line), before it works.

The library never changes a host's process-wide settings on its behalf (the dashboard, a
user's pipeline); a program whose process is its own may: the command line keeps freed
memory for reuse (:func:`fcps_core.process_memory.keep_freed_memory`), as the selection's
fold workers do.
"""

from __future__ import annotations

from ..process_memory import keep_freed_memory


def prepare_own_process() -> None:
    """Settings for a process that runs one command and exits: glibc keeps freed memory
    for reuse rather than faulting fresh pages in for every large array (a no-op off
    Linux or glibc; results do not depend on it)."""
    keep_freed_memory()
