import json

import pandas as pd
import streamlit as st

from fcps_core import FCPSError
from fcps_core.explain import verdict
from fcps_core.plots import calibration_growth_risk, gap_forest, validation_risk_over_k
from fcps_app.common import figure_download, get_store, table_download
from fcps_app.deploy_view import show_audit

st.title("Results browser")
store = get_store()
runs = pd.DataFrame(store.runs())
if runs.empty:
    st.info("No runs stored yet: run a selection or a sweep on a stored panel.")
    st.stop()
runs["finished_at"] = pd.to_datetime(runs["finished_at"])

c1, c2, c3, c4 = st.columns(4)
panel_f = c1.multiselect("panel", sorted(runs["panel"].dropna().unique()))
kind_f = c2.multiselect("kind", sorted(runs["kind"].unique()))
family_f = c3.multiselect("selected family", sorted(runs["family"].dropna().unique()))
dates = runs["finished_at"].dropna()
day_f = c4.date_input("finished between", (dates.min().date(), dates.max().date())) if len(dates) else None
view = runs
if panel_f:
    view = view[view["panel"].isin(panel_f)]
if kind_f:
    view = view[view["kind"].isin(kind_f)]
if family_f:
    view = view[view["family"].isin(family_f)]
if day_f and isinstance(day_f, tuple) and len(day_f) == 2:
    view = view[(view["finished_at"].dt.date >= day_f[0]) & (view["finished_at"].dt.date <= day_f[1])]
st.dataframe(view.drop(columns=["error"], errors="ignore"), hide_index=True)
table_download(view, "runs")


def parse_ids(text: str | None) -> list[int]:
    out = []
    for part in (text or "").split(","):
        if part.strip().isdigit():
            out.append(int(part))
    return out


# Deep links: ?run=ID opens a run, ?compare=ID1,ID2 opens a side-by-side comparison.
linked = parse_ids(st.query_params.get("run"))
compare = parse_ids(st.query_params.get("compare"))
ids = view["run_id"].tolist()
chosen = st.multiselect("Open runs (two or more: side by side)", runs["run_id"].tolist(),
                        default=[i for i in (compare or linked) if i in runs["run_id"].tolist()])
if not chosen:
    st.caption("Pick runs above, or open a deep link such as ?run=1 or ?compare=1,2.")
    st.stop()
st.query_params["compare" if len(chosen) > 1 else "run"] = ",".join(map(str, chosen))
if len(chosen) > 1 and "run" in st.query_params:
    del st.query_params["run"]


def show_run(run_id: int) -> None:
    try:
        run = store.run(run_id)
    except FCPSError as exc:
        st.error(str(exc))
        return
    st.markdown(f"**Run {run_id}** · {run['kind']} on `{run['panel_name']}` · {run['status']} · seed {run['seed']} "
                f"· fcps {run['version']}")
    if run["status"] != "done":
        st.error(run.get("error") or "the run did not finish")
        return
    res = run["result"]
    if run["kind"] == "select":
        sel = res["selected"]
        st.metric("selected", f"{sel['family']} K={sel['K']}")
        if "deployed_risk" in res:
            st.write(verdict(res))
        st.caption(", ".join(sel["judges"]))
        rg = res.get("regime") or {}
        if rg.get("quadrant"):
            st.info(f"{rg['quadrant'].replace('_', ' ')}: gain {rg['interaction_gain']:.4f}, "
                    f"pressure {rg['table_pressure']:.4f}")
        fig = validation_risk_over_k(res["candidates"], selected=sel)
        st.plotly_chart(fig, key=f"k-{run_id}")
        figure_download(fig, f"run-{run_id}-risk-over-K")
        cands = pd.DataFrame(res["candidates"]).drop(columns=["params", "judges"], errors="ignore")
        st.dataframe(cands.sort_values("val_mse"), hide_index=True, key=f"c-{run_id}")
        st.page_link("app_pages/deploy.py", label="Deploy this predictor on traffic (Deploy & monitor)",
                     query_params={"run": str(run_id)})
    elif run["kind"] == "audit":
        show_audit(res, key=f"audit-{run_id}")
        st.page_link("app_pages/deploy.py", label="Audit new traffic on the Deploy & monitor page")
    else:
        cells = res["cells"]
        for fig, name in ((calibration_growth_risk(cells), "risk"), (gap_forest(cells), "gaps")):
            st.plotly_chart(fig, key=f"{name}-{run_id}")
            figure_download(fig, f"run-{run_id}-{name}")
    st.download_button("Export run (JSON)", lambda: store.export_run(run_id, "json"), f"run-{run_id}.json",
                       key=f"exp-{run_id}")
    with st.expander("parameters"):
        st.code(json.dumps(run["params"], indent=1, default=str), language="json")


cols = st.columns(len(chosen)) if len(chosen) > 1 else [st.container()]
for col, run_id in zip(cols, chosen):
    with col:
        show_run(run_id)
