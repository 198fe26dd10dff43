#!/usr/bin/env bash
# `pawndex serve` on the masters database: p50/p95 of 100 requests per endpoint, the first page's
# gzipped bytes, start-up time, a 16-client load test of 2,000 mixed requests, classify under 8
# similar requests in flight, and the server's memory. See bench/README.md.
#
#   bash bench/serve.sh                       # DB=/tmp/masters.db, built from ../shared if missing
#   DB=/path/to/masters.db bash bench/serve.sh
#   PAWNDEX=target/release/pawndex bash bench/serve.sh   # skip the build
set -euo pipefail
cd "$(dirname "$0")/.."

DB=${DB:-/tmp/masters.db}
PAWNDEX=${PAWNDEX:-}
if [ -z "$PAWNDEX" ]; then
    cargo build --release --quiet
    PAWNDEX=target/release/pawndex
fi
if [ ! -f "$DB" ]; then
    corpus=(../shared/corpus/masters-*.pgn.zst)
    if [ ! -f "${corpus[0]}" ]; then
        echo "bench/serve.sh: no $DB and no ../shared/corpus/masters-*.pgn.zst; nothing to measure" >&2
        exit 0
    fi
    echo "indexing ${corpus[*]} into $DB" >&2
    "$PAWNDEX" index -q --db "$DB" "${corpus[@]}"
fi

out=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$out"' EXIT
start=$(date +%s.%N)
"$PAWNDEX" serve --db "$DB" --port 0 >"$out/url" 2>"$out/err" &
pid=$!
for _ in $(seq 1 500); do
    [ -s "$out/url" ] && break
    sleep 0.01
done
url=$(head -1 "$out/url")
ready=$(python3 - "$url" "$start" <<'EOF'
import sys, time, urllib.request
url, start = sys.argv[1], float(sys.argv[2])
urllib.request.urlopen(url + "api/info").read()
print(f"{time.time() - start:.2f}")
EOF
)

echo "# pawndex serve on $(basename "$DB"): commit $(git rev-parse --short HEAD), $(date -u +%F), $(nproc) cores"
echo "server ready (URL printed and /api/info answered) ${ready} s after start"
python3 bench/serve_client.py "$url" "$pid"
