#!/usr/bin/env bash
# Cost against size: one folder of the embedded store grown to each of SIZES objects (and a
# quarter as many spots), with the same requests timed at each size.
#
#   bench/scale.sh                               # builds the release binaries if SPOTSTORE is not set
#   SIZES="1000 10000 100000 1000000" REPEATS=200 bench/scale.sh
#   SMOKE=1 bench/scale.sh                       # 200 and 2000 objects, 20 requests each
#   CATALOG=postgres SIZES="1000 100000" bench/scale.sh   # the catalog in the test services' PostgreSQL
#
# The store is filled by spotstore-bench-fill through the catalog's own commits (the objects'
# bytes are not stored; nothing reads them), then served. At each size (medians of REPEATS):
# a tiny PUT into the folder on a kept-alive connection and the server's CPU per PUT; a page
# of 100 names of the folder; a search by city and one near a point (2 km); a DELETE; the
# server's resident memory. Target: at the largest size, within 1.2x of the smallest. Then,
# with the server stopped, `spotstore fsck` and `spotstore gc --dry-run` of the whole store
# (every object's bytes are stored for them), their time per thousand objects and their
# peak memory. Targets: time linear in the store (within 1.2x per object), memory under 200 MB.
# With CATALOG=postgres the catalog is a new database of the test services' PostgreSQL
# (`bin/test-services start` when none run; dropped at the end unless KEEP=1), the blobs stay in files.
# Environment: SPOTSTORE (and FILL, the loader, next to it), SIZES, REPEATS (200), PORT
# (18183), CATALOG (sqlite, postgres), KEEP=1, SMOKE=1.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
die() { printf 'scale.sh: %s\n' "$*" >&2; exit 1; }
log() { printf '== %s\n' "$*" >&2; }
. "$HERE/common.sh"
if smoke; then SIZES=${SIZES:-200 2000}; REPEATS=${REPEATS:-20}; fi
SIZES=${SIZES:-1000 10000 100000 1000000}
REPEATS=${REPEATS:-200}
PORT=${PORT:-18183}
if [[ -z ${SPOTSTORE:-} ]] && ! smoke; then
  (cd "$ROOT" && swift build -c release --product spotstore-bench-fill) >&2 || die "swift build --product spotstore-bench-fill failed"
