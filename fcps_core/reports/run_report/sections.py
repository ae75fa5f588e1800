"""The sections every run kind shares (parameters, data provenance) and those of a sweep
and of a traffic audit."""

from __future__ import annotations

import json

from .blocks import Column, Figures, cards, esc, facts, fmt, interval, para, pct, table, terms
from .selection import cells_table
from ..names import family_name, judges_count
from .summary import count_text, flat_params, split_sizes


def parameters_section(run: dict, res: dict | None) -> str:
    out = []
    facts_rows = [("run_id", "run", f"{run['run_id']} ({run['kind']}, {run['status']})"),
                  ("seed", "seed", fmt(run.get("seed"))), ("version", "fcps version", fmt(run.get("version"))),
                  ("panel_version", "panel version", fmt(run.get("panel_version"))),
                  ("finished_at", "finished", fmt(run.get("finished_at"))),
                  ("seconds", "seconds", fmt(run.get("seconds"), 1))]
    if run.get("label"):
        facts_rows.insert(1, ("label", "label", run["label"]))
    if res and res.get("protocol"):
        facts_rows.insert(1, ("protocol", "protocol", res["protocol"]))
    if res and res.get("choice"):
        facts_rows.insert(2, ("choice", "choice rule", res["choice"]))
    out.append(facts(facts_rows))
    sizes = split_sizes((res or {}).get("split")) if run["kind"] == "select" else []
    if sizes:
        out.append("<h3>Split sizes</h3>")
        out.append(table([{**s, "rows": count_text(s["rows"]), "groups": count_text(s["groups"])} for s in sizes],
                         [Column("key", "block", "block"), Column("rows", "rows", "labelled rows", numeric=True),
                          Column("groups", "groups", numeric=True), Column("note", "note", "role")],
                         term_keys=["block"] + [s["key"] for s in sizes] + ["groups"]))
    params = run.get("params") or {}
    if params:
        out.append("<h3>Run parameters</h3>")
        if (res or {}).get("protocol") == "crossfit" and "blocks" in params:
            out.append(para("Under cross-fitting the blocks.* sizes are those of the initial split: S, M and V "
                            "are pooled into the deployable rows and folded (see Split sizes).", "muted"))
        flat = [{"parameter": k, "key": k.rsplit(".", 1)[-1], "value": fmt(v)}
                for k, v in flat_params(params).items()]
        out.append(table(flat, [Column("parameter", "parameter"), Column("value", "value")],
                         term_keys=[r["key"] for r in flat]))
    return "".join(out)


def provenance_section(run: dict, panel: dict | None) -> str:
    if panel is None:
        return para(f"The panel {run.get('panel_name')!r} is no longer in the store.", "muted")
    pairs = [(None, "panel", panel.get("name")), ("panel_version", "panel version", panel.get("version") or "-")]
    if run.get("panel_version") and panel.get("version") and run["panel_version"] != panel["version"]:
        pairs.append(("panel_version", "run computed on version", run["panel_version"]))
    pairs += [(None, "source", panel.get("source") or "-"),
              (None, "source SHA-256", panel.get("source_sha256") or "-"),
              (None, "licence", panel.get("licence") or "-"),
              (None, "rows / labelled / judges",
               f"{fmt(panel.get('n_rows'))} / {fmt(panel.get('n_labelled'))} / {fmt(panel.get('n_judges'))}"),
              (None, "schema", panel.get("schema") or "-"),
              (None, "imported", fmt(panel.get("created_at")))]
    if panel.get("label_note"):
        pairs.append((None, "labels", panel["label_note"]))
    out = [facts(pairs)]
    prov = panel.get("provenance")
    if prov:
        out.append("<h3>Provenance record</h3>")
        if isinstance(prov, dict):
            rows = "".join(f"<tr><th>{esc(k)}</th><td>{_prov_value(v)}</td></tr>" for k, v in prov.items())
            out.append(f'<table class="facts prov"><tbody>{rows}</tbody></table>')
        else:
            out.append(f"<pre>{esc(prov)}</pre>")
    return "".join(out)


def _prov_value(v) -> str:
    if isinstance(v, (dict, list)) and len(json.dumps(v, default=str)) > 160:
        return f"<details><summary>{len(v):,} entries</summary><pre>{esc(json.dumps(v, indent=1, default=str))}</pre></details>"
    if isinstance(v, list):
        return esc(", ".join(map(str, v)))
    if isinstance(v, dict):
        return esc(json.dumps(v, default=str))
    return esc(v)


