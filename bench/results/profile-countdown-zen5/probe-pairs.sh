#!/bin/bash
# probe-pairs.sh REPS NAME=LIB ...: the harness's uncontended-calls probe (bench/engines/programs/
# uncontended_calls.c, built as $UC, default /tmp/uc) with the profile off on the first library,
# then with the profile on under each library, interleaved; ROUNDS rounds of 5 calls (default 5M).
# One line a run: "REP ARM SECONDS". probe-ratios.py gives the paired ratios.
reps=$1; shift
uc=${UC:-/tmp/uc}
first=${1#*=}
for r in $(seq "$reps"); do
  s=$(LD_PRELOAD=$first "$uc" --rounds "${ROUNDS:-5000000}" 2>/dev/null | awk '{print $4}'); echo "$r off $s"
  for nl in "$@"; do n=${nl%%=*}; l=${nl#*=}
    s=$(SPINWISE_PRELOAD_PROFILE=/dev/null LD_PRELOAD=$l "$uc" --rounds "${ROUNDS:-5000000}" 2>/dev/null | awk '{print $4}'); echo "$r $n $s"
  done
done
