"""A BrowserGym task registered on the demo sites runs record -> replay through webfreeze with identical
observations (the accessibility-tree text) at every step."""

from __future__ import annotations

import dataclasses
import difflib
import pickle
from typing import Any

import pytest

import webfreeze.browsergym


@pytest.fixture(autouse=True, scope="module")
def _stop_browsergyms_playwright():
    """BrowserGym keeps one sync Playwright for the process (its event loop stays on this thread); stop it
    after these tests so the other harnesses' tests can start their own."""
    yield
    import browsergym.core

    if browsergym.core._PLAYWRIGHT is not None:
        browsergym.core._PLAYWRIGHT.stop()
        browsergym.core._set_global_playwright(None)


def _register() -> str:
    import playwright.sync_api
    from browsergym.core.registration import register_task
    from browsergym.core.task import AbstractBrowserTask

    class DemoShopTask(AbstractBrowserTask):
        @classmethod
        def get_task_id(cls) -> str:
            return "webfreeze-demo-shop"

        def setup(self, page: playwright.sync_api.Page) -> tuple[str, dict[str, Any]]:
            page.goto("https://shop.test/")
            return "Put the red mug in the cart, then read today's news.", {}

        def teardown(self) -> None:
            pass

        def validate(
            self, page: playwright.sync_api.Page, chat_messages: list[Any]
        ) -> tuple[float, bool, str, dict[str, Any]]:
            return (1.0 if page.url.endswith("/cart") else 0.0), False, "", {}

    import gymnasium as gym

    env_id = "browsergym/webfreeze-demo-shop"
    if env_id not in gym.registry:
        register_task("webfreeze-demo-shop", DemoShopTask)
    return env_id


def _bid(obs: dict[str, Any], role: str, name: str) -> str:
    for node in obs["axtree_object"]["nodes"]:
        if node.get("role", {}).get("value") == role and node.get("name", {}).get("value") == name:
            return str(node["browsergym_id"])
    raise AssertionError(f"no {role} named {name!r} in the observation")


def episode(env: Any) -> list[tuple[str, str]]:
    from browsergym.utils.obs import flatten_axtree_to_str

    seen: list[tuple[str, str]] = []
    obs, _ = env.reset(seed=7)
    seen.append((obs["url"], flatten_axtree_to_str(obs["axtree_object"])))
    actions = [
        lambda o: 'goto("https://shop.test/product/red-mug")',
        lambda o: f'click("{_bid(o, "button", "Add to cart")}")',
        lambda o: 'goto("https://news.test/")',
        lambda o: "go_back()",
    ]
    for act in actions:
        obs, _, _, _, _info = env.step(act(obs))
        assert not obs["last_action_error"], obs["last_action_error"]
        seen.append((obs["url"], flatten_axtree_to_str(obs["axtree_object"])))
    env.close()
    return seen


def test_browsergym_task_records_and_replays_with_identical_observations(sites, home, chrome):
    import gymnasium as gym

    env_id = _register()
    settings = webfreeze.browsergym.Settings(
        record_mode="once", snapshot_prefix="bgym", home=home, chrome=chrome, proxy_options=sites.proxy_options
    )
    # Settings travel to AgentLab's Ray workers by pickling.
    settings = pickle.loads(pickle.dumps(settings))
    recorded = episode(settings.wrap(gym.make(env_id, headless=True)))
    assert [u for u, _ in recorded] == [
        "https://shop.test/",
        "https://shop.test/product/red-mug",
        "https://shop.test/cart",
        "https://news.test/",
        "https://shop.test/cart",
    ]
    assert "Red Mug" in recorded[2][1]
    sites.stop()
    replay = webfreeze.browsergym.Settings(record_mode="none", snapshot_prefix="bgym", home=home, chrome=chrome)
    env = replay.wrap(gym.make(env_id, headless=True))
    assert env.snapshot_name(7) == "bgym/webfreeze-demo-shop/seed-7"
    replayed = episode(env)
    for i, (r, p) in enumerate(zip(recorded, replayed)):
        if p != r:
            diff = "\n".join(difflib.unified_diff(r[1].splitlines(), p[1].splitlines(), lineterm=""))
            raise AssertionError(f"step {i} differs ({r[0]} vs {p[0]}):\n{diff}")


def test_browsergym_replay_of_an_unrecorded_seed_is_a_clear_error(home, chrome):
    import gymnasium as gym

    env_id = _register()
    env = webfreeze.browsergym.Settings(record_mode="none", snapshot_prefix="bgym", home=home, chrome=chrome).wrap(
        gym.make(env_id, headless=True)
    )
    with pytest.raises(webfreeze.SnapshotNotFound, match="bgym/webfreeze-demo-shop/seed-3"):
        env.reset(seed=3)


def test_agentlab_env_args_carry_the_settings_to_a_worker(sites, home, chrome, tmp_path):
    """AgentLab's loop pickles EnvArgs into a worker and calls make_env there; a task with a storage state
    gets pw_context_kwargs replaced wholesale (which is why webfreeze is not in them)."""
    from browsergym.core.action.highlevel import HighLevelActionSet
    from browsergym.experiments.loop import EnvArgs

    import webfreeze.agentlab

    _register()
    plain = EnvArgs(
        task_name="webfreeze-demo-shop",
        task_seed=7,
        max_steps=10,
        headless=True,
        storage_state={"cookies": [], "origins": []},
    )
    settings = webfreeze.browsergym.Settings(
        record_mode="once", snapshot_prefix="agentlab", home=home, chrome=chrome, proxy_options=sites.proxy_options
    )
    (args,) = webfreeze.agentlab.with_webfreeze([plain], settings)
    args = pickle.loads(pickle.dumps(args))  # what reaches a Ray worker
    assert args.to_dict()["webfreeze"]["snapshot_prefix"] == "agentlab"
    mapping = HighLevelActionSet(subsets=["chat", "bid", "nav"]).to_python_code
    recorded = episode(args.make_env(action_mapping=mapping, exp_dir=tmp_path))
    sites.stop()
    args.webfreeze = dataclasses.replace(args.webfreeze, record_mode="none", proxy_options={})
    replayed = episode(pickle.loads(pickle.dumps(args)).make_env(action_mapping=mapping, exp_dir=tmp_path))
    assert [u for u, _ in recorded] == [u for u, _ in replayed]
    assert recorded == replayed
