"""Shared Streamlit helpers of the dashboard (app_pages/ holds only pages)."""
