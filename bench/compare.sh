#!/usr/bin/env bash
# Revision against revision: the lock grid measured paired and interleaved on this machine.
#
#   bench/compare.sh [options] REV_A REV_B
#
# REV: any git revision (a commit, a tag, HEAD~3, main), or "." for the working tree with its
# uncommitted changes (how a change is judged before it lands: bench/compare.sh HEAD .).
# Each revision's include/ and arch/ are copied into a temporary directory (git archive), and one
# harness, bench/compare/cell.cpp of this checkout (with the tools' lock catalogue,
# bench/spinwise_locks.hpp), is compiled against each with the same compiler and flags: only the
# locks differ. bench/compare/compare.py then runs the two binaries paired
# (A next to B, seconds apart, the order alternating) and prints per cell B/A with its interval
# and a verdict, with the machine, its relax cost and its load.
#
# Options (passed on to compare.py):
#   --locks L,...    locks to measure (default: all both revisions have; `--locks list` lists them)
#   --cells C,...    cells (default: uncontended 2t_cs4 2t_cs16 8t_cs16_l64 32t_cs16_l64 handoff)
#   --pairs N        rounds, one pair per cell and lock each (default 12; 6 is the fewest for a verdict)
#   --ms N           length of one run in ms (default 200)
#   --out DIR        keep the report (README.md) and every run (compare.json) there
#   --bench PATH     the spinwise-bench whose --estimate gives the intervals (default: $SPINWISE_BENCH,
#                    else one in build-bench-run/release, build/release, build, or on PATH)
#   --align          compile both harnesses with functions, loops and jumps aligned to 64 bytes: when
#                    a lock whose code did not change is called different, code layout is the usual
#                    cause (another lock's code moved it), and an aligned rerun says whether it is
# Run it alone on an idle machine: a benchmark beside a build measures the build.
# Docs: docs/benchmarks.md, "Comparing two revisions".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

py_args=()
out=""
align=0
revs=()
while [ $# -gt 0 ]; do
  case $1 in
    --locks | --cells | --pairs | --ms | --bench)
      [ $# -ge 2 ] || { echo "compare: $1 needs a value" >&2; exit 2; }
      py_args+=("$1" "$2")
      shift 2
      ;;
    --align)
      align=1
      shift
      ;;
    --out)
      [ $# -ge 2 ] || { echo "compare: --out needs a directory" >&2; exit 2; }
      out=$2
      shift 2
      ;;
    -h | --help) usage ;;
    -*) echo "compare: unknown option '$1'" >&2; usage ;;
    *) revs+=("$1"); shift ;;
  esac
done
[ ${#revs[@]} -eq 2 ] || { echo "compare: give two revisions (REV_A REV_B)" >&2; usage; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/spinwise-compare.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

cxx=${CXX:-c++}
flags=(-std=c++17 -O3 -DNDEBUG -pthread)
[ "$align" = 1 ] && flags+=(-falign-functions=64 -falign-loops=64 -falign-jumps=64)

# The tree of one revision: its include/ and arch/ (the locks are header-only).
tree_of() {  # rev, dir
  local rev=$1 dir=$2
  mkdir -p "$dir"
  if [ "$rev" = "." ]; then
    cp -r "$root/include" "$root/arch" "$dir/"
  else
    git -C "$root" rev-parse --verify --quiet "$rev^{commit}" >/dev/null ||
      { echo "compare: '$rev' is not a revision of $root" >&2; return 2; }
    git -C "$root" archive "$rev" include arch | tar -x -C "$dir"
  fi
}

# Which optional locks a revision's headers declare, as the harness's macros.
defines_of() {  # dir
  local dir=$1 d=()
  [ -f "$dir/include/spinwise/adaptive_policy.hpp" ] && d+=(-DSPINWISE_CELL_HAS_ADAPTIVE)
  grep -q 'struct prompt_time_policy' "$dir/include/spinwise/time_policy.hpp" 2>/dev/null &&
    d+=(-DSPINWISE_CELL_HAS_PROMPT)
  [ -f /usr/include/tbb/spin_mutex.h ] && d+=(-DSPINWISE_CELL_HAS_TBB)
  echo "${d[@]}"
}

build() {  # rev, name
  local rev=$1 name=$2 dir="$tmp/$2" libs=()
  tree_of "$rev" "$dir"
  [ -f /usr/include/tbb/spin_mutex.h ] && libs+=(-ltbb)
  # shellcheck disable=SC2046
  "$cxx" "${flags[@]}" $(defines_of "$dir") -I"$dir/include" -I"$dir/arch" \
    "$root/bench/compare/cell.cpp" -o "$tmp/cell-$name" "${libs[@]}" ||
    { echo "compare: the harness does not build against $rev" >&2; return 1; }
}

label() {  # rev
  if [ "$1" = "." ]; then
    echo "working tree ($(git -C "$root" rev-parse --short HEAD) + changes)"
  else
    echo "$1 ($(git -C "$root" rev-parse --short "$1^{commit}"))"
  fi
}

echo "compare: building the harness against ${revs[0]} and ${revs[1]}" >&2
build "${revs[0]}" a
build "${revs[1]}" b
if [ "${py_args[*]:-}" != "${py_args[*]/list/}" ]; then
  "$tmp/cell-b" --list
  exit 0
fi
args=(--a "$tmp/cell-a" --b "$tmp/cell-b" --label-a "$(label "${revs[0]}")" --label-b "$(label "${revs[1]}")"
  --compiler "$("$cxx" --version | head -n 1) ${flags[*]}")
if [ -n "$out" ]; then
  mkdir -p "$out"
  args+=(--out "$out/README.md" --json "$out/compare.json")
fi
python3 "$root/bench/compare/compare.py" "${args[@]}" "${py_args[@]}"
