#!/usr/bin/env bash
# cluster.sh - two SpotStore instances behind nginx on one PostgreSQL + S3, side by side with
# the same S3 server reached directly (presigned URLs) and with the embedded default store.
#
#   bench/cluster.sh
#   SMOKE=1 bench/cluster.sh   # 2 photos of 1280x960, 1 s per side, a 2 s mix, 1 race, 1 count: checks it works
#
# Needs the test services (PostgreSQL 15 and the Swift S3 server): when
# $SPOTSTORE_TEST_SERVICES_ENV (default .build/test-services.env) does not describe running
# ones, `bin/test-services start` starts them (and leaves them running). Everything this
# script creates there (a database, a bucket prefix) is removed at the end.
#
# Environment (all optional):
#   SPOTSTORE=path      binary to test; when set, no `swift build` is run
#                       (default: swift build -c release --product spotstore, then
#                       <repo>/.build/release/spotstore)
#   SECONDS_EACH=10     duration of each side-by-side test (each side)
#   MIX_SECONDS=60      duration of the mixed run against the cluster
#   WARMUP=2            seconds of unmeasured load before each measured run
#   CONNECTIONS=64      wrk connections (every test); THREADS=2 wrk threads
#   PHOTOS=4            JPEGs in the spot (PHOTO_SIZE=4000x3000: ~4 MB, 256 px thumbnails ~28 KB)
#   PUT_MB=4            upload size of the PUT comparison
#   TINY_BYTES=100      upload size of the tiny PUT comparison
#   MIX_PUT_KB=256      upload size inside the mix
#   MIX="thumb=40 thumb1024=10 media=10 meta=10 list=25 put=5"   weights of the mix
#   RACE_ROUNDS=3       rounds of the 16-way race (16 uploads at once into an empty 4-photo spot)
#   COUNT_N=10          requests of each kind in the counting phase
#   PORT=18294          nginx (the cluster's address); nodes on PORT+1 and PORT+2,
#                       the embedded store on PORT+3, nginx in front of it on PORT+4
#   LOG_LEVEL=info      spotstore serve --log-level
#   TRUSTED_PROXY=1     nodes run with --trusted-proxy 127.0.0.1 (nginx), as they should behind a
#                       proxy; 0 leaves it out (every client then counts as nginx's address for
#                       the failed-sign-in limit)
#   ONLY="media put tiny thumb race mix count"   which parts to run
#   KEEP=1              keep the temporary directory (stores, logs, nginx config, wrk output)
#   S3_LOG, PG_LOG      the S3 proxy's and PostgreSQL's log files (default: the test
#                       services' $SPOTSTORE_TEST_SERVICES_DIR/log/{proxy,postgres}.log)
#   SMOKE=1             SECONDS_EACH=1 MIX_SECONDS=2 WARMUP=0 PHOTOS=2 PHOTO_SIZE=1280x960 PUT_MB=1
#                       RACE_ROUNDS=1 COUNT_N=1, .build/debug/spotstore when SPOTSTORE is not set; a
#                       missed target does not fail it (see bench/common.sh)
#
# What runs: a new database on the test PostgreSQL and a new prefix of the test bucket;
# `spotstore users add` gives a token; two `spotstore serve` on them (each its own --store
# directory holding its copy of the rules), nginx in front with bench/nginx-cluster.conf
# (upstream of both, keep-alive, streaming both ways); a third `spotstore serve` on an
# embedded store (SQLite + files, the default). PHOTOS JPEGs go into spot photos/load through
# nginx (thumbnails made by the nodes). Then, with wrk -c CONNECTIONS:
#   media  GET a 4 MB original through nginx          vs a presigned GET of the same S3 object
#   put    PUT PUT_MB new bytes through nginx into     vs presigned PUTs of PUT_MB new bytes
#          bucket files (no thumbnails)                   straight to the S3 server; the floor
#                                                         (bench/durable-floor.py: the same bytes
#                                                         written and synced on this disk, as many
#                                                         threads as connections) is shown too
#   tiny   PUT TINY_BYTES new bytes into folder files/  vs the embedded store behind its own nginx;
#          tiny through nginx                             presigned PUTs and the floor are shown too
#   thumb  GET a 256 px thumbnail through nginx         vs the embedded store behind its own nginx
#          (repeated: kept answers)                       (same config, PORT+4); the embedded store
#                                                         and one node, both direct, are shown too
#   race   RACE_ROUNDS x 16 simultaneous uploads into an empty 4-photo spot through nginx:
#          exactly 4 x 200 and 12 x 409, no 5xx
#   mix    MIX_SECONDS of the MIX through nginx: no 5xx (wrk, nginx's log, both nodes' metrics)
#   count  statements per request, from PostgreSQL's own log (log_statement = 'all' set on the
#          bench database only, nodes restarted to pick it up), and S3 requests per request,
#          from the Swift proxy's log: uploads, downloads, thumbnails, listings, each after a
#          commit (caches dropped) and repeated; node 1 directly, markers in both logs.
# S3 requests of the media, put and thumb runs are counted from the proxy's log too.
# Targets: media MB/s >= 0.70 x S3, put MB/s >= 0.70 x S3, thumb req/s >= 0.80 x embedded,
# tiny req/s >= 0.50 x embedded,
# race and mix: 0 x 5xx. The report is printed and saved to bench/results/cluster-<UTC time>.txt.
# Exit status 1 when a target is missed (after the report; never with SMOKE=1), 2 when the setup fails.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
if [[ -n ${SMOKE:-} ]]; then
  SECONDS_EACH=${SECONDS_EACH:-1} MIX_SECONDS=${MIX_SECONDS:-2} WARMUP=${WARMUP:-0} PHOTOS=${PHOTOS:-2}
  PHOTO_SIZE=${PHOTO_SIZE:-1280x960} PUT_MB=${PUT_MB:-1} RACE_ROUNDS=${RACE_ROUNDS:-1} COUNT_N=${COUNT_N:-1}
