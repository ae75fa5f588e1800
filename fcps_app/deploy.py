"""Deploy & monitor helpers: which predictors can be deployed, the cached traffic audit,
the predictor as SQL. Statistics live in fcps_core.deploy."""

from __future__ import annotations

import json

import streamlit as st

from fcps_core.jsonutil import json_ready
from fcps_app.common import get_panel, upload_path


def predictor_choices(store, selection: dict | None) -> dict:
    """Label -> a function returning the predictor's JSON: this session's selection, then
    every finished stored selection run (newest first)."""
    out = {}
    if selection and selection.get("predictor"):
        out[f"this session's selection ({selection['label']})"] = lambda: selection["predictor"]
    for r in store.runs(kind="select"):
        if r["status"] != "done" or not r.get("has_predictor"):
            continue        # failed, or stored by an fcps that did not keep predictors
        deployed = r.get("deployed_family")
        what = deployed if deployed and deployed != r.get("family") else f"{r['family']} K={r['K']}"
        out[f"run {r['run_id']} · {r['panel']} · {what}"] = \
            (lambda run_id=r["run_id"]: _stored_json(store, run_id))
    return out


def _stored_json(store, run_id: int) -> str:
    """A stored run's predictor as JSON text, validated as a file is (a PredictorError, one
    line, for a damaged one: the page shows it instead of failing in json.dumps)."""
    from fcps_core.predictor import FCPSPredictor
    doc = None

    def fetch():
        nonlocal doc
        doc = store.run_predictor(run_id)
        return doc

    FCPSPredictor.from_stored(fetch, f"run {run_id}")
    return json.dumps(doc)


def checked_predictor_json(data: bytes, name: str) -> str:
    """An uploaded predictor file as JSON text, read as the CLI reads one: within the byte,
    depth and number bounds (fcps_core.deploy.validate) and validated completely; a
    PredictorError (one line naming the file) otherwise."""
    from fcps_core.deploy.validate import parse_predictor_json
    from fcps_core.predictor import FCPSPredictor
    doc = parse_predictor_json(data, repr(name))
    FCPSPredictor.from_json(doc, name)
    return json.dumps(doc)


def _traffic_key(traffic: tuple) -> str:
    if traffic[0] == "upload":
        import hashlib
        return "upload:" + hashlib.sha256(traffic[2]).hexdigest() + ":" + traffic[3]
    return f"stored:{traffic[1]}:{traffic[2]}"


def run_audit(predictor_json: str, traffic: tuple):
    """(audit dict, predictions CSV text, the predictor's calibration panel name)."""
    return _cached_audit(predictor_json, _traffic_key(traffic), traffic)


@st.cache_data(show_spinner=False, max_entries=8)
def _cached_audit(predictor_json: str, key: str, _traffic: tuple):
    # key identifies the traffic (content hash or stored version); _traffic is not hashed
    from fcps_core.deploy.audit import audit_traffic
    from fcps_core.deploy.support import predictions_csv
    from fcps_core.ingest import load_panel
    from fcps_core.predictor import FCPSPredictor
    predictor = FCPSPredictor.from_dict(json.loads(predictor_json))
    if _traffic[0] == "upload":
        from fcps_core.deploy.traffic import load_with_empty_judges
        _, name, data, item_col = _traffic
        path, schemas = upload_path(name, data), predictor.judge_schemas()
        # a judge empty in every row is the monitoring case (the audit says 100 % missing)
        panel, _ = load_with_empty_judges(
            lambda judges: load_panel(path, name=name.split(".")[0], item_column=item_col, source_name=name,
                                      judges=judges, schema=schemas, require_labels=False),
            predictor.judges, schemas)
    else:
        panel = get_panel(_traffic)
    audit = audit_traffic(predictor, panel)
    text = predictions_csv(panel, audit.predictions, audit.support)
    return json_ready(audit.to_dict()), text, predictor.metadata.get("panel")


#: the SQL dialects of the download (fcps_core.deploy.sql.DIALECTS), as the page names them
SQL_DIALECTS = {"duckdb": "DuckDB", "postgres": "PostgreSQL", "sqlite": "SQLite"}


def sql_text(predictor_json: str, dialect: str = "duckdb") -> str:
    """The predictor as one SQL SELECT over a table ``traffic`` (fcps_core.deploy.sql),
    written for ``dialect`` (a key of :data:`SQL_DIALECTS`)."""
    from fcps_core.deploy.sql import predictor_sql
    from fcps_core.predictor import FCPSPredictor
    return predictor_sql(FCPSPredictor.from_dict(json.loads(predictor_json)), dialect=dialect)
