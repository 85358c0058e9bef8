# gaps.py RECORDED ARRIVED SPEED: inter-arrival error at the server vs the recording (× 1/speed), in µs.
import json, sys
def times(p):
    out = []
    for l in open(p):
        d = json.loads(l)
        if "t" in d: out.append(d["t"])
    return sorted(out)
r, a, s = times(sys.argv[1]), times(sys.argv[2]), float(sys.argv[3])
print("recorded", len(r), "arrived", len(a))
n = min(len(r), len(a))
gap = sorted(abs((a[i]-a[i-1]) - (r[i]-r[i-1])/s)/1e3 for i in range(1, n))
d = sorted((a[i] - r[i]/s) for i in range(n))
med = d[n//2]  # the run's start: the median of arrival − scheduled
off = sorted(abs(a[i] - r[i]/s - med)/1e3 for i in range(n))
q = lambda v, p: v[min(len(v)-1, int(p*len(v)))]
print("inter-arrival error µs: p50 %.0f p99 %.0f p99.9 %.0f max %.0f" % (q(gap,.5), q(gap,.99), q(gap,.999), gap[-1]))
print("arrival error µs (vs schedule, median offset removed): p50 %.0f p99 %.0f max %.0f" % (q(off,.5), q(off,.99), off[-1]))
