"""AppTest walk of every dashboard page with hostile judge and panel names (issue 26, item 3).

Judge and panel names are user data. Shown through Streamlit's Markdown (st.markdown,
warning, info, error, success, caption, metric labels and help, widget labels and help,
expander and tab labels, table column help, progress text) a name such as
``[Re-verify](https://...)`` would become a live link, ``![x](https://...)`` a remote image,
``<img ...>`` HTML, ``$x$`` LaTeX, ``:material/warning:`` an icon, and a newline would start a
heading of its own. The store here holds one panel whose name and judge names are all of
those, a selection run and a sweep run on it; every page is opened on them, and every
Markdown-rendered string of every element is checked: each hostile name occurs only escaped
(``fcps_app.common.md``), never raw, and no page raises.
"""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import by_label

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 300

LINK = "[Re-verify](https://example.com/a)"
IMAGE = "![x](https://example.com/i.png)"
HTML = "<img src=x onerror=alert(1)>"
ESCAPE = "esc\x1b]0;pwned\x07\x1b[2J"
NEWLINE = "multi\n# forged heading"
LATEX = "$x^2$"
ICON = ":material/warning: icon"
JUDGES = [LINK, IMAGE, HTML, ESCAPE, NEWLINE, LATEX, ICON]
PANEL = "[p](https://example.com/p) ![i](https://example.com/p.png) <b>bold</b> $p$ :material/home:"

#: Markdown that must never reach the page from a name: links and images (any URL of the
#: names), raw HTML tags, LaTeX, the icon shortcode, a line starting a heading, escape bytes
FORBIDDEN = [re.compile(p) for p in (
    r"(?<!\\)\]\(https://example\.com",        # [text](url) / ![alt](url): a live link or image
    r"(?<!\\)<(img|b)\b",                       # an HTML tag
    r"(?<!\\)\$(x\^2|p)(?<!\\)\$",             # inline LaTeX
    r":material/(warning|home):",               # a Streamlit icon shortcode
    r"(^|\n)# forged",                          # a heading made by a newline in a name
    r"[\x1b\x07]",                               # terminal escapes
)]
#: element types whose strings are not Markdown (code, JSON, preformatted text)
PLAIN = {"code", "json", "text", "exception"}
#: the fields Streamlit renders as Markdown: bodies of markdown/caption/alerts/headings,
#: labels and help of widgets, metrics, expanders and tabs, progress text
FIELDS = ("body", "label", "help", "text")


def _hostile_csv(path: Path, rows: int = 300) -> Path:
    """A labelled binary panel whose judges carry the hostile names; the image judge copies
    the link judge's outputs, so the Judges page warns about a near-duplicate pair."""
    rng = np.random.default_rng(7)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "label"] + JUDGES)
        for i in range(rows):
            y = int(rng.integers(0, 2))
            outs = [y if rng.random() < 0.85 - 0.04 * k else 1 - y for k in range(len(JUDGES))]
            outs[1] = outs[0]
            w.writerow([f"it{i}", y] + outs)
    return path


@pytest.fixture(scope="module")
def hostile_store(tmp_path_factory):
    """A store holding only the hostile panel, a selection and a sweep on it (marked seeded,
    so the app does not add the demo content); the app is pointed at it for the module."""
    from fcps_core import make_blocks, select
    from fcps_core.paper.experiments import calibration_growth
    from fcps_core.ingest import import_file
    from fcps_core.store import Store
    from fcps_app.common import get_store
    folder = tmp_path_factory.mktemp("hostile")
    store = Store(str(folder / "fcps.duckdb"))
    store.set_meta("seed_version", "hostile-names-test")
    import_file(store, str(_hostile_csv(folder / "hostile.csv")), name=PANEL, licence=f"{LINK} {HTML}")
    panel = store.load_panel(PANEL)
    result = select(panel, make_blocks(panel), families=("table", "one_coin_iso", "logistic"), k_max=4,
                    n_boot=20)
    select_run = store.save_selection(result, panel=PANEL, predictor=result.predictor().to_dict())
    sweep = calibration_growth(panel, [40, 80], n_select=40, n_val=40, n_test=80, splits=2,
                               families=("table", "logistic"), k_max=3)
    sweep_run = store.save_sweep(sweep, panel=PANEL)
    old = os.environ.get("FCPS_STORE")
    os.environ["FCPS_STORE"] = str(store.path)
    get_store.clear()
    yield {"select": select_run, "sweep": sweep_run}
    get_store.clear()
    if old is None:
        os.environ.pop("FCPS_STORE", None)
    else:
        os.environ["FCPS_STORE"] = old


def _nodes(node):
    """Every node of AppTest's tree under ``node`` (blocks and elements, depth first)."""
    yield node
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from _nodes(child)


def markdown_texts(at: AppTest) -> list[tuple[str, str]]:
    """(where, text) of every string the page renders as Markdown: the FIELDS of every
    element and block (a block's label sits in its sub-message: expander, tab), a radio's
    options, and the label and help of every table column."""
    out = []
    for node in _nodes(at._tree):
        proto = getattr(node, "proto", None)
        kind = str(getattr(node, "type", type(node).__name__))
        if proto is None or not hasattr(proto, "DESCRIPTOR") or kind in PLAIN:
            continue
        messages = [proto]
        if any(o.name == "type" for o in proto.DESCRIPTOR.oneofs) and proto.WhichOneof("type"):
            messages.append(getattr(proto, proto.WhichOneof("type")))
        for m in messages:
            fields = m.DESCRIPTOR.fields_by_name
            out += [(f"{kind}.{f}", getattr(m, f)) for f in FIELDS
                    if f in fields and isinstance(getattr(m, f), str) and getattr(m, f)]
            if kind == "radio" and "options" in fields:
                out += [("radio.option", o) for o in m.options]
            if "columns" in fields and isinstance(m.columns, str) and m.columns.startswith("{"):
                for col, cfg in json.loads(m.columns).items():
                    out += [(f"{kind}.{col}.{f}", cfg[f]) for f in ("label", "help")
                            if isinstance(cfg, dict) and isinstance(cfg.get(f), str)]
    return out


