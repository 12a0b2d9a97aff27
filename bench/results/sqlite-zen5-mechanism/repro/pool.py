#!/usr/bin/env python3
"""pool.py RUNS.jsonl BASE: each arm over BASE (labels "rep:ARM"), paired by repetition: ops/s median
[95% interval of the median, sign test] and the median ratio of voluntary switches per operation."""
import json,sys,statistics as st
rows=[json.loads(l) for l in open(sys.argv[1])]
base=sys.argv[2]
key=lambda d: d['bin'].split('/')[-1]+':'+d['kind']
by={}
for d in rows: by.setdefault(d['rep'],{})[key(d)]=d
labels=sorted({key(d) for d in rows})
def ci(xs):
    xs=sorted(xs); n=len(xs)
    # sign-test 95% interval of the median
    from math import comb
    k=0
    while True:
        p=sum(comb(n,i) for i in range(0,k+2))/2**n*2
        if p>0.05: break
        k+=1
    return xs[n//2] if n%2 else (xs[n//2-1]+xs[n//2])/2, xs[k] if k<n else xs[0], xs[n-1-k] if k<n else xs[-1]
for l in labels:
    if l==base: continue
    r=[by[k][l]['ops']/by[k][base]['ops'] for k in by if l in by[k] and base in by[k]]
    v=[by[k][l]['vol']/max(by[k][base]['vol'],1e-9) for k in by if l in by[k] and base in by[k]]
    m,lo,hi=ci(r); vm=st.median(v)
    print(f"{l}/{base}: n={len(r)} ops {m:.3f} [{lo:.3f}-{hi:.3f}] vol {vm:.3f}")
