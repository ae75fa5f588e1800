"""The next judge: risk and table-pressure change of adding or dropping one judge,
calibrate-vs-curate, the label-free view of judges without labels, and the next-judge CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fcps_core import make_blocks, select
from fcps_core.cli.main import main
from fcps_core.data.panel import Panel, build_judge_column
from fcps_core.planning.next_judge import (NEEDS_LABELS, deployment_of, hard_accuracy, make_deployment,
                                           plan_next_judge, unlabelled_judges)
from fcps_core.data.splits import Blocks
from fcps_core.files.csv_writer import write_wide_csv

QUICK = {"estimate": "none", "with_baselines": False}


def planted_panel(rows: int = 2000, seed: int = 4, *, unlabelled: int = 0) -> Panel:
    """Six pairwise judges: J1 and J2 carry main effects, J3 has no marginal signal but
    interacts with J1 (P(y=1) = 1/2 + .2 s1 + .1 s2 + .15 s1 s3, s = +-1), N1..N3 are pure
    noise; ``unlabelled`` extra rows without labels."""
    rng = np.random.default_rng(seed)
    n = rows + unlabelled
    x = rng.integers(0, 2, size=(n, 6))
    s = 2.0 * x - 1
    p = 0.5 + 0.2 * s[:, 0] + 0.1 * s[:, 1] + 0.15 * s[:, 0] * s[:, 2]
    y = (rng.random(n) < p).astype(float)
    y[rows:] = np.nan
    names = ["J1", "J2", "J3", "N1", "N2", "N3"]
    cols = [build_judge_column(nm, np.where(x[:, k] == 1, "A", "B").tolist(), schema="pairwise")
            for k, nm in enumerate(names)]
    ids = np.array([f"i{i}" for i in range(n)], dtype=object)
    return Panel(item_ids=ids, group_ids=ids.copy(), labels=y, judges=cols, name="planted")


@pytest.fixture(scope="module")
def planted():
    return planted_panel()


@pytest.fixture(scope="module")
def planted_selection(planted):
    """The selection info_first + {table, logistic_pairwise}, K <= 3, deploys J1, J2 and a
    noise judge (N3), as the best member of a tie_average; it misses J3 (no marginal signal)."""
    return select(planted, make_blocks(planted, seed=0), families=["table", "logistic_pairwise"],
                  paths=["info_first"], k_max=3, seed=0, **QUICK)


def by_judge(rows: list[dict]) -> dict:
    return {r["judge"]: r for r in rows}


def test_adding_the_interaction_judge_helps_and_dropping_a_noise_judge_does_not(planted_selection):
    res = planted_selection
    plan = plan_next_judge(res).to_dict()
    dep = plan["deployed"]
    assert dep["judges"][:2] == ["J1", "J2"] and dep["judges"][2].startswith("N") and "J3" not in dep["judges"]
    assert res.members and "statistically tied models" in dep["note"] and "best member" in dep["note"]
    assert "tie_average" not in dep["note"] and "judge(s)" not in dep["note"]     # words, not keys (second walk)
    assert res.selected.family not in dep["note"] or "_" not in res.selected.family
    assert dep["family"] == res.selected.family and dep["K"] == 3
    add, drop = by_judge(plan["add"]), by_judge(plan["drop"])
    assert set(add) == {"J3", "N1", "N2", "N3"} - set(dep["judges"])
    assert set(drop) == set(dep["judges"])
    # the interaction judge: a risk reduction whose 95% interval excludes 0, ranked first
    j3 = add["J3"]
    assert j3["ci"][1] < 0 and j3["verdict"] == "lowers risk" and plan["add"][0]["judge"] == "J3"
    assert j3["risk_change"] == pytest.approx(j3["risk"] - dep["risk"])
    assert j3["ci"][0] == pytest.approx(j3["risk_change"] - 1.959963984540054 * j3["se"])
    # the deployed noise judge: dropping it changes nothing measurable
    noise = drop[dep["judges"][2]]
    assert noise["ci"][0] < 0 < noise["ci"][1] and noise["verdict"] == "no clear change"
    # the judges that carry signal: dropping them costs
    assert drop["J1"]["ci"][0] > 0 and drop["J2"]["ci"][0] > 0
    # one more balanced, independent binary judge about doubles H_K (nothing goes unseen):
    # the pressure change is about the deployed V_proxy itself, whatever the judge's signal
    assert all(a["pressure_change"] == pytest.approx(dep["V_proxy"], rel=0.02) for a in plan["add"])
    assert all(a["beyond_menu_limit"] for a in plan["add"])      # K=4 is past the menu's k_max=3
    assert plan["settings"]["protocol"] == "crossfit" and plan["settings"]["rows"] == 2000


def test_calibrate_dont_curate_compares_the_whole_pool_with_the_curated_top_k(planted_selection):
    c = plan_next_judge(planted_selection).to_dict()["calibrate_vs_curate"]
    fams = {f["family"]: f["risk"] for f in c["pool"]["families"]}
    assert set(fams) == {"mean_iso", "one_coin_iso", "ridge_iso", "logistic"}
    assert c["pool"]["risk"] == min(fams.values()) and c["pool"]["n_judges"] == 6
    assert c["curated"]["k"] == 3 and c["curated"]["judges"][:2] == ["J1", "J2"]
    assert c["difference"] == pytest.approx(c["curated"]["risk"] - c["pool"]["risk"])
    lo, hi = c["ci"]
    assert lo < c["difference"] < hi and c["verdict"] in ("calibrate the pool", "curate", "no clear winner")
    assert (c["verdict"] == "calibrate the pool") == (lo > 0)


def test_split_protocol_reproduces_the_selection_risk_and_pressure():
    panel = planted_panel(rows=1200, seed=1)
    res = select(panel, make_blocks(panel, seed=1), families=["table"], paths=["info_first"], k_max=3,
                 protocol="split", seed=1, **QUICK)
    plan = plan_next_judge(res).to_dict()
    dep, sel = plan["deployed"], res.selected
    assert dep["judges"] == sel.judges and plan["settings"]["rows"] == len(res.blocks.V)
    assert dep["risk"] == pytest.approx(sel.val_risk, rel=1e-9) == dep["selection_risk"]
    assert dep["V_proxy"] == pytest.approx(sel.diagnostics.V_proxy, rel=1e-12)


def tiny_panel() -> tuple[Panel, Blocks]:
    """14 rows: S = rows 0-1, M = rows 2-9, V = rows 10-13."""
    outputs = {"J1": "A A A A A A B B B B A B A B", "J2": "A B A A B B A A A A B B A A",
               "J3": "A B A B A B A B A B A A B A"}
    y = np.array([1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0], float)
    ids = np.array([f"i{i}" for i in range(14)], dtype=object)
    cols = [build_judge_column(n, v.split(), schema="pairwise") for n, v in outputs.items()]
    blocks = Blocks(S=np.arange(2), M=np.arange(2, 10), V=np.arange(10, 14), T=np.zeros(0, dtype=np.int64))
    return Panel(item_ids=ids, group_ids=ids.copy(), labels=y, judges=cols, name="tiny"), blocks


def test_pressure_change_on_a_tiny_panel_by_hand():
    # M patterns of (J1, J2): AA x2, AB x2, BA x4 -> H = exp(-(2 .25 ln .25 + .5 ln .5)) = 2^1.5;
    # V: AB BB AA BA -> BB unseen (1/4). V_proxy = 2^1.5 / 8 + 1/4.
    # + J3: AAA AAB ABA ABB x1, BAA BAB x2 -> H = 2^2.5; V: ABA BBA AAB BAA -> BBA unseen (1/4).
    # - J2: A x4, B x4 -> H = 2, nothing unseen.  - J1: A x6, B x2 -> H = 3^.75 * 4^.25 / ... (below).
    panel, blocks = tiny_panel()
    plan = plan_next_judge(make_deployment(panel, blocks, ["J1", "J2"], "table", protocol="split")).to_dict()
    base = 2 ** 1.5 / 8 + 0.25
    assert plan["deployed"]["V_proxy"] == pytest.approx(base)
    add, drop = by_judge(plan["add"]), by_judge(plan["drop"])
    assert add["J3"]["V_proxy"] == pytest.approx(2 ** 2.5 / 8 + 0.25)
    assert add["J3"]["pressure_change"] == pytest.approx(2 ** 1.5 / 8)
    assert drop["J2"]["V_proxy"] == pytest.approx(2 / 8)
    h_j2 = np.exp(-(0.75 * np.log(0.75) + 0.25 * np.log(0.25)))
    assert drop["J1"]["pressure_change"] == pytest.approx(h_j2 / 8 - base)
    assert plan["settings"]["protocol"] == "split" and plan["settings"]["folds"] is None


def tiny_traffic(extra: str = "X") -> Panel:
    ids = np.array([f"t{i}" for i in range(6)], dtype=object)
    cols = [build_judge_column(n, v.split(), schema="pairwise")
            for n, v in (("J1", "A A A B B A"), ("J2", "A A A A B B"), (extra, "A A B A A B"))]
    return Panel(item_ids=ids, group_ids=ids.copy(), labels=np.full(6, np.nan), judges=cols, name="traffic")


def test_a_traffic_only_judge_gets_pressure_and_agreement_by_hand():
    # Calibration N_z of (J1, J2) on M: AA 2, AB 2, BA 4 (n_cal 8). Traffic (J1, J2, X):
    # AA-A AA-A AA-B BA-A BB-A AB-B. Deployed on traffic: q = 1/2, 1/6, 1/6, 1/6 ->
    # H = sqrt(12); BB unseen -> u = 1/6. With X: q = 1/3 and four 1/6 -> H = exp(ln 3/3 + 2 ln 6/3);
    # X's extra unseen share: AA rows with A: (1 - 2/3)^2 twice, with B: (1 - 1/3)^2 once;
    # BA and AB rows: q(x|z) = 1 -> 0. (2/9 + 4/9) / 6 = 1/9.
    panel, blocks = tiny_panel()
    dep = make_deployment(panel, blocks, ["J1", "J2"], "table", protocol="split")
    u = unlabelled_judges(dep, tiny_traffic())
    assert u["pressure_deployed"] == pytest.approx(np.sqrt(12) / 8 + 1 / 6)
    (x,) = u["judges"]
    H = np.exp(np.log(3) / 3 + 2 * np.log(6) / 3)
    assert x["judge"] == "X" and not x["in_pool"] and x["H_K"] == pytest.approx(H)
    assert x["unseen_rate"] == pytest.approx(1 / 6 + 1 / 9)
    assert x["pressure_change"] == pytest.approx(H / 8 + 1 / 9 - np.sqrt(12) / 8)
    # X: 1 1 0 1 1 0 against J1: 1 1 1 0 0 1 -> 2 of 6 agree; against J2: 1 1 1 1 0 0 -> 4 of 6.
    assert x["agreement_by_judge"] == pytest.approx({"J1": 1 / 3, "J2": 2 / 3})
    # the deployed table (alpha 1/2, ybar 1/2): AA -> 0.9, BA -> 0.28, AB and BB -> 1/2 (no
    # decision): X agrees on 2 of the 4 decided rows
    assert x["agreement_with_deployed"] == pytest.approx(0.5)
    assert x["risk_effect"] == NEEDS_LABELS and "needs labels" in NEEDS_LABELS
    # through the plan: the traffic section is part of it
    plan = plan_next_judge(dep, traffic=tiny_traffic()).to_dict()
    assert plan["unlabelled"]["judges"][0]["pressure_change"] == pytest.approx(x["pressure_change"])


def test_traffic_in_another_case_reads_as_the_calibration_outputs():
    """Traffic whose deployed judges write a/b for calibration's A/B gets the same label-free
    view as the same traffic in calibration's spelling (it read every row as unseen)."""
    panel, blocks = tiny_panel()
    dep = make_deployment(panel, blocks, ["J1", "J2"], "table", protocol="split")
    ids = np.array([f"t{i}" for i in range(6)], dtype=object)
    cols = [build_judge_column(n, v.split(), schema="pairwise")
            for n, v in (("J1", "a a a b b a"), ("J2", "A a A a b B"), ("X", "A A B A A B"))]
    lower = Panel(item_ids=ids, group_ids=ids.copy(), labels=np.full(6, np.nan), judges=cols, name="traffic")
    assert unlabelled_judges(dep, lower) == unlabelled_judges(dep, tiny_traffic())


