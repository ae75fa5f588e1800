"""The deploy workflow (``score``, ``audit``, the Deploy & monitor page): load a predictor
(a file, uploaded bytes or a stored run's), read traffic with the predictor's judge schemas
(a judge empty in every row is the monitoring case: missing on every row), refuse traffic
that lacks a judge column the predictor reads, score it and audit it against the
calibration support (:mod:`fcps_core.deploy`), and export the predictor as SQL.

Both front ends read traffic through :func:`load_traffic`, so both refuse the same traffic
with the same sentence."""

from __future__ import annotations

import json
import os
from typing import Callable, Sequence

from ..wording import count_of, noun_for
from ..errors import FCPSError

#: the SQL dialects of an export (fcps_core.deploy.sql.DIALECTS), as people name them
SQL_DIALECTS = {"duckdb": "DuckDB", "postgres": "PostgreSQL", "sqlite": "SQLite"}


def __getattr__(name: str):
    # the audit's default thresholds and the predictor size bound, without importing the
    # audit (numpy, the panel) for a command that only parses its arguments
    if name == "DEFAULT_THRESHOLDS":
        from ..deploy.audit import DEFAULT_THRESHOLDS
        return DEFAULT_THRESHOLDS
    if name == "MAX_PREDICTOR_BYTES":
        from ..deploy.validate import MAX_PREDICTOR_BYTES
        return MAX_PREDICTOR_BYTES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- the predictor ----------------------------------------------------------------------------

def load_predictor(ref: str, store_path: str | None = None):
    """A predictor file, or ``run:N`` (any case, as ``show``/``export`` take it): the
    predictor a stored selection deploys."""
    from ..deploy.predictor import FCPSPredictor
    if ref.lower().startswith("run:") and not os.path.exists(ref):
        from .stores import store_at
        try:
            run_id = int(ref[4:].strip())
        except ValueError:
            raise FCPSError(f"{ref!r} is not a run reference; write run:N (see: python -m fcps_core runs)") from None
        store = store_at(store_path)
        return FCPSPredictor.from_stored(lambda: store.run_predictor(run_id), f"run {run_id}")
    return FCPSPredictor.load(ref)


def predictor_from_dict(doc: dict):
    """A predictor from its JSON document (``FCPSPredictor.to_dict()``)."""
    from ..deploy.predictor import FCPSPredictor
    return FCPSPredictor.from_dict(doc)


def predictor_from_json(text: str):
    return predictor_from_dict(json.loads(text))


def stored_predictor_json(store, run_id: int) -> str:
    """A stored run's predictor as JSON text, validated as a file is (a PredictorError, one
    line, for a damaged one)."""
    from ..deploy.predictor import FCPSPredictor
    doc = None

    def fetch():
        nonlocal doc
        doc = store.run_predictor(run_id)
        return doc

    FCPSPredictor.from_stored(fetch, f"run {run_id}")
    return json.dumps(doc)


def checked_predictor_json(data: bytes, name: str) -> str:
    """An uploaded predictor file as JSON text, read as the command line reads one: within
    the byte, depth and number bounds (:mod:`fcps_core.deploy.validate`) and validated
    completely; a PredictorError (one line naming the file) otherwise."""
    from ..deploy.validate import parse_predictor_json
    from ..deploy.predictor import FCPSPredictor
    doc = parse_predictor_json(data, repr(name))
    FCPSPredictor.from_json(doc, name)
    return json.dumps(doc)


def predictor_sql(predictor, table: str = "traffic", *, item_column: str = "item_id",
                  dialect: str = "duckdb") -> str:
    """The predictor as one SQL SELECT over ``table`` (:func:`fcps_core.deploy.sql.predictor_sql`)."""
    from ..deploy.sql import predictor_sql as sql
    return sql(predictor, table, item_column=item_column, dialect=dialect)


def missing_behaviour(predictor) -> str:
    """What the predictor does with a missing judge output, in words."""
    from ..deploy.audit import missing_behaviour as words
    return words(predictor)


# -- the traffic ------------------------------------------------------------------------------

def short_name(value, limit: int = 80) -> str:
    """A judge or file name cut for a one-line message (:func:`fcps_core.deploy.validate.short`)."""
    from ..deploy.validate import short
    return short(value, limit)


