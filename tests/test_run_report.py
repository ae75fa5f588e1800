"""The exportable run report, run notes, run deletes and schema version 6.

* One self-contained HTML report per stored run (``fcps_core.reports.run_report``): a selection's
  report has every section, verdict first, in the documented order; its numbers are the
  stored run's; text a user wrote (judge names, notes, licence, provenance) is escaped; a
  sweep, an audit and a failed run get the sections that apply; each table's terms are
  printed below it; plotly.js is embedded once, or not at all with ``figures=False``.
* ``python -m fcps_core export run:N --format html`` writes it and refuses to replace a
  file without ``--force``, like every other export; ``annotate`` sets and clears a note.
* The store keeps a note per run, deletes a run with all its rows, and migrates a store of
  schema 5 (before notes) keeping its runs.
"""

from __future__ import annotations

import re

import duckdb
import pytest

from fcps_core import make_blocks, select
from fcps_core.deploy.audit import audit_traffic
from fcps_core.paper.experiments import calibration_growth
from fcps_core.deploy.predictor import FCPSPredictor
from fcps_core.reports.run_report import SECTIONS, run_report_html, split_sizes
from fcps_core.store import LATEST_VERSION, RUN_CHILD_TABLES, Store, StoreError, migrate
from fcps_core.store.runs import MAX_NOTE_CHARS
from fcps_core.paper.synthetic import make_regime
from paper_protocol import select as paper_select

from store_helpers import assert_one_line_error, run_cli

EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """A store with a panel whose first judge is named like a script, and on it: a
    cross-fitted selection (with a note), a split-protocol selection, a sweep, a traffic
    audit and a failed run. Returns (store, {kind: run id})."""
    store = Store(tmp_path_factory.mktemp("report") / "store.duckdb")
    panel = make_regime("mixed", rows=400, judges=4, seed=0)
    panel.judges[0].name = EVIL
    store.add_panel(panel, name="evil", licence="<b>MIT</b> & co",
                    provenance={"origin": "<img src=x onerror=alert(2)>", "rows": 400})
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    crossfit = select(panel, blocks, families=["table", "logistic"], paths=["info_first"], n_jobs=1)
    ids = {"select": store.save_selection(crossfit, panel="evil")}
    store.set_run_note(ids["select"], "<script>alert(3)</script> checked & kept")
    split = paper_select(panel, make_blocks(panel, split="1:2:1:1", seed=0), families=["table", "logistic"],
                         paths=["info_first"])
    ids["split"] = store.save_selection(split, panel="evil")
    sweep = calibration_growth(panel, [40, 80], n_select=80, n_val=80, n_test=120, splits=2, seed=0,
                               families=["table", "logistic"], paths=["info_first"])
    ids["sweep"] = store.save_sweep(sweep, panel="evil")
    predictor = FCPSPredictor.from_selection(crossfit)
    ids["audit"] = store.save_audit(audit_traffic(predictor, panel), panel="evil", predictor=predictor.to_dict())
    ids["failed"] = store.save_failed_run(panel="evil", kind="select", params={"k_max": 3}, error="too few <rows>")
    return store, ids


def headings(text: str) -> list[str]:
    return re.findall(r"<h2>(.*?)</h2>", text)


def test_a_selection_report_has_every_section_verdict_first(reports):
    store, ids = reports
    text = run_report_html(store, ids["select"], figures=False)
    assert headings(text) == ["Verdict", "Judges", "Candidates", "Regime", "Cell pressure", "Baselines",
                              "Parameters", "Data provenance"] == list(SECTIONS["select"])
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert "<script" not in text                    # no figures: no script at all
    assert "<link" not in text and "src=" not in text.replace("&lt;img src=x", "")     # nothing fetched


def test_user_text_is_escaped_everywhere(reports):
    store, ids = reports
    for figures in (False, True):
        text = run_report_html(store, ids["select"], figures=figures)
        assert EVIL not in text and "<script>alert(3)" not in text and "<img src" not in text
        assert "<b>MIT</b>" not in text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text          # the judge, shown as written
        assert "&lt;script&gt;alert(3)&lt;/script&gt; checked &amp; kept" in text     # the note
        assert "&lt;b&gt;MIT&lt;/b&gt; &amp; co" in text                  # the licence
        assert "&lt;img src=x onerror=alert(2)&gt;" in text               # the provenance
    failed = run_report_html(store, ids["failed"], figures=False)
    assert "too few &lt;rows&gt;" in failed and "too few <rows>" not in failed


