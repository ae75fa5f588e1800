"""One exportable report per stored run: a single self-contained HTML file.

    run_report_html(store, run_id)                  # the HTML text
    write_run_report(store, run_id, "run-3.html")   # written safely (never over a file unless force)
    python -m fcps_core export run:3 --format html --out run-3.html [--no-figures]

The sections come in a fixed order, verdict first. A selection has all of them::

    Verdict, Judges, Candidates, Regime, Cell pressure, Baselines, Parameters, Data provenance

a sweep has Verdict (the table-minus-scalar gap per budget), Calibration growth, Parameters,
Data provenance; a traffic audit has Verdict (its status), Judges (drift), Cell pressure,
Parameters, Data provenance; a failed run has Verdict (its error), Parameters, Data provenance.

The file needs nothing else to open, offline: the CSS is inline and plotly.js is embedded
once (``figures=False`` leaves every figure and the 4.6 MB of plotly.js out). Every value
that came from a user (judge and panel names, notes, provenance) is HTML-escaped, and
figure data is embedded as JSON with ``<``, ``>`` and ``&`` escaped, so no stored text can
become markup or script. Under every table and headline figure the report prints what its
terms mean (the words of :mod:`fcps_core.reports.glossary`).
"""

from __future__ import annotations

import datetime as _dt

from .blocks import CSS, Figures, esc, fmt, missing_terms, words
from .sections import (audit_cells_section, audit_judges_section, audit_verdict_section, parameters_section,
                       provenance_section, sweep_section, sweep_verdict_section)
from .selection import (baselines_section, candidates_section, cells_section, frontier_section, judges_section,
                        regime_section, verdict_section)
from .summary import flat_params, run_facts, split_sizes

__all__ = ["SECTIONS", "flat_params", "missing_terms", "run_facts", "run_report", "run_report_html",
           "split_sizes", "words", "write_run_report"]

#: section titles by run kind, in report order (a section with nothing to show is kept
#: with a one-line note, so the order is the same for every run of a kind)
SECTIONS = {
    "select": ("Verdict", "Judges", "Candidates", "Regime", "Cell pressure", "Baselines", "Parameters",
               "Data provenance"),
    "sweep": ("Verdict", "Calibration growth", "Parameters", "Data provenance"),
    "audit": ("Verdict", "Judges", "Cell pressure", "Parameters", "Data provenance"),
    "failed": ("Verdict", "Parameters", "Data provenance"),
}


def _slug(title: str) -> str:
    return title.lower().replace(" ", "-")


def run_report(run: dict, panel: dict | None, *, figures: bool = True) -> str:
    """The report of a stored run (``Store.run(id)``) and its panel record
    (``Store.panel_info(name)``, or None when gone), as one HTML document."""
    from ...version import __version__
    figs = Figures(figures)
    res = run.get("result") or {}
    kind = run["kind"] if run.get("status") == "done" and res else "failed"
    body: dict[str, str] = {}
    if kind == "failed":
        body["Verdict"] = (f'<p class="verdict status-refuse"><b>This run {esc(run.get("status"))}</b>: '
                           f'{esc(run.get("error") or "it stored no result")}</p>')
    elif kind == "select":
        body["Verdict"] = verdict_section(res, run) + frontier_section(res, figs)
        body["Judges"] = judges_section(res)
        body["Candidates"] = candidates_section(res, figs)
        body["Regime"] = regime_section(res, figs)
        body["Cell pressure"] = cells_section(res)
        body["Baselines"] = baselines_section(res)
    elif kind == "sweep":
        body["Verdict"] = sweep_verdict_section(res)
        body["Calibration growth"] = sweep_section(res, figs)
    else:
        body["Verdict"] = audit_verdict_section(res)
        body["Judges"] = audit_judges_section(res, figs)
        body["Cell pressure"] = audit_cells_section(res)
    body["Parameters"] = parameters_section(run, res if kind != "failed" else None)
    body["Data provenance"] = provenance_section(run, panel)
    titles = SECTIONS[kind]
    kind_word = {"select": "selection", "sweep": "calibration-growth sweep", "audit": "traffic audit"}.get(
        run["kind"], run["kind"])
    title = f"fcps run {run['run_id']}: {kind_word} on {run.get('panel_name')}"
    note = f'<p class="note"><b>Note:</b> {esc(run["note"])}</p>' if run.get("note") else ""
    nav = "<nav><ol>" + "".join(f'<li><a href="#{_slug(t)}">{esc(t)}</a></li>' for t in titles) + "</ol></nav>"
    sections = "".join(f'<section id="{_slug(t)}"><h2>{esc(t)}</h2>{body[t]}</section>' for t in titles)
    generated = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
            f"<header><h1>{esc(title)}</h1>"
            f'<p class="meta">{esc(run.get("status"))} · finished {esc(fmt(run.get("finished_at")))} · seed '
            f'{esc(fmt(run.get("seed")))} · fcps {esc(run.get("version"))}'
            + (f' · label {esc(run["label"])}' if run.get("label") else "") + "</p>"
            f"{note}{nav}</header>{sections}"
            f"<footer>Generated by fcps {esc(__version__)} on {generated} from the stored run "
            f"{run['run_id']}. Hover a column header or a headline figure for its definition; the terms under each "
            "table say the same in words.</footer></body></html>\n")


def run_report_html(store, run_id: int, *, figures: bool = True) -> str:
    """The HTML report of stored run ``run_id`` (see the module doc)."""
    from ...errors import StoreError
    run = store.run(int(run_id))
    try:
        panel = store.panel_info(run["panel_name"])
    except StoreError:
        panel = None
    return run_report(run, panel, figures=figures)


def write_run_report(store, run_id: int, out, *, force: bool = False, figures: bool = True) -> str:
    """Write the report to ``out`` atomically (an existing file only with ``force``);
    returns the path written."""
    from ...files.safe_write import check_output_path, write_output
    check_output_path(out, force=force)
    write_output(out, run_report_html(store, run_id, figures=figures), force=force)
    return str(out)
