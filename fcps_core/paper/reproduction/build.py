"""Assemble the reproduction report: run everything once (:mod:`.runs`, the controlled
regimes, the external stand-ins, the checks), build one section per paper label, and put a
label -> section map and the run time at the top."""

from __future__ import annotations

import datetime as _dt
import os
import time
from pathlib import Path
from typing import Callable

import pandas as pd

from ...wording import count_of, noun_for
from ...version import __version__
from . import real_more as more
from . import real_tables as real
from .check_sections import run_checks
from . import paper_values as PV
from .bounds import bound_sections
from .common import (NAVIGATION, OFFLINE, PAPER_LABELS, THEORY_LABELS, VERDICTS, FigureSink, Plan, Section,
                     anchor, figure_file, md_table)
from .controlled import run_controlled
from .external import external_sections
from .figure_sections import figure_sections
from .runs import run_external, run_real

#: the files the report writes into its figures folder
FIGURE_FILES = ("plotly.min.js",) + tuple(figure_file(label) for label in PAPER_LABELS if label.startswith("fig:"))


def _load() -> str:
    try:
        return " / ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:                     # pragma: no cover (no load average on this system)
        return "unknown"


def build_sections(plan: Plan, sink: FigureSink, say: Callable[[str], None]) -> dict[str, Section]:
    """Every reproducible label's section (label -> :class:`Section`)."""
    runs = [run_real(name, plan, say) for name in plan.real]
    frame = pd.concat([r.frame for r in runs], ignore_index=True)
    records = [rec for r in runs for rec in r.records]
    out: dict[str, Section] = {}

    def add(*sections):
        for s in sections:
            out[s.label] = s

    say("real-panel tables")
    add(real.protocol(runs, plan), real.guardrails(runs, plan), real.exact_cell_pressure(runs),
        real.main_finite_label_checks(runs, frame), real.candidate_menu_validation(runs),
        *real.baseline_envelope(runs, frame), real.aggregation_baselines(runs, frame), real.aggregation_selected(runs),
        real.k_family_ablation(runs), real.selected_k_instability(runs), real.regime_comparison(runs),
        real.oracle_gap_full(runs), more.table_like_comparison(runs), more.metric_robustness(runs),
        more.nll_selection_ablation(runs), more.jury_baseline(runs), more.backoff_split_sensitivity(runs),
        more.interaction_diagnostic(runs, frame, records), more.theory_proxy_winner(runs, frame, records, plan)[0],
        more.residual_hybrid(runs), more.cfps_path(runs)[0], more.controlled_complexity(frame)[0],
        more.within_group_correlation(frame))
    controlled, sweeps = run_controlled(plan, say)
    add(*controlled)
    say("bounds")
    add(*bound_sections(runs, sweeps, plan))
    add(*external_sections(run_external(plan, say), plan))
    add(*run_checks(runs[0].panel, plan, say))
    say("figures")
    add(*figure_sections(runs, frame, sweeps, sink, plan))
    for label, sec in out.items():
        if not sec.verdict and label in PV.HAND:
            sec.verdict, sec.why, sec.paper = PV.HAND[label]
    return out


def verdict_counts(sections: dict[str, Section]) -> dict[str, int]:
    """How many sections carry each verdict (:data:`VERDICTS`); the offline labels count as
    not applicable offline, sections without a verdict as 'none'."""
    counts = {v: 0 for v in VERDICTS}
    counts["none"] = 0
    for label in PAPER_LABELS + THEORY_LABELS:
        if label in sections:
            counts[sections[label].verdict or "none"] = counts.get(sections[label].verdict or "none", 0) + 1
        elif label in OFFLINE:
            counts["not applicable offline"] += 1
    return counts


