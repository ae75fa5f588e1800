"""fcps dashboard entry point: page config and navigation only."""

import streamlit as st

st.set_page_config(page_title="fcps: finite-calibration panel selection", layout="wide")
pages = [st.Page("pages/overview.py", title="Overview", default=True),
         st.Page("pages/select.py", title="Select")]
st.navigation(pages).run()
