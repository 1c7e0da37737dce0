"""AgentLab (and BrowserGym's experiment loop): an ``EnvArgs`` that carries webfreeze's settings.

AgentLab runs each experiment from a pickled ``ExpArgs`` in a Ray (or joblib) worker, where environment
variables set by the parent do not reach; the settings travel inside the ``EnvArgs`` instead::

    import webfreeze.agentlab
    from webfreeze.browsergym import Settings

    settings = Settings(record_mode="once", snapshot_prefix="study-2026-11")
    benchmark.env_args_list = webfreeze.agentlab.with_webfreeze(benchmark.env_args_list, settings)

``make_env`` builds BrowserGym's environment exactly as ``EnvArgs`` does (a task's ``storage_state`` goes
into ``pw_context_kwargs``, which is why webfreeze stays out of them) and wraps it in
:class:`webfreeze.browsergym.WebfreezeEnv`. Needs ``browsergym-experiments`` (AgentLab's ``bgym.EnvArgs``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from browsergym.experiments.loop import EnvArgs

from .browsergym import Settings, WebfreezeEnv


@dataclasses.dataclass
class WebfreezeEnvArgs(EnvArgs):  # type: ignore[misc]
    """BrowserGym's ``EnvArgs`` plus the webfreeze :class:`~webfreeze.browsergym.Settings`."""

    webfreeze: Settings = dataclasses.field(default_factory=Settings)

    def make_env(
        self,
        action_mapping: Any,
        exp_dir: Any,
        exp_task_kwargs: dict[str, Any] | None = None,
        use_raw_page_output: bool = False,
    ) -> WebfreezeEnv:
        env = super().make_env(action_mapping, exp_dir, exp_task_kwargs or {}, use_raw_page_output)
        return self.webfreeze.wrap(env)


def with_webfreeze(env_args_list: Iterable[Any], settings: Settings) -> list[WebfreezeEnvArgs]:
    """Each ``EnvArgs`` (a benchmark's ``env_args_list``) as a :class:`WebfreezeEnvArgs` with ``settings``."""
    out = []
    for e in env_args_list:
        fields = {f.name: getattr(e, f.name) for f in dataclasses.fields(EnvArgs)}
        out.append(WebfreezeEnvArgs(**fields, webfreeze=settings))
    return out
