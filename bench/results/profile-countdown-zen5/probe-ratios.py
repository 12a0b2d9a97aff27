#!/usr/bin/env python3
"""probe-ratios.py FILE: from probe-pairs.sh output, each arm over off and each arm over the ones before it:
paired throughput ratios, median [95% interval of the median, sign test], and the fastest runs ratio."""
import sys,statistics as st
from math import comb
d={}
for l in open(sys.argv[1]):
    r,a,s=l.split(); d.setdefault(int(r),{})[a]=float(s)
def ci(xs):
    xs=sorted(xs); n=len(xs); k=0
    while sum(comb(n,i) for i in range(k+2))*2/2**n<=0.05: k+=1
    return st.median(xs), xs[k], xs[n-1-k]
arms=[a for a in d[1] if a!='off']
for a in arms:
    print(a,'/off: %.3f [%.3f-%.3f]'%ci([d[r]['off']/d[r][a] for r in d]), 'fastest %.3f'%(min(d[r]['off'] for r in d)/min(d[r][a] for r in d)))
for i,a in enumerate(arms):
    for b in arms[i+1:]:
        print(b,'/',a,' throughput: %.3f [%.3f-%.3f]'%ci([d[r][a]/d[r][b] for r in d]))