def check_page(at: AppTest, where: str) -> list[str]:
    """Problems on the page: an exception, or a hostile name's Markdown rendered raw."""
    assert not at.exception, f"{where}: {at.exception}"
    problems = []
    for kind, text in markdown_texts(at):
        for pattern in FORBIDDEN:
            hit = pattern.search(text)
            if hit:
                problems.append(f"{where}: {kind} renders {hit.group(0)!r} raw in {text[:160]!r}")
    return problems


def _open(page: str, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    at.switch_page(f"app_pages/{page}.py").run()
    return at


def test_the_escape_helper_leaves_no_markdown():
    """``md`` (the one helper) on each hostile name: no pattern above survives it, the text
    stays on one line, and plain words are unchanged."""
    from fcps_app.common import md
    for name in JUDGES + [PANEL]:
        text = md(name)
        assert "\n" not in text and not any(p.search(text) for p in FORBIDDEN), (name, text)
    for plain in ("gpt-judge 2", "plain words", "judges.csv: line 3 (of 10)", "UTF-8 text; 0.85"):
        assert md(plain) == plain                 # plain text is left alone (readable source)
    assert md("- a") == "\\- a" and md("2. b") == "2\\. b"      # list markers only at the start


def test_every_page_escapes_hostile_names(hostile_store):
    """Every page, opened on the hostile panel's runs (deep links) and with a selection in
    the session, renders no hostile name as live Markdown and raises nothing."""
    runs = hostile_store
    problems = []
    at = _open("overview")
    problems += check_page(at, "overview")
    names = at.dataframe[0].value["name"].tolist()
    assert names == [PANEL]                 # the store holds the hostile panel
    for page in ("upload", "audit", "deploy"):
        problems += check_page(_open(page), page)
    # a selection opened by its link: Select, then the pages that use the session's selection
    at = _open("select", {"run": str(runs["select"])})
    problems += check_page(at, "select")
    assert at.session_state["selection"]["run_id"] == runs["select"]
    for page in ("judges", "plan", "deploy", "audit"):
        at.switch_page(f"app_pages/{page}.py").run()
        problems += check_page(at, f"{page} (with the selection)")
    assert any("near-duplicate" in w.value for w in _warnings(at, "judges"))
    # Next judge opens the stored selection; its button refits it from the stored settings
    # (a stored run keeps no fitted models), then plans
    at.switch_page("app_pages/plan.py").run()
    problems += check_page(at, "plan (stored selection)")
    by_label(at.button, "Plan the next judge").click().run()
    problems += check_page(at, "plan (planned)")
    assert any("curated judges" in e.value for e in _alerts(at))
    at.switch_page("app_pages/judges.py").run()      # now with contributions of a fitted result
    problems += check_page(at, "judges (fitted selection)")
    # the sweep opened by its link on every page that shows sweeps
    for page in ("regime", "gaps", "lab", "reproduction"):
        problems += check_page(_open(page, {"run": str(runs["sweep"])}), f"{page} (sweep link)")
    # the results browser: one run, then both side by side
    problems += check_page(_open("results", {"run": str(runs["select"])}), "results")
    problems += check_page(_open("results", {"compare": f"{runs['select']},{runs['sweep']}"}), "results compare")
    # a hostile link parameter
    problems += check_page(_open("regime", {"run": LINK}), "regime (hostile ?run=)")
    assert not problems, "\n".join(problems)


def _warnings(at: AppTest, page: str):
    at.switch_page(f"app_pages/{page}.py").run()
    return list(at.warning)


def _alerts(at: AppTest):
    return list(at.success) + list(at.warning) + list(at.info)


def test_upload_page_escapes_a_hostile_file(hostile_store, tmp_path):
    """The Upload page previewing a file whose name and judge columns are hostile: the same
    check as every other page."""
    data = _hostile_csv(tmp_path / "h.csv").read_bytes()
    at = _open("upload")
    at.file_uploader[0].set_value((f"{LINK}.csv", data, "text/csv")).run()
    problems = check_page(at, "upload (hostile file)")
    assert not problems, "\n".join(problems)


def _costs_script():
    """AppTest script: the judge-costs editor with one hostile judge left without a cost (the
    table editor is replaced by its edited result: AppTest cannot type into it)."""
    import math
    from types import SimpleNamespace

    import streamlit as st
    from fcps_app.costs import judge_costs_editor
    names = ["[Re-verify](https://example.com/a)", "plain"]
    editor = st.data_editor
    st.data_editor = lambda base, **kw: base.assign(cost=[math.nan, 1.0])
    try:
        judge_costs_editor("uploaded: x", SimpleNamespace(judge_names=names))
    finally:
        st.data_editor = editor


def test_the_cost_warning_escapes_the_judge_name():
    """The Select page's cost warning names a judge without a cost: escaped, not a link."""
    at = AppTest.from_function(_costs_script, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    assert any("1 judge has no cost yet" in w.value for w in at.warning)
    problems = check_page(at, "judge costs")
    assert not problems, "\n".join(problems)
