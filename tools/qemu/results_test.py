#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of results.py's reading of a guest's results log: the sections
tools/qemu/init writes, time limits, stuck programs, the benchmarks' ratio
lines (and that every bench prints them so); and of coverage.py's
unpacking of the guest's gcov data; and of run-qemu.sh's KCSAN filter on
hand-made consoles (run by tools/lint.sh)."""
import base64
import contextlib
import glob
import io
import math
import re
import subprocess
import os
import sys
import tarfile
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coverage  # noqa: E402
import results  # noqa: E402


# a kernel tree's kunit.py from the cache, if there is one
KUNIT_PY = next(iter(sorted(glob.glob(os.path.expanduser(
    os.path.join(os.environ.get("CASK_CACHE", "~/.cache/cask"),
                 "src-*/tools/testing/kunit/kunit.py"))))), "/nonexistent/kunit.py")


def count(text, label="debug", skips="", kunit_py="/nonexistent/kunit.py"):
    """count_log() on text for kernel label, with skips as the expected-skips
    file's [check] section: (printed lines, [passed, failed, skipped])."""
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
        f.write(text)
    with tempfile.NamedTemporaryFile("w", suffix=".skips", delete=False) as e:
        e.write("[check]\n" + skips)
    totals = [0, 0, 0]
    out = io.StringIO()
    try:
        expected = results.load_expected(e.name, "check")
        with contextlib.redirect_stdout(out):
            results.count_log(f.name, kunit_py, totals, label, expected)
    finally:
        os.unlink(f.name)
        os.unlink(e.name)
    return out.getvalue(), totals


PASSING = """### selftest cell_test
TAP version 13
1..2
#  RUN           cell.a ...
#            OK  cell.a
ok 1 cell.a
#  RUN           cell.b ...
#            OK  cell.b
ok 2 cell.b
### time 12
### rc 0
"""


