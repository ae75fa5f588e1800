"""End to end: the real server in headless Chromium (Debian's ``chromium`` via Playwright).

Starts ``streamlit run app.py --server.headless true`` on a free port, waits for
``/_stcore/health``, then walks the dashboard as a new user would:

Overview ("Upload your panel") -> Upload (a panel generated here, labels written as the words
good/bad: the mapping sentence is shown; "Use this panel", then "Save to the store") -> Select
(a selection on the stored panel: the verdict first, ``?run=N``) -> Judges -> Regime map (the
selection's point, then a small calibration-growth sweep) -> Cell-pressure audit (the selection)
-> Scalar vs table gaps (the sweep) -> Results browser (``?run=N``, the run's HTML report
downloaded, its sections checked) -> Deploy & monitor (the selection scores uploaded unlabelled
traffic; audit status shown, predictions downloaded). A second, warm pass switches to every page
again through the sidebar (client-side navigation) and records how long each took; a fresh tab
opens a shared ``/results?run=N`` link and the Overview's "Open the demo" button.

Every page is screenshotted (the whole page) to ``.e2e-screenshots/NN-page.png``; the page-switch
times go to stdout (``pytest -s``) and ``.e2e-screenshots/page-times.txt`` (a benchmark figure,
not an assertion: the target is under 1.5 s per warm switch on 2 cores).

The test fails on any Streamlit exception element, any error alert, any uncaught JavaScript error
and any "Traceback" in the server log (its tail is printed on failure). "Idle" means the server
sent ``script_finished`` for the run an action started (read from the app's websocket), so no
fixed sleeps stand in for waiting. Skips on a machine without Chromium, never in CI.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from fcps_core.files.csv_writer import write_wide_csv
from fcps_core.paper.synthetic import make_regime
from store_helpers import demo_store

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / ".e2e-screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-quic"]
PANEL = "e2e-panel"
STORED = f"stored: {PANEL}"
#: sidebar link -> (url path, page title): the pages the walk visits, in walk order
PAGES = {"Overview": ("/", "Finite-Calibration Panel Selection"),
         "Upload panel": ("/upload", "Upload a panel"),
         "Select": ("/select", "Select a panel and aggregator"),
         "Judges": ("/judges", "Judges"),
         "Regime map": ("/regime", "Regime map"),
         "Cell-pressure audit": ("/audit", "Cell-pressure audit"),
         "Scalar vs table gaps": ("/gaps", "Scalar vs table gaps"),
         "Results browser": ("/results", "Results browser"),
         "Deploy & monitor": ("/deploy", "Deploy & monitor")}
REPORT_SECTIONS = ("Verdict", "Judges", "Candidates", "Regime", "Cell pressure", "Baselines", "Parameters",
                   "Data provenance")
LONG = 300          # seconds: a selection or a sweep on a loaded 2-core machine
NAV = 120           # seconds: any page run


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


@dataclass
class Server:
    url: str
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def log_tail(self, lines: int = 80) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    _need_browser()
    port = _free_port()
    log_path = tmp_path_factory.mktemp("srv") / "streamlit.log"
    log = open(log_path, "w")
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
    yield Server(url, log_path)
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


class Tab:
    """One browser tab on the app. Counts the script runs the server reports finished (the
    ``script_finished`` messages on the app's websocket) so an action can wait until the run
    it started is over, and collects uncaught JavaScript errors."""

    def __init__(self, browser, server: Server):
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
        self._msg = ForwardMsg
        self._early = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_EARLY_FOR_RERUN")
        self.server = server
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
        self.finished = 0           # runs finished (a run cut short for a rerun does not count)
        self.js_errors: list[str] = []
        self.page.on("websocket", lambda ws: ws.on("framereceived", self._frame))
        self.page.on("pageerror", lambda exc: self.js_errors.append(str(exc)))

    def _frame(self, payload) -> None:
        if not isinstance(payload, (bytes, bytearray)):
            return
        msg = self._msg()
        try:
            msg.ParseFromString(bytes(payload))
        except Exception:       # not a ForwardMsg: not ours to judge
            return
        if msg.WhichOneof("type") == "script_finished" and msg.script_finished != self._early:
            self.finished += 1

    def act(self, action, timeout: float = NAV) -> float:
        """Do ``action`` (something that starts a script run) and wait until that run is over;
        returns the seconds it took."""
        before = self.finished
        t0 = time.perf_counter()
        action()
        deadline = t0 + timeout
        while self.finished == before:
            if time.perf_counter() > deadline:
                raise AssertionError(f"no script run finished within {timeout:.0f} s after the action")
            self.page.wait_for_timeout(25)
        return time.perf_counter() - t0

    def goto(self, path: str, timeout: float = NAV) -> float:
        return self.act(lambda: self.page.goto(self.server.url + path), timeout)

    def nav(self, link: str, timeout: float = NAV) -> float:
        """Switch page through the sidebar (client-side, no reload); seconds until the new page's
        run finished and its title shows."""
        path, title = PAGES[link]
        t0 = time.perf_counter()
        self.act(lambda: self.page.get_by_test_id("stSidebarNavLink").filter(
            has_text=re.compile(rf"^\s*{re.escape(link)}\s*$")).click(), timeout)
        self.expect_title(title)
        took = time.perf_counter() - t0
        assert urlparts(self.page.url)[0] == path, (link, self.page.url)
        return took

    def expect_title(self, title: str) -> None:
        from playwright.sync_api import expect
        expect(self.page.locator("h1").filter(has_text=title).first).to_be_visible(timeout=30_000)

    def problems(self) -> list[str]:
        """Exception elements, error alerts and uncaught JavaScript errors on the page now."""
        out = []
        for test_id, what in (("stException", "exception"), ("stAlertContentError", "error alert")):
            found = self.page.get_by_test_id(test_id)
            out += [f"{what}: {found.nth(i).inner_text()[:600]}" for i in range(found.count())]
        out += [f"JavaScript error: {e}" for e in self.js_errors]
        return out

    def check(self, where: str) -> None:
        found = self.problems()
        assert not found, f"{where}: " + "\n".join(found)

    def shot(self, name: str) -> None:
        """The whole page: Streamlit scrolls its main area inside the window, so the window is
        made as tall as the content for the screenshot."""
        page = self.page
        size = page.viewport_size
        height = page.evaluate("""() => Math.max(...[...document.querySelectorAll(
            '[data-testid=stMain], [data-testid=stAppViewContainer], [data-testid=stSidebarContent]')]
            .map(e => e.scrollHeight), document.documentElement.scrollHeight)""")
        page.set_viewport_size({"width": size["width"], "height": int(min(max(height, size["height"]), 12_000))})
        page.wait_for_timeout(400)      # relayout (charts follow the new size)
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
        page.set_viewport_size(size)


def urlparts(url: str) -> tuple[str, str]:
    """(path, query) of a page address."""
    from urllib.parse import urlsplit
    parts = urlsplit(url)
    return parts.path or "/", parts.query


def run_param(url: str) -> int | None:
    m = re.search(r"(?:^|&)run=(\d+)(?:&|$)", urlparts(url)[1])
    return int(m.group(1)) if m else None


def write_panels(tmp_path: Path) -> tuple[Path, Path, dict]:
    """A labelled panel whose labels are the words good/bad, and unlabelled traffic from the
    same regime (its label column dropped). Returns the paths and the label word counts."""
    csv_path = tmp_path / f"{PANEL}.csv"
    write_wide_csv(make_regime("mixed", rows=800, judges=4, seed=5, tie_rate=0.05), str(csv_path))
    with open(csv_path, newline="") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index("label")
    words = {"1": "good", "1.0": "good", "0": "bad", "0.0": "bad"}
    for r in rows[1:]:
        r[col] = words[r[col]]
    with open(csv_path, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    counts = {w: sum(r[col] == w for r in rows[1:]) for w in ("good", "bad")}
    traffic_path = tmp_path / "e2e-traffic.csv"
    write_wide_csv(make_regime("mixed", rows=300, judges=4, seed=6, tie_rate=0.05), str(traffic_path))
    with open(traffic_path, newline="") as fh:
        rows = list(csv.reader(fh))
    drop = rows[0].index("label")
    with open(traffic_path, "w", newline="") as fh:
        csv.writer(fh).writerows(r[:drop] + r[drop + 1:] for r in rows)
    return csv_path, traffic_path, counts


def test_walk_every_page_in_a_browser(server, tmp_path):
    from playwright.sync_api import sync_playwright
    csv_path, traffic_path, counts = write_panels(tmp_path)
    SHOTS.mkdir(exist_ok=True)
    for old in list(SHOTS.glob("*.png")) + list(SHOTS.glob("*.txt")):
        old.unlink()
    t_start = time.perf_counter()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        tab = Tab(browser, server)
        try:
            first, warm = walk(tab, csv_path, traffic_path, counts, tmp_path)
            fresh_tab_checks(Tab(browser, server), first["sel_id"])
        except BaseException:
            try:
                tab.page.screenshot(path=str(SHOTS / "99-failure.png"))
            except Exception:
                pass
            print("\n--- streamlit server log (tail) ---\n" + server.log_tail())
            raise
        finally:
            browser.close()
    log = server.log_text()
    assert "Traceback" not in log, "the server log holds a traceback:\n" + server.log_tail()
    report_times(first, warm, time.perf_counter() - t_start)


def walk(tab: Tab, csv_path: Path, traffic_path: Path, counts: dict, tmp_path: Path) -> tuple[dict, dict]:
    from playwright.sync_api import expect
    page = tab.page
    first: dict = {}

    # -- Overview --------------------------------------------------------------------------------
    first["Overview"] = tab.goto("/", timeout=180)       # the first start loads the engine
    tab.expect_title(PAGES["Overview"][1])
    expect(page.get_by_text("Latest runs").first).to_be_visible(timeout=30_000)
    expect(page.get_by_role("button", name="Open the demo (selection and sweep)")).to_be_visible()
    tab.check("Overview")
    tab.shot("01-overview")

    # -- Upload: the Overview's button, a generated panel with word labels ---------------------------
    first["Upload panel"] = tab.act(lambda: page.get_by_role("button", name="Upload your panel").click())
    tab.expect_title(PAGES["Upload panel"][1])
    assert urlparts(page.url)[0] == "/upload", page.url
    tab.act(lambda: page.locator("input[type=file]").set_input_files(str(csv_path)))
    expect(page.get_by_text("800 rows, 800 labelled, 4 judges").first).to_be_visible(timeout=60_000)
    # how the word labels were read, before anything is stored
    sentence = page.get_by_test_id("stAlertContentInfo").filter(has_text="Labels:")
    for word, value in (("good", 1), ("bad", 0)):      # Markdown draws "->" as an arrow
        expect(sentence).to_contain_text(re.compile(rf"'{word}' (->|→) {value} \({counts[word]} rows\)"))
    expect(page.get_by_text("Judge outputs").first).to_be_visible()
    expect(page.get_by_role("textbox", name="Name")).to_have_value(PANEL)
    expect(page.get_by_text("Replace the stored panel of this name")).to_be_visible()
    tab.act(lambda: page.get_by_role("button", name="Use this panel").click())
    expect(page.get_by_text("is now available").first).to_be_visible(timeout=30_000)
    tab.act(lambda: page.get_by_role("button", name="Save to the store").click(), timeout=LONG)
    expect(page.get_by_text(f"'{PANEL}' is stored").first).to_be_visible(timeout=30_000)
    tab.check("Upload")
    tab.shot("02-upload")

    # -- Select: a selection on the stored panel -----------------------------------------------------
    first["Select"] = tab.nav("Select")
    box = page.get_by_role("combobox", name="Panel")
    if box.input_value() != STORED:
        box.click()
        tab.act(lambda: page.get_by_role("option", name=STORED, exact=True).click())
    expect(box).to_have_value(STORED)
    expect(page.get_by_text("800 rows, 800 labelled").first).to_be_visible(timeout=30_000)
    took = tab.act(lambda: page.get_by_role("button", name="Run selection").click(), timeout=LONG)
    print(f"\nselection run: {took:.1f} s")
    verdict = page.get_by_role("heading", name="Verdict")
    expect(verdict).to_be_visible(timeout=30_000)
    evidence = page.get_by_role("heading", name="Evidence")
    expect(evidence).to_be_visible()
    assert verdict.bounding_box()["y"] < evidence.bounding_box()["y"], "the verdict must come first"
    expect(page.get_by_text("Against fixed recipes (difference = recipe - selection").first).to_be_visible()
    sel_id = run_param(page.url)
    assert sel_id is not None and urlparts(page.url)[0] == "/select", f"no ?run=N after the selection: {page.url}"
    expect(page.get_by_text(f"Stored as run {sel_id}").first).to_be_visible()
    first["sel_id"] = sel_id
    tab.check("Select")
    tab.shot("03-select")

    # -- Judges ------------------------------------------------------------------------------------
    first["Judges"] = tab.nav("Judges")
    expect(page.get_by_role("combobox", name="Panel")).to_have_value(STORED)
    expect(page.get_by_role("heading", name="Each judge against the human labels")).to_be_visible()
    expect(page.get_by_role("heading", name="Contribution to the deployed predictor")).to_be_visible()
    expect(page.get_by_role("heading", name="Calibration of the deployed predictor")).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=30_000)
    tab.check("Judges")
    tab.shot("04-judges")

    # -- Regime map: the selection's point, then a small sweep ----------------------------------------
    first["Regime map"] = tab.nav("Regime map")
    expect(page.get_by_role("combobox", name="Panel")).to_have_value(STORED)
    assert run_param(page.url) == sel_id, page.url
    expect(page.get_by_text(f"Shown: selection run {sel_id}").first).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=30_000)
    page.get_by_role("textbox", name="n_M budgets").fill("50,100,200")     # three: the plan fits a curve
    page.get_by_role("spinbutton", name="splits", exact=True).fill("2")
    took = tab.act(lambda: page.get_by_role("button", name="Run sweep").click(), timeout=LONG)
    print(f"sweep run: {took:.1f} s")
    expect(page.get_by_role("heading", name="Plan the next labels")).to_be_visible(timeout=30_000)
    sweep_id = run_param(page.url)
    assert sweep_id is not None and sweep_id != sel_id, f"the sweep is not the page's run: {page.url}"
    expect(page.get_by_text(f"Shown: sweep run {sweep_id}").first).to_be_visible()
    assert page.locator(".js-plotly-plot").count() >= 4      # the map, risk, K and unseen over budget
    tab.check("Regime map")
    tab.shot("05-regime")

    # -- Cell-pressure audit: the selection -----------------------------------------------------------
    first["Cell-pressure audit"] = tab.nav("Cell-pressure audit")
    assert run_param(page.url) == sel_id, page.url
    expect(page.get_by_role("combobox", name="Candidate")).to_be_visible()
    expect(page.get_by_role("heading", name="Cells")).to_be_visible()
    expect(page.get_by_role("heading", name="Held-out risk against cell pressure")).to_be_visible()
    tab.check("Cell-pressure audit")
    tab.shot("06-audit")

    # -- Scalar vs table gaps: the sweep --------------------------------------------------------------
    first["Scalar vs table gaps"] = tab.nav("Scalar vs table gaps")
    assert run_param(page.url) == sweep_id, page.url
    expect(page.locator(".js-plotly-plot").nth(3)).to_be_visible(timeout=30_000)
    tab.check("Scalar vs table gaps")
    tab.shot("07-gaps")

    # -- Results browser: open the selection run (?run=N), download its report ------------------------
    first["Results browser"] = tab.nav("Results browser")
    page.get_by_role("combobox", name="Open runs (two or more: side by side)").click()
    tab.act(lambda: page.get_by_role("option", name=str(sel_id), exact=True).click())
    page.keyboard.press("Escape")
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    assert run_param(page.url) == sel_id, page.url
    expect(page.get_by_text(f"Run {sel_id} · select on").first).to_be_visible(timeout=30_000)
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=30_000)
    tab.check("Results browser")
    tab.shot("08-results")
    with page.expect_download(timeout=120_000) as download:
        page.get_by_role("button", name="Download report (HTML)").click()
    report = tmp_path / "report.html"
    download.value.save_as(str(report))
    html = report.read_text()
    missing = [s for s in REPORT_SECTIONS if f"<h2>{s}</h2>" not in html]
    assert not missing, f"the report lacks the sections {missing}"
    assert "Traceback" not in html

    # -- Deploy & monitor: this session's selection on uploaded traffic -------------------------------
    first["Deploy & monitor"] = tab.nav("Deploy & monitor")
    expect(page.get_by_role("combobox", name="Deploy")).to_have_value(
        f"this session's selection ({STORED})", timeout=30_000)
    tab.act(lambda: page.locator("input[type=file]").set_input_files(str(traffic_path)), timeout=LONG)
    expect(page.get_by_role("heading", name="3. Audit")).to_be_visible(timeout=30_000)
    expect(page.get_by_test_id("stAlert").first).to_contain_text(re.compile(r"^(OK|WARN|REFUSE)"))
    expect(page.get_by_text("300 traffic rows").first).to_be_visible()
    tab.check("Deploy & monitor")
    tab.shot("09-deploy")
    with page.expect_download(timeout=60_000) as download:
        page.get_by_role("button", name="Download predictions (CSV)").click()
    saved = tmp_path / "predictions.csv"
    download.value.save_as(str(saved))
    lines = saved.read_text().splitlines()
    assert lines[0] == "item_id,prediction,N_z,in_support,missing_judges" and len(lines) == 301

    # -- warm: every page again, through the sidebar ---------------------------------------------------
    warm = {}
    for link in PAGES:
        warm[link] = tab.nav(link)
        tab.check(f"{link} (warm)")
    return first, warm


def fresh_tab_checks(tab: Tab, sel_id: int) -> None:
    """A new session: a shared results link, the error detector on a provoked error, the demo."""
    from playwright.sync_api import expect
    page = tab.page
    tab.goto(f"/results?run={sel_id}")
    expect(page.get_by_text(f"Run {sel_id} · select on").first).to_be_visible(timeout=30_000)
    tab.check("Results browser (shared link)")
    # the detector sees a real error alert (a link to a run the store does not hold)
    tab.goto("/regime?run=987654321")
    expect(page.get_by_text("Run 987654321 is not in the store").first).to_be_visible(timeout=30_000)
    found = tab.problems()
    assert len(found) == 1 and found[0].startswith("error alert: Run 987654321"), found
    tab.goto("/")
    tab.act(lambda: page.get_by_role("button", name="Open the demo (selection and sweep)").click())
    assert urlparts(page.url)[0] == "/select" and run_param(page.url) is not None, page.url
    expect(page.get_by_role("heading", name="Verdict")).to_be_visible(timeout=30_000)
    tab.check("Open the demo")
    tab.shot("10-demo-select")
    page.close()


def report_times(first: dict, warm: dict, total: float) -> None:
    rows = [f"{'page':<22}{'first visit s':>14}{'warm switch s':>15}"]
    rows += [f"{link:<22}{first.get(link, float('nan')):>14.2f}{warm[link]:>15.2f}" for link in PAGES]
    slow = [link for link in PAGES if warm[link] > 1.5]
    rows.append(f"warm switches over the 1.5 s target: {', '.join(slow) if slow else 'none'}; "
                f"walk {total:.0f} s")
    text = "\n".join(rows)
    print("\n" + text)
    (SHOTS / "page-times.txt").write_text(text + "\n")
