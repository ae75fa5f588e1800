"""Shared Streamlit helpers of the dashboard (pages/ holds only pages)."""
