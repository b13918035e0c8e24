#!/usr/bin/env bash
# make-corpus.sh - deterministic corpus of photo-like 12 MP JPEGs for the thumbnail bench.
#
#   bench/make-corpus.sh [DIR=bench/corpus] [COUNT=40]
#   bench/make-corpus.sh --geo [DIR=bench/corpus-geo] [COUNT=40]
#   bench/make-corpus.sh --heic [DIR=bench/corpus-heic] [COUNT=40]
#   bench/make-corpus.sh --geo-heic [DIR=bench/corpus-geo-heic] [COUNT=40]
#   env: SEED=1000  CORPUS_JOBS=$(nproc)  CONVERT=/usr/bin/convert  CORPUS_SIZE=4000x3000
#        PLAIN_CORPUS=bench/corpus (the plain corpus --geo and --heic start from)
#
# Image i (1..COUNT) is DIR/photo_NNN.jpg, CORPUS_SIZE (4000x3000), JPEG quality 90, 4:2:0 chroma
# subsampling: an ImageMagick plasma:fractal background (seed SEED+i), 25
# semi-transparent circles/rectangles (positions from bash $RANDOM seeded with SEED+i)
# and Gaussian noise (attenuate 0.5). ~3.7-4.2 MB each; compresses like a photo.
# ImageMagick runs single-threaded (MAGICK_THREAD_LIMIT=1) so the bytes do not depend
# on the thread count; images are made in parallel (CORPUS_JOBS: not JOBS, which
# bench/thumbnails.sh uses for its list of parallelism levels). A smaller CORPUS_SIZE scales the
# shapes with it (the smoke runs' corpora: bench/smoke.sh).
# EXIF: all files get Make/Model/DateTimeOriginal; photo_001..010 get GPS (cities
# below); photo_003, 007, 011, 012 get Orientation=6 (so the stored 4000x3000 pixels
# display as 3000x4000 and a thumbnailer must rotate them).
# Files that already exist are kept (not regenerated); manifest.csv and MD5SUMS are
# rewritten each run.
# --geo (for bench/ingest.sh): makes the plain corpus in PLAIN_CORPUS first if needed,
# then copies photo_001..COUNT into DIR and writes GPS into every copy with exiftool:
# photo i is at city (i-1) % 10 of the list below, moved (i-1)/10 * (0.0009 deg lat,
# 0.0012 deg lon), i.e. 0..~300 m, so 4 photos per city, 40 geotagged photos in all. Only
# the JPEGs are visible in DIR (the manifest is DIR/.manifest.csv, DIR/.MD5SUMS). The
# pixels, the other EXIF tags and Orientation are those of the plain corpus; the bytes are
# reproducible for a given ImageMagick and exiftool version. Existing copies are kept.
# --heic (for FORMAT=heic bench/thumbnails.sh): makes the plain corpus first if needed, then
# DIR/photo_NNN.heic (default bench/corpus-heic) = `heif-enc -q 50 -t 320` of
# PLAIN_CORPUS/photo_NNN.jpg, as a phone writes them (HEVC, an embedded 320 px thumbnail
# item). heif-enc 1.15 copies the JPEG's EXIF (Make, Model, DateTimeOriginal, GPS,
# Orientation) into the Exif item; the script checks that with exiftool and copies the tags
# with `exiftool -tagsFromFile` if an encoder does not. heif-enc writes no irot/imir: the
# pixels stay 4000x3000 and HEIF readers (libheif, libvips, spotstore) ignore the EXIF
# Orientation, so photos 003/007/011/012 display landscape although their EXIF says 6.
# ~20 s of CPU per image (x265); CORPUS_JOBS in parallel. Existing files are kept.
# --geo-heic (for FORMAT=heic bench/ingest.sh): copies of bench/corpus-heic (made first if
# needed) in DIR (default bench/corpus-geo-heic) with GPS written by exiftool exactly as
# --geo does for the JPEGs (same cities, same offsets); manifest DIR/.manifest.csv.
# Modelled on /work/shared/bench/make-corpus.sh (same seeds, so the
# same bytes for the same ImageMagick version).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CONVERT=${CONVERT:-/usr/bin/convert}   # /usr/local/bin/convert may be a stand-in
SEED=${SEED:-1000}
CORPUS_JOBS=${CORPUS_JOBS:-$(nproc)}
[[ $CORPUS_JOBS =~ ^[1-9][0-9]*$ ]] || { echo "make-corpus: CORPUS_JOBS=$CORPUS_JOBS: expected a number of processes" >&2; exit 2; }
CORPUS_SIZE=${CORPUS_SIZE:-4000x3000}
[[ $CORPUS_SIZE =~ ^([1-9][0-9]*)x([1-9][0-9]*)$ ]] || { echo "make-corpus: CORPUS_SIZE=$CORPUS_SIZE: expected WIDTHxHEIGHT" >&2; exit 2; }
W=${BASH_REMATCH[1]} H=${BASH_REMATCH[2]}
PLAIN_CORPUS=${PLAIN_CORPUS:-$HERE/corpus}
export CORPUS_SIZE PLAIN_CORPUS