class Results(unittest.TestCase):
    def test_pass_with_time(self):
        out, totals = count(PASSING + "### end\n")
        self.assertEqual(totals, [2, 0, 0])
        self.assertIn("   12s", out)

    def test_limit_names_running_case(self):
        out, totals = count("""### selftest lxc_test
TAP version 13
1..3
#  RUN           lxc.one ...
#            OK  lxc.one
ok 1 lxc.one
#  RUN           lxc.two ...
### limit 240
### time 241
### rc 137
### end
""")
        self.assertEqual(totals, [1, 1, 0])
        self.assertIn("time limit of 240 s", out)
        self.assertIn("while running lxc.two", out)
        # one failure for the limit, not a second for the missing results
        self.assertEqual(out.count("FAILED"), 1)

    def test_limit_after_last_case(self):
        out, totals = count("""### selftest t_test
TAP version 13
1..1
#  RUN           t.a ...
#            OK  t.a
ok 1 t.a
### limit 10
### time 10
### rc 137
### end
""")
        self.assertEqual(totals[1], 1)
        self.assertNotIn("while running", out)

    def test_stuck_powers_off(self):
        out, totals = count(PASSING + """### selftest power_test
TAP version 13
1..1
#  RUN           power.x ...
### limit 60
### stuck
""")
        self.assertEqual(totals, [2, 2, 0])
        self.assertIn("while running power.x; it survived SIGKILL", out)
        self.assertIn("did not write its end marker", out)

    def test_fractional_limit(self):
        # CASK_LIMIT_SCALE=1.5 makes fractional limits
        out, totals = count(PASSING + "### selftest lxc_test\nTAP version 13\n1..1\n"
                            "### limit 142.5\n### time 143\n### rc 137\n### end\n")
        self.assertEqual(totals, [2, 1, 0])
        self.assertIn("time limit of 142.5 s", out)

    def test_unfinished_without_limit(self):
        out, totals = count(PASSING + "### selftest x_test\nTAP version 13\n1..1\n")
        self.assertEqual(totals[1], 2)
        self.assertIn("did not finish", out)

    def test_fewer_than_planned(self):
        out, totals = count("### selftest y_test\nTAP version 13\n1..2\nok 1 a\n"
                            "### time 1\n### rc 0\n### end\n")
        self.assertEqual(totals, [1, 1, 0])
        self.assertIn("ran 1 of 2 planned", out)

    def test_no_ktap_fails(self):
        for rc in (0, 4):
            out, totals = count("### selftest z_test\nz: cannot open /dev/cask\n"
                                "### time 0\n### rc %d\n### end\n" % rc)
            self.assertEqual(totals, [0, 1, 0])
            self.assertIn("FAILED: no KTAP results", out)

    def test_kunit_without_results(self):
        out, totals = count("### kunit cask_core_kunit\n### time 1\n### rc 0\n### end\n")
        self.assertEqual(totals, [0, 1, 0])
        self.assertIn("FAILED: no KUnit results", out)

    def test_kunit_unfinished(self):
        out, totals = count(PASSING + "### kunit cask_core_kunit\n")
        self.assertEqual(totals[1], 2)
        self.assertIn("FAILED: did not finish", out)

    @unittest.skipUnless(os.path.exists(KUNIT_PY), "no kernel tree's kunit.py")
    def test_kunit_missing_subtest_named(self):
        out, totals = count("### kunit cask_core_kunit\nKTAP version 1\n1..1\n"
                            "    KTAP version 1\n    # Subtest: cask_core\n    1..2\n"
                            "    ok 1 parse\nok 1 cask_core\n### time 1\n### rc 0\n"
                            "### end\n", kunit_py=KUNIT_PY)
        self.assertGreaterEqual(totals[1], 1)
        self.assertNotRegex(out, r"FAILED: *\n")
        self.assertIn("a subtest of cask_core missing", out)

    def test_not_ok_skip_fails(self):
        out, totals = count("### selftest w_test\nTAP version 13\n1..2\nok 1 a\n"
                            "not ok 2 b # SKIP cask_ashmem is not loaded\n"
                            "### time 1\n### rc 1\n### end\n",
                            skips="* w_test b cask_ashmem is not loaded\n")
        self.assertEqual(totals, [1, 1, 0])
        self.assertIn("FAILED: b # SKIP", out)


SKIPPING = """### selftest ashmem_test
TAP version 13
1..2
ok 1 global.a
#      SKIP      no transparent huge pages in this kernel
ok 2 global.no_huge_pages # SKIP no transparent huge pages in this kernel
### time 3
### rc 0
### end
"""


class Skips(unittest.TestCase):
    def test_listed_skip_counts(self):
        out, totals = count(SKIPPING, skips="*\tashmem_test\tglobal.no_huge_pages\t"
                            "no transparent huge pages in this kernel\n")
        self.assertEqual(totals, [1, 0, 1])
        self.assertNotIn("FAILED", out)

    def test_unlisted_skip_fails(self):
        out, totals = count(SKIPPING)
        self.assertEqual(totals, [1, 1, 0])
        self.assertIn("unexpected skip of global.no_huge_pages", out)

    def test_other_kernel_or_reason_fails(self):
        line = "debug-unpatched ashmem_test global.no_huge_pages no transparent huge pages*\n"
        self.assertEqual(count(SKIPPING, "debug", line)[1], [1, 1, 0])
        self.assertEqual(count(SKIPPING, "debug-unpatched", line)[1], [1, 0, 1])
        # the same case skipped for another reason (a module that did not load)
        other = SKIPPING.replace("no transparent huge pages in this kernel",
                                 "cask_ashmem is not loaded")
        self.assertEqual(count(other, "debug-unpatched", line)[1], [1, 1, 0])

    def test_whole_program_skipped(self):
        text = "### selftest x_test\nTAP version 13\n1..0 # SKIP no x here\n" \
               "### time 0\n### rc 4\n### end\n"
        out, totals = count(text)
        self.assertEqual(totals, [0, 1, 0])
        self.assertIn("unexpected skip of * (\"no x here\")", out)
        self.assertEqual(count(text, skips="* x_test * no x here\n")[1], [0, 0, 1])

    def test_kunit_skip_reasons(self):
        lines = ["    # Subtest: cask_power", "    1..2", "    ok 1 parse",
                 "    ok 2 vote_rules # SKIP no CONFIG_SUSPEND: no state to vote for",
                 "ok 1 cask_power"]
        self.assertEqual(results.kunit_skip_reasons(lines),
                         {"vote_rules": "no CONFIG_SUSPEND: no state to vote for"})

    def test_real_list_parses(self):
        for section in ("check", "stock"):
            results.load_expected(results.SKIPS_FILE, section)


