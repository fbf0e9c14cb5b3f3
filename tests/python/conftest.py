"""pytest setup for tessel's Python tests.

Tests marked `gpu` need a CUDA device (and torch or CuPy); ctest runs them as python.gpu and the
rest as python.host (python/CMakeLists.txt), through run_pytest.py, which reports a run whose tests
all skipped as a skip (exit 77).
"""
import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (and torch or CuPy); skipped visibly without one")


@pytest.fixture(scope="module")
def tessel_module():
    import tessel

    return tessel
