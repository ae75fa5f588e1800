"""The frontier's level decisions and the drop-one replays, timed inside one ``select`` run
(not a test).

Runs ``python -m fcps_core select FILE --seed 0 --quiet --json [ARGS]`` in this process and
prints the CPU seconds (this process) of :class:`fcps_core.selection.frontier.FrontierChoices`
(every limit's decision on the held-out matrix), of the member lookup's ids inside it
(:meth:`fcps_core.selection.members.MemberLookup.ids`, the first call reads every stored
column) and of :func:`fcps_core.selection.drop_one.drop_one_choices`; then the decisions again
on the same held-out matrix with the lookup filled (what the levels themselves cost). A
serial part of the selection's tail: the figures count where a run waits for it.

    PYTHONPATH=. .venv/bin/python bench/bench_tail_parts.py /tmp/p26/c25.csv [--max-judges 3]
"""

from __future__ import annotations

import contextlib
import io
import os
import runpy
import sys
import time


def main(argv: list[str]) -> int:
    from fcps_core.selection import crossfit, drop_one, frontier, members
    spent: dict[str, list[float]] = {"levels": [], "ids": [], "drop_one": []}
    caught = {}
    plain = frontier.FrontierChoices

    class Timed(plain):
        def __init__(self, result, heldout):
            c = time.process_time()
            super().__init__(result, heldout)
            spent["levels"].append(time.process_time() - c)
            caught["args"] = (result, heldout)

    def timed(module, name, key):
        orig = getattr(module, name)

        def wrapper(*args, **kwargs):
            c = time.process_time()
            try:
                return orig(*args, **kwargs)
            finally:
                spent[key].append(time.process_time() - c)
        return orig, wrapper
    ids, ids_timed = timed(members.MemberLookup, "ids", "ids")
    drop, drop_timed = timed(drop_one, "drop_one_choices", "drop_one")
    with contextlib.ExitStack() as stack:
        crossfit.frontier.FrontierChoices = Timed
        stack.callback(setattr, crossfit.frontier, "FrontierChoices", plain)
        members.MemberLookup.ids = ids_timed
        stack.callback(setattr, members.MemberLookup, "ids", ids)
        drop_one.drop_one_choices = drop_timed        # judges_report imports it at call time
        stack.callback(setattr, drop_one, "drop_one_choices", drop)
        sys.argv = ["fcps_core", "select"] + argv + ["--seed", "0", "--quiet", "--json"]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            runpy.run_module("fcps_core", run_name="__main__")
    if "args" not in caught:
        print("no frontier levels decided (no bias-corrected estimate to correct)")
        return 1
    again = []
    for _ in range(5):
        c = time.process_time()
        plain(*caught["args"])
        again.append(time.process_time() - c)
    again.sort()
    print(f"{' '.join(argv)}: FrontierChoices {spent['levels'][0]:.3f} CPU s (member ids, first call "
          f"{spent['ids'][0]:.3f}); again with the lookup filled, median of 5: {again[2]:.3f}; "
          f"drop_one {sum(spent['drop_one']):.3f} (load {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    sys.exit(main(sys.argv[1:]))
