"""From process start to the cross-fitted folds' workers being ready, with the workers
started before the panel file is read (``select``'s way for a file of at least
``WORKERS_AHEAD_BYTES``) or after it (the folds' first call starting them).

Not a test. Each run is its own process (a started pool would serve the next run);
alternate the two and note the load:

    for i in 1 2 3; do for w in 0 1; do
      PYTHONPATH=. .venv/bin/python bench/bench_worker_start.py $w PANEL.csv; done; done

Prints the seconds from start to the end of the read and to both workers having run one
trivial task (what a fold's first task waits for: a worker's interpreter, numpy and the
selection package imported).
"""

from __future__ import annotations

import sys
import time

T0 = time.perf_counter()


def main() -> None:
    ahead, path = sys.argv[1] == "1", sys.argv[2]
    from fcps_core.service.select import start_fold_workers
    from fcps_core.service.upload import read_panel_file
    if ahead:
        start_fold_workers(path, "crossfit")
    read_panel_file(path)
    read, read_cpu = time.perf_counter() - T0, time.process_time()
    from fcps_core.service.select import FOLD_MODULES
    from fcps_core.worker_pool import _import_modules, pool_workers, run_tasks
    # what a fold waits for: its worker, started by the first call if not before it
    list(run_tasks(-1, _import_modules, [(FOLD_MODULES,) for _ in range(pool_workers(-1))]))
    ready = time.perf_counter() - T0
    load = open("/proc/loadavg").read().split()[0] if sys.platform.startswith("linux") else "?"
    print(f"started {'before' if ahead else 'after'} the read: read done {read:.2f} s "
          f"({read_cpu:.2f} CPU s in this process), workers ready {ready:.2f} s (load {load})")


if __name__ == "__main__":
    main()
