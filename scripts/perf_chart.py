#!/usr/bin/env python3
"""Draw tessel's same-run ratio to the vendor library on every target line, as an SVG.

Usage (from the repository root):

    python3 scripts/perf_chart.py                 # writes docs/perf.svg
    python3 scripts/perf_chart.py --out FILE.svg  # somewhere else

Reads bench/results/targets-<gpu>.json (every line of bench/targets.txt) and, from
bench/results/skinny-<gpu>.json, the skinny target line (16x8192x8192 bf16, the suite's first
line). One panel per GPU; one bar per line, drawn from the 1.0 reference line on a log2 axis, so
a line as far behind the vendor library as another is ahead of it gets a bar of the same length.
A line the suite measures several times (bf16 4096^3, 8192x28672x4096, fp8 8192^3, sm80 bf16
4096^3) shows the median of its readings. A black tick marks the line's target where it has one
(a ratio to the vendor library; the skinny line's target is 1.2x the HBM floor instead, printed
beside its bar). Standard library only.
"""

import argparse
import glob
import json
import math
import os
import statistics
import sys
from xml.sax.saxutils import escape

RESULTS = "bench/results"

# Targets of the target lines, as ratios to the vendor library (bench/targets.txt's header):
# the sm_90a path at least even with cuBLAS / cuBLASLt and 4x on the odd shapes, the sm_80 path
# (mma.sync on the same GPU) 0.62x bf16, 0.6x tf32 and 2x on the odd shapes.
TARGETS = {
    ("sm90", "bf16", 4096, 4096, 4096): 1.0,
    ("sm90", "bf16", 8192, 8192, 8192): 1.0,
    ("sm90", "bf16", 8192, 28672, 4096): 1.0,
    ("sm90", "bf16", 4095, 4097, 4099): 4.0,
    ("sm90", "bf16", 8191, 8193, 8191): 4.0,
    ("sm90", "e4m3", 8192, 8192, 8192): 1.0,
    ("sm80", "bf16", 4096, 4096, 4096): 0.62,
    ("sm80", "bf16", 8192, 8192, 8192): 0.62,
    ("sm80", "bf16", 4095, 4097, 4099): 2.0,
    ("sm80", "bf16", 8191, 8193, 8191): 2.0,
    ("sm80", "tf32", 4096, 4096, 4096): 0.6,
}
SKINNY_LINE = ("bf16", 16, 8192, 8192)

PATH_NAME = {"sm90": "sm_90a", "sm80": "sm_80 path", "simt": "SIMT"}
PATH_COLOUR = {"sm90": "#3b6fb6", "sm80": "#d9822b", "simt": "#7a7a7a", "skinny": "#4f9a5a"}

# Axis: log2 of the ratio, from 1/4 to 8 (the odd shapes reach 4-5x).
LOG_MIN, LOG_MAX = -2.0, 3.0
ROW_H, BAR_H = 24, 14
LABEL_W, PANEL_W, PANEL_GAP = 250, 320, 40
TOP, BOTTOM = 78, 40 + 17 * 3
LEGEND = (("sm90", "sm_90a kernels (TMA + wgmma): the heuristic's pick on an sm_90 GPU"),
          ("skinny", "skinny line, the heuristic's pick (its target: within 1.2x the HBM floor)"),
          ("sm80", "sm_80 kernels (mma.sync + cp.async) by name, on the same GPU"))


def path_of(kernel):
    for prefix in ("sm90", "sm80", "simt"):
        if kernel.startswith(prefix):
            return prefix
    return "other"


def shape_text(m, n, k):
    if m == n == k:
        return f"{m}\u00b3"
    return f"{m}\u00d7{n}\u00d7{k}"


def gpu_key(path):
    # bench/results/targets-h100.json -> h100
    return os.path.basename(path).split("-", 1)[1].rsplit(".", 1)[0]


def load_gpu(targets_path):
    with open(targets_path) as f:
        t = json.load(f)
    lines = {}  # key -> dict(label, path, ratios, target, note)
    for r in t["results"]:
        if r.get("op") != "gemm" or not r.get("ratio"):
            continue
        p = path_of(r["kernel"])
        key = (p, r["dtype"], r["m"], r["n"], r["k"])
        e = lines.setdefault(key, {
            "label": f"{PATH_NAME.get(p, p)}  {r['dtype']} {shape_text(r['m'], r['n'], r['k'])}",
            "path": p, "ratios": [], "target": TARGETS.get(key), "note": "",
        })
        e["ratios"].append(r["ratio"])
    skinny_path = os.path.join(os.path.dirname(targets_path), "skinny-" + gpu_key(targets_path) + ".json")
    if os.path.exists(skinny_path):
        with open(skinny_path) as f:
            s = json.load(f)
        for r in s["results"]:
            if (r["dtype"], r["m"], r["n"], r["k"]) == SKINNY_LINE and r.get("layout") == "tn" and r.get("ratio"):
                note = f"  ({r['floor_ratio']:.2f}x the HBM floor)" if r.get("floor_ratio") else ""
                lines[("skinny",) + SKINNY_LINE] = {
                    "label": f"skinny  bf16 {shape_text(16, 8192, 8192)}", "path": "skinny",
                    "ratios": [r["ratio"]], "target": None, "note": note,
                }
                break  # the suite's first such line is the heuristic's pick
    return t, lines


def x_of(ratio, x0):
    v = min(max(math.log2(ratio), LOG_MIN), LOG_MAX)
    return x0 + (v - LOG_MIN) / (LOG_MAX - LOG_MIN) * PANEL_W


def fmt(r):
    return f"{r:.2f}x" if r >= 1.995 else f"{r:.3f}"


