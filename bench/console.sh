#!/usr/bin/env bash
# console.sh - the web console's and spot pages' budgets in headless Chromium (bench/console.py):
# the console's own JavaScript and CSS, the requests to open a folder of PHOTOS photos (only
# thumbnails near the screen, and a constant handful of others), and a shared spot page's
# requests (one HTML, its style sheet and icon, its images).
#
#   bench/console.sh
#   SMOKE=1 bench/console.sh   # 120 photos: checks it works
#
# Environment (all optional):
#   SPOTSTORE=path   binary to test (default: swift build -c release --product spotstore)
#   PHOTOS=1000      photos in the folder; PORT=18296; KEEP=1 keeps the temporary directory
# Needs chromium, chromium-driver and Selenium (bin/install-deps --bench installs them).
# Targets: own JavaScript + CSS < 150 KB; folder: fewer thumbnails than tiles, at most 12 other
# requests; spot page: its HTML, style sheet, icon and images only. The report is printed and
# saved to bench/results/console-<UTC time>.txt; exit status 1 when a target is missed (never
# with SMOKE=1).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
die() { printf 'console.sh: %s\n' "$*" >&2; exit 2; }
log() { printf '== %s\n' "$*" >&2; }
. "$HERE/common.sh"
if smoke; then PHOTOS=${PHOTOS:-120}; fi
PHOTOS=${PHOTOS:-1000}; PORT=${PORT:-18296}
python=$ROOT/bench/.venv-browser/bin/python
[[ -x $python ]] && [[ -x /usr/bin/chromium ]] || die "needs chromium and bench/.venv-browser: run bin/install-deps --bench"
use_spotstore
use_workdir

"$SPOTSTORE" users add bench --store "$work/store" >"$work/user.txt" 2>&1 || die "users add failed: $(tail -3 "$work/user.txt")"
token=$(tail -1 "$work/user.txt")
start_spotstore "$PORT" --map-tiles ''
mkdir -p "$RESULTS"
report=$RESULTS/console-$(date -u +%Y%m%dT%H%M%SZ).txt
status=0
"$python" "$HERE/console.py" "http://127.0.0.1:$PORT" "$token" "$ROOT/fixtures/geotagged/paris.jpg" "$PHOTOS" | tee "$report" || status=$?
log "saved $report"
if smoke; then exit 0; fi
exit $status
