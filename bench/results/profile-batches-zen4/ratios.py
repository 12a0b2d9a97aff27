import json,sys,statistics as st
runs=[json.loads(l) for l in open(sys.argv[1])]
pairs=[a.split('/') for a in sys.argv[2:]]
progs=[]
for r in runs:
    if r['program'] not in progs: progs.append(r['program'])
by={(r['program'],r['arm'],r['rep']):r for r in runs if r['ok'] and not r['counters']}
for p in progs:
    line=[p]
    for num,den in pairs:
        rs=sorted(by[(p,num,k)]['throughput']/by[(p,den,k)]['throughput'] for (pp,a,k) in by if pp==p and a==num and (p,den,k) in by)
        if rs: line.append(f"{num}/{den} {st.median(rs):.3f} ({rs[0]:.3f}-{rs[-1]:.3f}) n={len(rs)}")
    print(' | '.join(line))
