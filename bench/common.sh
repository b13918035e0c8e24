# Sourced by the benchmarks; they define die() and log() and set ROOT first.

# SMOKE=1 (bench/smoke.sh runs every bench so): a tiny corpus of small photos and a second or
# two of load, to show that the script still runs and prints its figures. The figures are
# not comparable with a full run and are not judged: a missed target does not fail a smoke
# run (a failing tool does). Smoke corpora are bench/corpus-smoke* (1280x960 photos made by
# make-corpus.sh, which reads CORPUS_SIZE and PLAIN_CORPUS). Reports go to RESULTS (default
# bench/results; bench/results/smoke in smoke mode).
smoke() { [[ -n ${SMOKE:-} ]]; }
if smoke; then export CORPUS_SIZE=${CORPUS_SIZE:-1280x960} PLAIN_CORPUS=${PLAIN_CORPUS:-$ROOT/bench/corpus-smoke}; fi
RESULTS=${RESULTS:-$ROOT/bench/results$(if smoke; then echo /smoke; fi)}
# A debug build on a busy machine can take more than serve's --decode-time-limit (10 s) to
# make a photo's thumbnails; smoke runs time nothing, so their servers get longer.
SMOKE_SERVE_ARGS=()
if smoke; then SMOKE_SERVE_ARGS=(--decode-time-limit 60s); fi

# `use_spotstore`: keeps SPOTSTORE when set, else builds the release binary and points
# SPOTSTORE at it (in smoke mode: .build/debug/spotstore, else .build/release/spotstore, and
# no build); dies when there is no executable there.
use_spotstore() {
  if [[ -z ${SPOTSTORE:-} ]] && smoke; then
    local candidate
    for candidate in "$ROOT/.build/debug/spotstore" "$ROOT/.build/release/spotstore"; do
      [[ -x $candidate ]] && { SPOTSTORE=$candidate; break; }
    done
    [[ -n ${SPOTSTORE:-} ]] || die "SMOKE=1 builds nothing and there is no .build/debug/spotstore nor .build/release/spotstore: run swift build --product spotstore, or set SPOTSTORE=path"
  fi
  if [[ -z ${SPOTSTORE:-} ]]; then
    command -v swift >/dev/null || die "swift not found: install the toolchain or set SPOTSTORE=path/to/spotstore"
    log "swift build -c release --product spotstore (a clean release build takes ~9 min)"
    (cd "$ROOT" && swift build -c release --product spotstore) >&2 ||
      die "swift build -c release --product spotstore failed (set SPOTSTORE=path to use another binary)"
    SPOTSTORE=$ROOT/.build/release/spotstore
  fi
  [[ -x $SPOTSTORE ]] || die "no executable at SPOTSTORE=$SPOTSTORE"
}

# `start_nginx DIR PORT [DIRECTIVES]`
# writes a config under DIR (files and WebDAV PUT/DELETE/MKCOL under DIR/www, logs in
# DIR/logs; DIRECTIVES go into its http block), starts nginx in the foreground, sets
# nginx_pid and waits until it answers. Needs $NGINX (the binary).
start_nginx() {
  local dir=$1 port=$2 directives=${3:-}
  mkdir -p "$dir"/{www,logs,body,proxy,fastcgi,uwsgi,scgi}
  local user_line=""; ((EUID == 0)) && user_line="user root root;"   # workers must write $dir
  cat >"$dir/nginx.conf" <<EOF
# written by bench/common.sh
daemon off;
$user_line
worker_processes auto;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log $dir/logs/access.log;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  client_max_body_size 0;
  sendfile on;
  $directives
  server {
    listen 127.0.0.1:$port;
    root $dir/www;
    location / {
      dav_methods PUT DELETE MKCOL;
      create_full_put_path on;
      dav_access user:rw group:r all:r;
    }
  }
}
EOF
  "$NGINX" -t -q -p "$dir" -c "$dir/nginx.conf" -e "$dir/logs/error.log" ||
    die "nginx -t failed: $(tail -5 "$dir/logs/error.log")"
  "$NGINX" -p "$dir" -c "$dir/nginx.conf" -e "$dir/logs/error.log" &
  nginx_pid=$!
  local ok=0
  for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" && { ok=1; break; }
    kill -0 "$nginx_pid" 2>/dev/null || break; sleep 0.1
  done
  ((ok)) || die "nginx did not start on 127.0.0.1:$port: $(tail -5 "$dir/logs/error.log")"
}

