#!/usr/bin/env bash
# resumable.sh - resumable uploads against a single PUT of the same bytes, same run:
# a 64 MiB file through Firebase's resumable protocol, tus and the IETF draft, each in
# 8 MiB chunks, into a local `spotstore serve` (release build, embedded store); then each
# cut half way through a chunk and resumed, counting the bytes sent twice.
#
#   bench/resumable.sh
#   SMOKE=1 bench/resumable.sh   # a 2 MiB file in 1 MiB chunks, one run: checks it works
#
# Environment (all optional):
#   SPOTSTORE=path   binary to test (default: swift build -c release --product spotstore)
#   SIZE_MIB=64      file size; CHUNK_MIB=8 chunk size; RUNS=5 timed runs (medians)
#   PORT=18295       spotstore serve port; KEEP=1 keeps the temporary directory
#   SMOKE=1          SIZE_MIB=2 CHUNK_MIB=1 RUNS=1, and .build/debug/spotstore when SPOTSTORE
#                    is not set (see bench/common.sh)
# Targets: each protocol >= 0.8x the MB/s of the single PUT; a resume re-sends at most one chunk.
# The report is printed and saved to bench/results/resumable-<UTC time>.txt
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
die() { printf 'resumable.sh: %s\n' "$*" >&2; exit 1; }
log() { printf '== %s\n' "$*" >&2; }
. "$HERE/common.sh"
if [[ -n ${SMOKE:-} ]]; then SIZE_MIB=${SIZE_MIB:-2}; CHUNK_MIB=${CHUNK_MIB:-1}; RUNS=${RUNS:-1}; fi
SIZE_MIB=${SIZE_MIB:-64}; CHUNK_MIB=${CHUNK_MIB:-8}; RUNS=${RUNS:-5}; PORT=${PORT:-18295}
use_spotstore

use_workdir

head -c $((SIZE_MIB << 20)) /dev/urandom >"$work/file.bin"
cat >"$work/rules" <<'RULES'
match /b/media/o/{path=**} {
  allow read, write: if request.auth != null;
  limit size: 1 GiB, thumbnails: false;
}
RULES
"$SPOTSTORE" users add bench --store "$work/store" >"$work/user.txt" 2>&1 ||
  die "'$SPOTSTORE users add' failed: $(tail -3 "$work/user.txt")"
token=$(tail -1 "$work/user.txt")
start_spotstore "$PORT" --rules "$work/rules"

mkdir -p "$RESULTS"
report="$RESULTS/resumable-$(date -u +%Y%m%dT%H%M%SZ).txt"
{
  echo "bench/resumable.sh  $(date -u +%FT%TZ)  $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')  $(nproc) cores${SMOKE:+  (smoke: not comparable)}"
  echo "file ${SIZE_MIB} MiB of random bytes, chunks of ${CHUNK_MIB} MiB, ${RUNS} runs, embedded store"
  python3 "$HERE/resumable.py" 127.0.0.1 "$PORT" "$token" "$work/file.bin" "$CHUNK_MIB" "$RUNS"
} | tee "$report"
log "saved $report"
