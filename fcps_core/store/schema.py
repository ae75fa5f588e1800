"""The store schema and its migrations (applied in order; a newer store is refused by name)."""

from __future__ import annotations



from ..errors import StoreError
from .location import utc_now


# -- schema and migrations -----------------------------------------------------------------

#: what a finished selection deployed, one row per run (schema 8): ``family`` is the deployed
#: family label (an average's: :data:`fcps_core.defaults.TIE_AVERAGE`, as in ``select
#: --json``'s ``selected.family``), ``n_members`` the models it averages (1 for one model),
#: ``K`` the judges it calls (an average: the union of its members' judges), ``val_mse`` /
#: ``val_nll`` / ``test_mse`` its own held-out and test risks, ``deployed_risk`` (with its 95%
#: interval) the estimate on new items. ``not_recorded`` names the fields the stored result did
#: not carry (comma-separated; '' for every run stored since): a run stored by an older fcps is
#: shown "not recorded" there, not blank.
DEPLOYED_TABLE = """CREATE TABLE run_deployed (
    run_id INTEGER PRIMARY KEY, family VARCHAR, n_members INTEGER, K INTEGER, objective VARCHAR,
    val_mse DOUBLE, val_nll DOUBLE, test_mse DOUBLE, deployed_risk DOUBLE, deployed_risk_low DOUBLE,
    deployed_risk_high DOUBLE, not_recorded VARCHAR NOT NULL)"""
#: the fields of ``run_deployed`` a stored result may lack, and where its summary holds them
DEPLOYED_FIELDS = {"family": "$.selected.family", "K": "$.selected.K", "val_mse": "$.selected.val_mse",
                   "test_mse": "$.selected.test_mse", "deployed_risk": "$.deployed_risk"}


def _number(path: str, kind: str = "DOUBLE") -> str:
    return f"TRY_CAST(json_extract_string(r.summary, '{path}') AS {kind})"


#: the ``run_deployed`` rows of finished selections that have none yet, read off each run's
#: stored summary (``SelectionResult.to_dict()`` without candidates, cells and timings): the
#: one derivation of what a run deployed, used when a selection is saved (``where``: its id) and
#: by the migration to schema 8 for the runs stored before (``where``: TRUE). A one-member
#: ``members`` list is that member's family; an absent one is a single model.
DERIVE_DEPLOYED = """INSERT INTO run_deployed
    SELECT r.run_id,
        CASE WHEN json_array_length(r.summary, '$.selected.members') = 1
             THEN json_extract_string(r.summary, '$.selected.members[0].family')
             ELSE json_extract_string(r.summary, '$.selected.family') END,
        greatest(coalesce(json_array_length(r.summary, '$.selected.members'), 1), 1),
        """ + _number("$.selected.K", "INTEGER") + """,
        coalesce(json_extract_string(r.summary, '$.menu.objective'), 'mse'),
        """ + _number("$.selected.val_mse") + """, """ + _number("$.selected.val_nll") + """,
        """ + _number("$.selected.test_mse") + """, """ + _number("$.deployed_risk.estimate") + """,
        """ + _number("$.deployed_risk.ci[0]") + """, """ + _number("$.deployed_risk.ci[1]") + """,
        concat_ws(',', """ + ", ".join(f"CASE WHEN json_exists(r.summary, '{path}') THEN NULL ELSE '{name}' END"
                                        for name, path in DEPLOYED_FIELDS.items()) + """)
    FROM runs r
    WHERE r.kind = 'select' AND r.status = 'done' AND r.summary IS NOT NULL
      AND CASE WHEN json_valid(r.summary) THEN json_type(r.summary, '$.selected') END = 'OBJECT'
      AND r.run_id NOT IN (SELECT run_id FROM run_deployed) AND {where}"""


