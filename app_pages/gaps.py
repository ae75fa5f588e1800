import pandas as pd
import streamlit as st

from fcps_core.plots import ablation_bars, family_shares, gap_forest, oracle_gap
from fcps_app.common import figure_download, table_download
from fcps_app.glossary import dataframe, glossary_expander
from fcps_app.run_picker import pick_run

# Columns the glossary has no entry for (kept here until it does).
GAP_HELP = {"table test MSE": "Mean test-block MSE over splits of the candidate the table menu chose on "
                              "validation.",
            "scalar test MSE": "Mean test-block MSE over splits of the candidate the scalar menu chose on "
                               "validation.",
            "95% low": "Lower end of the paired 95% interval of delta (table - scalar) over splits.",
            "95% high": "Upper end of the paired 95% interval of delta (table - scalar) over splits.",
            "mean table K": "Mean prefix K the table menu chose over splits (how many judges its table used)."}

st.title("Scalar vs table gaps")
st.markdown("A calibration-growth sweep repeats the whole selection on grouped random splits at each "
            "calibration budget n_M, once with table-like families only and once with scalar ones, and "
            "scores both choices on the research test block T. **delta (table - scalar)** above 0 "
            "favours scalar aggregation; an interval that excludes 0 is a clear winner at that budget.")
picked = pick_run("gaps", ("sweep",), empty="Run a calibration-growth sweep on the Regime map page (or the "
                 "Synthetic lab), or pick another panel.")
if picked.state is None:
    glossary_expander()
    st.stop()
data = picked.state["data"]
cells = data["cells"]
settings = data.get("settings") or {}
st.caption(f"{settings.get('splits', '?')} grouped splits per budget; families: "
           f"{', '.join(settings.get('families') or []) or '?'}. All risks here are **test risks** (block T).")
rows = pd.DataFrame([{"n_M": c["n_M"], "table test MSE": c.get("table_test_mse"),
                      "scalar test MSE": c.get("scalar_test_mse"), "delta (table - scalar)": c.get("delta"),
                      "95% low": c.get("ci_low"), "95% high": c.get("ci_high"),
                      "mean table K": c.get("table_K_mean"), "regret vs K<=3": c.get("regret_vs_K_le_3")}
                     for c in cells])
dataframe(rows, column_config={k: st.column_config.Column(help=v) for k, v in GAP_HELP.items()})
table_download(rows, "cross-budget-gaps")
for fig, name, caption in (
        (gap_forest(cells), "gap-forest", "Positive delta favours scalar aggregation."),
        (oracle_gap(cells), "oracle-gap", "Dotted: non-deployable test-oracle envelopes."),
        (family_shares(cells), "family-shares", "Families chosen by the full menu across splits."),
        (ablation_bars(cells), "k-family-ablation", "Largest prefix vs validation-selected K per menu.")):
    st.plotly_chart(fig)
    st.caption(caption)
    figure_download(fig, name)
glossary_expander()
