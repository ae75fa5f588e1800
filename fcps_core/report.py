"""Reproduction report: controlled regimes and the shipped real panels, as markdown tables
in the paper's layout (calibration-growth gaps, aggregator regimes, interaction strength,
cross-budget regime comparison). ``python -m fcps_core report --out docs/reproduction.md``.

Every number is measured by this run (seeded, so a rerun with the same arguments prints the
same tables); the paper's own values are never copied in.
"""

from __future__ import annotations

import datetime as _dt
import math
import time
from pathlib import Path
from typing import Callable

from .version import __version__
from .experiments import calibration_growth
from .families import PAPER_SCALAR
from .ingest import load_panel as read_panel
from .synthetic import make_regime, semi_real

DATA = Path(__file__).resolve().parent.parent / "data"
#: Fixed seven-judge pools for the real panels (the paper's protocol uses seven judges).
REAL_POOLS = {
    "llmbar": {"judges": ["GPT-4/Vanilla", "ChatGPT/Vanilla", "ChatGPT-0301/Vanilla", "PaLM2/Vanilla",
                          "LLaMA2/Vanilla", "Falcon/Vanilla", "GPT-4/CoT"],
               "budgets": [20, 50, 100, 200, 300], "sizes": (100, 100, 200)},
    "hanna": {"judges": ["Beluga-13B/prompt1", "OrcaPlatypus/prompt1", "Mistral-7B/prompt1",
                         "Llama-13B/prompt1", "ChatGPT/prompt1", "BERTScore F1", "BARTScore-SH"],
              "budgets": [32, 64, 128, 256, 384], "sizes": (128, 128, 256)},
}
GROWTH_BUDGETS = [16, 64, 256, 1024, 2048]
GROWTH_SIZES = (300, 300, 600)
SCALAR_VS_TABLE = {"table": ("table",), "scalar": PAPER_SCALAR}


def _f(v, digits=4, signed=False):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:+.{digits}f}" if signed else f"{v:.{digits}f}"


