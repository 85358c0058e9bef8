#!/usr/bin/env python3
"""Plants hand-written mutants one at a time and runs their package's tests.

usage: scripts/plant.py [options] MUTANTS_FILE... [PACKAGE] [-run REGEXP]
  e.g. scripts/plant.py scripts/mutants/*-checks.txt
       scripts/plant.py scripts/mutants/load-merge.txt ./load

Each line of MUTANTS_FILE is  file|||old|||new  (\\n and \\t escapes allowed);
blank lines and lines starting with # are skipped, but for "# plant: ARGS":
go test flags for that file's mutants (e.g. -skip of a long benchmark-like
test that checks nothing the mutants touch, or -run of the tests that do). For each mutant the
script replaces the one occurrence of old in file (in a copy handed to the
go command with -overlay: the work tree is never touched, so mutants can
be planted in parallel and an interrupted run leaves nothing behind), runs
go test -failfast on PACKAGE (default: the mutated file's own package), and
prints KILLED (a test failed), SURVIVED (all passed: a missing test, or an
equivalent mutant), BUILDFAIL (the mutant does not compile) or STALE (old
does not occur exactly once). It exits 1 unless every mutant was killed.

options:
  -j N           plant N mutants at once (default 1; the tests of one
                 package run in parallel already)
  --share K      plant only a fixed share: the K mutants that come first in
                 an order shuffled by --seed (CI: the commit), so every
                 run checks the same number and successive commits rotate
                 through the whole set
  --seed S       the seed of --share (default: git rev-parse HEAD)
  --list         print the selected mutants, plant nothing

gremlins (scripts/mutation.sh) finds mutants mechanically; these files keep
the mutants we fear by name: every response check of the load clients
switched off or its reason blanked (load/checksites_test.go wants both for
every check site), the body limits moved, the merge dropping a field.
"""
import concurrent.futures
import hashlib
import json
import shlex
import os
import subprocess
import sys
import tempfile
import time


def parse_args(argv):
    opts = {'j': 1, 'share': 0, 'seed': None, 'list': False, 'pkg': None, 'run': None, 'files': []}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ('-j', '--share', '--seed', '-run'):
            if i + 1 >= len(argv):
                sys.exit(f'{a} needs a value\n\n{__doc__}')
            v = argv[i + 1]
            key = {'-j': 'j', '--share': 'share', '--seed': 'seed', '-run': 'run'}[a]
            opts[key] = int(v) if key in ('j', 'share') else v
            i += 2
            continue
        if a == '--list':
            opts['list'] = True
        elif a.startswith('./') or a == '.':
            opts['pkg'] = a
        elif a.startswith('-'):
            sys.exit(f'unknown option {a}\n\n{__doc__}')
        else:
            opts['files'].append(a)
        i += 1
    if not opts['files']:
        sys.exit(__doc__)
    return opts


def read_mutants(path):
    out = []
    args = []
    for n, line in enumerate(open(path), 1):
        line = line.rstrip('\n')
        if line.startswith('# plant:'):
            args = shlex.split(line[len('# plant:'):])
            continue
        if not line.strip() or line.startswith('#'):
            continue
        parts = line.split('|||')
        if len(parts) != 3:
            sys.exit(f'{path}:{n}: want file|||old|||new')
        f, old, new = [p.replace('\\n', '\n').replace('\\t', '\t') for p in parts]
        out.append({'where': f'{path}:{n}', 'line': line, 'file': f, 'old': old, 'new': new, 'args': args})
    return out


def plant(m, pkg, run, tmp):
    """Plants m in an overlay and runs the tests; returns (status, seconds)."""
    src = open(m['file']).read()
    if src.count(m['old']) != 1:
        return 'STALE', 0.0, f"{m['old']!r} occurs {src.count(m['old'])} times"
    d = tempfile.mkdtemp(dir=tmp)
    mutated = os.path.join(d, os.path.basename(m['file']))
    with open(mutated, 'w') as w:
        w.write(src.replace(m['old'], m['new']))
    overlay = os.path.join(d, 'overlay.json')
    with open(overlay, 'w') as w:
        json.dump({'Replace': {os.path.abspath(m['file']): mutated}}, w)
    pkg = pkg or './' + os.path.dirname(m['file'])
    cmd = ['go', 'test', '-count=1', '-failfast', '-timeout=5m', '-overlay=' + overlay, pkg]
    cmd += m['args']
    if run:
        cmd += ['-run', run]
    t = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    secs = time.time() - t
    out = r.stdout + r.stderr
    if 'build failed' in out or 'setup failed' in out:
        first = next((l for l in out.splitlines() if '.go:' in l), '')
        return 'BUILDFAIL', secs, first.strip()
    if r.returncode:
        failed = [l.split()[2] for l in out.splitlines() if l.startswith('--- FAIL')]
        return 'KILLED', secs, ' '.join(failed[:3]) or 'the package failed'
    return 'SURVIVED', secs, ''


def main():
    o = parse_args(sys.argv[1:])
    ms = [m for f in o['files'] for m in read_mutants(f)]
    total = len(ms)
    if o['share'] and o['share'] < total:
        seed = o['seed'] or subprocess.run(['git', 'rev-parse', 'HEAD'], capture_output=True, text=True).stdout.strip()
        ms.sort(key=lambda m: hashlib.sha256((seed + '\n' + m['line']).encode()).hexdigest())
        ms = ms[:o['share']]
        print(f'planting {len(ms)} of {total} mutants (seed {seed[:12]})', flush=True)
    if o['list']:
        for m in ms:
            print(m['where'], m['line'])
        return
    bad = 0
    counts = {}
    start = time.time()
    with tempfile.TemporaryDirectory(prefix='plant-') as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=max(1, o['j'])) as pool:
        futs = [(m, pool.submit(plant, m, o['pkg'], o['run'], tmp)) for m in ms]
        for m, fut in futs:
            status, secs, why = fut.result()
            counts[status] = counts.get(status, 0) + 1
            if status != 'KILLED':
                bad += 1
            print(f"{status:9} {m['where']}: {m['file']}: {m['old'].strip()!r} -> {m['new'].strip()!r}"
                  f" ({secs:.0f} s{'; ' + why if why else ''})", flush=True)
    summary = ', '.join(f'{v} {k.lower()}' for k, v in sorted(counts.items()))
    print(f'{len(ms)} planted: {summary}; {time.time() - start:.0f} s')
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
