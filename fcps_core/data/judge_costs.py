"""Per-judge cost and latency: reading them, a candidate's cost, the risk-cost Pareto front.

A costs file is a small CSV with a header ``judge,cost[,latency]`` (any order, extra columns
refused): one row per judge, non-negative finite numbers in any unit (dollars per 1,000
items, tokens, ...). A candidate's cost is the sum over its judges (every judge is called
on every item); its latency is the largest of its judges' (judges run in parallel). An
average of tied candidates calls the union of its members' judges.
"""

from __future__ import annotations

import csv
import io
import math
import os
from typing import Mapping

import numpy as np

from ..wording import count_of, noun_for
from ..errors import FCPSError

#: a costs file is read only below this size and row count (one row per judge)
MAX_COST_BYTES = 1 * 2**20
MAX_COST_ROWS = 10_000


class CostError(FCPSError):
    """A costs file or table that cannot be used (one line naming where and the fix)."""


def parse_judge_costs(text: str, *, source: str = "costs") -> dict[str, dict]:
    """``{judge: {"cost": c, "latency": l}}`` from the CSV text of a costs file."""
    reader = csv.reader(io.StringIO(text))
    try:
        header = [h.strip().lower() for h in next(reader)]
    except StopIteration:
        raise CostError(f"{source}: the file is empty; write a header judge,cost,latency and one row per judge") from None
    if "judge" not in header or "cost" not in header:
        raise CostError(f"{source}: line 1: the header must name the columns judge and cost "
                        f"(and optionally latency); found {', '.join(header) or 'nothing'}")
    extra = [h for h in header if h not in ("judge", "cost", "latency")]
    if extra:
        raise CostError(f"{source}: line 1: unknown column {extra[0]!r}; use judge, cost, latency")
    out: dict[str, dict] = {}
    for line, row in enumerate(reader, start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if line > MAX_COST_ROWS + 1:
            raise CostError(f"{source}: more than {MAX_COST_ROWS:,} judges; a costs file has one row per judge")
        if len(row) != len(header):
            raise CostError(f"{source}: line {line}: {len(row)} fields where the header has {len(header)}")
        cells = dict(zip(header, (c.strip() for c in row)))
        judge = cells["judge"]
        if not judge:
            raise CostError(f"{source}: line {line}: empty judge name")
        if judge in out:
            raise CostError(f"{source}: line {line}: judge {judge!r} appears twice; give each judge one row")
        values = {}
        for col in ("cost", "latency"):
            raw = cells.get(col, "")
            if col == "latency" and raw == "":
                values[col] = 0.0
                continue
            try:
                v = float(raw)
            except ValueError:
                raise CostError(f"{source}: line {line}, column {col}: {raw!r} is not a number") from None
            if not math.isfinite(v) or v < 0:
                raise CostError(f"{source}: line {line}, column {col}: {raw!r} must be a finite number >= 0")
            values[col] = v
        out[judge] = values
    if not out:
        raise CostError(f"{source}: no judge rows under the header")
    return out


def read_judge_costs(path: str) -> dict[str, dict]:
    """Read a costs file (bounded: :data:`MAX_COST_BYTES`; a regular file only)."""
    import stat
    try:
        info = os.stat(path)
    except OSError as exc:
        raise CostError(f"cannot read costs file {path!r}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise CostError(f"costs file {path!r} is not a regular file")
    if info.st_size > MAX_COST_BYTES:
        raise CostError(f"costs file {path!r} is {info.st_size:,} bytes; a costs file (one row per judge) "
                        f"is read only below {MAX_COST_BYTES:,}")
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        raise CostError(f"costs file {path!r} is not UTF-8 text; save it as UTF-8 CSV") from None
    return parse_judge_costs(text, source=path)


def check_costs_cover(costs: Mapping[str, Mapping], judges: list[str], *, source: str = "costs") -> None:
    """Every judge of the panel needs a cost; costs for judges the panel lacks are refused."""
    missing = [j for j in judges if j not in costs]
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise CostError(f"{source}: no cost for {noun_for(len(missing), 'judge')} {', '.join(repr(j) for j in missing[:3])}{more}; "
                        "give every judge a row (0 for a free judge)")
    unknown = [j for j in costs if j not in set(judges)]
    if unknown:
        raise CostError(f"{source}: judge {unknown[0]!r} is not in the panel (judges: "
                        f"{', '.join(judges[:6])}{' ...' if len(judges) > 6 else ''}); fix the name or drop the row")
    for j, v in costs.items():
        for col in ("cost", "latency"):
            x = v.get(col, 0.0)
            if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x) or x < 0:
                raise CostError(f"{source}: judge {j!r}: {col} must be a finite number >= 0 (got {x!r})")
    # a candidate's cost is the sum of its judges' costs: a sum that overflows to inf would
    # leave every larger candidate without a cost (null in the JSON, off the cost frontier)
    if not math.isfinite(sum(float(costs[j]["cost"]) for j in judges)):
        raise CostError(f"{source}: the costs of all {len(judges)} judges add up past the largest number "
                        "(a candidate's cost is the sum of its judges'); give the costs in a larger unit")


def judges_cost(judges, costs: Mapping[str, Mapping]) -> tuple[float, float]:
    """(cost, latency) of calling ``judges`` on one item: the sum, and the largest."""
    judges = list(judges)
    cost = float(sum(costs[j]["cost"] for j in judges))
    latency = float(max((costs[j].get("latency", 0.0) for j in judges), default=0.0))
    return cost, latency


def pareto_front(risk, cost) -> list[int]:
    """Indices of the non-dominated candidates (no other has risk <= and cost <= with one
    strictly lower), cheapest first. Candidates equal in both are kept together."""
    risk = np.asarray(risk, dtype=float)
    cost = np.asarray(cost, dtype=float)
    ok = np.flatnonzero(np.isfinite(risk) & np.isfinite(cost))
    order = ok[np.lexsort((risk[ok], cost[ok]))]        # by cost, then risk
    front, best = [], math.inf
    last = None
    for i in order:
        if risk[i] < best:
            front.append(int(i))
            best = risk[i]
            last = (cost[i], risk[i])
        elif last is not None and (cost[i], risk[i]) == last:
            front.append(int(i))                         # an exact duplicate of a front point
    return front
