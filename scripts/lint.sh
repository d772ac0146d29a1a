#!/usr/bin/env bash
# lint.sh [BUILD_DIR]: clang-tidy with the repository's .clang-tidy over every C++ source
# outside tests (tests are GoogleTest macro bodies; the compiler's warnings cover them), using
# the compile commands of BUILD_DIR (default build/, configured by scripts/build.sh). Fails on
# any finding (WarningsAsErrors in .clang-tidy); what CI runs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$root/build}
cd "$root"
if [[ ! -f $build_dir/compile_commands.json ]]; then
  echo "lint: no $build_dir/compile_commands.json (build first: bash scripts/build.sh)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cpp' | grep -v -e '/tests/' -e '/fuzz/')
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# One clang-tidy per file, as many at once as there are cores.
if printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc)" -n 1 clang-tidy -p "$build_dir" --quiet >"$log" 2>&1; then
  echo "lint: ${#files[@]} files clean"
else
  grep -E 'warning:|error:' "$log" | sort -u
  echo "lint: $(grep -cE 'warning:|error:' "$log") finding(s) in ${#files[@]} files"
  exit 1
fi
