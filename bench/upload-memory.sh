#!/usr/bin/env bash
# Peak resident memory of `spotstore serve` while 32 clients upload ~6 MiB photos at once.
#
#   bench/upload-memory.sh            # builds the release binary if SPOTSTORE is not set
#   CLIENTS=32 ROUNDS=3 bench/upload-memory.sh
#   SMOKE=1 bench/upload-memory.sh    # 4 clients, 1 round, 1280x960 photos: checks it works
#
# The photos are bench/corpus JPEGs (4000x3000; CORPUS, COUNT=40, made by make-corpus.sh when
# missing) re-encoded at high quality so each is just under the 6 MiB spot limit; each client
# uploads one into its own slot (spots of 4). Reports the server's peak RSS (VmHWM from /proc)
# and the HTTP status counts; fails when a client cannot reach the server (status 000).
# Environment: SPOTSTORE, CLIENTS (32), ROUNDS (3), PORT (18181), CORPUS, COUNT, KEEP=1, and
# SMOKE=1 (CLIENTS=4 ROUNDS=1 COUNT=2 CORPUS=bench/corpus-smoke, .build/debug/spotstore when
# SPOTSTORE is not set: see bench/common.sh).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
die() { printf 'upload-memory.sh: %s\n' "$*" >&2; exit 1; }
log() { printf '== %s\n' "$*" >&2; }
. "$HERE/common.sh"
if smoke; then CLIENTS=${CLIENTS:-4}; ROUNDS=${ROUNDS:-1}; COUNT=${COUNT:-2}; CORPUS=${CORPUS:-$HERE/corpus-smoke}; fi
CLIENTS=${CLIENTS:-32}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-18181}
COUNT=${COUNT:-40}
CORPUS=${CORPUS:-$HERE/corpus}
use_spotstore
command -v curl >/dev/null || apt-get install -y -qq curl
CONVERT=$(imagemagick) || die "ImageMagick's convert is missing (apt-get install imagemagick)"
for i in $(seq 1 "$COUNT"); do
  [ -s "$(printf '%s/photo_%03d.jpg' "$CORPUS" "$i")" ] || { "$HERE/make-corpus.sh" "$CORPUS" "$COUNT" >&2; break; }
done

use_workdir
mkdir -p "$work/photos"
limit=$((6 * 1024 * 1024))
for i in $(seq 1 "$CLIENTS"); do
  source=$CORPUS/$(printf 'photo_%03d.jpg' $(( (i - 1) % COUNT + 1 )))
  out="$work/photos/p$i.jpg"
  for quality in 98 96 94 92 90; do
    "$CONVERT" "$source" -quality $quality "$out" || die "convert $source failed"
    [ "$(stat -c %s "$out")" -le $limit ] && break
  done
done
sizes=$(stat -c %s "$work"/photos/*.jpg | sort -n)
echo "upload-memory bench${SMOKE:+ (smoke: not comparable)}: photos: $CLIENTS, $(echo "$sizes" | head -1)..$(echo "$sizes" | tail -1) bytes each"

token=$("$SPOTSTORE" users add bench --store "$work/store" | tail -1) || die "spotstore users add failed"
start_spotstore "$PORT" --max-uploads-per-client "$CLIENTS"   # all clients upload as one user (default limit 16)
echo "server pid $server_pid, resident at start: $(grep VmRSS /proc/$server_pid/status | awk '{print $2}') kB"

for round in $(seq 1 "$ROUNDS"); do
  start=$(date +%s.%N)
  clients=()
  for i in $(seq 1 "$CLIENTS"); do
    spot="r${round}s$(( (i - 1) / 4 ))"
    curl -s -o /dev/null -w '%{http_code}\n' -X PUT -H "Authorization: Bearer $token" \
      --data-binary @"$work/photos/p$i.jpg" "http://127.0.0.1:$PORT/v0/b/spots/o/$spot%2Fp$i.jpg" > "$work/status.$i" &
    clients+=($!)
  done
  wait "${clients[@]}" || true
  end=$(date +%s.%N)
  ! grep -q '^000$' "$work"/status.* || die "round $round: a client could not reach the server (see $work/server.log)"
  statuses=$(cat "$work"/status.* | sort | uniq -c | tr -s ' ' | tr '\n' ',')
  echo "round $round: ${statuses%,} in $(echo "$end - $start" | bc) s; peak RSS so far $(grep VmHWM /proc/$server_pid/status | awk '{print $2}') kB"
done
peak=$(grep VmHWM /proc/$server_pid/status | awk '{print $2}')
echo "peak resident memory: $((peak / 1024)) MB (target < 150 MB)"
