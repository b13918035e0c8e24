#!/usr/bin/env python3
"""Helpers for bench/geocode.sh: seeded points, peer runs, landmark scoring, the report.

Only the standard library is imported at module level, so that a peer run's peak RSS
is the peer's own (plus the input list), not this script's.

  geobench.py points FILE COUNT SEED           write COUNT seeded `lat,lon` lines
  geobench.py peer-bench TOOL FILE OUT.json    load TOOL, batch-search FILE, write figures
  geobench.py peer-load TOOL OUT.json          load only: the peer's own RSS
  geobench.py peer-landmarks TOOL CSV OUT.txt  one answered city per landmark row
  geobench.py spotstore-landmarks CSV RAW OUT.txt   turn `spotstore geocode` stdout into cities
  geobench.py measured OUT.json -- CMD...      run CMD, record wall time, exit code, child peak RSS
  geobench.py spotstore-bench RAW MEASURED OUT.json   parse `--benchmark` output
  geobench.py score CSV ANSWERS.txt OUT.json   hit rate and misses
  geobench.py report DIR                       the table, the ratio and the checks

TOOL is `reverse_geocode` (1.6.6) or `reverse_geocoder` (1.5.1).
"""
import json
import math
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import time
import unicodedata


# --------------------------------------------------------------------------- points

def make_points(path, count, seed):
    """Uniform on the sphere (equal-area): lon ~ U(-180, 180), sin(lat) ~ U(-1, 1).

    Python's Mersenne Twister with a fixed seed, so the file is the same on every
    machine and Python 3 version; 6 decimals (~0.1 m)."""
    rng = random.Random(seed)
    tmp = path + ".tmp"
    with open(tmp, "w") as out:
        for _ in range(count):
            lat = math.degrees(math.asin(2.0 * rng.random() - 1.0))
            lon = 360.0 * rng.random() - 180.0
            out.write(f"{lat:.6f},{lon:.6f}\n")
    os.replace(tmp, path)


def read_points(path):
    pts = []
    with open(path) as f:
        for line in f:
            a, b = line.split(",")
            pts.append((float(a), float(b)))
    return pts


# --------------------------------------------------------------------------- peers

def load_peer(tool):
    """Import the peer and build its index; returns a batch function list -> list of cities."""
    if tool == "reverse_geocode":
        import reverse_geocode
        # search(pts) calls GeocodeData(0); the singleton is keyed on the arguments
        data = reverse_geocode.GeocodeData(0)
        return lambda pts: [r["city"] for r in data.query(pts)]
    if tool == "reverse_geocoder":
        import reverse_geocoder
        # mode=1: single-process cKDTree (mode=2, the default, forks one worker per core)
        rg = reverse_geocoder.RGeocoder(mode=1, verbose=False)
        return lambda pts: [r["name"] for r in rg.query(pts)]
    raise SystemExit(f"unknown tool {tool}")


def search_peer(tool, pts):
    """The timed batch call, through each package's public search()."""
    if tool == "reverse_geocode":
        import reverse_geocode
        return reverse_geocode.search(pts)
    import reverse_geocoder
    return reverse_geocoder.search(pts, mode=1, verbose=False)


def maxrss_mb(who=resource.RUSAGE_SELF):
    return resource.getrusage(who).ru_maxrss / 1024.0     # Linux: KiB


def peer_bench(tool, path, out):
    pts = read_points(path)                                # before any timing
    rss_input = maxrss_mb()
    t0 = time.perf_counter()
    if tool == "reverse_geocode":
        import reverse_geocode
    else:
        import reverse_geocoder
    t1 = time.perf_counter()
    load_peer(tool)                                        # builds the singleton index
    t2 = time.perf_counter()
    rss_loaded = maxrss_mb()
    c2 = time.process_time()
    res = search_peer(tool, pts)                           # reuses the singleton
    t3 = time.perf_counter()
    cpu = time.process_time() - c2
    assert len(res) == len(pts)
    fig = {
        "tool": tool, "points": len(pts),
        "import_ms": (t1 - t0) * 1e3, "data_ms": (t2 - t1) * 1e3, "load_ms": (t2 - t0) * 1e3,
        "search_s": t3 - t2, "lookups_per_s": len(pts) / (t3 - t2),
        "search_cpu_s": cpu, "lookups_per_cpu_s": len(pts) / cpu,
        "rss_mb": maxrss_mb(), "rss_input_mb": rss_input, "rss_loaded_mb": rss_loaded,
    }
    json.dump(fig, open(out, "w"))


