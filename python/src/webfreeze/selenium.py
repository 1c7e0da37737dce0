"""Selenium, as WebVoyager's ``run.py`` builds its driver::

    options = driver_config(args)                      # WebVoyager's own ChromeOptions
    with webfreeze.use_snapshot(f"wv/{task['id']}", record_mode="once") as proxy:
        driver = webfreeze.selenium.chrome(proxy, options)

Chromium gets the proxy and CA pin as flags; the driver is Debian's ``chromedriver`` (no Selenium Manager
download), and Selenium's own calls to it stay off the proxy whatever ``HTTPS_PROXY`` says.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from ._proxy import Proxy


def chrome_options(proxy: Proxy, options: Any = None) -> Any:
    """``options`` (a new ``ChromeOptions`` when None) with webfreeze's Chromium flags added."""
    return proxy.selenium_options(options)


def chrome(
    proxy: Proxy, options: Any = None, *, chromedriver: str | None = None, chrome_binary: str | None = None
) -> Any:
    """A ``webdriver.Chrome`` through ``proxy``. ``chromedriver`` defaults to the one on PATH (Debian:
    ``apt-get install -y chromium-driver``); ``chrome_binary`` to ``$WEBFREEZE_CHROME`` or the options'."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = chrome_options(proxy, options)
    binary = chrome_binary or os.environ.get("WEBFREEZE_CHROME")
    if binary:
        options.binary_location = binary
    driver_path = chromedriver or shutil.which("chromedriver")
    if driver_path is None:
        raise FileNotFoundError(
            "chromedriver not found on PATH: install it (Debian: `apt-get install -y "
            "chromium-driver`) or pass chromedriver=PATH"
        )
    # Selenium's HTTP client reads proxy variables; chromedriver is on loopback.
    no_proxy = os.environ.get("NO_PROXY", "")
    if "127.0.0.1" not in no_proxy.split(","):
        os.environ["NO_PROXY"] = ",".join(filter(None, [no_proxy, "localhost", "127.0.0.1", "::1"]))
    return webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
