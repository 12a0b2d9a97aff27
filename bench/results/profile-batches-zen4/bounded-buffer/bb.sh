#!/usr/bin/env bash
# bb.sh REPS MODE NAME=LIB ...: the bounded buffer (signal), arms interleaved; "rep name items/s"
reps=$1; mode=$2; shift 2
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq "$reps"); do
  for arm in "$@"; do
    name=${arm%%=*}; L=${arm#*=}
    case $name in *-off) E="";; *-stats) E="SPINWISE_PRELOAD_STATS=/tmp/sv-stats.json";; *) E="SPINWISE_PRELOAD_PROFILE=/tmp/sv-prof.json";; esac
    bb=$(env $E LD_PRELOAD=$L /tmp/bb --producers 4 --consumers 4 --items 200000 --capacity 16 --wake $mode 2>/dev/null | awk '{printf "%.0f", $2/$8}')
    echo "$rep $name $bb"
  done
done
