"""Field-by-field comparison of two ``select --json`` outputs (not a test).

Every key of both files is walked (``timings`` skipped); numbers must be equal, or within
``--rel`` relative when given. With ``--screened`` the candidates the screen kept at their
first repeat (``repeats`` 1 in the second file) are left out of the candidates' comparison
and the ``split`` block (which records the screen) is skipped: what is compared is the
answer and every candidate fitted in every repeat, as the screen promises
(docs/performance.md, "Seventh round").

    python bench/compare_json.py A.json B.json [--rel 1e-9] [--screened] [--show 20]
"""

from __future__ import annotations

import argparse
import json
import math
import sys


def differences(a, b, path: str, out: list, rel: float) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k == "timings":
                continue
            if k not in a or k not in b:
                out.append(f"{path}.{k}: missing in {'the first' if k not in a else 'the second'}")
            else:
                differences(a[k], b[k], f"{path}.{k}", out, rel)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items against {len(b)}")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            differences(x, y, f"{path}[{i}]", out, rel)
    elif isinstance(a, float) and isinstance(b, float):
        same = a == b or (math.isnan(a) and math.isnan(b)) or (rel > 0 and math.isclose(a, b, rel_tol=rel))
        if not same:
            out.append(f"{path}: {a!r} against {b!r}")
    elif type(a) is not type(b) or a != b:
        out.append(f"{path}: {a!r} against {b!r}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("first")
    ap.add_argument("second")
    ap.add_argument("--rel", type=float, default=0.0)
    ap.add_argument("--screened", action="store_true")
    ap.add_argument("--show", type=int, default=20)
    args = ap.parse_args(argv)
    with open(args.first, encoding="utf-8") as fh:
        a = json.load(fh)
    with open(args.second, encoding="utf-8") as fh:
        b = json.load(fh)
    out: list[str] = []
    if args.screened:
        for k in sorted(set(a) | set(b)):
            if k not in ("candidates", "split", "timings"):
                differences(a.get(k), b.get(k), f".{k}", out, args.rel)
        screened = 0
        for x, y in zip(a.get("candidates", []), b.get("candidates", [])):
            if y.get("repeats") == 1:
                screened += 1
                continue
            x = {k: v for k, v in x.items() if k != "repeats"}
            y = {k: v for k, v in y.items() if k != "repeats"}
            differences(x, y, f".candidates[{x.get('index')}]", out, args.rel)
        if len(a.get("candidates", [])) != len(b.get("candidates", [])):
            out.append(f".candidates: {len(a['candidates'])} items against {len(b['candidates'])}")
        print(f"{screened} screened candidates left out of the comparison")
    else:
        differences(a, b, "", out, args.rel)
    print(f"{len(out)} differences" + (f" beyond {args.rel:g} relative" if args.rel else ""))
    print("\n".join(out[:args.show]))
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
