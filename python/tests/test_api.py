"""The Python API over the real binary: record, replay sealed, record modes, env(), and errors."""

from __future__ import annotations

import json
import ssl
import urllib.request
from pathlib import Path

import pytest

import webfreeze
from webfreeze._proxy import _flag_args


def fetch(proxy: webfreeze.Proxy, url: str) -> tuple[int, str]:
    """GET url through the proxy as a Python harness would, trusting the CA bundle env() names."""
    env = proxy.env()
    ctx = ssl.create_default_context(cafile=env["SSL_CERT_FILE"])
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({"http": env["HTTP_PROXY"], "https": env["HTTPS_PROXY"]}),
        urllib.request.HTTPSHandler(context=ctx),
    )
    try:
        with opener.open(url, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


PAGES = ["https://shop.test/", "https://shop.test/product/red-mug", "https://news.test/"]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"upstream_ca": "ca.pem"}, ["--upstream-ca", "ca.pem"]),
        ({"resolve": ["a:443:1.2.3.4", "b:443:1.2.3.4"]}, ["--resolve", "a:443:1.2.3.4", "--resolve", "b:443:1.2.3.4"]),
        ({"no_inject_shim": True}, ["--no-inject-shim"]),
        ({"no_inject_shim": False, "rules": None}, []),
        ({"report": Path("r.json")}, ["--report", "r.json"]),
        ({"fuzzy_min_score": 0.5}, ["--fuzzy-min-score", "0.5"]),
    ],
)
def test_options_become_the_cli_flags(options, expected):
    assert _flag_args(options) == expected


def test_record_then_replay_sealed_with_the_sites_stopped(sites, home, tmp_path):
    recorded = {}
    # Without the determinism shim (record and replay inject it into HTML by default) the bytes are the
    # origin's, as the snapshot stores them.
    with webfreeze.Proxy("record", "api/browse", home=home, no_inject_shim=True, **sites.proxy_options) as proxy:
        assert proxy.address.startswith("127.0.0.1:")
        for url in PAGES:
            recorded[url] = fetch(proxy, url)
            assert recorded[url][0] == 200, recorded[url]
    sites.stop()
    report_file = tmp_path / "report.json"
    with webfreeze.Proxy("replay", "api/browse", home=home, report=report_file, no_inject_shim=True) as proxy:
        for url in PAGES:
            assert fetch(proxy, url) == recorded[url], url
        live = proxy.report()
        assert live["requests"] == len(PAGES) and live["missed"] == 0, live
        status, body = fetch(proxy, "https://shop.test/never-recorded")
        assert status == 404, body
        proxy.new_episode()
    final = json.loads(report_file.read_text())
    assert final["missed"] == 1
    assert final["misses"][0]["url"] == "https://shop.test/never-recorded"


def test_record_modes(sites, home):
    with pytest.raises(webfreeze.SnapshotNotFound, match="api/modes"):
        webfreeze.use_snapshot("api/modes", "none", home=home)
    first = webfreeze.use_snapshot("api/modes", "once", home=home, **sites.proxy_options)
    assert first.mode == "record"
    with first as proxy:
        assert fetch(proxy, PAGES[0])[0] == 200
    again = webfreeze.use_snapshot("api/modes", "once", home=home, **sites.proxy_options)
    assert again.mode == "replay"
    with webfreeze.use_snapshot("api/modes", "new_episodes", home=home, **sites.proxy_options) as proxy:
        assert proxy.mode == "replay"
        assert fetch(proxy, PAGES[1])[0] == 200  # a miss, recorded into the overlay
        assert proxy.report()["missed"] == 1
    overlays = [s["name"] for s in json.loads(proxy.runner.run("snapshots", "list", "--json"))]
    assert any(n.startswith("api/modes/misses/") for n in overlays), overlays
    with webfreeze.use_snapshot("api/modes", "all", home=home, **sites.proxy_options) as proxy:
        assert proxy.mode == "record"
        assert fetch(proxy, PAGES[2])[0] == 200
    with webfreeze.use_snapshot("api/modes", "none", home=home) as proxy:
        assert fetch(proxy, PAGES[2])[0] == 200
        assert fetch(proxy, PAGES[0])[0] == 404  # re-recorded: the first recording is gone


