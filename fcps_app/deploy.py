"""Deploy & monitor helpers: which predictors can be deployed, the cached traffic audit,
the predictor as SQL. The workflow (reading traffic with the predictor's schemas, refusing
traffic without a judge it reads, scoring, auditing) is fcps_core.service.deploy's."""

from __future__ import annotations

import json

import streamlit as st

from fcps_core.defaults import deployed_family_name
from fcps_core.service import deploy
from fcps_core.service.files import json_ready
from fcps_app.common import get_panel, get_store

#: the SQL dialects of the download, as the page names them
SQL_DIALECTS = deploy.SQL_DIALECTS


def predictor_choices(store, selection: dict | None) -> dict:
    """Label -> a function returning the predictor's JSON: this session's selection, then
    every finished stored selection run (newest first)."""
    out = {}
    if selection and selection.get("predictor"):
        out[f"this session's selection ({selection['label']})"] = lambda: selection["predictor"]
    for r in store.runs(kind="select"):
        if r["status"] != "done" or not r.get("has_predictor"):
            continue        # failed, or stored by an fcps that did not keep predictors
        what = deployed_family_name(r.get("family") or r.get("deployed_family"), r.get("deployed_members"))
        what += "" if r.get("K") is None else f" K={r['K']}"
        out[f"run {r['run_id']} · {r['panel']} · {what}"] = \
            (lambda run_id=r["run_id"]: deploy.stored_predictor_json(store, run_id))
    return out


def checked_predictor_json(data: bytes, name: str) -> str:
    """An uploaded predictor file as JSON text, read and validated as the CLI reads one."""
    return deploy.checked_predictor_json(data, name)


def _traffic_key(traffic: tuple) -> str:
    if traffic[0] in ("upload", "session"):
        import hashlib
        return f"{traffic[0]}:" + hashlib.sha256(traffic[2]).hexdigest() + ":" + traffic[3]
    return f"stored:{get_store().path}:{traffic[1]}:{traffic[2]}"


def run_audit(predictor_json: str, traffic: tuple):
    """(audit dict, predictions CSV text, the predictor's calibration panel name) of
    ``traffic``: ("upload", file name, bytes, item id column) for a traffic file,
    ("stored", name, created_at) for a stored panel, ("session", file name, bytes, mapping
    JSON) for a panel uploaded in this session."""
    return _cached_audit(predictor_json, _traffic_key(traffic), traffic)


@st.cache_data(show_spinner=False, max_entries=8)
def calibration_panel(predictor_json: str) -> str | None:
    """The stored panel a predictor was calibrated on (its metadata), parsed once per file."""
    return (json.loads(predictor_json).get("metadata") or {}).get("panel")


@st.cache_data(show_spinner=False, max_entries=8)
def _cached_audit(predictor_json: str, key: str, _traffic: tuple):
    # key identifies the traffic (content hash or stored version); _traffic is not hashed
    predictor = deploy.predictor_from_json(predictor_json)
    if _traffic[0] == "upload":
        _, name, data, item_col = _traffic
        panel = deploy.read_uploaded_traffic(get_store(), predictor, name, data, item_col)
    else:       # a stored panel, or one uploaded in this session ("session": its file, bytes, mapping)
        panel = get_panel(_traffic if _traffic[0] == "stored" else ("upload",) + tuple(_traffic[1:]))
        # the command line's refusal of traffic without a judge the predictor reads
        deploy.check_traffic_judges(predictor, panel, f"panel {_traffic[1]!r}")
    audit = deploy.audit(predictor, panel)
    text = deploy.predictions_csv(panel, audit.predictions, audit.support)
    return json_ready(audit.to_dict()), text, predictor.metadata.get("panel")


def sql_text(predictor_json: str, dialect: str = "duckdb") -> str:
    """The predictor as one SQL SELECT over a table ``traffic`` (fcps_core.deploy.sql),
    written for ``dialect`` (a key of :data:`SQL_DIALECTS`)."""
    return deploy.predictor_sql(deploy.predictor_from_json(predictor_json), dialect=dialect)
