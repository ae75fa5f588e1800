"""A sweep of panel shapes this repository has never seen, through the default selection and
the user limits (not a test; issues 24 and 25: "How it will be checked").

Panels (wide CSV files written to a temporary folder first, not timed; every draw from a
generator seeded by the panel's own seed). Each item has a latent quality z (a group part
shared by the items of a group plus an item part); the label reads z, the judges read z
through their own noise, and each judge writes it in its schema:

* ``binary``: a 0/1 verdict (z + noise above the judge's own threshold), label 0/1;
* ``pairwise``: ``A`` / ``B`` / ``tie`` (tie when |z + noise| is small), label 0/1 or
  0 / 0.5 / 1 (a human tie);
* ``rubric``: an integer 1-10 (z + noise cut at the judge's own quantiles), continuous label;
* ``continuous``: a metric on its own monotone scale (raw, squashed, 0-100), continuous label
  (the translation-style panel reuses :func:`bench.bench_rows.continuous_csv`);
* ``mixed``: a panel whose columns mix the four schemas.

Judge counts 6, 15, 40 and 92; items 300, 2,000 and 26,000; groups of several items on some
panels; on most panels some judges are near-duplicates of another (the same output with a
few cells changed), some constant or nearly so, and some have missing outputs (empty cells).

Each panel runs, each in a fresh process (the engine imported before the clock starts, as
bench_rows.py does):

1. ``python -m fcps_core select PANEL --seed 0 --quiet --json`` (the default);
2. the same with ``--max-judges 1`` and ``--max-judges 3``;
3. ``--budget C --judge-costs FILE`` (LLM-like judges dear, metric-like cheap; C the sum of
   the three cheapest judges' costs plus half the next), skipped with ``--no-budget`` or
   when the default took more than ``--budget-skip`` seconds.

Every run also writes its predictor (``--save-model``) for the duplicate check.

Recorded per run: exit code and stderr's last line on failure, wall and CPU seconds (the
select call plus its fold workers, as bench_rows.py counts them), the 1-minute load after
it, peak RSS (the largest of the process's own VmHWM and its workers' ``ru_maxrss``). Invariants read from the JSON
(``docs/json-contract.md``; each printed as a letter, ``.`` when it holds, the letter when
it fails, details below the table):

* ``F`` a frontier is present with exactly one panel-size point per k = 1..J;
* ``D`` no duplicate deployed member: no two members share judge set + family + params, and
  no two members' predictions on the panel (from the run's saved predictor file,
  ``--save-model``) agree within 1e-6 on every row;
* ``K`` ``--max-judges k`` deploys at most k judges (the union of its members') and deploys
  what the default run's frontier point k holds (same judges, family and members, risk
  within 1e-9); the chosen point of a limited run is that limit's point;
* ``A`` the answer sentence (:func:`fcps_core.reports.explain.answer`, computed from the
  JSON as the CLI, the Select page and the report print it; it is not a JSON key) names
  exactly the deployed judges and prints the deployed estimate and interval; the chosen
  frontier point holds the deployed judges and the deployed estimate;
* ``I`` every interval contains its estimate (any object with ``ci`` and ``estimate``,
  ``risk`` or ``diff_vs_selected``; the top-level ``deployed_risk``);
* ``N`` no NaN / Infinity anywhere, and no null where a number is promised (a frontier
  point's risk, ci, diff_vs_best, deployed_risk; the deployed estimate);
* ``B`` with ``--budget``: the deployed judges cost at most the budget.

Truth (latent panels): the judges' parameters are drawn apart from the rows, so 40,000
fresh items read by the same judges are written beside each panel; every run's saved
predictor is scored on them, and ``est`` (its ``deployed_risk`` estimate), ``true`` (its
MSE on the fresh items) and whether the estimate's interval holds it are printed, then the
mean of est - true per run kind over the panels (issue 24 asks each frontier point's
estimate to be unbiased within +-0.005; one draw per panel, so read the mean, not a row).

``--recipes`` (latent panels): a practitioner's recipes, chosen and fitted on the panel's
rows (all deployable: the runs have no test block) and scored on the same fresh items: the
best single judge, the top-three stack and the best fixed recipe in hindsight; printed per
panel with the gaps ``--max-judges 1`` - single, ``--max-judges 3`` - top three, default -
hindsight, and summarised at the end (bench/shape_recipes.py); the records so far are
rewritten to ``recipes.json`` in the panels' folder after every panel. ``--draws N``: N independent
draws of each shape, draw d from seed ``seed + 100 d`` (:func:`drawn`; new judges' parameters,
rows and fresh items), all shapes' draw 0 first, so every gap and bias has a mean and an SE
over draws; ``--first-draw F`` starts at draw F, so a later run adds draws and
``python -m bench.shape_recipes DIR/recipes.json ...`` summarises the runs together.

Then: which default runs took more than 60 s, and the time per judge-row cell by panel so
super-linear shapes stand out.

    nice PYTHONPATH=. .venv/bin/python bench/bench_shapes.py [--quick] [--only NAME ...]
        [--no-budget] [--keep DIR] [--timeout 1800] [--recipes] [--draws N]

``--quick``: three small panels. ``--keep DIR`` writes the panels (and the runs' JSON) to
DIR and keeps them, for reproducing a failure by hand. The machine is shared: note the load
beside every time; CPU seconds hold better than wall seconds.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_rows import continuous_csv  # noqa: E402

#: the child process a select runs in (bench/select_child.py)
from bench.select_child import CHILD, bench_report  # noqa: E402 (the repository on the path first)
from bench import shape_recipes  # noqa: E402
from fcps_core.files.safe_write import write_output  # noqa: E402


# --- panels -------------------------------------------------------------------------------

@dataclass
class Shape:
    """One synthetic panel: ``schemas`` one schema per judge (cycled when shorter), ``label``
    binary / pairwise3 (0, 0.5, 1) / continuous, items per group, and the share of judges
    that are near-duplicates, (nearly) constant, or have missing outputs."""

    name: str
    judges: int
    rows: int
    schemas: tuple[str, ...]
    label: str
    group_size: int = 1
    seed: int = 0
    duplicates: int = 0
    constant: int = 0
    nearly_constant: int = 0
    missing: int = 0
    missing_share: float = 0.05
    kind: str = "latent"          # "latent" (this module) or "translation" (bench_rows.continuous_csv)
    truth_rows: int = 40_000      # fresh items for the truth check (latent panels; 0: none)
    quick: bool = False
    budget: bool = True
    notes: list = field(default_factory=list)
    draw: int = 0                 # which independent draw of the shape (:func:`drawn`)
    falling: bool = False         # continuous judges read the quality negated (a metric against an error label)

    @property
    def base(self) -> str:
        """The shape's name without its draw suffix."""
        return self.name.removesuffix(f".d{self.draw}") if self.draw else self.name


