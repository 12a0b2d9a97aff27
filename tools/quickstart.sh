#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build (Release), calibrate this machine,
# and say where the profile went. Extra arguments go to spinwise-calibrate (e.g. --quick, --c2c,
# --cpus 0-3, --output FILE). SPINWISE_BUILD_ROOT=<dir> builds elsewhere than build/.
set -euo pipefail
cd "$(dirname "$0")/.."
broot=${SPINWISE_BUILD_ROOT:-build}
tools/setup.sh
mkdir -p "$broot"
cmake -S . -B "$broot/release" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$broot/quickstart-configure.log" 2>&1 ||
  { cat "$broot/quickstart-configure.log"; exit 1; }
cmake --build "$broot/release" -j "$(nproc)" --target spinwise-calibrate

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
"$broot/release/tools/spinwise-calibrate" "${args[@]}" || rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 3 ]; then
  echo
  echo "quickstart: this machine's calibration profile is $profile"
  echo "quickstart: engines apply it at start-up with SPINWISE_PROFILE=$profile"
  echo "            (spinwise::load_profile_from_env(), or spinwise::load_profile(\"$profile\"))"
fi
exit $rc
