"""End to end: the real server in headless Chromium (Debian's ``chromium`` via Playwright).

Starts ``streamlit run app.py --server.headless true`` on a free port, waits for
``/_stcore/health``, uploads a panel, runs a selection on it, deploys it on uploaded traffic
(audit status shown, predictions downloaded), opens the regime map and saves
screenshots to ``.e2e-screenshots/``. Skips on a machine without Chromium, never in CI.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from fcps_core.writers import write_wide_csv
from fcps_core.synthetic import make_regime
from store_helpers import demo_store

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / ".e2e-screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-quic"]


def _need_browser():
    missing = []
    if not os.path.exists(CHROMIUM):
        missing.append("Debian's chromium")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright package")
    if missing:
        if os.environ.get("CI"):
            pytest.fail("CI must run the browser test, but " + " and ".join(missing) + " are missing")
        pytest.skip("no " + " and ".join(missing) + " on this machine")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    _need_browser()
    port = _free_port()
    log = open(tmp_path_factory.mktemp("srv") / "streamlit.log", "w")
    env = {**os.environ, "FCPS_STORE": demo_store(tmp_path_factory.mktemp("store") / "fcps.duckdb")}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--server.address", "127.0.0.1",
                             "--browser.gatherUsageStats", "false"], cwd=ROOT, stdout=log, stderr=log, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read().strip() == b"ok":
                break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("the streamlit server did not become healthy within 120 s")
    yield url
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def settle(page) -> None:
    """Wait until the script run finishes (Streamlit's running indicator is gone) and paints."""
    from playwright.sync_api import expect
    expect(page.get_by_test_id("stStatusWidget")).to_be_hidden(timeout=180_000)
    page.wait_for_timeout(800)


def test_upload_select_and_regime_map_in_a_browser(server, tmp_path):
    from playwright.sync_api import expect, sync_playwright
    csv_path = tmp_path / "e2e-panel.csv"
    write_wide_csv(make_regime("mixed", rows=800, judges=4, seed=5, tie_rate=0.05), str(csv_path))
    # unlabelled traffic from the same regime: the label column dropped
    traffic_path = tmp_path / "e2e-traffic.csv"
    write_wide_csv(make_regime("mixed", rows=300, judges=4, seed=6, tie_rate=0.05), str(traffic_path))
    rows = [line.split(",") for line in traffic_path.read_text().splitlines()]
    drop = rows[0].index("label")
    traffic_path.write_text("".join(",".join(r[:drop] + r[drop + 1:]) + "\n" for r in rows))
    SHOTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        timings = {}
        t0 = time.perf_counter()
        page.goto(server)
        expect(page.get_by_text("Finite-Calibration Panel Selection").first).to_be_visible(timeout=60_000)
        expect(page.get_by_text("Latest runs").first).to_be_visible(timeout=120_000)
        timings["overview"] = time.perf_counter() - t0
        settle(page)
        page.screenshot(path=str(SHOTS / "1-overview.png"), full_page=True)

        page.get_by_role("link", name="Upload panel").click()
        page.locator("input[type=file]").set_input_files(str(csv_path))
        expect(page.get_by_text("800 rows, 800 labelled").first).to_be_visible(timeout=60_000)
        page.get_by_role("button", name="Use this panel").click()
        expect(page.get_by_text("is now available").first).to_be_visible(timeout=30_000)
        settle(page)
        page.screenshot(path=str(SHOTS / "2-upload.png"), full_page=True)

        t0 = time.perf_counter()
        page.get_by_role("link", name="Select").click()
        expect(page.get_by_text("Run selection")).to_be_visible(timeout=60_000)
        timings["select"] = time.perf_counter() - t0
        page.get_by_role("combobox", name="Panel").click()
        page.get_by_role("option", name="uploaded: e2e-panel").click()
        expect(page.get_by_text("800 rows, 800 labelled").first).to_be_visible(timeout=60_000)
        page.get_by_role("button", name="Run selection").click()
        expect(page.get_by_text("Verdict").first).to_be_visible(timeout=180_000)
        expect(page.get_by_text("Deploy ").first).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Baselines on the same held-out rows").first).to_be_visible(timeout=30_000)
        settle(page)
        page.screenshot(path=str(SHOTS / "3-select.png"), full_page=True)

        # Deploy: the session's selection scores uploaded unlabelled traffic and audits it.
        page.get_by_test_id("stPageLink-NavLink").filter(has_text="Deploy it").click()
        expect(page.get_by_role("combobox", name="Deploy")).to_have_value(
            "this session's selection (uploaded: e2e-panel)", timeout=60_000)
        page.locator("input[type=file]").set_input_files(str(traffic_path))
        expect(page.get_by_text("3. Audit").first).to_be_visible(timeout=120_000)
        alert = page.get_by_test_id("stAlert").first
        expect(alert).to_contain_text(re.compile(r"^(OK|WARN|REFUSE)"), timeout=60_000)
        expect(page.get_by_text("300 traffic rows").first).to_be_visible(timeout=30_000)
        settle(page)
        page.screenshot(path=str(SHOTS / "3b-deploy.png"), full_page=True)
        with page.expect_download() as download:
            page.get_by_role("button", name="Download predictions (CSV)").click()
        saved = tmp_path / "predictions.csv"
        download.value.save_as(str(saved))
        lines = saved.read_text().splitlines()
        assert lines[0] == "item_id,prediction,N_z,in_support,missing_judges" and len(lines) == 301

        page.get_by_role("link", name="Regime map").click()
        # The panel picked on Select stays picked here.
        expect(page.get_by_role("combobox", name="Panel")).to_have_value("uploaded: e2e-panel", timeout=60_000)
        expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=60_000)
        expect(page.get_by_text("selection: ").first).to_be_visible(timeout=30_000)
        settle(page)
        page.screenshot(path=str(SHOTS / "4-regime-map.png"), full_page=True)
        # Page loads after the first start: a fresh session opening each page by URL.
        for name, path, marker in (("overview (warm)", "", "Stored panels"), ("select (warm)", "/select", "Run selection")):
            fresh = browser.new_page(viewport={"width": 1400, "height": 1100})
            t0 = time.perf_counter()
            fresh.goto(server + path)
            expect(fresh.get_by_text(marker).first).to_be_visible(timeout=60_000)
            timings[name] = time.perf_counter() - t0
            fresh.close()
        browser.close()
    line = ", ".join(f"{k} {v:.2f}" for k, v in timings.items())
    print(f"page load seconds: {line}")
    (SHOTS / "page-load.txt").write_text(line + "\n")
