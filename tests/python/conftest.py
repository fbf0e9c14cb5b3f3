"""pytest setup for tessel's Python tests.

Tests marked `gpu` need a CUDA device (and torch or CuPy); ctest runs them as python.gpu and the
rest as python.host (python/CMakeLists.txt). With TESSEL_PYTEST_ALL_SKIPPED_EXIT set, a session in
which everything skipped (tests, or whole modules) exits with that code, which ctest reports as a
skip; a session that collected nothing at all still fails (exit 5).
"""
import os

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (and torch or CuPy); skipped visibly without one")


def pytest_sessionfinish(session, exitstatus):
    code = os.environ.get("TESSEL_PYTEST_ALL_SKIPPED_EXIT")
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    # 5: no test collected, which is what modules skipped as a whole leave
    if not code or exitstatus not in (0, 5) or reporter is None:
        return
    stats = reporter.stats
    if stats.get("skipped") and not stats.get("passed") and not stats.get("failed"):
        session.exitstatus = int(code)


@pytest.fixture(scope="session")
def tessel_module():
    import tessel

    return tessel
