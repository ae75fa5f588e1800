"""The DuckDB store: panels, judge outputs (long form), labels, runs and their results.

Location: ``data/fcps.duckdb`` next to the package by default, ``$FCPS_STORE`` when set, or
an explicit path (the CLI's ``--store``).

Tables (schema version :data:`LATEST_VERSION`, applied by :data:`MIGRATIONS`)::

    schema_version (version, description, applied_at)
    panels   (panel_id, name UNIQUE, schema, n_rows, n_labelled, n_judges, has_blocks,
              label_note, source, source_sha256, layout, provenance, licence,
              import_options, created_at)
    judges   (panel_id, judge_pos, name, schema, range_lo, range_hi, n_distinct, n_missing)
    items    (panel_id, row_pos, item_id, group_id, label, block)   -- labels/groups/blocks
    outputs  (panel_id, row_pos, judge_pos, output)                  -- long form, no missing
    judge_outputs VIEW (panel_id, item_id, judge, output)
    runs     (run_id, panel_id, panel_name, kind (select/sweep/audit), status, label, params, seed, version,
              started_at, finished_at, seconds, timings, summary, error)
    run_candidates, run_cells                 -- a selection's candidates and audited cells
    run_predictors (run_id, predictor)        -- the predictor a selection deploys / an audit ran
    run_deployed   (run_id, family, n_members, K, objective, val_mse, val_nll, test_mse, deployed_risk,
                    deployed_risk_low, deployed_risk_high, not_recorded)  -- what a selection deployed
    audit_cells    (run_id, cell_pos, pattern, N_z, q_z, p_z, traffic_rows, prediction, unseen)
    sweep_cells, sweep_menu_cells, sweep_records   -- a calibration-growth sweep
    judge_costs (panel_id, judge, cost, latency)   -- optional, per panel
    meta     (key, value)

Guarantees
----------
* **Atomic writes.** A panel import and a run are each written in one transaction: an
  error, a rollback or a killed process leaves no trace of them.
* **One writer per process, short holds.** DuckDB lets one process open a file read-write
  (or several read-only). Each process keeps at most one database handle per file (every
  thread gets its own cursor on it), serialises its writes, and closes the handle as soon
  as nobody uses it so other processes (the dashboard, a CLI import) get their turn. A
  process that finds the file locked retries with backoff for ``timeout`` seconds (default
  60, ``$FCPS_STORE_TIMEOUT``) and then raises :class:`StoreBusyError` with a plain
  message; DuckDB's lock error never reaches the user. Waiting processes touch a marker
  file next to the store, and a holder that sees it yields between operations.
* **Names are data.** Every value goes through query parameters; identifiers in SQL text
  are this module's constants. Exported CSV cells that a spreadsheet would run as a
  formula are neutralised (:func:`neutralise_cell`).
"""

from __future__ import annotations

from ..errors import StoreError
from ..data.stored_names import validate_name
from .cells import neutralise_cell
from .core import StoreCore
from .export import ExportStore
from .location import DEFAULT_PATH, DEFAULT_TIMEOUT, ENV_PATH, ENV_TIMEOUT, default_store_path, resolve_store_path
from .location import StoreBusyError
from .labels import LabelStore
from .panels import PanelStore
from .records import selection_params
from .runs import RunStore
from .schema import CONTENT_TABLES, LATEST_VERSION, MIGRATIONS, RUN_CHILD_TABLES, migrate

__all__ = ["Store", "StoreError", "StoreBusyError", "default_store_path", "resolve_store_path",
           "DEFAULT_PATH", "DEFAULT_TIMEOUT", "ENV_PATH", "ENV_TIMEOUT", "LATEST_VERSION", "MIGRATIONS",
           "CONTENT_TABLES", "RUN_CHILD_TABLES", "migrate", "validate_name", "neutralise_cell",
           "selection_params"]


class Store(LabelStore, PanelStore, RunStore, ExportStore, StoreCore):
    """Panels and runs in one DuckDB file (see the package doc for guarantees).

    Parameters
    ----------
    path : store file; default ``$FCPS_STORE`` or ``data/fcps.duckdb``. Created with the
        latest schema on first use; an older store is migrated.
    timeout : seconds to wait for another process holding the file (default
        ``$FCPS_STORE_TIMEOUT`` or 60).
    """
