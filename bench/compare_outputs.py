"""Compare the command line's results before and after a change (not a test).

Runs ``python -m fcps_core select ... --json`` and ``sweep ... --json`` on the shipped panels
with the code of a base revision (checked out into a temporary git worktree) and with the
working tree, under the paper's protocol, and reports every difference in the selected
candidate, every candidate's validation/test figures and diagnostics, and the sweep cells.
The base revision predates ``--protocol``/``--choice``: it always ran the split protocol
with the validation argmin, which the current tree is asked for explicitly.

    PYTHONPATH=. .venv/bin/python bench/compare_outputs.py [--base 1170178]

Numbers must agree to 1e-9 (relative above 1), except the families in ``FAMILY_TOL``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = [
    ("select", ["data/llmbar.csv", "--split", "1:2:1:1", "--seed", "0"]),
    ("select", ["data/hanna.csv", "--split", "1:2:1:1", "--seed", "3", "--k-max", "12"]),
    ("select", ["data/llmbar.csv", "--families", "table", "backoff", "residual", "--k-max", "5", "--seed", "2"]),
    ("sweep", ["data/llmbar.csv", "--budgets", "50,100,200", "--splits", "3", "--n-select", "100",
               "--n-val", "100", "--n-test", "200", "--k-max", "5"]),
]
NEW_FLAGS = {"select": ["--protocol", "split", "--choice", "argmin"], "sweep": []}
SKIP = {"timings", "select_seconds", "seconds"}
#: intended changes: the regime verdict now states "undetermined" when the interaction gain's
#: interval straddles its threshold, and its SE is clustered by group (honest-selection issue)
INTENDED = (".regime.quadrant", ".regime.description", ".regime.advice", ".regime.interaction_gain_se")


def run(tree: Path, command: str, args: list[str], extra: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree), "FCPS_STORE": str(Path(tempfile.mkdtemp()) / "s.duckdb")}
    out = subprocess.run([sys.executable, "-m", "fcps_core", command, *args, *extra, "--json", "--quiet"],
                         cwd=tree, env=env, capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise SystemExit(f"{tree}: {command} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


#: per-family bounds of the large-pools issue: logistic families to 1e-7 (Newton from a warm
#: start), ds_jury within 1e-3 (its warm-started EM may reach another fixed point)
FAMILY_TOL = {"logistic": 1e-7, "logistic_pairwise": 1e-7, "ds_jury": 1e-3}


def diff(a, b, path="", out=None, tol=1e-9):
    out = [] if out is None else out
    if isinstance(a, dict) and isinstance(b, dict):
        tol = max(tol, FAMILY_TOL.get(a.get("family"), tol))
        for k in a:
            if k in SKIP:
                continue
            if k not in b:
                out.append(f"{path}.{k}: missing now")
            else:
                diff(a[k], b[k], f"{path}.{k}", out, tol)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items before, {len(b)} now")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out, tol)
    elif isinstance(a, float) and isinstance(b, float):
        # relative for magnitudes above 1 (curve parameters in the hundreds), absolute below
        if not (math.isclose(a, b, rel_tol=tol, abs_tol=tol) or (math.isnan(a) and math.isnan(b))):
            out.append(f"{path}: {a!r} before, {b!r} now")
    elif a != b:
        out.append(f"{path}: {a!r} before, {b!r} now")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="1170178", help="revision to compare against")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp()) / "base"
    subprocess.run(["git", "worktree", "add", "--detach", str(base), args.base], cwd=ROOT, check=True,
                   capture_output=True)
    bad = 0
    try:
        # A base that already has --protocol is asked for the paper's protocol too.
        has_protocol = "--protocol" in subprocess.run(
            [sys.executable, "-m", "fcps_core", "select", "--help"], cwd=base, capture_output=True, text=True,
            env={**os.environ, "PYTHONPATH": str(base)}).stdout
        for command, cargs in RUNS:
            old = run(base, command, cargs, NEW_FLAGS[command] if has_protocol else [])
            new = run(ROOT, command, cargs, NEW_FLAGS[command])
            every = diff(old, new)
            found = [d for d in every if not d.startswith(INTENDED)]
            intended = [d for d in every if d.startswith(INTENDED)]
            # The new contract only adds keys; report those separately.
            added = sorted(set(new) - set(old))
            print(f"{command} {' '.join(cargs)}: {'identical' if not found else f'{len(found)} differences'}"
                  + (f" (new keys: {', '.join(added)})" if added else ""))
            for line in found[:20]:
                print("   ", line)
            for line in intended:
                print("    intended:", line[:160])
            bad += bool(found)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, capture_output=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
