#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the results a cask guest wrote to its results log.

KUnit sections are parsed by the kernel tree's own tools/testing/kunit/
kunit.py; kselftest sections are KTAP from kselftest_harness.h. Prints one
line per suite with its seconds, the failures (a program stopped at its
time limit names the case it was in), and a last line "N passed, N failed,
N skipped".
A skip counts as one only if tools/qemu/expected-skips lists it, for that
kernel and with that reason, in the section of the run (--skips=check, the
default, for make check; --skips=stock for tools/stock-check.sh); any other
skip is a failure: a test that skips because a module did not load, or a
kernel lost a feature, must not pass unnoticed.
OTHER_FAILURES adds failures the logs cannot show (lint, a splat, a guest
that never finished). Exit status 1 if anything failed.

bench_ratios() reads the ratio lines of `make bench`'s results log (not
counted here: benchmarks decide nothing); `results.py --bench RESULTS_LOG`
prints them as a summary at the end of make bench: each target missed, and
a last line "bench summary: N ratios, N met, N missed".
"""
import fnmatch
import glob
import json
import os
import re
import subprocess
import sys
import tempfile


SKIPS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected-skips")
BENCH_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench")

# Every ratio a benchmark prints with a target, one line each (the format
# of each bench's ratio_line()): "bench ratio DRIVER WHAT = X (target >= Y)"
# or "<= Y"; X "%.3f" (inf or nan where a side measured nothing), Y "%.2f".
BENCH_RATIO = re.compile(r"^bench ratio (\S+) (.+) = (-?\d+\.\d{3}|-?inf|-?nan)"
                         r" \(target (>=|<=) (\d+\.\d{2})\)$")


class Expected:
    """One line of an expected-skips section: the kernel (a glob matched
    against the run's label: debug, debug-unpatched, stock-6.12...), the
    program (KUnit module or selftest), the case and the reason (globs)."""

    def __init__(self, kernel, program, case, reason, where):
        self.kernel, self.program, self.case, self.reason = kernel, program, case, reason
        self.where = where

    def matches(self, kernel, program, case, reason):
        return (fnmatch.fnmatchcase(kernel, self.kernel) and program == self.program and
                fnmatch.fnmatchcase(case, self.case) and
                fnmatch.fnmatchcase(reason, self.reason))


def load_expected(path, section):
    """The entries of [section] in path: lines "KERNEL PROGRAM CASE REASON"."""
    entries = []
    cur = None
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^\[(\S+)\]$", line)
            if m:
                cur = m.group(1)
                continue
            if cur != section:
                continue
            parts = line.split(None, 3)
            if len(parts) < 4:
                raise ValueError("%s:%d: want KERNEL PROGRAM CASE REASON" % (path, n))
            entries.append(Expected(*parts, where="%s:%d" % (path, n)))
    return entries


def is_expected(expected, kernel, program, case, reason):
    return any(e.matches(kernel, program, case, reason) for e in expected)


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
                cur.limit = float(arg)
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
    suite, and kunit.py parse reads only the first of a file), summed; the
    skips as ("suite.case", reason)."""
    docs = []
    for line in lines:
        if line.startswith(("KTAP version", "TAP version")) or not docs:
            docs.append([])
        docs[-1].append(line)
    totals = [0, 0, [], [], []]
    for doc in docs:
        for i, v in enumerate(kunit_doc_counts(kunit_py, doc)):
            totals[i] += v
    return tuple(totals)


def kunit_skip_reasons(lines):
    """The reason of each skipped case of a KUnit KTAP document, by case
    name ("ok 3 vote_rules # SKIP no CONFIG_SUSPEND"; kunit.py's JSON has
    the status only)."""
    reasons = {}
    for line in lines:
        m = re.match(r"^\s*ok \d+ (\S+)\s*#\s*SKIP\b\s*(.*)$", line, re.I)
        if m:
            reasons[m.group(1)] = m.group(2).strip()
    return reasons


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
            return 0, 1, [], ["kunit.py parse failed: " + proc.stdout[-500:]], summary
        with open(jfile) as jf:
            data = json.load(jf)
    finally:
        for p in (log, jfile):
            if os.path.exists(p):
                os.unlink(p)
    passed = failed = 0
    skipped = []
    failures = []
    cases = []
    reasons = kunit_skip_reasons(lines)

    def walk(group, suite):
        for case in group.get("test_cases", []):
            cases.append((suite, case))
        for sub in group.get("sub_groups", []):
            walk(sub, sub.get("name") or suite)
    walk(data, "")
    for suite, case in cases:
        status = case.get("status")
        name = case.get("name", "?")
        if status == "PASS":
            passed += 1
        elif status == "SKIP":
            skipped.append(("%s.%s" % (suite, name) if suite else name,
                            reasons.get(name, "")))
        else:
            failed += 1
            # kunit.py names a subtest missing from the plan ""
            failures.append(name or "a subtest of %s missing (fewer results than its plan)"
                            % (suite or "the suite"))
    if not cases:
        failed += 1
        failures.append("no test cases parsed")
    return passed, failed, skipped, failures, summary


def ktap_counts(lines):
    """Top-level results of one kselftest program's KTAP output; the skips
    as (case, reason), a whole program skipped ("1..0 # SKIP why") as the
    case "*"."""
    passed = failed = 0
    skipped = []
    failures = []
    plan = None
    for line in lines:
        m = re.match(r"^1\.\.(\d+)(.*)$", line)
        if m and plan is None:
            plan = int(m.group(1))
            w = re.match(r"^\s*#\s*SKIP\s*(.*)$", m.group(2), re.I)
            if plan == 0 and w:
                skipped.append(("*", w.group(1).strip()))
        m = re.match(r"^(not ok|ok) \d+ (.*)$", line)
        if not m:
            continue
        desc = m.group(2)
        w = re.match(r"^(.*?)\s*#\s*SKIP\b\s*(.*)$", desc, re.I)
        if m.group(1) == "not ok":
            # a failure whatever directive follows ("not ok 3 x # SKIP why";
            # kselftest writes an expected failure as "ok 3 x # XFAIL")
            failed += 1
            failures.append(desc)
        elif w:
            skipped.append((w.group(1).strip(), w.group(2).strip()))
        else:
            passed += 1
    return passed, failed, skipped, failures, plan


def count_log(path, kunit_py, totals, label="debug", expected=(), section="check"):
    """Print one line per suite of one guest's results log; add to totals.
    A skip is counted as one only if expected (load_expected()) lists it for
    kernel label; any other is a failure."""
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
            if sec.limit is not None:
                pass  # reported below
            elif rc is None:
                f, fails = f + 1, fails + ["did not finish"]
            elif rc != 0 and f == 0:
                f, fails = 1, ["insmod failed with status %d" % rc]
            elif p + f + len(s) == 0:
                f, fails = 1, ["no KUnit results"]
        else:
            p, f, s, fails, plan = ktap_counts(lines)
            done = p + f + len(s)
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
            elif plan is None and done == 0:
                # not even "1..0 # SKIP why": it never got to its tests
                f, fails = f + 1, fails + ["no KTAP results"]
        skips = s
        s = 0
        for case, reason in skips:
            if is_expected(expected, label, name, case, reason):
                s += 1
                continue
            f += 1
            fails.append("unexpected skip of %s (\"%s\"): not in tools/qemu/expected-skips"
                         " [%s] for kernel %s" % (case, reason, section, label))
        if sec.limit is not None:
            case = running_case(lines)
            f += 1
            fails.append("stopped at its time limit of %g s (tools/qemu/limits)%s%s" % (
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


def bench_drivers():
    """The drivers that have a benchmark: tools/bench/DRIVER_bench.c."""
    return sorted(os.path.basename(p)[:-len("_bench.c")]
                  for p in glob.glob(os.path.join(BENCH_DIR, "*_bench.c")))


def bench_ratios(lines, drivers=None):
    """The ratio lines among lines (a benchmark's output): a list of
    (driver, what, value, op, target, met), and the lines that start with
    "bench ratio " but are not one (another format, or a driver not in
    drivers, bench_drivers() by default)."""
    drivers = bench_drivers() if drivers is None else drivers
    ratios, bad = [], []
    for line in lines:
        line = line.rstrip("\r\n")
        if not line.startswith("bench ratio "):
            continue
        m = BENCH_RATIO.match(line)
        if not m or m.group(1) not in drivers:
            bad.append(line)
            continue
        value, target = float(m.group(3)), float(m.group(5))
        met = value <= target if m.group(4) == "<=" else value >= target
        ratios.append((m.group(1), m.group(2), value, m.group(4), target, met))
    return ratios, bad


def bench_summary(lines, drivers=None):
    """The summary make bench ends with: the misses, any malformed ratio
    line, and the counts, as a list of lines."""
    ratios, bad = bench_ratios(lines, drivers)
    out = []
    for driver, what, value, op, target, met in ratios:
        if not met:
            out.append("  missed: %s %s = %.3f (target %s %.2f)"
                       % (driver, what, value, op, target))
    for line in bad:
        out.append("  not a ratio line: %s" % line)
    missed = sum(1 for r in ratios if not r[5])
    out.append("bench summary: %d ratios, %d met, %d missed%s"
               % (len(ratios), len(ratios) - missed, missed,
                  ", %d malformed" % len(bad) if bad else ""))
    return out


def main():
    args = sys.argv[1:]
    if args and args[0] == "--bench":
        if len(args) != 2:
            print("usage: results.py --bench RESULTS_LOG", file=sys.stderr)
            return 2
        with open(args[1], errors="replace") as f:
            print("\n".join(bench_summary(f.read().splitlines())))
        return 0
    section = "check"
    if args and args[0].startswith("--skips="):
        section = args.pop(0)[len("--skips="):]
    if len(args) < 3:
        print("usage: results.py [--skips=check|stock] KUNIT_PY OTHER_FAILURES"
              " LABEL:RESULTS_LOG...\n       results.py --bench RESULTS_LOG",
              file=sys.stderr)
        return 2
    kunit_py = args[0]
    other_failures = int(args[1])
    expected = load_expected(SKIPS_FILE, section)
    totals = [0, 0, 0]
    for arg in args[2:]:
        label, path = arg.split(":", 1)
        print("  kernel %s:" % label)
        count_log(path, kunit_py, totals, label, expected, section)
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