def test_traffic_errors_name_the_problem():
    panel, blocks = tiny_panel()
    dep = make_deployment(panel, blocks, ["J1", "J2"], "table", protocol="split")
    lacking = tiny_traffic().subset_judges(["J1", "X"])
    with pytest.raises(ValueError, match="lacks deployed judge column.*'J2'"):
        unlabelled_judges(dep, lacking)
    with pytest.raises(ValueError, match="no judge beyond the deployed ones"):
        unlabelled_judges(dep, tiny_traffic().subset_judges(["J1", "J2"]))
    with pytest.raises(ValueError, match="distinct panel judges.*'nope'"):
        make_deployment(panel, blocks, ["J1", "nope"], "table", protocol="split")


def test_a_pool_judge_without_labelled_outputs_gets_only_the_label_free_view():
    base = planted_panel(rows=600, seed=2, unlabelled=300)
    outputs = np.where(np.isnan(base.labels), np.where(np.arange(base.n_rows) % 3 == 0, "A", "B"), "")
    late = build_judge_column("Late", outputs.tolist(), schema="pairwise")
    panel = Panel(item_ids=base.item_ids, group_ids=base.group_ids, labels=base.labels,
                  judges=base.judges + [late], name="late")
    dep = make_deployment(panel, make_blocks(panel, seed=0), ["J1", "J2"], "logistic", folds=3, repeats=1)
    plan = plan_next_judge(dep).to_dict()
    assert "Late" not in by_judge(plan["add"]) and len(plan["add"]) == 4
    assert plan["calibrate_vs_curate"]["pool"]["n_judges"] == 6
    u = plan["unlabelled"]
    assert u["source"] == "the panel's unlabelled rows" and u["rows"] == 300
    (late_row,) = u["judges"]
    assert late_row["judge"] == "Late" and late_row["risk_effect"] == NEEDS_LABELS
    assert late_row["pressure_change"] > 0 and late_row["agreement_with_deployed"] is not None


