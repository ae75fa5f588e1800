"""Workflows shared by the command line and the dashboard (read, compute, write)."""
