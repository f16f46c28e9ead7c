"""report.html: written into every evidence folder, re-derived by the audit, escaped, and read in a real browser.

The browser test opens the page in Debian's Chromium, driven by Playwright for Python (its own browser download is
never used: ``executable_path`` is the system's Chromium). Without a browser it skips with the reason, unless
``LAB_REQUIRE_BROWSER=1`` (set by ``.ci/run``, which installs Chromium), when a missing browser fails the test.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import struct
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lab.engine.core import TraceEvent
from lab.evidence import audit, create_evidence_folder, write_evidence
from lab.evidence.report.html import render_html
from lab.evidence.report.timeline import build_timeline
from lab.scenarios.exploring import explore_scenario
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.runner import ScenarioResult, run_scenario
from tests.evidence_checkout import FROZEN, frozen_checkout
from tests.forging import reseal

SCENARIOS = ("out_of_order_commit", "synchronized_fast_first_deadlocks", "race_two_requests")
CHROMIUM = Path("/usr/bin/chromium")
BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module", autouse=True)
def _frozen() -> Iterator[Path]:
    """Write from, and audit against, one frozen copy of the checkout (see tests/evidence_checkout.py)."""
    with frozen_checkout() as path:
        yield path


def _load(name: str) -> LoadedScenario:
    loaded = load(FROZEN / "scenarios" / f"{name}.py")
    assert isinstance(loaded, LoadedScenario), loaded
    return loaded


@pytest.fixture(scope="module")
def results() -> list[ScenarioResult]:
    return [run_scenario(_load(name)) for name in SCENARIOS]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The frozen lab with a scenario folder of exactly these scenarios, so that a real command makes the folder."""
    root = tmp_path_factory.mktemp("checkout")
    shutil.copytree(FROZEN / "lab", root / "lab")
    (root / "scenarios").mkdir()
    for name in SCENARIOS:
        shutil.copy2(FROZEN / "scenarios" / f"{name}.py", root / "scenarios" / f"{name}.py")
    return root


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, results: list[ScenarioResult], checkout: Path) -> Path:
    """A run of three scenarios and one exploration of a race over a mutant (so it FAILs with a counterexample):
    what ``--explore --variant CheckOutsideLockSession`` makes of them (only the race declares that variant)."""
    race = _load("race_two_requests")
    explorations = [explore_scenario(race, granularity="probe", variant="CheckOutsideLockSession")]
    path = tmp_path_factory.mktemp("html") / "evidence"
    now = datetime.now(UTC)
    report = write_evidence(
        create_evidence_folder(path),
        sorted(results, key=lambda result: result.name),  # run order: the files by name
        [],
        root=checkout,
        command=["run.py", "--explore", "--variant", "CheckOutsideLockSession", "--out", str(path)],
        started=now,
        ended=now,
        explorations=explorations,
        explore_settings={"granularities": ["probe"], "preemption_bound": None, "max_schedules": 20_000},
    )
    assert report.ok, report.problems
    return path


class TestTheFile:
    @pytest.mark.slow
    def test_it_is_listed_in_the_sums_and_self_contained(self, folder: Path) -> None:
        """Listed in SHA256SUMS; nothing on the page is fetched: no script, stylesheet, image or link elsewhere."""
        assert re.search(r"^[0-9a-f]{64}  report\.html$", (folder / "SHA256SUMS").read_text(), re.M)
        page = (folder / "report.html").read_text()
        assert "<script" not in page and "<link" not in page and "<img" not in page and "@import" not in page
        assert "url(" not in page
        assert re.findall(r'(?:src|href)="([^"#][^"]*)"', page) == []

    def test_an_edited_page_is_caught_by_the_audit(self, folder: Path, tmp_path: Path, checkout: Path) -> None:
        """report.html decides nothing, so the audit renders it again from the records and compares bytes."""
        copy = tmp_path / "copy"
        shutil.copytree(folder, copy)
        page = copy / "report.html"
        page.write_text(page.read_text().replace("STALE", "COMMITTED", 1))
        reseal(copy)
        found = [(p.file, p.reason.split(" (")[0]) for p in audit(copy, rerun=False, checkout=checkout).problems]
        assert found == [("report.html", "differs from the report the audit's code makes of these records")]

    def test_a_folder_without_a_page_still_audits(self, folder: Path, tmp_path: Path, checkout: Path) -> None:
        """Folders written before report.html existed have none; that is not a problem."""
        copy = tmp_path / "copy"
        shutil.copytree(folder, copy)
        (copy / "report.html").unlink()
        record = json.loads((copy / "audit.json").read_text(encoding="utf-8"))
        record["files_verified"] -= 1  # its self-audit verified one file fewer
        (copy / "audit.json").write_text(json.dumps(record, sort_keys=True, ensure_ascii=False, indent=2) + "\n")
        reseal(copy)
        assert audit(copy, rerun=False, checkout=checkout).problems == ()


