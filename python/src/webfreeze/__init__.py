"""webfreeze from Python: record the live web into snapshots and replay it, in the harnesses you already run.

Two lines turn it on::

    import webfreeze
    with webfreeze.use_snapshot("my-task", record_mode="once") as proxy:
        browser = playwright.chromium.launch(args=proxy.chromium_args())

The package is a thin wrapper over the ``webfreeze`` binary the wheel installs: :class:`Proxy` runs it as a
child process (one store writer per process, so worker processes each run their own), and the adapters
(``webfreeze.playwright``, ``.browsergym``, ``.selenium``, ``.browser_use``, ``.webarena``) tell each
harness how to use it.
"""

from __future__ import annotations

from ._binary import find_webfreeze_bin
from ._errors import BinaryNotFound, SnapshotNotFound, StartupTimeout, StoreBusy, WebfreezeError
from ._proxy import Proxy, Runner
from ._snapshot import RECORD_MODES, use_snapshot

__all__ = [
    "RECORD_MODES",
    "BinaryNotFound",
    "Proxy",
    "Runner",
    "SnapshotNotFound",
    "StartupTimeout",
    "StoreBusy",
    "WebfreezeError",
    "find_webfreeze_bin",
    "use_snapshot",
]
