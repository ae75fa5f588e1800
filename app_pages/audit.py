import pandas as pd
import streamlit as st

from fcps_core.service.reports import (count_text, family_name, named_pattern, path_name, pressure_applies,
                                       table_like_families)
from fcps_core.figures.selection import risk_vs_pressure
from fcps_app.common import figure_download, md, table_download
from fcps_app.glossary import glossary_expander, metric, number, table
from fcps_app.run_picker import pick_run

st.title("Cell-pressure audit")
st.markdown("A joint table must earn its cells: each output pattern z of the candidate's K judges is one "
            "cell, fitted on its N_z calibration rows. Unseen and thin cells are where the table pays "
            "variance (V_cell, V_proxy); the charts set each table-like candidate's held-out risk against "
            "that pressure.")
picked = pick_run("audit", ("select",), empty="Run a selection on the Select page (or pick another panel): "
                  "its candidates are audited here.")
if picked.state is None:
    glossary_expander()
    st.stop()
result = picked.state["result"]     # None for a stored run: its dict holds candidates + selected cells
d = picked.state["dict"]
TABLE_LIKE = table_like_families()
# what the audit means for the deployed predictor: all of it, its table-like members, or none
applies, why = pressure_applies(d, TABLE_LIKE)
{"all": st.info, "some": st.info, "none": st.warning}[applies](md(why))
# cells and table pressure are audited for table-like candidates only (a scalar one fits no cells)
cands = [c for c in d["candidates"] if c.get("H_K") is not None and c["family"] in TABLE_LIKE]
if not cands:
    st.info("No table-like candidate in this selection's menu (or continuous judges only): nothing to audit.")
    glossary_expander()
    st.stop()
n_M = d["split"]["n_fit"]
m = st.columns(4)
metric(m[0], "menu_size", f"{d.get('menu_size', len(d['candidates'])):,}", label="menu size |C|")
metric(m[1], "n_M", count_text(n_M), label="n_M (fitting rows)",
       extra="Under cross-fitting: the mean over folds of each fold's fitting rows.")
metric(m[2], "validation_scale", "-" if d.get("validation_scale") is None else f"{d['validation_scale']:.4f}",
       label="validation scale")
metric(m[3], "theorem1_bound", "-" if d.get("theorem1_bound") is None else f"{d['theorem1_bound']:.4f}",
       label="Theorem 1 bound")

stored_cells_of = d["selected"]["index"]      # a stored run keeps this candidate's cells only
table_ids = {c["index"] for c in cands}
deployed_ids = [mm["index"] for mm in d["selected"].get("members") or []] or [stored_cells_of]
deployed_tables = [i for i in deployed_ids if i in table_ids]
default = deployed_tables[0] if deployed_tables else min(
    cands, key=lambda c: c.get("val_risk", c.get("val_mse")) or float("inf"))["index"]


def cand_label(c: dict) -> str:
    risk = c.get("val_risk", c.get("val_mse"))
    tag = " (selected)" if c["index"] == stored_cells_of else " (deployed member)" if c["index"] in deployed_ids else ""
    return f"{family_name(c['family'])} K={c['K']} {path_name(c['path'])}" + (f" (held-out risk {risk:.4f})" if risk is not None else "") + tag


labels = {c["index"]: cand_label(c) for c in cands}
choice = st.selectbox("Candidate", list(labels), index=list(labels).index(default), format_func=labels.get,
                      help="Every table-like candidate (one value per joint output pattern of its prefix); "
                           "the deployed one, or the deployed average's best table-like member, by default.")
cand = next(c for c in d["candidates"] if c["index"] == choice)


def compact(v) -> str:
    """A possibly astronomical count (Q_K is a product of alphabet sizes) short enough for a
    metric: whole up to a million, then three significant digits ("8.61e+09"), never cut."""
    return "-" if v is None else number(v, "compact")


def fmt(v):
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return "-" if v is None else (f"{v:.4g}" if isinstance(v, float) else f"{v:,}" if isinstance(v, int) else str(v))