class ModuleLoad(unittest.TestCase):
    """tools/qemu/init's block for the modules of the BSP's list: one that
    did not load fails the run, and the skips of the suites that need it
    are failures too, not skips."""

    def test_module_not_loaded(self):
        out, totals = count("""### selftest module_load
TAP version 13
1..2
ok 1 cask_core
# cask-modules: cask_ashmem failed to load: insmod /lib/modules/cask/cask_ashmem.ko bogus=1: Invalid argument
not ok 2 cask_ashmem
### rc 1
### selftest ashmem_test
TAP version 13
1..1
#      SKIP      cask_ashmem is not loaded
ok 1 global.a # SKIP cask_ashmem is not loaded
### time 1
### rc 4
### end
""", skips="* ashmem_test global.no_huge_pages no transparent huge pages in this kernel\n")
        self.assertEqual(totals, [1, 2, 0])
        self.assertIn("FAILED: cask_ashmem", out)
        self.assertIn("unexpected skip of global.a", out)


class Coverage(unittest.TestCase):
    """coverage.py's unpack(): the guest's .gcda files beside the module
    build's .gcno files."""

    def unpack(self, sent, counted, drivers=coverage.DRIVERS):
        """unpack() of a data log holding a .gcda of each driver in sent,
        with the guest's count counted: (its result, the drivers without
        data, what it printed)."""
        with tempfile.TemporaryDirectory() as top:
            mods, guest = os.path.join(top, "mods"), os.path.join(top, "guest")
            for d in drivers:
                os.makedirs(os.path.join(mods, "drivers", d))
                with open(os.path.join(mods, "drivers", d, "main.gcno"), "w"):
                    pass
            for d in sent:
                path = os.path.join(guest, "build", "drivers", d)
                os.makedirs(path)
                with open(os.path.join(path, "main.gcda"), "w") as f:
                    f.write("data")
            tgz = io.BytesIO()
            with tarfile.open(fileobj=tgz, mode="w:gz") as tar:
                tar.add(guest, arcname=".")
            log = os.path.join(top, "data.log")
            with open(log, "w") as f:
                f.write("### gcov begin %d\n%s\n### gcov end\n" % (
                    counted, base64.encodebytes(tgz.getvalue()).decode()))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                n = coverage.unpack(log, mods)
            return n, coverage.drivers_without_data(mods), out.getvalue()

    def test_all_back(self):
        n, missing, _ = self.unpack(coverage.DRIVERS, len(coverage.DRIVERS))
        self.assertEqual((n, missing), (len(coverage.DRIVERS), []))

    def test_fewer_back_than_sent(self):
        n, _, out = self.unpack(coverage.DRIVERS[1:], len(coverage.DRIVERS))
        self.assertEqual(n, 0)
        self.assertIn("FAIL: 5 of the guest's 6 .gcda files came back", out)

    def test_driver_without_data(self):
        n, missing, _ = self.unpack(coverage.DRIVERS[:-1], len(coverage.DRIVERS) - 1)
        self.assertEqual(n, len(coverage.DRIVERS) - 1)
        self.assertEqual(missing, [coverage.DRIVERS[-1]])


HERE = os.path.dirname(os.path.abspath(__file__))
SPLATS = "BUG:|WARNING:|Oops|Call Trace:"


