#!/usr/bin/env bash
# decode-bombs.sh - what hostile images cost a running `spotstore serve` (release build,
# embedded store): a progressive JPEG of 695 scans, a grey progressive JPEG of 443 scans
# (under the scan limit and the memory budget) and a 16-bit RGB PNG, all 10000x9999 (the
# PNG 10000x9999 too), uploaded by one user ("mallory"); for each, the time to the answer
# and the server's peak RSS, then another user's ("alice") 12 MP photo upload while four
# of mallory's bombs arrive at once, against the same upload on the idle server.
#
#   bench/decode-bombs.sh
#   SMOKE=1 bench/decode-bombs.sh    # 1000x999 bombs, a 1000x750 photo, one idle upload: checks the
#                                    script works (.build/debug/spotstore when SPOTSTORE is not set)
#
# Environment (all optional):
#   SPOTSTORE=path   binary to test (default: swift build -c release --product spotstore)
#   WIDTH=10000 HEIGHT=9999  bomb size; PHOTO_WIDTH=4000 PHOTO_HEIGHT=3000  alice's photo
#   RUNS=5 idle uploads (median); PORT=18297; KEEP=1
# Needs cc, libjpeg-dev and cjpeg/djpeg (libjpeg-turbo-progs).
# The report is printed and saved to bench/results/decode-bombs-<UTC time>.txt
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
die() { printf 'decode-bombs.sh: %s\n' "$*" >&2; exit 1; }
log() { printf '== %s\n' "$*" >&2; }
. "$HERE/common.sh"
if [[ -n ${SMOKE:-} ]]; then WIDTH=${WIDTH:-1000}; HEIGHT=${HEIGHT:-999}; PHOTO_WIDTH=${PHOTO_WIDTH:-1000}; PHOTO_HEIGHT=${PHOTO_HEIGHT:-750}; RUNS=${RUNS:-1}; fi
WIDTH=${WIDTH:-10000}; HEIGHT=${HEIGHT:-9999}; RUNS=${RUNS:-5}; PORT=${PORT:-18297}
PHOTO_WIDTH=${PHOTO_WIDTH:-4000}; PHOTO_HEIGHT=${PHOTO_HEIGHT:-3000}
command -v cjpeg >/dev/null || apt-get install -y -qq libjpeg-turbo-progs >&2
use_spotstore

use_workdir

cc -O2 -o "$work/progressive-bomb" "$HERE/progressive-bomb.c" -ljpeg || die "cannot build bench/progressive-bomb.c"
log "making the bombs (${WIDTH}x${HEIGHT})"
bombs=$(python3 "$HERE/decode-bombs.py" make "$work/progressive-bomb" "$work" "$WIDTH" "$HEIGHT" "$PHOTO_WIDTH" "$PHOTO_HEIGHT") ||
  die "decode-bombs.py make failed"

mallory=$("$SPOTSTORE" users add mallory --store "$work/store" | tail -1) || die "'$SPOTSTORE users add' failed"
alice=$("$SPOTSTORE" users add alice --store "$work/store" | tail -1) || die "'$SPOTSTORE users add' failed"
start_spotstore "$PORT"

mkdir -p "$RESULTS"
report="$RESULTS/decode-bombs-$(date -u +%Y%m%dT%H%M%SZ).txt"
{
  echo "bench/decode-bombs.sh  $(date -u +%FT%TZ)  $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')  $(nproc) cores${SMOKE:+  (smoke)}"
  echo "$bombs"
  python3 "$HERE/decode-bombs.py" measure "$PORT" "$server_pid" "$mallory" "$alice" "$work" "$RUNS"
} | tee "$report"
log "saved $report"
