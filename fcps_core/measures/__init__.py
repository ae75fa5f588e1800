"""Measures under selection: losses, bounds, prefix diagnostics, judge metrics, path rules."""