def test_hard_accuracy_counts_ties_as_half():
    scores = np.array([[1.0, 0.5, 0.0], [0.0, 0.5, 0.0]])
    assert hard_accuracy(scores, np.array([1.0, 0.0])).tolist() == [1.0, 0.5, 0.5]


def test_progress_is_reported_and_a_large_pool_costs_one_fit_per_judge_per_fold():
    from fcps_core.paper.synthetic import make_regime
    panel = make_regime("additive", rows=300, judges=90, seed=0)
    calls = []
    dep = make_deployment(panel, make_blocks(panel, seed=0), ["J1", "J2", "J3"], "ridge_iso", folds=3, repeats=1)
    plan = plan_next_judge(dep, progress=lambda f, m: calls.append((f, m)))
    assert len(plan.add) == 87 and len(plan.drop) == 3
    fits_per_fold = 1 + 87 + 3 + 4 + 1
    assert sum(m.startswith("fold 1/3") for _, m in calls) == fits_per_fold
    assert calls[-1][0] == 1.0 and all(a <= b for (a, _), (b, _) in zip(calls, calls[1:]))


def test_deployment_of_keeps_the_selection_settings(planted_selection):
    dep = deployment_of(planted_selection)
    assert dep.selector is planted_selection.selector and dep.family == planted_selection.selected.family
    assert dep.names == planted_selection.selected.judges
    assert len(dep.fit_rows) == 2000