#: a draw's seed step: draw d of a shape uses seed ``shape.seed + DRAW_SEED_STEP * d`` (every
#: draw of every shape its own seed, as the shapes' seeds are below it)
DRAW_SEED_STEP = 100


def drawn(shape: Shape, draw: int) -> Shape:
    """Draw ``draw`` of ``shape``: the same shape from seed ``shape.seed + DRAW_SEED_STEP *
    draw`` (new judges' parameters and new rows, panel and fresh items alike), named
    ``NAME.dDRAW`` (draw 0 is the shape itself)."""
    if not draw:
        return shape
    return replace(shape, seed=shape.seed + DRAW_SEED_STEP * draw, name=f"{shape.name}.d{draw}", draw=draw,
                   notes=[])


SHAPES = [
    Shape("binqa_6x300_g3", 6, 300, ("binary",), "binary", group_size=3, seed=1, duplicates=1, constant=1,
          quick=True),
    Shape("binqa_15x2000", 15, 2000, ("binary",), "binary", seed=2, duplicates=2, nearly_constant=1, missing=2),
    Shape("binqa_92x300", 92, 300, ("binary",), "binary", seed=3, duplicates=6, constant=2, nearly_constant=3,
          missing=5),
    Shape("pair_6x26000_g2", 6, 26000, ("pairwise",), "binary", group_size=2, seed=4, duplicates=1, missing=1),
    Shape("pair_15x300_tie", 15, 300, ("pairwise",), "pairwise3", group_size=2, seed=5, duplicates=2,
          nearly_constant=1, missing=1, quick=True),
    Shape("pair_40x2000_tie", 40, 2000, ("pairwise",), "pairwise3", group_size=2, seed=6, duplicates=4, constant=1,
          missing=3),
    Shape("rubric_15x2000_g5", 15, 2000, ("rubric",), "continuous", group_size=5, seed=7, duplicates=2,
          nearly_constant=1, missing=2),
    Shape("rubric_40x300", 40, 300, ("rubric",), "continuous", seed=8, duplicates=3, constant=1, missing=3),
    Shape("cont_6x26000_g15", 6, 26000, ("continuous",), "continuous", group_size=15, seed=9, kind="translation", truth_rows=0),
    Shape("cont_40x26000_g15", 40, 26000, ("continuous",), "continuous", group_size=15, seed=10,
          kind="translation", budget=False, truth_rows=0),
    Shape("cont_92x2000", 92, 2000, ("continuous",), "continuous", seed=11, duplicates=6, constant=1, missing=4),
    Shape("mixed_15x2000_bin", 15, 2000, ("pairwise", "binary", "rubric", "continuous"), "binary", group_size=4,
          seed=12, duplicates=2, constant=1, missing=2, quick=True),
    Shape("mixed_40x2000_cont", 40, 2000, ("rubric", "continuous", "binary", "pairwise"), "continuous", seed=13,
          duplicates=3, nearly_constant=2, missing=3),
    Shape("cont_fall_20x2000_g5", 20, 2000, ("continuous",), "continuous", group_size=5, seed=15, duplicates=2,
          missing=2, falling=True),
    Shape("binqa_92x2000_g4", 92, 2000, ("binary",), "binary", group_size=4, seed=14, duplicates=6, constant=2,
          missing=4),
]


