import sys,statistics as st
d={}
for l in open(sys.argv[1]):
    r,a,s=l.split(); d.setdefault(int(r),{})[a]=float(s)
arms=[a for a in d[1] if a!='off']
for a in arms:
    rs=sorted(d[r]['off']/d[r][a] for r in d if a in d[r])
    print(f"{a:10s} throughput/off median {st.median(rs):.3f} [{rs[len(rs)//4]:.3f}-{rs[3*len(rs)//4]:.3f} IQR] n={len(rs)}")