fi
SECONDS_EACH=${SECONDS_EACH:-10}
MIX_SECONDS=${MIX_SECONDS:-60}
WARMUP=${WARMUP:-2}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
PHOTOS=${PHOTOS:-4}
PHOTO_SIZE=${PHOTO_SIZE:-4000x3000}
PUT_MB=${PUT_MB:-4}
TINY_BYTES=${TINY_BYTES:-100}
MIX_PUT_KB=${MIX_PUT_KB:-256}
MIX=${MIX:-"thumb=40 thumb1024=10 media=10 meta=10 list=25 put=5"}
RACE_ROUNDS=${RACE_ROUNDS:-3}
COUNT_N=${COUNT_N:-10}
PORT=${PORT:-18294}
LOG_LEVEL=${LOG_LEVEL:-info}
TRUSTED_PROXY=${TRUSTED_PROXY:-1}
ONLY=${ONLY:-"media put tiny thumb race mix count"}

die() { printf 'cluster.sh: %s\n' "$*" >&2; exit 2; }
source "$HERE/common.sh"
log() { printf '.. %s\n' "$*" >&2; }
load_average() { cut -d' ' -f1-3 /proc/loadavg; }
wants() { [[ " $ONLY " == *" $1 "* ]]; }

# --- tools ------------------------------------------------------------------------------
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || missing+=(nginx)
command -v curl >/dev/null || missing+=(curl)
command -v psql >/dev/null || missing+=(postgresql-client)
imagemagick >/dev/null || missing+=(imagemagick)
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
CONVERT=$(imagemagick) || die "ImageMagick's convert is missing (apt-get install imagemagick)"
V_NGINX=$("$NGINX" -v 2>&1 | sed 's/^nginx version: //')
V_WRK=$({ wrk -v 2>&1 || true; } | sed -n 1p | awk '{print $1, $2}')

# --- the test services ----------------------------------------------------------------------
use_test_services
python3 -c 'import botocore' 2>/dev/null || die "python3 has no botocore (bin/test-services start installs it)"
S3_LOG=${S3_LOG:-$SPOTSTORE_TEST_SERVICES_DIR/log/proxy.log}
PG_LOG=${PG_LOG:-$SPOTSTORE_TEST_SERVICES_DIR/log/postgres.log}
S3=$SPOTSTORE_TEST_S3_ENDPOINT BUCKET=$SPOTSTORE_TEST_S3_BUCKET

# --- the binary -------------------------------------------------------------------------
use_spotstore

