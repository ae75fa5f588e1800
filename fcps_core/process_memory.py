"""The process's memory: glibc allocator settings for processes that run fits, and handing
freed memory back to the system.

Both act on the whole process, so the library applies them only where the process is its
own: :func:`keep_freed_memory` in the worker processes that fit the cross-fitted folds
(they run nothing else) and, through the service layer, in the command line's process; never
in a host that imports the library (the dashboard, a user's pipeline).
:func:`release_freed_memory` runs at points of a selection where what was freed will not be
needed again (after a fold fitted in the selecting process, once every fold's result is
read). Off Linux or off glibc both do nothing.

No module of this package is imported here: the command line calls it before anything heavy
is loaded.
"""

from __future__ import annotations

import sys

#: glibc's ``mallopt`` parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: blocks up to this size come from the heap: glibc's largest allowed value on 64-bit
#: systems (``DEFAULT_MMAP_THRESHOLD_MAX``), the ceiling its dynamic threshold climbs to
MMAP_THRESHOLD_BYTES = 32 * 2 ** 20
#: free memory at the heap's top kept for reuse rather than returned at once
TRIM_THRESHOLD_BYTES = 256 * 2 ** 20

_KEPT: list[bool] = []      # whether keep_freed_memory ran in this process


def _glibc():
    """glibc, or None (another platform or C library)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt, libc.malloc_trim     # noqa: B018 (both present: glibc)
    except (OSError, AttributeError):
        return None
    return libc


def keep_freed_memory() -> bool:
    """Have glibc's allocator keep freed memory for reuse: blocks up to
    :data:`MMAP_THRESHOLD_BYTES` come from the heap, and up to :data:`TRIM_THRESHOLD_BYTES`
    of free heap top stay mapped (``mallopt`` ``M_MMAP_THRESHOLD``, ``M_TRIM_THRESHOLD``).

    Why: a fit allocates and frees many arrays of a few to tens of megabytes (feature
    matrices, linear scores, held-out predictions). By default glibc gives a large block
    its own mapping and unmaps it when freed (its threshold rises only with the largest
    block freed so far, and the heap's free top is returned past 128 KiB), so the next array
    of that size faults in fresh zeroed pages: system time spent on every allocation. With
    the settings the pages are reused. The price is up to the trim threshold of freed memory
    held by the process; :func:`release_freed_memory` still returns it where a selection
    knows it is done with it. Results do not depend on it. Runs once per process; returns
    whether the settings are in force."""
    if _KEPT:
        return _KEPT[0]
    libc = _glibc()
    done = bool(libc is not None and libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
                and libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))
    _KEPT.append(done)
    return done


def keeps_freed_memory() -> bool:
    """Whether :func:`keep_freed_memory`'s settings are in force in this process."""
    return bool(_KEPT and _KEPT[0])


def release_freed_memory() -> bool:
    """Hand the memory this process has freed back to the operating system (glibc's
    ``malloc_trim``): after a fold fitted in the selecting process, and once every fold's
    result is read. A fit frees what it allocated, but the allocator keeps the freed heap
    (its threshold for giving large arrays their own pages rises with the largest array
    freed, or is fixed high by :func:`keep_freed_memory`), and the arrays the choice and the
    bootstrap allocate next land beside it rather than in it, so without this the peak
    memory of the selection grows by about a fold's working set. Returns whether it ran."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
