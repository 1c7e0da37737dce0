"""browser-use: a ``BrowserProfile`` that records or replays through a :class:`~webfreeze.Proxy`::

with webfreeze.use_snapshot("bu-task", record_mode="once") as proxy:
    profile = webfreeze.browser_use.profile(proxy, executable_path="/usr/bin/chromium", headless=True)
    agent = Agent(task=..., llm=..., browser_profile=profile)
"""

from __future__ import annotations

from typing import Any

from ._proxy import Proxy


def profile_kwargs(proxy: Proxy, **kwargs: Any) -> dict[str, Any]:
    """``BrowserProfile`` keyword arguments: the proxy (loopback proxied too), the CA pin and QUIC off
    added to ``kwargs``; the default extensions off (they are downloaded on first use)."""
    ours = proxy.browser_use_profile_kwargs()
    out = dict(kwargs)
    out["proxy"] = ours["proxy"]
    out["args"] = [*kwargs.get("args", []), *ours["args"]]
    out.setdefault("enable_default_extensions", False)
    return out


def profile(proxy: Proxy, **kwargs: Any) -> Any:
    """A ``browser_use.BrowserProfile`` through ``proxy``."""
    from browser_use import BrowserProfile

    return BrowserProfile(**profile_kwargs(proxy, **kwargs))