m = st.columns([2, 1, 1, 1, 1])      # the family's name is long ("backoff", "residual"): room for it
metric(m[0], "family", family_name(cand["family"]))
metric(m[1], "K", fmt(cand["K"]), label="prefix K", extra="Judges: " + ", ".join(md(j) for j in cand.get("judges") or []))
metric(m[2], "val_risk", fmt(cand.get("val_risk", cand.get("val_mse"))), label="held-out risk")
metric(m[3], "unseen_val", fmt(cand.get("unseen_val")), label="unseen rate")
metric(m[4], "Q_K", compact(cand["Q_K"]))
m = st.columns(5)
metric(m[0], "S_K", fmt(cand["S_K"]))
metric(m[1], "H_K", fmt(cand["H_K"]))
metric(m[2], "H_K/n_M", fmt(cand["H_K"] / n_M if cand["H_K"] is not None and n_M else None), label="H_K / n_M")
metric(m[3], "V_cell", fmt(cand.get("V_cell")))
metric(m[4], "V_proxy", fmt(cand.get("V_proxy")))

st.subheader("Cells")
if result is not None:
    rows = result.cell_table(choice)
elif choice == stored_cells_of:
    rows = d.get("cells") or []
else:
    rows = None
    kept = (f"({labels[stored_cells_of]}). Pick that candidate, or run" if stored_cells_of in labels else
            "(a scalar one, which fits no cells). Run")
    st.info(f"Stored run {picked.run_id} keeps the cell table of its selected candidate only {kept} the selection "
            "again on the Select page to audit this one's cells; its figures above and the charts below are stored.")
if rows is not None and not rows:
    st.info("This candidate has no cells to show.")
elif rows:
    thin = st.slider("thin cell: N_z below", 1, 50, 5,
                     help="Cells fitted on fewer calibration rows than this are marked thin.")
    cells = pd.DataFrame(rows)
    # every pattern names its judges ("judge1 = A · judge2 ≥ 0.851"), in the candidate's order
    cells["pattern"] = [named_pattern(p, list(cand.get("judges") or [])) for p in cells["pattern"]]
    cells["status"] = ["unseen" if u else ("thin" if n < thin else "") for u, n in zip(cells["unseen"], cells["N_z"])]
    only = st.toggle("only unseen and thin cells", help="The table lists well-covered cells first; this shows "
                                                        "only the cells where the table pays variance.")
    if only:
        cells = cells[cells["status"] != ""]
    cells = cells.drop(columns=["unseen"]).rename(columns={
        "mean_label": "mean label (M)", "prediction": "mean prediction", "freq_val": "share of held-out rows",
        "freq_test": "share of T rows", "status": "cell status"})

    def shade(row):
        color = {"unseen": "background-color: rgba(214,39,40,0.18)",
                 "thin": "background-color: rgba(255,165,0,0.18)"}.get(row["cell status"], "")
        return [color] * len(row)

    # a run without a research test block T has no "share of T rows": the table leaves it out
    table(cells, row_style=shade, formats={"mean label (M)": "%.3f", "mean prediction": "%.3f",
                                           "share of held-out rows": "%.4f", "share of T rows": "%.4f"})
    n_unseen, n_thin = (cells["cell status"] == "unseen").sum(), (cells["cell status"] == "thin").sum()
    st.caption(f"{n_unseen} unseen (red) and {n_thin} thin (orange) cells; N_z counts the rows the candidates "
               f"were fitted on ({count_text(n_M)}). A continuous judge's output is its bin (≥ lower edge, "
               "< upper edge, or in [low, high)).")
    table_download(cells, "cells")

table_like = [c for c in d["candidates"] if c["family"] in TABLE_LIKE and c.get("H_K") is not None]
st.subheader("Held-out risk against cell pressure")
st.caption("One point per table-like candidate of this selection: its held-out (validation) risk against "
           "the unseen rate (left) and H_K / n_M (right).")
c1, c2 = st.columns(2)
with c1:
    fig = risk_vs_pressure(table_like, n_M, x="unseen_val")
    st.plotly_chart(fig)
    figure_download(fig, "risk-vs-unseen")
with c2:
    fig = risk_vs_pressure(table_like, n_M, x="H_K/n_M")
    st.plotly_chart(fig)
    figure_download(fig, "risk-vs-support")
glossary_expander()
