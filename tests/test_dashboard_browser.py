"""The dashboard end to end in a real browser: `tracekit.apps.dashboard.launch` serves it on a
free port over a store of real ns-2 runs, headless Chromium (Debian's `chromium`, driven
by Playwright) opens every page, waits for its plotly charts, checks there is no Streamlit
exception box, saves a screenshot per page under $TRACEKIT_SCREENSHOTS (default: the
pytest tmp dir) and prints the time to first render of each page. The modebar camera
downloads a PNG, and an SVG once the sidebar says so."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow      # a browser and a Streamlit server: minutes

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
if CHROMIUM is None:
    pytest.skip("Chromium is not installed (Debian: apt-get install chromium)", allow_module_level=True)
playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed "
                                                                    "(pip install playwright; no browser download needed)")

from test_dashboard import make_store  # noqa: E402  (same fixture store as the AppTest tests)
from test_reproduce import PAPER  # noqa: E402  (the test paper, about varying-error-rate)

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# url path, page title, how many plotly charts it shows on the fixture store's default scenario
# (Papers: none until an experiment is evaluated, see test_papers_page_in_chromium)
PAGES = [("", "Overview", 1), ("compare", "Compare variants", 5), ("sweep", "Sweep", 1),
         ("timeseries", "Time series", 3), ("fairness", "Fairness", 1),
         ("throughput_delay", "Throughput vs delay", 1), ("distributions", "Distributions", 3),
         ("links", "Links & TCP", 3), ("papers", "Papers", 0), ("sql", "SQL", 1)]


def _announced_url(log: Path) -> str | None:
    """The address `launch` announced ("tracekit dashboard: http://127.0.0.1:PORT ..."), once
    Streamlit has bound its port."""
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("tracekit dashboard: http://127.0.0.1:"):
            return line.split()[2]
    return None


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # TRACEKIT_DASHBOARD_STORE: time the pages on an existing (large) store instead
    given = os.environ.get("TRACEKIT_DASHBOARD_STORE")
    store = Path(given) if given else make_store(tmp_path_factory.mktemp("dash-browser") / "store")
    # the Papers page reads the test paper (the bundled paper files on a given store)
    papers = None
    if not given:
        papers = tmp_path_factory.mktemp("dash-papers")
        (papers / "t1.toml").write_text(PAPER)
    log = tmp_path_factory.mktemp("dash-log") / "streamlit.log"
    # port 0: Streamlit binds one the system picks and says which (no port chosen here and
    # closed again, which another process could take before Streamlit binds it)
    code = (f"import sys; from pathlib import Path; from tracekit.apps.dashboard import launch; "
            f"sys.exit(launch(Path({str(store)!r}), 0, papers_dir={f'Path({str(papers)!r})' if papers else None}))")
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)   # its own process group: launch's streamlit child too
    deadline = time.monotonic() + 300
    try:
        while True:
            url = _announced_url(log)
            try:
                if url is not None:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as r:
                        if r.read().strip() == b"ok":
                            break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the dashboard did not start: {log.read_text()[-2000:]}")
            time.sleep(0.3)
        yield url
    finally:  # the launcher and its Streamlit child: the process group started above
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        for _ in range(50):
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.2)
        else:
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    d = Path(os.environ.get("TRACEKIT_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def _settle(page, timeout_ms: int = 120_000) -> None:
    """Wait until Streamlit has finished running the page script."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]') "
        "&& document.querySelectorAll('[data-testid=\"stSkeleton\"]').length === 0",
        timeout=timeout_ms)
    page.wait_for_timeout(800)


def _screenshot(page, path: Path) -> None:
    """The whole page: Streamlit scrolls inside its main block, so grow the viewport to it."""
    h = page.evaluate("() => { const m = document.querySelector('[data-testid=\"stMain\"]'); "
                      "return m ? m.scrollHeight : document.body.scrollHeight }")
    page.set_viewport_size({"width": 1440, "height": max(900, min(int(h) + 40, 8000))})
    page.wait_for_timeout(600)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": 1440, "height": 900})


