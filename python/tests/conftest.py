"""Fixtures: the demo sites (served by the installed binary on loopback), a throwaway webfreeze home, and
the local Chromium. Nothing here reaches beyond 127.0.0.1."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import webfreeze

pytest_plugins = ["pytester"]

DEMO_HOSTS = ("shop.test", "news.test", "forum.test")


def _require(path: str | None, what: str, install: str) -> str:
    if path is None:
        raise RuntimeError(f"{what} not found: install it with `{install}`")
    return path


@pytest.fixture(scope="session")
def chrome() -> str:
    return os.environ.get("WEBFREEZE_CHROME") or _require(
        shutil.which("chromium"), "Chromium", "apt-get install -y chromium"
    )


@pytest.fixture(scope="session")
def chromedriver() -> str:
    return _require(shutil.which("chromedriver"), "chromedriver", "apt-get install -y chromium-driver")


@pytest.fixture
def home(tmp_path: Path) -> str:
    h = tmp_path / "webfreeze-home"
    h.mkdir()
    return str(h)


@dataclass
class DemoSites:
    """`webfreeze demo --serve`: shop.test, news.test and forum.test over TLS on one loopback port."""

    proc: subprocess.Popen[str]
    address: str
    ca_file: str

    @property
    def proxy_options(self) -> dict[str, Any]:
        """How a proxy reaches them: their CA and every demo host resolved to their port."""
        return {"upstream_ca": self.ca_file, "resolve": [f"{h}:443:{self.address}" for h in DEMO_HOSTS]}

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            self.proc.wait(timeout=30)


@pytest.fixture
def sites(tmp_path: Path) -> Iterator[DemoSites]:
    workdir = tmp_path / "demo"
    cmd = [webfreeze.find_webfreeze_bin(), "demo", "--serve", "--dir", str(workdir)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("listening on "), f"demo --serve printed {line!r}"
    s = DemoSites(proc, line.split()[-1], str(workdir / "webarena" / "sites-ca.pem"))
    try:
        yield s
    finally:
        s.stop()
