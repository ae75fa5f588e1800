"""Paper reproduction: browse the paper's per-candidate tables and figures for one stored
calibration-growth sweep (every candidate of every split, ``Store.sweep_candidates``), and
the command that regenerates the whole reproduction report."""

import pandas as pd
import streamlit as st

from fcps_core.service.paper import sweep_analyses
from fcps_core.figures.paper import binned_relation, over_budget, risk_over_k
from fcps_app.common import figure_download, get_store, table_download
from fcps_app.glossary import dataframe, glossary_expander
from fcps_app.run_picker import pick_run

pa = sweep_analyses()

# Columns of this page the glossary has no entry for.
HELP = {
    "mean": "Mean over splits.", "median": "Median over splits.",
    "p10": "10th percentile over splits.", "p90": "90th percentile over splits.",
    "n": "Number of values (splits or candidates) behind the row.",
    "x_low": "Lower edge of the quantile bin of the x quantity.", "x_high": "Upper edge of the bin.",
    "x_median": "Median of the x quantity inside the bin.", "y_median": "Median test MSE inside the bin.",
    "y_p10": "10th percentile of test MSE inside the bin.", "y_p90": "90th percentile of test MSE inside the bin.",
    "diagnostic": "What the row measures (paper label in the heading above).",
    "estimate": "Standardized OLS slope of demeaned test MSE on the demeaned diagnostic (tab:controlled-complexity).",
    "se": "OLS standard error of the slope.", "units": "Candidates (split, budget, path, K) in the regression.",
    "groups": "Budget-path groups the values were demeaned within (or correlated inside).",
    "mean_within_group_corr": "Mean over budget-path groups of corr(H_K/n_M, test MSE) inside the group.",
    "positive_fraction": "Share of groups whose correlation is positive.",
    "additive_test_mse": "Mean test MSE of the validation-best all-K additive stacker (ridge or logistic).",
    "pairwise_test_mse": "Mean test MSE of the validation-best all-K pairwise-feature stacker.",
    "pairwise_minus_additive": "Pairwise minus additive test MSE: positive means the products do not pay.",
    "pairwise_share": "Share of the scalar menu's choices that use pairwise features.",
    "splits": "Grouped splits behind the row.",
    "uncertainty": "Bootstrap interval or test p-value of the estimate.",
    "d_risk_share_below_zero": "Share of K -> K+1 steps that lowered test MSE (the added judge helped).",
    "steps": "K -> K+1 steps of the joint table over paths, splits and budgets.",
}
COMMAND = "python -m fcps_core report --out docs/reproduction.md --splits 30 --force"

st.title("Paper reproduction")
st.markdown("The paper's per-candidate diagnostics for one stored calibration-growth sweep: every candidate of "
            "every split, not only each menu's choice. Each table and figure names the paper label it "
            "reproduces. Risks are **test risks** on the research test block T (it never informs a choice).")
with st.expander("Regenerate every table and figure of the paper"):
    st.markdown("The full reproduction report (every reproducible table and figure label, on the shipped "
                "panels, the controlled regimes and the seven robustness checks; about three minutes on two "
                "cores) is written by the command below into `docs/reproduction.md`, with interactive figures "
                "in `docs/figures/`. The repository ships the last generated copy.")
    st.code(COMMAND, language="bash")

picked = pick_run("reproduction", ("sweep",), empty="Run a calibration-growth sweep on the Regime map page (or "
                  "the Synthetic lab), or pick another panel.")
if picked.state is None:
    glossary_expander()
    st.stop()
if picked.run_id is None:
    st.info("This session's sweep is not stored, and only stored sweeps keep every candidate's figures. Store "
            "the panel and rerun the sweep on the Regime map page to browse it here.")
    st.stop()


@st.cache_data(show_spinner="Loading the sweep's candidate records...", max_entries=8)
def candidates(store_path: str, run_id: int) -> pd.DataFrame:
    """A stored sweep's candidate records (cached per store and run: they never change)."""
    return get_store().sweep_candidates(int(run_id))


frame = candidates(str(get_store().path), picked.run_id)
if frame.empty:
    st.info(f"Run {picked.run_id} stores no per-candidate records: it was stored before the store kept them "
            "(schema 7). Rerun the sweep on the Regime map page to browse it here.")
    st.stop()
pname = picked.state["data"].get("panel") or "panel"
records = picked.state["data"].get("records") or []
records = records if not records or "menus" in records[0] else pa.nest_records(records)
records = [{**r, "panel": pname} for r in records]
frame = frame.assign(panel=pname)
table = frame[frame["family"] == "table"]
settings = picked.state["data"].get("settings") or {}
st.caption(f"{len(frame):,} candidate records: {frame['split'].nunique()} splits x {frame['n_M'].nunique()} "
           f"budgets; families: {', '.join(sorted(frame['family'].unique()))}.")


def show(df: pd.DataFrame, name: str) -> None:
    dataframe(df, column_config={k: st.column_config.Column(help=v) for k, v in HELP.items() if k in df.columns})
    table_download(df, f"{name}-data")


def chart(fig, name: str, caption: str) -> None:
    st.plotly_chart(fig)
    st.caption(caption)
    figure_download(fig, name)


if table.empty:
    st.info("This sweep fitted no joint table, so the prefix diagnostics below have nothing to show; rerun it "
            "with the table family.")
