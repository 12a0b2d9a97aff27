#!/usr/bin/env bash
# off vs stats vs profile, interleaved: what of the profile's cost is the statistics it counts.
L=/work/main/build/release/src/libspinwise-preload.so
cc -O2 -pthread -o /tmp/bb /work/main/bench/engines/programs/bounded_buffer.c
cc -O2 -pthread -o /tmp/uc /work/main/bench/engines/programs/uncontended_calls.c
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in 1 2 3 4 5 6 7; do
  for arm in off stats profile; do
    case $arm in off) E="";; stats) E="SPINWISE_PRELOAD_STATS=/tmp/sv-stats.json";; profile) E="SPINWISE_PRELOAD_PROFILE=/tmp/sv-prof.json";; esac
    bb=$(env $E LD_PRELOAD=$L /tmp/bb --producers 4 --consumers 4 --items 200000 --capacity 16 --wake signal 2>/dev/null | awk '{printf "%.0f", $2/$8}')
    uc=$(env $E LD_PRELOAD=$L /tmp/uc --rounds 10000000 2>/dev/null | awk '{printf "%.0f", $2/$4}')
    echo "$rep $arm $bb $uc"
  done
done
