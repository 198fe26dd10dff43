#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `pawndex annotate` timed and its memory measured against a reference database (issue 41).
#
#   bash bench/annotate.sh DB               # DB: a database of the four masters shards
#   RUNS=5 BULK_RUNS=3 BULK_WARMUP=1 bash bench/annotate.sh DB
#   PAWNDEX_BIN=/path/to/pawndex bash bench/annotate.sh DB   # no build
#   SKIP_4000=1 bash bench/annotate.sh DB                     # without the 4,000 games
#
# The games come from ../shared/corpus/masters-4.pgn.zst (written to a temp dir):
#   one game    from the middle of the shard, a record on whose 40th move it ends (79 or 80
#               plies): the first through 3 named structures or more, and the first with none;
#   1,000 games every 100th record (records 1, 101, 201, ...), as a TWIC issue would be;
#   4,000 games every 25th record, to show that memory does not grow with the input.
# Each is annotated as a whole process (`pawndex annotate FILE --db DB -o OUT.pgn`): the one
# game RUNS times (5) after a warm-up run (the database in the page cache), the 1,000 games
# BULK_RUNS times (3) after BULK_WARMUP warm-up runs (1), the 4,000 once right after them;
# /usr/bin/time gives the wall time and the peak RSS, /proc the anonymous memory.
# Targets: one 40-move game <= 300 ms, 1,000 games <= 30 s, memory bounded by the games in
# flight (the 4,000 games' peak about the 1,000's).
set -euo pipefail
db=${1:?usage: bench/annotate.sh DB}
runs=${RUNS:-5}
bulk_runs=${BULK_RUNS:-3}
bulk_warm=${BULK_WARMUP:-1}
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
forty = [i for i in range(len(recs) // 2, len(recs))
         if re.search(rb"(^|\s)40\.", movetext(recs[i]))
         and not re.search(rb"(^|\s)41\.", movetext(recs[i]))][:40]
tag = lambda r, t: (re.search(rb'\[' + t + rb' "([^"]*)"\]', r) or [b"", b"?"])[1].decode("latin-1")
with open(f"{tmp}/forty.txt", "w") as listing:
    for n, i in enumerate(forty):
        with open(f"{tmp}/forty-{n:02}.pgn", "wb") as f:
            f.write(recs[i])
        print(f"{tmp}/forty-{n:02}.pgn\trecord {i + 1} of masters-4, {tag(recs[i], b'White')} - "
              f"{tag(recs[i], b'Black')}, {tag(recs[i], b'Date')}", file=listing)
with open(f"{tmp}/g1000.pgn", "wb") as f:
    f.writelines(recs[0::100][:1000])
with open(f"{tmp}/g4000.pgn", "wb") as f:
    f.writelines(recs[0::25][:4000])
print(f"# 1,000 games: records 1, 101, ... {100 * (min(1000, len(recs[0::100])) - 1) + 1}; "
      f"4,000 games: records 1, 26, ... {25 * (min(4000, len(recs[0::25])) - 1) + 1} of {len(recs)}")
EOF

echo "# bench/annotate.sh $(date -u +%FT%TZ) commit $(git -C "$root" rev-parse --short HEAD) cores $(nproc)"
echo "# reference $db: $("$bin" info --db "$db" 2>/dev/null | awk '$1 == "games" {print $2}') games"

# One timed run: prints "wall_s peak_rss_kib exit_status peak_anon_kib". Peak RSS counts the
# reference's pages mapped from the file (mmap: shared, reclaimable, at most the database's
# size); the process's own memory is its anonymous part (RssAnon in /proc/PID/status, sampled
# every 0.2 s).
once() {
  local status=0 anon=0 pid kib
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$bin" annotate "$1" --db "$db" -o "$tmp/out.pgn" \
    2>"$tmp/err" &
  local timer=$!
  while kill -0 "$timer" 2>/dev/null; do
    pid=$(pgrep -P "$timer" | head -1 || true)
    kib=$([[ -n $pid ]] && awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [[ -n $kib && $kib -gt $anon ]] && anon=$kib
    sleep 0.2
  done
  wait "$timer" || status=$?
  if [[ $status -ne 0 && $status -ne 1 ]]; then
    echo "bench/annotate.sh: pawndex annotate $1 exited $status:" >&2
    tail -5 "$tmp/err" >&2
    exit 1
  fi
  echo "$(tail -1 "$tmp/time") $status $anon"
}

# label, file, runs, warm-up runs: least and median wall time, the largest peak RSS and
# anonymous memory.
measure() {
  local label=$1 file=$2 n=$3 warm=$4 walls=() peak=0 anon=0 status=0 wall kib a
  for _ in $(seq "$warm"); do once "$file" >/dev/null; done
  for _ in $(seq "$n"); do
    read -r wall kib status a < <(once "$file")
    walls+=("$wall")
    (( kib > peak )) && peak=$kib
    (( a > anon )) && anon=$a
  done
  local sorted least median
  sorted=$(printf '%s\n' "${walls[@]}" | sort -g)
  least=$(echo "$sorted" | head -1)
  median=$(echo "$sorted" | sed -n "$(( (n + 1) / 2 ))p")
  printf '%-16s %3s runs  least %7.3f s  median %7.3f s  peak RSS %6.1f MiB  anon %6.1f MiB  exit %s  %s\n' \
    "$label" "$n" "$least" "$median" "$(echo "$peak / 1024" | bc -l)" \
    "$(echo "$anon / 1024" | bc -l)" "$status" \
    "$(grep -c '^\[Event ' "$file") games, $(wc -c < "$tmp/out.pgn") bytes out"
}

# The one game: the first of the 40-move games (from the middle of the shard) that passes
# through 3 named structures or more (each asks the reference for a form's figures), and the
# first one with none (only unnamed pawns asked about).
named() { "$bin" annotate "$1" --db "$db" --format json --only-changes 2>/dev/null |
  python3 -c 'import json,sys; print(sum(1 for c in json.loads(sys.stdin.readline())["changes"] if c["structure"]))'; }
busy= plain=
while IFS=$'\t' read -r file what; do
  n=$(named "$file")
  if [[ -z $busy && $n -ge 3 ]]; then busy=$file; echo "# one game, $n named changes: $what"; fi
  if [[ -z $plain && $n -eq 0 ]]; then plain=$file; echo "# one game, no named structure: $what"; fi
  [[ -n $busy && -n $plain ]] && break
done < "$tmp/forty.txt"

[[ -n $busy ]] && measure "one game, named" "$busy" "$runs" 1
[[ -n $plain ]] && measure "one game, none" "$plain" "$runs" 1
measure "1,000 games" "$tmp/g1000.pgn" "$bulk_runs" "$bulk_warm"
[[ ${SKIP_4000:-0} == 1 ]] || measure "4,000 games" "$tmp/g4000.pgn" 1 0