else:
    budgets = sorted(table["n_M"].unique())
    n_M = st.selectbox("Budget n_M for the curves over K", budgets, index=len(budgets) - 1,
                       help="The calibration budget whose joint-table candidates the curves over K show.")
    at = table[table["n_M"] == n_M]
    tab_k, tab_p, tab_m, tab_s = st.tabs(["Risk over K", "Pressure and risk", "Marginal judge", "Scalar vs table"])
    with tab_k:
        st.subheader("fig:risk-k — joint-table test risk over K")
        risk = pa.curves_over_k(at, "test_mse")
        chart(risk_over_k(risk.to_dict("records"), y_title="test MSE"), "fig-risk-k",
              "Mean over splits per path, shaded: 10-90% split band (fig:uncertainty-diagnostics (a)).")
        show(risk, "fig-risk-k")
        st.subheader("fig:validation-risk — validation risk over K")
        val = pa.curves_over_k(at, "val_risk")
        chart(risk_over_k(val.to_dict("records"), y_title="validation risk", stars=True, band=False),
              "fig-validation-risk", "Stars: each path's minimum of the mean validation risk.")
        show(val, "fig-validation-risk")
        st.subheader("fig:selected-k — selected table K over budgets")
        chosen = pa.selected_rows(frame, "table")
        if not chosen.empty:
            ks = chosen.groupby("n_M")["K"].agg(mean="mean", p10=lambda v: v.quantile(0.1),
                                               p90=lambda v: v.quantile(0.9)).reset_index()
            chart(over_budget({"table menu": ks.to_dict("records")}, y_title="selected K"), "fig-selected-k",
                  "The table menu's validation choice: mean and 10-90% band over splits.")
            show(ks, "fig-selected-k")
    with tab_p:
        d = table.assign(H_per_n=table["H_K"].astype(float) / table["n_M"].astype(float))
        for label, col, xt in (("fig:complexity-risk", "H_per_n", "H_K / n_M"),
                               ("fig:unseen-risk", "unseen_test", "test unseen-pattern rate")):
            st.subheader(f"{label} — test risk versus {xt}")
            bins = pa.quantile_bins(d[col], d["test_mse"])
            chart(binned_relation({(1, 1): {"name": "joint table", "bins": bins}}, x_title=xt, y_title="test MSE"),
                  label.replace(":", "-"), "Every joint-table candidate (all paths, K, budgets, splits): binned "
                                           "median and 10-90% band.")
            show(pd.DataFrame(bins), label.replace(":", "-"))
        st.subheader("fig:complexity-risk-path — by path rule")
        paths = list(dict.fromkeys(d["path"]))
        facets = {(1, i + 1): {"name": p, "bins": pa.quantile_bins(g["H_per_n"], g["test_mse"])}
                  for i, (p, g) in enumerate(d.groupby("path", sort=False))}
        chart(binned_relation(facets, x_title="H_K / n_M", y_title="test MSE", titles=paths),
              "fig-complexity-risk-path", "One column per path rule.")
        st.subheader("tab:controlled-complexity — residualized regressions")
        show(pd.DataFrame(pa.controlled_complexity(table)), "tab-controlled-complexity")
        st.subheader("tab:within-group-correlation")
        show(pd.DataFrame(pa.within_group_correlation(table)), "tab-within-group-correlation")
    with tab_m:
        st.subheader("fig:marginal — risk change from K to K+1 against the complexity increase")
        deltas = pa.marginal_deltas(table)
        if deltas.empty:
            st.info("No consecutive prefixes to compare.")
        else:
            bins = pa.quantile_bins(deltas["d_complexity"], deltas["d_risk"])
            chart(binned_relation({(1, 1): {"name": "K -> K+1", "bins": bins}}, x_title="Delta(H_K / n_M)",
                                  y_title="Delta test MSE", zero_line=True), "fig-marginal",
                  "Below zero: adding the next judge lowered test risk. Binned median and 10-90% band.")
            show(pd.DataFrame([{"steps": len(deltas),
                                "d_risk_share_below_zero": float((deltas["d_risk"] < 0).mean())}]), "fig-marginal")
    with tab_s:
        st.subheader("tab:interaction-diagnostic — additive versus pairwise stackers")
        inter = pa.interaction_diagnostic(frame, records)
        if inter:
            show(pd.DataFrame(inter), "tab-interaction-diagnostic")
        else:
            st.info("Needs both additive (ridge_iso / logistic) and pairwise-feature stackers in the sweep.")
        st.subheader("tab:theory-proxy-winner — does the proxy predict the winner?")
        units = pa.proxy_units(frame, records)
        if units.empty:
            st.info("Needs table and scalar menus and both kinds of stacker in the sweep.")
        else:
            rows = pa.theory_proxy_winner(units, n_boot=500, n_perm=500)
            show(pd.DataFrame([{k: (str(v) if k in ("estimate", "ci") else v) for k, v in r.items()}
                               for r in rows]), "tab-theory-proxy-winner")
st.caption(f"Sweep settings: S/V/T = {settings.get('n_select', '?')}/{settings.get('n_val', '?')}/"
           f"{settings.get('n_test', '?')}, {settings.get('splits', '?')} splits.")
glossary_expander()
