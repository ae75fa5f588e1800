"""Panels in the store: import, list, describe, load, delete."""

from __future__ import annotations

import hashlib
import json
from typing import Sequence

import numpy as np

from ..errors import StoreError
from ..data.panel import MISSING, Panel
from ..data.stored_names import validate_name
from .cells import rows_to_dicts, to_json
from .core import staged
from .location import utc_now
from .schema import next_id


def panel_version(panel: Panel) -> str:
    """The version of a panel: 16 hex digits of the SHA-256 of everything a selection reads
    (items, groups, labels, blocks, label note, each judge's name, schema, range and
    outputs). Equal content, equal version; a run records the version it was computed on."""
    h = hashlib.sha256()

    def add(part) -> None:
        data = part if isinstance(part, bytes) else str(part).encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)

    def floats(values) -> bytes:
        v = np.asarray(values, dtype="<f8")
        return np.where(np.isnan(v), np.nan, v).astype("<f8").tobytes()     # one NaN pattern

    add("fcps-panel-1")
    add(panel.n_rows)
    add(panel.label_note or "")
    add("\x1f".join(map(str, panel.item_ids.tolist())))
    add("\x1f".join(map(str, panel.group_ids.tolist())))
    add(floats(panel.labels))
    add("" if panel.blocks is None else "\x1e" + "\x1f".join(map(str, panel.blocks.tolist())))
    for j in panel.judges:
        add(j.name)
        add(j.schema)
        add(repr(j.value_range))
        if j.codes is not None:
            add("\x1f".join(map(str, j.vocab)))
            add(np.asarray(j.codes, dtype="<i8").tobytes())
        else:
            add(floats(j.values))
    return h.hexdigest()[:16]


