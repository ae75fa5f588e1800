"""fcps dashboard entry point: page config and navigation only."""

import streamlit as st

st.set_page_config(page_title="fcps: finite-calibration panel selection", layout="wide")
pages = [st.Page("pages/overview.py", title="Overview", default=True),
         st.Page("pages/upload.py", title="Upload panel"),
         st.Page("pages/select.py", title="Select"),
         st.Page("pages/regime.py", title="Regime map"),
         st.Page("pages/audit.py", title="Cell-pressure audit"),
         st.Page("pages/gaps.py", title="Scalar vs table gaps"),
         st.Page("pages/results.py", title="Results browser"),
         st.Page("pages/lab.py", title="Synthetic lab")]
st.navigation(pages).run()