def label_map(sections: dict[str, Section]) -> str:
    rows = []
    for label in PAPER_LABELS + THEORY_LABELS:
        if label in sections:
            rows.append([f"`{label}`", f"[{sections[label].title}](#{anchor(label)})", sections[label].verdict or "-"])
        elif label in NAVIGATION:
            rows.append([f"`{label}`", "navigation table (no numbers): its evidence is in "
                         + ", ".join(f"[{x}](#{anchor(x)})" for x in NAVIGATION[label]), "-"])
        elif label in OFFLINE:
            rows.append([f"`{label}`", OFFLINE[label], "not applicable offline"])
        else:
            rows.append([f"`{label}`", "missing from this run", "-"])
    c = verdict_counts(sections)
    counts = ", ".join(f"{c[v]} {v}" for v in VERDICTS) + (f", {c['none']} without a verdict" if c["none"] else "")
    return (f"Verdicts against the paper over the {sum(c.values())} labels with numbers: {counts}.\n\n"
            + md_table(["Paper label", "Section of this report", "Verdict"], rows))


def build_report(*, splits: int = 30, seed: int = 0, workers: int = 2, quick: bool = False,
                 command: str = "python -m fcps_core report --out docs/reproduction.md",
                 progress: Callable[[str], None] | None = None, figures_dir: str | Path | None = None,
                 force: bool = False) -> str:
    """Run every section and return the markdown. Figures go to ``figures_dir`` (none are
    written when it is None; the links still name them). ``quick`` shrinks panels, budgets
    and bootstrap draws (a smoke run for tests)."""
    plan = Plan(splits=splits, seed=seed, workers=workers, quick=quick)
    say = progress or (lambda m: None)
    t0 = time.perf_counter()
    load_before = _load()
    sink = FigureSink(Path(figures_dir) if figures_dir is not None else None, force=force)
    sections = build_sections(plan, sink, say)
    seconds = time.perf_counter() - t0
    head = (f"# FCPS reproduction report\n\nMade by `{command}` (fcps {__version__}, {splits} grouped splits, "
            f"seed {seed}{', quick smoke run' if quick else ''}) on {_dt.date.today().isoformat()}.\n"
            f"Run time: {seconds:.0f} s with {count_of(workers, 'worker')} on {os.cpu_count()} cores; load average "
            f"(1/5/15 min) {load_before} before and {_load()} after.\n\n"
            "Every number below is measured by that command (seeded: a rerun with the same arguments prints the "
            "same tables), except the paper's own values: columns and rows marked 'paper' are typed in from the "
            "paper (fcps_core/paper/reproduction/paper_values.py names the table and row of each), never computed. "
            "Each section carries a one-line verdict against the paper: **reproduced** (same direction and, where "
            "the paper prints numbers, sizes within the section's stated tolerance), **same direction, different "
            "size**, **differs** (the paper's finding does not hold here, or more than a quarter of the compared "
            "values disagree in direction) or **not applicable offline**. Each section is headed by the paper label it "
            "reproduces, says what is computed and its sign convention, and holds a table and, for figures, a "
            "link to an interactive HTML figure in `figures/` (plotly.js is written once beside them, so the "
            "folder opens offline). Labels measured on the paper's unshipped data sets are reproduced on the "
            "shipped panels (LLMBar, HANNA) and on controlled or semi-real stand-ins, as each section says.\n\n"
            "## Paper label map\n\n" + label_map(sections))
    body = [sections[label].markdown() for label in PAPER_LABELS + THEORY_LABELS if label in sections]
    return "\n".join([head] + body)


def write_report(out: str, *, force: bool = False, **kwargs) -> str:
    """Write the report to ``out`` and its figures to ``figures/`` beside it. Refuses, before
    any computation, an existing ``out`` or figure file without ``force``; writes no other
    file."""
    from ...files.safe_write import OutputError, check_output_path, write_output
    target = check_output_path(out, force=force)
    folder = target.parent / "figures"
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"cannot write the figures to {str(folder)!r}: it is not a directory")
    if folder.is_dir():
        for name in FIGURE_FILES:
            check_output_path(folder / name, force=force)
    folder.mkdir(exist_ok=True)
    text = build_report(figures_dir=folder, force=force, **kwargs)
    write_output(out, text, force=force)
    return text