def test_every_page_in_chromium(server, browser, shots, capsys):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    timings = {}
    for path, title, n_charts in PAGES:
        t0 = time.monotonic()
        page.goto(f"{server}/{path}")
        if n_charts:
            page.wait_for_selector(".js-plotly-plot", timeout=120_000)
        else:
            page.locator("h1", has_text=title).wait_for(timeout=120_000)
        first = time.monotonic() - t0
        page.wait_for_function(f"() => document.querySelectorAll('.js-plotly-plot').length >= {n_charts}",
                               timeout=120_000)
        _settle(page)
        complete = time.monotonic() - t0
        timings[title] = {"first_chart_s": round(first, 2), "complete_s": round(complete, 2)}
        assert page.locator('[data-testid="stException"]').count() == 0, f"{title}: exception box"
        assert page.locator("h1", has_text=title).count() == 1, f"{title}: heading missing"
        charts = page.locator(".js-plotly-plot").count()
        assert charts >= n_charts, f"{title}: {charts} charts, expected {n_charts}"
        assert page.locator(".js-plotly-plot .main-svg").count() >= charts, f"{title}: a chart did not draw"
        assert page.locator('.modebar-btn[data-title^="Download plot"]').count() >= charts
        _screenshot(page, shots / f"{path or 'overview'}.png")
    # the same pages reached from the sidebar's navigation in one session (data cached)
    page.goto(server)
    page.wait_for_selector(".js-plotly-plot", timeout=120_000)
    _settle(page)
    for _path, title, n_charts in PAGES[1:] + PAGES[:1]:
        t0 = time.monotonic()
        page.locator('[data-testid="stSidebarNav"] a', has_text=title.split(" variants")[0]).first.click()
        page.locator("h1", has_text=title).wait_for(timeout=120_000)
        page.wait_for_function(f"() => document.querySelectorAll('.js-plotly-plot').length >= {n_charts}",
                               timeout=120_000)
        timings[title]["in_app_first_chart_s"] = round(time.monotonic() - t0, 2)
        _settle(page)
        assert page.locator('[data-testid="stException"]').count() == 0, f"{title}: exception box"
    assert not errors, errors
    (shots / "timings.json").write_text(json.dumps(timings, indent=2))
    with capsys.disabled():
        print(f"\n[dashboard] time to first render per page (screenshots in {shots}):")
        for title, t in timings.items():
            print(f"  {title:22s} URL load: first chart {t['first_chart_s']:5.2f} s, all done {t['complete_s']:5.2f} s;"
                  f"  sidebar link: {t['in_app_first_chart_s']:5.2f} s")
    page.close()


