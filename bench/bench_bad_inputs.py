"""Time and peak memory of every case of the bad-input corpus (not a test).

    .venv/bin/python bench/bench_bad_inputs.py [--filter TEXT] [--json FILE] [--timeout S] [--mem-kill MIB]

Every case of ``tests/test_bad_input_corpus.py`` runs the way a user meets it, in its own
child process: a command line as ``python -m fcps_core ...``, an upload as the dashboard's
upload page under ``streamlit.testing.v1.AppTest``. The case's files are built first, in
the parent, so that only the command is measured. For each case the table gives the
outcome judged exactly as the test judges it (``pass``/``FAIL``), the exit status, the wall
time and the child's peak resident memory (``ru_maxrss`` from ``os.wait4``, its waited-for
descendants included, or the watchdog's largest /proc sample if higher), then the worst
cases against the targets of issue 12: under 1 GiB and under 30 s per case. The load
average is printed before and after (the figures include the interpreter's start-up and
are inflated on a loaded machine).

A child is killed by the watchdog after ``--timeout`` seconds (default 120) or above
``--mem-kill`` MiB (default 4096), so a case that would hang or eat the machine is
recorded as such instead of taking the machine down.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
for _p in (str(TESTS), str(ROOT)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import test_bad_input_corpus as T  # noqa: E402
from bad_inputs import PYTHON, child_env, make_base, prepare, run_process  # noqa: E402

TARGET_MB = 1024
TARGET_S = 30

CHILD_UPLOAD = f"""
import json, sys
sys.path[:0] = [{str(TESTS)!r}, {str(ROOT)!r}]
import test_bad_input_corpus as T
case = next(c for c in T.CASES if c.name == sys.argv[1])
code, out, err = T.run_upload(case, json.loads(sys.argv[2]))
sys.stdout.write("\\n@@RESULT@@" + json.dumps({{"code": code, "out": out, "err": err}}))
"""


def run_case(case, base: Path, base_digest: str, work: Path, args) -> dict:
    tmp = work / "case"
    if tmp.exists():
        shutil.rmtree(tmp)
    env = T.build_case(case, prepare(base, tmp))
    if case.setup:
        case.setup(env)
    before = T.before_run(case, env, base_digest)
    if case.upload:
        argv = [PYTHON, "-c", CHILD_UPLOAD, case.name, json.dumps(env)]
    else:
        argv = [PYTHON, "-m", "fcps_core", *T.argv_for(case, env)]
    res = run_process(argv, cwd=str(tmp), env=child_env(env), timeout=args.timeout,
                      mem_limit_mb=args.mem_kill)
    code, out, err = res["code"], res["stdout"], res["stderr"]
    if case.upload and "@@RESULT@@" in out:
        r = json.loads(out.rsplit("@@RESULT@@", 1)[1])
        code, out, err = r["code"], r["out"], r["err"]
    if res["killed"]:
        code = f"killed:{res['killed']}"
    problems = T.judge(case, env, code, out, err, before)
    shutil.rmtree(tmp, ignore_errors=True)
    return {"name": case.name, "kind": "upload" if case.upload else T.shlex.split(case.cmd)[0],
            "ok": not problems, "problems": problems, "code": code,
            "stderr": T.first_line(err), "seconds": res["seconds"], "peak_mb": res["peak_mb"],
            "killed": res["killed"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--filter", help="only cases whose name contains this text")
    ap.add_argument("--json", help="also write every record as JSON here")
    ap.add_argument("--timeout", type=float, default=120, help="kill a case after this many seconds")
    ap.add_argument("--mem-kill", type=float, default=4096, help="kill a case above this RSS (MiB)")
    ap.add_argument("--worst", type=int, default=10, help="worst cases listed per measure")
    args = ap.parse_args(argv)

    cases = [c for c in T.CASES if not args.filter or args.filter in c.name]
    load0 = os.getloadavg()
    print(f"bad-input corpus benchmark: {len(cases)} of {len(T.CASES)} cases, one child process each; "
          f"{os.cpu_count()} CPUs, load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}", flush=True)
    records = []
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fcps-bad-inputs-") as d:
        work = Path(d)
        base = make_base(work / "base")
        base_digest = T.digest(prepare(base, work / "probe"))
        width = max(len(c.name) for c in cases)
        print(f"{'case':<{width}}  outcome  exit        seconds  peak MiB")
        for case in cases:
            if case.root_skip and os.geteuid() == 0:
                print(f"{case.name:<{width}}  skipped (root)")
                continue
            rec = run_case(case, base, base_digest, work, args)
            records.append(rec)
            flag = "" if rec["seconds"] < TARGET_S and rec["peak_mb"] < TARGET_MB else "  <-- over target"
            print(f"{rec['name']:<{width}}  {'pass' if rec['ok'] else 'FAIL':<7}  {str(rec['code']):<10}  "
                  f"{rec['seconds']:7.2f}  {rec['peak_mb']:8.0f}{flag}", flush=True)
    total = time.perf_counter() - t_all
    load1 = os.getloadavg()

    print()
    print(f"{len(records)} cases in {total:.0f} s: {sum(r['ok'] for r in records)} pass, "
          f"{sum(not r['ok'] for r in records)} fail; load average now {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    for key, unit, target in (("peak_mb", "MiB", TARGET_MB), ("seconds", "s", TARGET_S)):
        worst = sorted(records, key=lambda r: -r[key])[: args.worst]
        over = [r for r in records if r[key] >= target]
        print(f"\nworst by {'peak memory' if key == 'peak_mb' else 'wall time'} "
              f"(target under {target} {unit}; {len(over)} case(s) at or over it):")
        for r in worst:
            killed = f"  [killed: {r['killed']}]" if r["killed"] else ""
            print(f"  {r[key]:8.1f} {unit:<3}  {r['name']}{killed}")
    fails = [r for r in records if not r["ok"]]
    if fails:
        print(f"\nfailing cases ({len(fails)}):")
        for r in fails:
            print(f"  {r['name']}: {'; '.join(r['problems'])}\n      exit {r['code']}: {r['stderr'][:200]}")
    if args.json:
        Path(args.json).write_text(json.dumps({"load_before": load0, "load_after": load1, "seconds": total,
                                               "targets": {"peak_mb": TARGET_MB, "seconds": TARGET_S},
                                               "cases": records}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
