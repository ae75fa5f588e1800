"""fcps dashboard entry point: page config, navigation, and a visible message while the
first start loads the engine and opens the store (instead of a blank page).

A new store gets the demo panels and runs copied in from the shipped snapshot
(``data/seed/``, see ``fcps_core.seed``), so the first page does not wait for them to be
computed. A store that cannot be opened stops every page after one error box (no page
goes on to raise the same error uncaught)."""

import streamlit as st

st.set_page_config(page_title="fcps: finite-calibration panel selection", layout="wide")
pages = [st.Page("app_pages/overview.py", title="Overview", default=True),
         st.Page("app_pages/upload.py", title="Upload panel"),
         st.Page("app_pages/select.py", title="Select"),
         st.Page("app_pages/judges.py", title="Judges"),
         st.Page("app_pages/regime.py", title="Regime map"),
         st.Page("app_pages/plan.py", title="Next judge"),
         st.Page("app_pages/label_next.py", title="Label next"),
         st.Page("app_pages/audit.py", title="Cell-pressure audit"),
         st.Page("app_pages/gaps.py", title="Scalar vs table gaps"),
         st.Page("app_pages/deploy.py", title="Deploy & monitor"),
         st.Page("app_pages/results.py", title="Results browser"),
         st.Page("app_pages/reproduction.py", title="Paper reproduction"),
         st.Page("app_pages/lab.py", title="Synthetic lab")]
nav = st.navigation(pages)
# Both are instant once done (the import and the store handle are cached per process).
with st.spinner("Starting fcps: loading the selection engine..."):
    from fcps_core.errors import FCPSError
    from fcps_app.common import get_store, md
try:
    get_store()     # shows its own message while the first start copies in the demo panels and runs
except FCPSError as exc:
    st.error(f"The store cannot be opened: {md(exc)}")
    st.stop()
nav.run()