# Each bench's ratio lines as it prints them (binder's from binder.rst).
BENCH_OUTPUT = """### bench logger_bench -w 4
bench logger_write: entries_per_s=3672622 p50_us=0.18 p99_us=0.32 p999_us=3.77 mb_per_s=367.26
bench ratio logger throughput, 4 writers = 4.144 (target >= 2.00)
bench ratio logger p99 latency, 4 writers = 0.115 (target <= 1.00)
### rc 0
### bench binder_bench
     64 |     20000     19000     40000 |     21000 | 0.952 <=1.05 ok   |
bench ratio binder latency 64 B mean = 0.893 (target <= 1.05)
bench ratio binder sync 4 pairs, one context = 1.018 (target >= 0.95)
bench ratio binder idle cells drift-corrected = 0.996 (target <= 1.02)
### rc 0
### bench ashmem_bench
host      4096 |       1000  1000.00 |       1170   854.70 | 1.170 <=1.25 ok   | 1.170..1.170
bench ratio ashmem time per cycle 4096 B, host cell = 1.170 (target <= 1.25)
bench ratio ashmem time per cycle 65536 B, auto cell = 1.280 (target <= 1.10)
### rc 0
### bench lmk_bench
bench target host latency: lmk/memcg p50 1.002 p99 0.883 (<= 1.10): met
bench ratio lmk host lateness p99, lmk/memcg ramps = 0.883 (target <= 1.10)
bench ratio lmk host lateness p50, idle even/odd rounds (noise) = 1.020 (target <= 1.10)
bench ratio lmk container full stall, memcg/lmk ramps = inf (target >= 5.00)
bench ratio lmk container full stall, memcg/lmk ramps = nan (target >= 5.00)
### rc 0
### end
"""


class BenchRatios(unittest.TestCase):
    def test_drivers(self):
        self.assertEqual(results.bench_drivers(), ["ashmem", "binder", "lmk", "logger"])

    def test_each_bench_parses(self):
        ratios, bad = results.bench_ratios(BENCH_OUTPUT.splitlines())
        self.assertEqual(bad, [])
        self.assertEqual([r[:5] for r in ratios[:-1]], [
            ("logger", "throughput, 4 writers", 4.144, ">=", 2.0),
            ("logger", "p99 latency, 4 writers", 0.115, "<=", 1.0),
            ("binder", "latency 64 B mean", 0.893, "<=", 1.05),
            ("binder", "sync 4 pairs, one context", 1.018, ">=", 0.95),
            ("binder", "idle cells drift-corrected", 0.996, "<=", 1.02),
            ("ashmem", "time per cycle 4096 B, host cell", 1.17, "<=", 1.25),
            ("ashmem", "time per cycle 65536 B, auto cell", 1.28, "<=", 1.1),
            ("lmk", "host lateness p99, lmk/memcg ramps", 0.883, "<=", 1.1),
            ("lmk", "host lateness p50, idle even/odd rounds (noise)", 1.02, "<=", 1.1),
            ("lmk", "container full stall, memcg/lmk ramps", float("inf"), ">=", 5.0),
        ])
        # neither side stalled: nan, which meets no target
        driver, what, value, op, target, met = ratios[-1]
        self.assertEqual((driver, what, op, target, met),
                         ("lmk", "container full stall, memcg/lmk ramps", ">=", 5.0, False))
        self.assertTrue(math.isnan(value))
        self.assertEqual([r[5] for r in ratios[:-1]],
                         [True, True, True, True, True, True, False, True, True, True])

    def test_other_forms_are_bad(self):
        lines = [
            # logger_bench's before issue 24: no driver
            "bench ratio throughput logger/socket = 2.35 (target >= 2.00)",
            "bench ratio logger throughput = 2.35 (target >= 2.00)",
            "bench ratio logger throughput = 2.350 (target >= 2)",
            "bench ratio logger throughput = 2.350 (target > 2.00)",
            "bench ratio logger throughput = 2.350",
            "bench ratio nosuch throughput = 2.350 (target >= 2.00)",
        ]
        ratios, bad = results.bench_ratios(lines)
        self.assertEqual(ratios, [])
        self.assertEqual(bad, lines)

    def test_every_bench_prints_the_format(self):
        # Each tools/bench/DRIVER_bench.c prints its ratio lines through one
        # ratio_line(): one literal "bench ratio DRIVER %s = %.3f (target %s
        # %.2f)\n" (C's conversions read the same in Python).
        for driver in results.bench_drivers():
            path = os.path.join(results.BENCH_DIR, driver + "_bench.c")
            with open(path) as f:
                src = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
            found = re.findall(r'"(bench ratio [^"\n]*)"', src)
            want = "bench ratio %s %%s = %%.3f (target %%s %%.2f)\\n" % driver
            self.assertEqual(found, [want], path)
            line = want[:-2] % ("some what, 4 B", 1.0 / 3, "<=", 1.1)
            self.assertEqual(results.bench_ratios([line]),
                             ([(driver, "some what, 4 B", 0.333, "<=", 1.1, True)], []))

    def test_summary(self):
        out = results.bench_summary(BENCH_OUTPUT.splitlines())
        self.assertEqual(out, [
            "  missed: ashmem time per cycle 65536 B, auto cell = 1.280 (target <= 1.10)",
            "  missed: lmk container full stall, memcg/lmk ramps = nan (target >= 5.00)",
            "bench summary: 11 ratios, 9 met, 2 missed",
        ])
        out = results.bench_summary(["bench ratio logger throughput = 2.35 (target >= 2.00)"])
        self.assertEqual(out, [
            "  not a ratio line: bench ratio logger throughput = 2.35 (target >= 2.00)",
            "bench summary: 0 ratios, 0 met, 0 missed, 1 malformed",
        ])

    def test_summary_command(self):
        with tempfile.TemporaryDirectory() as top:
            log = os.path.join(top, "results.log")
            with open(log, "w") as f:
                f.write(BENCH_OUTPUT)
            run = subprocess.run([sys.executable, os.path.join(HERE, "results.py"), "--bench",
                                  log], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.splitlines()[-1], "bench summary: 11 ratios, 9 met, 2 missed")