def test_env_keeps_loopback_and_the_model_api_off_the_proxy(home, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://models.internal:8000/v1")
    with webfreeze.Proxy("live", home=home, no_proxy=["https://judge.example/v1"]) as proxy:
        env = proxy.env()
        assert env["HTTPS_PROXY"] == proxy.url == env["https_proxy"]
        no_proxy = env["NO_PROXY"].split(",")
        for host in ("localhost", "127.0.0.1", "::1", "models.internal", "judge.example"):
            assert host in no_proxy, (host, no_proxy)
        bundle = Path(env["SSL_CERT_FILE"]).read_text()
        ca = Path(proxy.ca_certificate).read_text()
        assert bundle.endswith(ca)
        assert bundle.count("BEGIN CERTIFICATE") > 10
        assert "PRIVATE KEY" not in bundle
        args = proxy.chromium_args()
        assert f"--proxy-server={proxy.url}" in args
        assert "--proxy-bypass-list=<-loopback>" in args
        assert f"--ignore-certificate-errors-spki-list={proxy.ca_spki}" in args
        assert "--disable-quic" in args
        assert any(a.startswith("--disable-features=") and "HttpsUpgrades" in a for a in args)
        assert not any(a.startswith("--disable-features") for a in proxy.chromium_args(features=False))
        key = Path(proxy.ca_certificate).parent / "ca.key"
        assert oct(key.stat().st_mode & 0o777) == "0o600"


def test_bad_options_raise_with_the_binarys_message(home):
    with pytest.raises(webfreeze.WebfreezeError) as e:
        webfreeze.Proxy("replay", "x", home=home, fuzzy_min_score="not-a-number").start()
    assert e.value.returncode == 2
    assert "fuzzy-min-score" in str(e.value)
    with pytest.raises(webfreeze.WebfreezeError, match="not a loopback address"):
        webfreeze.Proxy("live", home=home, listen="0.0.0.0:0").start()


def test_missing_snapshot_in_replay(home, sites):
    with pytest.raises(webfreeze.SnapshotNotFound, match="no store here"):
        webfreeze.Proxy("replay", "nothing-here", home=home).start()
    with webfreeze.Proxy("record", "something", home=home, **sites.proxy_options):
        pass
    with pytest.raises(webfreeze.SnapshotNotFound, match='no snapshot named "nothing-here"'):
        webfreeze.Proxy("replay", "nothing-here", home=home).start()


def test_a_binary_that_is_not_there(monkeypatch, tmp_path):
    monkeypatch.setenv("WEBFREEZE_BIN", str(tmp_path / "missing"))
    with pytest.raises(webfreeze.BinaryNotFound, match="WEBFREEZE_BIN"):
        webfreeze.Proxy("live")


def test_a_busy_store(home, sites):
    with webfreeze.Proxy("record", "busy/one", home=home, **sites.proxy_options):
        with pytest.raises(webfreeze.StoreBusy, match="open for writing by another process"):
            webfreeze.Proxy("record", "busy/two", home=home).start()


def test_a_failure_inside_the_block_still_seals_the_recording(home, sites):
    with pytest.raises(KeyError), webfreeze.Proxy("record", "sealed", home=home, **sites.proxy_options) as p:
        assert fetch(p, PAGES[0])[0] == 200
        raise KeyError("the harness failed")
    show = json.loads(p.runner.run("snapshots", "show", "sealed", "--json", "--limit", "0"))
    assert show["manifest"]["state"] == "complete", show


def test_pytest_plugin_records_once_then_replays(pytester, home, sites):
    pytester.makepyfile(
        f"""
        import ssl, urllib.request, pytest

        @pytest.mark.webfreeze("plugin/shop", upstream_ca={sites.ca_file!r}, resolve={sites.proxy_options["resolve"]!r})
        def test_shop(webfreeze_proxy):
            env = webfreeze_proxy.env()
            ctx = ssl.create_default_context(cafile=env["SSL_CERT_FILE"])
            opener = urllib.request.build_opener(
                urllib.request.ProxyHandler({{"https": env["HTTPS_PROXY"]}}),
                urllib.request.HTTPSHandler(context=ctx))
            assert b"Demo Shop" in opener.open("https://shop.test/", timeout=30).read()
        """
    )
    pytester.runpytest("--webfreeze-home", home).assert_outcomes(errors=1)  # none: nothing recorded yet
    pytester.runpytest("--webfreeze-home", home, "--webfreeze-record-mode", "once").assert_outcomes(passed=1)
    sites.stop()
    pytester.runpytest("--webfreeze-home", home).assert_outcomes(passed=1)
