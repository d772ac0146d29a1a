#!/usr/bin/env bash
# Opens the profile explorer in a real browser (Debian's chromium, headless) and checks the
# page's own self-test: summary present, one timeline row per track, suggestions listed, no
# JavaScript errors; then takes a screenshot. CTest runs it as `profile_browser` (label
# `browser`); CI installs chromium through scripts/deps.sh.
#
# Usage: scripts/browser_test.sh TRNSIM_BINARY OUT_DIR [SCREENSHOT_COPY.png]
set -euo pipefail

trnsim=${1:?usage: browser_test.sh TRNSIM_BINARY OUT_DIR [SCREENSHOT_COPY.png]}
out=${2:?usage: browser_test.sh TRNSIM_BINARY OUT_DIR [SCREENSHOT_COPY.png]}
copy=${3:-}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
example="$root/examples/asm/matmul_256_bf16.s"
expected_tracks=5  # tensor, vector, dma.0, dma.1, dma.2

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
  echo "FAIL: chromium is not installed; the browser test needs it." >&2
  echo "      Install it with: bash scripts/deps.sh   (or: apt-get install -y chromium)" >&2
  exit 1
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)  # file:// needs an absolute path
rm -f "$out/explorer.png" "$out/dom.html"
"$trnsim" profile-asm "$example" --random a_t=1 --random b=2 --title "matmul 256 bf16" \
  -o "$out/report.html" --trace "$out/trace.json"

flags=(--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run
       --disable-extensions --user-data-dir="$out/chromium-profile" --hide-scrollbars)
url="file://$out/report.html"
timeout 120 "$browser" "${flags[@]}" --virtual-time-budget=2000 --dump-dom "$url" \
  >"$out/dom.html" 2>"$out/chromium-dom.log" || {
  echo "FAIL: chromium --dump-dom failed (log: $out/chromium-dom.log)" >&2
  tail -20 "$out/chromium-dom.log" >&2
  exit 1
}
timeout 120 "$browser" "${flags[@]}" --window-size=1400,900 --screenshot="$out/explorer.png" \
  "$url" >"$out/chromium-shot.log" 2>&1 || {
  echo "FAIL: chromium --screenshot failed (log: $out/chromium-shot.log)" >&2
  tail -20 "$out/chromium-shot.log" >&2
  exit 1
}

python3 - "$out/dom.html" "$out/explorer.png" "$expected_tracks" <<'PY'
import html, json, os, re, sys
dom_path, png, expected = sys.argv[1], sys.argv[2], int(sys.argv[3])
dom = open(dom_path, encoding="utf-8").read()
fail = []
m = re.search(r'<pre id="selftest">(.*?)</pre>', dom, re.S)
if not m or not m.group(1).strip():
    print("FAIL: the page wrote no self-test result (did its script run?)")
    sys.exit(1)
result = json.loads(html.unescape(m.group(1)))
print("self-test:", json.dumps(result))
if result.get("errors"):
    fail.append("JavaScript errors: %s" % result["errors"])
if result.get("tracks") != expected:
    fail.append("timeline has %s tracks, expected %d" % (result.get("tracks"), expected))
if result.get("expected_tracks") != expected:
    fail.append("data-tracks is %s, expected %d" % (result.get("expected_tracks"), expected))
if not result.get("summary"):
    fail.append("summary cards missing")
if result.get("suggestions", 0) < 1:
    fail.append("no suggestion listed")
if result.get("instructions", 0) < 1:
    fail.append("instruction table empty")
for needle in ('id="summary"', 'id="suggestions"', 'id="instructions"', 'id="source"',
               'data-tracks="%d"' % expected, 'class="sugg"'):
    if needle not in dom:
        fail.append("DOM lacks " + needle)
if not os.path.exists(png) or os.path.getsize(png) == 0:
    fail.append("screenshot missing or empty")
if fail:
    for f in fail:
        print("FAIL:", f)
    sys.exit(1)
print("browser test passed: %d tracks, %d suggestions, screenshot %d bytes"
      % (result["tracks"], result["suggestions"], os.path.getsize(png)))
PY

if [[ -n "$copy" ]]; then
  cp "$out/explorer.png" "$copy"
  echo "screenshot copied to $copy"
fi
