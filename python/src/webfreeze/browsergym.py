"""BrowserGym: any registered task through webfreeze, one snapshot per task and seed.

::

    import gymnasium as gym
    import webfreeze.browsergym

    settings = webfreeze.browsergym.Settings(record_mode="once", snapshot_prefix="bgym-2026-11")
    env = settings.wrap(gym.make("browsergym/openended", task_kwargs={"start_url": "https://example.com"}))
    obs, info = env.reset(seed=0)        # starts a proxy on snapshot bgym-2026-11/openended/seed-0

What it takes care of: BrowserGym passes Chromium's ``args`` itself, so the proxy goes into
``pw_chromium_kwargs`` (Playwright's ``proxy``, which routes loopback too) and the CA is trusted through an
NSS database in the browser's HOME instead of a flag or ``ignore_https_errors`` (AgentLab replaces
``pw_context_kwargs`` wholesale); the chat window's second browser, which ignores those kwargs, is given a
Playwright browsers directory pointing at the local Chromium. :class:`Settings` is a plain picklable
dataclass, so it reaches Ray workers (AgentLab) where environment variables do not.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._proxy import Proxy
from ._snapshot import RecordMode, use_snapshot


def find_chrome() -> str:
    """``$WEBFREEZE_CHROME``, else the first Chromium on PATH."""
    env = os.environ.get("WEBFREEZE_CHROME")
    if env:
        return env
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    raise FileNotFoundError(
        "no Chromium found: install it (Debian: `apt-get install -y chromium`) or set WEBFREEZE_CHROME"
    )


def playwright_browsers_path(chrome: str, root: str | None = None) -> str:
    """A ``PLAYWRIGHT_BROWSERS_PATH`` directory whose Chromium (for the installed Playwright's revision) is
    ``chrome``: for browsers a harness launches without ``executable_path`` (BrowserGym's chat window)."""
    import playwright

    browsers = Path(playwright.__file__).parent / "driver" / "package" / "browsers.json"
    revisions = {b["name"]: b["revision"] for b in json.loads(browsers.read_text())["browsers"]}
    base = Path(root or Path(tempfile.gettempdir()) / f"webfreeze-pw-browsers-{os.getuid()}")
    links = []
    if "chromium" in revisions:
        links.append(base / f"chromium-{revisions['chromium']}" / "chrome-linux" / "chrome")
    if "chromium-headless-shell" in revisions:
        rev = revisions["chromium-headless-shell"]
        links.append(base / f"chromium_headless_shell-{rev}" / "chrome-linux" / "headless_shell")
    for link in links:
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(chrome)
        (link.parent.parent / "INSTALLATION_COMPLETE").touch()
    return str(base)


@dataclass
class Settings:
    """How BrowserGym environments use webfreeze. Picklable: give it to AgentLab's workers.

    ``record_mode`` as :func:`webfreeze.use_snapshot`; snapshots are named
    ``{snapshot_prefix}/{task}/seed-{seed}``; ``proxy_options`` are the CLI's options (``upstream_ca``,
    ``resolve``...).
    """

    record_mode: RecordMode = "none"
    snapshot_prefix: str = "browsergym"
    home: str | None = None
    chrome: str | None = None
    proxy_options: dict[str, Any] = field(default_factory=dict)

    def wrap(self, env: Any) -> WebfreezeEnv:
        """``env`` (from ``gym.make("browsergym/...")``) running through webfreeze."""
        return WebfreezeEnv(env, self)


class WebfreezeEnv:
    """A BrowserGym environment whose every ``reset(seed=...)`` runs through a webfreeze proxy for that
    task and seed (the previous one is stopped and its recording sealed first); ``close()`` stops it."""

    def __init__(self, env: Any, settings: Settings) -> None:
        self.env = env
        self.settings = settings
        self.proxy: Proxy | None = None
        self.chrome = settings.chrome or find_chrome()
        # Before BrowserGym starts its Playwright driver: the chat window's browser is found through it.
        os.environ.setdefault("PLAYWRIGHT_BROWSERS_PATH", playwright_browsers_path(self.chrome))

    def task_name(self) -> str:
        """The task's name in snapshot names: the gym id without ``browsergym/``."""
        spec = getattr(self.env, "spec", None)
        if spec is not None:
            return str(spec.id).removeprefix("browsergym/")
        entry = self.env.unwrapped.task_entrypoint
        get_id = getattr(entry, "get_task_id", None)
        return str(get_id() if callable(get_id) else getattr(entry, "__name__", "task"))

    def snapshot_name(self, seed: int | None) -> str:
        """``{prefix}/{task}/seed-{seed}``."""
        return f"{self.settings.snapshot_prefix}/{self.task_name()}/seed-{seed}"

    def reset(self, seed: int | None = None, **kwargs: Any) -> Any:
        """Seal the previous episode's proxy, start this one's, then BrowserGym's own ``reset``."""
        self._stop()
        s = self.settings
        proxy = use_snapshot(self.snapshot_name(seed), s.record_mode, home=s.home, **s.proxy_options)
        proxy.start()
        self.proxy = proxy
        bg = self.env.unwrapped
        kwargs_pw = dict(bg.pw_chromium_kwargs)
        kwargs_pw.update(
            proxy=proxy.playwright_proxy(),
            executable_path=self.chrome,
            env={**os.environ, "HOME": proxy.nss_home()},
        )
        bg.pw_chromium_kwargs = kwargs_pw
        return self.env.reset(seed=seed, **kwargs)

    def step(self, action: str) -> Any:
        """BrowserGym's ``step``."""
        return self.env.step(action)

    def close(self) -> None:
        """Close the environment, then stop the proxy (sealing a recording)."""
        try:
            self.env.close()
        finally:
            self._stop()

    def _stop(self) -> None:
        if self.proxy is not None:
            bg = self.env.unwrapped
            # Close the old browser first, so the proxy does not wait on its kept-alive connections.
            for part in ("context", "chat", "browser"):
                obj = getattr(bg, part, None)
                if obj is not None:
                    with contextlib.suppress(Exception):
                        obj.close()
            proxy, self.proxy = self.proxy, None
            proxy.stop()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def __enter__(self) -> WebfreezeEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
