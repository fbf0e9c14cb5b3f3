"""The pure-Python parts of tessel.bench that need no GPU or torch."""
import argparse
import math

import pytest

from tessel import bench


def test_problem_parsing():
    assert bench.parse_problem("4096x1024x512") == (1, 4096, 1024, 512)
    assert bench.parse_problem("8x16x32x64") == (8, 16, 32, 64)
    for bad in ("4096x1024", "0x1x1", "axbxc", "1x2x3x4x5"):
        with pytest.raises(argparse.ArgumentTypeError, match="is not MxNxK or BxMxNxK"):
            bench.parse_problem(bad)


def test_default_suite_parses_and_names_known_dtypes_and_layouts():
    for text, dtype, layout in bench._DEFAULT_PROBLEMS:
        bench.parse_problem(text)
        assert dtype in bench._DTYPES and layout in ("tn", "nn", "nt", "tt")


def test_gpu_short_name_and_versions():
    assert bench._gpu_short_name("NVIDIA H200") == "h200"
    assert bench._gpu_short_name("NVIDIA H100 80GB HBM3") == "h100"
    assert bench._version_text(13000) == "13.0"
    assert bench._version_text(12080) == "12.8"


def test_tolerance_matches_gemm_check_hpp():
    # 8 u_acc sqrt(K) + 2 u_out for bf16 at K = 4096 (tessel/reference/gemm_check.hpp)
    assert bench.tolerance("bf16", "bf16", 4096) == pytest.approx(8 * 2**-24 * 64 + 2 * 2**-8)
    assert bench.tolerance("tf32", "fp32", 1) == pytest.approx(8 * 2**-24 + 2 * 2**-11 + 2 * 2**-24)
    assert bench.tolerance("e4m3", "bf16", 0) > bench.tolerance("bf16", "bf16", 0)
    assert not math.isnan(bench.tolerance("fp32", "fp32", 10**9))


def test_usage_without_a_suite(capsys):
    assert bench.main([]) == 2
    assert "python -m tessel.bench gemm" in capsys.readouterr().err
