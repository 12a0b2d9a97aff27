import sys,statistics as st,collections
d=collections.defaultdict(dict)
for l in open(sys.argv[1]):
    p=l.split()
    if len(p)==3 and p[0].isdigit(): d[p[1]][p[0]]=float(p[2])
base=sys.argv[2]
for k,v in d.items():
    r=sorted(v[i]/d[base][i] for i in v if i in d[base])
    print(k, f'median {st.median(v.values()):.0f}', f'vs {base} {st.median(r):.3f} ({r[0]:.3f}-{r[-1]:.3f}) n={len(r)}')
