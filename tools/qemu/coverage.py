#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make coverage's host side: gcov's data from the guest, lcov's report.

Usage: coverage.py MODULE_BUILD DATA_LOG REPORT_DIR

The guest (tools/qemu/init, cask.coverage=1) writes every .gcda file of
/sys/kernel/debug/gcov, after the modules have unloaded (gcov keeps an
unloaded module's counts), as a base64 tar.gz between "### gcov begin N"
and "### gcov end" on its third serial port (DATA_LOG). They go beside
the .gcno files of the module build (built with CASK_COVERAGE=y, see the
drivers' Kbuild files); lcov then counts lines and branches, files that
never ran included (at zero). Prints per driver and per file lines and
branches covered/total/%, and the functions with the lowest share of
their lines covered; the same in REPORT_DIR/summary.txt, lcov's tracefile
in REPORT_DIR/cask.info and genhtml's report in REPORT_DIR/html/.
Exit status 1 when there is no data, fewer .gcda files came back than
the guest sent, a driver of DRIVERS has none, or lcov fails.
"""
import base64
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile

DRIVERS = ("core", "logger", "binder", "ashmem", "lmk", "power")
LCOV_RC = ["--rc", "lcov_branch_coverage=1"]


def unpack(data_log, mods):
    """Put the guest's .gcda files beside the .gcno files; return how many,
    0 if fewer came back than the guest sent."""
    with open(data_log, errors="replace") as f:
        text = f.read().replace("\r", "")
    m = re.search(r"^### gcov begin (\d+)\n(.*?)^### gcov end$", text, re.M | re.S)
    if not m:
        print("coverage: no gcov data in %s (did the guest finish?)" % data_log)
        return 0
    for old in find(mods, ".gcda"):
        os.unlink(old)
    n = got = 0
    raw = base64.b64decode("".join(m.group(2).split()))
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as tar:
        for member in tar.getmembers():
            if not member.isfile() or not member.name.endswith(".gcda"):
                continue
            got += 1
            # .../<module build>/drivers/<driver>/<file>.gcda in the
            # guest's debugfs: the path the objects were built at.
            rel = member.name[member.name.rfind("/drivers/") + 1:]
            if not rel.startswith("drivers/") or "/tests/" in rel:
                continue
            dest = os.path.join(mods, rel)
            if not os.path.exists(dest[:-len(".gcda")] + ".gcno"):
                print("coverage: %s has no .gcno beside it; skipped" % rel)
                continue
            with open(dest, "wb") as out:
                shutil.copyfileobj(tar.extractfile(member), out)
            n += 1
    print("coverage: %d .gcda files from the guest (it counted %s)" % (n, m.group(1)))
    if got < int(m.group(1)):
        print("coverage: FAIL: %d of the guest's %s .gcda files came back" % (got, m.group(1)))
        return 0
    return n


def drivers_without_data(mods):
    """The drivers of DRIVERS with no .gcda file (tests' aside): never
    loaded, or their data lost; lcov would show them at 0%."""
    return [d for d in DRIVERS
            if not any("/tests/" not in p for p in find(os.path.join(mods, "drivers", d), ".gcda"))]


def find(top, suffix):
    for root, _, files in os.walk(top):
        for name in files:
            if name.endswith(suffix):
                yield os.path.join(root, name)


def lcov(*args):
    proc = subprocess.run(["lcov", "--quiet"] + LCOV_RC + list(args),
                          capture_output=True, text=True)
    if proc.returncode:
        print("coverage: lcov %s failed:\n%s%s" % (" ".join(args), proc.stdout, proc.stderr))
        raise SystemExit(1)


class FileCov:
    def __init__(self, path):
        self.path = path
        self.lines = {}       # line -> count
        self.branches = []    # taken counts (0 for "-")
        self.functions = []   # (first line, name)
        self.calls = {}       # name -> count


def parse_info(path):
    files = []
    cur = None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            tag, _, val = line.partition(":")
            if tag == "SF":
                cur = FileCov(val)
                files.append(cur)
            elif cur is None:
                continue
            elif tag == "DA":
                num, count = val.split(",")[:2]
                cur.lines[int(num)] = cur.lines.get(int(num), 0) + int(count)
            elif tag == "BRDA":
                taken = val.split(",")[3]
                cur.branches.append(0 if taken == "-" else int(taken))
            elif tag == "FN":
                num, name = val.split(",", 1)
                cur.functions.append((int(num), name))
            elif tag == "FNDA":
                count, name = val.split(",", 1)
                cur.calls[name] = cur.calls.get(name, 0) + int(count)
    return files


def pct(hit, total):
    return 100.0 * hit / total if total else 100.0


def row(name, lh, lf, bh, bf):
    return "  %-28s %5d/%-5d %5.1f%%   %5d/%-5d %5.1f%%" % (
        name, lh, lf, pct(lh, lf), bh, bf, pct(bh, bf))


def function_rows(files, mods):
    """Each function's lines: from its first line to the next function's."""
    out = []
    for fc in files:
        starts = sorted(fc.functions)
        for i, (first, name) in enumerate(starts):
            end = starts[i + 1][0] if i + 1 < len(starts) else 1 << 30
            lines = [c for n, c in fc.lines.items() if first <= n < end]
            if not lines:
                continue
            hit = sum(1 for c in lines if c)
            out.append((pct(hit, len(lines)), -(len(lines) - hit), name,
                        os.path.relpath(fc.path, mods), hit, len(lines),
                        fc.calls.get(name, 0)))
    return sorted(out)


def report(files, mods):
    lines = []
    head = "  %-28s %-19s   %-19s" % ("", "lines", "branches")
    lines.append(head)
    total = [0, 0, 0, 0]
    per_file = []
    for drv in DRIVERS:
        sums = [0, 0, 0, 0]
        mine = [fc for fc in files
                if os.path.relpath(fc.path, mods).startswith("drivers/%s/" % drv)]
        for fc in sorted(mine, key=lambda f: f.path):
            lf, lh = len(fc.lines), sum(1 for c in fc.lines.values() if c)
            bf, bh = len(fc.branches), sum(1 for c in fc.branches if c)
            per_file.append(row(os.path.relpath(fc.path, mods), lh, lf, bh, bf))
            for i, v in enumerate((lh, lf, bh, bf)):
                sums[i] += v
        per_file.append("")
        lines.append(row(drv, *sums) + ("" if pct(sums[0], sums[1]) >= 85 or not sums[1]
                                         else "   below 85% of lines"))
        for i in range(4):
            total[i] += sums[i]
    lines.append(row("all drivers", *total))
    lines.append("")
    lines.append("Per file:")
    lines.append(head)
    lines.extend(per_file)
    funcs = [f for f in function_rows(files, mods) if f[5] >= 5 and f[0] < 100]
    lines.append("Lowest-covered functions (5 lines or more; lines covered, calls):")
    for p, _, name, path, hit, n, calls in funcs[:25]:
        lines.append("  %5.1f%% %4d/%-4d %8d  %s (%s)" % (p, hit, n, calls, name, path))
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    mods, data_log, out = (os.path.abspath(a) for a in sys.argv[1:])
    if not unpack(data_log, mods):
        return 1
    status = 0
    missing = drivers_without_data(mods)
    if missing:
        print("coverage: FAIL: no .gcda file of %s" % ", ".join(missing))
        status = 1
    os.makedirs(out, exist_ok=True)
    base, run, info = (os.path.join(out, n) for n in ("base.info", "run.info", "cask.info"))
    drivers = os.path.join(mods, "drivers")
    # Every instrumented file at zero, then the counts: a file that never
    # ran shows as 0%, not as missing.
    lcov("--capture", "--initial", "--directory", drivers, "--output-file", base)
    lcov("--capture", "--directory", drivers, "--output-file", run)
    lcov("--add-tracefile", base, "--add-tracefile", run, "--output-file", info + ".all")
    lcov("--extract", info + ".all", os.path.join(drivers, "*"), "--output-file", info)
    lcov("--remove", info, "*/tests/*", "--output-file", info)
    text = report(parse_info(info), mods)
    sys.stdout.write(text)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text)
    proc = subprocess.run(["genhtml", "--quiet", "--branch-coverage", "--output-directory",
                           os.path.join(out, "html"), info], capture_output=True, text=True)
    if proc.returncode:
        print("coverage: genhtml failed:\n" + proc.stdout + proc.stderr)
        return 1
    print("coverage: %s/summary.txt, %s/html/index.html" % (out, out))
    return status


if __name__ == "__main__":
    sys.exit(main())
