#!/usr/bin/env bash
# Installs, from Debian's archive, whatever trnsim needs that the machine lacks.
# Sourced by demo.sh and test.sh; safe to run repeatedly (does nothing when all is present).
set -euo pipefail

TRNSIM_PACKAGES=(
  g++ cmake ninja-build pkg-config
  libfmt-dev nlohmann-json3-dev libcli11-dev      # formatting, configs/reports, CLI
  libgtest-dev libgmock-dev libbenchmark-dev      # tests and benchmarks
  libopenblas-dev                                 # reference GEMM in bench/ only
  python3 python3-numpy                           # independent FP16 oracle in tests
  python3-dev pybind11-dev python3-pytest         # the Python front end (nki) and its tests
  clang libclang-rt-14-dev                        # libFuzzer target for the assembly parser
  clang-format clang-tidy                         # formatting and lint checks (CI)
  chromium                                        # headless browser test of the profile explorer
)

missing=()
for pkg in "${TRNSIM_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]})); then
  echo "trnsim: installing missing packages: ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
