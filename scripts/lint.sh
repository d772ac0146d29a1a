#!/usr/bin/env bash
# lint.sh [BUILD_DIR]: clang-tidy with the repository's .clang-tidy over every C++ source
# outside tests (tests are GoogleTest macro bodies; the compiler's warnings cover them), using
# the compile commands of BUILD_DIR (default build/, configured by scripts/build.sh). Fails on
# any finding (WarningsAsErrors in .clang-tidy); what CI runs.
#
# In a unity build (the default, TRNSIM_UNITY_BUILD) the compile commands name CMake's unity
# files, each of which includes a batch of sources; clang-tidy reads those, so each header is
# parsed once per batch rather than once per source (~3.5x faster), and reports findings at
# the source's own lines (HeaderFilterRegex). Every source must be in some translation unit.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$root/build}
cd "$root"
if [[ ! -f $build_dir/compile_commands.json ]]; then
  echo "lint: no $build_dir/compile_commands.json (build first: bash scripts/build.sh)" >&2
  exit 2
fi
mapfile -t sources < <(git ls-files '*.cpp' | grep -v -e '/tests/' -e '/fuzz/')
# The translation units that compile at least one of `sources`, and any source none compiles.
mapfile -t units < <(python3 - "$build_dir/compile_commands.json" "$root" "${sources[@]}" <<'PY'
import json, os, re, sys
database, root, wanted = sys.argv[1], sys.argv[2], {os.path.join(sys.argv[2], s) for s in sys.argv[3:]}
units = {}  # unit -> the sources it includes (itself unless it is a unity file)
for entry in json.load(open(database)):
    unit = entry["file"]
    included = [unit]
    if "/Unity/" in unit:
        included = re.findall(r'^#include "([^"]+)"', open(unit).read(), re.M)
    units[unit] = {os.path.realpath(f) for f in included}
# Units of sources only first; a unit that also holds tests (a test binary that compiles a
# library source itself) only for a source no other unit covers.
covered, chosen = set(), []
for pure in (True, False):
    for unit, included in units.items():
        hits = (included & wanted) - covered
        if hits and (included <= wanted) == pure:
            chosen.append(unit)
            covered |= hits
for missing in sorted(wanted - covered):
    print("MISSING " + os.path.relpath(missing, root))
print("\n".join(chosen))
PY
)
missing=$(printf '%s\n' "${units[@]}" | grep '^MISSING ' || true)
if [[ -n $missing ]]; then
  echo "lint: no compile command in $build_dir for:" >&2
  echo "${missing//MISSING /  }" >&2
  exit 2
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# One clang-tidy per translation unit, as many at once as there are cores.
if printf '%s\n' "${units[@]}" |
  xargs -P "$(nproc)" -n 1 clang-tidy --config-file="$root/.clang-tidy" -p "$build_dir" \
    --quiet >"$log" 2>&1; then
  echo "lint: ${#sources[@]} files in ${#units[@]} translation units clean"
else
  grep -E 'warning:|error:' "$log" | sort -u
  echo "lint: $(grep -cE 'warning:|error:' "$log") finding(s) in ${#sources[@]} files"
  exit 1
fi
