#!/bin/bash
# sysbench-mutex.sh REPS LIB: REPS rounds of the programs harness's sysbench mutex cell (16 threads,
# 4 mutexes) under LIB with the statistics off, the statistics on, the profile on, in that order;
# prints "mode seconds" (sysbench's total time).
reps=$1; lib=$2
for r in $(seq "$reps"); do
  for m in off stats profile; do
    case $m in off) e=X=1;; stats) e=SPINWISE_PRELOAD_STATS=/dev/null;; profile) e=SPINWISE_PRELOAD_PROFILE=/tmp/sbm-prof.json;; esac
    t=$(env $e LD_PRELOAD="$lib" sysbench mutex --threads=16 --mutex-num=4 --mutex-locks=1500000 --mutex-loops=200 run 2>/dev/null | awk '/total time:/{print $3}' | tr -d s)
    echo "$m $t"
  done
done