MIGRATIONS: list[tuple[int, str, tuple[str, ...]]] = [
    (1, "panels, judges, items, judge outputs (long form), runs, candidates, cells", (
        """CREATE TABLE panels (
            panel_id INTEGER PRIMARY KEY, name VARCHAR NOT NULL UNIQUE, schema VARCHAR NOT NULL,
            n_rows BIGINT NOT NULL, n_labelled BIGINT NOT NULL, n_judges INTEGER NOT NULL,
            has_blocks BOOLEAN NOT NULL, label_note VARCHAR, source VARCHAR,
            source_sha256 VARCHAR, layout VARCHAR, provenance VARCHAR, licence VARCHAR,
            import_options VARCHAR, created_at TIMESTAMP NOT NULL)""",
        """CREATE TABLE judges (
            panel_id INTEGER NOT NULL, judge_pos INTEGER NOT NULL, name VARCHAR NOT NULL,
            schema VARCHAR NOT NULL, range_lo DOUBLE, range_hi DOUBLE, n_distinct BIGINT,
            n_missing BIGINT, PRIMARY KEY (panel_id, judge_pos))""",
        # No key constraints on the two large tables: an index over 10^7 output rows would
        # cost more than the whole import; the writer builds them consistent by construction.
        """CREATE TABLE items (
            panel_id INTEGER NOT NULL, row_pos INTEGER NOT NULL, item_id VARCHAR NOT NULL,
            group_id VARCHAR NOT NULL, label DOUBLE, block VARCHAR)""",
        """CREATE TABLE outputs (
            panel_id INTEGER NOT NULL, row_pos INTEGER NOT NULL, judge_pos INTEGER NOT NULL,
            output VARCHAR NOT NULL)""",
        """CREATE VIEW judge_outputs AS
            SELECT o.panel_id, i.item_id, j.name AS judge, o.output
            FROM outputs o JOIN items i USING (panel_id, row_pos)
            JOIN judges j USING (panel_id, judge_pos)""",
        """CREATE TABLE runs (
            run_id INTEGER PRIMARY KEY, panel_id INTEGER NOT NULL, panel_name VARCHAR NOT NULL,
            kind VARCHAR NOT NULL CHECK (kind IN ('select', 'sweep')),
            status VARCHAR NOT NULL CHECK (status IN ('done', 'failed')),
            label VARCHAR, params VARCHAR NOT NULL, seed BIGINT, version VARCHAR NOT NULL,
            started_at TIMESTAMP, finished_at TIMESTAMP NOT NULL, seconds DOUBLE,
            timings VARCHAR, summary VARCHAR, error VARCHAR)""",
        """CREATE TABLE run_candidates (
            run_id INTEGER NOT NULL, cand_index INTEGER NOT NULL, path_rule VARCHAR,
            path VARCHAR, judges VARCHAR, K INTEGER, family VARCHAR, params VARCHAR,
            grid_size INTEGER, val_mse DOUBLE, val_nll DOUBLE, val_risk DOUBLE, val_se DOUBLE,
            test_mse DOUBLE, test_nll DOUBLE, Q_K DOUBLE, S_K DOUBLE, H_K DOUBLE,
            unseen_val DOUBLE, unseen_test DOUBLE, V_cell DOUBLE, V_proxy DOUBLE,
            cell_pressure_sum DOUBLE, selected BOOLEAN NOT NULL,
            PRIMARY KEY (run_id, cand_index))""",
        """CREATE TABLE run_cells (
            run_id INTEGER NOT NULL, cand_index INTEGER NOT NULL, cell_pos INTEGER NOT NULL,
            pattern VARCHAR, N_z BIGINT, mean_label DOUBLE, prediction DOUBLE, freq_val DOUBLE,
            freq_test DOUBLE, unseen BOOLEAN)""",
    )),
    (2, "calibration-growth sweeps (cells per budget and menu, per-split records), metadata", (
        """CREATE TABLE sweep_cells (
            run_id INTEGER NOT NULL, n_M INTEGER NOT NULL, splits INTEGER, delta DOUBLE,
            delta_se DOUBLE, ci_low DOUBLE, ci_high DOUBLE, table_test_mse DOUBLE,
            scalar_test_mse DOUBLE, table_K_mean DOUBLE, unseen_mean DOUBLE,
            V_cell_mean DOUBLE, V_proxy_mean DOUBLE, regret_vs_K_le_3 DOUBLE,
            regret_vs_K_le_3_se DOUBLE, detail VARCHAR)""",
        """CREATE TABLE sweep_menu_cells (
            run_id INTEGER NOT NULL, n_M INTEGER NOT NULL, menu VARCHAR NOT NULL,
            test_mse_mean DOUBLE, test_mse_se DOUBLE, oracle_test_mse_mean DOUBLE,
            oracle_test_mse_se DOUBLE, K_mean DOUBLE, K_sd DOUBLE, K_mode INTEGER,
            K_mode_share DOUBLE, unseen_mean DOUBLE, V_cell_mean DOUBLE, V_proxy_mean DOUBLE,
            pairwise_share DOUBLE, family_shares VARCHAR)""",
        """CREATE TABLE sweep_records (
            run_id INTEGER NOT NULL, split INTEGER NOT NULL, n_M INTEGER NOT NULL,
            menu VARCHAR NOT NULL, test_mse DOUBLE, test_nll DOUBLE, val_mse DOUBLE, K INTEGER,
            family VARCHAR, path_rule VARCHAR, unseen_test DOUBLE, V_cell DOUBLE,
            V_proxy DOUBLE, H_K DOUBLE, pairwise BOOLEAN, oracle_test_mse DOUBLE)""",
        "CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
    )),
    (3, "deployment: audit runs, the deployable predictor of a selection, audited cells", (
        # DuckDB cannot alter a CHECK constraint: the runs table is rebuilt with the new kind.
        "ALTER TABLE runs RENAME TO runs_v2",
        """CREATE TABLE runs (
            run_id INTEGER PRIMARY KEY, panel_id INTEGER NOT NULL, panel_name VARCHAR NOT NULL,
            kind VARCHAR NOT NULL CHECK (kind IN ('select', 'sweep', 'audit')),
            status VARCHAR NOT NULL CHECK (status IN ('done', 'failed')),
            label VARCHAR, params VARCHAR NOT NULL, seed BIGINT, version VARCHAR NOT NULL,
            started_at TIMESTAMP, finished_at TIMESTAMP NOT NULL, seconds DOUBLE,
            timings VARCHAR, summary VARCHAR, error VARCHAR)""",
        "INSERT INTO runs SELECT * FROM runs_v2",
        "DROP TABLE runs_v2",
        # The predictor JSON (FCPSPredictor.to_dict) a selection deploys, and the predictor an
        # audit ran (so an audit can be read without the file it came from).
        "CREATE TABLE run_predictors (run_id INTEGER PRIMARY KEY, predictor VARCHAR NOT NULL)",
        """CREATE TABLE audit_cells (
            run_id INTEGER NOT NULL, cell_pos INTEGER NOT NULL, pattern VARCHAR, N_z BIGINT,
            q_z DOUBLE, p_z DOUBLE, traffic_rows BIGINT, prediction DOUBLE, unseen BOOLEAN)""",
    )),
    (4, "judge cost and latency stored with a panel", (
        """CREATE TABLE judge_costs (
            panel_id INTEGER NOT NULL, judge VARCHAR NOT NULL, cost DOUBLE NOT NULL,
            latency DOUBLE NOT NULL, PRIMARY KEY (panel_id, judge))""",
    )),
    (5, "panel versions (content hash), the panel version each run used, id counters (ids never reused)", (
        # A new panel's version hashes its content (store.panels.panel_version); panels
        # stored before have theirs derived here from their stored rows and identity.
        "ALTER TABLE panels ADD COLUMN version VARCHAR",
        """UPDATE panels SET version = substr(md5(concat_ws('/', 'fcps-m5', panel_id, name, created_at,
            n_rows, n_judges,
            (SELECT coalesce(sum(hash(i.row_pos, i.item_id, i.group_id, i.label, i.block)), 0)
             FROM items i WHERE i.panel_id = panels.panel_id),
            (SELECT coalesce(sum(hash(o.row_pos, o.judge_pos, o.output)), 0)
             FROM outputs o WHERE o.panel_id = panels.panel_id))), 1, 16)""",
        # The version of the panel a run was computed on (a replaced panel refuses the save).
        "ALTER TABLE runs ADD COLUMN panel_version VARCHAR",
        "UPDATE runs SET panel_version = (SELECT p.version FROM panels p WHERE p.panel_id = runs.panel_id)",
        # The last id handed out: a deleted run's (or panel's) id is never given again.
        "CREATE TABLE counters (name VARCHAR PRIMARY KEY, value BIGINT NOT NULL)",
        """INSERT INTO counters SELECT 'run_id', greatest(
            (SELECT coalesce(max(run_id), 0) FROM runs),
            (SELECT coalesce(max(run_id), 0) FROM run_candidates),
            (SELECT coalesce(max(run_id), 0) FROM run_cells),
            (SELECT coalesce(max(run_id), 0) FROM sweep_cells),
            (SELECT coalesce(max(run_id), 0) FROM sweep_menu_cells),
            (SELECT coalesce(max(run_id), 0) FROM sweep_records),
            (SELECT coalesce(max(run_id), 0) FROM run_predictors),
            (SELECT coalesce(max(run_id), 0) FROM audit_cells))""",
        """INSERT INTO counters SELECT 'panel_id', greatest(
            (SELECT coalesce(max(panel_id), 0) FROM panels),
            (SELECT coalesce(max(panel_id), 0) FROM runs),
            (SELECT coalesce(max(panel_id), 0) FROM items))""",
    )),
    (6, "run notes: a user's annotation of a stored run", (
        # Free text the user attaches to a run (results browser, python -m fcps_core annotate);
        # NULL when there is none. Existing runs keep every value and get no note.
        "ALTER TABLE runs ADD COLUMN note VARCHAR",
    )),
    (7, "every candidate of every sweep split (the paper analyses that need the whole menu)", (
        # One row per (split, budget, candidate) of a sweep (fcps_core.paper.experiments.CANDIDATE_COLUMNS);
        # selected_by names the menus whose validation argmin the candidate was ('' if none).
        # Sweeps stored before keep no candidates: their analyses say so.
        """CREATE TABLE sweep_candidates (
            run_id INTEGER NOT NULL, split INTEGER NOT NULL, n_M INTEGER NOT NULL, path VARCHAR,
            K INTEGER, family VARCHAR, val_risk DOUBLE, val_mse DOUBLE, test_mse DOUBLE, H_K DOUBLE,
            Q_K DOUBLE, S_K INTEGER, unseen_val DOUBLE, unseen_test DOUBLE, V_cell DOUBLE,
            V_proxy DOUBLE, selected_by VARCHAR)""",
    )),
    (8, "what each finished selection deployed (an average's own judges and risks), derived for older runs", (
        # One row per finished selection: what it DEPLOYED, not its best candidate (an average of
        # tied models has its own judges, held-out and test risks, in no run_candidates row).
        # Selections stored before are derived from their stored summary (the result's JSON).
        DEPLOYED_TABLE,
        DERIVE_DEPLOYED.format(where="TRUE"),
    )),
]
LATEST_VERSION = MIGRATIONS[-1][0]
#: every table, in the order a panel/run delete must clear them (children first)
RUN_CHILD_TABLES = ("run_candidates", "run_cells", "sweep_cells", "sweep_menu_cells", "sweep_records",
                    "sweep_candidates", "run_predictors", "audit_cells", "run_deployed")
