"""Playwright (sync and async): a browser that records or replays through a :class:`~webfreeze.Proxy`.

::

    with webfreeze.use_snapshot("shop-task", record_mode="once") as proxy, sync_playwright() as p:
        browser = webfreeze.playwright.launch(p.chromium, proxy, executable_path="/usr/bin/chromium")

    # async: browser = await webfreeze.playwright.launch(p.chromium, proxy)

The browser gets the proxy through Chromium's own flags, which cover every context and page (loopback
included) and pin webfreeze's CA, so no context option (``ignore_https_errors``) is needed and a
``storage_state`` context keeps working.
"""

from __future__ import annotations

from typing import Any

from ._proxy import Proxy


def launch_kwargs(proxy: Proxy, **kwargs: Any) -> dict[str, Any]:
    """``kwargs`` for ``BrowserType.launch`` / ``launch_persistent_context`` with webfreeze's flags added
    to any ``args`` given (Playwright sets ``--disable-features`` itself, HTTPS-Upgrades included)."""
    out = dict(kwargs)
    out["args"] = [*kwargs.get("args", []), *proxy.chromium_args(features=False)]
    return out


def launch(browser_type: Any, proxy: Proxy, **kwargs: Any) -> Any:
    """``browser_type.launch(...)`` through ``proxy`` (a ``Browser``, or an awaitable of one with the
    async API)."""
    return browser_type.launch(**launch_kwargs(proxy, **kwargs))


def launch_persistent_context(browser_type: Any, proxy: Proxy, user_data_dir: str, **kwargs: Any) -> Any:
    """``browser_type.launch_persistent_context(...)`` through ``proxy``."""
    return browser_type.launch_persistent_context(user_data_dir, **launch_kwargs(proxy, **kwargs))
