#!/usr/bin/env python3
"""Plants hand-written mutants one at a time and runs a package's tests.

usage: scripts/plant.py MUTANTS_FILE PACKAGE [-run REGEXP]
  e.g. scripts/plant.py scripts/mutants/load-checks.txt ./load

Each line of MUTANTS_FILE is  file|||old|||new  (\\n and \\t escapes allowed);
blank lines and lines starting with # are skipped. For each mutant the
script replaces the one occurrence of old in file, runs go test on PACKAGE,
and restores the file with git checkout, so every file named must be
committed first (the script refuses otherwise). It prints KILLED (a test
failed), SURVIVED (all passed: a missing test, or an equivalent mutant) or
BUILDFAIL per mutant, and exits 1 if any survived.

gremlins (scripts/mutation.sh) finds mutants mechanically; these files keep
the mutants we fear by name: every response check of the load engine
switched off, the body limits moved, the merge dropping a field.
"""
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    path, pkg, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    survived = 0
    for n, line in enumerate(open(path), 1):
        line = line.rstrip('\n')
        if not line.strip() or line.startswith('#'):
            continue
        parts = line.split('|||')
        if len(parts) != 3:
            sys.exit(f'{path}:{n}: want file|||old|||new')
        f, old, new = [p.replace('\\n', '\n').replace('\\t', '\t') for p in parts]
        if subprocess.run(['git', 'diff', '--quiet', 'HEAD', '--', f]).returncode:
            sys.exit(f'{f} has uncommitted changes: commit before planting')
        src = open(f).read()
        if src.count(old) != 1:
            print(f'STALE     {path}:{n}: {old!r} occurs {src.count(old)} times in {f}', flush=True)
            survived += 1
            continue
        open(f, 'w').write(src.replace(old, new))
        try:
            r = subprocess.run(['go', 'test', '-count=1', pkg] + extra, capture_output=True, text=True)
        finally:
            subprocess.run(['git', 'checkout', '--', f], check=True)
        out = r.stdout + r.stderr
        if 'build failed' in out or 'setup failed' in out:
            status = 'BUILDFAIL'
        elif r.returncode:
            status = 'KILLED'
        else:
            status = 'SURVIVED'
            survived += 1
        print(f'{status:9} {path}:{n}: {f}: {old.strip()!r} -> {new.strip()!r}', flush=True)
    print(f'{survived} survived')
    sys.exit(1 if survived else 0)


if __name__ == '__main__':
    main()