# --- temp dir, database, prefix, clean-up ------------------------------------------------------
TMP=$(mktemp -d "${TMPDIR:-/tmp}/spotstore-cluster.XXXXXX")
RUN=$(basename "$TMP" | tr 'A-Z.' 'a-z-')
DB=bench_${RUN//-/_}
PREFIX=bench-$RUN        # one path segment: it appears as is in the proxy log's paths and queries
PG_SERVER=$SPOTSTORE_TEST_POSTGRES
DB_URL=${PG_SERVER%/*}/$DB
declare -A node_pid=()
embedded_pid="" nginx_pids=() db_made=0
stop_pid() { local pid=$1; if [[ -n $pid ]] && kill "$pid" 2>/dev/null; then wait "$pid" 2>/dev/null || true; fi; }
cleanup() {
  set +e
  local n
  for n in "${!node_pid[@]}"; do stop_pid "${node_pid[$n]}"; done
  stop_pid "$embedded_pid"
  for n in "${nginx_pids[@]}"; do stop_pid "$n"; done
  if ((db_made)); then
    psql -qX "$PG_SERVER" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || log "could not drop database $DB"
    local removed
    removed=$(python3 "$HERE/cluster/s3.py" delete-prefix "$PREFIX/" 2>/dev/null) && log "removed $removed objects under s3://$BUCKET/$PREFIX/" ||
      log "could not remove s3://$BUCKET/$PREFIX/"
  fi
  if [[ ${KEEP:-0} == 1 ]]; then log "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
export LOAD_LUA_DIR=$HERE/load
for p in 0 1 2 3 4; do   # a server left on these ports would answer in place of ours
  ! curl -s -o /dev/null -m 2 "http://127.0.0.1:$((PORT + p))/" || die "port $((PORT + p)) is taken (PORT=$PORT uses PORT..PORT+4): stop what runs there or choose another PORT"
done
psql -qX -v ON_ERROR_STOP=1 "$PG_SERVER" -c "CREATE DATABASE $DB" >/dev/null || die "cannot create database $DB on $PG_SERVER"
db_made=1

# --- photos (as load.sh makes them) ----------------------------------------------------------------
IN=$TMP/photos
mkdir -p "$IN"
log "making $PHOTOS $PHOTO_SIZE JPEGs"
for ((i = 1; i <= PHOTOS; i++)); do printf '%s\0' "$i"; done | xargs -0 -P "$(nproc)" -I{} sh -c '
  n=$(printf %03d "$1")
  "$3" -seed "$((100 + $1))" -size 200x150 xc:gray +noise Random -filter Point -resize "$4!" \
    -seed "$((200 + $1))" -attenuate 0.4 +noise Gaussian -quality 90 -sampling-factor 4:2:0 "$2/photo_$n.jpg"' _ {} "$IN" "$CONVERT" "$PHOTO_SIZE" ||
  die "ImageMagick (convert) failed to make the photos"
# variant FILE TEXT: the same JPEG with a comment segment after SOI (new bytes, same image)
variant() {
  { head -c 2 "$1"; printf '\xff\xfe\x00\x12%-16.16s' "$2"; tail -c +3 "$1"; }
}

# --- rules, nodes, embedded store, nginx -----------------------------------------------------------
cat >"$TMP/cluster.rules" <<'EOF'
rules_version = '2';
// bench/cluster.sh: photos in spots of bucket `photos`; any bytes up to 8 MiB in bucket `files`;
// spots of at most 4 photos in bucket `race`.
service firebase.storage {
  match /b/photos/o/{spotId}/{file} {
    limit size: 64 MiB, objects: 1000, types: ["image/jpeg", "image/png"];
    allow read, write: if request.auth != null;
  }
  match /b/photos/o/{path=**} {
    allow list: if request.auth != null;
  }
  match /b/files/o/{path=**} {
    limit size: 8 MiB, thumbnails: false;
    allow read, write, list: if request.auth != null;
  }
  match /b/race/o/{spotId}/{file} {
    limit size: 8 MiB, objects: 4, types: ["image/jpeg"];
    allow read, write: if request.auth != null;
  }
  match /b/race/o/{path=**} {
    allow list: if request.auth != null;
  }
}
EOF
"$SPOTSTORE" rules check "$TMP/cluster.rules" >&2 || die "the bench rules do not check"
NURL=http://127.0.0.1:$PORT
node_port() { echo $((PORT + $1)); }
EMB_PORT=$((PORT + 3)) EMB_URL=http://127.0.0.1:$((PORT + 3))
# the environment every node gets (and `users add`): catalog, blobs, S3 endpoint, credentials.
# An array, not a function: `"${CLUSTER_ENV[@]}" spotstore serve &` makes $! the server's pid.
CLUSTER_ENV=(env SPOTSTORE_CATALOG="$DB_URL" SPOTSTORE_BLOBS="s3://$BUCKET/$PREFIX" SPOTSTORE_S3_ENDPOINT="$S3"
  AWS_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" AWS_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" AWS_REGION="${AWS_REGION:-us-east-1}")
wait_up() {   # url pid logfile what
  local ok=0
  for _ in $(seq 1 300); do
    curl -sf "$1/healthz" >/dev/null && { ok=1; break; }
    kill -0 "$2" 2>/dev/null || break; sleep 0.1
  done
  ((ok)) || die "$4 did not start on $1: $(tail -5 "$3")"
}
start_node() {   # n: node n on PORT+n, store $TMP/node<n> (temp files and its copy of the rules)
  local n=$1 store=$TMP/node$1
  mkdir -p "$store"; cp "$TMP/cluster.rules" "$store/rules"
  local proxy=(); [[ $TRUSTED_PROXY == 1 ]] && proxy=(--trusted-proxy 127.0.0.1)
  # --max-uploads-per-client: every wrk connection uploads as the same user; at the default (16)
  # the PUT tests' 64 connections would mostly measure 429s.
  "${CLUSTER_ENV[@]}" "$SPOTSTORE" serve --store "$store" --port "$(node_port "$n")" --public-url "$NURL" \
    "${proxy[@]}" --log-level "$LOG_LEVEL" --max-uploads-per-client "$CONNECTIONS" "${SMOKE_SERVE_ARGS[@]}" >>"$TMP/node$n.log" 2>&1 &
  node_pid[$n]=$!
  wait_up "http://127.0.0.1:$(node_port "$n")" "${node_pid[$n]}" "$TMP/node$n.log" "node $n"
}
restart_nodes() {
  local n
  for n in 1 2; do stop_pid "${node_pid[$n]}"; done
  for n in 1 2; do start_node "$n"; done
}

TOKEN=$("${CLUSTER_ENV[@]}" "$SPOTSTORE" users add bench --store "$TMP/node1" 2>"$TMP/users.log" | tail -1) ||
  die "spotstore users add (on PostgreSQL + S3) failed: $(cat "$TMP/users.log")"
AUTH="Authorization: Bearer $TOKEN"
for n in 1 2; do start_node "$n"; done
EMB_TOKEN=$("$SPOTSTORE" users add bench --store "$TMP/embedded" 2>"$TMP/users-embedded.log" | tail -1) ||
  die "spotstore users add (embedded) failed: $(cat "$TMP/users-embedded.log")"
cp "$TMP/cluster.rules" "$TMP/embedded/rules"
"$SPOTSTORE" serve --store "$TMP/embedded" --port "$EMB_PORT" --log-level "$LOG_LEVEL" --max-uploads-per-client "$CONNECTIONS" \
  "${SMOKE_SERVE_ARGS[@]}" >"$TMP/embedded.log" 2>&1 &
embedded_pid=$!
wait_up "$EMB_URL" "$embedded_pid" "$TMP/embedded.log" "the embedded store"

# start_nginx DIR PORT NODE1 NODE2: nginx with bench/nginx-cluster.conf on PORT in front of the
# two addresses (the same one twice for a single instance); sets nginx_pids
start_nginx() {
  local dir=$1 user_line=""
  mkdir -p "$dir"/{logs,body,proxy,fastcgi,uwsgi,scgi}
  ((EUID == 0)) && user_line="user root root;"
  sed -e "s|@DIR@|$dir|g" -e "s|@PORT@|$2|g" -e "s|@USER_LINE@|$user_line|" -e "s|@NODE1@|$3|" -e "s|@NODE2@|$4|" \
    "$HERE/nginx-cluster.conf" >"$dir/nginx.conf"
  "$NGINX" -t -q -p "$dir" -c "$dir/nginx.conf" -e "$dir/logs/error.log" || die "nginx -t failed: $(tail -5 "$dir/logs/error.log")"
  "$NGINX" -p "$dir" -c "$dir/nginx.conf" -e "$dir/logs/error.log" &
  nginx_pids+=("$!")
  wait_up "http://127.0.0.1:$2" "$!" "$dir/logs/error.log" "nginx on port $2"
}
NGX=$TMP/nginx
start_nginx "$NGX" "$PORT" "127.0.0.1:$(node_port 1)" "127.0.0.1:$(node_port 2)"
# the embedded store behind the same nginx configuration: the thumbnail test's like-for-like side
EMB_NGINX_URL=http://127.0.0.1:$((PORT + 4))
start_nginx "$TMP/nginx-embedded" "$((PORT + 4))" "127.0.0.1:$EMB_PORT" "127.0.0.1:$EMB_PORT"

# --- content -----------------------------------------------------------------------------------
log "uploading $PHOTOS photos into spot photos/load through nginx (the nodes make 256 and 1024 px thumbnails)"
: >"$TMP/ours-thumb.txt"; : >"$TMP/ours-media.txt"
for f in "$IN"/*.jpg; do
  name=$(basename "$f") object="/v0/b/photos/o/load%2F$(basename "$f")"
  curl -sfS -o "$TMP/upload.json" -X PUT -H "$AUTH" -H 'Content-Type: image/jpeg' --data-binary "@$f" "$NURL$object" ||
    die "upload of $name failed: $(cat "$TMP/upload.json" 2>/dev/null)"
  for n in 1 2; do   # both nodes give the same bytes
    curl -sfS -o "$TMP/check.jpg" -H "$AUTH" "http://127.0.0.1:$(node_port "$n")$object?alt=media" || die "download of $name from node $n failed"
    cmp -s "$f" "$TMP/check.jpg" || die "$name downloads different bytes from node $n"
  done
  echo "$object?alt=thumbnail&size=256" >>"$TMP/ours-thumb.txt"
  echo "$object?alt=media" >>"$TMP/ours-media.txt"
done
first=$(ls "$IN" | sed -n 1p)
curl -sfS -o "$TMP/thumb.jpg" -H "$AUTH" "$NURL$(sed -n 1p "$TMP/ours-thumb.txt")" || die "no 256 px thumbnail through nginx"
curl -sfS -o /dev/null -X PUT -H "Authorization: Bearer $EMB_TOKEN" -H 'Content-Type: image/jpeg' --data-binary "@$IN/$first" \
  "$EMB_URL/v0/b/photos/o/load%2F$first" || die "upload into the embedded store failed"
curl -sfS -H "Authorization: Bearer $EMB_TOKEN" "$EMB_URL/v0/b/photos/o/load%2F$first?alt=thumbnail&size=256" | cmp -s - "$TMP/thumb.jpg" ||
  die "the embedded store's thumbnail differs from the cluster's"
DIGEST=$(sha256sum "$IN/$first" | cut -d' ' -f1)
MEDIA_KEY=$PREFIX/sha256/$DIGEST
python3 "$HERE/cluster/s3.py" presign-get "$MEDIA_KEY" >"$TMP/presigned-get.txt" || die "presigning failed"
curl -sfS "$(cat "$TMP/presigned-get.txt")" | cmp -s - "$IN/$first" ||
  die "the presigned GET of $MEDIA_KEY does not give $first (is the blob not at PREFIX/sha256/<hex>?)"
python3 "$HERE/cluster/s3.py" presign-puts "$PREFIX/direct/put-" "$THREADS" 64 >"$TMP/presigned-puts.txt" || die "presigning failed"
printf 'x' | curl -sfS -o /dev/null -X PUT --data-binary @- "$(sed -n '1s/^[0-9]* //p' "$TMP/presigned-puts.txt")" || die "a presigned PUT failed"
printf 'x' | curl -sfS -o /dev/null -X PUT -H "$AUTH" --data-binary @- "$NURL/v0/b/files/o/check" || die "PUT into bucket files failed"
THUMB_KB=$(($(wc -c <"$TMP/thumb.jpg") / 1024)) MEDIA_KB=$(($(wc -c <"$IN/$first") / 1024))
log "photo_001: ${MEDIA_KB} KB, its 256 px thumbnail ${THUMB_KB} KB; blob s3://$BUCKET/$MEDIA_KEY"

# --- measuring ------------------------------------------------------------------------------------
s3_lines() { if [[ -r $S3_LOG ]]; then wc -l <"$S3_LOG"; else echo 0; fi; }
# s3_requests FROM TO: requests from clients (not Swift's own subrequests) for our prefix, by
# lines FROM+1..TO of the proxy log
s3_requests() {
  [[ -r $S3_LOG ]] || { echo "n/a"; return; }
  sed -n "$(($1 + 1)),$2p" "$S3_LOG" | awk -v p="$PREFIX" '$2 != "-" && index($6, p) && !index($6, p "/mark-") {n++} END {print n + 0}'
}
# run_wrk NAME SECONDS URL SCRIPT AUTH(0/1) ARGS...: wrk into $TMP/wrk-NAME.txt; sets R_*
run_wrk() {
  local name=$1 secs=$2 url=$3 script=$4 auth=$5; shift 5
  local header=()   # auth: 1 = the cluster's token, embedded = the embedded store's, 0 = none
  [[ $auth == 1 ]] && header=(-H "$AUTH")
  [[ $auth == embedded ]] && header=(-H "Authorization: Bearer $EMB_TOKEN")
  wrk -t "$THREADS" -c "$CONNECTIONS" -d "${secs}s" --timeout 10s "${header[@]}" -s "$HERE/load/$script" "$url" -- "$@" \
    >"$TMP/wrk-$name.txt" 2>&1 || die "wrk $name failed: $(tail -5 "$TMP/wrk-$name.txt")"
  local line kv
  line=$(grep '^RESULT ' "$TMP/wrk-$name.txt") || die "wrk $name printed no RESULT: $(tail -5 "$TMP/wrk-$name.txt")"
  for kv in ${line#RESULT }; do printf -v "R_${kv%%=*}" '%s' "${kv#*=}"; done
}
declare -A rps=() mbs=() p50=() p99=() errs=() loads=() s3per=()
measure() {   # TEST SIDE URL SCRIPT AUTH PAYLOAD_BYTES ARGS...
  local test=$1 side=$2 url=$3 script=$4 auth=$5 payload=$6; shift 6
  ((WARMUP > 0)) && run_wrk "$test-$side-warmup" "$WARMUP" "$url" "$script" "$auth" "$@"
  loads[$test-$side]=$(load_average)
  sleep 0.5; local s3_from; s3_from=$(s3_lines)
  run_wrk "$test-$side" "$SECONDS_EACH" "$url" "$script" "$auth" "$@"
  sleep 1; local s3_n; s3_n=$(s3_requests "$s3_from" "$(s3_lines)")
  local secs bytes k=$test-$side
  secs=$(awk -v us="$R_duration_us" 'BEGIN {print us / 1e6}')
  bytes=$R_bytes; ((payload > 0)) && bytes=$((R_requests * payload))
  rps[$k]=$(awk -v n="$R_requests" -v s="$secs" 'BEGIN {printf "%.0f", n / s}')
  mbs[$k]=$(awk -v b="$bytes" -v s="$secs" 'BEGIN {printf "%.1f", b / s / 1e6}')
  p50[$k]=$(awk -v us="$R_p50_us" 'BEGIN {printf "%.2f", us / 1000}')
  p99[$k]=$(awk -v us="$R_p99_us" 'BEGIN {printf "%.2f", us / 1000}')
  errs[$k]="non2xx=$R_status sock=$((R_connect + R_read + R_write + R_timeout))"
  s3per[$k]=$([[ $s3_n == n/a ]] && echo n/a || awk -v a="$s3_n" -v n="$R_requests" 'BEGIN {printf "%.2f", (n > 0) ? a / n : 0}')
  log "$test $side: ${rps[$k]} req/s, ${mbs[$k]} MB/s, p50 ${p50[$k]} ms, p99 ${p99[$k]} ms, ${errs[$k]}, S3 requests per request ${s3per[$k]} (load ${loads[$k]})"
  local n; for n in 1 2; do kill -0 "${node_pid[$n]}" 2>/dev/null || die "node $n died during $test: $(tail -5 "$TMP/node$n.log")"; done
}
# measure_floor TEST BYTES: bench/durable-floor.py writes and syncs BYTES-byte objects with
# CONNECTIONS threads, 4 per thread (1 in smoke mode), as side `floor` of TEST
measure_floor() {
  local test=$1 bytes=$2 k=$1-floor count=$((CONNECTIONS * $(smoke && echo 1 || echo 4)))
  loads[$k]=$(load_average)
  local _w _t _n secs rate
  read -r _w _t _n secs rate < <(python3 "$HERE/durable-floor.py" "$TMP/floor-$test" "$count" "$CONNECTIONS" "$bytes") ||
    die "bench/durable-floor.py failed"
  rm -rf "$TMP/floor-$test"
  rps[$k]=$(awk -v r="$rate" 'BEGIN {printf "%.0f", r}')
  mbs[$k]=$(awk -v r="$rate" -v b="$bytes" 'BEGIN {printf "%.1f", r * b / 1e6}')
  p50[$k]=- p99[$k]=- s3per[$k]=- errs[$k]="-"
  log "$test floor: ${rps[$k]} writes/s, ${mbs[$k]} MB/s ($count writes of $bytes bytes in $secs s)"
}
LOAD0=$(load_average)
log "load average $LOAD0; $CONNECTIONS connections, $THREADS wrk threads, ${SECONDS_EACH}s each side (+${WARMUP}s warm-up)"
PUT_BYTES=$((PUT_MB * 1048576))
S3_URL=$(cat "$TMP/presigned-get.txt")
if wants media; then
  measure media s3 "$S3_URL" report.lua 0 0
  measure media cluster "$NURL$(sed -n 1p "$TMP/ours-media.txt")" report.lua 1 0
fi
if wants put; then
  measure put s3 "$S3" presigned-put.lua 0 "$PUT_BYTES" "$TMP/presigned-puts.txt" "$PUT_BYTES"
  measure put cluster "$NURL" put.lua 1 "$PUT_BYTES" /v0/b/files/o/cluster- "$PUT_BYTES"
  measure_floor put "$PUT_BYTES"
fi
if wants tiny; then
  measure tiny s3 "$S3" presigned-put.lua 0 "$TINY_BYTES" "$TMP/presigned-puts.txt" "$TINY_BYTES"
  # names never repeat within a run (NAMES 10^9), so the folder grows: no overwrites
  measure tiny embedded-nginx "$EMB_NGINX_URL" put.lua embedded "$TINY_BYTES" /v0/b/files/o/tiny%2Fe "$TINY_BYTES" 1000000000
  measure tiny cluster "$NURL" put.lua 1 "$TINY_BYTES" /v0/b/files/o/tiny%2Fc "$TINY_BYTES" 1000000000
  measure_floor tiny "$TINY_BYTES"
fi
if wants thumb; then
  measure thumb embedded "$EMB_URL/v0/b/photos/o/load%2F$first?alt=thumbnail&size=256" report.lua embedded 0
  measure thumb embedded-nginx "$EMB_NGINX_URL/v0/b/photos/o/load%2F$first?alt=thumbnail&size=256" report.lua embedded 0
  measure thumb cluster "$NURL$(sed -n 1p "$TMP/ours-thumb.txt")" report.lua 1 0
  measure thumb node "http://127.0.0.1:$(node_port 1)$(sed -n 1p "$TMP/ours-thumb.txt")" report.lua 1 0
fi

# --- the 16-way race ----------------------------------------------------------------------------
metric_sum() {   # node method-regex status-regex: requests so far on that node with that method and status
  curl -sf "http://127.0.0.1:$(node_port "$1")/metrics" | awk -v m="$2" -v s="$3" '
    /^spotstore_http_requests_total\{/ && match($0, "method=\"" m "\"") {
      match($0, /status="[0-9]+"/); st = substr($0, RSTART + 8, RLENGTH - 9); if (st ~ s) n += $NF
    }
    END {print n + 0}'
}
RACE_DONE=0
if wants race; then
  RACE_LINES=()
  RACE_FAIL=0
  for ((round = 1; round <= RACE_ROUNDS; round++)); do
    spot="race-$round"
    a1=$(metric_sum 1 PUT .); a2=$(metric_sum 2 PUT .)
    racers=()
    for ((i = 1; i <= 16; i++)); do
      curl -s -o /dev/null -w '%{http_code}\n' -X PUT -H "$AUTH" -H 'Content-Type: image/jpeg' \
        --data-binary "@$TMP/thumb.jpg" "$NURL/v0/b/race/o/$spot%2Fp$i.jpg" >"$TMP/race-$round-$i.txt" &
      racers+=($!)
    done
    wait "${racers[@]}" || true
    b1=$(metric_sum 1 PUT .); b2=$(metric_sum 2 PUT .)
    codes=$(cat "$TMP"/race-"$round"-*.txt | sort | uniq -c | awk '{printf "%s%d x %s", (NR > 1 ? ", " : ""), $1, $2}')
    ok200=$(cat "$TMP"/race-"$round"-*.txt | grep -c '^200$' || true)
    c409=$(cat "$TMP"/race-"$round"-*.txt | grep -c '^409$' || true)
    c5xx=$(cat "$TMP"/race-"$round"-*.txt | grep -c '^5' || true)
    listed=$(curl -sf -H "$AUTH" "$NURL/v0/b/race/o?prefix=$spot%2F" | python3 -c 'import json, sys; print(len(json.load(sys.stdin).get("items", [])))' 2>/dev/null || echo "?")
    verdict=PASS; ((ok200 == 4 && c409 == 12 && c5xx == 0)) && [[ $listed == 4 ]] || { verdict=FAIL; RACE_FAIL=1; }
    RACE_LINES+=("round $round: $codes; node 1 answered $((b1 - a1)), node 2 $((b2 - a2)); $listed objects listed in the spot: $verdict")
    log "race ${RACE_LINES[-1]}"
  done
  RACE_DONE=1
fi

# --- the mix -----------------------------------------------------------------------------------------
ERROR_LINE='^[^ ]+ (error|critical) |[Ff]atal error|panic|Crash'
MIX_DONE=0
if wants mix; then
  write_mix_plan "$TMP/mix.plan"
  m1_before=$(metric_sum 1 '[A-Z]+' '^5'); m2_before=$(metric_sum 2 '[A-Z]+' '^5')
  t1_before=$(metric_sum 1 '[A-Z]+' .); t2_before=$(metric_sum 2 '[A-Z]+' .)
  sleep 1.5   # nginx writes its buffered access log at least once a second (flush=1s)
  nginx_lines=$(wc -l <"$NGX/logs/access.log")
  node_lines=(0 "$(wc -l <"$TMP/node1.log")" "$(wc -l <"$TMP/node2.log")")
  LOAD_MIX=$(load_average)
  log "mix: $MIX_SECONDS s through nginx, $CONNECTIONS connections: $MIX (load $LOAD_MIX)"
  run_wrk mix "$MIX_SECONDS" "$NURL" mix.lua 1 "$TMP/mix.plan"
  sleep 1
  MIX_SECS=$(awk -v us="$R_duration_us" 'BEGIN {print us / 1e6}')
  MIX_RPS=$(awk -v n="$R_requests" -v s="$MIX_SECS" 'BEGIN {printf "%.0f", n / s}')
  MIX_MBS=$(awk -v b="$R_bytes" -v s="$MIX_SECS" 'BEGIN {printf "%.1f", b / s / 1e6}')
  MIX_REQUESTS=$R_requests
  MIX_P50=$(awk -v us="$R_p50_us" 'BEGIN {printf "%.2f", us / 1000}')
  MIX_P99=$(awk -v us="$R_p99_us" 'BEGIN {printf "%.2f", us / 1000}')
  MIX_NON2XX=$R_status MIX_SOCK=$((R_connect + R_read + R_write + R_timeout))
  MIX_NODE5XX=$(($(metric_sum 1 '[A-Z]+' '^5') - m1_before + $(metric_sum 2 '[A-Z]+' '^5') - m2_before))
  MIX_N1=$(($(metric_sum 1 '[A-Z]+' .) - t1_before)) MIX_N2=$(($(metric_sum 2 '[A-Z]+' .) - t2_before))
  # nginx's own 5xx (502/504 when no instance answers) are only in its log: "... HTTP/1.1" STATUS
  sleep 1.5   # (its buffer reaches the file within a second)
  MIX_NGINX5XX=$(tail -n +"$((nginx_lines + 1))" "$NGX/logs/access.log" | awk '$9 ~ /^5/ {n++} END {print n + 0}')
  MIX_ERROR_LINES=0
  for n in 1 2; do
    e=$(tail -n +"$((node_lines[n] + 1))" "$TMP/node$n.log" | grep -E "$ERROR_LINE" | grep -vc 'stream ended at an unexpected time' || true)
    MIX_ERROR_LINES=$((MIX_ERROR_LINES + e))
  done
  MIX_DONE=1
fi

# --- counting: catalog statements and S3 requests per request ----------------------------------
COUNT_DONE=0 COUNT_NOTE=""
declare -A c_n=()
if wants count; then
  if [[ ! -r $PG_LOG ]]; then COUNT_NOTE="PostgreSQL's log $PG_LOG is not readable: statements not counted"
  elif ! psql -qX -v ON_ERROR_STOP=1 "$DB_URL" -c "ALTER DATABASE $DB SET log_statement = 'all'" >/dev/null 2>"$TMP/alter.log"; then
    COUNT_NOTE="cannot set log_statement on $DB ($(head -1 "$TMP/alter.log")): statements not counted"
  fi
  log "counting phase: nodes restarted${COUNT_NOTE:+ ($COUNT_NOTE)}; $COUNT_N requests of each kind, to node 1 directly"
  restart_nodes
  sleep 1
  N1=http://127.0.0.1:$(node_port 1)
  pg_from=$( [[ -r $PG_LOG ]] && wc -l <"$PG_LOG" || echo 0); s3_from=$(s3_lines)
  mark() {   # label: a marker in both logs, then the requests of `label` until the next marker
    sleep 0.15
    psql -qAtX "$DB_URL" -c "SELECT 'mark:$1'" >/dev/null
    curl -s -o /dev/null "$S3/$BUCKET/$PREFIX/mark-$1"
  }
  req() { curl -sS -o /dev/null -w '%{http_code}' -H "$AUTH" "$@" | grep -q '^2' || die "a counting request failed: $*"; }
  file_body() { head -c 262144 /dev/urandom >"$TMP/count.bin"; }
  mark "idle"; sleep 2
  for ((i = 1; i <= 3 && i <= PHOTOS; i++)); do
    variant "$IN/photo_00$i.jpg" "count-$i" >"$TMP/variant.jpg"
    mark "upload-photo"; req -X PUT -H 'Content-Type: image/jpeg' --data-binary "@$TMP/variant.jpg" "$N1/v0/b/photos/o/count%2Fv$i.jpg"
  done
  media=$(sed -n 1p "$TMP/ours-media.txt") thumb=$(sed -n 1p "$TMP/ours-thumb.txt")
  meta=${media%\?alt=media}
  for ((i = 1; i <= COUNT_N; i++)); do
    for kind in download thumbnail metadata listing; do
      file_body; mark "upload"; req -X PUT -H 'Content-Type: application/octet-stream' --data-binary "@$TMP/count.bin" "$N1/v0/b/files/o/count-$kind-$i"
      sleep 0.3   # the change feed's notification reaches the other node
      case $kind in
        download) mark "download-cold"; req "$N1$media"; mark "download-warm"; req "$N1$media" ;;
        thumbnail) mark "thumbnail-cold"; req "$N1$thumb"; mark "thumbnail-warm"; req "$N1$thumb" ;;
        metadata) mark "metadata-cold"; req "$N1$meta"; mark "metadata-warm"; req "$N1$meta" ;;
        listing) mark "listing-cold"; req "$N1/v0/b/photos/o?prefix=load%2F&delimiter=%2F"; mark "listing-warm"; req "$N1/v0/b/photos/o?prefix=load%2F&delimiter=%2F" ;;
      esac
    done
  done
  mark "end"; sleep 1
  psql -qX "$DB_URL" -c "ALTER DATABASE $DB RESET log_statement" >/dev/null 2>&1 || true
  # statements between markers, by label: `LOG:  statement: …` (simple protocol) and
  # `LOG:  execute <name>: …` (extended, postgres-nio). The change feed's heartbeat
  # (`SELECT 1` every 250 ms per node) is counted apart.
  if [[ -z $COUNT_NOTE ]]; then
    tail -n +"$((pg_from + 1))" "$PG_LOG" | awk '
      match($0, /LOG:  (statement|execute [^:]*): /) {
        text = substr($0, RSTART + RLENGTH)
        if (text ~ /^SELECT .mark:/) { split(text, a, "mark:"); label = a[2]; sub(/.$/, "", label); n[label] += 0; next }
        if (label == "") next
        if (text ~ /^SELECT 1;?$/) { hb[label]++; next }
        word = toupper(text); sub(/[ ;(].*/, "", word); n[label]++; k[label, word]++; words[word] = 1
      }
      END {
        for (l in n) {
          line = ""
          for (w in words) if (k[l, w]) line = line sprintf(" %s=%d", w, k[l, w])
          printf "%s %d %d%s\n", l, n[l], hb[l] + 0, line
        }
      }' >"$TMP/pg-counts.txt"
  fi
  sed -n "$((s3_from + 1)),\$p" "$S3_LOG" 2>/dev/null | awk -v p="$PREFIX" '
    $2 == "-" || !index($6, p) { next }
    index($6, p "/mark-") { label = substr($6, index($6, p "/mark-") + length(p) + 6); n[label] += 0; next }
    label != "" { n[label]++; what = $5 (index($6, "%3F") ? "?" : ""); k[label, what]++; kinds[what] = 1 }
    END { for (l in n) { line = ""; for (w in kinds) if (k[l, w]) line = line sprintf(" %s=%d", w, k[l, w]); printf "%s %d%s\n", l, n[l], line } }' >"$TMP/s3-counts.txt"
  for label in upload-photo upload download-cold download-warm thumbnail-cold thumbnail-warm metadata-cold metadata-warm listing-cold listing-warm; do
    case $label in upload-photo) c_n[$label]=$((PHOTOS < 3 ? PHOTOS : 3)) ;; upload) c_n[$label]=$((4 * COUNT_N)) ;; *) c_n[$label]=$COUNT_N ;; esac
  done
  COUNT_DONE=1
