#!/usr/bin/env bash
# smoke.sh - every benchmark in smoke mode (SMOKE=1: a tiny corpus, a second or two of load,
# see bench/common.sh), one after another. Each must exit 0 and print its figures (the lines
# below); their values are never judged. Exit status 1 when one fails, after running them all.
#
#   bench/smoke.sh                   # .build/debug/spotstore, else .build/release/spotstore
#   SPOTSTORE=path bench/smoke.sh    # that binary
#   bench/smoke.sh load cluster      # only these
#
# Needs what `bin/install-deps --bench` installs. cluster.sh and scale-postgres (scale.sh with
# CATALOG=postgres) need the test services: when
# $SPOTSTORE_TEST_SERVICES_ENV (default .build/test-services.env) describes none running, this
# script starts them with bin/test-services and stops them at the end, as bin/test does.
# Output and reports of each bench: bench/results/smoke/<UTC time>/ (gitignored).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
die() { printf 'smoke.sh: %s\n' "$*" >&2; exit 2; }

BENCHES=(thumbnails webp ingest resumable upload-memory small-writes scale scale-postgres decode-bombs geocode load cluster console)
# run NAME: the bench's script; scale-postgres is scale.sh with its catalog in PostgreSQL
run() { case $1 in scale-postgres) CATALOG=postgres PORT=18184 "$HERE/scale.sh" ;; *) "$HERE/$1.sh" ;; esac; }
# figures NAME: the extended regular expressions that NAME's output must match, one a line
figures() {
  case $1 in
    thumbnails) printf '%s\n' '^spotstore --size 256( +[0-9.]+)+$' '^ours256 mean SSIM [0-9.]+' ;;
    webp) printf '%s\n' '^spotstore thumbnail --size 256 --size 1024 \(JPEG\) +[0-9.]+$' '^spotstore WebP mean SSIM [0-9.]+' ;;
    ingest) printf '%s\n' '^\(a\) spotstore ingest, fresh store +[0-9.]+ +[0-9]+' '^\(c\) spotstore ingest, second run +[0-9.]+' ;;
    resumable) printf '%s\n' '^single PUT +[0-9.]+ +[0-9.]+' '^ietf resumable \(one request\) +[0-9]+ bytes' ;;
    upload-memory) printf '%s\n' '^round 1: .*[0-9]+ 200.* in [0-9.]+ s' '^peak resident memory: [0-9]+ MB' ;;
    small-writes) printf '%s\n' '^8 +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x +[0-9.]+ +[0-9.]+$' ;;
    scale | scale-postgres) printf '%s\n' '^2000( +[0-9.]+){12}$' '^largest/smallest( +[0-9.]+x){9}$' ;;
    decode-bombs) printf '%s\n' "^alice's photo on an idle server: median [0-9]+ ms" '^  png16.png +[0-9]+ +[0-9.]+s +[0-9]+MB' ;;
    geocode) printf '%s\n' '^\| spotstore \| [0-9]+ \| [0-9,]+ \|' 'landmark city hit rate [0-9.]+%' ;;
    load) printf '%s\n' '^ +ratio +[0-9.]+ +firebase/own req/s' '^ +[0-9]+ requests, [0-9]+ req/s' ;;
    console) printf '%s\n' "^console's own JavaScript and CSS \(decoded\) +[0-9.]+ KB" '^folder: thumbnails fetched +[0-9]+' '^spot page: 1 HTML \+ [0-9]+ style/icon \+ [0-9]+ images' ;;
    cluster) printf '%s\n' '^ +ratio +[0-9.]+ +cluster/s3 MB/s' '^ +ratio +[0-9.]+ +cluster/embedded-nginx req/s' '^ +[0-9.]+ +cluster/floor (MB|req)/s' '^ +round 1: .*[0-9]+ objects listed' '^ +listing-warm +1 ' ;;
  esac
}
selected=("$@")
((${#selected[@]})) || selected=("${BENCHES[@]}")
for name in "${selected[@]}"; do
  [[ " ${BENCHES[*]} " == *" $name "* ]] || die "no bench '$name' (benches: ${BENCHES[*]})"
done

if [[ -z ${SPOTSTORE:-} ]]; then
  for candidate in "$ROOT/.build/debug/spotstore" "$ROOT/.build/release/spotstore"; do
    [[ -x $candidate ]] && { SPOTSTORE=$candidate; break; }
  done
  [[ -n ${SPOTSTORE:-} ]] || die "no .build/debug/spotstore nor .build/release/spotstore: run swift build --product spotstore, or set SPOTSTORE=path"
fi
[[ -x $SPOTSTORE ]] || die "no executable at SPOTSTORE=$SPOTSTORE"
SPOTSTORE=$(cd "$(dirname "$SPOTSTORE")" && pwd)/$(basename "$SPOTSTORE")
RESULTS=$HERE/results/smoke/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$RESULTS"
export SMOKE=1 SPOTSTORE RESULTS

if [[ " ${selected[*]} " == *" cluster "* || " ${selected[*]} " == *" scale-postgres "* ]]; then
  export SPOTSTORE_TEST_SERVICES_ENV=${SPOTSTORE_TEST_SERVICES_ENV:-$ROOT/.build/test-services.env}
  if ! "$ROOT/bin/test-services" status >/dev/null 2>&1; then
    trap '"$ROOT/bin/test-services" stop >/dev/null || true' EXIT
    "$ROOT/bin/test-services" start >&2 || die "bin/test-services start failed"
  fi
fi

printf 'smoke runs of %s with %s; output in %s\n' "${selected[*]}" "$SPOTSTORE" "$RESULTS"
failed=() summary=() total_start=$SECONDS
for name in "${selected[@]}"; do
  mapfile -t patterns < <(figures "$name")
  out=$RESULTS/$name.log start=$SECONDS status=0
  printf '== %s ... ' "$name"
  run "$name" >"$out" 2>&1 </dev/null || status=$?
  verdict=ok
  if ((status != 0)); then
    verdict="FAILED (exit status $status)"
  else
    for pattern in "${patterns[@]}"; do
      grep -Eq -- "$pattern" "$out" || { verdict="FAILED (no line matching /$pattern/)"; break; }
    done
  fi
  summary+=("$(printf '%-14s %4d s  %s' "$name" $((SECONDS - start)) "$verdict")")
  printf '%s in %d s\n' "$verdict" $((SECONDS - start))
  if [[ $verdict != ok ]]; then
    failed+=("$name")
    tail -15 "$out" | sed 's/^/   | /'
  fi
done
printf '\nsmoke runs (%s, load average now %s):\n' "$(basename "$SPOTSTORE")" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '  %s\n' "${summary[@]}"
printf '  %-14s %4d s\n' "total" $((SECONDS - total_start))
((${#failed[@]} == 0)) || { printf 'smoke.sh: failed: %s (output in %s)\n' "${failed[*]}" "$RESULTS" >&2; exit 1; }
