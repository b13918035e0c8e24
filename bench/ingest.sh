#!/usr/bin/env bash
# ingest.sh - batch ingest: `spotstore ingest` into a local server vs the pipeline a user
# would script (sha256sum, exiftool, vipsthumbnail x2, curl -T into nginx WebDAV), same
# 40 geotagged 12 MP JPEGs, same parallelism, in one run.
#
#   bench/ingest.sh
#   FORMAT=heic bench/ingest.sh
#   SMOKE=1 bench/ingest.sh   # 2 photos of 1280x960 (bench/corpus-smoke-geo), 1 run: checks it works
#
# Environment (all optional):
#   FORMAT=jpeg        jpeg: the geotagged JPEGs. heic: the same photos as HEICs
#                      (bench/corpus-geo-heic, made by `make-corpus.sh --geo-heic`: heif-enc
#                      -q 50 -t 320 of the plain corpus, GPS written as for corpus-geo);
#                      both pipelines unchanged but for the file names (vipsthumbnail
#                      reads HEIC through libheif), rules allow image/heic
#   SPOTSTORE=path     binary to test; when set, no `swift build` is run
#                      (default: swift build -c release --product spotstore,
#                      then <repo>/.build/release/spotstore)
#   CONCURRENCY=4      parallelism of both: `ingest --concurrency N` and `xargs -P N`
#   RUNS=3             timed runs of each; medians are reported
#   COUNT=40           photos; CORPUS=bench/corpus-geo (made by `make-corpus.sh --geo`;
#                      bench/corpus-geo-heic with FORMAT=heic)
#   PORT=18290         spotstore serve port; NGINX_PORT=18291
#   VIPS_Q=85          JPEG quality of vipsthumbnail (spotstore writes q85)
#   LOG_LEVEL=warning  spotstore serve --log-level (the server log is kept in the temp dir)
#   ONLY_REFERENCE=1   run only the reference pipelines (no build, no spotstore)
#   KEEP=1             keep the temporary directory (stores, nginx root, logs)
#   SMOKE=1            COUNT=2 RUNS=1 CONCURRENCY=2, CORPUS=bench/corpus-smoke-geo(-heic), and
#                      .build/debug/spotstore when SPOTSTORE is not set (see bench/common.sh)
#
# Per run (interleaved; fresh store and fresh nginx root each time; warm page cache):
#   (a)  spotstore ingest DIR --bucket bench --server URL --token T --concurrency N --quiet
#        --json FILE, into `spotstore serve` on a new store (rules file below: 40 photos per
#        spot allowed). Hash, EXIF, city, 256 + 1024 thumbnails, store.
#   (c)  the same command again right after (a), on the same store: everything present.
#   (b)  find DIR -name '*.jpg' | xargs -P N -n 1 per-file.sh, per file: sha256sum,
#        exiftool -n -GPSLatitude -GPSLongitude, vipsthumbnail --size 256 and --size 1024,
#        curl -T of the original and both thumbnails into nginx (WebDAV PUT) on 127.0.0.1.
#   (b0) the same without uploading the thumbnails (only the original goes to nginx).
# Targets: median(a) / median(b) <= 0.40; (c) < 1 s. Peak RSS of the server during (a).
# The report is printed and saved to bench/results/ingest-<UTC time>.txt
# (ingest-heic-<UTC time>.txt with FORMAT=heic).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
FORMAT=${FORMAT:-jpeg}
SMOKE_SUFFIX=""
if [[ -n ${SMOKE:-} ]]; then COUNT=${COUNT:-2}; RUNS=${RUNS:-1}; CONCURRENCY=${CONCURRENCY:-2}; SMOKE_SUFFIX=-smoke; fi
case $FORMAT in
  jpeg) EXT=jpg; CORPUS=${CORPUS:-$HERE/corpus$SMOKE_SUFFIX-geo} ;;
  heic) EXT=heic; CORPUS=${CORPUS:-$HERE/corpus$SMOKE_SUFFIX-geo-heic} ;;
  *) printf 'ingest.sh: FORMAT=%s: expected jpeg or heic\n' "$FORMAT" >&2; exit 1 ;;
