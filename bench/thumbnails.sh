#!/usr/bin/env bash
# thumbnails.sh - thumbnail speed and quality: `spotstore thumbnail` vs vipsthumbnail.
#
#   bench/thumbnails.sh
#   FORMAT=heic bench/thumbnails.sh
#   SMOKE=1 bench/thumbnails.sh   # 2 photos of 1280x960 (bench/corpus-smoke), 1 run: checks it works
#
# Environment (all optional):
#   FORMAT=jpeg        jpeg: the JPEG corpus (below). heic: the HEIC corpus (bench/corpus-heic,
#                      made by `make-corpus.sh --heic`: heif-enc -q 50 -t 320 of the JPEGs),
#                      measured as described under "FORMAT=heic" below
#   SPOTSTORE=path     binary to test; when set, no `swift build` is run
#                      (default: swift build -c release --product spotstore,
#                      then <repo>/.build/release/spotstore)
#   JOBS="1 2"         parallelism levels J to measure
#   RUNS=3             timed runs per measurement; the median wall time is reported
#   COUNT=40           corpus size; CORPUS=bench/corpus (made by make-corpus.sh if missing;
#                      bench/corpus-heic with FORMAT=heic)
#   SSIM_PICK="1 3 10 20 30"  corpus indices used for the quality check (3 is Orientation 6)
#   VIPS_Q=85          JPEG quality for vipsthumbnail output (spotstore writes q85)
#   ONLY_REFERENCE=1   measure only vipsthumbnail and djpeg (no build, no spotstore)
#   KEEP=1             keep the temporary output directory
#   SMOKE=1            COUNT=2 RUNS=1 SSIM_PICK="1 2", CORPUS=bench/corpus-smoke(-heic) of
#                      1280x960 photos, .build/debug/spotstore when SPOTSTORE is not set
#                      (see bench/common.sh)
#
# Per J and run, side by side (interleaved, same corpus, warm page cache):
#   djpeg     `djpeg -scale 1/8 FILE >/dev/null`, one shell loop per share of the files
#   vips256   `vipsthumbnail --size 256` as ONE process per share (J shares run at once),
#             VIPS_CONCURRENCY=1
#   ours256   `spotstore thumbnail --size 256 --jobs J --out DIR FILE...` (one process)
#   ours256+1024  the same with `--size 256 --size 1024`
# Figures are ms per photo = median wall time / COUNT (with J=2 that is throughput).
# Targets: ours256/vips256 <= 0.80, ours(256+1024)/vips256 <= 1.30.
# Quality: mean SSIM of our and vipsthumbnail's 256 thumbnails against ImageMagick
# (full decode, -auto-orient, -filter Lanczos -resize to the thumbnail's exact size).
# FORMAT=heic: no djpeg; vips256 and vips1024 (`vipsthumbnail --size 1024`, the same way),
# ours256 and ours256+1024 as above. Targets: ours256/vips256 <= 0.80,
# ours(256+1024)/vips1024 <= 1.10. Quality: SSIM of the 256 and the 1024 thumbnails of both
# tools against heif-convert's full decode (irot/imir applied by libheif; the EXIF
# Orientation is not applied, as HEIF readers must not) resized by ImageMagick -filter
# Lanczos to the thumbnail's exact size.
# The report is printed and saved to bench/results/thumbnails-<UTC time>.txt
# (thumbnails-heic-<UTC time>.txt with FORMAT=heic).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
FORMAT=${FORMAT:-jpeg}
SMOKE_SUFFIX=""
if [[ -n ${SMOKE:-} ]]; then COUNT=${COUNT:-2}; RUNS=${RUNS:-1}; SSIM_PICK=${SSIM_PICK:-"1 2"}; SMOKE_SUFFIX=-smoke; fi
case $FORMAT in
  jpeg) EXT=jpg; CORPUS=${CORPUS:-$HERE/corpus$SMOKE_SUFFIX} ;;
  heic) EXT=heic; CORPUS=${CORPUS:-$HERE/corpus$SMOKE_SUFFIX-heic} ;;
  *) printf 'thumbnails.sh: FORMAT=%s: expected jpeg or heic\n' "$FORMAT" >&2; exit 1 ;;