class TestRendering:
    def test_no_text_becomes_markup(self, results: list[ScenarioResult]) -> None:
        """A lesson, a check, an actor's note or an outcome holding markup is shown as text, never parsed."""
        evil = '<script>alert(1)</script>" onmouseover="x'
        base = results[0]
        trace = (*base.trace[:-1], TraceEvent(len(base.trace), "slow", "note", "", {"text": evil}), base.trace[-1])
        checks = (dataclasses.replace(base.checks[0], name=evil, passed=False, reason=evil), *base.checks[1:])
        hostile = dataclasses.replace(
            base, lesson=evil, description=f"{evil}\n\n{evil}", trace=trace, checks=checks, source=evil
        )
        page = render_html({"status": evil, "command": [evil]}, [hostile], [])
        assert "<script" not in page and 'onmouseover="' not in page
        assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;&quot; onmouseover=&quot;x") >= 6

    def test_the_same_records_make_the_same_bytes(self, results: list[ScenarioResult]) -> None:
        run = {"status": "PASS", "command": ["run.py"]}
        assert render_html(run, results, []) == render_html(run, list(results), [])

    def test_the_timeline_of_out_of_order_commit(self, results: list[ScenarioResult]) -> None:
        """slow waits on the latch fast-committed until fast, which counted it down, lets it go; slow ends STALE."""
        result = results[0]
        timeline = build_timeline(result.trace, list(result.outcomes))
        assert timeline.actors == ("slow", "fast")
        [wait] = timeline.waits
        assert (wait.actor, wait.kind, wait.on, wait.woken_by) == ("slow", "latch", "fast-committed", "fast")
        assert wait.end is not None and wait.start < wait.end
        ends = {mark.actor: mark for mark in timeline.marks if mark.kind == "end"}
        assert ends["slow"].outcome == "STALE" and ends["slow"].row > wait.end
        assert ends["fast"].row < wait.end

    def test_a_deadlock_leaves_waits_that_never_end(self, results: list[ScenarioResult]) -> None:
        result = results[1]
        timeline = build_timeline(result.trace, list(result.outcomes))
        assert [(w.actor, w.on, w.end) for w in timeline.waits] == [
            ("slow", "fast-committed", None),
            ("fast", "chat.lock", None),
        ]
        assert [lab.op for lab in timeline.lab] == ["deadlock", "final"]


def _browser_or_skip() -> None:
    """Skip (or, under LAB_REQUIRE_BROWSER=1, fail) when Playwright or Chromium is missing."""
    missing = []
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("Playwright for Python (pip install -e '.[test]')")
    if not CHROMIUM.exists():
        missing.append(f"Chromium at {CHROMIUM} (apt-get install chromium)")
    if missing:
        reason = "no browser to open report.html: missing " + " and ".join(missing)
        if os.environ.get("LAB_REQUIRE_BROWSER") == "1":
            pytest.fail(reason + "; LAB_REQUIRE_BROWSER=1 requires it")
        pytest.skip(reason)


