"""`webfreeze snapshots explore` on a recording the Playwright adapter made: the recorded page is revisited
live and the links from it recorded into ``NAME/explore``; replayed sealed, a page the recording never
opened is served from that layer (reported as such) and no document misses."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import webfreeze
import webfreeze.playwright

PRODUCT = "a[href^='/product/']"


def browse_home_then(proxy: webfreeze.Proxy, chrome: str, product: str | None) -> tuple[str, str]:
    """Open the shop's home page and, when given, click the link to ``product``; the page's URL and text."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = webfreeze.playwright.launch(p.chromium, proxy, executable_path=chrome)
        page = browser.new_page()
        page.goto("https://shop.test/")
        if product is not None:
            page.click(f"a[href='{product}']")
            page.wait_for_url(f"**{product}")
        out = (page.url, page.inner_text("body"))
        browser.close()
    return out


def test_snapshots_explore_on_a_playwright_recording(sites, home, tmp_path: Path, chrome):
    name = "pw/explore"
    with webfreeze.use_snapshot(name, "once", home=home, **sites.proxy_options) as proxy:
        assert proxy.mode == "record"
        url, _ = browse_home_then(proxy, chrome, None)
    assert url == "https://shop.test/"
    binary = webfreeze.find_webfreeze_bin()
    env = {**os.environ, "WEBFREEZE_HOME": home}
    reach = ["--upstream-ca", sites.ca_file]
    for r in sites.proxy_options["resolve"]:
        reach += ["--resolve", r]
    run = subprocess.run(
        [binary, "snapshots", "explore", name, "--settle-ms", "200", *reach],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert "explored" in run.stderr, run.stderr

    def urls(snapshot: str) -> list[str]:
        show = subprocess.run(
            [binary, "snapshots", "show", snapshot, "--json", "--limit", "10000"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return [x["request"]["url"] for x in json.loads(show.stdout)["exchanges"]]

    recorded = urls(name)
    explored = [u for u in urls(f"{name}/explore") if "/product/" in u]
    assert explored, "the exploration layer holds no product page"
    assert not any("/product/" in u for u in recorded), recorded
    product = "/" + explored[0].split("/", 3)[3]
    sites.stop()
    report_file = tmp_path / "report.json"
    with webfreeze.use_snapshot(name, "none", home=home, report=report_file) as proxy:
        url, text = browse_home_then(proxy, chrome, product)
    assert url == f"https://shop.test{product}" and text.strip(), (url, text)
    report = json.loads(report_file.read_text())
    assert report["explore"] >= 1, report
    documents = [m for m in report.get("misses", []) if m.get("dest") == "document"]
    assert not documents, documents