# -- the CLI ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def planted_csv(tmp_path_factory, planted):
    path = tmp_path_factory.mktemp("nj") / "planted.csv"
    write_wide_csv(planted, str(path))
    return str(path)


FAST = ["--families", "table", "--paths", "info_first", "--k-max", "2", "--folds", "3", "--repeats", "1"]


def test_cli_next_judge_json_shape(planted_csv, tmp_path, capsys):
    traffic = planted_panel(rows=50, seed=9)
    extra = build_judge_column("NewJudge", ["A", "B"] * 25, schema="pairwise")
    traffic = Panel(item_ids=traffic.item_ids, group_ids=traffic.group_ids, labels=np.full(50, np.nan),
                    judges=traffic.judges + [extra], name="traffic")
    tpath = tmp_path / "traffic.csv"
    write_wide_csv(traffic, str(tpath))
    assert main(["next-judge", planted_csv, *FAST, "--json", "--quiet", "--traffic", str(tpath)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d) == {"settings", "deployed", "add", "drop", "calibrate_vs_curate", "unlabelled", "timings"}
    assert d["deployed"]["judges"] == ["J1", "J2"] and d["settings"]["folds"] == 3
    row = d["add"][0]
    assert row["judge"] == "J3" and set(row) >= {"judge", "judges", "K", "risk", "risk_change", "se", "ci",
                                                  "verdict", "V_proxy", "pressure_change", "beyond_menu_limit"}
    assert {r["judge"] for r in d["drop"]} == {"J1", "J2"}
    assert set(d["calibrate_vs_curate"]) >= {"pool", "curated", "difference", "se", "ci", "verdict"}
    extras = by_judge(d["unlabelled"]["judges"])
    assert extras["NewJudge"]["in_pool"] is False and extras["J3"]["in_pool"] is True
    assert extras["NewJudge"]["risk_effect"] == NEEDS_LABELS


def test_cli_next_judge_text(planted_csv, capsys):
    assert main(["next-judge", planted_csv, *FAST, "--quiet", "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "ADD one judge" in out and "DROP one deployed judge" in out and "CALIBRATE, DON'T CURATE" in out
    assert "2 of 4, best first" in out


@pytest.mark.parametrize("extra, message", [
    (["--from-run", "run:abc"], "is not a run reference"),
    (["--traffic", "missing-file.csv"], "no such file"),
    (["--families", "nope"], "unknown family 'nope'"),
])
def test_cli_bad_input_is_one_error_line(planted_csv, tmp_path, monkeypatch, capsys, extra, message):
    monkeypatch.setenv("FCPS_STORE", str(tmp_path / "none.duckdb"))
    assert main(["next-judge", planted_csv, *FAST, "--quiet", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fcps: error: ") and message in err and err.count("\n") == 1


def test_cli_traffic_without_the_deployed_judges_is_one_error_line(planted_csv, tmp_path, capsys):
    tpath = tmp_path / "t.csv"
    tpath.write_text("item_id,J1,Other\na,A,B\nb,B,A\n")
    assert main(["next-judge", planted_csv, *FAST, "--quiet", "--traffic", str(tpath)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fcps: error: ") and "'J2'" in err and err.count("\n") == 1


def test_cli_from_run_plans_the_stored_deployment(planted_csv, tmp_path, capsys):
    store = str(tmp_path / "store.duckdb")
    assert main(["select", planted_csv, "--families", "table", "--paths", "info_first", "--k-max", "2",
                 "--folds", "3", "--repeats", "1", "--estimate", "none", "--seed", "3", "--quiet",
                 "--save", "--store", store, "--panel-name", "planted"]) == 0
    capsys.readouterr()
    assert main(["next-judge", "planted", "--from-run", "run:1", "--store", store, "--json", "--quiet"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["deployed"]["judges"] == ["J1", "J2"] and d["settings"]["folds"] == 3
    assert d["settings"]["seed"] == 3 and d["deployed"]["risk"] == pytest.approx(d["deployed"]["selection_risk"])
    # an unknown run is refused in one line
    assert main(["next-judge", "planted", "--from-run", "run:7", "--store", store, "--quiet"]) == 2
    assert capsys.readouterr().err.startswith("fcps: error: no stored run with id 7")


def test_figures_of_the_plan(planted_selection):
    from fcps_core.figures.panel import calibrate_vs_curate, next_judge_risk_changes
    plan = plan_next_judge(planted_selection).to_dict()
    fig = next_judge_risk_changes(plan, top=2)
    add, drop = fig.data
    assert list(add.y) == [f"add {e['judge']}" for e in plan["add"][:2]] and len(drop.y) == 3
    assert add.error_x.arrayminus[0] == pytest.approx(plan["add"][0]["risk_change"] - plan["add"][0]["ci"][0])
    bars = calibrate_vs_curate(plan).data[0]
    assert len(bars.x) == 2 + 4 and bars.y[0] == pytest.approx(plan["deployed"]["risk"])
    # with the page's plain names the bars read as the page does (review of walk 2)
    from fcps_core.reports.names import FAMILY_NAMES
    worded = list(calibrate_vs_curate(plan, names=FAMILY_NAMES).data[0].x)
    assert not [x for x in worded if any(k in x for k in FAMILY_NAMES if "_" in k)], worded
    assert any("ridge + isotonic" in x or "logistic" in x for x in worded), worded
