#!/usr/bin/env bash
# Offline reverse geocoding: spotstore vs Python's reverse_geocode 1.6.6 and
# reverse_geocoder 1.5.1, on the same 1,000,000 seeded points, one core each, plus the
# city hit rate of each on fixtures/landmarks.csv. See bench/geocode/README.md.
#
#   bench/geocode.sh                     # builds .build/release/spotstore if missing
#   SPOTSTORE=path/to/spotstore bench/geocode.sh   # use that binary, never build
#   ONLY_PEERS=1 bench/geocode.sh        # the two Python peers only (no Swift needed)
#   RUNS=3 CPU=0 COUNT=1000000 bench/geocode.sh    # the defaults
#   SMOKE=1 bench/geocode.sh             # 1000 points, one run, .build/debug/spotstore (else
#                                        # .build/release) when SPOTSTORE is not set: checks it works
# Reports go to bench/results (RESULTS; bench/results/smoke with SMOKE=1).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if [ -n "${SMOKE:-}" ]; then
    RUNS="${RUNS:-1}"; COUNT="${COUNT:-1000}"; POINTS="${POINTS:-bench/geocode/points-smoke.txt}"
    if [ -z "${SPOTSTORE:-}" ]; then
        for candidate in .build/debug/spotstore .build/release/spotstore; do
            [ -x "$candidate" ] && { SPOTSTORE=$candidate; break; }
        done
        [ -n "${SPOTSTORE:-}" ] || { echo "geocode.sh: SMOKE=1 builds nothing and there is no .build/debug/spotstore nor .build/release/spotstore: run swift build --product spotstore, or set SPOTSTORE=path" >&2; exit 1; }
    fi
fi
RESULTS="${RESULTS:-bench/results${SMOKE:+/smoke}}"
RUNS="${RUNS:-3}"
CPU="${CPU:-0}"
COUNT="${COUNT:-1000000}"
SEED="${SEED:-20240601}"
POINTS="${POINTS:-bench/geocode/points-1m.txt}"
LANDMARKS="${LANDMARKS:-fixtures/landmarks.csv}"
VENV="${VENV:-bench/.venv-geo}"
ONLY_PEERS="${ONLY_PEERS:-0}"
HELPER=bench/geocode/geobench.py
PIN=(taskset -c "$CPU")

say() { printf '%s\n' "$*" >&2; }

# --- Python peers, pinned (numpy/scipy too: their KD-tree is the peers' engine) -------
PY="$VENV/bin/python"
if ! "$PY" -c 'import reverse_geocode, reverse_geocoder' 2>/dev/null; then
    [ "$VENV" = bench/.venv-geo ] || { say "geocode.sh: $VENV has no reverse_geocode or reverse_geocoder"; exit 1; }
    bin/install-deps --bench >&2 || { say "geocode.sh: bin/install-deps --bench (which makes $VENV) failed"; exit 1; }
fi

# --- the points, generated once -----------------------------------------------------
if [ ! -s "$POINTS" ] || [ "$(wc -l < "$POINTS")" -ne "$COUNT" ]; then
    say "== generating $COUNT points (uniform on the sphere, seed $SEED) into $POINTS"
    python3 "$HELPER" points "$POINTS" "$COUNT" "$SEED"
fi

mkdir -p "$RESULTS"
# raw figures: kept in /tmp (printed at the end); a smoke run keeps them beside its report
OUT="$(mktemp -d "$([ -n "${SMOKE:-}" ] && echo "$RESULTS" || echo /tmp)/geocode-bench.XXXXXX")"
REPORT="$RESULTS/geocode-$(date +%Y%m%d-%H%M%S).txt"

# --- spotstore binary ---------------------------------------------------------------
HAVE_SPOTSTORE=0
if [ "$ONLY_PEERS" != 1 ]; then
    if [ -z "${SPOTSTORE:-}" ]; then
        SPOTSTORE=.build/release/spotstore
        if [ ! -x "$SPOTSTORE" ]; then
            say "== building: swift build -c release --product spotstore"
            swift build -c release --product spotstore >&2 || say "swift build failed"
        fi
    fi
    if [ -x "$SPOTSTORE" ]; then HAVE_SPOTSTORE=1; else say "no spotstore binary at $SPOTSTORE"; fi
