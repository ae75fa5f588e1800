import pandas as pd
import streamlit as st

from fcps_core.plots import ablation_bars, family_shares, gap_forest, oracle_gap
from fcps_app.common import figure_download, table_download

st.title("Scalar vs table gaps")
sweep = st.session_state.get("sweep")
if not sweep:
    st.info("Run a calibration-growth sweep on the Regime map page (or the Synthetic lab) first.")
    st.stop()
cells = sweep["data"]["cells"]
st.caption(f"Panel: {sweep['label']}; {sweep['data']['settings']['splits']} grouped splits.")
rows = pd.DataFrame([{"n_M": c["n_M"], "table": c.get("table_test_mse"), "scalar": c.get("scalar_test_mse"),
                      "delta (table - scalar)": c.get("delta"), "ci_low": c.get("ci_low"),
                      "ci_high": c.get("ci_high"), "table K": c.get("table_K_mean"),
                      "regret vs K<=3": c.get("regret_vs_K_le_3")} for c in cells])
st.dataframe(rows, hide_index=True)
table_download(rows, "cross-budget-gaps")
for fig, name, caption in (
        (gap_forest(cells), "gap-forest", "Positive delta favours scalar aggregation."),
        (oracle_gap(cells), "oracle-gap", "Dotted: non-deployable test-oracle envelopes."),
        (family_shares(cells), "family-shares", "Families chosen by the full menu across splits."),
        (ablation_bars(cells), "k-family-ablation", "Largest prefix vs validation-selected K per menu.")):
    st.plotly_chart(fig)
    st.caption(caption)
    figure_download(fig, name)