def test_modebar_downloads_png_then_svg(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1440, "height": 900}, accept_downloads=True)
    page.goto(f"{server}/compare")
    page.wait_for_selector(".js-plotly-plot", timeout=120_000)
    _settle(page)
    chart = page.locator(".js-plotly-plot").first
    chart.hover()
    with page.expect_download(timeout=60_000) as dl:
        chart.locator('.modebar-btn[data-title^="Download plot"]').click()
    assert dl.value.suggested_filename == "compare-throughput_kbps.png"
    png = tmp_path / dl.value.suggested_filename
    dl.value.save_as(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    page.locator('[data-testid="stSidebar"]').get_by_text("SVG", exact=True).click()   # chart image format
    _settle(page)
    chart = page.locator(".js-plotly-plot").first
    chart.hover()
    with page.expect_download(timeout=60_000) as dl:
        chart.locator('.modebar-btn[data-title^="Download plot"]').click()
    assert dl.value.suggested_filename == "compare-throughput_kbps.svg"
    svg = tmp_path / dl.value.suggested_filename
    dl.value.save_as(svg)
    text = svg.read_text()
    assert text.startswith("<svg") and "Throughput (kbit/s)" in text
    # the image states its conditions: scenario, pinned parameter, seeds, what the whiskers are
    for part in ("scenario cbr-variants", "cbr_rate_mbps=", " seeds (", "whiskers: 95% CI of the mean"):
        assert part in text, part
    page.close()


def _overlap(a: dict | None, b: dict | None) -> bool:
    return bool(a and b) and not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                                  or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


def test_narrow_window_titles_and_verdicts_are_whole(server, browser, shots):
    """At 800 px: every chart title of the Compare page stays clear of its (hovered) modebar,
    and the verdict's numbers are not cut (issue 15: '2,52...')."""
    page = browser.new_page(viewport={"width": 800, "height": 1000})
    page.goto(f"{server}/compare")
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 5", timeout=120_000)
    _settle(page)
    charts = page.locator(".js-plotly-plot")
    for i in range(min(charts.count(), 4)):
        c = charts.nth(i)
        c.scroll_into_view_if_needed()
        c.hover()
        page.wait_for_timeout(300)
        title, bar = c.locator(".gtitle").first.bounding_box(), c.locator(".modebar").first.bounding_box()
        assert title and bar, i
        assert not _overlap(title, bar), (i, title, bar)
    verdict = page.locator('[data-testid="stMarkdownContainer"] li').first
    assert verdict.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "the verdict line is cut"
    assert "kbit/s" in verdict.inner_text() and "…" not in verdict.inner_text()
    _screenshot(page, shots / "compare-800px.png")
    page.close()


def test_sidebar_and_sql_interaction(server, browser, shots):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(f"{server}/fairness")
    page.wait_for_selector(".js-plotly-plot", timeout=120_000)
    _settle(page)
    # pick another scenario in the sidebar: the Jain's index chart appears
    page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
    page.get_by_role("option", name="cbr-fairness", exact=False).click()
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=120_000)
    _settle(page)
    assert page.get_by_text("Jain's fairness index of the TCP flows").count() >= 1
    assert page.locator('[data-testid="stException"]').count() == 0
    _screenshot(page, shots / "fairness-cbr-fairness.png")

    page.goto(f"{server}/sql")
    page.wait_for_selector("textarea", timeout=120_000)
    _settle(page)
    page.locator("textarea").fill("SELECT name, avg(jain_index) AS j FROM fairness JOIN flow_labels USING (run_id) "
                                  "GROUP BY name ORDER BY name")
    page.get_by_role("button", name="Run").click()
    page.wait_for_function("() => document.body.innerText.includes('rows')", timeout=60_000)
    _settle(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    page.locator("textarea").fill("DROP VIEW flow_stats")
    page.get_by_role("button", name="Run").click()
    page.wait_for_selector('[data-testid="stAlertContentError"]', timeout=60_000)
    assert "only queries are allowed" in page.locator('[data-testid="stAlertContentError"]').inner_text()
    page.close()


def test_wireless_page_in_chromium(server, browser, shots):
    """The Wireless page on the fixture store's manet runs: pick the scenario in the sidebar,
    the routing-protocol charts (PDR, throughput, delay, NRL, routing packets), the drops by
    layer and reason and the forwarding per node all draw."""
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{server}/wireless")        # opens on the manet runs by itself (issue 15)
    page.locator("h1", has_text="Wireless").wait_for(timeout=120_000)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 8", timeout=120_000)
    _settle(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_text("Normalised routing load").count() >= 1
    assert page.get_by_text("Drops per run by layer and reason").count() >= 1
    assert page.get_by_text("Node positions at t = 0 s").count() >= 1
    assert page.locator(".js-plotly-plot .main-svg").count() >= 8
    # the time slider moves the nodes: the map's title follows it
    slider = page.locator('[data-testid="stSlider"] input[type="range"]').last
    moved = False
    for _attempt in range(3):   # a key press can land while the page still reruns: try again
        slider.focus()
        for _ in range(20):
            slider.press("ArrowRight")
        try:
            page.wait_for_function("() => !document.body.innerText.includes('Node positions at t = 0 s')",
                                   timeout=30_000)
            moved = True
            break
        except playwright_api.TimeoutError:
            continue
    _settle(page)
    assert moved and page.get_by_text("Node positions at t = 0 s").count() == 0
    assert page.locator('[data-testid="stException"]').count() == 0
    assert not errors, errors
    _screenshot(page, shots / "wireless.png")
    page.close()


def test_papers_page_in_chromium(server, browser, shots):
    """The Papers page on the test paper: no result saved in the fixture store, so it shows
    the command; the Evaluate button sets the paper's values beside the store's runs (none
    of this experiment's: the paper's values alone, and its claims untestable) in a chart."""
    if os.environ.get("TRACEKIT_DASHBOARD_STORE"):
        pytest.skip("the test paper is read on the fixture store only")
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{server}/papers")
    page.locator("h1", has_text="Papers").wait_for(timeout=120_000)
    _settle(page)
    assert page.get_by_text("Paper t1: A test paper").count() == 1
    assert page.get_by_text("No result for varying-error-rate in the store yet").count() == 1
    assert page.locator("code", has_text="tracekit reproduce varying-error-rate").count() >= 1
    page.get_by_role("button", name="Evaluate the full version now").click()
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
    _settle(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    chart = page.locator(".js-plotly-plot").first
    for legend in ("paper range", "paper (outside its physical bound)"):
        assert chart.locator(".legendtext", has_text=legend).count() == 1, legend
    assert page.get_by_text("evaluated here at").count() >= 1
    assert page.get_by_text("untestable", exact=True).count() >= 1      # the claims' status badges
    assert not errors, errors
    _screenshot(page, shots / "papers-evaluated.png")
    page.close()