def test_the_report_numbers_are_the_stored_runs(reports):
    store, ids = reports
    run = store.run(ids["select"])
    res = run["result"]
    sel = res["selected"]
    text = run_report_html(store, ids["select"], figures=False)
    verdict = text[text.index("<h2>Verdict</h2>"):text.index("<h2>Judges</h2>")]
    assert f"{sel['val_mse']:.4f}" in verdict and f"{sel['test_mse']:.4f}" in verdict
    assert f"{res['deployed_risk']['estimate']:.4f}" in verdict
    params = text[text.index("<h2>Parameters</h2>"):text.index("<h2>Data provenance</h2>")]
    assert f">{res['split']['n_T']:,}<" in params and f">{res['split']['n_deployable']:,}<" in params
    assert f">{run['panel_version']}<" in params and f">{run['seed']}<" in params
    provenance = text[text.index("<h2>Data provenance</h2>"):]
    info = store.panel_info("evil")
    assert f">{info['version']}<" in provenance and ">evil<" in provenance
    baselines = text[text.index("<h2>Baselines</h2>"):text.index("<h2>Parameters</h2>")]
    for b in res["baselines"]:
        assert f"{b['risk']:.4f}" in baselines
    # the split protocol: the stored block sizes
    split = store.run(ids["split"])["result"]["split"]
    sizes = {s["key"]: s["rows"] for s in split_sizes(split)}
    assert sizes == {k: split[k] for k in ("n_S", "n_M", "n_V", "n_T")}
    text = run_report_html(store, ids["split"], figures=False)
    for k in ("n_S", "n_M", "n_V", "n_T"):
        assert f"<td>{k}</td><td class=num>{split[k]:,}</td>" in text


def test_each_table_prints_its_terms_below_it(reports):
    from fcps_core.reports.glossary import help_text
    store, ids = reports
    text = run_report_html(store, ids["select"], figures=False)
    candidates = text[text.index("<h2>Candidates</h2>"):text.index("<h2>Regime</h2>")]
    table_end = candidates.index("</table>")
    terms = candidates[table_end:]
    assert terms.startswith('</table><dl class="terms">')
    for key in ("val_mse", "test_mse", "K", "H_K"):
        assert help_text(key).replace("'", "&#x27;") in terms, key
    cells = text[text.index("<h2>Cell pressure</h2>"):text.index("<h2>Baselines</h2>")]
    assert help_text("N_z") in cells


@pytest.mark.parametrize("kind", ["sweep", "audit", "failed"])
def test_sweeps_audits_and_failed_runs_get_the_sections_that_apply(reports, kind):
    store, ids = reports
    text = run_report_html(store, ids[kind], figures=False)
    assert headings(text) == list(SECTIONS[kind])
    if kind == "sweep":
        cells = store.run(ids["sweep"])["result"]["cells"]
        assert all(f"{c['delta']:.4f}" in text for c in cells)
    elif kind == "audit":
        assert store.run(ids["audit"])["result"]["status"] in text
        assert "Judge output drift" not in text                       # no figures asked for


def test_figures_embed_plotly_once(reports):
    store, ids = reports
    text = run_report_html(store, ids["select"])
    assert text.count("Plotly.newPlot(") >= 2
    assert text.count("plotly.js v") <= 2 and len(text) > 3_000_000      # the bundle's banner, once
    assert len(re.findall(r"<script type=\"text/javascript\">/\*\*", text)) <= 1
    sweep = run_report_html(store, ids["sweep"])
    assert sweep.count("Plotly.newPlot(") == 2


# -- the command line ----------------------------------------------------------------------------

