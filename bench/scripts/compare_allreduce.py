#!/usr/bin/env python3
"""Reads nccl-tests style tables from `gradsync bench` and torch_allreduce.py logs and prints, per
size, gradsync's busbw as a share of PyTorch's and the time difference per call, against the goal:
busbw >= 98% of PyTorch's at 16 MiB..1 GiB, and at 1 MiB at most 3 us more per call.

  compare_allreduce.py TORCH_LOG GRADSYNC_LOG [GRADSYNC_LOG...]
"""
import sys


def rows(path):
    """{size: (time_us, busbw)} of the first table in the file; torch logs give the per-call columns."""
    out = {}
    for line in open(path, errors="replace"):
        if line.startswith("[rank"):
            continue
        f = line.split()
        if len(f) >= 9 and f[0].isdigit() and f[3] == "avg":
            out.setdefault(int(f[0]), (float(f[4]), float(f[7])))
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    torch = rows(sys.argv[1])
    ok = True
    compared = 0
    for path in sys.argv[2:]:
        ours = rows(path)
        print(f"# {path} against {sys.argv[1]} (per-call timing on both sides)")
        print("#%12s %12s %12s %10s %10s %9s  %s" % ("size", "torch us", "gradsync us", "torch bus", "ours bus", "share", "goal"))
        for size in sorted(ours):
            if size not in torch:
                continue
            (tt, tb), (ot, ob) = torch[size], ours[size]
            share = ob / tb if tb else 0
            if size == 1 << 20:
                met = ot - tt <= 3.0
                goal = f"{ot - tt:+.1f} us (<= +3 us): {'met' if met else 'MISSED'}"
            elif (16 << 20) <= size <= (1 << 30):
                met = share >= 0.98
                goal = f"{share:.1%} (>= 98%): {'met' if met else 'MISSED'}"
            else:
                met, goal = True, "-"
            ok &= met
            compared += 1
            print(" %12d %12.1f %12.1f %10.2f %10.2f %8.1f%%  %s" % (size, tt, ot, tb, ob, 100 * share, goal))
    if compared == 0:
        print("# goal NOT EVALUATED: no size appears in both the PyTorch table and a gradsync table")
        sys.exit(1)
    print("# goal " + ("met" if ok else "MISSED") + f" ({compared} rows compared)")


if __name__ == "__main__":
    main()
