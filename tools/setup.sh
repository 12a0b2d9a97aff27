#!/usr/bin/env bash
# Installs, with apt-get, whatever spinwise needs that this Debian 12 machine lacks.
# Idempotent, and silent when nothing is missing. Run as root (or with sudo available).
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config git
  googletest libgtest-dev libbenchmark-dev
  libhwloc-dev hwloc libnuma-dev linux-libc-dev
  nlohmann-json3-dev libcli11-dev
  g++-aarch64-linux-gnu qemu-user
  clang libclang-rt-14-dev
  gnuplot-nox
  spin gcc clang-format
  libtbb-dev libabsl-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