def test_cli_export_writes_the_report_and_never_replaces_a_file_unasked(reports, tmp_path):
    store, ids = reports
    path = str(store.path)
    out = tmp_path / "report.html"
    code, stdout, err = run_cli("export", f"run:{ids['select']}", "--format", "html", "--out", str(out),
                                "--no-figures", "--store", path)
    assert code == 0, err
    assert stdout == "" and err == f"wrote {out}\n"
    written = out.read_text(encoding="utf-8")
    assert headings(written) == list(SECTIONS["select"])
    before = out.read_bytes()
    line = assert_one_line_error(run_cli("export", f"run:{ids['select']}", "--format", "html", "--out",
                                         str(out), "--store", path))
    assert "already exists; pass --force" in line and out.read_bytes() == before
    code, _, err = run_cli("export", str(ids["sweep"]), "--format", "html", "--out", str(out), "--force",
                           "--no-figures", "--store", path)
    assert code == 0, err
    assert headings(out.read_text(encoding="utf-8")) == list(SECTIONS["sweep"])
    line = assert_one_line_error(run_cli("export", "evil", "--format", "html", "--store", path))
    assert "is a panel name: give run:ID" in line
    line = assert_one_line_error(run_cli("export", "evil", "--format", "csv", "--no-figures", "--store", path))
    assert "--no-figures applies only to --format html" in line


def test_cli_annotate_sets_and_clears_a_note(tmp_path):
    path = str(tmp_path / "s.duckdb")
    store = Store(path)
    panel = make_regime("mixed", rows=200, judges=3, seed=1)
    store.add_panel(panel, name="p")
    run_id = store.save_failed_run(panel="p", kind="select", params={}, error="x")
    code, out, err = run_cli("annotate", f"run:{run_id}", "looks odd: rerun", "--store", path)
    assert (code, out) == (0, f"noted run {run_id}\n"), err
    assert Store(path).run(run_id)["note"] == "looks odd: rerun"
    code, out, _ = run_cli("runs", "--store", path)
    assert "looks odd: rerun" in out
    code, out, _ = run_cli("annotate", str(run_id), "--clear", "--store", path)
    assert (code, out) == (0, f"removed the note of run {run_id}\n")
    assert Store(path).run(run_id)["note"] is None
    assert "no stored run with id 99" in assert_one_line_error(run_cli("annotate", "run:99", "x", "--store", path))
    assert "not both" in assert_one_line_error(run_cli("annotate", f"run:{run_id}", "--store", path))


# -- the store ---------------------------------------------------------------------------------------

def test_a_note_round_trips_and_is_bounded(store):
    panel = make_regime("mixed", rows=200, judges=3, seed=1)
    store.add_panel(panel, name="p")
    run_id = store.save_failed_run(panel="p", kind="select", params={}, error="x")
    other = store.save_failed_run(panel="p", kind="select", params={}, error="y")
    assert store.run(run_id)["note"] is None
    assert store.set_run_note(run_id, "  first line\nsecond <b>line</b>  ") == "first line\nsecond <b>line</b>"
    assert store.run(run_id)["note"] == "first line\nsecond <b>line</b>"
    assert {r["run_id"]: r["note"] for r in store.runs()} == {run_id: "first line\nsecond <b>line</b>", other: None}
    assert store.set_run_note(run_id, "replaced") == "replaced" and store.run(run_id)["note"] == "replaced"
    before = store.content_digest()
    with pytest.raises(StoreError, match=f"at most {MAX_NOTE_CHARS:,} characters"):
        store.set_run_note(run_id, "x" * (MAX_NOTE_CHARS + 1))
    with pytest.raises(StoreError, match="no stored run with id 999"):
        store.set_run_note(999, "x")
    assert store.content_digest() == before
    assert store.set_run_note(run_id, "   ") is None and store.run(run_id)["note"] is None
    assert store.integrity_problems() == []