fi

{
echo "# bench/geocode.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)${SMOKE:+ (smoke: not comparable)}"
echo "host: $(uname -srm), $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "points: $POINTS ($(wc -l < "$POINTS") lines, sha256 $(sha256sum "$POINTS" | cut -c1-16)…), one core (taskset -c $CPU), $RUNS run(s) per tool, interleaved"
echo "peers: $("$VENV/bin/pip" freeze 2>/dev/null | grep -iE '^(reverse|numpy|scipy)' | tr '\n' ' ')"
echo "spotstore: $([ "$HAVE_SPOTSTORE" = 1 ] && echo "$SPOTSTORE" || echo "not run")"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$REPORT"

cat "$POINTS" > /dev/null     # page cache

FAILED=0
for run in $(seq 1 "$RUNS"); do
    for tool in reverse_geocode reverse_geocoder; do
        say "== run $run: $tool"
        if ! "${PIN[@]}" "$PY" "$HELPER" peer-bench "$tool" "$POINTS" "$OUT/bench-$tool-$run.json"; then
            say "$tool failed"; FAILED=1
        fi
    done
    if [ "$HAVE_SPOTSTORE" = 1 ]; then
        say "== run $run: spotstore geocode --benchmark $POINTS"
        python3 "$HELPER" measured "$OUT/measured-$run.json" -- \
            "${PIN[@]}" "$SPOTSTORE" geocode --benchmark "$POINTS" \
            > "$OUT/spotstore-$run.out" 2>&1 || true
        sed 's/^/   | /' "$OUT/spotstore-$run.out" | head -20 >&2
        python3 "$HELPER" spotstore-bench "$OUT/spotstore-$run.out" "$OUT/measured-$run.json" \
            "$OUT/bench-spotstore-$run.json" || say "spotstore --benchmark: no usable figures (run $run)"
    fi
done

# --- landmarks (and each peer's footprint without the 1M-point input) ---------------
for tool in reverse_geocode reverse_geocoder; do
    "${PIN[@]}" "$PY" "$HELPER" peer-load "$tool" "$OUT/load-$tool.json"
    "$PY" "$HELPER" peer-landmarks "$tool" "$LANDMARKS" "$OUT/answers-$tool.txt"
    python3 "$HELPER" score "$LANDMARKS" "$OUT/answers-$tool.txt" "$OUT/landmarks-$tool.json"
done
if [ "$HAVE_SPOTSTORE" = 1 ]; then
    python3 - "$LANDMARKS" > "$OUT/landmarks-in.txt" <<'EOF'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], encoding="utf-8", newline="")):
    print(f"{r['latitude']},{r['longitude']}")
EOF
    if "$SPOTSTORE" geocode < "$OUT/landmarks-in.txt" > "$OUT/spotstore-landmarks.out" 2> "$OUT/spotstore-landmarks.err" \
       && python3 "$HELPER" spotstore-landmarks "$LANDMARKS" "$OUT/spotstore-landmarks.out" "$OUT/answers-spotstore.txt"; then
        python3 "$HELPER" score "$LANDMARKS" "$OUT/answers-spotstore.txt" "$OUT/landmarks-spotstore.json"
    else
        say "spotstore geocode (stdin) failed:"; head -5 "$OUT/spotstore-landmarks.err" >&2 || true
    fi
fi

STATUS=0
python3 "$HELPER" report "$OUT" > "$OUT/report.txt" || STATUS=$?
{
cat "$OUT/report.txt"
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "raw figures: $OUT"
} | tee -a "$REPORT"
say "report saved to $REPORT"

[ "$FAILED" = 0 ] || exit 1
if [ "$ONLY_PEERS" = 1 ]; then exit 0; fi
exit "$STATUS"
