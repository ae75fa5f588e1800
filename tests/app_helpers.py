"""Shared AppTest helpers: point the app at a small pre-seeded store, find widgets by label."""

from __future__ import annotations

import os

from store_helpers import demo_store


def app_store(path):
    """Generator for a fixture: the app's store is ``path`` (FCPS_STORE) while it runs; the app
    caches its store handle per process, so the cache is cleared on both ends."""
    old = os.environ.get("FCPS_STORE")
    os.environ["FCPS_STORE"] = str(path)
    from fcps_app.common import get_store
    get_store.clear()
    yield path
    get_store.clear()
    if old is None:
        os.environ.pop("FCPS_STORE", None)
    else:
        os.environ["FCPS_STORE"] = old


def seeded_app_store(tmp_path_factory):
    """Generator for a module-scoped fixture: the app's store is a fresh demo store for the
    module."""
    yield from app_store(demo_store(tmp_path_factory.mktemp("store") / "fcps.duckdb"))


def by_label(widgets, label):
    for w in widgets:
        if w.label == label:
            return w
    raise AssertionError(f"no widget labelled {label!r}: {[w.label for w in widgets]}")


def help_problems(at) -> list[str]:
    """Every table column and metric on an AppTest page without a real help text (the
    glossary UI's bare fallback "column." does not count)."""
    import json
    problems = []
    for i, df in enumerate(at.dataframe):
        config = json.loads(df.proto.columns or "{}")
        for col in df.value.columns:
            text = (config.get(str(col)) or {}).get("help")
            if not text or text.strip() == f"{col}.":
                problems.append(f"table {i} column {col!r}: help {text!r}")
    for m in at.metric:
        if not (m.proto.help or "").strip():
            problems.append(f"metric {m.label!r} has no help")
    return problems
