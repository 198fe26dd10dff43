#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `pawndex annotate` timed and its memory measured against a reference database (issue 41).
#
#   bash bench/annotate.sh DB               # DB: a database of the four masters shards
#   RUNS=5 BULK_RUNS=3 bash bench/annotate.sh DB
#   PAWNDEX_BIN=/path/to/pawndex bash bench/annotate.sh DB   # no build
#
# The games come from ../shared/corpus/masters-4.pgn.zst (written to a temp dir):
#   one game    the first record from the middle of the shard on whose 40th move it ends
#               (79 or 80 plies);
#   1,000 games every 100th record (records 1, 101, 201, ...), as a TWIC issue would be;
#   4,000 games every 25th record, to show that memory does not grow with the input.
# Each is annotated as a whole process (`pawndex annotate FILE --db DB -o OUT.pgn`) after one
# warm-up run (the database in the page cache): the one game RUNS times (5), the 1,000 games
# BULK_RUNS times (3), the 4,000 once; /usr/bin/time gives the wall time and the peak RSS.
# Targets: one 40-move game <= 300 ms, 1,000 games <= 30 s, memory bounded by the games in
# flight (the 4,000 games' peak about the 1,000's).
set -euo pipefail
db=${1:?usage: bench/annotate.sh DB}
runs=${RUNS:-5}
bulk_runs=${BULK_RUNS:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
shard=${CORPUS:-$root/../shared/corpus}/masters-4.pgn.zst
[ -f "$shard" ] || { echo "bench/annotate.sh: $shard not found; skipping"; exit 0; }
[ -f "$db" ] || { echo "bench/annotate.sh: no database $db" >&2; exit 1; }
bin=${PAWNDEX_BIN:-$root/target/release/pawndex}
if [[ -z ${PAWNDEX_BIN:-} ]]; then
  (cd "$root" && cargo build --release --quiet)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$shard" "$tmp" <<'EOF'
import re, subprocess, sys
shard, tmp = sys.argv[1], sys.argv[2]
data = subprocess.run(["zstd", "-dc", shard], capture_output=True, check=True).stdout
starts, in_tags, pos = [], False, 0
for line in data.splitlines(keepends=True):
    if line.startswith(b"[Event ") and not in_tags:
        starts.append(pos)
    in_tags = line.startswith(b"[")
    pos += len(line)
recs = [data[s:e] for s, e in zip(starts, starts[1:] + [len(data)])]
def movetext(r):
    return r.split(b"\n\r\n", 1)[-1] if b"\n\r\n" in r else r.split(b"\n\n", 1)[-1]
one = next(i for i in range(len(recs) // 2, len(recs))
           if re.search(rb"(^|\s)40\.", movetext(recs[i]))
           and not re.search(rb"(^|\s)41\.", movetext(recs[i])))
tag = lambda r, t: (re.search(rb'\[' + t + rb' "([^"]*)"\]', r) or [b"", b"?"])[1].decode("latin-1")
with open(f"{tmp}/one.pgn", "wb") as f:
    f.write(recs[one])
with open(f"{tmp}/g1000.pgn", "wb") as f:
    f.writelines(recs[0::100][:1000])
with open(f"{tmp}/g4000.pgn", "wb") as f:
    f.writelines(recs[0::25][:4000])
r = recs[one]
print(f"# one game: record {one + 1} of masters-4, {tag(r, b'White')} - {tag(r, b'Black')}, "
      f"{tag(r, b'Date')}, {tag(r, b'Result')}; {len(r)} bytes")
print(f"# 1,000 games: records 1, 101, ... {100 * (min(1000, len(recs[0::100])) - 1) + 1}; "
      f"4,000 games: records 1, 26, ... {25 * (min(4000, len(recs[0::25])) - 1) + 1} of {len(recs)}")
EOF

echo "# bench/annotate.sh $(date -u +%FT%TZ) commit $(git -C "$root" rev-parse --short HEAD) cores $(nproc)"
echo "# reference $db: $("$bin" info --db "$db" 2>/dev/null | awk '$1 == "games" {print $2}') games"

# One timed run: prints "wall_s peak_kib exit_status".
once() {
  local status=0
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$bin" annotate "$1" --db "$db" -o "$tmp/out.pgn" \
    2>"$tmp/err" || status=$?
  if [[ $status -ne 0 && $status -ne 1 ]]; then
    echo "bench/annotate.sh: pawndex annotate $1 exited $status:" >&2
    tail -5 "$tmp/err" >&2
    exit 1
  fi
  echo "$(tail -1 "$tmp/time") $status"
}

# label, file, runs: a warm-up, then the runs; least and median wall time, the largest peak RSS.
measure() {
  local label=$1 file=$2 n=$3 walls=() peak=0 status=0 wall kib
  once "$file" >/dev/null
  for _ in $(seq "$n"); do
    read -r wall kib status < <(once "$file")
    walls+=("$wall")
    (( kib > peak )) && peak=$kib
  done
  local sorted least median
  sorted=$(printf '%s\n' "${walls[@]}" | sort -g)
  least=$(echo "$sorted" | head -1)
  median=$(echo "$sorted" | sed -n "$(( (n + 1) / 2 ))p")
  printf '%-12s %5s runs  least %7.3f s  median %7.3f s  peak RSS %6.1f MiB  exit %s  %s\n' \
    "$label" "$n" "$least" "$median" "$(echo "$peak / 1024" | bc -l)" "$status" \
    "$(grep -c '^\[Event ' "$file") games, $(wc -c < "$tmp/out.pgn") bytes out"
}

measure "one game" "$tmp/one.pgn" "$runs"
measure "1,000 games" "$tmp/g1000.pgn" "$bulk_runs"
measure "4,000 games" "$tmp/g4000.pgn" 1
