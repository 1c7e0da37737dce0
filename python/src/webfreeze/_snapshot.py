"""``use_snapshot``: record-or-replay with vcrpy's record modes."""

from __future__ import annotations

import os
import time
from typing import Any, Literal

from ._errors import SnapshotNotFound
from ._proxy import Proxy, Runner

RecordMode = Literal["none", "once", "new_episodes", "all"]
RECORD_MODES: tuple[str, ...] = ("none", "once", "new_episodes", "all")


def use_snapshot(
    name: str,
    record_mode: RecordMode = "none",
    *,
    home: str | os.PathLike[str] | None = None,
    store: str | os.PathLike[str] | None = None,
    binary: str | None = None,
    **options: Any,
) -> Proxy:
    """A :class:`Proxy` for snapshot ``name`` chosen by ``record_mode`` (vcrpy / pytest-recording semantics):

    - ``"none"``: replay sealed (no network); a missing snapshot raises :class:`SnapshotNotFound`.
    - ``"once"``: record if the snapshot is missing, else replay sealed.
    - ``"new_episodes"``: replay, and record what the snapshot lacks into an overlay ``NAME/misses/TIME-PID`` (merge
      it in with ``webfreeze snapshots``); record the whole snapshot if it is missing.
    - ``"all"``: re-record: the old snapshot is removed when the new recording starts.

    ``options`` are the CLI's options (``upstream_ca=``, ``resolve=``...); the ones only one mode takes
    are passed only to it (``on_miss``, ``rules``, ``report`` to replay; ``exclude``, ``include``,
    ``label`` to record).
    """
    if record_mode not in RECORD_MODES:
        raise ValueError(f"record_mode must be one of {', '.join(RECORD_MODES)}, not {record_mode!r}")
    runner = Runner(home=home, store=store, binary=binary)
    exists = runner.snapshot_exists(name)
    if record_mode == "none" and not exists:
        raise SnapshotNotFound(
            f"no snapshot named {name!r} to replay (record_mode='none'); record it first with "
            f"record_mode='once' or `webfreeze record --snapshot {name}`"
        )
    if record_mode == "all" and exists:
        runner.run("snapshots", "rm", name)
        exists = False
    replay_only = {"on_miss", "rules", "report", "fuzzy_min_score", "not_captured", "no_inject_shim", "miss_snapshot"}
    record_only = {"exclude", "include", "label", "time_zone"}
    if exists:
        opts = {k: v for k, v in options.items() if k not in record_only}
        if record_mode == "new_episodes":
            opts["on_miss"] = "record"
            # One overlay per session, so a second session does not collide with the first one's.
            opts.setdefault("miss_snapshot", f"{name}/misses/{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        return Proxy("replay", name, home=home, store=store, binary=runner.binary, **opts)
    opts = {k: v for k, v in options.items() if k not in replay_only}
    return Proxy("record", name, home=home, store=store, binary=runner.binary, **opts)
