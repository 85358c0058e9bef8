# Writes deep.jsonl: 20 nested documents (depth 6, 2-3 keys a level, few
# repeated names, short non-uniform lists): the shape where TOON loses.
import json, random
random.seed(7)
words = ["alpha","beta","gamma","delta","eps","zeta","eta","theta","iota","kappa","lambda","mu"]
def node(depth):
    if depth == 0:
        r = random.random()
        if r < 0.4: return random.randint(0, 10**6)
        if r < 0.7: return random.choice(words) + "-" + str(random.randint(0,999))
        if r < 0.85: return random.random() < 0.5
        return round(random.random()*1000, 3)
    o = {}
    for k in range(random.randint(2, 3)):
        key = random.choice(words) + "_" + str(depth) + str(k)
        if random.random() < 0.2:
            o[key] = [node(max(0, depth-2)) if j % 2 == 0 else random.choice(words) for j in range(random.randint(1,3))]
        else:
            o[key] = node(depth-1)
    return o
with open("deep.jsonl","w") as f:
    for i in range(20):
        f.write(json.dumps(node(6), separators=(",",":"))+"\n")
