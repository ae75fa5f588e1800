"""Reproduction report (kept for imports): the report lives in :mod:`fcps_core.paper.reproduction`.
``python -m fcps_core report --out docs/reproduction.md``."""

from __future__ import annotations

from .paper.reproduction import DATA, REAL_POOLS, build_report, md_table, write_report

__all__ = ["DATA", "REAL_POOLS", "build_report", "md_table", "write_report"]
