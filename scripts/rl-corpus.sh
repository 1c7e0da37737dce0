#!/usr/bin/env bash
# Batches of real ResourceLoader modules for the scanner's check (tests/batches.rs,
# `mediawikis_own_modules_minified_by_its_minifier_are_cut_in_order`): MediaWiki's own JavaScript sources
# from Debian's `mediawiki`
# package, each wrapped in `mw.loader.implement("mN@abcde",function($,jQuery,require,module){...});` and
# minified by MediaWiki's own minifier (as load.php does), 20 modules per batch.
# Usage: bash scripts/rl-corpus.sh OUT_DIR [MAX_FILES]
set -euo pipefail
out=${1:?usage: rl-corpus.sh OUT_DIR [MAX_FILES]}
max=${2:-400}
mw=/usr/share/mediawiki
[ -f "$mw/vendor/autoload.php" ] || { echo "needs Debian's mediawiki package (apt-get install mediawiki)" >&2; exit 1; }
mkdir -p "$out"
cat > "$out/make.php" <<'PHP'
<?php
require '/usr/share/mediawiki/vendor/autoload.php';
use Wikimedia\Minify\JavaScriptMinifier;
$first = (int)$argv[1];
$out = '';
foreach (array_slice($argv, 2) as $i => $f) {
  $n = $first + $i;
  $out .= JavaScriptMinifier::minify('mw.loader.implement("m' . $n . '@abcde",function($,jQuery,require,module){'
    . file_get_contents($f) . "\n});");
}
echo $out;
PHP
mapfile -t files < <(cd "$mw" && find resources/src resources/lib -name '*.js' | sort | head -n "$max")
for ((i = 0; i < ${#files[@]}; i += 20)); do
  (cd "$mw" && php "$out/make.php" "$i" "${files[@]:i:20}") > "$out/batch-$i.js"
done
echo "${#files[@]} modules in $(ls "$out"/*.js | wc -l) batches under $out"
