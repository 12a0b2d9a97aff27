#!/usr/bin/env bash
# Installs, with apt-get, whatever spinwise needs that this Debian 12 machine lacks.
# Idempotent, and silent when nothing is missing. Run as root (or with sudo available).
#   tools/setup.sh           what building and testing spinwise needs
#   tools/setup.sh calibrate what building spinwise-calibrate alone needs (a compiler, CMake, Ninja
#                            and two header-only libraries; hwloc for the topology; Debian's
#                            MariaDB client library for --tune): what
#                            tools/quickstart.sh installs, and all a database host needs for
#                            --advise. No test toolchain (qemu, cross compiler, clang, SPIN, peers).
#   tools/setup.sh package   what tools/package.sh needs to build the Debian packages: the calibrate
#                            set, libnuma and SQLite's dev files (the runtime and spinwise::sqlite
#                            packaged whole), dpkg-dev (dpkg-shlibdeps) and file (CPack finds the
#                            programs to read with it)
#   tools/setup.sh engines   what the real-engine harness needs (bench/engines/mariadb): Debian's
#                            MariaDB server and client binaries (the -core packages: no system
#                            service is installed or started), sysbench, and perf for cpu-clock
#                            sampling; memcached and memcaslap (libmemcached-tools) for
#                            bench/engines/memcached; pigz, zstd and Debian's python3 for the
#                            real-program harness (bench/engines/programs). Not part of the
#                            default set.
set -euo pipefail

case ${1:-} in
  "") set_name=default ;;
  engines) set_name=engines ;;
  calibrate) set_name=calibrate ;;
  package) set_name=package ;;
  *) echo "setup: unknown package set '$1' (known: calibrate, package, engines; none for the default set)" >&2; exit 2 ;;
esac

packages=(
  cmake ninja-build g++ pkg-config git meson python3 binutils
  googletest libgtest-dev libbenchmark-dev
  libhwloc-dev hwloc libnuma-dev linux-libc-dev libsqlite3-dev
  nlohmann-json3-dev libcli11-dev libmariadb-dev
  g++-aarch64-linux-gnu qemu-user
  clang libclang-rt-14-dev
  gnuplot-nox
  spin gcc clang-format
  libtbb-dev libabsl-dev
  dpkg-dev file
)
[ "$set_name" = calibrate ] && packages=(cmake ninja-build g++ nlohmann-json3-dev libcli11-dev libhwloc-dev libmariadb-dev)
[ "$set_name" = package ] && packages=(cmake ninja-build g++ nlohmann-json3-dev libcli11-dev libhwloc-dev libnuma-dev
  libsqlite3-dev libmariadb-dev dpkg-dev file)
[ "$set_name" = engines ] && packages=(mariadb-server-core mariadb-client-core sysbench linux-perf binutils gnuplot-nox
  memcached libmemcached-tools pigz zstd python3)

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
