#!/usr/bin/env bash
# load.sh - SpotStore under load on loopback, side by side with nginx serving the same files.
#
#   bench/load.sh
#   SMOKE=1 bench/load.sh   # 2 photos of 1280x960, 1 s per side, a 2 s mix: checks it works
#
# Environment (all optional):
#   SPOTSTORE=path      binary to test; when set, no `swift build` is run
#                       (default: swift build -c release --product spotstore, then
#                       <repo>/.build/release/spotstore)
#   SECONDS_EACH=15     duration of each side-by-side test (each side)
#   MIX_SECONDS=60      duration of the mixed run
#   WARMUP=3            seconds of unmeasured load before each measured run
#   CONNECTIONS=64      wrk connections (every test); THREADS=2 wrk threads
#   PHOTOS=8            JPEGs in the spot (PHOTO_SIZE=4000x3000: ~4 MB, 256 px thumbnails ~28 KB)
#   PUT_MB=4            upload size of the PUT comparison
#   MIX_PUT_KB=256      upload size inside the mix
#   MIX="thumb=40 thumb1024=10 media=10 meta=10 list=25 put=5"   weights of the mix
#   RSS_LIMIT_MB=300    the mix passes only if the server's peak RSS stays below this
#   PORT=18292          spotstore serve; NGINX_PORT=18293
#   LOG_LEVEL=info      spotstore serve --log-level (info = its default: one line per request)
#   ONLY="thumb idtoken media put mix"   which tests to run
#   KEEP=1              keep the temporary directory (store, logs, nginx root, wrk output)
#   TMPDIR              where the temporary directory goes (must be a disk, not tmpfs, for
#                       the fsync figures to mean anything; the PUT tests write several GB)
#   SMOKE=1             SECONDS_EACH=1 MIX_SECONDS=2 WARMUP=0 PHOTOS=2 PHOTO_SIZE=1280x960 PUT_MB=1,
#                       .build/debug/spotstore when SPOTSTORE is not set; a missed target does not
#                       fail it (see bench/common.sh)
#
# What runs: a fresh store (user + token, rules below), PHOTOS generated JPEGs uploaded into
# one spot of bucket `photos` (thumbnails made by the server), bucket `files` for non-image
# uploads; `spotstore serve` and nginx (its WebDAV module; originals and the server's own
# thumbnail bytes copied into its root) on 127.0.0.1. Then, with wrk -c CONNECTIONS:
#   thumb  GET a 256 px thumbnail (?alt=thumbnail&size=256, bearer token) vs nginx static GET
#   idtoken the same thumbnail GET with a Firebase-style RS256 ID token (`Authorization:
#          Firebase <token>`; key pair and x509 certificate made with openssl, the server
#          started with --firebase-project bench-project --firebase-keys FILE) vs the same
#          GET with SpotStore's own token, interleaved: own first, then the ID token
#   media  GET a 4 MB original (?alt=media, bearer token)                 vs nginx (sendfile)
#   put    PUT PUT_MB new bytes into bucket files (no thumbnails)         vs nginx WebDAV PUT
#   mix    MIX_SECONDS of the MIX against spotstore alone: status counts (server metrics
#          and wrk), zero 5xx, the server log scanned for error lines, RSS sampled from /proc.
# Targets: thumb req/s >= 0.50 x nginx, idtoken req/s >= 0.90 x own token, media MB/s >= 0.50 x
# nginx, put MB/s >= 0.60 x nginx;
# mix: no 5xx, no socket errors, no error line in the log, peak RSS < RSS_LIMIT_MB.
# The report is printed and saved to bench/results/load-<UTC time>.txt. Exit status 1 when
# a target is missed (after the report; never with SMOKE=1), 2 when the setup fails.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
if [[ -n ${SMOKE:-} ]]; then
  SECONDS_EACH=${SECONDS_EACH:-1} MIX_SECONDS=${MIX_SECONDS:-2} WARMUP=${WARMUP:-0} PHOTOS=${PHOTOS:-2}
  PHOTO_SIZE=${PHOTO_SIZE:-1280x960} PUT_MB=${PUT_MB:-1}
