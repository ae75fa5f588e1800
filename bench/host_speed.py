"""How fast this host runs right now: a fixed single-core workload timed in a fresh process
(not a test).

The shared 2-core host changes speed by up to 1.6x over an hour without any change in the
load average or the CPU steal counter (the same ``select`` of one panel and one tree took
16 s at one time and 26 s at another, the old reference trees alike). So a benchmark's
absolute seconds say little unless the host's own speed at the time is printed beside them.
The workload is the kind of work a selection does on one core: NumPy sorts, elementwise
transcendentals and thin matrix-vector products over 20,000-row arrays, and a pure-Python
loop; it takes about 0.7 s on this host when it runs fast. The fastest of ``repeats`` runs
is kept (a run the scheduler interrupted is slower, never faster).

    PYTHONPATH=. .venv/bin/python bench/host_speed.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys

#: run in a fresh process, so that no import or cached allocation of the caller counts
WORKLOAD = r"""
import os, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np
rng = np.random.default_rng(0)
x = rng.normal(size=20_000)
X = np.asfortranarray(rng.normal(size=(20_000, 32)))
b = rng.normal(size=32)
t = time.perf_counter()
s = 0.0
for _ in range(500):
    s += float(np.sort(x)[100])
    z = X @ b
    s += float(np.tanh(z).sum() + np.log1p(np.exp(-np.abs(z))).sum())
    s += float((X.T @ z)[0])
total = 0
for i in range(5_000_000):
    total += i & 7
print(time.perf_counter() - t)
"""


def host_seconds(repeats: int = 3) -> float:
    """The fastest of ``repeats`` timings of :data:`WORKLOAD` (seconds), each in a fresh
    process on one BLAS thread; NaN when no run finished."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    times = []
    for _ in range(max(1, repeats)):
        out = subprocess.run([sys.executable, "-c", WORKLOAD], capture_output=True, text=True, env=env)
        if out.returncode == 0 and out.stdout.strip():
            times.append(float(out.stdout.strip().splitlines()[-1]))
    return min(times) if times else math.nan       # a benchmark's own figures are not lost to it


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"host reference workload: {host_seconds(args.repeat):.3f} s (fastest of {args.repeat}; "
          f"load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
