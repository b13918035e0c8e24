#!/usr/bin/env bash
# Small durable writes: tiny PUTs into one folder of the embedded store, side by side with
# the floor (bench/durable-floor.py: the same bytes written, synced, renamed and recorded in
# SQLite with synchronous=FULL, one transaction each) at the same concurrency, on the same disk.
#
#   bench/small-writes.sh                       # builds the release binary if SPOTSTORE is not set
#   CLIENTS="8 64" COUNT=2000 SIZE=100 bench/small-writes.sh
#   ROUNDS=10 CLIENTS=8 COUNT=20000 bench/small-writes.sh   # one folder grown to 200,000 objects
#   SMOKE=1 bench/small-writes.sh               # 8 clients, 200 writes: checks it works
#
# For each round and each number of clients: SpotStore's writes per second (and p50/p99
# latency) over HTTP, every object its own bytes, all into folder `bulk` of bucket `files`
# (which grows by COUNT each time: the table says how many objects it held before); then the
# floor with as many threads (a fresh one each time). Target: SpotStore >= 1.0x the floor for
# tiny writes, 0.8x from 1 MiB on (SIZE=4194304: 4 MiB PUTs). Environment: SPOTSTORE, CLIENTS
# ("8 64"), COUNT (2000 per run), SIZE (bytes, 100), ROUNDS (1), PORT (18182), KEEP=1, SMOKE=1.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
die() { printf 'small-writes.sh: %s\n' "$*" >&2; exit 1; }
log() { printf '== %s\n' "$*" >&2; }
. "$HERE/common.sh"
if smoke; then CLIENTS=${CLIENTS:-8}; COUNT=${COUNT:-200}; fi
CLIENTS=${CLIENTS:-8 64}
COUNT=${COUNT:-2000}
SIZE=${SIZE:-100}
ROUNDS=${ROUNDS:-1}
PORT=${PORT:-18182}
use_spotstore
command -v python3 >/dev/null || die "python3 is missing (apt-get install python3)"
use_workdir
TOKEN=$("$SPOTSTORE" users add bench --store "$work/store" 2>"$work/users.log" | tail -1) ||
  die "spotstore users add failed: $(cat "$work/users.log")"
limit_mib=$(( (SIZE + 1048575) / 1048576 ))
target=$(if ((SIZE >= 1048576)); then echo 0.8; else echo 1.0; fi)
cat >"$work/writes.rules" <<RULES
rules_version = '2';
// bench/small-writes.sh: any bytes up to $limit_mib MiB (SIZE, rounded up) in bucket \`files\`, no thumbnails.
service firebase.storage {
  match /b/files/o/{path=**} {
    limit size: $limit_mib MiB, thumbnails: false;
    allow read, write, list: if request.auth != null;
  }
}
RULES
start_spotstore "$PORT" --rules "$work/writes.rules" --max-uploads-per-client 1000
mkdir -p "$RESULTS"
report=$RESULTS/small-writes-$(date -u +%Y%m%dT%H%M%SZ).txt
{
  printf 'small-writes: %s PUTs of %s bytes per run into files/bulk, %s; load %s\n' "$COUNT" "$SIZE" "$SPOTSTORE" "$(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%-8s %10s %14s %14s %8s %9s %9s\n' clients 'in folder' 'spotstore w/s' 'floor w/s' ratio 'p50 ms' 'p99 ms'
  run=0
  for ((round = 1; round <= ROUNDS; round++)); do
    for clients in $CLIENTS; do
      run=$((run + 1))
      read -r _ _ _ _ ours p50 p99 failed < <(python3 "$HERE/small-writes.py" "http://127.0.0.1:$PORT" "$TOKEN" files bulk "$COUNT" "$clients" "$SIZE" "r$run-")
      [[ $failed == 0 ]] || die "$failed of $COUNT PUTs failed; see $work/server.log"
      read -r _ _ _ _ floor < <(python3 "$HERE/durable-floor.py" "$work/floor$run" "$COUNT" "$clients" "$SIZE")
      rm -rf "$work/floor$run"
      ratio=$(python3 -c "print(f'{$ours / $floor:.2f}')")
      printf '%-8s %10s %14s %14s %8s %9s %9s\n' "$clients" "$(((run - 1) * COUNT))" "$ours" "$floor" "${ratio}x" "$p50" "$p99"
      if ! smoke && python3 -c "import sys; sys.exit(0 if $ours < $target * $floor else 1)"; then echo "MISSED: $clients clients at ${ratio}x the floor (target ${target}x)"; fi
    done
  done
} | tee "$report"
log "saved $report"
