#!/bin/bash
# pair.sh OUT REPS "ARGS" BIN:ARM...: each arm once a repetition (BIN ARM ARGS), the order reversed
# every other repetition; one JSON line a run, with its repetition and binary, into OUT.
out=$1; reps=$2; args=$3; shift 3; : > $out
for r in $(seq 1 $reps); do
  ks=("$@"); if [ $((r%2)) -eq 0 ]; then rev=(); for ((i=${#ks[@]}-1;i>=0;i--)); do rev+=("${ks[i]}"); done; ks=("${rev[@]}"); fi
  for k in "${ks[@]}"; do IFS=: read -r bin kind <<<"$k"; $bin $kind $args | sed "s|^{|{\"rep\":$r,\"bin\":\"$bin\",|" >> $out; done
done