def test_a_missing_browser_skips_unless_it_is_required(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Locally a machine without Chromium skips the browser test with the reason; CI (LAB_REQUIRE_BROWSER=1) fails."""
    monkeypatch.setattr(sys.modules[__name__], "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.delenv("LAB_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"missing Chromium at .*no-chromium"):
        _browser_or_skip()
    monkeypatch.setenv("LAB_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match=r"LAB_REQUIRE_BROWSER=1 requires it"):
        _browser_or_skip()


@pytest.mark.slow  # a Chromium start, 4 s: with the widths below, run by .ci/run's -m slow
@pytest.mark.timeout(120)
def test_the_page_in_a_real_browser(folder: Path, tmp_path: Path) -> None:
    """Headless Chromium loads the page with no console error and no request beyond the file; every scenario has
    its section; out_of_order_commit's timeline shows slow waiting on fast-committed and ending STALE; a screenshot
    1280 px wide is written."""
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    run = json.loads((folder / "run.json").read_text())
    problems: list[str] = []
    with sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=str(CHROMIUM),
            headless=True,
            args=BROWSER_FLAGS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            context.set_default_timeout(20_000)
            page = context.new_page()
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            page.on("request", lambda r: None if r.url.startswith("file:") else problems.append(f"request {r.url}"))
            page.goto((folder / "report.html").as_uri(), wait_until="load")
            sections = page.eval_on_selector_all("section.scenario", "els => els.map(e => e.dataset.scenario)")
            assert sections == run["scenarios"] == sorted(SCENARIOS)
            ours = page.locator("#scenario-out_of_order_commit")
            waiting = ours.locator('.waiting[data-actor="slow"][data-on="fast-committed"]')
            assert waiting.is_visible()
            assert "waits for latch fast-committed" in waiting.inner_text()
            assert "woken by fast" in waiting.inner_text()
            end = ours.locator('.mark[data-actor="slow"][data-kind="end"]')
            assert end.get_attribute("data-outcome") == "STALE"
            assert end.inner_text().strip() == "STALE"
            wait_box, end_box = waiting.bounding_box(), end.bounding_box()
            assert wait_box is not None and end_box is not None
            assert wait_box["y"] + wait_box["height"] <= end_box["y"]  # the wait ends before slow does
            counterexample = page.locator(".exploration .counterexample")
            assert counterexample.count() == 1
            assert "python -m lab replay race_two_requests:" in counterexample.inner_text()
            shot = tmp_path / "report.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            context.close()
    assert problems == []
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">I", header[16:20])[0] == 1280


_OVERFLOW_JS = """() => {
    const width = document.documentElement.clientWidth;
    const scrolls = (el) => {
        for (let up = el.parentElement; up; up = up.parentElement) {
            const x = getComputedStyle(up).overflowX;
            if (x === "auto" || x === "scroll") return true;
        }
        return false;
    };
    const out = [];
    for (const el of document.querySelectorAll("main *")) {
        const box = el.getBoundingClientRect();
        if (box.width === 0 || box.right <= width + 1 || scrolls(el)) continue;
        out.push(el.tagName.toLowerCase() + "." + el.className + " right=" + Math.round(box.right));
        if (out.length >= 5) break;
    }
    return {page: document.documentElement.scrollWidth, width: width, out: out};
}"""


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("width", [390, 768, 1280])
def test_the_page_reads_at_every_width(folder: Path, tmp_path: Path, width: int) -> None:
    """At a phone's 390 px, a tablet's 768 and a desktop's 1280, nothing runs off the page: the page itself never
    scrolls sideways, and whatever is wider than the screen (a timeline, a wide table) scrolls inside its own box.
    Every failing box names the outcome it reached, and the counterexample shows its run step by step with the two
    racing steps marked by what they touched. A full-page screenshot of each width is written."""
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=str(CHROMIUM),
            headless=True,
            args=BROWSER_FLAGS,
            viewport={"width": width, "height": 900},
        )
        try:
            context.set_default_timeout(20_000)
            page = context.new_page()
            page.goto((folder / "report.html").as_uri(), wait_until="load")
            found = page.evaluate(_OVERFLOW_JS)
            assert found["out"] == [] and found["page"] <= found["width"], found
            timeline = page.locator("#scenario-out_of_order_commit .timeline").first
            assert timeline.is_visible()
            boxes = page.locator(".counterexample")
            assert boxes.count() >= 1
            for index in range(boxes.count()):
                reached = boxes.nth(index).locator(".reached")
                assert "slow=COMMITTED" in reached.inner_text(), reached.inner_text()
            steps = page.locator(".counterexample ol.steps li")
            assert steps.count() > 10  # the run step by step, not blocks of choices
            racing = page.locator(".counterexample ol.steps li.racing")
            assert racing.count() == 2 and "races: " in racing.first.inner_text()
            assert racing.first.is_visible()
            page.screenshot(path=str(tmp_path / f"report-{width}.png"), full_page=True)
        finally:
            context.close()
    assert (tmp_path / f"report-{width}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