def peer_load_only(tool, out):
    """Peak RSS of the peer with its index loaded and no input: its own footprint."""
    t0 = time.perf_counter()
    load_peer(tool)
    json.dump({"tool": tool, "load_ms": (time.perf_counter() - t0) * 1e3, "rss_mb": maxrss_mb()},
              open(out, "w"))


def peer_landmarks(tool, csv_path, out):
    rows = read_landmarks(csv_path)
    batch = load_peer(tool)
    cities = batch([(float(r["latitude"]), float(r["longitude"])) for r in rows])
    with open(out, "w", encoding="utf-8") as f:
        for c in cities:
            f.write((c or "") + "\n")


# --------------------------------------------------------------------------- spotstore

def spotstore_city(line):
    """The city in one output line of `spotstore geocode` (stdin mode), or "" for none.

    Expected: one line per input line, the city first, then a comma and the rest
    (e.g. `Paris, Île-de-France, France, FR, 4.0 km`); a line that is empty or starts
    with `-` means no city. Adjust here if the format changes."""
    line = line.strip()
    if not line or line.startswith("-"):
        return ""
    return line.split(",", 1)[0].strip()


def spotstore_landmarks(csv_path, raw, out):
    n = len(read_landmarks(csv_path))
    lines = open(raw, encoding="utf-8").read().splitlines()
    if len(lines) != n:
        raise SystemExit(f"spotstore geocode printed {len(lines)} lines for {n} input lines")
    with open(out, "w", encoding="utf-8") as f:
        for l in lines:
            f.write(spotstore_city(l) + "\n")


def parse_spotstore_benchmark(text):
    """load ms, lookups/s and peak RSS MB from `spotstore geocode --benchmark FILE` output.

    Accepts a JSON object line with load_ms / lookups_per_s / rss_mb (or peak_rss_mb),
    or free text with `load ... 12.3 ms`, `1234567 lookups/s` and `RSS ... 45.6 MB`
    (MB, MiB, KB, KiB or GB; thousands separators allowed). Adjust here if needed."""
    fig = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                j = json.loads(line)
            except ValueError:
                continue
            for k in ("load_ms", "lookups_per_s"):
                if k in j:
                    fig[k] = float(j[k])
            for k in ("rss_mb", "peak_rss_mb", "peakRSSMB", "rssMB"):
                if k in j:
                    fig["rss_mb"] = float(j[k])
    num = r"([0-9][0-9,_]*(?:\.[0-9]+)?)"
    clean = lambda s: float(s.replace(",", "").replace("_", ""))
    def on_line(word, pattern):
        """First match of pattern on a line that mentions word (case-insensitive)."""
        for line in text.splitlines():
            if re.search(word, line, re.I):
                m = re.search(pattern, line, re.I)
                if m:
                    return m
        return None

    if "load_ms" not in fig:
        m = on_line(r"load", num + r"\s*ms\b")
        if m:
            fig["load_ms"] = clean(m.group(1))
    if "lookups_per_s" not in fig:
        m = (on_line(r"lookups", num + r"\s*(k|M)?\s*lookups\s*/\s*s")          # 1,234,567 lookups/s
             or on_line(r"lookups", r"lookups\s*/\s*s\W*" + num + r"\s*(k|M)?\b"))  # lookups/s: 1.2M
        if m:
            scale = {"k": 1e3, "m": 1e6}.get((m.group(2) or "").lower(), 1)
            fig["lookups_per_s"] = clean(m.group(1)) * scale
    if "rss_mb" not in fig:
        m = on_line(r"rss|resident", num + r"\s*(MB|MiB|KB|KiB|kB|GB|GiB)\b")
        if m:
            unit = m.group(2).lower()
            scale = {"kb": 1 / 1024, "kib": 1 / 1024, "gb": 1024, "gib": 1024}.get(unit, 1)
            fig["rss_mb"] = clean(m.group(1)) * scale
    return fig


