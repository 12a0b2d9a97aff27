#!/bin/bash
# uc_pairs.sh REPS name=lib ... : off (first lib) and profile for each lib, interleaved
reps=$1; shift
first=${1#*=}
for r in $(seq $reps); do
  s=$(LD_PRELOAD=$first /tmp/uc --rounds 5000000 2>/dev/null | awk '{print $4}'); echo "$r off $s"
  for nl in "$@"; do n=${nl%%=*}; l=${nl#*=}
    s=$(SPINWISE_PRELOAD_PROFILE=/dev/null LD_PRELOAD=$l /tmp/uc --rounds 5000000 2>/dev/null | awk '{print $4}'); echo "$r $n $s"
  done
done
