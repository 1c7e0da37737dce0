"""WebArena / VisualWebArena harnesses, process-wide: no hook in ``ScriptBrowserEnv`` is needed.

::

    with webfreeze.use_snapshot("wa/task-27", record_mode="once") as proxy:
        webfreeze.webarena.activate(proxy)
        env = ScriptBrowserEnv(headless=True, ...)     # WebArena's own code, unchanged
        ...

:func:`activate` does three things, for this process and every Python subprocess it starts (WebArena's
login helper ``auto_login.py`` runs as one): it sets :meth:`Proxy.env` in ``os.environ`` (so ``requests``,
as VisualWebArena fetches images, goes through the proxy and trusts its CA), puts an autoload directory on
``PYTHONPATH`` whose ``sitecustomize`` applies the next point in subprocesses, and wraps Playwright's
Chromium ``launch`` and ``launch_persistent_context`` (sync and async) to add webfreeze's flags.
:func:`deactivate` undoes it.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

from ._proxy import Proxy

_AUTOLOAD = str(Path(__file__).parent / "_autoload")
_SAVED: dict[str, str | None] = {}
_PATCHED: list[tuple[Any, str, Any]] = []


#: Environment variable carrying the Chromium flags (a JSON list) to subprocesses.
ARGS_ENV = "WEBFREEZE_CHROMIUM_ARGS"


def chromium_args_from_env() -> list[str]:
    """Webfreeze's Chromium flags as :func:`activate` put them in ``$WEBFREEZE_CHROMIUM_ARGS`` (inherited by
    subprocesses); empty when it is not set."""
    raw = os.environ.get(ARGS_ENV)
    if not raw:
        return []
    args = json.loads(raw)
    return [str(a) for a in args] if isinstance(args, list) else []


def activate(proxy: Proxy) -> None:
    """Route this process, its Python subprocesses and their Playwright Chromiums through ``proxy``."""
    variables = proxy.env()
    # Playwright sets its own --disable-features (HTTPS-Upgrades included); Chromium keeps only one.
    variables[ARGS_ENV] = json.dumps(proxy.chromium_args(features=False))
    path = os.environ.get("PYTHONPATH", "")
    if _AUTOLOAD not in path.split(os.pathsep):
        variables["PYTHONPATH"] = os.pathsep.join(filter(None, [_AUTOLOAD, path]))
    for k, v in variables.items():
        _SAVED.setdefault(k, os.environ.get(k))
        os.environ[k] = v
    patch_playwright()


def deactivate() -> None:
    """Undo :func:`activate`: the environment as it was, Playwright unwrapped."""
    for k, v in _SAVED.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    _SAVED.clear()
    while _PATCHED:
        cls, name, original = _PATCHED.pop()
        setattr(cls, name, original)


def patch_playwright() -> bool:
    """Wrap Playwright's ``BrowserType.launch`` and ``launch_persistent_context`` (sync and async) so a
    Chromium gets the flags of :func:`chromium_args_from_env`. False when Playwright is not installed."""
    if _PATCHED:
        return True
    try:
        from playwright.async_api import BrowserType as AsyncBrowserType
        from playwright.sync_api import BrowserType as SyncBrowserType
    except ImportError:
        return False
    for cls in (SyncBrowserType, AsyncBrowserType):
        for name in ("launch", "launch_persistent_context"):
            original = getattr(cls, name)
            setattr(cls, name, _with_flags(original))
            _PATCHED.append((cls, name, original))
    return True


def _with_flags(original: Any) -> Any:
    @functools.wraps(original)
    def launch(self: Any, *args: Any, **kwargs: Any) -> Any:
        extra = chromium_args_from_env()
        if extra and getattr(self, "name", "chromium") == "chromium":
            kwargs["args"] = [*(kwargs.get("args") or []), *extra]
        return original(self, *args, **kwargs)

    return launch
