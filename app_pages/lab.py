import streamlit as st

from fcps_core.diagnostics import gap_verdict
from fcps_core.plots import calibration_growth_risk, gap_forest
from fcps_core.synthetic import make_regime
from fcps_app.common import figure_download, run_sweep

st.title("Synthetic lab")
st.markdown("Generate a controlled regime and watch the winner flip as calibration labels grow: additive "
            "targets stay scalar-favoured, interactions favour the joint table once cells are covered.")
with st.form("lab_form"):
    c1, c2, c3 = st.columns(3)
    regime = c1.selectbox("regime", ["additive", "mixed", "parity", "xor", "and", "strength"])
    gamma = c1.slider("interaction strength gamma (strength)", 0.0, 1.0, 0.5)
    rows = c2.number_input("rows", 500, 20_000, 2500, step=500)
    judges = c2.number_input("judges", 2, 10, 6)
    budgets = c3.text_input("n_M budgets", "16,64,256,1024")
    splits = c3.number_input("splits", 2, 50, 4)
    seed = c3.number_input("seed", 0, 10_000, 0)
    go = st.form_submit_button("Generate and sweep", type="primary")
if go:
    panel = make_regime(regime, rows=int(rows), judges=int(judges), seed=int(seed), gamma=gamma,
                        parity_order=min(int(judges), 6))
    st.session_state["lab_panel"] = panel
    bar = st.progress(0.0, text="starting")
    fixed = max(50, int(rows) // 10)
    try:
        data = run_sweep(panel, [int(b) for b in budgets.split(",") if b.strip()],
                         lambda f, m: bar.progress(min(f, 1.0), text=m), n_select=fixed, n_val=fixed,
                         n_test=2 * fixed, splits=int(splits), families=["table", "backoff", "mean_iso",
                                                                         "ridge_iso", "logistic"], seed=int(seed))
    except ValueError as exc:
        st.error(str(exc))
        st.stop()
    st.session_state["sweep"] = {"label": "synthetic lab panel", "data": data.to_dict()}
sweep = st.session_state.get("sweep")
if sweep and sweep["label"] == "synthetic lab panel":
    cells = sweep["data"]["cells"]
    winners = ", ".join(f"n_M={c['n_M']}: {gap_verdict(c.get('ci_low'), c.get('ci_high'))}" for c in cells)
    st.subheader("Winner by budget (paired 95% interval of table minus scalar)")
    st.write(winners)
    for fig, name in ((calibration_growth_risk(cells), "lab-risk"), (gap_forest(cells), "lab-gaps")):
        st.plotly_chart(fig)
        figure_download(fig, name)
