"""Seeding: the demo panels (real ones with their provenance and licence), selections and
sweeps are added once, whatever is missing is restored, and concurrent seeders agree."""

from __future__ import annotations

import json
import threading


from fcps_core import make_blocks
from fcps_core.selection import FCPSSelector
from fcps_core.seed import DATA_DIR, SEED_VERSION, SeedSpec, ensure_seeded, seed_store

SMALL = SeedSpec(real=("llmbar",), regimes=("mixed",), rows=400, judges=4,
                 families=("table", "logistic"), paths=("info_first",), k_max=4,
                 sweep_budgets=(40, 80), sweep_sizes={"n_select": 60, "n_val": 60, "n_test": 100},
                 sweep_splits=2, sweep_families=("table", "logistic"))
LABELS = {"seed:select:llmbar", "seed:select:synthetic-mixed", "seed:sweep:synthetic-mixed"}




def test_seeding_adds_panels_with_provenance_and_precomputed_runs(store):
    added = seed_store(store, SMALL)
    assert added["panels"] == ["llmbar", "synthetic-mixed"]
    assert {r["label"] for r in store.runs()} == LABELS
    meta = json.loads((DATA_DIR / "llmbar.json").read_text(encoding="utf-8"))
    info = store.panel_info("llmbar")
    assert info["provenance"] == meta and info["licence"] == meta["license"]
    assert info["source"] == "data/llmbar.csv" and len(info["source_sha256"]) == 64
    assert store.panel_info("synthetic-mixed")["provenance"]["regime"] == "mixed"
    assert store.get_meta("seed_version") == SEED_VERSION
    sweep = store.run(store.find_run("seed:sweep:synthetic-mixed"))
    assert [c["n_M"] for c in sweep["result"]["cells"]] == [40, 80]


def test_the_seeded_selection_is_reproducible(store):
    seed_store(store, SMALL)
    stored = store.run(store.find_run("seed:select:llmbar"))["result"]["selected"]
    panel = store.load_panel("llmbar")
    fresh = FCPSSelector(families=SMALL.families, paths=SMALL.paths, k_max=SMALL.k_max,
                         seed=SMALL.seed).fit(panel, make_blocks(panel, split=SMALL.split, seed=SMALL.seed))
    deployed = fresh.selected_dict()      # the deployed choice (a tie_average or one candidate)
    assert (stored["family"], stored["K"], stored["judges"]) == \
        (deployed["family"], deployed["K"], deployed["judges"])
    assert stored["val_mse"] == deployed["val_mse"]


def test_seeding_again_changes_nothing_and_restores_only_what_is_missing(store):
    seed_store(store, SMALL)
    digest = store.content_digest()
    assert seed_store(store, SMALL) == {"panels": [], "runs": []}
    assert store.content_digest() == digest
    store.delete_run(store.find_run("seed:select:llmbar"))
    added = seed_store(store, SMALL)
    assert added["panels"] == [] and len(added["runs"]) == 1
    assert {r["label"] for r in store.runs()} == LABELS


def test_concurrent_seeders_store_everything_once(store):
    errors = []

    def seeder():
        try:
            seed_store(store, SMALL)
        except Exception as exc:      # collected: an assertion in a thread would be lost
            errors.append(exc)

    threads = [threading.Thread(target=seeder) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(p["name"] for p in store.panels()) == ["llmbar", "synthetic-mixed"]
    assert sorted(r["label"] for r in store.runs()) == sorted(LABELS)


def test_ensure_seeded_runs_once_only(store):
    assert ensure_seeded(store, spec=SMALL) is True
    digest = store.content_digest()
    store.delete_panel("synthetic-mixed")          # a user's deletion is respected
    after_delete = store.content_digest()
    assert ensure_seeded(store, spec=SMALL) is False
    assert store.content_digest() == after_delete != digest
