#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build (Release), calibrate this machine.
# Extra arguments go to spinwise-calibrate.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
mkdir -p build
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >build/quickstart-configure.log 2>&1 ||
  { cat build/quickstart-configure.log; exit 1; }
cmake --build build/release -j "$(nproc)" --target spinwise-calibrate
exec build/release/tools/spinwise-calibrate "$@"