class PanelStore:
    """Panel methods of :class:`~fcps_core.store.Store`."""

    def add_panel(self, panel: Panel, *, name: str | None = None, provenance=None,
                  licence: str | None = None, source: str | None = None,
                  source_sha256: str | None = None, layout: str | None = None,
                  import_options: dict | None = None, replace: bool = False) -> dict:
        """Store ``panel`` under ``name`` (default ``panel.name``) in one transaction.

        ``provenance`` is text or a JSON-able dict. With ``replace`` an existing panel of
        that name and its runs are deleted in the same transaction. Returns the stored
        panel's facts and ``warnings``: what no selection can use (a constant label or
        judge, :func:`fcps_core.ingest.load.import_warnings`), stored all the same.
        """
        name = validate_name(panel.name if name is None else name)
        # Arrow tables are built before the transaction so the file is held only to write.
        import pyarrow as pa
        n = panel.n_rows
        row_pos = np.arange(n, dtype=np.int32)
        items = pa.table({
            "row_pos": row_pos,
            "item_id": pa.array(panel.item_ids.tolist(), pa.string()),
            "group_id": pa.array(panel.group_ids.tolist(), pa.string()),
            "label": pa.array(panel.labels, pa.float64(), from_pandas=True),
            "block": pa.array([None if not b else b for b in panel.blocks.tolist()]
                              if panel.blocks is not None else [None] * n, pa.string()),
        })
        judge_rows, judge_tables = [], []
        for pos, j in enumerate(panel.judges):
            if j.schema == "continuous":
                keep = ~np.isnan(j.values)
                out = pa.array(j.values[keep], pa.float64())
                n_distinct = int(len(np.unique(j.values[keep])))
            else:
                miss = j.vocab.index(MISSING) if MISSING in j.vocab else -1
                keep = j.codes != miss
                out = pa.DictionaryArray.from_arrays(pa.array(j.codes[keep].astype(np.int32)),
                                                     pa.array(j.vocab, pa.string()))
                n_distinct = len(j.vocab) - (miss >= 0)
            judge_tables.append(pa.table({"row_pos": row_pos[keep], "output": out}))
            lo, hi = j.value_range if j.value_range else (None, None)
            judge_rows.append([pos, j.name, j.schema, lo, hi, n_distinct, int(n - keep.sum())])
        prov = provenance if provenance is None or isinstance(provenance, str) else to_json(provenance)
        version = panel_version(panel)
        with self.transaction() as cur:
            old = cur.execute("SELECT panel_id, created_at FROM panels WHERE name = ?", [name]).fetchone()
            if old is not None:
                if not replace:
                    raise StoreError(f"a panel named {name!r} already exists (stored {old[1]:%Y-%m-%d %H:%M}); "
                                     "choose another name, or replace it (import --replace)")
                self._delete_panel_rows(cur, old[0])
            pid = next_id(cur, "panel_id")
            cur.execute("INSERT INTO panels (panel_id, name, schema, n_rows, n_labelled, n_judges, has_blocks, "
                        "label_note, source, source_sha256, layout, provenance, licence, import_options, "
                        "created_at, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [pid, name, panel.schema, n, panel.n_labelled, len(panel.judges),
                         panel.blocks is not None, panel.label_note or None, source,
                         source_sha256, layout, prov, licence,
                         None if import_options is None else to_json(import_options), utc_now(), version])
            cur.executemany("INSERT INTO judges VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            [[pid] + r for r in judge_rows])
            self._insert_items(cur, pid, items)
            for pos, table in enumerate(judge_tables):
                self._insert_outputs(cur, pid, pos, table, panel.judges[pos].schema == "continuous")
        from ..ingest.load import import_warnings
        return {**self.panel_info(name), "warnings": import_warnings(panel)}

    # Each bulk step is its own method so a test can interrupt an import between them.
    @staticmethod
    def _insert_items(cur, pid: int, table) -> None:
        with staged(cur, "fcps_stage_items", table):
            cur.execute("INSERT INTO items SELECT ?, row_pos, item_id, group_id, label, block "
                        "FROM fcps_stage_items", [pid])

    @staticmethod
    def _insert_outputs(cur, pid: int, judge_pos: int, table, numeric: bool) -> None:
        with staged(cur, "fcps_stage_outputs", table):
            # DuckDB prints a double as its shortest round-trip text, so a reload is exact.
            cur.execute("INSERT INTO outputs SELECT ?, row_pos, ?, CAST(output AS VARCHAR) "
                        "FROM fcps_stage_outputs", [pid, judge_pos])

    def has_panel(self, name: str) -> bool:
        with self.reading() as cur:
            return cur.execute("SELECT count(*) FROM panels WHERE name = ?", [name]).fetchone()[0] > 0

    def source_digests(self) -> set[str]:
        """The SHA-256 of every stored panel's source file (what an upload cleanup keeps)."""
        with self.reading() as cur:
            return {r[0] for r in cur.execute("SELECT DISTINCT source_sha256 FROM panels "
                                              "WHERE source_sha256 IS NOT NULL").fetchall()}

    def panels(self) -> list[dict]:
        """Stored panels with their facts, version and run counts, by name."""
        with self.reading() as cur:
            cur.execute("""SELECT p.name, p.schema, p.n_rows, p.n_labelled, p.n_judges, p.source,
                                  p.licence, p.created_at, p.version, count(r.run_id) AS runs
                           FROM panels p LEFT JOIN runs r USING (panel_id)
                           GROUP BY ALL ORDER BY p.name""")
            return rows_to_dicts(cur)

    def _panel_row(self, cur, name: str) -> dict:
        cur.execute("SELECT * FROM panels WHERE name = ?", [name])
        rows = rows_to_dicts(cur)
        if not rows:
            known = [r[0] for r in cur.execute("SELECT name FROM panels ORDER BY name LIMIT 8").fetchall()]
            raise StoreError(f"no stored panel named {name!r}"
                             + (f"; stored panels include {', '.join(repr(k) for k in known)}" if known
                                else "; the store holds no panels yet (import one first)"))
        return rows[0]

    def panel_info(self, name: str) -> dict:
        """Everything stored about a panel except its rows: facts, judges, provenance, runs."""
        with self.reading() as cur:
            info = self._panel_row(cur, name)
            cur.execute("SELECT name, schema, range_lo, range_hi, n_distinct, n_missing FROM judges "
                        "WHERE panel_id = ? ORDER BY judge_pos", [info["panel_id"]])
            info["judges"] = rows_to_dicts(cur)
            info["runs"] = cur.execute("SELECT count(*) FROM runs WHERE panel_id = ?",
                                       [info["panel_id"]]).fetchone()[0]
        for key in ("provenance", "import_options"):
            if info.get(key):
                try:
                    info[key] = json.loads(info[key])
                except (ValueError, RecursionError):
                    pass    # free-text provenance stays text (so does JSON nested too deeply to read)
        return info

    def load_panel(self, name: str, *, judges: Sequence[str] | None = None) -> Panel:
        """The stored panel, rebuilt exactly as it was imported (same codes, vocabularies,
        scalar maps and value ranges)."""
        return self.load_versioned_panel(name, judges=judges)[0]

    def load_versioned_panel(self, name: str, *,
                             judges: Sequence[str] | None = None) -> tuple[Panel, str]:
        """The stored panel (as :meth:`load_panel`) and its version, read in one snapshot:
        pass the version to ``save_selection``/``save_sweep`` so a run computed on it is
        refused if the panel is replaced meanwhile."""
        from ..ingest import judge_column
        with self.snapshot() as cur:
            info = self._panel_row(cur, name)
            pid, n = info["panel_id"], info["n_rows"]
            cur.execute("SELECT judge_pos, name, schema, range_lo, range_hi FROM judges "
                        "WHERE panel_id = ? ORDER BY judge_pos", [pid])
            jrows = cur.fetchall()
            if judges is not None:
                by_name = {r[1]: r for r in jrows}
                missing = [j for j in judges if j not in by_name]
                if missing:
                    raise StoreError(f"panel {name!r} has no judge {missing[0]!r}")
                jrows = [by_name[j] for j in judges]
            items = cur.execute("SELECT item_id, group_id, coalesce(label, 'NaN'::DOUBLE) AS label, "
                                "coalesce(block, '') AS block FROM items WHERE panel_id = ? "
                                "ORDER BY row_pos", [pid]).fetchnumpy()
            raw_outputs = []
            for pos, *_ in jrows:
                got = cur.execute("SELECT row_pos, output FROM outputs WHERE panel_id = ? AND "
                                  "judge_pos = ?", [pid, pos]).fetchnumpy()
                col = np.full(n, "", dtype=object)
                col[np.asarray(got["row_pos"], dtype=np.int64)] = np.asarray(got["output"], dtype=object)
                raw_outputs.append(col)
        cols = [judge_column(jname, raw, schema=schema,
                             value_range=None if lo is None else (lo, hi))
                for (pos, jname, schema, lo, hi), raw in zip(jrows, raw_outputs)]
        panel = Panel(item_ids=np.asarray(items["item_id"], dtype=object),
                      group_ids=np.asarray(items["group_id"], dtype=object),
                      labels=np.asarray(items["label"], dtype=float), judges=cols,
                      blocks=np.asarray(items["block"], dtype=object) if info["has_blocks"] else None,
                      name=name, label_note=info["label_note"] or "")
        return panel, info["version"]

    def delete_panel(self, name: str) -> dict:
        """Delete a panel, its rows and its runs in one transaction; returns what went."""
        with self.transaction() as cur:
            info = self._panel_row(cur, name)
            return self._delete_panel_rows(cur, info["panel_id"])

    def _delete_panel_rows(self, cur, pid: int) -> dict:
        runs = [r[0] for r in cur.execute("SELECT run_id FROM runs WHERE panel_id = ?", [pid]).fetchall()]
        for run_id in runs:
            self._delete_run_rows(cur, run_id)
        counts = {"runs": len(runs)}
        for table in ("outputs", "items", "judges", "judge_costs", "panels"):
            counts[table] = cur.execute(f"DELETE FROM {table} WHERE panel_id = ?", [pid]).fetchone()[0]
        return counts

    # -- judge costs ---------------------------------------------------------------------
    def set_judge_costs(self, name: str, costs: dict) -> None:
        """Store (replacing any earlier) the cost and latency of every judge of a panel."""
        from ..data.judge_costs import check_costs_cover
        with self.transaction() as cur:
            info = self._panel_row(cur, name)
            judges = [r[0] for r in cur.execute("SELECT name FROM judges WHERE panel_id = ? ORDER BY judge_pos",
                                                [info["panel_id"]]).fetchall()]
            check_costs_cover(costs, judges, source=f"costs for panel {name!r}")
            cur.execute("DELETE FROM judge_costs WHERE panel_id = ?", [info["panel_id"]])
            cur.executemany("INSERT INTO judge_costs VALUES (?, ?, ?, ?)",
                            [[info["panel_id"], j, float(costs[j]["cost"]), float(costs[j].get("latency", 0.0))]
                             for j in judges])

    def judge_costs(self, name: str) -> dict | None:
        """A panel's stored judge costs (``{judge: {"cost", "latency"}}``), or None."""
        with self.reading() as cur:
            info = self._panel_row(cur, name)
            rows = cur.execute("SELECT judge, cost, latency FROM judge_costs WHERE panel_id = ?",
                               [info["panel_id"]]).fetchall()
        return {j: {"cost": c, "latency": lat} for j, c, lat in rows} or None

    # -- runs ----------------------------------------------------------------------------
