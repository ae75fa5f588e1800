"""The upload and import workflow: a file (a path, or uploaded bytes) is previewed from a
sample, read ONCE into a panel with the user's column mapping, shown, and that same panel
is committed to the store (checked as ``python -m fcps_core import`` checks a file) without
reading the file again.

Used by the command line (``import``, a panel file given to ``select``/``sweep``/``score``)
and the dashboard's Upload page; the readers (:mod:`fcps_core.ingest`) and the store are
reached only from here."""

from __future__ import annotations

from pathlib import Path

from ..ingest.files import (DEFAULT_LIMITS, MB, UPLOAD_SUFFIXES, FileError, ImportLimits, shown_name,  # noqa: F401
                           size_text)


def read_panel_file(path, **options):
    """A panel file (CSV/TSV/Parquet/JSONL, optionally gzipped, or a DataFrame) read with
    ``options`` (:func:`fcps_core.ingest.load_panel`'s column mapping and limits). The panel
    carries ``import_notes`` and ``import_warnings`` for the user."""
    from ..ingest import load_panel
    return load_panel(path, **options)


def import_warnings(panel) -> list[str]:
    """What may be misread in ``panel`` or no selection can use (a constant label or judge)."""
    from ..ingest import import_warnings as warnings
    return warnings(panel)


def preview_file(path, **options) -> dict:
    """What an import would see, from a sample of the file's first rows, without storing
    (:func:`fcps_core.ingest.preview`)."""
    from ..ingest import preview
    return preview(path, **options)


def import_panel_file(store, path: str, *, name: str, **options) -> dict:
    """Read, check and store a panel file (``python -m fcps_core import``): one read, the
    checks of a stored panel, one transaction. Returns the stored panel's facts with the
    reading's ``notes`` and ``warnings``."""
    from ..ingest import import_file
    return import_file(store, path, name=name, **options)


def check_importable(panel, **columns) -> None:
    """Refuse a panel no selection can use (no labels, one label value, fewer than three
    labelled groups), naming the column to check."""
    from ..ingest import check_importable as check
    check(panel, **columns)


def file_sha256(path) -> str:
    from ..ingest import file_sha256 as digest
    return digest(path)


# -- uploads (the dashboard): bytes saved once, previewed, read once, committed --------------

def upload_path(store, file_name: str, data: bytes) -> str:
    """Uploaded bytes saved under the store's ``uploads/`` folder (content-addressed; the
    user's file name contributes only its suffix, so it cannot escape the folder). Saving
    one cleans the folder: uploads no stored panel came from (previewed, rejected, traffic)
    go once old or too many (:mod:`fcps_core.ingest.uploads`); this one stays."""
    from ..ingest import save_upload
    return str(save_upload(data, file_name, store.path.parent, keep=store.source_digests()))


def preview_upload(store, file_name: str, data: bytes, **options) -> dict:
    """The preview of an uploaded file (its columns, their roles and detected schemas, from
    a sample); errors name the user's file, not its stored copy."""
    return preview_file(upload_path(store, file_name, data), source_name=Path(file_name).name, **options)


def parse_upload(store, file_name: str, data: bytes, options: dict):
    """An uploaded file read into a panel with ``options`` (the column mapping): the one full
    read of an upload. :func:`commit_upload` stores this panel as it is."""
    return read_panel_file(upload_path(store, file_name, data), name=Path(file_name).name.split(".")[0],
                           source_name=Path(file_name).name, **options)


def commit_upload(store, panel, file_name: str, data: bytes, options: dict, *, panel_name: str,
                  licence: str | None = None, replace: bool = False) -> dict:
    """Store ``panel``, read from this upload by :func:`parse_upload` with ``options``, as
    ``panel_name``: the checks and the stored facts of ``python -m fcps_core import``
    (:func:`fcps_core.ingest.import_read_panel`), without reading the file again."""
    from ..ingest.load import import_read_panel
    mapping = {k: v for k, v in options.items() if k not in ("limits",)}
    return import_read_panel(store, panel, upload_path(store, file_name, data), name=panel_name,
                             licence=licence or None, replace=replace, source_name=Path(file_name).name,
                             provenance={"uploaded_file": file_name, "note": licence}, **mapping)


def page_wording(message: str, controls: dict) -> str:
    """An error written for the command line with each flag swapped for the page control
    that sets it (:func:`fcps_core.ingest.page_wording`)."""
    from ..ingest import page_wording as wording
    return wording(message, controls)


def detect_layout(columns) -> str:
    """``wide`` or ``long`` from a file's columns (:func:`fcps_core.ingest.detect_layout`)."""
    from ..ingest import detect_layout as detect
    return detect(columns)


def judge_mappings(panel) -> list[dict]:
    """How each judge's outputs were read, judges with one reading grouped."""
    from ..ingest import judge_mappings as mappings
    return mappings(panel)


def map_labels(values):
    """Label texts as numbers with the built-in words (:func:`fcps_core.data.labels.map_labels`)."""
    from ..data.labels import map_labels as mapped
    return mapped(values)


def mapping_sentence(report: dict) -> str:
    """How the labels were read, in one sentence (:func:`fcps_core.data.labels.mapping_sentence`)."""
    from ..data.labels import mapping_sentence as sentence
    return sentence(report)
