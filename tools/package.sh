#!/usr/bin/env bash
# Debian packages of spinwise, for a machine that has no compiler: install what building them needs
# (tools/setup.sh package), configure a Release tree for /usr in <build>/package (static runtime,
# no tests, no benchmarks), build it, run CPack's DEB generator and print the .deb files:
#   spinwise-tools          spinwise-calibrate (every tool installed with COMPONENT tools)
#   libspinwise-preload     libspinwise-preload.so
#   libspinwise-dev         headers, static libraries, CMake package, pkg-config files
#   libspinwise-sqlite-dev  spinwise::sqlite (where libsqlite3-dev is installed, which setup does)
# On the target (Debian 12, same architecture): apt-get install ./spinwise-tools_*.deb
# What goes in which package, and their dependencies: tools/cmake/SpinwisePackaging.cmake.
# SPINWISE_BUILD_ROOT=<dir> builds elsewhere than build/; extra arguments go to CMake's configure
# (e.g. -DSPINWISE_PACKAGE_MAINTAINER="Name <mail>").
set -euo pipefail
cd "$(dirname "$0")/.."
broot=${SPINWISE_BUILD_ROOT:-build}
tree=$broot/package
tools/setup.sh package
mkdir -p "$broot"
log=$broot/package-configure.log
cmake -S . -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DSPINWISE_BUILD_TESTS=OFF -DSPINWISE_BUILD_BENCH=OFF -DSPINWISE_BUILD_TOOLS=ON -DSPINWISE_INSTALL=ON \
  -DSPINWISE_RUNTIME_SHARED=OFF "$@" >"$log" 2>&1 || { cat "$log"; exit 1; }
[ -f "$tree/CPackConfig.cmake" ] || { cat "$log"; echo "package: CPack was not configured (see above)" >&2; exit 1; }
cmake --build "$tree" -j "$(nproc)"
out=$tree/debs
rm -rf "$out"
(cd "$tree" && cpack -G DEB -B "$(pwd)/debs" >cpack.log 2>&1) || { cat "$tree/cpack.log"; exit 1; }
rm -rf "$out/_CPack_Packages"
echo
echo "package: the Debian packages are"
for f in "$out"/*.deb; do
  echo "  $(pwd)/$f"
done
echo "package: on the database host (Debian 12, $(dpkg --print-architecture)), as root:"
echo "           apt-get install ./spinwise-tools_*.deb && spinwise-calibrate --advise mariadb"
echo "         (docs/operators.md)"
