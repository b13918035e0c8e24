#!/usr/bin/env bash
# webp.sh - WebP thumbnails: what `spotstore thumbnail --webp` adds to the JPEG thumbnails
# (time, bytes, quality), side by side with vipsthumbnail writing WebP, in one run.
#
#   bench/webp.sh
#   SMOKE=1 bench/webp.sh   # 2 photos of 1280x960 (bench/corpus-smoke), 1 run: checks it works
#
# Environment (all optional):
#   SPOTSTORE=path     binary to test; when set, no `swift build` is run
#                      (default: swift build -c release --product spotstore)
#   RUNS=3             timed runs of each; medians are reported
#   COUNT=40           photos; CORPUS=bench/corpus (made by make-corpus.sh if missing)
#   SSIM_PICK="1 3 10 20 30"  corpus indices used for the quality check (3 is Orientation 6)
#   KEEP=1             keep the temporary output directory
#   SMOKE=1            COUNT=2 RUNS=1 SSIM_PICK="1 2" CORPUS=bench/corpus-smoke, and
#                      .build/debug/spotstore when SPOTSTORE is not set (see bench/common.sh)
#
# Per run (interleaved, one process each, warm page cache):
#   jpeg   spotstore thumbnail --size 256 --size 1024 --out DIR FILE...  (JPEG q85)
#   webp   the same with --webp (JPEG q85 and WebP q80 of each size, as an upload makes)
#   vips   vipsthumbnail --size 1024 -o %s-1024.webp[Q=80] FILE..., then --size 256 the
#          same way (VIPS_CONCURRENCY=1): WebP at both sizes with the reference tool
# Reported: ms per photo; bytes of each tool's thumbnails per size; mean SSIM of the 1024 px
# thumbnails against ImageMagick's Lanczos resize of the full decode (bench/ssim.py).
# No target: the figures back README's statement of what WebP thumbnails cost and save.
# The report is printed and saved to bench/results/webp-<UTC time>.txt.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
if [[ -n ${SMOKE:-} ]]; then CORPUS=${CORPUS:-$HERE/corpus-smoke}; COUNT=${COUNT:-2}; RUNS=${RUNS:-1}; SSIM_PICK=${SSIM_PICK:-"1 2"}; fi
CORPUS=${CORPUS:-$HERE/corpus}
RUNS=${RUNS:-3}
COUNT=${COUNT:-40}
SSIM_PICK=${SSIM_PICK:-"1 3 10 20 30"}
VENV=$HERE/.venv

die() { printf 'webp.sh: %s\n' "$*" >&2; exit 1; }
log() { printf '.. %s\n' "$*" >&2; }
source "$HERE/common.sh"

missing=()
command -v vipsthumbnail >/dev/null || missing+=(libvips-tools)
CONVERT=$(imagemagick) || missing+=(imagemagick)
command -v python3 >/dev/null || missing+=(python3 python3-venv)
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
  CONVERT=$(imagemagick) || die "no ImageMagick convert after installing imagemagick"
fi
[[ $(vips -l foreign 2>/dev/null) == *"(webpsave)"* ]] || die "this libvips cannot write WebP"
use_spotstore

mapfile -t files < <(seq -f "$CORPUS/photo_%03g.jpg" 1 "$COUNT")
have=0; for f in "${files[@]}"; do [[ -s $f ]] && have=$((have + 1)); done
if ((have < COUNT)); then
  log "corpus incomplete ($have/$COUNT in $CORPUS): running make-corpus.sh"
  "$HERE/make-corpus.sh" "$CORPUS" "$COUNT"
fi
N=${#files[@]}
cat "${files[@]}" >/dev/null   # warm the page cache

TMP=$(mktemp -d /tmp/spotstore-webp.XXXXXX)
if [[ ${KEEP:-0} == 1 ]]; then log "outputs kept in $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi

# timed KIND: one measurement into $TMP/KIND; prints wall milliseconds.
timed() {
  local kind=$1 out=$TMP/$1 t0 t1 size
  rm -rf "$out"; mkdir -p "$out"
  t0=$(date +%s%N)
  case $kind in
    jpeg) "$SPOTSTORE" thumbnail --size 256 --size 1024 --out "$out" "${files[@]}" ;;
    webp) "$SPOTSTORE" thumbnail --size 256 --size 1024 --webp --out "$out" "${files[@]}" ;;
    vips) for size in 1024 256; do
            VIPS_CONCURRENCY=1 vipsthumbnail --size "$size" -o "$out/%s-$size.webp[Q=80]" "${files[@]}"
          done ;;
  esac >"$TMP/$kind.log" 2>&1 || die "$kind failed: $(head -5 "$TMP/$kind.log")"
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000))
}

