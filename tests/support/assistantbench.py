"""AssistantBench's own scorer (browsergym-assistantbench's question_scorer) on cases read from stdin.

Usage: assistantbench.py DIR, DIR holding browsergym/assistantbench (the wheel unpacked) with numpy and
scipy beside it. Stdin: a JSON list of [answer, gold]. Stdout: a JSON list, per case {"accuracy": x} or
{"error": "ExceptionType: message"} when their scorer raises.

Their package's __init__ downloads the dataset from Hugging Face when imported, so the evaluation
modules are loaded as a package of their own, without it.
"""

import json
import math
import sys
import types

lib = sys.argv[1]
sys.path.insert(0, lib)
pkg = types.ModuleType("ab_evaluation")
pkg.__path__ = [lib + "/browsergym/assistantbench/evaluation"]
sys.modules["ab_evaluation"] = pkg
from ab_evaluation.evaluator import question_scorer  # noqa: E402

out = []
for answer, gold in json.load(sys.stdin):
    try:
        accuracy, _has_answer = question_scorer(answer, gold)
        accuracy = float(accuracy)
        out.append({"accuracy": accuracy} if math.isfinite(accuracy) else {"error": "NaN accuracy"})
    except Exception as e:  # their scorer raising is a verdict of its own here
        out.append({"error": f"{type(e).__name__}: {e}"})
json.dump(out, sys.stdout)