# `imagemagick`: prints the path of ImageMagick's convert (the first `convert` on PATH may be
# another program of that name); fails when there is none.
imagemagick() {
  local candidate
  for candidate in "$(command -v convert)" /usr/bin/convert; do
    [[ -x $candidate ]] && "$candidate" -version 2>/dev/null | grep -q ImageMagick && { echo "$candidate"; return 0; }
  done
  return 1
}

# `write_mix_plan FILE`: the request lines of the mix (load.sh's format: `GET TARGET` or
# `PUT TARGET SIZE`) for the weights in $MIX, from the targets in $TMP/ours-thumb.txt and
# $TMP/ours-media.txt ($PHOTOS of each) and uploads of $MIX_PUT_KB KiB into bucket files.
write_mix_plan() {
  local plan=$1 entry kind weight w
  : >"$plan"
  for entry in $MIX; do
    kind=${entry%%=*} weight=${entry#*=}
    for ((w = 0; w < weight; w++)); do
      case $kind in
        thumb) sed -n "$((w % PHOTOS + 1))p" "$TMP/ours-thumb.txt" | sed 's/^/GET /' ;;
        thumb1024) sed -n "$((w % PHOTOS + 1))p" "$TMP/ours-thumb.txt" | sed 's/size=256$/size=1024/; s/^/GET /' ;;
        media) sed -n "$((w % PHOTOS + 1))p" "$TMP/ours-media.txt" | sed 's/^/GET /' ;;
        meta) sed -n "$((w % PHOTOS + 1))p" "$TMP/ours-media.txt" | sed 's/?alt=media$//; s/^/GET /' ;;
        list) if ((w % 2)); then echo "GET /v0/b/photos/o?prefix=load%2F&delimiter=%2F"; else echo "GET /v0/b/photos/o?delimiter=%2F"; fi ;;
        put) echo "PUT /v0/b/files/o/mix- $((MIX_PUT_KB * 1024))" ;;
        *) die "unknown kind '$kind' in MIX (thumb, thumb1024, media, meta, list, put)" ;;
      esac
    done >>"$plan"
  done
}

# `use_test_services`: the test services (PostgreSQL, the S3 server) described by
# $SPOTSTORE_TEST_SERVICES_ENV (default .build/test-services.env), started with
# `bin/test-services start` when none run (they stay running), their environment sourced.
use_test_services() {
  export SPOTSTORE_TEST_SERVICES_ENV=${SPOTSTORE_TEST_SERVICES_ENV:-$ROOT/.build/test-services.env}
  if ! "$ROOT/bin/test-services" status >/dev/null 2>&1; then
    log "bin/test-services start (they stay running afterwards; bin/test-services stop ends them)"
    "$ROOT/bin/test-services" start >&2 || die "bin/test-services start failed"
  fi
  # shellcheck disable=SC1090
  . "$SPOTSTORE_TEST_SERVICES_ENV"
}

# `use_workdir`: sets `work` to a new temporary directory, removed on exit (kept and named
# when KEEP is set), stopping the server `start_spotstore` started first.
use_workdir() {
  work=$(mktemp -d)
  server_pid=""
  trap 'stop_workdir' EXIT
}
stop_workdir() {
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  [[ -n ${KEEP:-} ]] && log "kept $work" || rm -rf "$work"
}

# `start_spotstore PORT [SERVE ARGS...]`: starts `$SPOTSTORE serve --store $work/store` on
# 127.0.0.1:PORT (log in $work/server.log), sets server_pid and waits until /healthz answers.
start_spotstore() {
  local port=$1
  shift
  "$SPOTSTORE" serve --store "$work/store" --port "$port" --log-level warning "${SMOKE_SERVE_ARGS[@]}" "$@" >"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || die "the server did not start; see $work/server.log"
}
