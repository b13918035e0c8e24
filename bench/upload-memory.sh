#!/usr/bin/env bash
# Peak resident memory of `spotstore serve` while 32 clients upload ~6 MiB photos at once.
#
#   bench/upload-memory.sh            # builds the release binary if SPOTSTORE is not set
#   CLIENTS=32 ROUNDS=3 bench/upload-memory.sh
#
# The photos are bench/corpus JPEGs (4000x3000) re-encoded at high quality so each is just
# under the 6 MiB spot limit; each client uploads one into its own slot (8 spots x 4).
# Reports the server's peak RSS (VmHWM from /proc) and the HTTP status counts.
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=${CLIENTS:-32}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-18181}
if [ -z "${SPOTSTORE:-}" ]; then
  swift build -c release --product spotstore >&2
  SPOTSTORE=.build/release/spotstore
fi
command -v curl >/dev/null || apt-get install -y -qq curl
[ -f bench/corpus/photo_001.jpg ] || bench/make-corpus.sh bench/corpus 40 >&2

work=$(mktemp -d /tmp/spotstore-memory.XXXXXX)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/photos"
limit=$((6 * 1024 * 1024))
for i in $(seq 1 "$CLIENTS"); do
  source=bench/corpus/$(printf 'photo_%03d.jpg' $(( (i - 1) % 40 + 1 )))
  out="$work/photos/p$i.jpg"
  for quality in 98 96 94 92 90; do
    convert "$source" -quality $quality "$out"
    [ "$(stat -c %s "$out")" -le $limit ] && break
  done
done
sizes=$(stat -c %s "$work"/photos/*.jpg | sort -n)
echo "photos: $CLIENTS, $(echo "$sizes" | head -1)..$(echo "$sizes" | tail -1) bytes each"

token=$("$SPOTSTORE" users add bench --store "$work/store" | tail -1)
"$SPOTSTORE" serve --store "$work/store" --port "$PORT" --log-level warning &
server=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
echo "server pid $server, resident at start: $(grep VmRSS /proc/$server/status | awk '{print $2}') kB"

for round in $(seq 1 "$ROUNDS"); do
  start=$(date +%s.%N)
  for i in $(seq 1 "$CLIENTS"); do
    spot="r${round}s$(( (i - 1) / 4 ))"
    curl -s -o /dev/null -w '%{http_code}\n' -X PUT -H "Authorization: Bearer $token" \
      --data-binary @"$work/photos/p$i.jpg" "http://127.0.0.1:$PORT/v0/b/spots/o/$spot%2Fp$i.jpg" > "$work/status.$i" &
  done
  wait $(jobs -p | grep -v "^$server$") 2>/dev/null || true
  end=$(date +%s.%N)
  statuses=$(cat "$work"/status.* | sort | uniq -c | tr -s ' ' | tr '\n' ',')
  echo "round $round: ${statuses%,} in $(echo "$end - $start" | bc) s; peak RSS so far $(grep VmHWM /proc/$server/status | awk '{print $2}') kB"
done
peak=$(grep VmHWM /proc/$server/status | awk '{print $2}')
echo "peak resident memory: $((peak / 1024)) MB (target < 150 MB)"
