"""WebArena-Verified's own evaluator (the `webarena-verified` package from PyPI) on generated cases.

Usage:
  webarena_verified.py gen LIB DATASET SITES_JSON > cases.json
  webarena_verified.py eval LIB DATASET SITES_JSON < cases.json > verdicts.json

gen: for every task of DATASET (their webarena-verified.json), answers and network traces (HAR entries)
built from the task's own expected values, then changed: the expected answer, in a code fence, with a
wrong status, with wrong data, as plain text; the expected requests, none, with a wrong form field, with
an extra query parameter. Regular expressions and JSONPath filters in a spec are left as they are (the
trace then has no request for that evaluator).
eval: each case scored by `WebArenaVerified.evaluate_task`, with SITES_JSON ({"__SHOPPING__": URL, ...})
as its environments: [{"score": float, "status": str}].
"""

import copy
import json
import sys
import urllib.parse

mode, lib, dataset, sites_file = sys.argv[1:5]
sys.path.insert(0, lib)
sites = json.load(open(sites_file))


def render(s):
    for k, v in sites.items():
        s = s.replace(k, v)
    return s


def first(v):
    return v[0] if isinstance(v, list) and len(v) >= 2 else v


def is_re(s):
    return isinstance(s, str) and len(s) >= 2 and s.startswith("^") and s.endswith("$")


def entry(method, url, post=None, mime=None, status=200, headers=None):
    req = {
        "method": method,
        "url": url,
        "httpVersion": "HTTP/1.1",
        "headers": [{"name": k, "value": v} for k, v in (headers or {}).items()],
        "queryString": [],
        "cookies": [],
        "headersSize": -1,
        "bodySize": len(post or ""),
    }
    if post is not None:
        req["postData"] = {"mimeType": mime, "text": post}
    return {
        "startedDateTime": "2026-01-01T00:00:00Z",
        "time": 0,
        "request": req,
        "response": {
            "status": status,
            "statusText": "",
            "httpVersion": "HTTP/1.1",
            "headers": [],
            "cookies": [],
            "content": {"size": 0, "mimeType": "text/html"},
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": -1,
        },
        "cache": {},
        "timings": {"send": 0, "wait": 0, "receive": 0},
    }


def synth(spec, navigate):
    """A request that should satisfy a NetworkEventEvaluator spec, or None."""
    e = spec["expected"]
    url = e.get("url")
    if not isinstance(url, str) or is_re(url):
        return None
    url = render(url)
    q = {}
    for k, v in (e.get("query_params") or {}).items():
        v = first(v)
        if isinstance(v, list):
            v = v[0] if v else ""
        if is_re(v):
            return None
        q[k] = v
    if q:
        url = url + ("&" if "?" in url else "?") + urllib.parse.urlencode(q)
    method = e.get("http_method") or "GET"
    headers = {"Accept": "text/html,application/xhtml+xml"}
    ref = (e.get("headers") or {}).get("referer")
    if ref is not None:
        if is_re(ref):
            return None
        headers["Referer"] = render(first(ref))
    post, mime = None, None
    pd = e.get("post_data")
    if pd:
        flat, nested = {}, {}
        for k, v in pd.items():
            v = first(v)
            if is_re(v) or isinstance(v, (dict, list)) or v is None:
                return None
            if k.startswith("$."):
                parts = k[2:].split(".")
                if any(not p.isidentifier() for p in parts):
                    return None
                cur = nested
                for p in parts[:-1]:
                    cur = cur.setdefault(p, {})
                cur[parts[-1]] = v
            elif k.startswith("$") or is_re(k):
                return None
            else:
                flat[k] = v
        if nested:
            nested.update(flat)
            post, mime = json.dumps(nested), "application/json"
        else:
            post = urllib.parse.urlencode({k: str(v) for k, v in flat.items()})
            mime = "application/x-www-form-urlencoded"
    status = e.get("response_status", 200)
    if not isinstance(status, int):
        status = 200
    return entry(method, url, post, mime, status, headers)