def draw(gpus, order):
    n_rows = len(order)
    width = LABEL_W + len(gpus) * PANEL_W + (len(gpus) - 1) * PANEL_GAP + 70
    height = TOP + n_rows * ROW_H + BOTTOM
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="10" y="20" font-size="15" font-weight="bold">tessel against the vendor library on the target lines</text>',
        '<text x="10" y="38" fill="#444">Same-run ratio of TFLOP/s (tessel / cuBLAS, cuBLASLt for fp8), median of '
        'the readings; log2 axis, bars from 1.0 (right: tessel faster). Black tick: the line\'s target.</text>',
    ]
    for gi, (gpu, (meta, lines)) in enumerate(gpus):
        x0 = LABEL_W + gi * (PANEL_W + PANEL_GAP)
        title = f"{meta.get('gpu', gpu)}"
        sub = f"measured at commit {meta.get('commit', '?')} on {meta.get('date', '?')}"
        out.append(f'<text x="{x0 + PANEL_W / 2}" y="{TOP - 22}" text-anchor="middle" font-weight="bold">{escape(title)}</text>')
        out.append(f'<text x="{x0 + PANEL_W / 2}" y="{TOP - 8}" text-anchor="middle" fill="#555" font-size="11">{escape(sub)}</text>')
        y_axis = TOP + n_rows * ROW_H
        # Grid and ticks.
        for e in range(int(LOG_MIN), int(LOG_MAX) + 1):
            x = x0 + (e - LOG_MIN) / (LOG_MAX - LOG_MIN) * PANEL_W
            colour, w = ("#222", 1.5) if e == 0 else ("#ddd", 1)
            out.append(f'<line x1="{x:.1f}" y1="{TOP - 2}" x2="{x:.1f}" y2="{y_axis}" stroke="{colour}" stroke-width="{w}"/>')
            label = f"{2.0 ** e:g}"
            out.append(f'<text x="{x:.1f}" y="{y_axis + 15}" text-anchor="middle" fill="#444">{label}</text>')
        out.append(f'<line x1="{x0}" y1="{y_axis}" x2="{x0 + PANEL_W}" y2="{y_axis}" stroke="#999"/>')
        x1 = x_of(1.0, x0)
        for i, key in enumerate(order):
            yc = TOP + i * ROW_H + ROW_H / 2
            e = lines.get(key)
            if e is None:
                out.append(f'<text x="{x1 + 4:.1f}" y="{yc + 4:.1f}" fill="#999">not measured</text>')
                continue
            r = statistics.median(e["ratios"])
            xr = x_of(r, x0)
            left, w = min(x1, xr), max(abs(xr - x1), 1.0)
            colour = PATH_COLOUR.get(e["path"], "#999")
            readings = " / ".join(f"{v:.3f}" for v in e["ratios"])
            out.append(f'<rect x="{left:.1f}" y="{yc - BAR_H / 2:.1f}" width="{w:.1f}" height="{BAR_H}" fill="{colour}">'
                       f'<title>{escape(e["label"])}: {readings}</title></rect>')
            if e["target"]:
                xt = x_of(e["target"], x0)
                out.append(f'<line x1="{xt:.1f}" y1="{yc - BAR_H / 2 - 3:.1f}" x2="{xt:.1f}" y2="{yc + BAR_H / 2 + 3:.1f}" '
                           f'stroke="black" stroke-width="2"/>')
            text = fmt(r) + (f" (median of {len(e['ratios'])})" if len(e["ratios"]) > 1 else "") + e["note"]
            if r >= 1.0:
                tx, anchor = max(xr, x1) + 5, "start"
            else:
                tx, anchor = x1 + 5, "start"
            out.append(f'<text x="{tx:.1f}" y="{yc + 4:.1f}" text-anchor="{anchor}" font-size="11">{escape(text)}</text>')
    for i, key in enumerate(order):
        yc = TOP + i * ROW_H + ROW_H / 2
        label = next((g[1][1][key]["label"] for g in gpus if key in g[1][1]), str(key))
        out.append(f'<text x="{LABEL_W - 10}" y="{yc + 4:.1f}" text-anchor="end">{escape(label)}</text>')
    # Legend, one entry a line.
    ly = TOP + n_rows * ROW_H + 40
    for p, name in LEGEND:
        out.append(f'<rect x="{LABEL_W}" y="{ly - 10}" width="12" height="12" fill="{PATH_COLOUR[p]}"/>')
        out.append(f'<text x="{LABEL_W + 17}" y="{ly}" fill="#333">{escape(name)}</text>')
        ly += 17
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=RESULTS, help="folder of <suite>-<gpu>.json files (default %(default)s)")
    ap.add_argument("--out", default="docs/perf.svg", help="SVG to write (default %(default)s)")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.results, "targets-*.json")))
    if not files:
        sys.exit(f"perf_chart.py: no {a.results}/targets-*.json (run from the repository root)")
    gpus, order = [], []
    for path in files:
        meta, lines = load_gpu(path)
        gpus.append((gpu_key(path), (meta, lines)))
        for key in lines:
            if key not in order:
                order.append(key)
    # Rows: the sm_90a lines, then the skinny line, then the sm_80 path; bf16 before fp8 before
    # tf32, each otherwise in suite order.
    rank = {"sm90": 0, "skinny": 1, "sm80": 2}
    dtype_rank = {"bf16": 0, "fp16": 1, "e4m3": 2, "tf32": 3}
    order.sort(key=lambda k: (rank.get(k[0], 3), dtype_rank.get(k[1], 4)))
    svg = draw(gpus, order)
    with open(a.out, "w") as f:
        f.write(svg)
    print(f"perf_chart.py: {a.out}: {len(order)} lines x {len(gpus)} GPUs ({', '.join(g for g, _ in gpus)})")


if __name__ == "__main__":
    main()