fi
SECONDS_EACH=${SECONDS_EACH:-15}
MIX_SECONDS=${MIX_SECONDS:-60}
WARMUP=${WARMUP:-3}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
PHOTOS=${PHOTOS:-8}
PHOTO_SIZE=${PHOTO_SIZE:-4000x3000}
PUT_MB=${PUT_MB:-4}
MIX_PUT_KB=${MIX_PUT_KB:-256}
MIX=${MIX:-"thumb=40 thumb1024=10 media=10 meta=10 list=25 put=5"}
RSS_LIMIT_MB=${RSS_LIMIT_MB:-300}
PORT=${PORT:-18292}
NGINX_PORT=${NGINX_PORT:-18293}
LOG_LEVEL=${LOG_LEVEL:-info}
ONLY=${ONLY:-"thumb idtoken media put mix"}

die() { printf 'load.sh: %s\n' "$*" >&2; exit 2; }
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
log() { printf '.. %s\n' "$*" >&2; }
load_average() { cut -d' ' -f1-3 /proc/loadavg; }

# --- tools ------------------------------------------------------------------------------
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || missing+=(nginx)
command -v curl >/dev/null || missing+=(curl)
command -v openssl >/dev/null || missing+=(openssl)
command -v python3 >/dev/null || missing+=(python3)
imagemagick >/dev/null || missing+=(imagemagick)
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
CONVERT=$(imagemagick) || die "ImageMagick's convert is missing (apt-get install imagemagick)"
[[ $("$NGINX" -V 2>&1) == *--with-http_dav_module* ]] || die "$NGINX has no WebDAV module (--with-http_dav_module); install Debian's nginx"
V_NGINX=$("$NGINX" -v 2>&1 | sed 's/^nginx version: //')
V_WRK=$({ wrk -v 2>&1 || true; } | sed -n 1p | awk '{print $1, $2}')

# --- the binary -------------------------------------------------------------------------
use_spotstore

# --- temp dir and clean-up ----------------------------------------------------------------
TMP=$(mktemp -d "${TMPDIR:-/tmp}/spotstore-load.XXXXXX")
server="" nginx_pid="" sampler=""
cleanup() {
  local pid
  for pid in "$sampler" "$server" "$nginx_pid"; do
    [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  done
  if [[ ${KEEP:-0} == 1 ]]; then log "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
export LOAD_LUA_DIR=$HERE/load

# --- photos: seeded, ~4 MB at q90, ~28 KB as a 256 px thumbnail ---------------------------------
# Blocky colour noise (so the thumbnail keeps detail) with fine grain (so the original is ~4 MB).
IN=$TMP/photos
mkdir -p "$IN"
log "making $PHOTOS $PHOTO_SIZE JPEGs"
for ((i = 1; i <= PHOTOS; i++)); do
  printf '%s\0' "$i"
done | xargs -0 -P "$(nproc)" -I{} sh -c '
  n=$(printf %03d "$1")
  "$3" -seed "$((100 + $1))" -size 200x150 xc:gray +noise Random -filter Point -resize "$4!" \
    -seed "$((200 + $1))" -attenuate 0.4 +noise Gaussian -quality 90 -sampling-factor 4:2:0 "$2/photo_$n.jpg"' _ {} "$IN" "$CONVERT" "$PHOTO_SIZE" ||
  die "ImageMagick (convert) failed to make the photos"

# --- store, rules, server -----------------------------------------------------------------------
STORE=$TMP/store
URL=http://127.0.0.1:$PORT
TOKEN=$("$SPOTSTORE" users add bench --store "$STORE" 2>"$TMP/users.log" | tail -1) ||
  die "spotstore users add failed: $(cat "$TMP/users.log")"
cat >"$TMP/load.rules" <<'EOF'
rules_version = '2';
// bench/load.sh: photos in spots of bucket `photos`; any bytes up to 8 MiB in bucket `files`.
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
}
EOF
"$SPOTSTORE" rules check "$TMP/load.rules" >&2 || die "the bench rules do not check"
# A Firebase-style signing key: RSA 2048, its x509 certificate as Google publishes them
# ({kid: PEM}), and an RS256 ID token of project bench-project, valid 2 h, for uid
# `bench-firebase`: not `bench`, whose SpotStore token made above makes it a user of
# SpotStore's own tokens, and one uid cannot be both (the server refuses such an ID token).
b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/firebase.key" -out "$TMP/firebase.pem" -days 1 -subj /CN=bench \
  >/dev/null 2>&1 || die "openssl could not make the signing key"
python3 -c 'import json, sys; print(json.dumps({"bench-1": open(sys.argv[1]).read()}))' "$TMP/firebase.pem" >"$TMP/firebase-keys.json"
NOW=$(date +%s) ID_UID=bench-firebase
ID_HEADER=$(printf '{"alg":"RS256","kid":"bench-1","typ":"JWT"}' | b64url)
ID_PAYLOAD=$(printf '{"iss":"https://securetoken.google.com/bench-project","aud":"bench-project","sub":"%s","user_id":"%s","iat":%d,"exp":%d,"auth_time":%d,"email":"%s@example.com","email_verified":true,"firebase":{"sign_in_provider":"password","identities":{"email":["%s@example.com"]}}}' \
  "$ID_UID" "$ID_UID" "$NOW" "$((NOW + 7200))" "$NOW" "$ID_UID" "$ID_UID" | b64url)
ID_SIGNATURE=$(printf '%s.%s' "$ID_HEADER" "$ID_PAYLOAD" | openssl dgst -sha256 -sign "$TMP/firebase.key" | b64url)
ID_TOKEN=$ID_HEADER.$ID_PAYLOAD.$ID_SIGNATURE
# --max-uploads-per-client: every wrk connection uploads as the same user; at the default (16)
# the PUT test's 64 connections would mostly measure 429s.
"$SPOTSTORE" serve --store "$STORE" --rules "$TMP/load.rules" --port "$PORT" --log-level "$LOG_LEVEL" --max-uploads-per-client "$CONNECTIONS" "${SMOKE_SERVE_ARGS[@]}" \
  --firebase-project bench-project --firebase-keys "$TMP/firebase-keys.json" >"$TMP/server.log" 2>&1 &
server=$!
ok=0; for _ in $(seq 1 150); do
  curl -sf "$URL/healthz" >/dev/null && { ok=1; break; }
  kill -0 "$server" 2>/dev/null || break; sleep 0.1
done
((ok)) || die "spotstore serve did not start on $URL: $(tail -5 "$TMP/server.log")"
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }
RSS_START=$(rss_kb)
AUTH="Authorization: Bearer $TOKEN"
curl -sf -o /dev/null -H "Authorization: Firebase $ID_TOKEN" "$URL/v0/b/photos/o?prefix=" ||
  die "the server refuses the bench's ID token: $(curl -s -H "Authorization: Firebase $ID_TOKEN" "$URL/v0/b/photos/o?prefix=")"