esac
CONCURRENCY=${CONCURRENCY:-4}
RUNS=${RUNS:-3}
COUNT=${COUNT:-40}
PORT=${PORT:-18290}
NGINX_PORT=${NGINX_PORT:-18291}
VIPS_Q=${VIPS_Q:-85}
LOG_LEVEL=${LOG_LEVEL:-warning}
ONLY_REFERENCE=${ONLY_REFERENCE:-0}

die() { printf 'ingest.sh: %s\n' "$*" >&2; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
log() { printf '.. %s\n' "$*" >&2; }

# --- tools ------------------------------------------------------------------------------
missing=()
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || missing+=(nginx)
command -v exiftool >/dev/null || missing+=(libimage-exiftool-perl)
command -v vipsthumbnail >/dev/null || missing+=(libvips-tools)
command -v curl >/dev/null || missing+=(curl)
command -v sha256sum >/dev/null || missing+=(coreutils)
command -v xargs >/dev/null || missing+=(findutils)
command -v python3 >/dev/null || missing+=(python3)
[[ -x /usr/bin/time ]] || missing+=(time)
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[[ $("$NGINX" -V 2>&1) == *--with-http_dav_module* ]] || die "$NGINX has no WebDAV module (--with-http_dav_module); install Debian's nginx"
V_NGINX=$("$NGINX" -v 2>&1 | sed 's/^nginx version: //')
V_EXIF=$(exiftool -ver)
V_VIPS=$(vipsthumbnail --vips-version 2>/dev/null | sed -n 1p)
V_CURL=$(curl --version | sed -n 1p | awk '{print $1, $2}')
V_SHA=$(sha256sum --version | sed -n 1p)
V_XARGS=$(xargs --version | sed -n 1p)
if [[ $FORMAT == heic ]]; then
  [[ $(vips -l foreign 2>/dev/null) == *"(heifload)"* ]] || die "this libvips has no heifload (Debian's libvips42 8.14 is built with libheif)"
  V_VIPS+=" (heifload, libheif $(dpkg-query -W -f '${Version}' libheif1 2>/dev/null || echo '?'))"
fi

# --- the binary -------------------------------------------------------------------------
if [[ $ONLY_REFERENCE != 1 ]]; then
  use_spotstore
  help=$("$SPOTSTORE" ingest --help 2>&1) && grep -q -- --concurrency <<<"$help" ||
    die "'$SPOTSTORE ingest --help' failed or has no --concurrency: this binary has no ingest command
$(head -5 <<<"$help")"
fi

# --- corpus -----------------------------------------------------------------------------
mapfile -t files < <(seq -f "$CORPUS/photo_%03g.$EXT" 1 "$COUNT")
have=0; for f in "${files[@]}"; do [[ -s $f ]] && have=$((have + 1)); done
GEO_FLAG=--geo; [[ $FORMAT == heic ]] && GEO_FLAG=--geo-heic
if ((have < COUNT)); then
  log "geotagged corpus incomplete ($have/$COUNT in $CORPUS): running make-corpus.sh $GEO_FLAG"
  "$HERE/make-corpus.sh" "$GEO_FLAG" "$CORPUS" "$COUNT"
fi
nogps=$(exiftool -q -n -T -GPSLatitude "${files[@]}" | grep -c '^-$' || true)
((nogps == 0)) || die "$nogps of $COUNT photos in $CORPUS have no GPS (make them with: bench/make-corpus.sh $GEO_FLAG $CORPUS $COUNT)"

TMP=$(mktemp -d /tmp/spotstore-ingest.XXXXXX)
server=""; nginx_pid=""
cleanup() {
  [[ -n $server ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  [[ -n $nginx_pid ]] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  if [[ ${KEEP:-0} == 1 ]]; then log "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

# Both pipelines read the same directory holding exactly the COUNT photos (hard links when
# possible). Its name, "photos", is the folder spotstore turns into the spot id.
IN=$TMP/in/photos
mkdir -p "$IN"
cp -l "${files[@]}" "$IN/" 2>/dev/null || cp "${files[@]}" "$IN/"
BYTES=$(cat "$IN"/*."$EXT" | wc -c)
warm() { cat "$IN"/*."$EXT" >/dev/null; }

# --- nginx (foreground, everything under $TMP/nginx) -----------------------------------------
NGX=$TMP/nginx
start_nginx "$NGX" "$NGINX_PORT"
printf 'x' | curl -sfS -T - "http://127.0.0.1:$NGINX_PORT/check/x.txt" || die "WebDAV PUT to nginx failed"

# --- (b) the per-file script a user would write ---------------------------------------------
cat >"$TMP/per-file.sh" <<'EOF'
#!/usr/bin/env bash
# per-file.sh FILE: hash, GPS, two thumbnails, upload. Run as: xargs -P N -n 1 per-file.sh
# env: DEST=http://host/prefix  OUT=local dir for thumbnails and the index  Q=jpeg quality
#      THUMBS_UP=1 to upload the thumbnails as well as the original
set -euo pipefail
f=$1
name=$(basename "$f" .@EXT@)
sha=$(sha256sum "$f" | cut -d' ' -f1)
gps=$(exiftool -n -s3 -GPSLatitude -GPSLongitude "$f" | paste -sd' ')
vipsthumbnail "$f" --size 256 -o "$OUT/$name-256.jpg[Q=$Q,strip]"
vipsthumbnail "$f" --size 1024 -o "$OUT/$name-1024.jpg[Q=$Q,strip]"
curl -sfS -T "$f" "$DEST/photos/$name.@EXT@"
if [[ $THUMBS_UP == 1 ]]; then
  curl -sfS -T "$OUT/$name-256.jpg" "$DEST/thumbs/256/$name.jpg"
  curl -sfS -T "$OUT/$name-1024.jpg" "$DEST/thumbs/1024/$name.jpg"
fi
printf '%s\t%s\t%s\n' "$name.@EXT@" "$sha" "$gps" >>"$OUT/index.tsv"
EOF
sed -i "s/@EXT@/$EXT/g" "$TMP/per-file.sh"   # jpg, or heic (vipsthumbnail reads it with libheif)
chmod +x "$TMP/per-file.sh"

# run_ref KIND RUN: one timed run of b (thumbnails uploaded) or b0; prints wall ms.
run_ref() {
  local kind=$1 r=$2 out=$TMP/out-$1-$2 t0 t1 rc=0 up=1 n
  [[ $kind == b0 ]] && up=0
  rm -rf "$out" "$NGX/www/$kind-$r"; mkdir -p "$out"
  warm
  t0=$(date +%s%N)
  find "$IN" -name "*.$EXT" -print0 |
    DEST="http://127.0.0.1:$NGINX_PORT/$kind-$r" OUT="$out" Q=$VIPS_Q THUMBS_UP=$up \
      /usr/bin/time -f '%U %S' -o "$TMP/time-$kind-$r" \
      xargs -0 -P "$CONCURRENCY" -n 1 "$TMP/per-file.sh" >"$TMP/log-$kind-$r" 2>&1 || rc=$?
  t1=$(date +%s%N)
  ((rc == 0)) || die "($kind) run $r failed with status $rc: $(head -5 "$TMP/log-$kind-$r")"
  # check: every original stored byte-identical, thumbnails there, an index line with GPS each
  n=$(find "$NGX/www/$kind-$r/photos" -name "*.$EXT" | wc -l)
  ((n == COUNT)) || die "($kind) run $r: $n originals in nginx, expected $COUNT"
  cmp -s "$IN/photo_001.$EXT" "$NGX/www/$kind-$r/photos/photo_001.$EXT" || die "($kind) run $r: photo_001.$EXT differs in nginx"
  if ((up)); then
    n=$(find "$NGX/www/$kind-$r/thumbs" -name '*.jpg' | wc -l)
    ((n == 2 * COUNT)) || die "($kind) run $r: $n thumbnails in nginx, expected $((2 * COUNT))"
  fi
  n=$(awk -F'\t' 'length($2) == 64 && $3 ~ /^-?[0-9.]+ -?[0-9.]+$/' "$out/index.tsv" | wc -l)
  ((n == COUNT)) || die "($kind) run $r: $n complete index lines, expected $COUNT"
  rm -rf "$NGX/www/$kind-$r"
  echo $(((t1 - t0) / 1000000))
}

# --- (a)/(c) spotstore --------------------------------------------------------------------------
TYPES='"image/jpeg", "image/png"'; [[ $FORMAT == heic ]] && TYPES+=', "image/heic"'
cat >"$TMP/bench.rules" <<EOF
rules_version = '2';
// bench/ingest.sh: one spot may hold all the photos.
service firebase.storage {
  match /b/bench/o/{spotId}/{file} {
    limit size: 64 MiB, objects: 1000, types: [$TYPES];
    allow read, write: if request.auth != null;
  }
  match /b/bench/o/{path=**} {
    allow list: if request.auth != null;
  }
}
EOF

# outcomes FILE: "outcome=count ..." from ingest's --json FILE (a JSON array, an object
# holding one, or JSON lines; each record has an "outcome").
outcomes() {
  python3 - "$1" <<'EOF'
import collections, json, sys
text = open(sys.argv[1]).read()
try:
    data = json.loads(text)
except ValueError:
    data = [json.loads(l) for l in text.splitlines() if l.strip()]
if isinstance(data, dict):
    data = next((v for v in data.values() if isinstance(v, list)), [data])
c = collections.Counter(str(r.get("outcome")) for r in data if isinstance(r, dict))
print(" ".join(f"{k}={v}" for k, v in sorted(c.items())))
EOF
}
# stored_objects: objects in bucket bench, over every spot (folder).
stored_objects() {
  local spot n=0
  while read -r spot; do
    n=$((n + $("$SPOTSTORE" ls --server "$URL" --token "$TOKEN" "$spot" | grep -vc '/$' || true)))
  done < <("$SPOTSTORE" ls --server "$URL" --token "$TOKEN" bench | grep '/$')
  echo "$n"
}

URL=http://127.0.0.1:$PORT
TOKEN=""
declare -A peak_rss=() start_rss=() out_a=() out_c=() server_cpu_ms=() client_cpu=() client_cpu_c=()
# CPU and peak RSS of the client: GNU time (user s, sys s, max RSS kB).
TIMEV=(/usr/bin/time -f '%U %S %M')
# server_cpu: user + system CPU ms of the server process so far.
server_cpu() { awk -v hz="$(getconf CLK_TCK)" '{print int(($14 + $15) * 1000 / hz)}' "/proc/$server/stat"; }
# run_ours RUN: fresh store and server, timed (a) then timed (c); sets A_MS and C_MS.
run_ours() {
  local r=$1 store=$TMP/store-$1 t0 t1 rc=0 n meta
  rm -rf "$store"
  TOKEN=$("$SPOTSTORE" users add bench --store "$store" 2>"$TMP/users-$r.log" | tail -1) ||
    die "spotstore users add failed: $(cat "$TMP/users-$r.log")"
  "$SPOTSTORE" serve --store "$store" --rules "$TMP/bench.rules" --port "$PORT" --log-level "$LOG_LEVEL" "${SMOKE_SERVE_ARGS[@]}" \
    >"$TMP/server-$r.log" 2>&1 &
  server=$!
  ok=0; for _ in $(seq 1 150); do
    curl -sf "$URL/healthz" >/dev/null && { ok=1; break; }
    kill -0 "$server" 2>/dev/null || break; sleep 0.1
  done
  ((ok)) || die "spotstore serve did not start on $URL: $(tail -5 "$TMP/server-$r.log")"
  start_rss[$r]=$(awk '/VmRSS/ {print $2}' "/proc/$server/status")
  warm
  cpu0=$(server_cpu)
  t0=$(date +%s%N)
  "${TIMEV[@]}" -o "$TMP/time-a-$r" "$SPOTSTORE" ingest "$IN" --bucket bench --server "$URL" --token "$TOKEN" \
    --concurrency "$CONCURRENCY" --quiet --json "$TMP/a-$r.json" >"$TMP/log-a-$r" 2>&1 || rc=$?
  t1=$(date +%s%N)
  server_cpu_ms[$r]=$(($(server_cpu) - cpu0))
  client_cpu[$r]=$(cat "$TMP/time-a-$r" 2>/dev/null | tail -1)
  peak_rss[$r]=$(awk '/VmHWM/ {print $2}' "/proc/$server/status")
  ((rc == 0)) || die "(a) run $r: spotstore ingest exited $rc: $(head -10 "$TMP/log-a-$r")"
  A_MS=$(((t1 - t0) / 1000000))
  out_a[$r]=$(outcomes "$TMP/a-$r.json" 2>&1 || true)
  n=$(stored_objects)
  ((n == COUNT)) || die "(a) run $r: $n objects in bucket bench after ingest, expected $COUNT (outcomes: ${out_a[$r]})"
  # one photo: city and both thumbnails in its metadata
  meta=$(curl -sf -H "Authorization: Bearer $TOKEN" "$URL/v0/b/bench/o/$("$SPOTSTORE" ls --server "$URL" --token "$TOKEN" bench | grep '/$' | sed -n 1p | cut -d/ -f2)%2Fphoto_001.$EXT" || true)
  grep -q '"city":"Paris"' <<<"$meta" && grep -q '"1024"' <<<"$meta" && grep -q '"256"' <<<"$meta" ||
    die "(a) run $r: photo_001.$EXT has no city Paris or no thumbnails: ${meta:0:400}"

  warm
  rc=0
  t0=$(date +%s%N)
  "${TIMEV[@]}" -o "$TMP/time-c-$r" "$SPOTSTORE" ingest "$IN" --bucket bench --server "$URL" --token "$TOKEN" \
    --concurrency "$CONCURRENCY" --quiet --json "$TMP/c-$r.json" >"$TMP/log-c-$r" 2>&1 || rc=$?
  t1=$(date +%s%N)
  client_cpu_c[$r]=$(cat "$TMP/time-c-$r" 2>/dev/null | tail -1)
  ((rc == 0)) || die "(c) run $r: second spotstore ingest exited $rc: $(head -10 "$TMP/log-c-$r")"
  C_MS=$(((t1 - t0) / 1000000))
  out_c[$r]=$(outcomes "$TMP/c-$r.json" 2>&1 || true)
  n=$(stored_objects)
  ((n == COUNT)) || die "(c) run $r: $n objects after the second ingest, expected $COUNT"
  [[ ${out_c[$r]} != "${out_a[$r]}" ]] || log "warning: (c) run $r reports the same outcomes as (a): ${out_c[$r]}"
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
}

# --- timing --------------------------------------------------------------------------------------
kinds=(b b0)
[[ $ONLY_REFERENCE == 1 ]] || kinds=(a c b b0)
declare -A times=()
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
log "$COUNT photos ($((BYTES / 1048576)) MiB), concurrency $CONCURRENCY, $RUNS runs of ${kinds[*]} (load average $LOAD0)"
for ((r = 1; r <= RUNS; r++)); do
  order=(ours b b0); ((r % 2 == 0)) && order=(b0 b ours)
  for k in "${order[@]}"; do
    if [[ $k == ours ]]; then
      [[ $ONLY_REFERENCE == 1 ]] && continue
      run_ours "$r"
      times[a]+="$A_MS "; times[c]+="$C_MS "
      log "run $r (a) ingest: $A_MS ms [${out_a[$r]}], server peak RSS $((peak_rss[$r] / 1024)) MB; (c) again: $C_MS ms [${out_c[$r]}]"
    else
      ms=$(run_ref "$k" "$r")
      times[$k]+="$ms "
      log "run $r ($k): $ms ms"
    fi
  done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# --- report ----------------------------------------------------------------------------------------
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
secs() { awk -v ms="$1" 'BEGIN {printf "%.2f", ms / 1000}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
declare -A med=()
for k in "${kinds[@]}"; do med[$k]=$(median <<<"${times[$k]}"); done
label() {
  case $1 in
    a) echo "(a) spotstore ingest, fresh store" ;;
    c) echo "(c) spotstore ingest, second run" ;;
    b) echo "(b) script + nginx, 3 PUTs/photo" ;;
    b0) echo "(b0) script + nginx, original only" ;;
  esac
}
mkdir -p "$RESULTS"
report=$RESULTS/ingest-$([[ $FORMAT == heic ]] && echo heic-)$(date -u +%Y%m%dT%H%M%SZ).txt
{
  echo "ingest bench${SMOKE:+ (smoke: not comparable)} $(date -u +%FT%TZ)  host: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | sed -n 1p)"
  if [[ $FORMAT == heic ]]; then
    echo "corpus: $COUNT geotagged $(vipsheader -f width "${files[0]}")x$(vipsheader -f height "${files[0]}") HEICs (heif-enc -q 50 -t 320), $((BYTES / 1048576)) MiB ($CORPUS); parallelism $CONCURRENCY"
  else
    echo "corpus: $COUNT geotagged $(vipsheader -f width "${files[0]}")x$(vipsheader -f height "${files[0]}") q90 JPEGs, $((BYTES / 1048576)) MiB ($CORPUS); parallelism $CONCURRENCY"
  fi
  echo "tools: $V_NGINX, exiftool $V_EXIF, $V_VIPS, $V_CURL, $V_SHA, $V_XARGS"
  echo "spotstore: ${SPOTSTORE:-(not measured)}${SPOTSTORE:+ ($(cd "$ROOT" && git log -1 --format='%h %cd' --date=short 2>/dev/null || true))}"
  echo "load average before timing: $LOAD0; after: $LOAD1 (other work on the machine makes figures noisy)"
  echo
  printf '%-40s %10s %10s   %s\n' "wall time (median of $RUNS)" "s" "ms/photo" "raw ms"
  for k in "${kinds[@]}"; do
    printf '%-40s %10s %10s   %s\n' "$(label "$k")" "$(secs "${med[$k]}")" \
      "$(awk -v ms="${med[$k]}" -v n="$COUNT" 'BEGIN {printf "%.0f", ms / n}')" "${times[$k]}"
  done
  if [[ $ONLY_REFERENCE != 1 ]]; then
    printf '%-40s %10s\n' "(a) / (b)   (target <= 0.40)" "$(ratio "${med[a]}" "${med[b]}")"
    printf '%-40s %10s\n' "(a) / (b0)  (original-only upload)" "$(ratio "${med[a]}" "${med[b0]}")"
    echo
    for ((r = 1; r <= RUNS; r++)); do
      echo "run $r: server RSS at start $((start_rss[$r] / 1024)) MB, peak during (a) $((peak_rss[$r] / 1024)) MB; outcomes (a): ${out_a[$r]}; (c): ${out_c[$r]}"
      read -r cu cs cm <<<"${client_cpu[$r]:-? ? 0}"
      read -r du ds dm <<<"${client_cpu_c[$r]:-? ? 0}"
      echo "       CPU during (a): server $(secs "${server_cpu_ms[$r]}") s, client ${cu} s user + ${cs} s sys (peak RSS $((cm / 1024)) MB); (c) client ${du} s user + ${ds} s sys (peak RSS $((dm / 1024)) MB)"
    done
    for k in b b0; do
      line="CPU of all processes of ($k), per run:"
      for ((r = 1; r <= RUNS; r++)); do
        read -r cu cs <<<"$(tail -1 "$TMP/time-$k-$r" 2>/dev/null)"
        line+=" ${cu:-?} s user + ${cs:-?} s sys;"
      done
      echo "${line%;} (nginx not included)"
    done
    echo
    fail=0
    awk -v a="${med[a]}" -v b="${med[b]}" 'BEGIN {exit !(a / b <= 0.40)}' || { echo "MISSED (median): (a)/(b) > 0.40"; fail=1; }
    ((${med[c]%.*} < 1000)) || { echo "MISSED (median): second run (c) >= 1 s"; fail=1; }
    ((fail)) || echo "targets met (median): (a)/(b) <= 0.40, (c) < 1 s"
  fi
  echo
  echo "(a)/(c): spotstore ingest DIR --bucket bench --server $URL --token T --concurrency $CONCURRENCY --quiet --json FILE"
  echo "(b):     find DIR -name '*.$EXT' -print0 | xargs -0 -P $CONCURRENCY -n 1 per-file.sh   (nginx WebDAV PUT, worker_processes auto)"
  echo "per-file.sh:"
  sed 's/^/    /' "$TMP/per-file.sh"
} | tee "$report"
log "saved $report"