def _fmt(values: np.ndarray, decimals: int) -> list[str]:
    return [f"{v:.{decimals}f}" for v in values]


def latent_panel(shape: Shape, rows: int | None = None, stream: int = 0) -> tuple[list[str], list[list[str]], list[str]]:
    """(header, rows, schemas) of a latent-quality panel (module docstring).

    The judges' parameters (noise, thresholds, tie widths, rubric cuts, scales, which judges
    are copies, constant or have missing cells) come from one generator seeded by the
    panel's seed; the rows from another seeded by (seed, ``stream``). ``stream`` 0 is the
    panel; another stream draws fresh items read by the same judges (the truth check)."""
    par = np.random.default_rng(shape.seed)
    rng = np.random.default_rng([shape.seed, stream])
    n, J = rows or shape.rows, shape.judges
    group = np.arange(n) // shape.group_size
    z = rng.normal(size=group.max() + 1)[group] * (0.7 if shape.group_size > 1 else 0.0) + rng.normal(size=n)
    if shape.label == "binary":
        label = _fmt((rng.random(n) < 1 / (1 + np.exp(-1.6 * z))).astype(float), 0)
    elif shape.label == "pairwise3":
        p = 1 / (1 + np.exp(-1.6 * z))
        u = rng.random(n)
        y = np.where(u < 0.15, 0.5, (rng.random(n) < p).astype(float))
        label = [("0.5" if v == 0.5 else f"{v:.0f}") for v in y]
    else:
        label = _fmt(np.clip(1 / (1 + np.exp(-(1.2 * z + 0.4 * rng.normal(size=n)))), 0, 1), 4)
    schemas = [shape.schemas[j % len(shape.schemas)] for j in range(J)]
    noise = par.uniform(0.4, 2.5, J)
    # each judge's parameters, drawn whatever its schema so one judge's draw moves no other's
    threshold = par.normal(scale=0.5, size=J)
    tie_width = par.uniform(0.0, 0.6, J)
    # rubric cuts: quantiles of z + noise ~ N(0, 1 + noise^2) (+ the group part), fixed per judge
    spread = np.sqrt(1 + noise ** 2 + (0.49 if shape.group_size > 1 else 0.0))
    from scipy.stats import norm
    cut_q = np.sort(par.uniform(0.02, 0.98, (J, 9)), axis=1)
    scale = par.choice(["raw", "squashed", "percent"], size=J)
    decimals = par.choice([2, 3, 4], size=J)
    cols: list[list[str]] = []
    for j in range(J):
        v = z + noise[j] * rng.normal(size=n)
        s = schemas[j]
        if s == "binary":
            cols.append(_fmt((v > threshold[j]).astype(float), 0))
        elif s == "pairwise":
            cols.append(list(np.where(np.abs(v) < tie_width[j], "tie", np.where(v > 0, "A", "B"))))
        elif s == "rubric":
            cuts = norm.ppf(cut_q[j]) * spread[j]
            cols.append([str(int(c)) for c in 1 + np.searchsorted(cuts, v)])
        else:
            v = -v if shape.falling else v      # the score falls as the label rises
            w = v if scale[j] == "raw" else 1 / (1 + np.exp(-v)) if scale[j] == "squashed" \
                else 100 / (1 + np.exp(-0.8 * v))
            cols.append(_fmt(w, int(decimals[j])))
    # near-duplicates: judge d copies an earlier judge with 1 % of its cells replaced by another
    # judge's (same schema, so the copy stays a valid output)
    order = par.permutation(J)
    at = 0
    for _ in range(shape.duplicates):
        d, src = int(order[at]), int(order[at + 1])
        at += 2
        same = [k for k in range(J) if schemas[k] == schemas[src] and k not in (src, d)]
        other_j = int(par.choice(same)) if same else src
        schemas[d] = schemas[src]
        col = list(cols[src])
        other = cols[other_j]
        for i in np.flatnonzero(rng.random(n) < 0.01):
            col[i] = other[i]
        cols[d] = col
    for _ in range(shape.constant):
        d = int(order[at]); at += 1
        cols[d] = [_constant_output(schemas[d])] * n
    for _ in range(shape.nearly_constant):
        d = int(order[at]); at += 1
        common = _constant_output(schemas[d])
        cols[d] = [c if r < 0.005 else common for c, r in zip(cols[d], rng.random(n))]
    for _ in range(shape.missing):
        d = int(order[at]); at += 1
        cols[d] = ["" if r < shape.missing_share else c for c, r in zip(cols[d], rng.random(n))]
    names = [f"{s[:3]}{j + 1}" for j, s in enumerate(schemas)]
    header = ["item_id", "group_id", "label", *names]
    rows_out = [[f"i{i}", f"g{group[i]}", label[i], *(c[i] for c in cols)] for i in range(n)]
    return header, rows_out, schemas


