"""Exports of stored panels and runs (CSV, Parquet, JSON)."""

from __future__ import annotations

import json


from ..files.json_values import json_ready
from .cells import emit, emit_table


class ExportStore:
    """Export methods of :class:`~fcps_core.store.Store`."""

    def export_panel(self, name: str, fmt: str, out=None, *, force: bool = False) -> bytes | None:
        """The panel as a wide table (``csv``, ``parquet``) or ``json`` (facts + rows).
        Writes to ``out`` (a path) when given, else returns the bytes."""
        from ..files.csv_writer import panel_to_wide_rows
        panel = self.load_panel(name)
        header, rows = panel_to_wide_rows(panel)
        if fmt == "json":
            info = self.panel_info(name)
            body = {"panel": info, "columns": header, "rows": rows}
            return emit(json.dumps(json_ready(body), default=str, indent=1).encode() + b"\n", out, force)
        return emit_table(header, rows, fmt, out, force)

    def export_run(self, run_id: int, fmt: str, out=None, *, force: bool = False) -> bytes | None:
        """A run as ``json`` (everything) or its main table as ``csv``/``parquet``: the
        candidates of a selection, the per-budget cells of a sweep, the cell table of an audit."""
        run = self.run(run_id)
        if fmt == "json":
            return emit(json.dumps(run, default=str, indent=1).encode() + b"\n", out, force)
        result = run.get("result") or {}
        if run["kind"] == "select":
            rows = [{**c, "judges": " > ".join(c["judges"]), "params": json.dumps(c["params"])}
                    for c in result.get("candidates", [])]
        elif run["kind"] == "audit":
            rows = result.get("cells", [])
        else:
            rows = [{k: v for k, v in c.items() if not isinstance(v, (dict, list))}
                    for c in result.get("cells", [])]
        header = list(dict.fromkeys(k for r in rows for k in r))
        return emit_table(header, [[r.get(k) for k in header] for r in rows], fmt, out, force)