def sweep_verdict_section(res: dict) -> str:
    cells = res.get("cells") or []
    out = []
    lines = []
    for c in cells:
        d, lo, hi = c.get("delta"), c.get("ci_low"), c.get("ci_high")
        if d is None:
            continue
        if hi is not None and hi < 0:
            say = "the joint-table menu is better"
        elif lo is not None and lo > 0:
            say = "the scalar menu is better"
        else:
            say = "the two menus are statistically tied"
        lines.append(f"At n_M = {c.get('n_M')}: {say} (table - scalar test MSE {fmt(d)}, 95% interval "
                     f"{interval([lo, hi])}).")
    out.append("".join(para(s, "verdict") for s in lines) or para("No budget produced a comparison.", "muted"))
    plan = res.get("plan") or {}
    if plan.get("answer"):
        out.append(para(f"Planning: {plan['answer']}"))
    return "".join(out) + terms(["delta", "n_M"])


def sweep_section(res: dict, figs: Figures) -> str:
    cells = res.get("cells") or []
    if not cells:
        return para("No cells stored.", "muted")
    out = [table(cells, [Column("n_M"), Column("splits"), Column("delta"), Column("delta_se"),
                         Column("ci_low", "delta_ci", "95% low"), Column("ci_high", "delta_ci", "95% high"),
                         Column("table_test_mse"), Column("scalar_test_mse"), Column("table_K_mean", digits=2),
                         Column("unseen_mean", show=pct), Column("V_cell_mean"), Column("V_proxy_mean"),
                         Column("regret_vs_K_le_3", header="regret vs K≤3")])]
    out.append(figs("sweep.calibration_growth_risk", cells))
    out.append(figs("sweep.gap_forest", cells))
    return "".join(out)


def audit_verdict_section(res: dict) -> str:
    status = res.get("status") or "-"
    reasons = res.get("reasons") or []
    p = res.get("predictor") or {}
    out = [f'<p class="verdict status-{esc(status.lower())}"><b>{esc(status)}</b>'
           + (": traffic sits on the calibration support." if not reasons else "") + "</p>"]
    if reasons:
        out.append("<ul>" + "".join(f"<li>{esc(r)}</li>" for r in reasons) + "</ul>")
    if p:
        out.append(para(f"{fmt(res.get('rows'))} traffic rows against the "
                        f"{family_name(p.get('display_name') or p.get('family'))} predictor over "
                        f"{judges_count(len(p.get('judges') or []))}, calibrated on {fmt(p.get('calibration_rows'))} rows."))
    return "".join(out) + terms(["status"])


def audit_judges_section(res: dict, figs: Figures) -> str:
    judges = res.get("judges") or []
    if not judges:
        return para("No per-judge drift stored.", "muted")
    return (table(judges, [Column("judge"), Column("tv", "tv", "TV"), Column("threshold"), Column("shifted"),
                           Column("psi", "psi", "PSI"), Column("missing_traffic", "missing_rate",
                                                               "missing (traffic)", show=pct)],
                  highlight=lambda r: bool(r.get("shifted")))
            + figs("panel.audit_drift_bars", judges))


def audit_cells_section(res: dict) -> str:
    """A traffic audit's support figures. Cell pressure and unseen patterns are a table's
    costs: for a scalar predictor they are left out of the cards and a sentence says why
    (the status does not use them either), so no "OK" stands beside a pressure near 1."""
    jd = res.get("joint_drift") or {}
    pred = res.get("predictor") or {}
    table_like = pred.get("table_like", True)
    lead = [] if table_like else [para(
        f"The deployed predictor ({pred.get('family', 'scalar')}) is scalar: it fits weights over the judges' "
        "outputs, not one value per output pattern, so cell pressure and unseen patterns do not apply to it and "
        "do not enter its status; outside support (an output or value calibration never saw) does.")]
    table_cards = [("cell_pressure", "cell pressure", fmt(res.get("pressure"))),
                   ("unseen_val", "unseen patterns", pct(res.get("unseen_rate")))] if table_like else []
    out = lead + [cards(table_cards + [
                  ("out_of_support", "outside support", pct(res.get("out_of_support_rate"))),
                  ("missing_rate", "rows with a missing output", pct(res.get("missing_rate"))),
                  ("tv", "joint pattern drift (TV)", fmt(jd.get("tv"), 3))])]
    if res.get("missing_behaviour"):
        out.append(para(f"Missing outputs: {res['missing_behaviour']}", "muted"))
    cells = res.get("cells") or []
    if cells:
        out.append(cells_table(cells, [Column("pattern"), Column("N_z"), Column("q_z", show=pct),
                                        Column("p_z", show=pct), Column("traffic_rows"), Column("prediction"),
                                        Column("unseen", "unseen_cell", "unseen")], total=res.get("n_cells")))
    return "".join(out)
