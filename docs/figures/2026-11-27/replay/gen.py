# gen.py N RATE OUT: N requests at RATE/s (Poisson arrivals, seeded) as wirebench's request log.
import json, random, sys, base64
n, rate, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
rnd = random.Random(42)
t = 1_764_000_000_000_000_000
with open(out, "w") as f:
    f.write('{"wirebench":"requests/v1"}\n')
    body = base64.b64encode(b'{"first_message":"a","second_message":"b"}').decode()
    for i in range(n):
        t += int(rnd.expovariate(rate) * 1e9)
        k = rnd.random()
        if k < 0.7:
            l = {"t": t, "m": "GET", "u": "/users/%d" % rnd.randint(1, 100), "s": 200}
        elif k < 0.9:
            l = {"t": t, "m": "POST", "u": "/echo", "h": [["Content-Type", "application/json"]], "b": body, "s": 200}
        else:
            l = {"t": t, "m": "GET", "u": "/users/999999", "s": 404}
        f.write(json.dumps(l, separators=(",", ":")) + "\n")