def _constant_output(schema: str) -> str:
    """The one output of a constant judge (a valid output of its schema)."""
    return {"binary": "1", "pairwise": "A", "rubric": "5"}.get(schema, "0.5")


def write_panel(shape: Shape, folder: Path) -> tuple[Path, Path]:
    """The panel CSV and a judge-costs CSV beside it (LLM-like outputs dear, metrics cheap)."""
    from fcps_core.files.csv_writer import write_csv
    path = folder / f"{shape.name}.csv"
    if shape.kind == "translation":
        continuous_csv(path, shape.rows, shape.judges, seed=shape.seed, group_size=shape.group_size)
        names = [f"M{j + 1}" for j in range(shape.judges)]
        schemas = ["continuous"] * shape.judges
    else:
        header, rows, schemas = latent_panel(shape)
        write_csv(str(path), header, rows, force=True, lineterminator="\n")
        names = header[3:]
        if shape.truth_rows:
            header, rows, _ = latent_panel(shape, rows=shape.truth_rows, stream=1)
            write_csv(str(folder / f"{shape.name}.fresh.csv"), header, rows, force=True, lineterminator="\n")
    rng = np.random.default_rng(shape.seed + 1000)
    base = {"continuous": 0.05, "binary": 1.0, "pairwise": 2.0, "rubric": 3.0}
    costs = {n: round(base[s] * float(rng.uniform(0.5, 2.0)), 3) for n, s in zip(names, schemas)}
    cost_path = folder / f"{shape.name}.costs.csv"
    write_csv(str(cost_path), ["judge", "cost"], [[n, f"{c:g}"] for n, c in costs.items()], force=True,
              lineterminator="\n")
    cheap = sorted(costs.values())
    shape.budget_value = round(sum(cheap[:3]) + 0.5 * cheap[3], 4) if len(cheap) > 3 else sum(cheap)
    shape.costs = costs
    return path, cost_path


# --- runs ---------------------------------------------------------------------------------