def measured(out, cmd):
    """Run cmd (stdout/stderr pass through); record wall time, exit code and the child's
    peak RSS as the kernel counts it (wait4 ru_maxrss), independent of what it prints."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    json.dump({"wall_s": wall, "exit": code, "rss_mb": ru.ru_maxrss / 1024.0}, open(out, "w"))
    return code


def spotstore_bench(raw, meas, out):
    text = open(raw, encoding="utf-8", errors="replace").read()
    m = json.load(open(meas))
    fig = parse_spotstore_benchmark(text)
    fig["tool"] = "spotstore"
    fig["rss_self_mb"] = fig.get("rss_mb")
    fig["rss_mb"] = m["rss_mb"]              # the kernel's figure is the one checked
    fig["wall_s"] = m["wall_s"]
    if m["exit"] != 0:
        json.dump({"tool": "spotstore", "exit": m["exit"]}, open(out, "w"))
        sys.stderr.write(f"spotstore geocode --benchmark exited {m['exit']}:\n{text[-2000:]}\n")
        return 1
    missing = [k for k in ("load_ms", "lookups_per_s") if k not in fig]
    json.dump(fig, open(out, "w"))
    if missing:
        sys.stderr.write(f"could not find {', '.join(missing)} in the output of --benchmark:\n{text}\n")
        return 1
    return 0


# --------------------------------------------------------------------------- landmarks

def read_landmarks(path):
    import csv
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def norm(s):
    """Case- and accent-insensitive: NFKD, drop combining marks, casefold."""
    s = unicodedata.normalize("NFKD", (s or "").strip())
    return "".join(c for c in s if not unicodedata.combining(c)).casefold()


def score(csv_path, answers, out):
    rows = read_landmarks(csv_path)
    got = open(answers, encoding="utf-8").read().split("\n")[: len(rows)]
    city_rows = hits = nocity_rows = nocity_ok = 0
    misses = []
    for r, a in zip(rows, got):
        if r["city"]:
            city_rows += 1
            ok = norm(a) == norm(r["city"])
            hits += ok
        else:
            nocity_rows += 1
            ok = not a.strip()
            nocity_ok += ok
        if not ok:
            misses.append({"name": r["name"], "expected": r["city"], "got": a,
                           "continent": r["continent"]})
    json.dump({"city_rows": city_rows, "hits": hits, "nocity_rows": nocity_rows,
               "nocity_ok": nocity_ok, "misses": misses}, open(out, "w"), ensure_ascii=False)


# --------------------------------------------------------------------------- report

TOOLS = ("reverse_geocode", "reverse_geocoder", "spotstore")


def report(d):
    runs = {t: [] for t in TOOLS}
    for name in sorted(os.listdir(d)):
        m = re.match(r"bench-(\w+)-(\d+)\.json$", name)
        if m and m.group(1) in runs:
            fig = json.load(open(os.path.join(d, name)))
            if "lookups_per_s" in fig and "load_ms" in fig:
                runs[m.group(1)].append(fig)
    lm = {}
    for t in TOOLS:
        p = os.path.join(d, f"landmarks-{t}.json")
        if os.path.exists(p):
            lm[t] = json.load(open(p, encoding="utf-8"))

    med = {}
    for t, rs in runs.items():
        if rs:
            med[t] = {
                "load_ms": statistics.median(r["load_ms"] for r in rs),
                "lookups_per_s": statistics.median(r["lookups_per_s"] for r in rs),
                "rss_mb": max(r["rss_mb"] for r in rs),
                "runs": len(rs),
                "all": [round(r["lookups_per_s"]) for r in rs],
            }

    print()
    print("| tool | load ms | lookups/s | peak RSS MB | landmark cities hit | no-city points right |")
    print("|---|---:|---:|---:|---:|---:|")
    for t in TOOLS:
        f = med.get(t)
        l = lm.get(t)
        lcol = f"{l['hits']}/{l['city_rows']} = {100 * l['hits'] / l['city_rows']:.1f}%" if l else "—"
        ncol = f"{l['nocity_ok']}/{l['nocity_rows']}" if l else "—"
        if f:
            print(f"| {t} | {f['load_ms']:.0f} | {f['lookups_per_s']:,.0f} | {f['rss_mb']:.0f} | {lcol} | {ncol} |")
        else:
            print(f"| {t} | MISSING | MISSING | MISSING | {lcol} | {ncol} |")
    print()
    for t in TOOLS:
        if t in med:
            rs = runs[t]
            extra = ""
            if t != "spotstore":
                extra += (f"; per CPU-second (less sensitive to a busy machine) "
                          f"{statistics.median(r['lookups_per_cpu_s'] for r in rs):,.0f} lookups/s")
                extra += (f"; import {statistics.median(r['import_ms'] for r in rs):.0f} ms + data "
                         f"{statistics.median(r['data_ms'] for r in rs):.0f} ms; RSS after reading the "
                         f"input {rs[0]['rss_input_mb']:.0f} MB, after loading {rs[0]['rss_loaded_mb']:.0f} MB")
                lo = os.path.join(d, f"load-{t}.json")
                if os.path.exists(lo):
                    lo = json.load(open(lo))
                    extra += f"; loaded alone, no input: {lo['rss_mb']:.0f} MB in {lo['load_ms']:.0f} ms"
            else:
                self_rss = rs[0].get("rss_self_mb")
                extra = f"; self-reported peak RSS {self_rss:.0f} MB" if self_rss else ""
            print(f"  {t}: medians of {med[t]['runs']} run(s); lookups/s per run {med[t]['all']}{extra}")
    print()

    status = 0
    peers = [t for t in ("reverse_geocode", "reverse_geocoder") if t in med]
    if "spotstore" not in med:
        print("SPOTSTORE ROW MISSING: `spotstore geocode --benchmark` did not run or its output "
              "could not be parsed (see above); the peers' figures stand alone.")
        status = 3
    elif peers:
        best = max(peers, key=lambda t: med[t]["lookups_per_s"])
        s = med["spotstore"]
        ratio = s["lookups_per_s"] / med[best]["lookups_per_s"]
        checks = [
            (f"throughput {ratio:.2f}x the faster peer ({best})", ratio >= 2.0, "target >= 2x"),
            (f"load {s['load_ms']:.0f} ms", s["load_ms"] < 150, "target < 150 ms"),
            (f"peak RSS {s['rss_mb']:.1f} MB", s["rss_mb"] < 80, "target < 80 MB"),
        ]
        for text, ok, target in checks:
            print(f"{'ok    ' if ok else 'MISSED'}  {text} ({target})")
    if "spotstore" in lm:
        l = lm["spotstore"]
        rate = 100 * l["hits"] / l["city_rows"]
        print(f"{'ok    ' if rate >= 90 else 'MISSED'}  landmark city hit rate {rate:.1f}% (target >= 90%)")
        print(f"{'ok    ' if l['nocity_ok'] == l['nocity_rows'] else 'MISSED'}  "
              f"no city for {l['nocity_ok']}/{l['nocity_rows']} ocean and Antarctic points")
    else:
        print("SPOTSTORE LANDMARKS MISSING: `spotstore geocode` (lat,lon lines on stdin) did not run.")

    for t in TOOLS:
        if t in lm and lm[t]["misses"]:
            ms = lm[t]["misses"]
            print(f"\n{t}: {len(ms)} misses (expected -> answered)")
            for m in ms:
                print(f"  {m['name']}: {m['expected'] or '(no city)'} -> {m['got'] or '(no city)'}")
    return status


def main(a):
    cmd = a[1]
    if cmd == "points":
        make_points(a[2], int(a[3]), int(a[4]))
    elif cmd == "peer-bench":
        peer_bench(a[2], a[3], a[4])
    elif cmd == "peer-load":
        peer_load_only(a[2], a[3])
    elif cmd == "peer-landmarks":
        peer_landmarks(a[2], a[3], a[4])
    elif cmd == "spotstore-landmarks":
        spotstore_landmarks(a[2], a[3], a[4])
    elif cmd == "measured":
        assert a[3] == "--"
        return measured(a[2], a[4:])
    elif cmd == "spotstore-bench":
        return spotstore_bench(a[2], a[3], a[4])
    elif cmd == "score":
        score(a[2], a[3], a[4])
    elif cmd == "report":
        return report(a[2])
    else:
        raise SystemExit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