esac
JOBS=${JOBS:-"1 2"}
RUNS=${RUNS:-3}
COUNT=${COUNT:-40}
SSIM_PICK=${SSIM_PICK:-"1 3 10 20 30"}
VIPS_Q=${VIPS_Q:-85}
ONLY_REFERENCE=${ONLY_REFERENCE:-0}
CONVERT=${CONVERT:-/usr/bin/convert}   # /usr/local/bin/convert may be a stand-in
VENV=$HERE/.venv

die() { printf 'thumbnails.sh: %s\n' "$*" >&2; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
log() { printf '.. %s\n' "$*" >&2; }

# --- tools ----------------------------------------------------------------------
missing=()
command -v vipsthumbnail >/dev/null || missing+=(libvips-tools)
if [[ $FORMAT == jpeg ]]; then command -v djpeg >/dev/null || missing+=(libjpeg-turbo-progs)
else command -v heif-convert >/dev/null && command -v heif-enc >/dev/null || missing+=(libheif-examples); fi
[[ -x $CONVERT ]] || missing+=(imagemagick)
command -v exiftool >/dev/null || missing+=(libimage-exiftool-perl)
command -v python3 >/dev/null || missing+=(python3)
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
fi
if [[ $FORMAT == heic ]]; then
  [[ $(vips -l foreign 2>/dev/null) == *"(heifload)"* ]] || die "this libvips has no heifload (Debian's libvips42 8.14 is built with libheif)"
  V_HEIF=$(heif-enc -h 2>&1 | sed -n 's/.*libheif version: *//p' | head -1)
fi

# --- the binary -----------------------------------------------------------------
if [[ $ONLY_REFERENCE != 1 ]]; then
  use_spotstore
fi

# --- corpus -----------------------------------------------------------------------
mapfile -t files < <(seq -f "$CORPUS/photo_%03g.$EXT" 1 "$COUNT")
have=0; for f in "${files[@]}"; do [[ -s $f ]] && have=$((have + 1)); done
if ((have < COUNT)); then
  if [[ $FORMAT == jpeg ]]; then
    log "corpus incomplete ($have/$COUNT in $CORPUS): running make-corpus.sh"
    "$HERE/make-corpus.sh" "$CORPUS" "$COUNT"
  else
    log "HEIC corpus incomplete ($have/$COUNT in $CORPUS): running make-corpus.sh --heic"
    "$HERE/make-corpus.sh" --heic "$CORPUS" "$COUNT"
  fi
fi
N=${#files[@]}
cat "${files[@]}" >/dev/null   # warm the page cache

TMP=$(mktemp -d /tmp/spotstore-bench.XXXXXX)
if [[ ${KEEP:-0} == 1 ]]; then log "outputs kept in $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi

# --- sanity check of the binary on one file -----------------------------------------
if [[ $ONLY_REFERENCE != 1 ]]; then
  mkdir -p "$TMP/check"
  if ! "$SPOTSTORE" thumbnail --size 256 --jobs 1 --out "$TMP/check" "${files[0]}" >"$TMP/check.log" 2>&1; then
    die "'$SPOTSTORE thumbnail --size 256 --jobs 1 --out DIR ${files[0]}' failed:
$(head -20 "$TMP/check.log")"
  fi
  b=$(basename "${files[0]}" ".$EXT")
  [[ -s $TMP/check/$b-256.jpg ]] || die "spotstore thumbnail did not write $TMP/check/$b-256.jpg (got: $(ls "$TMP/check"))"
fi

# --- timing ---------------------------------------------------------------------------
# share J S: the files of share S (0-based) out of J, round-robin.
share() { local j=$1 s=$2 k; for ((k = s; k < N; k += j)); do printf '%s\n' "${files[k]}"; done; }

# vips_cmd SIZE OUT FILE...
vips_cmd() { VIPS_CONCURRENCY=1 vipsthumbnail --size "$1" -o "$2/%s.jpg[Q=$VIPS_Q]" "${@:3}"; }
djpeg_cmd() { local f; shift; for f; do djpeg -scale 1/8 "$f" >/dev/null || return 1; done; }

# timed KIND J: runs one measurement, prints wall milliseconds on stdout.
timed() {
  local kind=$1 j=$2 out=$TMP/out-$1-$2 log=$TMP/log-$1-$2 t0 t1 s p rc=0
  local -a pids=() sh
  rm -rf "$out"; mkdir -p "$out"; : >"$log"
  t0=$(date +%s%N)
  case $kind in
    vips256|vips1024|djpeg)
      for ((s = 0; s < j; s++)); do
        mapfile -t sh < <(share "$j" "$s")
        if [[ $kind == vips* ]]; then vips_cmd "${kind#vips}" "$out" "${sh[@]}" >>"$log" 2>&1 &
        else djpeg_cmd "$out" "${sh[@]}" >>"$log" 2>&1 & fi
        pids+=($!)
      done
      for p in "${pids[@]}"; do wait "$p" || rc=$?; done ;;
    ours256)
      "$SPOTSTORE" thumbnail --size 256 --jobs "$j" --out "$out" "${files[@]}" >>"$log" 2>&1 || rc=$? ;;
    ours1024)
      "$SPOTSTORE" thumbnail --size 256 --size 1024 --jobs "$j" --out "$out" "${files[@]}" >>"$log" 2>&1 || rc=$? ;;
  esac
  t1=$(date +%s%N)
  ((rc == 0)) || die "$kind (J=$j) failed with status $rc:
