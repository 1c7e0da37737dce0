"""Loaded at interpreter start-up in subprocesses of a process that called ``webfreeze.webarena.activate``
(its directory is on their PYTHONPATH): wraps Playwright's Chromium launch with webfreeze's flags. Any
other ``sitecustomize`` on the path after this one still runs."""

import importlib.util
import os
import sys

if os.environ.get("WEBFREEZE_CHROMIUM_ARGS"):
    try:
        from webfreeze.webarena import patch_playwright

        patch_playwright()
    except ImportError:
        pass

_here = os.path.dirname(os.path.abspath(__file__))
for _entry in sys.path:
    if os.path.abspath(_entry or ".") == _here:
        continue
    _candidate = os.path.join(_entry or ".", "sitecustomize.py")
    if os.path.isfile(_candidate):
        _s = importlib.util.spec_from_file_location("_webfreeze_chained_sitecustomize", _candidate)
        if _s is not None and _s.loader is not None:
            _s.loader.exec_module(importlib.util.module_from_spec(_s))
        break
