#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every test.
# TRNSIM_WERROR=ON (set by CI) turns warnings into errors.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/build.sh" "$root/build" -DTRNSIM_WERROR="${TRNSIM_WERROR:-OFF}"
cd "$root/build"
ctest --output-on-failure -j "$(nproc)" "$@"
