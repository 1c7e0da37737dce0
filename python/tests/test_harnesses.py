"""Each harness records a multi-step browse of the demo sites through the installed wheel, the sites are
stopped, and the same harness replays it sealed: the same URL and page text at every step, and the
replay report shows the snapshot answered every page."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import webfreeze
import webfreeze.browser_use
import webfreeze.playwright
import webfreeze.selenium
import webfreeze.webarena

Steps = list[tuple[str, str]]

PRODUCT = "a[href^='/product/']"
ADD_TO_CART = "form[action='/cart/add'] button"
ARTICLE = "a[href^='/article/']"
# Resolves once the page has loaded, its subresources included.
LOADED = "() => document.readyState === 'complete' || new Promise(r => addEventListener('load', () => r(true)))"
# browser-use's loading screen on its about:blank tabs shows its logo, fetched from its CDN: resolves with how
# that fetch ended ("load" or "error").
HARNESS_LOGO = """() => new Promise(done => {
  const img = new Image();
  img.onload = () => done('load');
  img.onerror = () => done('error');
  img.src = 'https://cf.browser-use.com/logo.svg';
})"""


def record_then_replay(
    sites: Any, home: str, tmp_path: Path, name: str, browse: Callable[[webfreeze.Proxy], Steps]
) -> tuple[Steps, Steps, dict[str, Any]]:
    with webfreeze.use_snapshot(name, "once", home=home, **sites.proxy_options) as proxy:
        assert proxy.mode == "record"
        recorded = browse(proxy)
    sites.stop()
    report_file = tmp_path / f"{name.replace('/', '_')}-report.json"
    with webfreeze.use_snapshot(name, "none", home=home, report=report_file) as proxy:
        replayed = browse(proxy)
    report = json.loads(report_file.read_text())
    return recorded, replayed, report


def assert_same_browse(recorded: Steps, replayed: Steps, report: dict[str, Any], steps: int) -> None:
    assert len(recorded) == steps
    urls = [u for u, _ in recorded]
    assert urls[0] == "https://shop.test/" and any("/cart" in u for u in urls), urls
    assert all(text.strip() for _, text in recorded), recorded
    for i, (r, p) in enumerate(zip(recorded, replayed)):
        assert p == r, f"step {i}: recorded {r!r}, replayed {p!r}"
    assert report["requests"] > 0 and report["render_misses"] == 0, (report["render_misses"], report.get("misses"))
    documents = [m for m in report.get("misses", []) if m.get("dest") == "document"]
    assert not documents, documents


# -- Playwright -----------------------------------------------------------------------------------------


def playwright_sync_browse(chrome: str) -> Callable[[webfreeze.Proxy], Steps]:
    from playwright.sync_api import sync_playwright

    def browse(proxy: webfreeze.Proxy) -> Steps:
        steps: Steps = []
        with sync_playwright() as p:
            browser = webfreeze.playwright.launch(p.chromium, proxy, executable_path=chrome)
            page = browser.new_page()
            page.goto("https://shop.test/")
            steps.append((page.url, page.inner_text("body")))
            page.click(PRODUCT)
            page.wait_for_url("**/product/**")
            steps.append((page.url, page.inner_text("body")))
            page.click(ADD_TO_CART)
            page.wait_for_url("**/cart")
            steps.append((page.url, page.inner_text("body")))
            page.goto("https://news.test/")
            page.click(ARTICLE)
            page.wait_for_url("**/article/**")
            steps.append((page.url, page.inner_text("body")))
            browser.close()
        return steps

    return browse


def test_playwright_sync(sites, home, tmp_path, chrome):
    rec, rep, report = record_then_replay(sites, home, tmp_path, "pw/sync", playwright_sync_browse(chrome))
    assert_same_browse(rec, rep, report, 4)


def test_playwright_async(sites, home, tmp_path, chrome):
    from playwright.async_api import async_playwright

    async def run(proxy: webfreeze.Proxy) -> Steps:
        steps: Steps = []
        async with async_playwright() as p:
            browser = await webfreeze.playwright.launch(p.chromium, proxy, executable_path=chrome)
            # A context with a storage state (AgentLab's case) keeps the proxy: it is the browser's.
            context = await browser.new_context(storage_state={"cookies": [], "origins": []})
            page = await context.new_page()
            await page.goto("https://shop.test/")
            steps.append((page.url, await page.inner_text("body")))
            await page.click(PRODUCT)
            await page.wait_for_url("**/product/**")
            steps.append((page.url, await page.inner_text("body")))
            await page.click(ADD_TO_CART)
            await page.wait_for_url("**/cart")
            steps.append((page.url, await page.inner_text("body")))
            await browser.close()
        return steps

    rec, rep, report = record_then_replay(sites, home, tmp_path, "pw/async", lambda p: asyncio.run(run(p)))
    assert_same_browse(rec, rep, report, 3)


# -- Selenium (as WebVoyager's run.py builds its driver) -------------------------------------------------


def test_selenium(sites, home, tmp_path, chrome, chromedriver, monkeypatch):
    from selenium.webdriver import ChromeOptions
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    def webvoyager_options() -> ChromeOptions:  # WebVoyager's driver_config(args), headless
        options = ChromeOptions()
        options.add_argument("--force-device-scale-factor=1")
        options.add_argument("--headless=new")
        options.add_argument("--no-sandbox")
        options.add_experimental_option("prefs", {"plugins.always_open_pdf_externally": True})
        return options

    def browse(proxy: webfreeze.Proxy) -> Steps:
        # A global HTTPS_PROXY (a harness that exported proxy.env()) must not break chromedriver calls.
        for k, v in proxy.env().items():
            monkeypatch.setenv(k, v)
        driver = webfreeze.selenium.chrome(proxy, webvoyager_options(), chromedriver=chromedriver, chrome_binary=chrome)
        steps: Steps = []
        try:
            wait = WebDriverWait(driver, 30)
            driver.get("https://shop.test/")
            steps.append((driver.current_url, driver.find_element(By.TAG_NAME, "body").text))
            driver.find_element(By.CSS_SELECTOR, PRODUCT).click()
            wait.until(ec.url_contains("/product/"))
            steps.append((driver.current_url, driver.find_element(By.TAG_NAME, "body").text))
            driver.find_element(By.CSS_SELECTOR, ADD_TO_CART).click()
            wait.until(ec.url_contains("/cart"))
            steps.append((driver.current_url, driver.find_element(By.TAG_NAME, "body").text))
        finally:
            driver.quit()
        return steps

    rec, rep, report = record_then_replay(sites, home, tmp_path, "selenium/wv", browse)
    assert_same_browse(rec, rep, report, 3)


# -- browser-use -----------------------------------------------------------------------------------------


def test_browser_use(sites, home, tmp_path, chrome):
    from browser_use import BrowserSession

    async def run(proxy: webfreeze.Proxy) -> Steps:
        profile = webfreeze.browser_use.profile(
            proxy, executable_path=chrome, headless=True, user_data_dir=str(tmp_path / f"bu-{proxy.mode}")
        )
        session = BrowserSession(browser_profile=profile)
        await session.start()
        steps: Steps = []
        try:
            # Whether browser-use's loading screen gets to ask for its logo before the first page replaces
            # it is a race, so a blank tab asks for it here, in every run. It is the harness's, not the
            # site's: the proxy answers it itself (never dialed, never recorded), and the replay does not
            # count it as a page's miss.
            await session.navigate_to("about:blank", new_tab=True)
            blank = await session.get_current_page()
            assert blank is not None
            assert await blank.evaluate(HARNESS_LOGO) == "error"
            for url in ("https://shop.test/", "https://shop.test/product/red-mug", "https://shop.test/cart"):
                await session.navigate_to(url)
                page = await session.get_current_page()
                assert page is not None
                # navigate_to returns before the load event: a step is the loaded page, so each subresource is
                # asked for in the recording as in the replay.
                await page.evaluate(LOADED)
                steps.append((await page.get_url(), await page.evaluate("() => document.body.innerText")))
        finally:
            await session.kill()
        return steps

    rec, rep, report = record_then_replay(sites, home, tmp_path, "browser-use/nav", lambda p: asyncio.run(run(p)))
    assert_same_browse(rec, rep, report, 3)


# -- WebArena / VWA: process-wide, with a subprocess that knows nothing of webfreeze ---------------------

CHILD = textwrap.dedent(
    """
    # What WebArena's auto_login.py and VWA's image fetch do: plain Playwright and requests, no hook.
    import json, sys, urllib.request
    from playwright.sync_api import sync_playwright
    import requests

    steps = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=sys.argv[1])
        page = browser.new_page()
        page.goto("https://shop.test/")
        steps.append([page.url, page.inner_text("body")])
        page.click("a[href^='/product/']")
        page.wait_for_url("**/product/**")
        steps.append([page.url, page.inner_text("body")])
        page.click("form[action='/cart/add'] button")
        page.wait_for_url("**/cart")
        steps.append([page.url, page.inner_text("body")])
        browser.close()
    image = requests.get("https://shop.test/static/img/red-mug.png", timeout=30)
    image.raise_for_status()
    steps.append(["image", str(len(image.content))])
    print(json.dumps(steps))
    """
)


def test_webarena_process_wide(sites, home, tmp_path, chrome):
    script = tmp_path / "child.py"
    script.write_text(CHILD)

    def browse(proxy: webfreeze.Proxy) -> Steps:
        webfreeze.webarena.activate(proxy)
        try:
            out = subprocess.run(
                [sys.executable, str(script), chrome], capture_output=True, text=True, check=False, timeout=300
            )
        finally:
            webfreeze.webarena.deactivate()
        assert out.returncode == 0, out.stderr
        return [tuple(s) for s in json.loads(out.stdout)]  # type: ignore[misc]

    rec, rep, report = record_then_replay(sites, home, tmp_path, "webarena/child", browse)
    assert rec[-1][0] == "image"
    assert int(rec[-1][1]) > 100
    assert_same_browse(rec[:-1], rep[:-1], report, 3)
    assert rep[-1] == rec[-1]
    assert "WEBFREEZE_PROXY" not in os.environ  # deactivate() restored the environment
