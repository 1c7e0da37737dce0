"""Figures for docs/BENCHMARKS.md (Python package): time from Proxy() to listening against the bare binary
started by hand, and the per-step cost of a Playwright browse through the adapter against the same browse
with the CLI's flags written by hand, measured in one run on the demo sites. Prints a table.

    python python/benchmarks/bench_python.py [--rounds 10]   (with the wheel installed)
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import webfreeze
import webfreeze.playwright


def bare_start(binary: str, home: str) -> float:
    t0 = time.perf_counter()
    p = subprocess.Popen(
        [binary, "proxy", "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "WEBFREEZE_HOME": home},
    )
    assert p.stdout is not None
    line = p.stdout.readline()
    dt = time.perf_counter() - t0
    assert line.startswith("listening on "), line
    p.send_signal(signal.SIGINT)
    p.wait()
    return dt


def wrapped_start(home: str) -> float:
    t0 = time.perf_counter()
    proxy = webfreeze.Proxy("live", home=home).start()
    dt = time.perf_counter() - t0
    proxy.stop()
    return dt


def browse(page: object, steps: int) -> list[float]:
    times = []
    for i in range(steps):
        t0 = time.perf_counter()
        page.goto("https://shop.test/" if i % 2 == 0 else "https://shop.test/product/red-mug")  # type: ignore[attr-defined]
        page.inner_text("body")  # type: ignore[attr-defined]
        times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--steps", type=int, default=20)
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    binary = webfreeze.find_webfreeze_bin()
    chrome = os.environ.get("WEBFREEZE_CHROME") or shutil.which("chromium") or "/usr/bin/chromium"
    with tempfile.TemporaryDirectory() as tmp:
        home = str(Path(tmp) / "home")
        os.makedirs(home)
        wrapped_start(home)  # CA created once, outside the measurement
        bare = [bare_start(binary, home) for _ in range(a.rounds)]
        wrapped = [wrapped_start(home) for _ in range(a.rounds)]
        sites = subprocess.Popen(
            [binary, "demo", "--serve", "--dir", str(Path(tmp) / "demo")],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert sites.stdout is not None
        addr = sites.stdout.readline().split()[-1]
        ca = str(Path(tmp) / "demo" / "webarena" / "sites-ca.pem")
        opts = {"upstream_ca": ca, "resolve": [f"{h}:443:{addr}" for h in ("shop.test", "news.test")]}
        try:
            with webfreeze.Proxy("live", home=home, **opts) as proxy, sync_playwright() as p:
                by_hand = p.chromium.launch(
                    executable_path=chrome,
                    args=[
                        f"--proxy-server=http://{proxy.address}",
                        "--proxy-bypass-list=<-loopback>",
                        f"--ignore-certificate-errors-spki-list={proxy.ca_spki}",
                        "--disable-quic",
                    ],
                )
                adapter = webfreeze.playwright.launch(p.chromium, proxy, executable_path=chrome)
                hand_page, adapter_page = by_hand.new_page(), adapter.new_page()
                browse(hand_page, 4)
                browse(adapter_page, 4)  # warm both
                hand, adapted = [], []
                for _ in range(3):  # interleaved, so drift on a shared machine hits both
                    hand += browse(hand_page, a.steps)
                    adapted += browse(adapter_page, a.steps)
                by_hand.close()
                adapter.close()
        finally:
            sites.send_signal(signal.SIGINT)
            sites.wait()
    wheel = os.environ.get("WEBFREEZE_WHEEL")
    ms = lambda xs: statistics.median(xs) * 1000  # noqa: E731
    print("| figure | webfreeze (Python) | by hand (CLI) | ratio |")
    print("|---|---|---|---|")
    print(
        f"| start to `listening on` (median of {a.rounds}) | {ms(wrapped):.1f} ms | {ms(bare):.1f} ms | "
        f"{ms(wrapped) / ms(bare):.2f} |"
    )
    print(
        f"| Playwright step, goto + text (median of {len(hand)}) | {ms(adapted):.1f} ms | {ms(hand):.1f} ms | "
        f"{ms(adapted) / ms(hand):.2f} |"
    )
    if wheel:
        print(f"| wheel size | {os.path.getsize(wheel) / 2**20:.1f} MiB | | |")


if __name__ == "__main__":
    main()