def test_deleting_a_run_removes_it_and_every_row_it_owns(reports, tmp_path):
    import shutil
    src, ids = reports
    path = tmp_path / "copy.duckdb"
    with src.reading():
        pass
    shutil.copy(src.path, path)
    store = Store(path)
    children = {}
    with store.reading() as cur:
        for table in RUN_CHILD_TABLES:
            children[table] = cur.execute(f"SELECT count(*) FROM {table} WHERE run_id = ?",
                                          [ids["select"]]).fetchone()[0]
    assert children["run_candidates"] > 0 and children["run_cells"] > 0 and children["run_predictors"] == 1
    store.delete_run(ids["select"])
    with store.reading() as cur:
        for table in RUN_CHILD_TABLES + ("runs",):
            assert cur.execute(f"SELECT count(*) FROM {table} WHERE run_id = ?",
                               [ids["select"]]).fetchone()[0] == 0, table
    assert ids["select"] not in {r["run_id"] for r in store.runs()}
    assert {r["run_id"] for r in store.runs()} == set(ids.values()) - {ids["select"]}
    with pytest.raises(StoreError, match=f"no stored run with id {ids['select']}"):
        store.run(ids["select"])
    assert store.integrity_problems() == []


def test_a_version_5_store_migrates_to_notes_and_keeps_its_runs(tmp_path):
    path = tmp_path / "v5.duckdb"
    con = duckdb.connect(str(path))
    assert migrate(con, target=5) == [1, 2, 3, 4, 5]
    con.execute("INSERT INTO panels VALUES (3, 'old', 'pairwise', 3, 3, 1, false, NULL, 'f.csv', 'ab', 'wide', "
                "NULL, 'MIT', NULL, TIMESTAMP '2024-01-01 00:00:00', 'v5version')")
    con.execute("INSERT INTO judges VALUES (3, 0, 'j1', 'pairwise', NULL, NULL, 2, 0)")
    con.execute("INSERT INTO items VALUES (3, 0, 'a', 'a', 1.0, NULL), (3, 1, 'b', 'b', 0.0, NULL), "
                "(3, 2, 'c', 'c', 1.0, NULL)")
    con.execute("INSERT INTO outputs VALUES (3, 0, 0, 'A'), (3, 1, 0, 'B'), (3, 2, 0, 'A')")
    for run_id in (2, 7):
        con.execute("INSERT INTO runs VALUES (?, 3, 'old', 'select', 'failed', 'tag', '{\"k_max\": 3}', 0, '0.9', "
                    "NULL, TIMESTAMP '2024-01-02 00:00:00', 1.0, NULL, NULL, 'too few rows', 'v5version')", [run_id])
    con.execute("UPDATE counters SET value = CASE name WHEN 'run_id' THEN 7 ELSE 3 END")
    con.close()
    store = Store(path)
    assert store.schema_version() == LATEST_VERSION >= 6
    runs = store.runs()
    assert [(r["run_id"], r["label"], r["note"], r["error"], r["panel_version"]) for r in runs] == \
        [(7, "tag", None, "too few rows", "v5version"), (2, "tag", None, "too few rows", "v5version")]
    assert store.run(2)["params"] == {"k_max": 3}
    assert store.set_run_note(2, "kept after the upgrade") == "kept after the upgrade"
    assert store.run(2)["note"] == "kept after the upgrade" and store.run(7)["note"] is None
    assert "kept after the upgrade" in run_report_html(store, 2, figures=False)
    assert store.integrity_problems() == []


def test_the_report_names_the_deployment_and_its_judges_as_the_answer_does(reports):
    """Issue 24: the deployed card reads as the answer does ("average of N models", never the
    internal rule name), the judges are listed by contribution, and each baseline's difference is
    its out-of-bag risk minus the selection's, both printed beside it."""
    import html as html_lib
    from fcps_core.reports.explain import baseline_rows, deployed_judges, display_family
    store, ids = reports
    res = store.run(ids["select"])["result"] if hasattr(store, "run") else store.get_run(ids["select"])["result"]
    text = html_lib.unescape(run_report_html(store, ids["select"], figures=False))
    assert f"{display_family(res['selected'])} · K={res['selected']['K']}" in text
    assert "tie_average ·" not in text
    listed = re.search(r"<b>Judges deployed \((\d+), by contribution\):</b> (.*?)</p>", text)
    assert listed.group(2) == ", ".join(deployed_judges(res))
    for r in baseline_rows(res):
        if r["out_of_bag"] is not None:
            assert f"{r['out_of_bag']:.4f}" in text and \
                float(f"{r['out_of_bag']:.4f}") - float(f"{r['selection']:.4f}") == pytest.approx(r["diff"], abs=1e-12)