def read_or_empty(path):
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        return f.read()


def kcsan_filter(console, allow=None):
    """run-qemu.sh's KCSAN awk program on console, with allow as the text of
    tools/qemu/kcsan-core-races (None: the file itself): (the lines it
    keeps for the splat check, the titles it lists as the core kernel's,
    the titles of reports with no cask frame it did not list)."""
    with open(os.path.join(HERE, "run-qemu.sh")) as f:
        prog = re.search(r"scanned=\$\(awk -v core=\"\$races\"[^']*'([^']*)'", f.read()).group(1)
    with tempfile.TemporaryDirectory() as top:
        core, unlisted = os.path.join(top, "core.txt"), os.path.join(top, "unlisted.txt")
        allow_file = os.path.join(HERE, "kcsan-core-races")
        if allow is not None:
            allow_file = os.path.join(top, "allow")
            with open(allow_file, "w") as f:
                f.write(allow)
        kept = subprocess.run(["awk", "-v", "core=" + core, "-v", "unlisted=" + unlisted,
                               "-v", "splats=" + SPLATS, "-v", "allow=" + allow_file, prog],
                              input=console, capture_output=True, text=True, check=True).stdout
        listed, other = (read_or_empty(p) for p in (core, unlisted))
    return kept, listed, other


def kcsan_report(title, frames, second=None):
    """A KCSAN report: title, frames of the first stack, of the second."""
    lines = ["==================================================================",
             "BUG: KCSAN: " + title, "",
             "write to 0xffff888003e8f0a8 of 8 bytes by task 1 on cpu 0:"] + frames
    if second is not None:
        lines += ["", "read to 0xffff888003e8f0a8 of 8 bytes by task 2 on cpu 1:"] + second
    return "\n".join(lines + [
        "", "Reported by Kernel Concurrency Sanitizer on:",
        "CPU: 1 PID: 2 Comm: kthreadd Not tainted 6.12.0 #1",
        "==================================================================", ""])


