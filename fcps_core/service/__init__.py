"""Workflows the front ends (command line, dashboard) call: one function per user action."""
