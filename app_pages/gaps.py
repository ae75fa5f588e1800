import pandas as pd
import streamlit as st

from fcps_core.figures.sweep import ablation_bars, family_shares, gap_forest, oracle_gap
from fcps_app.common import figure_download, md_list, table_download
from fcps_app.glossary import glossary_expander, table
from fcps_app.run_picker import pick_run

#: the interval here is of delta (table - scalar) over splits
DELTA_CI = {"95% low": "Lower end of the paired 95% interval of delta (table - scalar) over splits.",
            "95% high": "Upper end of the paired 95% interval of delta (table - scalar) over splits."}
#: one format per column: risks at 4 decimals, differences signed, K at one decimal
FORMATS = {"n_M": "%d", "table test MSE": "%.4f", "scalar test MSE": "%.4f", "delta (table - scalar)": "%+.4f",
           "95% low": "%+.4f", "95% high": "%+.4f", "mean table K": "%.1f", "regret vs K<=3": "%+.4f"}

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
           f"{md_list(settings.get('families') or []) or '?'}. All risks here are **test risks** (block T).")
rows = pd.DataFrame([{"n_M": c["n_M"], "table test MSE": c.get("table_test_mse"),
                      "scalar test MSE": c.get("scalar_test_mse"), "delta (table - scalar)": c.get("delta"),
                      "95% low": c.get("ci_low"), "95% high": c.get("ci_high"),
                      "mean table K": c.get("table_K_mean"), "regret vs K<=3": c.get("regret_vs_K_le_3")}
                     for c in cells])
table(rows, helps=DELTA_CI, formats=FORMATS)
table_download(rows, "cross-budget-gaps")
for fig, name, caption in (
        (gap_forest(cells), "gap-forest", "Positive delta favours scalar aggregation."),
        (oracle_gap(cells), "oracle-gap", "Dotted: non-deployable test-oracle envelopes."),
        (family_shares(cells), "family-shares", "Families chosen by the full menu across splits."),
        (ablation_bars(cells), "k-family-ablation", "Per menu and budget: test MSE with the largest prefix K "
                                                    "(open circle) and with the validation-selected K (filled); "
                                                    "left is better.")):
    st.plotly_chart(fig)
    st.caption(caption)
    figure_download(fig, name)
glossary_expander()