def md_table(header: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _growth(panel, budgets, sizes, splits, seed, workers, menus=SCALAR_VS_TABLE):
    n_S, n_V, n_T = sizes
    return calibration_growth(panel, budgets, n_select=n_S, n_val=n_V, n_test=n_T, splits=splits,
                              seed=seed, workers=workers, menus=menus)


def build_report(*, splits: int = 30, seed: int = 0, workers: int = 2, quick: bool = False,
                 command: str = "python -m fcps_core report --out docs/reproduction.md",
                 progress: Callable[[str], None] | None = None) -> str:
    """Run every section and return the markdown. ``quick`` shrinks panels and budgets (tests)."""
    say = progress or (lambda m: None)
    t0 = time.perf_counter()
    growth_budgets = [16, 64, 256] if quick else GROWTH_BUDGETS
    rows_growth = 1600 if quick else 4000
    parts = [f"# FCPS reproduction report\n\nMade by `{command}` (fcps {__version__}, "
             f"{splits} grouped splits, seed {seed}) on {_dt.date.today().isoformat()}.\n"
             "All numbers below are measured by that command; positive gaps are defined per table.\n"]

    # 1-2. Calibration-growth gaps: synthetic and semi-real.
    llmbar = read_panel(str(DATA / "llmbar.csv")).subset_judges(REAL_POOLS["llmbar"]["judges"])
    gap_rows, semi_rows, parity_detail = [], [], []
    for regime in ("additive", "mixed", "parity"):
        for kind, panel in (("synthetic", make_regime(regime, rows=rows_growth, judges=7, seed=seed)),
                            ("semi-real", semi_real(llmbar, regime, rows=rows_growth, seed=seed))):
            say(f"calibration growth: {kind} {regime}")
            res = _growth(panel, growth_budgets, GROWTH_SIZES if not quick else (200, 200, 300),
                          splits, seed, workers)
            gaps = [(-c["delta"]) if c.get("delta") is not None else None for c in res.cells]
            row = [regime] + [_f(g, 3, signed=True) for g in gaps]
            (gap_rows if kind == "synthetic" else semi_rows).append(row)
            if kind == "synthetic" and regime == "parity":
                parity_detail = [[c["n_M"], _f(c["table_K_mean"], 2), _f(c["unseen_mean"], 3),
                                  _f(c["table_test_mse"], 3), _f(c["scalar_test_mse"], 3)] for c in res.cells]
    header = ["Regime"] + [str(b) for b in growth_budgets]
    parts.append("## Calibration-growth gaps (paper Table tab:calibration-growth-new-dataset)\n\n"
                 f"Seven binary judges, {rows_growth} rows; S/V/T = {GROWTH_SIZES if not quick else (200, 200, 300)}; "
                 "columns are n_M. Entries: validation-selected scalar selector (six families, K selected) "
                 "minus validation-selected joint table (three paths, K selected), mean test MSE over "
                 "splits. **Positive favours the table.**\n\n" + md_table(header, gap_rows))
    parts.append("## Semi-real calibration-growth gaps (paper Table tab:semireal-calibration-growth)\n\n"
                 "Joint output patterns resampled from the LLMBar seven-judge pool below, controlled target; "
                 "same layout and sign as above.\n\n" + md_table(header, semi_rows))
    parts.append("### Parity regime detail\n\n" + md_table(
        ["n_M", "selected table K", "unseen (T)", "table MSE", "scalar MSE"], parity_detail))

    # 3. Aggregator regimes.
    agg_budgets = [50, 400] if quick else [50, 3000]
    agg_rows = []
    per_family = {"table": ("table",), "ridge_iso": ("ridge_iso",), "logistic": ("logistic",)}
    for regime, label in (("additive", "Additive"), ("xor", "XOR interaction"), ("and", "AND interaction")):
        say(f"aggregator regimes: {regime}")
        panel = make_regime(regime, rows=1600 if quick else 5000, judges=7, seed=seed)
        res = _growth(panel, agg_budgets, (200, 200, 300) if quick else GROWTH_SIZES, splits, seed,
                      workers, menus=per_family)
        for c in res.cells:
            vals = {f: c["menus"][f]["test_mse_mean"] for f in per_family}
            best = min(vals, key=vals.get)
            agg_rows.append([label, c["n_M"]] + [f"**{_f(vals[f], 3)}**" if f == best else _f(vals[f], 3)
                                                  for f in per_family])
    parts.append("## Controlled aggregator regimes (paper Table tab:controlled-aggregator-regimes)\n\n"
                 "Test MSE after selecting K by validation within each family; bold is the best family.\n\n"
                 + md_table(["Regime", "Budget", "Joint table", "Ridge + isotonic", "Logistic"], agg_rows))

    # 4. Interaction strength sweep.
    gammas = [0.0, 0.5, 1.0] if quick else [0.0, 0.3, 0.5, 0.7, 1.0]
    strength_budgets = [50, 400] if quick else [50, 200, 1000, 3000]
    strength_rows = []
    for g in gammas:
        say(f"interaction strength gamma={g}")
        panel = make_regime("strength", rows=1600 if quick else 5000, judges=7, seed=seed, gamma=g)
        res = _growth(panel, strength_budgets, (200, 200, 300) if quick else GROWTH_SIZES, splits, seed, workers)
        strength_rows.append([_f(g, 1)] + [_f(-c["delta"], 3, signed=True) for c in res.cells])
    parts.append("## Interaction-strength sweep (paper Table tab:interaction-strength-sweep)\n\n"
                 "Target (1 - gamma) x additive + gamma x three-way parity. Entries: scalar selector minus "
                 "joint table test MSE; **positive favours the table**.\n\n"
                 + md_table(["gamma"] + [f"n_M={b}" for b in strength_budgets], strength_rows))

    # 5. Real panels: cross-budget regime comparison.
    real_rows = []
    for name, spec in REAL_POOLS.items():
        say(f"real panel: {name}")
        panel = read_panel(str(DATA / f"{name}.csv")).subset_judges(spec["judges"])
        budgets = spec["budgets"][:3] if quick else spec["budgets"]
        res = _growth(panel, budgets, spec["sizes"], splits, seed, workers)
        for c in res.cells:
            real_rows.append([name, c["n_M"], _f(c["table_test_mse"]), _f(c["scalar_test_mse"]),
                              _f(c["delta"], 4, signed=True),
                              f"[{_f(c['ci_low'], 4, signed=True)}, {_f(c['ci_high'], 4, signed=True)}]",
                              _f(c["table_K_mean"], 2), _f(c["unseen_mean"], 3), _f(c["V_cell_mean"], 3)])
    pools = "\n".join(f"- **{n}**: {', '.join(s['judges'])} (S/V/T = {'/'.join(map(str, s['sizes']))})"
                      for n, s in REAL_POOLS.items())
    parts.append("## Cross-budget regime comparison on the shipped real panels (paper Table tab:regime-comparison)\n\n"
                 f"Fixed seven-judge pools:\n{pools}\n\n"
                 "Delta = table minus scalar test MSE, so **positive favours scalar**; paired normal 95% "
                 "interval over splits. Table K, unseen rate (T) and V_cell describe the selected table.\n\n"
                 + md_table(["Dataset", "n_M", "table", "scalar", "Delta", "paired 95% CI", "table K",
                             "unseen", "V_cell"], real_rows))
    parts.append(f"\nTotal run time: {time.perf_counter() - t0:.0f} s.\n")
    return "\n".join(parts)


def write_report(out: str, *, force: bool = False, **kwargs) -> str:
    from .outputs import check_output_path, write_output
    check_output_path(out, force=force)           # refuse before the long computation
    text = build_report(**kwargs)
    write_output(out, text, force=force)
    return text
