"""Plotly figure builders, by subject; import them from :mod:`fcps_core.figures`."""
