"""Runs pytest for ctest: its own exit status, except that a run in which every test (or whole
module) was skipped and none passed or failed exits 77, which ctest reports as a skip
(python/CMakeLists.txt: python.gpu on a machine without a GPU). A run that collected nothing at
all keeps pytest's 5.

    python3 tests/python/run_pytest.py -m gpu tests/python
"""
import sys

import pytest


class Outcomes:
    """Counts the outcomes pytest reports: each test's, and each module skipped as a whole."""

    def __init__(self):
        self.passed = self.failed = self.skipped = 0

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            if report.outcome == "passed":
                self.passed += 1
            elif report.outcome == "failed":
                self.failed += 1
            elif report.outcome == "skipped":
                self.skipped += 1

    def pytest_collectreport(self, report):
        if report.outcome == "skipped":
            self.skipped += 1
        elif report.outcome == "failed":
            self.failed += 1


def main(args):
    outcomes = Outcomes()
    status = int(pytest.main(args, plugins=[outcomes]))
    if status in (0, 5) and outcomes.skipped and not outcomes.passed and not outcomes.failed:
        return 77
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
