#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of results.py's reading of a guest's results log: the sections
tools/qemu/init writes, time limits, stuck programs (run by tools/lint.sh)."""
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402


def count(text):
    """count_log() on text: (printed lines, [passed, failed, skipped])."""
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
        f.write(text)
    totals = [0, 0, 0]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            results.count_log(f.name, "/nonexistent/kunit.py", totals)
    finally:
        os.unlink(f.name)
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

    def test_unfinished_without_limit(self):
        out, totals = count(PASSING + "### selftest x_test\nTAP version 13\n1..1\n")
        self.assertEqual(totals[1], 2)
        self.assertIn("did not finish", out)

    def test_fewer_than_planned(self):
        out, totals = count("### selftest y_test\nTAP version 13\n1..2\nok 1 a\n"
                            "### time 1\n### rc 0\n### end\n")
        self.assertEqual(totals, [1, 1, 0])
        self.assertIn("ran 1 of 2 planned", out)


if __name__ == "__main__":
    unittest.main()