#: the tables whose rows are the store's content (:meth:`Store.content_digest`); the id
#: counters are bookkeeping, not content, and are left out
CONTENT_TABLES = ("panels", "judges", "items", "outputs", "runs") + RUN_CHILD_TABLES + ("judge_costs", "meta")
#: counter name -> the table and column whose ids it hands out
COUNTERS = {"run_id": ("runs", "run_id"), "panel_id": ("panels", "panel_id")}


def next_id(cur, counter: str) -> int:
    """The next id of ``counter`` (``run_id`` or ``panel_id``), inside the caller's
    transaction: one above every id handed out before, even of rows deleted since."""
    row = cur.execute("UPDATE counters SET value = value + 1 WHERE name = ? RETURNING value",
                      [counter]).fetchone()
    if row is None:                     # a counter lost by hand: restart above the stored ids
        table, column = COUNTERS[counter]
        row = cur.execute(f"INSERT INTO counters SELECT ?, coalesce(max({column}), 0) + 1 FROM {table} "
                          "RETURNING value", [counter]).fetchone()
    return int(row[0])


def newer_store_error(version: int) -> StoreError:
    return StoreError(f"the store was written by a newer fcps (schema version {version}; this "
                      f"fcps knows up to {LATEST_VERSION}); upgrade fcps to use it")


