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
    err = capsys.readouterr().err
    assert "python -m tessel.bench gemm" in err and "attention" in err


def test_attention_problem_parsing():
    p = bench.parse_attention_problem("b4-h32-kv8-s4096-d128-causal")
    assert p == {"batch": 4, "heads": 32, "kv_heads": 8, "seqlen_q": 4096, "seqlen_k": 4096, "head_dim": 128,
                 "head_dim_v": 128, "causal": True}
    p = bench.parse_attention_problem("b1-h2-sq100-sk300-d192-dv128")
    assert (p["seqlen_q"], p["seqlen_k"], p["head_dim_v"], p["kv_heads"], p["causal"]) == (100, 300, 128, 2, False)
    assert bench.attention_text(p) == "b1 h2 s100x300 d192/128"
    for bad in ("b4-h32-s4096", "b4-h32-s4096-d128-x3", "b0-h1-s1-d64", "b1-h3-kv2-s8-d64", "b1-b2-h1-s1-d64"):
        with pytest.raises(argparse.ArgumentTypeError, match="attention problem"):
            bench.parse_attention_problem(bad)


def test_default_attention_suite_parses():
    texts = [bench.attention_text(bench.parse_attention_problem(t)) for t, dtype in bench._DEFAULT_ATTENTION]
    assert "b4 h32/8 s4096 d128" in texts and "b1 h32 s16384 d128" in texts
    assert all(dtype in bench._ATTN_DTYPES for _, dtype in bench._DEFAULT_ATTENTION)


def test_attention_flops():
    p = bench.parse_attention_problem("b4-h32-s4096-d128")
    assert bench.attention_flops(p) == 4 * 4 * 32 * 4096 * 4096 * 128  # 4 B H S^2 D
    causal = bench.parse_attention_problem("b4-h32-s4096-d128-causal")
    assert bench.attention_flops(causal) == bench.attention_flops(p) / 2  # halved for square causal problems
    # top-left causal, S_q = 5 > S_k = 3: rows see 1, 2, 3, 3, 3 keys
    assert bench.attention_pairs(5, 3, True) == 12
    assert bench.attention_pairs(3, 5, True) == 6
    gqa = bench.parse_attention_problem("b1-h4-kv1-sq10-sk20-d192-dv128")
    assert bench.attention_flops(gqa) == 2 * 4 * 10 * 20 * (192 + 128)


def test_conv_problem_parsing():
    p = bench.parse_conv_problem("n128-h224-w224-c3-k64-r7-s7-stride2-pad3")
    assert (p["n"], p["c"], p["k"], p["r"], p["stride"], p["pad"], p["dims"], p["groups"]) == (128, 3, 64, 7, 2, 3, 2, 1)
    assert bench.conv_out_extents(p) == (1, 112, 112)
    assert bench.conv_flops(p) == 2.0 * 128 * 112 * 112 * 64 * 7 * 7 * 3  # the CLI records 3.02116e10
    assert bench.conv_group_gemm(p, "fprop") == (128 * 112 * 112, 64, 147)
    assert bench.conv_text(p) == "n128 224x224 c3 k64 7x7 stride2 pad3"
    p3 = bench.parse_conv_problem("n4-d16-h56-w56-c64-k64-t3-r3-s3-pad1")
    assert p3["dims"] == 3 and bench.conv_out_extents(p3) == (16, 56, 56)
    assert bench.conv_group_gemm(p3, "dgrad") == (4 * 16 * 56 * 56, 64, 64 * 27)
    dw = bench.parse_conv_problem("n128-h14-w14-c512-k512-r3-s3-pad1-g512")
    assert bench.conv_group_gemm(dw, "wgrad") == (1, 9, 128 * 14 * 14)
    for bad in ("n1-h8-w8-c4-k4-r3", "n1-h8-w8-c4-k4-r3-s3-x2", "n1-h8-w8-c4-k6-r3-s3-g4", "n1-h2-w2-c4-k4-r3-s3",
                "n0-h8-w8-c4-k4-r3-s3", "n1-n2-h8-w8-c4-k4-r3-s3"):
        with pytest.raises(argparse.ArgumentTypeError, match="conv problem"):
            bench.parse_conv_problem(bad)