fi
use_spotstore
FILL=${FILL:-$(dirname "$SPOTSTORE")/spotstore-bench-fill}
[[ -x $FILL ]] || die "no loader at FILL=$FILL: swift build --product spotstore-bench-fill"
use_workdir
CATALOG=${CATALOG:-sqlite}
fill_catalog=$work/store/catalog.sqlite
case $CATALOG in
  sqlite) unset SPOTSTORE_CATALOG ;;
  postgres)
    command -v psql >/dev/null || die "psql is missing (bin/install-deps --bench installs postgresql-client)"
    use_test_services
    database=bench_scale_$(basename "$work" | tr -c 'a-zA-Z0-9\n' _ | tr 'A-Z' 'a-z')
    psql -qAtX "$SPOTSTORE_TEST_POSTGRES" -c "CREATE DATABASE $database" >/dev/null || die "cannot create database $database"
    drop_database() {
      if [[ -n ${KEEP:-} ]]; then log "kept database $database"; return; fi
      psql -qAtX "$SPOTSTORE_TEST_POSTGRES" -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null || true
    }
    trap 'stop_workdir; drop_database' EXIT
    export SPOTSTORE_CATALOG=${SPOTSTORE_TEST_POSTGRES%/*}/$database
    fill_catalog=$SPOTSTORE_CATALOG ;;
  *) die "CATALOG is sqlite or postgres, not '$CATALOG'" ;;
esac
TOKEN=$("$SPOTSTORE" users add bench --store "$work/store" 2>"$work/users.log" | tail -1) ||
  die "spotstore users add failed: $(cat "$work/users.log")"
cat >"$work/scale.rules" <<'RULES'
rules_version = '2';
// bench/scale.sh: any bytes up to 1 MiB in bucket `files`; spots to search in bucket `spots`.
service firebase.storage {
  match /b/files/o/{path=**} {
    limit size: 1 MiB, thumbnails: false;
    allow read, write, list: if request.auth != null;
  }
  match /b/spots/o/{path=**} {
    allow read, list: if request.auth != null;
  }
}
RULES
# `peak OBJECTS CMD…`: runs CMD (output to $work/peak.log; dies when it fails) and prints its
# milliseconds per thousand OBJECTS and its peak resident memory in MB.
peak() {
  python3 - "$@" >"$work/peak.out" 2>"$work/peak.log" <<'PEAK' || die "$2 ${*:3} failed: $(tail -3 "$work/peak.log")"
import resource, subprocess, sys, time
started = time.monotonic()
status = subprocess.run(sys.argv[2:], stdout=sys.stderr).returncode
seconds = time.monotonic() - started
if status != 0: sys.exit(status)
print(f"{seconds * 1e6 / int(sys.argv[1]):.1f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f}")
PEAK
  cat "$work/peak.out"
}
mkdir -p "$RESULTS"
report=$RESULTS/scale-$(date -u +%Y%m%dT%H%M%SZ).txt
{
  printf 'scale: %s, catalog %s, medians of %s requests; load %s\n' "$SPOTSTORE" "$CATALOG" "$REPEATS" "$(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%-9s %8s %9s %8s %8s %8s %9s %7s %9s %9s %8s %8s %9s\n' objects 'PUT ms' 'CPU/PUT' 'list ms' 'city ms' 'near ms' 'DELETE ms' 'RSS MB' \
    'fsck ms/k' 'gc ms/k' 'fsck MB' 'gc MB' 'fill s'
  filled=0 round=0 first="" last=""
  for size in $SIZES; do
    round=$((round + 1))
    started=$(date +%s.%N)
    "$FILL" "$fill_catalog" bench files/big "$filled" "$size" spots $((filled / 4)) $((size / 4)) "$work/store/blobs" 2>"$work/fill.log" ||
      die "spotstore-bench-fill failed: $(tail -3 "$work/fill.log")"
    fill_seconds=$(python3 -c "print(f'{$(date +%s.%N) - $started:.0f}')")
    filled=$size
    start_spotstore "$PORT" --rules "$work/scale.rules"
    read -r _ put cpu list city near delete rss < <(python3 "$HERE/scale.py" "http://127.0.0.1:$PORT" "$TOKEN" "$server_pid" big "$round" "$REPEATS")
    kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
    read -r fsck_ms fsck_mb < <(peak "$size" "$SPOTSTORE" fsck --store "$work/store")
    read -r gc_ms gc_mb < <(peak "$size" "$SPOTSTORE" gc --dry-run --store "$work/store")
    line="$put $cpu $list $city $near $delete $rss $fsck_ms $gc_ms $fsck_mb $gc_mb"
    printf '%-9s %8s %9s %8s %8s %8s %9s %7s %9s %9s %8s %8s %9s\n' "$size" $line "$fill_seconds"
    [[ -n $first ]] || first=$line
    last=$line
  done
  python3 - "$first" "$last" "${SMOKE:-}" <<'RATIO'
import sys
first, last = ([float(x) for x in line.split()] for line in sys.argv[1:3])
ratios = [l / f if f else 0 for f, l in zip(first, last)]
print("largest/smallest " + " ".join(f"{r:.2f}x" for r in ratios[:7] + ratios[7:9]))
if not sys.argv[3]:
    for name, ratio in zip(["PUT", "CPU/PUT", "list", "city", "near", "DELETE", "RSS", "fsck per object", "gc per object"], ratios):
        if ratio > 1.2: print(f"MISSED: {name} at {ratio:.2f}x the smallest size (target 1.2x)")
    for name, megabytes in zip(["fsck", "gc"], last[9:11]):
        if megabytes >= 200: print(f"MISSED: {name} peaked at {megabytes:.0f} MB (target under 200 MB)")
RATIO
} | tee "$report"
log "saved $report"
