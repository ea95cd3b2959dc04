#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the results a cask guest wrote to its results log.

KUnit sections are parsed by the kernel tree's own tools/testing/kunit/
kunit.py; kselftest sections are KTAP from kselftest_harness.h. Prints one
line per suite with its seconds, the failures (a program stopped at its
time limit names the case it was in), and a last line "N passed, N failed,
N skipped".
OTHER_FAILURES adds failures the logs cannot show (lint, a splat, a guest
that never finished). Exit status 1 if anything failed.
"""
import json
import os
import re
import subprocess
import sys
import tempfile


class Section:
    """One '### kunit NAME' or '### selftest NAME' section of a results log:
    its output lines, exit status (None if the guest never wrote one), the
    seconds it took, and the limit it was stopped at (tools/qemu/init)."""

    def __init__(self, kind, name):
        self.kind, self.name = kind, name
        self.lines = []
        self.rc = self.seconds = self.limit = None
        self.stuck = False


def sections(path):
    """Yield a Section per program, then one of kind 'end' for the end marker."""
    cur = None
    with open(path, errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\r\n")
            m = re.match(r"^### (\S+)(?: (\S+))?$", line)
            if not m:
                if cur:
                    cur.lines.append(line)
                continue
            what, arg = m.group(1), m.group(2)
            if what in ("kunit", "selftest"):
                if cur:
                    yield cur
                cur = Section(what, arg)
            elif cur and what == "limit":
                cur.limit = int(arg)
            elif cur and what == "stuck":
                cur.stuck = True
            elif cur and what == "time":
                cur.seconds = int(arg)
            elif cur and what == "rc":
                cur.rc = int(arg)
                yield cur
                cur = None
            elif what == "end":
                yield Section("end", None)
    if cur:
        yield cur


def running_case(lines):
    """The kselftest_harness case that had started but not finished: its
    '#  RUN name ...' line has no '#  OK name' or '#  FAIL name' after it.
    None for KUnit, whose results appear only when insmod returns (the
    console log shows its cases as they run)."""
    started = None
    for line in lines:
        m = re.match(r"^#\s+RUN\s+(\S+)", line)
        if m:
            started = m.group(1)
            continue
        m = re.match(r"^#\s+(OK|FAIL|SKIP)\s+(\S+)", line)
        if m and m.group(2) == started:
            started = None
    return started


def kunit_counts(kunit_py, lines):
    """Leaf test cases of every KTAP document in lines (debugfs gives one per
    suite, and kunit.py parse reads only the first of a file), summed."""
    docs = []
    for line in lines:
        if line.startswith(("KTAP version", "TAP version")) or not docs:
            docs.append([])
        docs[-1].append(line)
    totals = [0, 0, 0, [], []]
    for doc in docs:
        for i, v in enumerate(kunit_doc_counts(kunit_py, doc)):
            totals[i] += v
    return tuple(totals)


def kunit_doc_counts(kunit_py, lines):
    """Leaf test cases of one KUnit KTAP document, via kunit.py parse --json."""
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        log = f.name
    jfile = log + ".json"
    try:
        proc = subprocess.run([sys.executable, kunit_py, "parse", "--json=" + jfile, log],
                              capture_output=True, text=True)
        summary = [l for l in proc.stdout.splitlines() if "Ran " in l or "FAILED" in l]
        if not os.path.exists(jfile):
            return 0, 1, 0, ["kunit.py parse failed: " + proc.stdout[-500:]], summary
        with open(jfile) as jf:
            data = json.load(jf)
    finally:
        for p in (log, jfile):
            if os.path.exists(p):
                os.unlink(p)
    passed = failed = skipped = 0
    failures = []
    cases = []

    def walk(group):
        cases.extend(group.get("test_cases", []))
        for sub in group.get("sub_groups", []):
            walk(sub)
    walk(data)
    for case in cases:
        status = case.get("status")
        if status == "PASS":
            passed += 1
        elif status == "SKIP":
            skipped += 1
        else:
            failed += 1
            failures.append(case.get("name", "?"))
    if not cases:
        failed += 1
        failures.append("no test cases parsed")
    return passed, failed, skipped, failures, summary


def ktap_counts(lines):
    """Top-level results of one kselftest program's KTAP output."""
    passed = failed = skipped = 0
    failures = []
    plan = None
    for line in lines:
        m = re.match(r"^1\.\.(\d+)", line)
        if m and plan is None:
            plan = int(m.group(1))
        m = re.match(r"^(not ok|ok) \d+ (.*)$", line)
        if not m:
            continue
        desc = m.group(2)
        if re.search(r"#\s*SKIP", desc, re.I):
            skipped += 1
        elif m.group(1) == "ok" or re.search(r"#\s*XFAIL", desc, re.I):
            passed += 1
        else:
            failed += 1
            failures.append(desc)
    return passed, failed, skipped, failures, plan


def count_log(path, kunit_py, totals):
    """Print one line per suite of one guest's results log; add to totals."""
    complete = False
    if not os.path.exists(path):
        print("      FAILED: no results log %s" % path)
        totals[1] += 1
        return
    for sec in sections(path):
        if sec.kind == "end":
            complete = True
            continue
        kind, name, lines, rc = sec.kind, sec.name, sec.lines, sec.rc
        if kind == "kunit":
            p, f, s, fails, _ = kunit_counts(kunit_py, lines)
            if rc not in (0, None) and f == 0:
                f, fails = 1, ["insmod failed with status %d" % rc]
        else:
            p, f, s, fails, plan = ktap_counts(lines)
            done = p + f + s
            if sec.limit is not None:
                # reported below, with the case it was in
                pass
            elif rc is None:
                f, fails = f + 1, fails + ["did not finish"]
            elif plan is not None and done < plan:
                f, fails = f + 1, fails + ["ran %d of %d planned tests" % (done, plan)]
            elif rc not in (0, 4) and f == 0:
                # 4 is KSFT_SKIP: everything skipped
                f, fails = 1, fails + ["exited with status %d" % rc]
        if sec.limit is not None:
            case = running_case(lines)
            f += 1
            fails.append("stopped at its time limit of %d s (tools/qemu/limits)%s%s" % (
                sec.limit, " while running " + case if case else "",
                "; it survived SIGKILL and the guest powered off" if sec.stuck else ""))
        took = "%5ds" % sec.seconds if sec.seconds is not None else "     "
        print("    %-9s %-26s %3d passed, %d failed, %d skipped %s" % (kind, name, p, f, s, took))
        for x in fails:
            print("      FAILED: %s" % x)
        totals[0] += p
        totals[1] += f
        totals[2] += s
    if not complete:
        print("      FAILED: the guest did not write its end marker")
        totals[1] += 1


def main():
    if len(sys.argv) < 4:
        print("usage: results.py KUNIT_PY OTHER_FAILURES LABEL:RESULTS_LOG...",
              file=sys.stderr)
        return 2
    kunit_py = sys.argv[1]
    other_failures = int(sys.argv[2])
    totals = [0, 0, 0]
    for arg in sys.argv[3:]:
        label, path = arg.split(":", 1)
        print("  kernel %s:" % label)
        count_log(path, kunit_py, totals)
    if other_failures:
        print("      FAILED: %d check(s) outside the guests' tests: lint, or a guest that"
              " splatted or did not finish (see above)" % other_failures)
        totals[1] += other_failures
    if totals[0] + totals[1] + totals[2] == 0:
        print("      FAILED: no test ran")
        totals[1] += 1
    print("%d passed, %d failed, %d skipped" % tuple(totals))
    return 1 if totals[1] else 0


if __name__ == "__main__":
    sys.exit(main())