def migrate(cur, *, target: int | None = None) -> list[int]:
    """Bring the store's schema to ``target`` (default: the latest); each step is one
    transaction. Returns the versions applied."""
    target = LATEST_VERSION if target is None else target
    cur.execute("BEGIN TRANSACTION")
    cur.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, "
                "description VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)")
    current = cur.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0]
    cur.execute("COMMIT")
    if current > LATEST_VERSION:
        raise newer_store_error(current)
    applied = []
    for version, description, statements in MIGRATIONS:
        if version <= current or version > target:
            continue
        cur.execute("BEGIN TRANSACTION")
        try:
            for sql in statements:
                cur.execute(sql)
            cur.execute("INSERT INTO schema_version VALUES (?, ?, ?)", [version, description, utc_now()])
            cur.execute("COMMIT")
        except BaseException:
            rollback_quietly(cur)
            raise
        applied.append(version)
    return applied


def rollback_quietly(cur) -> None:
    """Roll back the open transaction, if any: a failed COMMIT (a full disk) has already
    ended it, and the error that got here is the one to report."""
    import duckdb
    try:
        cur.execute("ROLLBACK")
    except duckdb.Error:
        pass


def stored_schema_version(con) -> int:
    """The store's schema version (0 when it has none yet)."""
    try:
        return int(con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0])
    except Exception as exc:            # no schema_version table: an empty database file
        import duckdb
        if isinstance(exc, duckdb.CatalogException):
            return 0
        raise


def foreign_tables(con) -> list[str]:
    """The tables and views of a database without fcps's ``schema_version`` table (another
    program's DuckDB database, which migrating would write fcps tables into); empty for an
    fcps store and for a new, empty database."""
    names = [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
        "UNION ALL SELECT view_name FROM duckdb_views() WHERE database_name = current_database() "
        "AND NOT internal ORDER BY 1").fetchall()]
    return [] if "schema_version" in names else names
