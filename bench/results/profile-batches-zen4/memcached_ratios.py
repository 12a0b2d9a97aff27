import json,statistics as st,sys
runs=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by={}
for r in runs:
    if r.get('kind')!='memcached' or not r.get('ok'): continue
    by[(r['threads'],r['mix'],r['arm'],r['rep'])]=r['ops_per_s']
cells=sorted({(t,m) for (t,m,a,k) in by})
for t,m in cells:
    out=[f"{t} threads {m}"]
    for num,den in (("adaptive+profile","adaptive"),("adaptive","adaptive@base")):
        rs=sorted(by[(t,m,num,k)]/by[(t,m,den,k)] for (tt,mm,a,k) in by if (tt,mm,a)==(t,m,num) and (t,m,den,k) in by)
        out.append(f"{num}/{den} {st.median(rs):.3f} ({rs[0]:.3f}-{rs[-1]:.3f}) n={len(rs)}")
    print(' | '.join(out))