def run_select(panel: Path, extra: list[str], out: Path, timeout: float) -> dict:
    """One ``select`` in a fresh process; the JSON goes to ``out``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BENCH_OUT": str(out),
           "FCPS_STORE": str(Path(tempfile.mkdtemp()) / "s.duckdb")}
    argv = [sys.executable, "-c", CHILD, "select", str(panel), "--seed", "0", "--quiet", "--json", *extra]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "code": None, "note": f"over {timeout:.0f} s", "seconds": math.nan}
    report = bench_report(proc.stderr)
    rest = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("BENCH ")]
    run = report if report is not None else {"seconds": time.perf_counter() - t0, "cpu": math.nan,
                                             "mib": math.nan, "code": proc.returncode}
    run["exit"] = proc.returncode if report is None else run["code"]
    run["load"] = os.getloadavg()[0]
    run["stderr"] = rest[-1][:200] if rest else ""
    run["ok"] = run["exit"] == 0 and out.exists() and out.stat().st_size > 0
    if run["ok"]:
        text = out.read_text()
        bad = []
        run["doc"] = json.loads(text, parse_constant=lambda c: bad.append(c) or math.nan)
        run["bad_constants"] = bad
        if "error" in run["doc"] and "selected" not in run["doc"]:
            run["ok"] = False
            run["stderr"] = run["doc"]["error"][:200]
    return run


# --- invariants ---------------------------------------------------------------------------

def _members(sel: dict) -> list[dict]:
    return sel.get("members") or [sel]


def _deployed_judges(sel: dict) -> set:
    out = set()
    for m in _members(sel):
        out |= set(m.get("judges") or [])
    return out | set(sel.get("judges") or [])


def _model_key(m: dict) -> tuple:
    params = json.dumps(m.get("params") or {}, sort_keys=True)
    return (tuple(sorted(m.get("judges") or [])), m.get("family"), params)


def _walk(obj, path=""):
    if isinstance(obj, dict):
        yield path, obj
        for k, v in obj.items():
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _walk(v, f"{path}[{i}]")


def _bad_number(v) -> bool:
    return isinstance(v, float) and not math.isfinite(v)


def check_numbers(doc: dict, bad_constants: list) -> list[str]:
    """N: NaN / Infinity anywhere; null where the contract promises a number."""
    out = [f"JSON carries {c}" for c in set(bad_constants)]
    for path, d in _walk(doc):
        for k, v in d.items():
            if _bad_number(v):
                out.append(f"{path}.{k} = {v}")
    dr = doc.get("deployed_risk") or {}
    if dr.get("method") not in (None, "none") and dr.get("estimate") is None:
        out.append("deployed_risk.estimate is null")
    for p in doc.get("frontier") or []:
        tag = f"frontier[{p.get('constraint')}={p.get('n_judges') if p.get('constraint') == 'max_judges' else p.get('cost')}]"
        for key in ("risk", "ci"):
            if p.get(key) is None:
                out.append(f"{tag}.{key} is null")
        if (p.get("diff_vs_best") or {}).get("estimate") is None:
            out.append(f"{tag}.diff_vs_best is null")
        if dr.get("method") == "bbc" and (p.get("deployed_risk") or {}).get("estimate") is None:
            out.append(f"{tag}.deployed_risk is null")
    return out[:6]


def check_intervals(doc: dict) -> list[str]:
    """I: every interval contains its estimate."""
    out = []
    for path, d in _walk(doc):
        ci = d.get("ci")
        if not (isinstance(ci, list) and len(ci) == 2 and all(isinstance(c, (int, float)) for c in ci)):
            continue
        for key in ("diff_vs_selected", "estimate", "risk"):
            v = d.get(key)
            if isinstance(v, (int, float)) and math.isfinite(v):
                lo, hi = ci
                tol = 1e-12 * max(1.0, abs(v))
                if not (lo - tol <= v <= hi + tol):
                    out.append(f"{path}: {key} {v:.6g} outside [{lo:.6g}, {hi:.6g}]")
                break
        if ci[0] > ci[1]:
            out.append(f"{path}: ci reversed {ci}")
    return out[:6]


def check_frontier(doc: dict) -> list[str]:
    """F: one panel-size point per k = 1..J."""
    fr = doc.get("frontier")
    J = len((doc.get("panel") or {}).get("judges") or [])
    if not fr:
        return ["no frontier"]
    ks = [p.get("n_judges") for p in fr if p.get("constraint") == "max_judges"]
    out = []
    if sorted(ks) != list(range(1, J + 1)):
        missing = sorted(set(range(1, J + 1)) - set(ks))
        dup = sorted({k for k in ks if ks.count(k) > 1})
        out.append(f"panel-size points {len(ks)} for J={J}" + (f"; missing k {missing[:8]}" if missing else "")
                   + (f"; repeated k {dup[:8]}" if dup else ""))
    for p in fr:
        if p.get("constraint") == "max_judges" and len(p.get("judges") or []) > p.get("n_judges", 0):
            out.append(f"point k={p['n_judges']} holds {len(p['judges'])} judges")
    if sum(1 for p in fr if p.get("chosen")) != 1:
        out.append(f"{sum(1 for p in fr if p.get('chosen'))} points marked chosen")
    return out[:6]


def check_duplicates(doc: dict, panel: Path | None = None, model: Path | None = None) -> list[str]:
    """D: no two members with the same judges + family + params, nor (with the predictor
    file) prediction-identical within 1e-6 on every row of the panel."""
    sel = doc["selected"]
    ms = sel.get("members") or []
    out = []
    keys = [_model_key(m) for m in ms]
    for i in range(len(keys)):
        for j in range(i):
            if keys[i] == keys[j]:
                out.append(f"members {j} and {i} are one model: {keys[i][1]} on {len(keys[i][0])} judges")
    if model is not None and model.exists() and len(ms) > 1:
        from fcps_core.deploy.predictor import FCPSPredictor
        from fcps_core.ingest.load import load_panel
        pred = FCPSPredictor.load(str(model))
        pan = load_panel(str(panel), require_labels=False)
        cols = [m.predict(pan) for _, m in pred.members]
        for i in range(len(cols)):
            for j in range(i):
                gap = float(np.max(np.abs(cols[i] - cols[j])))
                if gap <= 1e-6:
                    out.append(f"members {j} and {i} predict the same (max gap {gap:.1e}): "
                               f"{pred.members[j][1].family} / {pred.members[i][1].family}")
    return out[:6]


def check_limit(doc: dict, k: int, default: dict | None) -> list[str]:
    """K: at most k judges, the default's frontier point k, and the chosen point is k."""
    sel = doc["selected"]
    judges = _deployed_judges(sel)
    out = []
    if len(judges) > k:
        out.append(f"--max-judges {k} deploys {len(judges)} judges")
    chosen = next((p for p in doc.get("frontier") or [] if p.get("chosen")), None)
    if chosen is None or chosen.get("constraint") != "max_judges" or chosen.get("n_judges") != k:
        out.append(f"chosen point is {chosen and (chosen.get('constraint'), chosen.get('n_judges'))}, not k={k}")
    if default is not None:
        point = next((p for p in default.get("frontier") or [] if p.get("constraint") == "max_judges"
                      and p.get("n_judges") == k), None)
        if point is None:
            out.append(f"default frontier has no point k={k}")
        else:
            if set(point.get("judges") or []) != judges:
                out.append(f"judges {sorted(judges)} != default point k={k} {sorted(point.get('judges') or [])}")
            fam = "tie_average" if sel.get("members") and len(sel["members"]) > 1 else sel.get("family")
            if point.get("family") != fam and not (point.get("family") == "tie_average" and len(point.get("members") or []) == 1):
                out.append(f"family {fam} != default point k={k} {point.get('family')}")
            mine = sorted(_model_key(m) for m in _members(sel))
            theirs = sorted(_model_key(m) for m in (point.get("members") or []))
            if theirs and mine != theirs:
                out.append(f"members differ from default point k={k} ({len(mine)} vs {len(theirs)})")
            own = next((p for p in doc.get("frontier") or [] if p.get("chosen")), {})
            if own.get("risk") is not None and point.get("risk") is not None \
                    and abs(own["risk"] - point["risk"]) > 1e-9 * max(1, abs(point["risk"])):
                out.append(f"risk {own['risk']:.6g} != default point k={k} {point['risk']:.6g}")
    return out[:6]


