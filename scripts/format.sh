#!/usr/bin/env bash
# format.sh [--check]: clang-format every C++ file git tracks, in place, with the
# repository's .clang-format; --check changes nothing and fails listing the files that differ
# (what CI runs).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
mapfile -t files < <(git ls-files '*.cpp' '*.h')
if [[ ${1:-} == --check ]]; then
  differ=()
  for f in "${files[@]}"; do
    clang-format --style=file "$f" | cmp -s - "$f" || differ+=("$f")
  done
  if ((${#differ[@]})); then
    echo "format: ${#differ[@]} file(s) differ from .clang-format (run scripts/format.sh):"
    printf '  %s\n' "${differ[@]}"
    exit 1
  fi
  echo "format: ${#files[@]} files clean"
else
  clang-format --style=file -i "${files[@]}"
fi
