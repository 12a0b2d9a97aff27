#!/bin/bash
# usage: sq3.sh OUT REPS arms... (arm = BINARY:KIND:LABEL)
out=$1; reps=$2; shift 2
: > $out
for r in $(seq 1 $reps); do
  arms=("$@")
  if [ $((r % 2)) -eq 0 ]; then rev=(); for ((i=${#arms[@]}-1;i>=0;i--)); do rev+=("${arms[i]}"); done; arms=("${rev[@]}"); fi
  for a in "${arms[@]}"; do
    IFS=: read -r bin kind label <<<"$a"
    $bin --arm $kind --mode ${MODE:-serialized} --threads ${THREADS:-32} --seconds 3 --warmup 0.5 | python3 -c "
import json,sys
d=json.loads(sys.stdin.read()); print(json.dumps({'rep':$r,'label':'$label','ops_per_s':d['ops_per_s'],'vol':d['voluntary_ctx_switches_per_op'],'invol':d['involuntary_ctx_switches_per_op'],'cpu_ns_per_op':d['cpu_ns_per_op'],'busy':d['cpus_busy']}))" >> $out
  done
done
