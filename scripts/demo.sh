#!/usr/bin/env bash
# The README's run command: installs what is missing, builds, runs the main demo.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/build.sh" "$root/build"
"$root/build/trnsim" demo "$@"
