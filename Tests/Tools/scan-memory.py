#!/usr/bin/env python3
"""Counts where needles occur in a live process's readable memory (/proc/PID/mem).

    scan-memory.py PID NEEDLES_FILE

NEEDLES_FILE holds one needle per line as LABEL<TAB>HEX. Prints one line per needle that was
found: LABEL<TAB>COUNT<TAB>REGIONS. Needs the right to ptrace PID (root, or the same user for
a dumpable process). Used by the tests that prove a vault lock leaves no plaintext behind.
"""
import sys


def regions(pid):
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            name = fields[5] if len(fields) > 5 else "[anon]"
            if fields[1][0] == "r" and name not in ("[vvar]", "[vsyscall]", "[vvar_vclock]"):
                yield start, end, name


def main():
    pid = int(sys.argv[1])
    needles = []
    with open(sys.argv[2]) as listing:
        for line in listing:
            label, hexed = line.rstrip("\n").split("\t")
            needles.append((label, bytes.fromhex(hexed)))
    found = {}
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as memory:
        for start, end, name in regions(pid):
            try:
                memory.seek(start)
                data = memory.read(end - start)
            except OSError:
                continue
            for label, needle in needles:
                at = data.find(needle)
                while at >= 0:
                    count, places = found.get(label, (0, set()))
                    found[label] = (count + 1, places | {name})
                    at = data.find(needle, at + 1)
    for label, (count, places) in sorted(found.items()):
        print(f"{label}\t{count}\t{','.join(sorted(places))}")


main()