CITIES=(
  "Paris 48.8566 2.3522"
  "London 51.5074 -0.1278"
  "NewYork 40.7128 -74.0060"
  "Tokyo 35.6762 139.6503"
  "Sydney -33.8688 151.2093"
  "SaoPaulo -23.5505 -46.6333"
  "CapeTown -33.9249 18.4241"
  "Reykjavik 64.1466 -21.9426"
  "Mumbai 19.0760 72.8777"
  "Anchorage 61.2181 -149.9003"
)
ROTATED=" 3 7 11 12 "

make_one() {  # make_one OUT INDEX
  local OUT=$1 i=$2 f seed k x y r col
  f=$(printf '%s/photo_%03d.jpg' "$OUT" "$i")
  [[ -s $f ]] && return 0
  seed=$((SEED + i))
  RANDOM=$seed
  local -a draw=()
  for k in $(seq 1 25); do
    x=$((RANDOM % W)); y=$((RANDOM % H)); r=$(((50 + RANDOM % 400) * W / 4000))
    col="rgba($((RANDOM % 256)),$((RANDOM % 256)),$((RANDOM % 256)),0.$((3 + RANDOM % 6)))"
    if ((k % 2)); then draw+=(-fill "$col" -draw "circle $x,$y $((x + r)),$y")
    else draw+=(-fill "$col" -draw "rectangle $x,$y $((x + 2 * r)),$((y + r))"); fi
  done
  MAGICK_THREAD_LIMIT=1 "$CONVERT" -seed "$seed" -size "$CORPUS_SIZE" plasma:fractal \
    "${draw[@]}" -attenuate 0.5 +noise Gaussian \
    -sampling-factor 4:2:0 -quality 90 "$f.tmp.jpg"

  local -a tags=(-Make=BenchCam "-Model=Synthetic 12MP"
    "-DateTimeOriginal=$(printf '2023:%02d:%02d %02d:%02d:00' $((1 + i % 12)) $((1 + i % 28)) $((8 + i % 12)) $((i % 60)))")
  if ((i <= ${#CITIES[@]})); then
    local name lat lon
    read -r name lat lon <<<"${CITIES[$((i - 1))]}"
    tags+=("-GPSLatitude=${lat#-}" "-GPSLatitudeRef=$([[ $lat == -* ]] && echo S || echo N)"
           "-GPSLongitude=${lon#-}" "-GPSLongitudeRef=$([[ $lon == -* ]] && echo W || echo E)")
  fi
  [[ $ROTATED == *" $i "* ]] && tags+=("-Orientation#=6")
  exiftool -q -overwrite_original "${tags[@]}" "$f.tmp.jpg"
  touch -d "2023-06-01 12:00:00 UTC" "$f.tmp.jpg"
  mv "$f.tmp.jpg" "$f"
}

if [[ ${1:-} == --one ]]; then  # internal: called by xargs
  SEED=$3; make_one "$2" "$4"; exit 0
fi

geo_of() {  # geo_of INDEX -> "name lat lon" (6 decimals)
  local name lat lon k=$((($1 - 1) / 10))
  read -r name lat lon <<<"${CITIES[$((($1 - 1) % 10))]}"
  awk -v n="$name" -v a="$lat" -v o="$lon" -v k="$k" 'BEGIN {printf "%s %.6f %.6f\n", n, a + k * 0.0009, o + k * 0.0012}'
}

# heic_one SRC.jpg DST.heic: heif-enc -q 50 -t 320, EXIF checked (and copied if missing).
heic_one() {
  local src=$1 dst=$2 tags=(-Make -Model -DateTimeOriginal -GPSLatitude -GPSLongitude -Orientation)
  [[ -s $dst ]] && return 0
  heif-enc -q 50 -t 320 "$src" -o "$dst.tmp.heic" >/dev/null
  if [[ $(exiftool -n -s3 -f "${tags[@]}" "$src") != "$(exiftool -n -s3 -f "${tags[@]}" "$dst.tmp.heic")" ]]; then
    exiftool -q -overwrite_original -tagsFromFile "$src" -exif:all "$dst.tmp.heic"
    [[ $(exiftool -n -s3 -f "${tags[@]}" "$src") == "$(exiftool -n -s3 -f "${tags[@]}" "$dst.tmp.heic")" ]] ||
      { echo "make-corpus: EXIF of $dst differs from $src after -tagsFromFile" >&2; return 1; }
  fi
  touch -d "2023-06-01 12:00:00 UTC" "$dst.tmp.heic"
  mv "$dst.tmp.heic" "$dst"
}
if [[ ${1:-} == --heic-one ]]; then  # internal: called by xargs
  heic_one "$2" "$3"; exit 0
fi

# need_plain COUNT: makes the plain corpus in PLAIN_CORPUS when one of its first COUNT files is missing.
need_plain() {
  local i
  for i in $(seq 1 "$1"); do
    [[ -s $(printf '%s/photo_%03d.jpg' "$PLAIN_CORPUS" "$i") ]] || { "${BASH_SOURCE[0]}" "$PLAIN_CORPUS" "$1"; break; }
  done
}

if [[ ${1:-} == --heic ]]; then
  HEIC_OUT=${2:-$HERE/corpus-heic}
  COUNT=${3:-40}
  [[ $COUNT =~ ^[0-9]+$ ]] && ((COUNT > 0)) || { echo "usage: $0 --heic [DIR] [COUNT]" >&2; exit 2; }
  need_plain "$COUNT"
  missing=()
  command -v heif-enc >/dev/null || missing+=(libheif-examples)
  command -v exiftool >/dev/null || missing+=(libimage-exiftool-perl)
  ((${#missing[@]})) && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >&2
  mkdir -p "$HEIC_OUT"
  rm -f "$HEIC_OUT"/*.tmp.heic
  todo=0
  for i in $(seq 1 "$COUNT"); do [[ -s $(printf '%s/photo_%03d.heic' "$HEIC_OUT" "$i") ]] || todo=$((todo + 1)); done
  if ((todo)); then
    echo "make-corpus: encoding $todo of $COUNT HEICs in $HEIC_OUT with $(heif-enc -h 2>&1 | sed -n 's/.*libheif version: //p' | head -1 | sed 's/^/libheif /') (CORPUS_JOBS=$CORPUS_JOBS; ~20 s of CPU each)" >&2
    for i in $(seq 1 "$COUNT"); do printf '%s/photo_%03d.jpg\0%s/photo_%03d.heic\0' "$PLAIN_CORPUS" "$i" "$HEIC_OUT" "$i"; done |
      xargs -0 -n 2 -P "$CORPUS_JOBS" bash "${BASH_SOURCE[0]}" --heic-one
  fi
  for i in $(seq 1 "$COUNT"); do [[ -s $(printf '%s/photo_%03d.heic' "$HEIC_OUT" "$i") ]] || { echo "make-corpus: photo_$i.heic missing" >&2; exit 1; }; done
  sed 's/\.jpg,/.heic,/' "$PLAIN_CORPUS/manifest.csv" | head -$((COUNT + 1)) >"$HEIC_OUT/manifest.csv"
  (cd "$HEIC_OUT" && md5sum $(seq -f 'photo_%03g.heic' 1 "$COUNT") >MD5SUMS)
  echo "make-corpus: $COUNT HEICs in $HEIC_OUT ($(du -sh "$HEIC_OUT" | cut -f1))" >&2
  exit 0
fi

# geotag EXT BASE OUT COUNT MAKE...: BASE/photo_NNN.EXT copied to OUT with GPS written by
# exiftool (geo_of), a manifest and MD5SUMS; MAKE (a command) makes BASE when a file is missing
geotag() {
  local ext=$1 base=$2 out=$3 count=$4 i f name lat lon o
  shift 4
  for i in $(seq 1 "$count"); do
    [[ -s $(printf '%s/photo_%03d.%s' "$base" "$i" "$ext") ]] || { "$@"; break; }
  done
  command -v exiftool >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y libimage-exiftool-perl >&2
  mkdir -p "$out"
  rm -f "$out"/*.tmp."$ext"
  echo "file,lat,lon,city,orientation" >"$out/.manifest.csv"
  for i in $(seq 1 "$count"); do
    f=$(printf 'photo_%03d.%s' "$i" "$ext")
    read -r name lat lon <<<"$(geo_of "$i")"
    o=1; [[ $ROTATED == *" $i "* ]] && o=6
    echo "$f,$lat,$lon,$name,$o" >>"$out/.manifest.csv"
    [[ -s $out/$f ]] && continue
    cp "$base/$f" "$out/$f.tmp.$ext"
    exiftool -q -overwrite_original \
      "-GPSLatitude=${lat#-}" "-GPSLatitudeRef=$([[ $lat == -* ]] && echo S || echo N)" \
      "-GPSLongitude=${lon#-}" "-GPSLongitudeRef=$([[ $lon == -* ]] && echo W || echo E)" \
      "$out/$f.tmp.$ext"
    touch -d "2023-06-01 12:00:00 UTC" "$out/$f.tmp.$ext"
    mv "$out/$f.tmp.$ext" "$out/$f"
  done
  (cd "$out" && md5sum $(seq -f "photo_%03g.$ext" 1 "$count") >.MD5SUMS)
  echo "make-corpus: $count geotagged files in $out ($(du -sh "$out" | cut -f1))" >&2
}

if [[ ${1:-} == --geo || ${1:-} == --geo-heic ]]; then
  COUNT=${3:-40}
  [[ $COUNT =~ ^[0-9]+$ ]] && ((COUNT > 0)) || { echo "usage: $0 $1 [DIR] [COUNT]" >&2; exit 2; }
  if [[ $1 == --geo ]]; then
    geotag jpg "$PLAIN_CORPUS" "${2:-$HERE/corpus-geo}" "$COUNT" "${BASH_SOURCE[0]}" "$PLAIN_CORPUS" "$COUNT"
  else
    geotag heic "$HERE/corpus-heic" "${2:-$HERE/corpus-geo-heic}" "$COUNT" "${BASH_SOURCE[0]}" --heic "$HERE/corpus-heic" "$COUNT"
  fi
  exit 0
fi

OUT=${1:-$HERE/corpus}
COUNT=${2:-40}
[[ $COUNT =~ ^[0-9]+$ ]] && ((COUNT > 0)) || { echo "usage: $0 [DIR] [COUNT]" >&2; exit 2; }

missing=()
[[ -x $CONVERT ]] || missing+=(imagemagick)
command -v exiftool >/dev/null || missing+=(libimage-exiftool-perl)
if ((${#missing[@]})); then
  echo "make-corpus: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >&2
fi
[[ -x $CONVERT ]] || { echo "make-corpus: need ImageMagick convert at $CONVERT" >&2; exit 1; }

mkdir -p "$OUT"
rm -f "$OUT"/*.tmp.jpg
todo=0
for i in $(seq 1 "$COUNT"); do [[ -s $(printf '%s/photo_%03d.jpg' "$OUT" "$i") ]] || todo=$((todo + 1)); done
if ((todo)); then
  echo "make-corpus: making $todo of $COUNT ${CORPUS_SIZE} images in $OUT (CORPUS_JOBS=$CORPUS_JOBS; ~10-20 s each per core at 4000x3000)" >&2
  export CONVERT
  seq 1 "$COUNT" | xargs -P "$CORPUS_JOBS" -I{} bash "${BASH_SOURCE[0]}" --one "$OUT" "$SEED" {}
fi

{
  echo "file,lat,lon,city,orientation"
  for i in $(seq 1 "$COUNT"); do
    f=$(printf 'photo_%03d.jpg' "$i"); lat=; lon=; name=; o=1
    if ((i <= ${#CITIES[@]})); then read -r name lat lon <<<"${CITIES[$((i - 1))]}"; fi
    [[ $ROTATED == *" $i "* ]] && o=6
    echo "$f,$lat,$lon,$name,$o"
  done
} >"$OUT/manifest.csv"
(cd "$OUT" && md5sum $(seq -f 'photo_%03g.jpg' 1 "$COUNT") >MD5SUMS)
echo "make-corpus: $COUNT files in $OUT ($(du -sh "$OUT" | cut -f1))" >&2