# --- nginx (foreground, everything under $TMP/nginx) ---------------------------------------------
NGX=$TMP/nginx
start_nginx "$NGX" "$NGINX_PORT" "keepalive_requests 1000000; default_type image/jpeg;"
mkdir -p "$NGX"/www/{photos,thumbs,up}
NURL=http://127.0.0.1:$NGINX_PORT

# --- content: upload the photos, give nginx the same bytes --------------------------------------
log "uploading $PHOTOS photos into spot photos/load (the server makes 256 and 1024 px thumbnails)"
: >"$TMP/ours-thumb.txt"; : >"$TMP/ours-media.txt"; : >"$TMP/nginx-thumb.txt"; : >"$TMP/nginx-media.txt"
for f in "$IN"/*.jpg; do
  name=$(basename "$f")
  object="/v0/b/photos/o/load%2F$name"
  curl -sfS -o "$TMP/upload.json" -X PUT -H "$AUTH" -H 'Content-Type: image/jpeg' --data-binary "@$f" "$URL$object" ||
    die "upload of $name failed: $(cat "$TMP/upload.json" 2>/dev/null)"
  curl -sfS -o "$NGX/www/thumbs/$name" -H "$AUTH" "$URL$object?alt=thumbnail&size=256" || die "no 256 px thumbnail of $name"
  curl -sfS -o "$TMP/check.jpg" -H "$AUTH" "$URL$object?alt=media" || die "download of $name failed"
  cmp -s "$f" "$TMP/check.jpg" || die "$name downloads different bytes"
  cp "$f" "$NGX/www/photos/$name"
  echo "$object?alt=thumbnail&size=256" >>"$TMP/ours-thumb.txt"
  echo "$object?alt=media" >>"$TMP/ours-media.txt"
  echo "/thumbs/$name" >>"$TMP/nginx-thumb.txt"
  echo "/photos/$name" >>"$TMP/nginx-media.txt"
done
for name in $(cd "$IN" && ls); do
  curl -sf "$NURL/thumbs/$name" | cmp -s - "$NGX/www/thumbs/$name" || die "nginx serves different bytes for thumbs/$name"
done
THUMB_BYTES=$(cat "$NGX"/www/thumbs/*.jpg | wc -c); THUMB_AVG_KB=$((THUMB_BYTES / PHOTOS / 1024))
MEDIA_BYTES=$(cat "$IN"/*.jpg | wc -c); MEDIA_AVG_KB=$((MEDIA_BYTES / PHOTOS / 1024))
printf 'x' | curl -sfS -o /dev/null -X PUT -H "$AUTH" --data-binary @- "$URL/v0/b/files/o/check" || die "PUT into bucket files failed"
printf 'x' | curl -sfS -T - "$NURL/up/check" || die "WebDAV PUT to nginx failed"
log "thumbnails ${THUMB_AVG_KB} KB, originals ${MEDIA_AVG_KB} KB on average; RSS $((RSS_START / 1024)) MB"

# --- measuring ------------------------------------------------------------------------------------
# run_wrk NAME SECONDS URL SCRIPT ARGS...: wrk into $TMP/wrk-NAME.txt; sets the R_* of its RESULT line.
run_wrk() {
  local name=$1 secs=$2 url=$3 script=$4; shift 4
  wrk -t "$THREADS" -c "$CONNECTIONS" -d "${secs}s" --timeout 10s -H "${WRK_AUTH:-$AUTH}" -s "$HERE/load/$script" "$url" -- "$@" \
    >"$TMP/wrk-$name.txt" 2>&1 || die "wrk $name failed: $(tail -5 "$TMP/wrk-$name.txt")"
  local line
  line=$(grep '^RESULT ' "$TMP/wrk-$name.txt") || die "wrk $name printed no RESULT: $(tail -5 "$TMP/wrk-$name.txt")"
  local kv
  for kv in ${line#RESULT }; do printf -v "R_${kv%%=*}" '%s' "${kv#*=}"; done
}
declare -A rps=() mbs=() p50=() p99=() errs=() loads=()
# measure TEST SIDE URL SCRIPT PAYLOAD_BYTES ARGS...: warm-up, then the measured run.
# PAYLOAD_BYTES > 0: MB/s = requests x PAYLOAD_BYTES (uploads); else wrk's bytes read.
measure() {
  local test=$1 side=$2 url=$3 script=$4 payload=$5; shift 5
  ((WARMUP > 0)) && run_wrk "$test-$side-warmup" "$WARMUP" "$url" "$script" "$@"
  loads[$test-$side]=$(load_average)
  run_wrk "$test-$side" "$SECONDS_EACH" "$url" "$script" "$@"
  local secs bytes
  secs=$(awk -v us="$R_duration_us" 'BEGIN {print us / 1e6}')
  bytes=$R_bytes; ((payload > 0)) && bytes=$((R_requests * payload))
  rps[$test-$side]=$(awk -v n="$R_requests" -v s="$secs" 'BEGIN {printf "%.0f", n / s}')
  mbs[$test-$side]=$(awk -v b="$bytes" -v s="$secs" 'BEGIN {printf "%.1f", b / s / 1e6}')
  p50[$test-$side]=$(awk -v us="$R_p50_us" 'BEGIN {printf "%.2f", us / 1000}')
  p99[$test-$side]=$(awk -v us="$R_p99_us" 'BEGIN {printf "%.2f", us / 1000}')
  errs[$test-$side]="non2xx=$R_status sock=$((R_connect + R_read + R_write + R_timeout))"
  log "$test $side: ${rps[$test-$side]} req/s, ${mbs[$test-$side]} MB/s, p50 ${p50[$test-$side]} ms, p99 ${p99[$test-$side]} ms, ${errs[$test-$side]} (load ${loads[$test-$side]})"
  kill -0 "$server" 2>/dev/null || die "spotstore serve died during $test: $(tail -5 "$TMP/server.log")"
}
wants() { [[ " $ONLY " == *" $1 "* ]]; }

LOAD0=$(load_average)
log "load average $LOAD0; $CONNECTIONS connections, $THREADS wrk threads, ${SECONDS_EACH}s each side (+${WARMUP}s warm-up)"
PUT_BYTES=$((PUT_MB * 1048576))
# GETs are static (one URL: photo 1), so wrk spends the least CPU per request on either side.
if wants thumb; then
  measure thumb nginx "$NURL$(sed -n 1p "$TMP/nginx-thumb.txt")" report.lua 0
  measure thumb spotstore "$URL$(sed -n 1p "$TMP/ours-thumb.txt")" report.lua 0
  # not a target: GET /healthz (no token, no catalog, same log line and metrics), the most
  # requests/s the HTTP stack itself serves here; shows how much of the gap is per request.
  measure thumb healthz "$URL/healthz" report.lua 0
fi
if wants idtoken; then
  measure idtoken own "$URL$(sed -n 1p "$TMP/ours-thumb.txt")" report.lua 0
  WRK_AUTH="Authorization: Firebase $ID_TOKEN" measure idtoken firebase "$URL$(sed -n 1p "$TMP/ours-thumb.txt")" report.lua 0
fi
if wants media; then
  measure media nginx "$NURL$(sed -n 1p "$TMP/nginx-media.txt")" report.lua 0
  measure media spotstore "$URL$(sed -n 1p "$TMP/ours-media.txt")" report.lua 0
fi
if wants put; then
  measure put nginx "$NURL" put.lua "$PUT_BYTES" /up/load- "$PUT_BYTES"
  measure put spotstore "$URL" put.lua "$PUT_BYTES" /v0/b/files/o/load- "$PUT_BYTES"
fi

# --- the mix ---------------------------------------------------------------------------------------
# Server-side status counts: spotstore_http_requests_total{method,route,status} from /metrics.
# An error line in swift-log's stream format ("<time> <level> <label>: …"), or a crash.
ERROR_LINE='^[^ ]+ (error|critical) |[Ff]atal error|panic|Crash'
# What the server logs when a client closes the connection in the middle of an upload.
CUT_OFF='stream ended at an unexpected time'
metrics_counts() {
  curl -sf "$URL/metrics" | sed -n 's/^spotstore_http_requests_total{method="\([^"]*\)",route="\([^"]*\)",status="\([0-9]*\)"} \([0-9]*\)$/\1 \2 \3 \4/p'
}
MIX_DONE=0
if wants mix; then
  write_mix_plan "$TMP/mix.plan"
  metrics_counts >"$TMP/metrics-before.txt"
  log_lines_before=$(wc -l <"$TMP/server.log")
  MIX_RSS_START=$(rss_kb)
  (while kill -0 "$server" 2>/dev/null; do
     printf '%s %s\n' "$(date +%s.%N)" "$(awk '/^VmRSS/ {print $2}' "/proc/$server/status" 2>/dev/null)"
     sleep 0.5
   done) >"$TMP/rss.txt" &
  sampler=$!
  LOAD_MIX=$(load_average)
  log "mix: $MIX_SECONDS s, $CONNECTIONS connections: $MIX (load $LOAD_MIX)"
  run_wrk mix "$MIX_SECONDS" "$URL" mix.lua "$TMP/mix.plan"
  log_lines_end=$(wc -l <"$TMP/server.log")
  sleep 1
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true; sampler=""
  kill -0 "$server" 2>/dev/null || die "spotstore serve died during the mix: $(tail -5 "$TMP/server.log")"
  MIX_RSS_END=$(rss_kb)
  MIX_RSS_PEAK=$(awk 'BEGIN {m = 0} $2 > m {m = $2} END {print m}' "$TMP/rss.txt")
  MIX_RSS_SAMPLES=$(wc -l <"$TMP/rss.txt")
  # RSS over the last third of the mix vs the middle third: growth there means a leak.
  read -r MIX_RSS_MID MIX_RSS_LAST < <(awk '{v[NR] = $2} END {n = NR; a = int(n / 3); for (i = a + 1; i <= 2 * a; i++) if (v[i] > m1) m1 = v[i]; for (i = 2 * a + 1; i <= n; i++) if (v[i] > m2) m2 = v[i]; print m1 + 0, m2 + 0}' "$TMP/rss.txt")
  metrics_counts >"$TMP/metrics-after.txt"
  MIX_SECS=$(awk -v us="$R_duration_us" 'BEGIN {print us / 1e6}')
  MIX_RPS=$(awk -v n="$R_requests" -v s="$MIX_SECS" 'BEGIN {printf "%.0f", n / s}')
  MIX_MBS=$(awk -v b="$R_bytes" -v s="$MIX_SECS" 'BEGIN {printf "%.1f", b / s / 1e6}')
  MIX_REQUESTS=$R_requests MIX_P50=$(awk -v us="$R_p50_us" 'BEGIN {printf "%.2f", us / 1000}')
  MIX_P90=$(awk -v us="$R_p90_us" 'BEGIN {printf "%.2f", us / 1000}')
  MIX_P99=$(awk -v us="$R_p99_us" 'BEGIN {printf "%.2f", us / 1000}')
  MIX_MAX=$(awk -v us="$R_max_us" 'BEGIN {printf "%.1f", us / 1000}')
  MIX_NON2XX=$R_status MIX_SOCK=$((R_connect + R_read + R_write + R_timeout))
  MIX_SOCK_DETAIL="connect $R_connect, read $R_read, write $R_write, timeout $R_timeout"
  # counts by method, route and status during the mix (after - before)
  MIX_COUNTS=$(awk 'NR == FNR {b[$1 " " $2 " " $3] = $4; next} {k = $1 " " $2 " " $3; d = $4 - b[k]; if (d > 0) printf "%-7s %-28s %s %9d\n", $1, $2, $3, d}' \
    "$TMP/metrics-before.txt" "$TMP/metrics-after.txt" | sort -k2,2 -k1,1 -k3,3)
  MIX_5XX=$(awk '$3 >= 500 {n += $4} END {print n + 0}' <<<"$MIX_COUNTS")
  MIX_SERVER_TOTAL=$(awk '{n += $4} END {print n + 0}' <<<"$MIX_COUNTS")
  sed -n "$((log_lines_before + 1)),${log_lines_end}p" "$TMP/server.log" >"$TMP/server-mix.log"
  MIX_LOG_LINES=$(wc -l <"$TMP/server-mix.log")
  grep -E "$ERROR_LINE" "$TMP/server-mix.log" >"$TMP/server-errors.log" || true
  MIX_ERROR_LINES=$(wc -l <"$TMP/server-errors.log")
  # wrk stops by closing its connections, cutting off the uploads it has in flight; the
  # server logs those after wrk has exited. Counted apart, not as server errors.
  MIX_CUT_LINES=$(tail -n +"$((log_lines_end + 1))" "$TMP/server.log" | grep -E "$ERROR_LINE" | grep -c "$CUT_OFF" || true)
  MIX_DONE=1
fi
LOAD1=$(load_average)
RSS_HWM=$(awk '/^VmHWM/ {print $2}' "/proc/$server/status")
grep -E "$ERROR_LINE" "$TMP/server.log" >"$TMP/server-errors-all.log" || true
ALL_ERROR_LINES=$(wc -l <"$TMP/server-errors-all.log")
ALL_CUT_LINES=$(grep -c "$CUT_OFF" "$TMP/server-errors-all.log" || true)

# --- report ------------------------------------------------------------------------------------------
fail=0
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}'; }
verdict() { awk -v r="$1" -v t="$2" 'BEGIN {exit !(r >= t)}' && echo PASS || { echo FAIL; }; }
mkdir -p "$RESULTS"
report=$RESULTS/load-$(date -u +%Y%m%dT%H%M%SZ).txt
{
  echo "load bench${SMOKE:+ (smoke: not comparable)} $(date -u +%FT%TZ)  host: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | sed -n 1p)"
  echo "spotstore: $SPOTSTORE (built $(date -u -r "$SPOTSTORE" +%FT%TZ); repo at $(cd "$ROOT" && git log -1 --format='%h' 2>/dev/null || true)), log level $LOG_LEVEL; $V_NGINX (worker_processes auto, sendfile, access_log on); $V_WRK"
  echo "content: $PHOTOS photos $PHOTO_SIZE, originals ${MEDIA_AVG_KB} KB, 256 px thumbnails ${THUMB_AVG_KB} KB on average; uploads ${PUT_MB} MiB of new bytes each"
  echo "wrk -t $THREADS -c $CONNECTIONS, ${SECONDS_EACH}s each side after ${WARMUP}s warm-up; nginx first, then spotstore" \
    "(healthz: spotstore's GET /healthz, no token or catalog: its HTTP stack's ceiling, not a target)"
  echo "load average at start: $LOAD0; at end: $LOAD1 (the machine may be shared: compare within one run)"
  echo
  printf '%-34s %-10s %9s %9s %8s %8s  %-22s %s\n' "test" "server" "req/s" "MB/s" "p50 ms" "p99 ms" "errors" "load avg"
  for test in thumb idtoken media put; do
    wants "$test" || continue
    base=nginx; ours=spotstore; sides="nginx spotstore"
    case $test in
      thumb) label="GET 256 px thumbnail (${THUMB_AVG_KB} KB)"; metric=rps; target=0.50; sides+=" healthz" ;;
      idtoken) label="the same, ID token vs own token"; metric=rps; target=0.90; base=own; ours=firebase; sides="own firebase" ;;
      media) label="GET original (${MEDIA_AVG_KB} KB)"; metric=mbs; target=0.50 ;;
      put) label="PUT ${PUT_MB} MiB (non-image bucket)"; metric=mbs; target=0.60 ;;
    esac
    for side in $sides; do
      k=$test-$side
      printf '%-34s %-10s %9s %9s %8s %8s  %-22s %s\n' "$label" "$side" "${rps[$k]}" "${mbs[$k]}" "${p50[$k]}" "${p99[$k]}" "${errs[$k]}" "${loads[$k]}"
      label=""
    done
    if [[ $metric == rps ]]; then r=$(ratio "${rps[$test-$ours]}" "${rps[$test-$base]}"); what="req/s"
    else r=$(ratio "${mbs[$test-$ours]}" "${mbs[$test-$base]}"); what="MB/s"; fi
    v=$(verdict "$r" "$target"); [[ $v == PASS ]] || fail=1
    [[ ${errs[$test-$ours]} == "non2xx=0 sock=0" ]] || { v="$v (errors!)"; fail=1; }
    printf '%-34s %-10s %9s  %s/%s %s, target >= %s: %s\n' "" "ratio" "$r" "$ours" "$base" "$what" "$target" "$v"
  done
  if ((MIX_DONE)); then
    echo
    echo "mix: $MIX_SECONDS s, $CONNECTIONS connections, spotstore alone (load average $LOAD_MIX at start)"
    echo "     weights: $MIX (uploads: ${MIX_PUT_KB} KiB of new bytes into bucket files)"
    echo "     $MIX_REQUESTS requests, $MIX_RPS req/s, $MIX_MBS MB/s read; latency p50 $MIX_P50 ms, p90 $MIX_P90 ms, p99 $MIX_P99 ms, max $MIX_MAX ms"
    echo "     by method, route, status (server metrics, $MIX_SERVER_TOTAL answered):"
    sed 's/^/       /' <<<"$MIX_COUNTS"
    echo "     wrk: non-2xx/3xx $MIX_NON2XX; socket errors $MIX_SOCK ($MIX_SOCK_DETAIL)"
    v=PASS; ((MIX_5XX == 0 && MIX_SOCK == 0 && MIX_NON2XX == 0)) || { v=FAIL; fail=1; }
    echo "     5xx: $MIX_5XX (target 0), non-2xx: $MIX_NON2XX, socket errors: $MIX_SOCK: $v"
    v=PASS; ((MIX_ERROR_LINES == 0)) || { v=FAIL; fail=1; }
    echo "     server log during the mix: $MIX_LOG_LINES lines, $MIX_ERROR_LINES error lines: $v" \
      "(after wrk stopped: $MIX_CUT_LINES uploads it cut off, logged as errors, not counted)"
    sed -n 1,5p "$TMP/server-errors.log" | sed 's/^/       /'
    v=PASS; ((MIX_RSS_PEAK < RSS_LIMIT_MB * 1024)) || { v=FAIL; fail=1; }
    echo "     RSS (VmRSS every 0.5 s, $MIX_RSS_SAMPLES samples): start $((MIX_RSS_START / 1024)) MB, peak $((MIX_RSS_PEAK / 1024)) MB (limit $RSS_LIMIT_MB MB): $v;" \
      "max middle third $((MIX_RSS_MID / 1024)) MB, last third $((MIX_RSS_LAST / 1024)) MB; end $((MIX_RSS_END / 1024)) MB"
  fi
  echo
  echo "server: RSS $((RSS_START / 1024)) MB after start, VmHWM $((RSS_HWM / 1024)) MB over the whole run; $ALL_ERROR_LINES error lines in its log," \
    "$ALL_CUT_LINES of them uploads cut off when a wrk run stopped"
  ((fail)) && echo "RESULT: FAIL (a target above was missed)${SMOKE:+; smoke run: not judged}" || echo "RESULT: PASS (every target met)"
} | tee "$report"
log "saved $report"
smoke || grep -q '^RESULT: PASS' "$report"