def test_default_conv_suite_has_the_issues_layers():
    texts = [bench.conv_text(bench.parse_conv_problem(t)) for t, _, _ in bench._DEFAULT_CONV]
    for layer in ("n128 56x56 c64 k64 3x3 pad1", "n128 7x7 c512 k512 3x3 pad1", "n128 56x56 c256 k64 1x1",
                  "n128 14x14 c1024 k256 1x1", "n128 224x224 c3 k64 7x7 stride2 pad3", "n64 57x57 c33 k65 3x3 pad1",
                  "n8 64x64 c320 k320 3x3 pad1", "n4 16x56x56 c64 k64 3x3x3 pad1", "n128 28x28 c256 k256 3x3 pad1 g256"):
        assert layer in texts
    assert all(d in bench._CONV_DTYPES and set(ops) <= set(bench._CONV_OPS) for _, d, ops in bench._DEFAULT_CONV)


def test_attention_arguments_pick_the_pass_and_its_suite():
    args = bench.attention_args([])
    assert not args.backward and not args.deterministic and args.suite == "python-attention"
    args = bench.attention_args(["--backward"])
    assert args.backward and not args.deterministic and args.suite == "python-attention-backward"
    args = bench.attention_args(["--backward", "--deterministic", "--problems", "b1-h2-s128-d64-causal"])
    assert args.deterministic and args.problems[0]["causal"] and args.suite == "python-attention-backward"
    assert bench.attention_args(["--backward", "--suite", "mine"]).suite == "mine"


def test_attention_kernels_by_name_get_their_own_suite():
    pair = "sm90_attention_bf16_d128,sm90_attention_bf16_d128_k128"
    args = bench.attention_args(["--kernels", pair, "--rounds", "6"])
    assert args.kernels == ["sm90_attention_bf16_d128", "sm90_attention_bf16_d128_k128"]
    assert args.rounds == 6 and args.suite == "python-attention-kernels"
    assert bench.attention_args([]).kernels is None and bench.attention_args([]).rounds == 1


def test_overhead_problems_parse():
    assert bench.parse_attention_problem(bench._ATTN_OVERHEAD_PROBLEM)["seqlen_q"] == 1024
    p = bench.parse_conv_problem(bench._CONV_OVERHEAD_PROBLEM)
    assert (p["n"], p["c"], p["k"], p["r"], p["s"]) == (8, 64, 64, 3, 3) and bench.conv_out_extents(p) == (1, 56, 56)


def test_attention_overhead_is_on_unless_asked_off():
    assert bench.attention_args([]).overhead
    assert not bench.attention_args(["--no-overhead"]).overhead


class _FakeCuda:
    def __init__(self, log):
        self.log = log

    def _sleep(self, cycles):
        self.log.append(("sleep", cycles))

    def synchronize(self):
        self.log.append(("sync",))


class _FakeTorch:
    def __init__(self):
        self.log = []
        self.cuda = _FakeCuda(self.log)


def test_host_us_per_call_times_each_side_behind_a_sleep_in_rotated_order():
    torch = _FakeTorch()
    seconds = {"a": [3e-6, 1e-6, 2e-6, 9e-6, 5e-6], "b": [7e-6] * 5}
    calls = {"a": 0, "b": 0}

    def side(name):
        def timed():
            calls[name] += 1
            torch.log.append(("side", name))
            return seconds[name][calls[name] - 1]
        return timed

    us, samples = bench._host_us_per_call(torch, {"a": side("a"), "b": side("b")}, 1980, 10, 4)
    # One warm-up call each, then four rounds: a's timed samples are its 2nd to 5th values.
    assert calls == {"a": 5, "b": 5}
    assert samples["a"] == pytest.approx([1.0, 2.0, 9.0, 5.0]) and us["a"] == pytest.approx(3.5)
    assert us["b"] == pytest.approx(7.0)
    timed = [e for e in torch.log[3:] if e[0] != "sync"]  # after the warm-up calls and their synchronize
    assert [e[1] for e in timed if e[0] == "side"] == ["a", "b", "b", "a", "a", "b", "b", "a"]
    # Every timed side runs behind a sleep of ~20 ms at the clock given.
    assert all(timed[i][0] == "sleep" and timed[i + 1][0] == "side" for i in range(0, len(timed), 2))
    assert timed[0][1] == int(0.02 * 1980 * 1e6)


def test_py_loop_reports_seconds_per_call():
    n = []
    per_call = bench._py_loop(lambda: n.append(1), 25)()
    assert len(n) == 25 and 0 <= per_call < 1


def test_round_order_puts_every_side_in_every_place():
    for n in (1, 2, 3, 4):
        orders = [bench._round_order(n, r) for r in range(2 * n)]
        assert all(sorted(o) == list(range(n)) for o in orders)
        for place in range(n):
            assert sorted(o[place] for o in orders) == sorted(list(range(n)) * 2)
        assert orders[0] == list(range(n))  # one round: the sides' own order
        if n > 2:  # no side always follows the same one
            for side in range(n):
                before = {o[o.index(side) - 1] for o in orders if o.index(side) > 0}
                assert len(before) > 1