_NUMBER = re.compile(r"-?\d+\.\d+")


def check_answer(doc: dict) -> list[str]:
    """A: the answer sentence names the deployed judges and prints the deployed estimate."""
    from fcps_core.reports import explain
    out = []
    try:
        text = explain.answer(doc)
    except Exception as exc:          # a crash here is the defect
        return [f"explain.answer raised {type(exc).__name__}: {exc}"]
    if not text:
        return ["no answer sentence"]
    sel = doc["selected"]
    judges = _deployed_judges(sel)
    head = text.split(":")[0] if text.startswith("Deploy") else text
    first = text.split(". ")[0]
    named = {j for j in (doc["panel"]["judges"]) if re.search(rf"(?<![\w/]){re.escape(j)}(?![\w/])", first)}
    more = re.search(r"and (\d+) more\)", first)
    if more:   # a long list is cut ("a, b and 8 more"): the named ones are deployed, the count adds up
        if not named <= judges or len(named) + int(more.group(1)) != len(judges):
            out.append(f"answer names {sorted(named)[:6]} and {more.group(1)} more but deploys {len(judges)}: "
                       f"{sorted(named - judges)[:4]} not deployed")
    elif named != judges:
        out.append(f"answer names {sorted(named)[:6]} but deploys {sorted(judges)[:6]} ({len(named)} vs {len(judges)})")
    m = re.search(r"Deploy (?:these (\d+) judges|this judge)", head)
    if m and int(m.group(1) or 1) != len(judges):
        out.append(f"answer says {m.group(0)!r} but deploys {len(judges)}")
    chosen = next((p for p in doc.get("frontier") or [] if p.get("chosen")), None)
    dr = doc.get("deployed_risk") or {}
    if chosen is not None:
        if set(chosen.get("judges") or []) != judges:
            out.append(f"chosen point judges {len(chosen.get('judges') or [])} != deployed {len(judges)}")
        est = explain.point_estimate(chosen)
        if dr.get("estimate") is not None and est.get("estimate") is not None \
                and abs(est["estimate"] - dr["estimate"]) > 1e-12:
            out.append(f"chosen point estimate {est['estimate']:.6g} != deployed_risk {dr['estimate']:.6g}")
        nums = [float(x) for x in _NUMBER.findall(first)]
        if est.get("estimate") is not None and nums:
            digits = max(len(x.split(".")[1]) for x in _NUMBER.findall(first))
            want = [round(est["estimate"], digits)] + [round(c, digits) for c in (est.get("ci") or [])]
            if not all(any(abs(w - n) <= 0.6 * 10 ** -digits for n in nums) for w in want):
                out.append(f"answer prints {nums} but the deployed point is {want}")
    return out[:6]


