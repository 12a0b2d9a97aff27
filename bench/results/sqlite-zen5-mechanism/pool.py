import json,statistics as st,sys
from math import comb
files=sys.argv[1:]
rows=[]
for i,f in enumerate(files):
    for l in open(f):
        r=json.loads(l); r['rep']+=100*i; rows.append(r)
by={}
for r in rows: by.setdefault(r['rep'],{})[r['label']]=r
def ci(n):
    k=0
    while sum(comb(n,i) for i in range(k+1))/2**n<=0.025: k+=1
    return k
def show(num,den):
    ks=[k for k in by if num in by[k] and den in by[k]]
    rat=sorted(by[k][num]['ops_per_s']/by[k][den]['ops_per_s'] for k in ks)
    n=len(rat); k=ci(n)
    cpu=sorted(by[k2][num]['cpu_ns_per_op']/by[k2][den]['cpu_ns_per_op'] for k2 in ks)
    vol=sorted(by[k2][num]['vol']/by[k2][den]['vol'] for k2 in ks)
    print(f"| {num}/{den} | {n} | {st.median(rat):.3f} [{rat[k-1]:.3f}-{rat[n-k]:.3f}] | {st.median(cpu):.3f} [{cpu[k-1]:.3f}-{cpu[n-k]:.3f}] | {st.median(vol):.3f} [{vol[k-1]:.3f}-{vol[n-k]:.3f}] |")
print("| ratio | pairs | ops/s | CPU per op | voluntary switches per op |\n|---|---|---|---|---|")
for lab in ('hybrid','bare','nostats','always','take2','retry','nocount','marked','early','earlyns'):
    if any(lab in v for v in by.values()): show(lab,'sqlite')
show('hybrid','bare')
