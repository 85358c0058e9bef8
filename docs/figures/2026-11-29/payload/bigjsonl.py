# Writes big.jsonl, JSON lines of shipments (an id, a timestamp, a route
# object, a status, 1-5 parcels, a bool) up to SIZE bytes (default 1e9):
# the 1 GB file docs/payload.md measures. python3 bigjsonl.py [SIZE]
import random, sys
random.seed(11)
size = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**9
airports = ["DUB","AMS","ATH","VIE","LIS","OSL","HEL","MAD","CDG","FRA"]
statuses = ["created","in_transit","delivered","returned"]
r = random.randrange
n = 0
with open("big.jsonl", "w") as f:
    i = 0
    while n < size:
        parcels = ",".join('{"sku":"P-%04d","kg":%d.%02d,"fragile":%s}' % (r(10000), r(30), r(100), "true" if r(2) else "false")
                           for _ in range(1 + r(5)))
        line = ('{"id":%d,"created":"2026-%02d-%02dT%02d:%02d:%02dZ","route":{"from":"%s","to":"%s","legs":%d},'
                '"status":"%s","parcels":[%s],"insured":%s}\n') % (
            1000 + i, 1 + r(12), 1 + r(28), r(24), r(60), r(60), random.choice(airports), random.choice(airports),
            1 + r(3), random.choice(statuses), parcels, "true" if r(2) else "false")
        f.write(line)
        n += len(line)
        i += 1
print(i, "lines,", n, "bytes")
