#!/usr/bin/env bash
# The README's run command: installs what is missing, builds, runs the main demo, then a
# Python NKI kernel through the same compiler and simulator.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/build.sh" "$root/build"
"$root/build/trnsim" demo "$@"
if [[ -d $root/build/python/nki ]]; then
  echo
  echo "A Python NKI 0.6 kernel (examples/python/flash_attention.py), checked against NumPy:"
  "$root/build/trnsim" run "$root/examples/python/flash_attention.py:flash_attention" \
    --shape 2048x128 --shape 2048x128 --shape 2048x128 --reference reference
fi
