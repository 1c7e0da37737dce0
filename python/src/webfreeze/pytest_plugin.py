"""The pytest plugin (registered by the wheel): ``@pytest.mark.webfreeze`` and the ``webfreeze_proxy``
fixture, with pytest-recording's options.

::

    @pytest.mark.webfreeze("checkout-flow")      # snapshot name; default: the test's node id
    def test_agent(webfreeze_proxy):
        browser = playwright.chromium.launch(args=webfreeze_proxy.chromium_args())

``pytest --webfreeze-record-mode=once`` records missing snapshots (default ``none``: replay sealed, a missing
snapshot fails the test); ``--webfreeze-home DIR`` chooses the store (default ``$WEBFREEZE_HOME``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from ._proxy import Proxy
from ._snapshot import RECORD_MODES, RecordMode, use_snapshot


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("webfreeze", "record and replay the web with webfreeze")
    group.addoption(
        "--webfreeze-record-mode",
        choices=RECORD_MODES,
        default=None,
        help="none (default): replay sealed; once: record missing snapshots; new_episodes: "
        "record misses into an overlay; all: re-record",
    )
    group.addoption("--webfreeze-home", default=None, help="webfreeze home (CA and store) [default: $WEBFREEZE_HOME]")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "webfreeze(name=None, record_mode=None, **options): run the test's web traffic through "
        "a webfreeze snapshot (the webfreeze_proxy fixture)",
    )


def _default_name(nodeid: str) -> str:
    return "pytest/" + re.sub(r"[^A-Za-z0-9_.\-/]+", "_", nodeid.replace("::", "/"))


@pytest.fixture
def webfreeze_proxy(request: pytest.FixtureRequest) -> Iterator[Proxy]:
    """A started :class:`webfreeze.Proxy` for the test's snapshot, stopped (and sealed) after it."""
    marker = request.node.get_closest_marker("webfreeze")
    args: tuple[Any, ...] = marker.args if marker else ()
    kwargs: dict[str, Any] = dict(marker.kwargs) if marker else {}
    name = kwargs.pop("name", None) or (args[0] if args else _default_name(request.node.nodeid))
    mode: RecordMode = request.config.getoption("--webfreeze-record-mode") or kwargs.pop("record_mode", None) or "none"
    kwargs.pop("record_mode", None)
    home = request.config.getoption("--webfreeze-home")
    if home is not None:
        kwargs.setdefault("home", home)
    with use_snapshot(name, mode, **kwargs) as proxy:
        yield proxy