def check_traffic_judges(predictor, panel, where: str) -> None:
    """Refuse traffic lacking a judge column the predictor reads (one line naming ``where``,
    the missing columns and the two ways out)."""
    missing = [j for j in predictor.judges if j not in panel.judge_names]
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise FCPSError(f"{where}: the traffic lacks judge {noun_for(len(missing), 'column')} the predictor needs: "
                        + ", ".join(short_name(m) for m in missing[:5]) + more
                        + "; add those columns, or score it with a predictor of the judges it has")


def load_traffic(load: Callable[[Sequence[str] | None], object], predictor, *, where: str | Callable[[], str],
                 judges: Sequence[str] | None = None, schemas=None):
    """(panel, empty judges): traffic read by ``load(judges)`` (a reader taking the judge
    columns to read, None for all; it reads each judge with the predictor's schema), where a
    judge the predictor reads that is empty in every row counts as missing on every row
    (:func:`fcps_core.deploy.traffic.load_with_empty_judges`), then checked to have every
    judge the predictor reads (:func:`check_traffic_judges`; ``where`` names the traffic, or
    says its name once it is read)."""
    from ..deploy.traffic import load_with_empty_judges
    schemas = predictor.judge_schemas() if schemas is None else schemas     # as the reader was given them
    panel, empty = load_with_empty_judges(load, predictor.judges, schemas, judges=judges)
    check_traffic_judges(predictor, panel, where() if callable(where) else where)
    return panel, empty


def read_traffic_fast(path: str, predictor, *, schema, **columns):
    """A plain traffic file through the fast reader (:func:`fcps_core.deploy.traffic.read_traffic`):
    (panel, item ids as Arrow), or None when the file needs the full reader."""
    from ..deploy.traffic import read_traffic
    return read_traffic(path, predictor.judges, schema=schema, **columns)


def read_uploaded_traffic(store, predictor, file_name: str, data: bytes, item_column: str):
    """Uploaded traffic bytes read with the predictor's judge schemas (unlabelled rows are
    fine), through :func:`load_traffic`; errors name the user's file."""
    from .upload import read_panel_file, upload_path
    path, schemas = upload_path(store, file_name, data), predictor.judge_schemas()

    def load(judges):
        return read_panel_file(path, name=file_name.split(".")[0], item_column=item_column, source_name=file_name,
                               judges=judges, schema=schemas, require_labels=False)

    return load_traffic(load, predictor, where=file_name)[0]


def read_outputs(predictor, panel):
    """(panel, notes): ``panel`` with its outputs read as the predictor reads them
    (``FCPSPredictor.read_outputs``: an output differing from a calibration output only by
    case is read as it), and one line per judge for people: the outputs so read, then the
    outputs calibration never saw, with their rows (:mod:`fcps_core.deploy.outputs`)."""
    panel, readings = predictor.read_outputs(panel)
    return panel, [line for r in readings for line in r.lines()]


def audit_output_notes(judge: dict) -> list[str]:
    """The same lines for one judge of an audit (``AuditResult.to_dict()["judges"]``)."""
    from ..deploy.outputs import describe
    return describe(judge["judge"], judge.get("read_as", []), judge.get("never_seen_outputs", []))


def score(predictor, panel):
    """(predictions, per-row support or None) of ``panel`` (``FCPSPredictor.score``)."""
    return predictor.score(panel)


def audit(predictor, panel, *, thresholds: dict | None = None, seed: int = 0):
    """The audit of traffic ``panel`` against the predictor's calibration support
    (:func:`fcps_core.deploy.audit.audit_traffic`)."""
    from ..deploy.audit import audit_traffic
    return audit_traffic(predictor, panel, thresholds=thresholds, seed=seed)


def predictions_csv(panel, predictions, support) -> str:
    """The predictions with per-row support as CSV text (the one neutralising writer)."""
    from ..deploy.support import predictions_csv as text
    return text(panel, predictions, support)


def predictions_csv_bytes(*args, **kwargs) -> bytes:
    from ..deploy.writer import predictions_csv_bytes as data
    return data(*args, **kwargs)


def save_audit(store, audit_result, *, panel_name: str | None, predictor, params: dict, **when) -> int:
    """Store an audit with the panel its predictor was calibrated on (``panel_name``, else
    the predictor's); refused, naming the panel, when that panel is not stored."""
    from .stores import StoreError
    name = panel_name or predictor.metadata.get("panel")
    if not name or not store.has_panel(name):
        raise StoreError(f"an audit is stored with the panel its predictor was calibrated on "
                         f"({name!r} is not in the store): import that panel, or name a stored one "
                         "with --panel-name")
    return store.save_audit(audit_result, panel=name, predictor=predictor.to_dict(), params=params, **when)