def gen():
    tasks = json.load(open(dataset))
    cases = []
    for t in tasks:
        resp = next(x for x in t["eval"] if x["evaluator"] == "AgentResponseEvaluator")
        exp = copy.deepcopy(resp["expected"])
        data = exp.get("retrieved_data")
        if isinstance(data, list):
            data = [first(x) for x in data]
        answer = {"task_type": exp["task_type"].upper(), "status": exp["status"], "retrieved_data": data, "error_details": None}
        navigate = exp["task_type"] == "navigate"
        nets = [x for x in t["eval"] if x["evaluator"] == "NetworkEventEvaluator" and not x.get("should_not_exist")]
        har = [h for h in (synth(x, navigate) for x in nets) if h is not None]
        tid = t["task_id"]
        # Their evaluator refuses an empty trace: every trace starts with a stylesheet (not evaluated).
        base = render("__" + t["sites"][0].upper() + "__") if t.get("sites") else "http://localhost"
        har = [entry("GET", base + "/static/site.css")] + har

        def case(label, answer_text, trace):
            cases.append({"task_id": tid, "label": label, "response": answer_text, "har": trace})

        case("expected", json.dumps(answer), har)
        case("fenced", "Done.\n```json\n" + json.dumps({**answer, "task_type": answer["task_type"].lower()}) + "\n```", har)
        case("wrong-status", json.dumps({**answer, "status": "UNKNOWN_ERROR" if answer["status"] == "SUCCESS" else "SUCCESS"}), har)
        if isinstance(data, list) and data:
            wrong = list(data)
            x = wrong[0]
            wrong[0] = (x + 1) if isinstance(x, (int, float)) and not isinstance(x, bool) else (str(x) + " extra" if not isinstance(x, dict) else {})
            case("wrong-data", json.dumps({**answer, "retrieved_data": wrong}), har)
        case("plain-text", "I think the answer is " + json.dumps(data), har)
        if nets:
            case("no-requests", json.dumps(answer), har[:1])
        for i, h in enumerate(har):
            if i == 0:
                continue
            pd = h["request"].get("postData")
            if pd and pd["mimeType"].startswith("application/x-www-form-urlencoded") and "=" in pd["text"]:
                bad = copy.deepcopy(har)
                k, _, _ = pd["text"].partition("=")
                bad[i]["request"]["postData"]["text"] = pd["text"].replace(k + "=", k + "=changed", 1)
                case("wrong-post", json.dumps(answer), bad)
            bad = copy.deepcopy(har)
            u = bad[i]["request"]["url"]
            bad[i]["request"]["url"] = u + ("&" if "?" in u else "?") + "zz_extra=1"
            case("extra-query", json.dumps(answer), bad)
    json.dump(cases, sys.stdout)


def evaluate():
    from webarena_verified.api import WebArenaVerified
    from webarena_verified.types.config import WebArenaVerifiedConfig

    import os
    import tempfile

    envs = {k: {"urls": [v]} for k, v in sites.items()}
    data_file = dataset
    ours = json.load(open(dataset))
    if len(ours) != 812:
        # Their reader wants all 812 tasks: ours replace theirs with the same ids.
        theirs = os.path.join(lib, "webarena_verified", "assets", "dataset", "webarena-verified.json")
        by_id = {t["task_id"]: t for t in json.load(open(theirs))}
        for t in ours:
            by_id[t["task_id"]] = t
        fd, data_file = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump([by_id[k] for k in sorted(by_id)], f)
    wa = WebArenaVerified(config=WebArenaVerifiedConfig(test_data_file=data_file, environments=envs))
    if data_file != dataset:
        os.unlink(data_file)  # read once, at construction
    out = []
    for c in json.load(sys.stdin):
        r = wa.evaluate_task(task_id=c["task_id"], agent_response=c["response"], network_trace=c["har"] or [])
        out.append({"score": float(r.score), "status": str(r.status), "error": r.error_msg})
    json.dump(out, sys.stdout)


{"gen": gen, "eval": evaluate}[mode]()