def true_risk(model: Path, fresh: Path, cache: dict) -> float:
    """The deployed predictor's MSE on fresh items from the same generator (the judges'
    parameters fixed, new rows): what its deployed-risk estimate estimates."""
    from fcps_core.deploy.predictor import FCPSPredictor
    from fcps_core.ingest.load import load_panel
    if fresh not in cache:
        cache.clear()
        cache[fresh] = load_panel(str(fresh))
    pan = cache[fresh]
    pred = FCPSPredictor.load(str(model)).predict(pan)
    return float(np.mean((pred - pan.labels) ** 2))


def check_budget(doc: dict, costs: dict, budget: float) -> list[str]:
    judges = _deployed_judges(doc["selected"])
    spent = sum(costs.get(j, 0.0) for j in judges)
    return [] if spent <= budget + 1e-9 else [f"deployed cost {spent:g} > budget {budget:g}"]


def score_recipes(shape: Shape, panel: Path, fresh: Path, work: Path, fresh_scores: dict,
                  default_doc: dict | None = None) -> dict:
    """The practitioner's recipes fitted on the panel's rows and scored on its fresh items,
    against the runs' fresh MSEs (bench/shape_recipes.py); the default run's cross-fitted
    risk of :data:`shape_recipes.CONTROL` gives the panel's luck."""
    control = next((b["risk"] for b in (default_doc or {}).get("baselines") or []
                    if b.get("name") == shape_recipes.CONTROL), None)
    combined, D, T = shape_recipes.combined_panel(panel, fresh, work / f"{shape.name}.combined.csv")
    recipes = shape_recipes.recipe_risks(combined, D, T, seed=0)
    return shape_recipes.record(shape.base, shape.draw, fresh_scores, recipes, control)


def _num(v) -> str:
    return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.4f}"