CORE_ALLOW = "data-race in foo_update / foo_read | both in foo.c, known upstream\n"
CORE = kcsan_report("data-race in foo_update / foo_read",
                    [" foo_update+0x2a/0x50", " kthread+0x1c/0x30"],
                    [" foo_read+0x11/0x20", " kthread+0x1c/0x30"])


class KcsanFilter(unittest.TestCase):
    def assertFails(self, kept):
        self.assertRegex(kept, r"BUG: KCSAN|WARNING:")

    def test_kunit_module_frame_is_ours(self):
        kept, listed, _ = kcsan_filter(kcsan_report(
            "data-race in lmk_scan / lmk_vote",
            [" lmk_scan+0x2a/0x50 [lowmemorykiller_kunit]"], [" lmk_vote+0x11/0x20"]))
        self.assertFails(kept)
        self.assertEqual(listed, "")

    def test_interleaved_splat_kept(self):
        lines = CORE.split("\n")
        lines.insert(5, "WARNING: CPU: 0 PID: 7 at drivers/core/cell.c:88 cell_put+0x40/0x60")
        kept, listed, _ = kcsan_filter("\n".join(lines), CORE_ALLOW)
        self.assertIn("WARNING: CPU: 0 PID: 7", kept)
        self.assertNotIn("BUG: KCSAN", kept)
        self.assertIn("data-race in foo_update / foo_read", listed)

    def test_second_report_keeps_first(self):
        first = kcsan_report("data-race in cell_get / cell_put",
                             [" cell_get+0x2a/0x50 [cask_core]"], [" cell_put+0x11/0x20 [cask_core]"])
        # the first cut off before its footer by the second
        first = first[:first.index("Reported by")]
        kept, _, _ = kcsan_filter(first + CORE)
        self.assertIn("BUG: KCSAN: data-race in cell_get / cell_put", kept)
        self.assertIn("cell_get+0x2a/0x50 [cask_core]", kept)

    def test_core_race_unlisted_fails(self):
        kept, listed, other = kcsan_filter(CORE, "")
        self.assertFails(kept)
        self.assertEqual(listed, "")
        self.assertEqual(other, "data-race in foo_update / foo_read\n")

    def test_core_race_listed(self):
        for glob in ("data-race in foo_update / foo_read", "data-race in foo_* / foo_rea?",
                     "*"):
            kept, listed, _ = kcsan_filter(CORE, "# a comment\n\n%s | known\n" % glob)
            self.assertNotRegex(kept, "BUG: KCSAN")
            self.assertEqual(listed, "data-race in foo_update / foo_read\n")
        # a glob matches the whole title, its regex characters as text
        for glob in ("data-race in foo_update", "data-race in foo.update / foo_read"):
            kept, listed, _ = kcsan_filter(CORE, "%s | known\n" % glob)
            self.assertFails(kept)

    def test_one_stack_report_fails(self):
        # a cask write seen from the core kernel: one stack, no cask frame
        kept, listed, _ = kcsan_filter(kcsan_report(
            "data-race in generic_fillattr",
            [" generic_fillattr+0x2a/0x50", " vfs_getattr+0x11/0x20"]).replace(
            "write to", "race at unknown origin, with read to"), CORE_ALLOW)
        self.assertFails(kept)
        self.assertEqual(listed, "")

    def test_listed_but_cask_frame_fails(self):
        kept, listed, _ = kcsan_filter(kcsan_report(
            "data-race in foo_update / foo_read", [" foo_update+0x2a/0x50"],
            [" foo_read+0x11/0x20", " cell_read+0x40/0x90 [cask_core]"]), "* | all\n")
        self.assertFails(kept)
        self.assertEqual(listed, "")

    def test_real_list_has_no_entries_yet_and_parses(self):
        kept, listed, _ = kcsan_filter(CORE)
        self.assertFails(kept)
        self.assertEqual(listed, "")


if __name__ == "__main__":
    unittest.main()
