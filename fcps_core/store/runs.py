"""Runs in the store: selections (with their predictor), sweeps, traffic audits, failed
attempts; list, read, annotate, delete."""

from __future__ import annotations

import datetime as _dt
import json


from ..errors import StoreError
from ..files.json_values import json_ready
from .cells import rows_to_dicts, to_json, to_number
from .core import staged
from .location import utc_now
from .records import (CANDIDATE_COLUMNS, SWEEP_CANDIDATE_COLUMNS, SWEEP_CELL_NUMBERS, SWEEP_MENU_AFTER_MODE,
                      SWEEP_MENU_BEFORE_MODE, selection_params)
from .schema import DEPLOYED_FIELDS, DERIVE_DEPLOYED, RUN_CHILD_TABLES, next_id


#: the longest run note (characters) the store keeps
MAX_NOTE_CHARS = 2000


class PanelChangedError(StoreError):
    """The panel a run was computed on was replaced or deleted before the run was stored."""


class RunStore:
    """Run methods of :class:`~fcps_core.store.Store`.

    Every ``save_*`` takes ``panel_version``: the version of the panel the result was
    computed on (:meth:`load_versioned_panel`, or ``add_panel(...)["version"]``). When it is
    given and the store's panel of that name now has another version (replaced by an import
    meanwhile) or is gone, nothing is stored and :class:`PanelChangedError` says so. Without
    it the run records the stored panel's current version unchecked."""

    def _new_run(self, cur, panel: str, kind: str, status: str, params: dict, seed,
                 started_at, seconds, timings, summary, error, label, panel_version=None) -> int:
        info = self._run_panel(cur, panel, panel_version)
        run_id = next_id(cur, "run_id")
        from ..version import __version__
        finished = utc_now()
        if started_at is None and seconds is not None:
            started_at = finished - _dt.timedelta(seconds=seconds)
        cur.execute("INSERT INTO runs (run_id, panel_id, panel_name, kind, status, label, params, seed, "
                    "version, started_at, finished_at, seconds, timings, summary, error, panel_version) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [run_id, info["panel_id"], panel, kind, status, label, to_json(params),
                     None if seed is None else int(seed), __version__, started_at, finished,
                     to_number(seconds), None if timings is None else to_json(timings),
                     None if summary is None else to_json(summary), error, info["version"]])
        return run_id

    def _run_panel(self, cur, panel: str, panel_version: str | None) -> dict:
        """The stored panel a run is filed under, checked against the version it used."""
        if panel_version is None:
            return self._panel_row(cur, panel)
        cur.execute("SELECT * FROM panels WHERE name = ?", [panel])
        rows = rows_to_dicts(cur)
        if not rows:
            raise PanelChangedError(f"panel {panel!r} was deleted while this run was computing; "
                                    "the run was not stored")
        if rows[0]["version"] != panel_version:
            raise PanelChangedError(f"panel {panel!r} was replaced while this run was computing (it used "
                                    f"version {panel_version}, the store now holds {rows[0]['version']}); "
                                    "the run was not stored: run it again")
        return rows[0]

    def save_selection(self, result, *, panel: str, params: dict | None = None,
                       started_at: _dt.datetime | None = None, label: str | None = None,
                       if_absent: bool = False, predictor: dict | None = None,
                       panel_version: str | None = None) -> int:
        """Store a :class:`~fcps_core.selection.SelectionResult` (run row, every candidate,
        the selected prefix's cells, the deployable predictor) in one transaction; returns
        the run id. ``predictor`` (``FCPSPredictor.to_dict()``) defaults to the result's.

        ``panel`` is the stored panel the selection ran on and ``panel_version`` the version
        it read (see the class doc); ``params`` defaults to the selector's settings and the
        split. ``label`` tags the run; with ``if_absent`` a finished run with the same label
        is kept and its id returned (idempotent seeding).
        """
        import pyarrow as pa
        d = result.to_dict(cells_limit=0)
        params = params if params is not None else selection_params(result)
        summary = {k: v for k, v in d.items() if k not in ("candidates", "cells", "timings")}
        sel_index = d["selected"]["index"]
        cand_cols = {c: [] for c in CANDIDATE_COLUMNS}
        for c in d["candidates"]:
            for col in CANDIDATE_COLUMNS:
                if col == "judges":
                    cand_cols[col].append(to_json(c["judges"]))
                elif col == "params":
                    cand_cols[col].append(to_json(c.get("params", {})))
                elif col == "selected":
                    cand_cols[col].append(c["index"] == sel_index)
                elif col in ("cand_index",):
                    cand_cols[col].append(int(c["index"]))
                elif col in ("path_rule", "path", "family"):
                    cand_cols[col].append(c.get(col))
                elif col in ("K", "grid_size"):
                    cand_cols[col].append(None if c.get(col) is None else int(c[col]))
                else:
                    cand_cols[col].append(to_number(c.get(col)))
        candidates = pa.table(cand_cols)
        cells = d["cells"]
        cell_table = pa.table({
            "cand_index": pa.array([sel_index] * len(cells), pa.int32()),
            "cell_pos": pa.array(range(len(cells)), pa.int32()),
            "pattern": pa.array([str(c["pattern"]) for c in cells], pa.string()),
            "N_z": pa.array([int(c["N_z"]) for c in cells], pa.int64()),
            "mean_label": pa.array([to_number(c["mean_label"]) for c in cells], pa.float64()),
            "prediction": pa.array([to_number(c["prediction"]) for c in cells], pa.float64()),
            "freq_val": pa.array([to_number(c["freq_val"]) for c in cells], pa.float64()),
            "freq_test": pa.array([to_number(c["freq_test"]) for c in cells], pa.float64()),
            "unseen": pa.array([bool(c["unseen"]) for c in cells], pa.bool_()),
        })
        seconds = (d.get("timings") or {}).get("select_seconds")
        if predictor is None:
            from ..deploy.predictor import FCPSPredictor
            predictor = FCPSPredictor.from_selection(result).to_dict()
        with self.transaction() as cur:
            if if_absent and (existing := self._labelled_run(cur, label)) is not None:
                return existing
            run_id = self._new_run(cur, panel, "select", "done", params, params.get("seed"),
                                   started_at, seconds, d.get("timings"), summary, None, label,
                                   panel_version)
            self._insert_candidates(cur, run_id, candidates)
            self._insert_cells(cur, run_id, cell_table)
            cur.execute("INSERT INTO run_predictors VALUES (?, ?)", [run_id, to_json(predictor)])
            cur.execute(DERIVE_DEPLOYED.format(where="r.run_id = ?"), [run_id])     # what it deployed
        return run_id

    def run_predictor(self, run_id: int) -> dict:
        """The predictor a stored selection deploys (or an audit ran), as
        ``FCPSPredictor.to_dict()``."""
        with self.reading() as cur:
            row = cur.execute("SELECT r.kind, r.status, p.predictor FROM runs r LEFT JOIN run_predictors p "
                              "USING (run_id) WHERE r.run_id = ?", [int(run_id)]).fetchone()
        if row is None:
            raise StoreError(f"no stored run with id {run_id}; list them with: python -m fcps_core runs")
        kind, status, body = row
        if body is None:
            why = ("it failed" if status == "failed" else "it is a sweep" if kind == "sweep"
                   else "it was stored by an older fcps; run the selection again with --save")
            raise StoreError(f"run {run_id} has no stored predictor ({why})")
        return json.loads(body)

    def save_audit(self, audit, *, panel: str, predictor: dict, params: dict | None = None,
                   started_at: _dt.datetime | None = None, seconds: float | None = None,
                   label: str | None = None, panel_version: str | None = None) -> int:
        """Store a traffic audit (:class:`~fcps_core.deploy.audit.AuditResult` or its
        ``to_dict()``) as a run of
        kind ``audit`` on ``panel`` (the panel the predictor was calibrated on): its figures,
        its cell table and the predictor it ran, in one transaction."""
        full = audit if isinstance(audit, dict) else audit.to_dict()
        d = json_ready({k: v for k, v in full.items() if k != "cells"})
        cells = full.get("cells") or []
        with self.transaction() as cur:
            run_id = self._new_run(cur, panel, "audit", "done", params or {}, None, started_at,
                                   seconds, None, d, None, label, panel_version)
            cur.execute("INSERT INTO run_predictors VALUES (?, ?)", [run_id, to_json(predictor)])
            if cells:
                cur.executemany("INSERT INTO audit_cells VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                [[run_id, i, c["pattern"], int(c["N_z"]), to_number(c["q_z"]),
                                  to_number(c["p_z"]), int(c["traffic_rows"]), to_number(c["prediction"]),
                                  bool(c["unseen"])] for i, c in enumerate(cells)])
        return run_id

    @staticmethod
    def _insert_candidates(cur, run_id: int, table) -> None:
        with staged(cur, "fcps_stage_candidates", table):
            cur.execute("INSERT INTO run_candidates SELECT ?, " + ", ".join(CANDIDATE_COLUMNS)
                        + " FROM fcps_stage_candidates", [run_id])

    @staticmethod
    def _insert_cells(cur, run_id: int, table) -> None:
        with staged(cur, "fcps_stage_cells", table):
            cur.execute("INSERT INTO run_cells SELECT ?, cand_index, cell_pos, pattern, N_z, "
                        "mean_label, prediction, freq_val, freq_test, unseen FROM fcps_stage_cells",
                        [run_id])

    def save_sweep(self, result, *, panel: str, params: dict | None = None,
                   started_at: _dt.datetime | None = None, seconds: float | None = None,
                   label: str | None = None, if_absent: bool = False,
                   panel_version: str | None = None) -> int:
        """Store a :class:`~fcps_core.paper.experiments.SweepResult` (per-budget cells, per-menu
        cells, per-split records) in one transaction; returns the run id (``label``,
        ``if_absent`` and ``panel_version`` as in :meth:`save_selection`)."""
        d = json_ready(result.to_dict())
        params = params if params is not None else {"budgets": d.get("budgets"), **(d.get("settings") or {})}
        cells, menu_cells, records = [], [], []
        for c in d.get("cells", []):
            cells.append([int(c["n_M"]), c.get("splits")] + [to_number(c.get(k)) for k in SWEEP_CELL_NUMBERS]
                         + [to_json(c)])
            for menu, m in (c.get("menus") or {}).items():
                menu_cells.append([int(c["n_M"]), menu]
                                  + [to_number(m.get(k)) for k in SWEEP_MENU_BEFORE_MODE]
                                  + [None if m.get("K_mode") is None else int(m["K_mode"])]
                                  + [to_number(m.get(k)) for k in SWEEP_MENU_AFTER_MODE]
                                  + [to_json(m.get("family_shares") or {})])
        for r in d.get("records", []):
            for menu, m in (r.get("menus") or {}).items():
                records.append([int(r["split"]), int(r["n_M"]), menu, to_number(m.get("test_mse")),
                                to_number(m.get("test_nll")), to_number(m.get("val_mse")),
                                None if m.get("K") is None else int(m["K"]), m.get("family"),
                                m.get("path_rule"), to_number(m.get("unseen_test")), to_number(m.get("V_cell")),
                                to_number(m.get("V_proxy")), to_number(m.get("H_K")),
                                None if m.get("pairwise") is None else bool(m["pairwise"]),
                                to_number(m.get("oracle_test_mse"))])
        summary = {"panel": d.get("panel"), "budgets": d.get("budgets"), "settings": d.get("settings"),
                   "extra": {k: v for k, v in d.items()
                             if k not in ("panel", "budgets", "settings", "cells", "records")}}
        with self.transaction() as cur:
            if if_absent and (existing := self._labelled_run(cur, label)) is not None:
                return existing
            run_id = self._new_run(cur, panel, "sweep", "done", params, params.get("seed"),
                                   started_at, seconds, None, summary, None, label, panel_version)
            for table, rows in (("sweep_cells", cells), ("sweep_menu_cells", menu_cells),
                                ("sweep_records", records)):
                if rows:
                    marks = ", ".join(["?"] * (len(rows[0]) + 1))
                    cur.executemany(f"INSERT INTO {table} VALUES ({marks})", [[run_id] + r for r in rows])
            if getattr(result, "candidates", None) is not None:
                self._insert_sweep_candidates(cur, run_id, result.candidates)
        return run_id

    @staticmethod
    def _insert_sweep_candidates(cur, run_id: int, columns: dict) -> None:
        """A sweep's per-candidate records (numpy columns) in one staged insert."""
        import pyarrow as pa
        table = pa.table({c: pa.array(list(columns[c]) if columns[c].dtype == object else columns[c])
                          for c in SWEEP_CANDIDATE_COLUMNS})
        with staged(cur, "fcps_stage_sweep_candidates", table):
            cur.execute("INSERT INTO sweep_candidates SELECT ?, " + ", ".join(SWEEP_CANDIDATE_COLUMNS)
                        + " FROM fcps_stage_sweep_candidates", [run_id])

    def sweep_candidates(self, run_id: int):
        """The per-candidate records of a stored sweep as a pandas DataFrame (empty for
        sweeps stored before schema 7)."""
        with self.reading() as cur:
            cur.execute("SELECT " + ", ".join(SWEEP_CANDIDATE_COLUMNS) + " FROM sweep_candidates WHERE run_id = ? "
                        "ORDER BY split, n_M", [int(run_id)])
            return cur.fetch_df()

    def save_failed_run(self, *, panel: str, kind: str, params: dict, error: str,
                        seed: int | None = None, started_at: _dt.datetime | None = None,
                        label: str | None = None, panel_version: str | None = None) -> int:
        """Record a run that stopped with ``error`` (status ``failed``, no results)."""
        with self.transaction() as cur:
            seconds = None if started_at is None else (utc_now() - started_at).total_seconds()
            return self._new_run(cur, panel, kind, "failed", params, seed, started_at, seconds,
                                 None, None, str(error), label, panel_version)

    def runs(self, *, panel: str | None = None, kind: str | None = None) -> list[dict]:
        """Stored runs (newest first) with their headline result: for a finished selection,
        what it DEPLOYED (``run_deployed``), not its best candidate. ``family`` is the
        deployed family label (an average's is the choice rule's name,
        :data:`fcps_core.defaults.TIE_AVERAGE`, which people read as "average of N models":
        :func:`fcps_core.defaults.deployed_family_name` with ``deployed_members``), ``K`` the
        judges it calls, ``val_mse`` / ``test_mse`` its own held-out and test MSE (an average's,
        as ``select --json``'s ``selected``), ``deployed_risk`` its estimate on new items;
        ``max_judges`` / ``budget`` the limit the selection was asked to respect (None: none);
        ``not_recorded`` lists those the store does not hold (a selection stored by an older
        fcps without them: every one of them when nothing of its result is left); empty for
        other runs, whose fields are None."""
        with self.reading() as cur:
            cur.execute("""SELECT r.run_id, r.panel_name AS panel, r.kind, r.status, r.label, r.note, r.seed,
                                  r.version, r.panel_version, r.finished_at, r.seconds,
                                  coalesce(d.family, CASE WHEN r.kind = 'select'
                                           THEN json_extract_string(p.predictor, '$.family') END) AS family,
                                  d.K, d.val_mse,
                                  d.test_mse, d.deployed_risk, r.error, p.run_id IS NOT NULL AS has_predictor,
                                  json_extract_string(p.predictor, '$.family') AS deployed_family,
                                  coalesce(d.n_members, json_array_length(p.predictor, '$.members'))
                                      AS deployed_members,
                                  d.run_id IS NOT NULL AS recorded, d.not_recorded,
                                  CASE WHEN r.kind = 'select' THEN TRY_CAST(json_extract_string(r.params,
                                       '$.max_judges') AS BIGINT) END AS max_judges,
                                  CASE WHEN r.kind = 'select' THEN TRY_CAST(json_extract_string(r.params,
                                       '$.budget') AS DOUBLE) END AS budget
                           FROM runs r LEFT JOIN run_deployed d ON d.run_id = r.run_id
                           LEFT JOIN run_predictors p ON p.run_id = r.run_id
                           WHERE (? IS NULL OR r.panel_name = ?) AND (? IS NULL OR r.kind = ?)
                           ORDER BY r.run_id DESC""", [panel, panel, kind, kind])
            rows = rows_to_dicts(cur)
        for r in rows:
            recorded, missing = r.pop("recorded"), r.pop("not_recorded")
            if recorded:
                r["not_recorded"] = [f for f in (missing or "").split(",") if f]
            elif r["kind"] == "select" and r["status"] == "done":     # its predictor may name the family
                r["not_recorded"] = [f for f in DEPLOYED_FIELDS if f != "family" or r["family"] is None]
            else:
                r["not_recorded"] = []
        return rows

    def find_run(self, label: str) -> int | None:
        """The newest finished run tagged ``label``, or None."""
        with self.reading() as cur:
            return self._labelled_run(cur, label)

    @staticmethod
    def _labelled_run(cur, label: str | None) -> int | None:
        if label is None:
            return None
        return cur.execute("SELECT max(run_id) FROM runs WHERE label = ? AND status = 'done'",
                           [label]).fetchone()[0]

    def run(self, run_id: int) -> dict:
        """A stored run in full. A selection's ``result`` has the shape of
        :meth:`SelectionResult.to_dict` (candidates, cells); a sweep's has cells and records."""
        with self.reading() as cur:
            cur.execute("SELECT * FROM runs WHERE run_id = ?", [int(run_id)])
            rows = rows_to_dicts(cur)
            if not rows:
                raise StoreError(f"no stored run with id {run_id}; list them with: python -m fcps_core runs")
            run = rows[0]
            for key in ("params", "timings", "summary"):
                run[key] = json.loads(run[key]) if run[key] else None
            summary = run.pop("summary") or {}
            if run["kind"] == "select":
                cur.execute("SELECT * EXCLUDE (run_id) FROM run_candidates WHERE run_id = ? "
                            "ORDER BY cand_index", [run_id])
                cands = []
                for c in rows_to_dicts(cur):
                    c = {"index": c.pop("cand_index"), **c}
                    c["judges"] = json.loads(c["judges"])
                    c["params"] = json.loads(c["params"])
                    cands.append(json_ready(c))
                cur.execute("SELECT * EXCLUDE (run_id, cand_index, cell_pos) FROM run_cells "
                            "WHERE run_id = ? ORDER BY cell_pos", [run_id])
                cells = [json_ready(c) for c in rows_to_dicts(cur)]
                run["result"] = {**summary, "candidates": cands, "cells": cells,
                                 "timings": run["timings"]} if run["status"] == "done" else None
            elif run["kind"] == "audit":
                cur.execute("SELECT * EXCLUDE (run_id, cell_pos) FROM audit_cells WHERE run_id = ? "
                            "ORDER BY cell_pos", [run_id])
                run["result"] = {**summary, "cells": [json_ready(c) for c in rows_to_dicts(cur)]} \
                    if run["status"] == "done" else None
            else:
                cur.execute("SELECT detail FROM sweep_cells WHERE run_id = ? ORDER BY n_M", [run_id])
                cells = [json.loads(r[0]) for r in cur.fetchall()]
                cur.execute("SELECT * EXCLUDE (run_id) FROM sweep_records WHERE run_id = ? "
                            "ORDER BY n_M, split, menu", [run_id])
                records = [json_ready(r) for r in rows_to_dicts(cur)]
                run["result"] = {"panel": summary.get("panel"), "budgets": summary.get("budgets"),
                                 "settings": summary.get("settings"), "cells": cells,
                                 "records": records, **(summary.get("extra") or {})} \
                    if run["status"] == "done" else None
        return json_ready(run)

    def set_run_note(self, run_id: int, note: str | None) -> str | None:
        """Attach ``note`` (free text, at most :data:`MAX_NOTE_CHARS` characters) to a stored
        run, replacing any earlier one; an empty or blank note (or None) removes it. Returns
        the note as stored (stripped), or None."""
        if note is not None and not isinstance(note, str):
            raise StoreError(f"a run note is text, not {type(note).__name__}")
        text = (note or "").strip()
        if "\x00" in text:
            raise StoreError("a run note cannot contain a NUL character")
        if len(text) > MAX_NOTE_CHARS:
            raise StoreError(f"a run note has at most {MAX_NOTE_CHARS:,} characters (this one has {len(text):,})")
        with self.transaction() as cur:
            if cur.execute("SELECT count(*) FROM runs WHERE run_id = ?", [int(run_id)]).fetchone()[0] == 0:
                raise StoreError(f"no stored run with id {run_id}; list them with: python -m fcps_core runs")
            cur.execute("UPDATE runs SET note = ? WHERE run_id = ?", [text or None, int(run_id)])
        return text or None

    def delete_run(self, run_id: int) -> dict:
        with self.transaction() as cur:
            if cur.execute("SELECT count(*) FROM runs WHERE run_id = ?", [int(run_id)]).fetchone()[0] == 0:
                raise StoreError(f"no stored run with id {run_id}")
            return self._delete_run_rows(cur, int(run_id))

    @staticmethod
    def _delete_run_rows(cur, run_id: int) -> dict:
        counts = {}
        for table in RUN_CHILD_TABLES + ("runs",):
            counts[table] = cur.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id]).fetchone()[0]
        return counts

    # -- metadata and integrity -----------------------------------------------------------