def test_attention_argument_errors_name_the_flag(capsys):
    for argv, word in ((["--deterministic"], "--deterministic"), (["--backward=1"], "--backward"),
                       (["--backward", "--iters", "0"], "--iters"), (["--backward", "--problems", "b1-h2"],
                                                                    "attention problem"),
                       (["--kernels", "a,a"], "--kernels"), (["--kernels", "a,,b"], "--kernels"),
                       (["--backward", "--kernels", "a"], "--kernels"), (["--rounds", "0"], "--rounds")):
        with pytest.raises(SystemExit) as info:
            bench.attention_args(argv)
        assert info.value.code == 2
        assert word in capsys.readouterr().err, argv


def test_backward_flops_are_two_and_a_half_times_the_forwards():
    p = bench.parse_attention_problem("b4-h32-s4096-d128-causal")
    assert bench.BACKWARD_FLOP_RATIO * bench.attention_flops(p) == 2.5 * 2 * 4 * 32 * (4096 * 4096 / 2) * 256


def test_grouped_problem_parsing():
    p = bench.parse_grouped_problem("g8-t8192-n14336-k4096-skew1-empty1-kn")
    assert p == {"groups": 8, "tokens": 8192, "n": 14336, "k": 4096, "skew": 1.0, "empty": 1, "layout": "kn"}
    assert bench.grouped_text(p) == "g8 t8192 n14336 k4096 skew1 empty1 kn"
    p = bench.parse_grouped_problem("g64-t4096-n2048-k7168-skew0.5")
    assert (p["empty"], p["layout"], p["skew"]) == (0, "nk", 0.5)
    for bad in ("g8-t4096-n14336", "g0-t1-n1-k1", "g8-t1-n1-k1-x3", "g2-t1-n1-k1-empty2", "g2-g3-t1-n1-k1"):
        with pytest.raises(argparse.ArgumentTypeError, match="grouped problem"):
            bench.parse_grouped_problem(bad)


def test_default_grouped_suite_parses():
    texts = [bench.grouped_text(bench.parse_grouped_problem(t)) for t, _ in bench._DEFAULT_GROUPED]
    assert "g8 t4096 n14336 k4096 skew0.5" in texts and "g256 t8192 n2048 k7168 skew1.2 empty64" in texts


@pytest.mark.parametrize("groups,tokens,skew,empty", [(8, 4096, 0.5, 0), (64, 16384, 1.0, 8), (256, 8192, 1.2, 64),
                                                     (4, 3, 0.0, 1), (8, 0, 1.0, 1)])
def test_split_tokens_gives_every_token_once_and_the_empty_groups_none(groups, tokens, skew, empty):
    rows = bench.split_tokens(groups, tokens, skew, empty, seed=3)
    assert len(rows) == groups and sum(rows) == tokens and min(rows) >= 0
    assert rows.count(0) >= empty
    assert rows == bench.split_tokens(groups, tokens, skew, empty, seed=3)  # seeded
    if skew > 0 and tokens >= groups * 4:
        assert max(rows) > 2 * sorted(r for r in rows if r)[0]  # skewed: the heaviest group well above the lightest


def test_train_learning_rate_warms_up_then_decays_to_a_tenth():
    from tessel import bench_train

    assert bench_train._lr(0, 300, 1.0) == pytest.approx(1 / 20)
    assert bench_train._lr(19, 300, 1.0) == pytest.approx(1.0)
    assert bench_train._lr(20, 300, 1.0) == pytest.approx(1.0)
    assert bench_train._lr(300, 300, 1.0) == pytest.approx(0.1)
    assert bench_train._lr(160, 300, 1.0) == pytest.approx(0.55)


def test_train_moving_average():
    from tessel import bench_train

    assert bench_train._smooth([1.0, 3.0, 5.0, 7.0], n=2) == [1.0, 2.0, 4.0, 6.0]


def test_train_argument_errors_name_the_flag(capsys):
    for argv, flag in ((["--sides", "torch,jax"], "--sides"), (["--heads", "12"], "--width / --heads"),
                       (["--steps", "0"], "--steps")):
        with pytest.raises(SystemExit) as e:
            bench.main(["train", *argv])
        assert e.value.code == 2
        assert flag in capsys.readouterr().err