# --- main ---------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="three small panels")
    ap.add_argument("--only", nargs="+", default=None, help="panel names to run")
    ap.add_argument("--no-budget", action="store_true")
    ap.add_argument("--budget-skip", type=float, default=120.0,
                    help="skip the budget run when the default took longer (s)")
    ap.add_argument("--limits", nargs="+", type=int, default=[1, 3])
    ap.add_argument("--keep", default=None, help="folder to write the panels and JSON to (kept)")
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--recipes", action="store_true",
                    help="latent panels: score a practitioner's recipes on the fresh items too (bench/shape_recipes.py)")
    ap.add_argument("--draws", type=int, default=1,
                    help="independent draws of each shape (draw d: seed + %d d), all shapes' draw 0 first"
                         % DRAW_SEED_STEP)
    ap.add_argument("--first-draw", type=int, default=0,
                    help="the draws run are FIRST .. FIRST + N - 1 (more draws in another run; "
                         "python -m bench.shape_recipes summarises several runs' recipes.json)")
    args = ap.parse_args()

    chosen = [s for s in SHAPES if (not args.quick or s.quick) and (not args.only or s.name in args.only)]
    shapes = [drawn(s, d) for d in range(args.first_draw, args.first_draw + args.draws) for s in chosen]
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_shapes_"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"panels in {work}; load before {' '.join(f'{v:.2f}' for v in os.getloadavg())}; "
          f"{os.cpu_count()} cores", flush=True)
    print(f"{'panel':<20} {'run':<9} {'exit':>4} {'wall s':>7} {'cpu s':>7} {'MiB':>6} {'load':>5} "
          f"{'FDKAINB':<7} {'est':>7} {'true':>7} {'in ci':>5}  deployed", flush=True)
    truth_cache: dict = {}
    errors: list[tuple[str, str, float, float]] = []
    recipe_records: list[dict] = []
    details: list[str] = []
    timing: list[tuple[Shape, dict]] = []
    for shape in shapes:
        panel, cost_file = write_panel(shape, work)
        runs = [("default", [], None)]
        runs += [(f"max{k}", ["--max-judges", str(k)], k) for k in args.limits]
        if shape.budget and not args.no_budget:
            runs.append(("budget", ["--judge-costs", str(cost_file), "--budget", f"{shape.budget_value:g}"], "budget"))
        runs = [(label, [*extra, "--save-model", str(work / f"{shape.name}.{label}.model.json"), "--force"], limit)
                for label, extra, limit in runs]
        default_doc = None
        fresh_scores: dict[str, tuple] = {}     # run kind: (estimate, fresh MSE)
        for label, extra, limit in runs:
            if limit == "budget" and timing and timing[-1][0] is shape and timing[-1][1].get("seconds", 0) > args.budget_skip:
                print(f"{shape.name:<20} {label:<9} skipped (default over {args.budget_skip:.0f} s)", flush=True)
                continue
            out = work / f"{shape.name}.{label}.json"
            run = run_select(panel, extra, out, args.timeout)
            flags = {c: "." for c in "FDKAINB"}
            found: dict[str, list[str]] = {}
            if run["ok"]:
                doc = run["doc"]
                found["F"] = check_frontier(doc)
                found["D"] = check_duplicates(doc, panel, work / f"{shape.name}.{label}.model.json")
                found["A"] = check_answer(doc)
                found["I"] = check_intervals(doc)
                found["N"] = check_numbers(doc, run.get("bad_constants", []))
                if isinstance(limit, int):
                    found["K"] = check_limit(doc, limit, default_doc)
                if limit == "budget":
                    found["B"] = check_budget(doc, shape.costs, shape.budget_value)
                if label == "default":
                    default_doc = doc
                    timing.append((shape, run))
                for c, problems in found.items():
                    if problems:
                        flags[c] = c
                        details += [f"{shape.name} {label} {c}: {p}" for p in problems]
                dr = doc.get("deployed_risk") or {}
                est, truth, inside = dr.get("estimate"), math.nan, ""
                fresh = work / f"{shape.name}.fresh.csv"
                if fresh.exists() and est is not None and (doc.get("menu") or {}).get("objective", "mse") == "mse":
                    truth = true_risk(work / f"{shape.name}.{label}.model.json", fresh, truth_cache)
                    lo, hi = dr.get("ci") or (math.nan, math.nan)
                    inside = "yes" if lo <= truth <= hi else "NO"
                    errors.append((shape.name, label, est, truth))
                    fresh_scores[label] = (est, truth)
                sel = doc["selected"]
                what = (f"{len(_deployed_judges(sel))} judges, "
                        + (f"{len(sel['members'])} members" if sel.get("members") else str(sel.get("family"))))
            else:
                flags = {c: "-" for c in flags}
                what = f"FAILED: {run.get('stderr') or run.get('note')}"
                details.append(f"{shape.name} {label}: exit {run.get('exit')} {run.get('stderr') or run.get('note')}")
                if label == "default":
                    timing.append((shape, run))
            print(f"{shape.name:<20} {label:<9} {str(run.get('exit')):>4} {run.get('seconds', math.nan):7.1f} "
                  f"{run.get('cpu', math.nan):7.1f} {run.get('mib', math.nan):6.0f} {run.get('load', math.nan):5.2f} "
                  f"{''.join(flags.values()):<7} {_num(est if run['ok'] else None):>7} "
                  f"{_num(truth if run['ok'] else None):>7} {(inside if run['ok'] else ''):>5}  {what}", flush=True)
        fresh = work / f"{shape.name}.fresh.csv"
        if args.recipes and fresh_scores and fresh.exists():
            recipe_records.append(score_recipes(shape, panel, fresh, work, fresh_scores, default_doc))
            print(shape_recipes.record_line(recipe_records[-1]), flush=True)
            # after every shape, so a sweep stopped early can still be summarised
            # (shape_recipes.summary_lines over the file's records)
            write_output(str(work / "recipes.json"), json.dumps(recipe_records, indent=1).encode(), force=True)
    print("\nInvariant failures:" if details else "\nNo invariant failed.")
    for line in details:
        print("  " + line)
    if errors:
        diffs = {}
        for _, label, est, truth in errors:
            diffs.setdefault(label, []).append(est - truth)
        print("\nDeployed-risk estimate minus the deployed predictor's MSE on fresh items (one draw per panel; "
              "issue 24 asks for unbiased within +-0.005):")
        for label, d in diffs.items():
            d = np.array(d)
            print(f"  {label:<8} mean {d.mean():+.4f} (SE {d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else math.nan:.4f}, "
                  f"{len(d)} panels), largest {d[np.argmax(np.abs(d))]:+.4f}")
    if recipe_records:
        print()
        print("\n".join(shape_recipes.summary_lines(recipe_records)))
    print("\nDefault selection time per shape (CPU microseconds per judge-row cell):")
    for shape, run in timing:
        cells = shape.rows * shape.judges
        slow = "  OVER 60 s" if run.get("seconds", 0) > 60 else ""
        print(f"  {shape.name:<20} {shape.rows:>6} x {shape.judges:<3} wall {run.get('seconds', math.nan):6.1f} s  "
              f"cpu {run.get('cpu', math.nan):6.1f} s  {1e6 * run.get('cpu', math.nan) / cells:7.1f} us/cell{slow}")
    print(f"load after {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