def test_a_budget_run_reports_its_budget_frontier():
    """Walk 2 (pair_40x2000_tie.d1, budget 8): the HTML report's frontier section was the
    panel-size table ("most judges" 1 to 40, every row "selected: no") under a chart drawn over
    budgets with the deployed point starred. A run chosen under a budget tables its budget
    points, the deployed one selected, and draws the chart on the same axis."""
    from fcps_core.reports.run_report.selection import frontier_section

    def point(constraint, k, cost, risk, chosen=False):
        return {"constraint": constraint, "n_judges": k, "cost": cost, "judges": ["A", "B", "C"][:k],
                "family": "logistic", "members": [], "risk": risk, "ci": [risk - 0.01, risk + 0.01],
                "diff_vs_best": {"estimate": risk - 0.10, "ci": [0.0, 0.02]},
                "deployed_risk": {"estimate": risk + 0.001, "ci": [risk - 0.02, risk + 0.02]}, "chosen": chosen}
    res = {"frontier": [point("max_judges", 1, None, 0.13), point("max_judges", 2, None, 0.12),
                        point("max_judges", 3, None, 0.10, chosen=False),
                        point("budget", 1, 1.197, 0.13), point("budget", 2, 4.641, 0.12, chosen=True),
                        point("budget", 3, 91.208, 0.10)],
           "menu": {"objective": "mse"}}
    drawn = []
    text = frontier_section(res, lambda name, *a, **k: drawn.append(k) or "")
    assert "What a smaller budget costs (the frontier)" in text and "most judges" not in text
    assert "budget per item" in text
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", text, re.S)[1:]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r, re.S) for r in rows]
    assert [c[0] for c in cells] == ["1.197", "4.641", "91.208"]
    assert [c[-1] for c in cells] == ["no", "yes", "no"]
    assert drawn[0].get("by") == "cost"
    # a run under a judge limit (or none) keeps the panel-size table and chart
    for p in res["frontier"]:
        p["chosen"] = p["constraint"] == "max_judges" and p["n_judges"] == 3
    drawn.clear()
    text = frontier_section(res, lambda name, *a, **k: drawn.append(k) or "")
    assert "What fewer judges cost (the frontier)" in text and drawn[0].get("by") == "judges"
    # walk 5 (rubric panel, costs 0.3 to 15): budgets 14.6 and 14.600000000000001 (the same judges'
    # costs summed in two orders) shared a row labelled "14.6 to 14.6"; one printed budget is one budget
    res["frontier"] = [point("budget", 2, 14.6, 0.12, chosen=True), point("budget", 2, 14.600000000000001, 0.12),
                       point("budget", 3, 29.6, 0.10)]
    text = frontier_section(res, lambda name, *a, **k: "")
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", text, re.S)[1:]
    assert [re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)[0] for r in rows] == ["14.6", "29.6"]


def test_a_difference_near_zero_prints_its_sign_and_digits_not_minus_zero():
    """Walk 3 (a translation panel's run report): the frontier table read '-0.0000 to 0.0005'
    and a difference '-0.0000'. A number that is not 0 but rounds to 0 at the table's 4
    decimals prints two significant digits (e-notation below 1e-6); 0 stays 0.0000."""
    from fcps_core.reports.run_report.blocks import fmt, interval
    assert fmt(-3.2e-5) == "-0.000032" and fmt(4.9e-5) == "0.000049"
    assert interval([-3.2e-5, 0.00051]) == "-0.000032 to 0.0005"
    assert fmt(0.0) == "0.0000" and fmt(0.00051) == "0.0005" and fmt(-0.00051) == "-0.0005"
    assert fmt(4e-7) == "4.00e-07" and fmt(-4e-6) == "-4.00e-06"
    assert [fmt(v) for v in (-1e-5, -4.99e-5, -5e-9)] == ["-0.000010", "-0.000050", "-5.00e-09"]