$(head -20 "$log")"
  [[ -s $log ]] && log "$kind (J=$j) printed: $(head -3 "$log")"
  echo $(((t1 - t0) / 1000000))
}

# check_outputs KIND J: every photo has its thumbnail(s), long edge = size.
check_outputs() {
  local kind=$1 j=$2 out=$TMP/out-$1-$2 f b size t wh w h m
  local -a sizes=(256); [[ $kind == ours1024 ]] && sizes=(256 1024); [[ $kind == vips1024 ]] && sizes=(1024)
  for f in "${files[@]}"; do
    b=$(basename "$f" ".$EXT")
    for size in "${sizes[@]}"; do
      if [[ $kind == vips* ]]; then t=$out/$b.jpg; else t=$out/$b-$size.jpg; fi
      [[ -s $t ]] || die "$kind (J=$j): missing output $t"
    done
  done
  for size in "${sizes[@]}"; do   # dimensions of a landscape and a rotated photo
    for b in photo_001 photo_003; do
      [[ -e $CORPUS/$b.$EXT ]] || continue
      if [[ $kind == vips* ]]; then t=$out/$b.jpg; else t=$out/$b-$size.jpg; fi
      [[ -e $t ]] || continue
      wh=$(identify -format '%w %h' "$t"); read -r w h <<<"$wh"
      m=$((w > h ? w : h))
      ((m == size)) || log "warning: $kind $t is ${w}x$h, expected long edge $size"
      if [[ $FORMAT == jpeg && $b == photo_003 ]] && ((w > h)); then log "warning: $kind $t is ${w}x$h: Orientation 6 not applied?"; fi
      # heif-enc writes no irot: the HEIF is landscape; its EXIF Orientation 6 must not be applied
      if [[ $FORMAT == heic && $b == photo_003 ]] && ((w < h)); then log "warning: $kind $t is ${w}x$h: EXIF Orientation applied to a HEIF without irot?"; fi
    done
  done
  return 0
}

kinds=(djpeg vips256)
[[ $FORMAT == heic ]] && kinds=(vips256 vips1024)
[[ $ONLY_REFERENCE == 1 ]] || kinds+=(ours256 ours1024)
declare -A times=()
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
log "timing ${kinds[*]} for J in $JOBS, $RUNS runs, $N photos (load average $LOAD0)"
for ((r = 1; r <= RUNS; r++)); do
  for j in $JOBS; do
    for k in "${kinds[@]}"; do
      ms=$(timed "$k" "$j")
      times[$k,$j]+="$ms "
      ((r == 1)) && [[ $k != djpeg ]] && check_outputs "$k" "$j"
      log "run $r J=$j $k: $ms ms"
    done
  done
done

LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
per_photo() { awk -v ms="$1" -v n="$N" 'BEGIN {printf "%.1f", ms / n}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

# --- quality (SSIM) ------------------------------------------------------------------------
ensure_venv() {
  "$VENV/bin/python" -c 'import skimage, numpy, PIL' 2>/dev/null ||
    "$ROOT/bin/install-deps" --bench >&2 || die "bin/install-deps --bench (which makes $VENV) failed"
}
ssim_report=""
quality() {
  ensure_venv
  local j0=${JOBS%% *} i f b t wh w h ref
  local -a vpairs=() opairs=()
  mkdir -p "$TMP/ref"
  for i in $SSIM_PICK; do
    f=$(printf '%s/photo_%03d.jpg' "$CORPUS" "$i"); b=$(basename "$f" .jpg)
    ((i <= N)) && [[ -e $f ]] || continue
    for t in "$TMP/out-vips256-$j0/$b.jpg" "$TMP/out-ours256-$j0/$b-256.jpg"; do
      [[ -e $t ]] || continue
      wh=$(identify -format '%wx%h' "$t")
      ref=$TMP/ref/$b-$wh.png
      [[ -e $ref ]] || MAGICK_THREAD_LIMIT=2 "$CONVERT" "$f" -auto-orient -filter Lanczos -resize "$wh!" "$ref"
      if [[ $t == */out-vips256-* ]]; then vpairs+=("$t" "$ref"); else opairs+=("$t" "$ref"); fi
    done
  done
  ((${#vpairs[@]})) && ssim_report+=$("$VENV/bin/python" "$HERE/ssim.py" vips256 "${vpairs[@]}")$'\n'
  ((${#opairs[@]})) && ssim_report+=$("$VENV/bin/python" "$HERE/ssim.py" ours256 "${opairs[@]}")$'\n'
  return 0
}
# quality_heic: the same for the HEIC corpus, 256 and 1024, against heif-convert's full decode
# (libheif applies irot/imir; the EXIF Orientation is not applied, as HEIF readers must not).
quality_heic() {
  ensure_venv
  local j0=${JOBS%% *} i f b t k wh full ref
  local -A pairs=()
  mkdir -p "$TMP/ref"
  for i in $SSIM_PICK; do
    f=$(printf '%s/photo_%03d.heic' "$CORPUS" "$i"); b=$(basename "$f" .heic)
    ((i <= N)) && [[ -e $f ]] || continue
    full=$TMP/ref/$b-full.png
    for k in vips256 ours256 vips1024 ours1024; do
      case $k in
        vips*) t=$TMP/out-$k-$j0/$b.jpg ;;
        ours256) t=$TMP/out-ours256-$j0/$b-256.jpg ;;
        ours1024) t=$TMP/out-ours1024-$j0/$b-1024.jpg ;;
      esac
      [[ -e $t ]] || continue
      [[ -e $full ]] || heif-convert "$f" "$full" >/dev/null || die "heif-convert $f failed"
      wh=$(identify -format '%wx%h' "$t")
      ref=$TMP/ref/$b-$wh.png
      [[ -e $ref ]] || MAGICK_THREAD_LIMIT=2 "$CONVERT" "$full" -filter Lanczos -resize "$wh!" "$ref"
      pairs[$k]+="$t"$'\n'"$ref"$'\n'
    done
  done
  local -a args
  for k in vips256 ours256 vips1024 ours1024; do
    [[ -n ${pairs[$k]:-} ]] || continue
    mapfile -t args <<<"${pairs[$k]%$'\n'}"
    ssim_report+=$("$VENV/bin/python" "$HERE/ssim.py" "$k" "${args[@]}")$'\n'
  done
  return 0
}
log "quality: SSIM on photos $SSIM_PICK"
if [[ $FORMAT == heic ]]; then quality_heic; else quality; fi

# --- report ------------------------------------------------------------------------------
best() { tr ' ' '\n' | grep . | sort -n | head -1; }
declare -A med=() bst=()
for k in "${kinds[@]}"; do for j in $JOBS; do
  med[$k,$j]=$(median <<<"${times[$k,$j]}")
  bst[$k,$j]=$(best <<<"${times[$k,$j]}")
done; done
label() {
  case $1 in
    djpeg) echo "djpeg -scale 1/8 (decode floor)" ;;
    vips256) echo "vipsthumbnail --size 256" ;;
    vips1024) echo "vipsthumbnail --size 1024" ;;
    ours256) echo "spotstore --size 256" ;;
    ours1024) echo "spotstore --size 256 --size 1024" ;;
  esac
}
table() {  # table median|best
  local -n T=$([[ $1 == median ]] && echo med || echo bst)
  local k j
  printf '%-34s' "ms/photo ($1 of $RUNS)"; for j in $JOBS; do printf '%12s' "J=$j"; done; echo
  for k in "${kinds[@]}"; do
    printf '%-34s' "$(label "$k")"
    for j in $JOBS; do printf '%12s' "$(per_photo "${T[$k,$j]}")"; done; echo
  done
  if [[ $ONLY_REFERENCE != 1 && $FORMAT == heic ]]; then
    printf '%-34s' "ours256 / vips256   (<= 0.80)"
    for j in $JOBS; do printf '%12s' "$(ratio "${T[ours256,$j]}" "${T[vips256,$j]}")"; done; echo
    printf '%-34s' "ours256+1024 / vips1024 (<= 1.10)"
    for j in $JOBS; do printf '%12s' "$(ratio "${T[ours1024,$j]}" "${T[vips1024,$j]}")"; done; echo
  elif [[ $ONLY_REFERENCE != 1 ]]; then
    printf '%-34s' "ours256 / vips256   (<= 0.80)"
    for j in $JOBS; do printf '%12s' "$(ratio "${T[ours256,$j]}" "${T[vips256,$j]}")"; done; echo
    printf '%-34s' "ours256+1024 / vips256 (<= 1.30)"
    for j in $JOBS; do printf '%12s' "$(ratio "${T[ours1024,$j]}" "${T[vips256,$j]}")"; done; echo
  fi
}
mkdir -p "$RESULTS"
report=$RESULTS/thumbnails-$([[ $FORMAT == heic ]] && echo heic-)$(date -u +%Y%m%dT%H%M%SZ).txt
{
  echo "thumbnail bench${SMOKE:+ (smoke: not comparable)} $(date -u +%FT%TZ)  host: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
  if [[ $FORMAT == heic ]]; then
    echo "corpus: $N x $(vipsheader -f width "${files[0]}")x$(vipsheader -f height "${files[0]}") HEIC, heif-enc -q 50 -t 320 (libheif $V_HEIF) of the JPEG corpus ($CORPUS); ms per photo = batch wall time / $N"
  else
    echo "corpus: $N x $(vipsheader -f width "${files[0]}")x$(vipsheader -f height "${files[0]}") q90 4:2:0 ($CORPUS); ms per photo = batch wall time / $N"
  fi
  echo "vips $(vipsthumbnail --vips-version 2>/dev/null | head -1 | awk '{print $2}'), VIPS_CONCURRENCY=1, Q=$VIPS_Q; spotstore: ${SPOTSTORE:-(not measured)}"
  echo "load average before timing: $LOAD0; after: $LOAD1 (other work on the machine makes figures noisy)"
  echo
  table median
  echo
  table best
  echo
  echo "raw wall ms per run:"
  for k in "${kinds[@]}"; do for j in $JOBS; do printf '  %-9s J=%s: %s\n' "$k" "$j" "${times[$k,$j]}"; done; done
  echo
  if [[ $FORMAT == heic ]]; then
    echo "quality (SSIM vs ImageMagick Lanczos of heif-convert's full decode, same size; 1.0 = identical):"
  else
    echo "quality (SSIM vs ImageMagick Lanczos of the full decode, same size; 1.0 = identical):"
  fi
  printf '%s' "$ssim_report"
  if [[ $ONLY_REFERENCE != 1 ]]; then
    echo
    fail=0
    for j in $JOBS; do
      awk -v a="${med[ours256,$j]}" -v b="${med[vips256,$j]}" 'BEGIN {exit !(a / b <= 0.80)}' || { echo "MISSED (median): ours256/vips256 > 0.80 at J=$j"; fail=1; }
      if [[ $FORMAT == heic ]]; then
        awk -v a="${med[ours1024,$j]}" -v b="${med[vips1024,$j]}" 'BEGIN {exit !(a / b <= 1.10)}' || { echo "MISSED (median): ours256+1024/vips1024 > 1.10 at J=$j"; fail=1; }
      else
        awk -v a="${med[ours1024,$j]}" -v b="${med[vips256,$j]}" 'BEGIN {exit !(a / b <= 1.30)}' || { echo "MISSED (median): ours256+1024/vips256 > 1.30 at J=$j"; fail=1; }
      fi
    done
    ((fail)) || echo "all speed targets met (median)"
  fi
} | tee "$report"
log "saved $report"