fi

# --- report ------------------------------------------------------------------------------------------
LOAD1=$(load_average)
fail=0
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}'; }
verdict() { awk -v r="$1" -v t="$2" 'BEGIN {exit !(r >= t)}' && echo PASS || echo FAIL; }
per() { awk -v a="$1" -v n="$2" 'BEGIN {printf "%.2f", (n > 0) ? a / n : 0}'; }
mkdir -p "$RESULTS"
report=$RESULTS/cluster-$(date -u +%Y%m%dT%H%M%SZ).txt
{
  echo "cluster bench${SMOKE:+ (smoke: not comparable)} $(date -u +%FT%TZ)  host: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | sed -n 1p)"
  echo "spotstore: $SPOTSTORE (built $(date -u -r "$SPOTSTORE" +%FT%TZ); repo at $(cd "$ROOT" && git log -1 --format='%h' 2>/dev/null || true)), log level $LOG_LEVEL; $V_NGINX; $V_WRK"
  echo "cluster: nginx (bench/nginx-cluster.conf, upstream of 2 nodes, keepalive 64) -> 2 x spotstore serve --public-url $NURL$([[ $TRUSTED_PROXY == 1 ]] && echo ' --trusted-proxy 127.0.0.1') on PostgreSQL $(psql -AtX "$PG_SERVER" -c 'SHOW server_version' 2>/dev/null) (database $DB) + S3 $S3 (s3://$BUCKET/$PREFIX, OpenStack Swift s3api)"
  echo "references: presigned GET/PUT (botocore, SigV4 in the query, UNSIGNED-PAYLOAD) straight to $S3; the embedded default store (SQLite + files), one spotstore serve, behind the same nginx configuration and direct"
  echo "content: photo_001 ${MEDIA_KB} KB, its 256 px thumbnail ${THUMB_KB} KB; uploads ${PUT_MB} MiB of new bytes each"
  echo "wrk -t $THREADS -c $CONNECTIONS, ${SECONDS_EACH}s each side after ${WARMUP}s warm-up; reference first. S3 req/request: client requests for the bench prefix in the Swift proxy's log during the run / requests"
  echo "load average at start: $LOAD0; at end: $LOAD1 (the machine may be shared: compare within one run)"
  echo
  printf '%-34s %-15s %9s %9s %8s %8s %10s  %-20s %s\n' "test" "side" "req/s" "MB/s" "p50 ms" "p99 ms" "S3 req/rq" "errors" "load avg"
  for test in media put tiny thumb; do
    wants "$test" || continue
    case $test in
      media) label="GET original (${MEDIA_KB} KB)"; sides="s3 cluster"; ref=s3; metric=mbs; target=0.70 ;;
      put) label="PUT ${PUT_MB} MiB (non-image bucket)"; sides="s3 cluster floor"; ref=s3; metric=mbs; target=0.70 ;;
      tiny) label="PUT ${TINY_BYTES} B into one folder"; sides="s3 embedded-nginx cluster floor"; ref=embedded-nginx; metric=rps; target=0.50 ;;
      thumb) label="GET 256 px thumbnail (${THUMB_KB} KB)"; sides="embedded embedded-nginx cluster node"; ref=embedded-nginx; metric=rps; target=0.80 ;;
    esac
    for side in $sides; do
      k=$test-$side
      printf '%-34s %-15s %9s %9s %8s %8s %10s  %-20s %s\n' "$label" "$side" "${rps[$k]}" "${mbs[$k]}" "${p50[$k]}" "${p99[$k]}" "${s3per[$k]}" "${errs[$k]}" "${loads[$k]}"
      label=""
    done
    if [[ $metric == rps ]]; then r=$(ratio "${rps[$test-cluster]}" "${rps[$test-$ref]}"); what="req/s"
    else r=$(ratio "${mbs[$test-cluster]}" "${mbs[$test-$ref]}"); what="MB/s"; fi
    v=$(verdict "$r" "$target"); [[ $v == PASS ]] || fail=1
    [[ ${errs[$test-cluster]} == "non2xx=0 sock=0" ]] || { v="$v (errors!)"; fail=1; }
    printf '%-34s %-15s %9s  cluster/%s %s, target >= %s: %s\n' "" "ratio" "$r" "$ref" "$what" "$target" "$v"
    if [[ $test == put || $test == tiny ]]; then   # the floor: a comparison, not a target
      if [[ $metric == rps ]]; then r=$(ratio "${rps[$test-cluster]}" "${rps[$test-floor]}"); else r=$(ratio "${mbs[$test-cluster]}" "${mbs[$test-floor]}"); fi
      printf '%-34s %-15s %9s  cluster/floor %s (the same bytes written and synced on this disk)\n' "" "" "$r" "$what"
    fi
    if [[ $test == thumb ]]; then   # the other comparisons, not targets
      printf '%-34s %-15s %9s  cluster/embedded direct req/s (the nginx hop on one side only)\n' "" "" "$(ratio "${rps[thumb-cluster]}" "${rps[thumb-embedded]}")"
      printf '%-34s %-15s %9s  node 1 direct/embedded direct req/s (no nginx on either side)\n' "" "" "$(ratio "${rps[thumb-node]}" "${rps[thumb-embedded]}")"
    fi
  done
  if ((RACE_DONE)); then
    echo
    echo "16-way race: $RACE_ROUNDS rounds of 16 simultaneous PUTs of a ${THUMB_KB} KB JPEG through nginx into an empty spot limited to 4 photos (target: 4 x 200, 12 x 409, 0 x 5xx)"
    for line in "${RACE_LINES[@]}"; do echo "     $line"; done
    ((RACE_FAIL)) && fail=1
  fi
  if ((MIX_DONE)); then
    echo
    echo "mix: $MIX_SECONDS s through nginx, $CONNECTIONS connections (load average $LOAD_MIX at start); weights: $MIX (uploads ${MIX_PUT_KB} KiB)"
    echo "     $MIX_REQUESTS requests, $MIX_RPS req/s, $MIX_MBS MB/s read; latency p50 $MIX_P50 ms, p99 $MIX_P99 ms; node 1 answered $MIX_N1, node 2 $MIX_N2"
    v=PASS; ((MIX_NODE5XX == 0 && MIX_NGINX5XX == 0 && MIX_NON2XX == 0 && MIX_SOCK == 0)) || { v=FAIL; fail=1; }
    echo "     5xx: nodes' metrics $MIX_NODE5XX, nginx's log $MIX_NGINX5XX; wrk non-2xx $MIX_NON2XX, socket errors $MIX_SOCK (target 0): $v"
    v=PASS; ((MIX_ERROR_LINES == 0)) || { v=FAIL; fail=1; }
    echo "     error lines in the nodes' logs during the mix (cut-off uploads not counted): $MIX_ERROR_LINES: $v"
  fi
  if ((COUNT_DONE)); then
    echo
    echo "per request (node 1 directly, one request at a time; 'cold' = right after an upload's commit, which drops every cache; 'warm' = the same request again):"
    echo "  catalog statements from PostgreSQL's log (log_statement = 'all' on database $DB; BEGIN/COMMIT included, the change feed's heartbeat SELECT 1 not);"
    echo "  S3 requests from the Swift proxy's log (client requests for the bench prefix)${COUNT_NOTE:+; $COUNT_NOTE}"
    printf '     %-16s %5s %10s %8s  %-44s %s\n' "request" "n" "statements" "S3 req" "statements by kind (total)" "S3 by method (total)"
    for label in upload-photo upload download-cold download-warm thumbnail-cold thumbnail-warm metadata-cold metadata-warm listing-cold listing-warm; do
      n=${c_n[$label]}
      read -r _ st hb kinds < <(grep "^$label " "$TMP/pg-counts.txt" 2>/dev/null || echo "$label n/a 0")
      read -r _ s3n s3kinds < <(grep "^$label " "$TMP/s3-counts.txt" 2>/dev/null || echo "$label n/a")
      sp=n/a; [[ $st == n/a ]] || sp=$(per "$st" "$n")
      s3p=n/a; [[ $s3n == n/a ]] || s3p=$(per "$s3n" "$n")
      printf '     %-16s %5s %10s %8s  %-44s %s\n' "$label" "$n" "$sp" "$s3p" "${kinds:-}" "${s3kinds:-}"
    done
    read -r _ st hb _ < <(grep "^idle " "$TMP/pg-counts.txt" 2>/dev/null || echo "idle n/a 0")
    read -r _ s3n _ < <(grep "^idle " "$TMP/s3-counts.txt" 2>/dev/null || echo "idle n/a")
    echo "     idle 2 s, both nodes: $st statements besides $hb heartbeats (SELECT 1, 4/s per node), $s3n S3 requests"
    echo "     (upload = 256 KiB into bucket files, no thumbnails; upload-photo = a 4 MB JPEG, 256 and 1024 px thumbnails made)"
  fi
  echo
  ((fail)) && echo "RESULT: FAIL (a target above was missed)${SMOKE:+; smoke run: not judged}" || echo "RESULT: PASS (every target met)"
} | tee "$report"
log "saved $report"
smoke || grep -q '^RESULT: PASS' "$report"
