"""The child process the benchmarks time ``select`` in (not a test).

:data:`CHILD` is a script for ``python -c CHILD select PANEL ...``: it imports the engine
first (fcps_core loads its modules on first use; a tree without one of them skips it, so
the script also times older trees), runs the command line's ``main`` with its stdout
captured, shuts the fold workers down and reaps them (so ``RUSAGE_CHILDREN`` holds their CPU
seconds, start-up included, and the largest worker's peak RSS), writes the captured stdout to
``$BENCH_OUT`` when that is set, and reports on stderr one line ``BENCH {json}``:
``seconds`` (the select call), ``code`` (its exit status), ``select_seconds`` (the
selection's own, from the JSON), ``main_cpu`` / ``main_mib`` (this process: CPU seconds of
the call, peak RSS from ``VmHWM``: ``ru_maxrss`` survives ``exec`` and would carry the peak
of the process the child was started from), ``worker_cpu`` / ``worker_mib``, ``cpu`` (both)
and ``mib`` (the larger peak), ``selected`` ([family, K]). :func:`bench_report` reads it.
"""

from __future__ import annotations

import json

CHILD = r"""
import contextlib, importlib, io, json, os, resource, sys, time
from fcps_core.cli.main import main
for name in ("fcps_core.selection", "fcps_core.families.registry", "fcps_core.ingest", "fcps_core.store",
             "fcps_core.selection.judges_report", "fcps_core.reports.explain", "fcps_core.planning",
             "fcps_core.deploy", "sklearn.base", "scipy.optimize", "scipy.sparse", "scipy.linalg", "pandas",
             "duckdb", "joblib"):
    try:
        importlib.import_module(name)
    except ImportError:
        pass
out = io.StringIO()
r0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
with contextlib.redirect_stdout(out):
    code = main(sys.argv[1:])
seconds = time.perf_counter() - t0
r1 = resource.getrusage(resource.RUSAGE_SELF)
try:
    from joblib.externals.loky import reusable_executor
    if reusable_executor._executor is not None:
        reusable_executor._executor.shutdown(wait=True)
except Exception:
    pass
rc = resource.getrusage(resource.RUSAGE_CHILDREN)
own = r1.ru_maxrss
try:
    with open("/proc/self/status") as fh:
        own = next(int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM:"))
except (OSError, StopIteration, ValueError):
    pass
if os.environ.get("BENCH_OUT"):
    with open(os.environ["BENCH_OUT"], "w") as fh:
        fh.write(out.getvalue())
try:
    doc = json.loads(out.getvalue())
except ValueError:
    doc = {}
selected = doc.get("selected") or {}
main_cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
worker_cpu = rc.ru_utime + rc.ru_stime
sys.stderr.write("\nBENCH " + json.dumps({
    "seconds": seconds, "code": code, "select_seconds": (doc.get("timings") or {}).get("select_seconds"),
    "main_cpu": main_cpu, "main_mib": own / 1024, "worker_cpu": worker_cpu, "worker_mib": rc.ru_maxrss / 1024,
    "cpu": main_cpu + worker_cpu, "mib": max(own, rc.ru_maxrss) / 1024,
    "selected": [selected.get("family"), selected.get("K")]}) + "\n")
"""


def bench_report(stderr: str) -> dict | None:
    """The child's ``BENCH`` report from its stderr (None when it wrote none)."""
    lines = [ln for ln in stderr.splitlines() if ln.startswith("BENCH ")]
    return json.loads(lines[-1][6:]) if lines else None
