#!/usr/bin/env bash
# The main job on a fresh machine: install what spinwise-calibrate needs (tools/setup.sh calibrate:
# no test toolchain, so it is fit for a database host), build it alone (Release, in
# <build>/calibrate), calibrate this machine, and say where the profile and the tool went.
# Extra arguments go to spinwise-calibrate (e.g. --quick, --c2c, --cpus 0-3, --output FILE).
# SPINWISE_BUILD_ROOT=<dir> builds elsewhere than build/. The whole test suite is tools/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
broot=${SPINWISE_BUILD_ROOT:-build}
tools/setup.sh calibrate
mkdir -p "$broot"
cmake -S . -B "$broot/calibrate" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPINWISE_BUILD_TESTS=OFF \
  -DSPINWISE_BUILD_BENCH=OFF -DSPINWISE_BUILD_TOOLS=ON >"$broot/quickstart-configure.log" 2>&1 ||
  { cat "$broot/quickstart-configure.log"; exit 1; }
cmake --build "$broot/calibrate" -j "$(nproc)" --target spinwise-calibrate
tool="$(pwd)/$broot/calibrate/tools/spinwise-calibrate"

# The profile goes to <build>/spinwise-profile.json unless the arguments name another file.
profile="$(pwd)/$broot/spinwise-profile.json"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[i]} in
    --output | -o) profile=${args[i + 1]:-} ;;
    --output=*) profile=${args[i]#--output=} ;;
  esac
done
[[ " ${args[*]-} " == *" --output"* || " ${args[*]-} " == *" -o "* ]] || args+=(--output "$profile")

rc=0
"$tool" "${args[@]}" || rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 3 ]; then
  echo
  echo "quickstart: this machine's calibration profile is $profile"
  echo "quickstart: engines apply it at start-up with SPINWISE_PROFILE=$profile"
  echo "            (spinwise::load_profile_from_env(), or spinwise::load_profile(\"$profile\"))"
  echo "quickstart: the tool is $tool"
  echo "quickstart: MySQL or MariaDB on this host? Its spin settings for this CPU, as my.cnf lines and"
  echo "            SET GLOBAL statements: $tool --advise mariadb (or mysql; docs/operators.md)"
fi
exit $rc