kinds=(jpeg webp vips)
declare -A times=()
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
log "timing ${kinds[*]}, $RUNS runs, $N photos (load average $LOAD0)"
for ((r = 1; r <= RUNS; r++)); do
  for k in "${kinds[@]}"; do
    ms=$(timed "$k"); times[$k]+="$ms "
    log "run $r $k: $ms ms"
  done
done
for k in webp vips; do   # every photo has both WebP sizes
  for size in 256 1024; do
    n=$(find "$TMP/$k" -name "*-$size.webp" | wc -l)
    ((n == N)) || die "$k wrote $n WebP thumbnails of $size px, expected $N"
  done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
per_photo() { awk -v ms="$1" -v n="$N" 'BEGIN {printf "%.1f", ms / n}'; }
kib() { find "$1" -name "$2" -printf '%s\n' | awk -v n="$N" '{s += $1} END {printf "%.1f", s / n / 1024}'; }

# --- quality: the 1024 px thumbnails against a Lanczos resize of the full decode ----------
"$VENV/bin/python" -c 'import skimage, numpy, PIL' 2>/dev/null ||
  "$ROOT/bin/install-deps" --bench >&2 || die "bin/install-deps --bench (which makes $VENV) failed"
declare -A pairs=()
mkdir -p "$TMP/ref"
for i in $SSIM_PICK; do
  ((i <= N)) || continue
  b=$(printf 'photo_%03d' "$i")
  for k in jpeg webp vips; do
    case $k in jpeg) t=$TMP/jpeg/$b-1024.jpg ;; *) t=$TMP/$k/$b-1024.webp ;; esac
    wh=$(identify -format '%wx%h' "$t")
    ref=$TMP/ref/$b-$wh.png
    [[ -e $ref ]] || MAGICK_THREAD_LIMIT=2 "$CONVERT" "$CORPUS/$b.jpg" -auto-orient -filter Lanczos -resize "$wh!" "$ref"
    pairs[$k]+="$t $ref "
  done
done
ssim() { "$VENV/bin/python" "$HERE/ssim.py" "$1" ${pairs[$2]} | tail -1; }

mkdir -p "$RESULTS"
report=$RESULTS/webp-$(date -u +%Y%m%dT%H%M%SZ).txt
{
  echo "WebP thumbnail bench${SMOKE:+ (smoke: not comparable)} $(date -u +%FT%TZ)  host: $(nproc) cores; $N x $(vipsheader -f width "${files[0]}")x$(vipsheader -f height "${files[0]}") q90 JPEGs ($CORPUS)"
  echo "vips $(vipsthumbnail --vips-version 2>/dev/null | head -1 | awk '{print $2}'); spotstore: $SPOTSTORE"
  echo "load average before timing: $LOAD0; after: $LOAD1"
  echo
  printf '%-56s %10s\n' "ms per photo (median of $RUNS)" ""
  printf '%-56s %10s\n' "spotstore thumbnail --size 256 --size 1024 (JPEG)" "$(per_photo "$(median <<<"${times[jpeg]}")")"
  printf '%-56s %10s\n' "  the same with --webp (JPEG and WebP)" "$(per_photo "$(median <<<"${times[webp]}")")"
  printf '%-56s %10s\n' "vipsthumbnail --size 1024, then 256, to WebP Q=80" "$(per_photo "$(median <<<"${times[vips]}")")"
  echo
  printf '%-40s %10s %10s\n' "KiB per photo" "256 px" "1024 px"
  printf '%-40s %10s %10s\n' "spotstore JPEG q85" "$(kib "$TMP/webp" '*-256.jpg')" "$(kib "$TMP/webp" '*-1024.jpg')"
  printf '%-40s %10s %10s\n' "spotstore WebP q80" "$(kib "$TMP/webp" '*-256.webp')" "$(kib "$TMP/webp" '*-1024.webp')"
  printf '%-40s %10s %10s\n' "vipsthumbnail WebP Q=80" "$(kib "$TMP/vips" '*-256.webp')" "$(kib "$TMP/vips" '*-1024.webp')"
  echo
  echo "quality of the 1024 px thumbnails (SSIM vs ImageMagick Lanczos of the full decode):"
  ssim "spotstore JPEG" jpeg
  ssim "spotstore WebP" webp
  ssim "vipsthumbnail WebP" vips
  echo
  echo "raw wall ms per run:"
  for k in "${kinds[@]}"; do printf '  %-5s %s\n' "$k" "${times[$k]}"; done
} | tee "$report"
log "saved $report"
