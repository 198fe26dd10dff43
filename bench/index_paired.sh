#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Two pawndex binaries' `pawndex index` of one shard, paired round by round with the replay floor
# (issue 40's "indexing speed stays within 3% of before").
#
#   bash bench/index_paired.sh OLD_BIN NEW_BIN [SHARD.pgn.zst]
#   RUNS=7 FLOOR=/path/to/floor bash bench/index_paired.sh /tmp/old-pawndex target/release/pawndex
#
# SHARD defaults to ../shared/corpus/masters-1.pgn.zst. FLOOR is the floor tool
# (../shared/tools/floor; default target/floor/release/floor, built there when missing). Each
# round (RUNS, 5 by default, after one untimed warm-up round) runs `FLOOR_WORKERS=2 floor replay
# SHARD`, then both binaries' `pawndex index --quiet` into a new database in a temp dir, the old
# one first in odd rounds and the new one first in even rounds, so that neither always runs on a
# warmer machine. Per round: each wall time (`/usr/bin/time`), index / floor of both, new / old;
# then the least and the median of each column. The figure to quote is the median of
# (new / floor) against the median of (old / floor): within 3% is the target.
set -euo pipefail
old=${1:?usage: bench/index_paired.sh OLD_BIN NEW_BIN [SHARD]}
new=${2:?usage: bench/index_paired.sh OLD_BIN NEW_BIN [SHARD]}
root=$(cd "$(dirname "$0")/.." && pwd)
shard=${3:-$root/../shared/corpus/masters-1.pgn.zst}
runs=${RUNS:-5}
if [[ ! -f $shard ]]; then
  echo "bench/index_paired.sh: skipped: $shard not found (need ../shared beside the repo)"
  exit 0
fi
floor=${FLOOR:-$root/target/floor/release/floor}
if [[ ! -x $floor ]]; then
  CARGO_TARGET_DIR=$root/target/floor cargo build --release --quiet \
    --manifest-path "$root/../shared/tools/floor/Cargo.toml"
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pawndex-index-paired.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

wall() { # OUT_FILE CMD...: runs CMD, prints its wall time in seconds
  /usr/bin/time -f '%e' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" \
    || { echo "failed: $* ($(head -c 300 "$tmp/err"))" >&2; exit 1; }
  cat "$tmp/time"
}
index() { # BIN
  rm -f "$tmp/i.db" "$tmp/i.db-wal" "$tmp/i.db-shm"
  wall "$1" index --quiet --db "$tmp/i.db" "$shard"
}

echo "# bench/index_paired.sh $(date -u +%FT%TZ) cores $(nproc) runs $runs shard $(basename "$shard")"
echo "# old $old ($(sha256sum "$old" | cut -c1-12)), new $new ($(sha256sum "$new" | cut -c1-12))"
FLOOR_WORKERS=2 wall "$floor" replay "$shard" >/dev/null
index "$old" >/dev/null
index "$new" >/dev/null
printf '%5s %8s %8s %8s %10s %10s %9s\n' round floor_s old_s new_s old/floor new/floor new/old
: >"$tmp/rounds"
for round in $(seq "$runs"); do
  f=$(FLOOR_WORKERS=2 wall "$floor" replay "$shard")
  if ((round % 2)); then
    o=$(index "$old"); n=$(index "$new")
  else
    n=$(index "$new"); o=$(index "$old")
  fi
  line=$(awk -v f="$f" -v o="$o" -v n="$n" -v r="$round" \
    'BEGIN { printf "%5d %8.2f %8.2f %8.2f %10.3f %10.3f %9.3f", r, f, o, n, o / f, n / f, n / o }')
  echo "$line"
  echo "$line" >>"$tmp/rounds"
done
# least and median of each column
for stat in least median; do
  awk -v stat="$stat" -v runs="$runs" '
    { for (c = 2; c <= 7; c++) v[c, NR] = $c }
    END {
      printf "%5s", stat
      for (c = 2; c <= 7; c++) {
        n = 0; for (r = 1; r <= NR; r++) a[++n] = v[c, r]
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        x = stat == "least" ? a[1] : a[int((n + 1) / 2)]
        printf(c <= 4 ? " %8.2f" : (c == 7 ? " %9.3f" : " %10.3f"), x)
      }
      printf "\n"
    }' "$tmp/rounds"
done
awk '{ o[NR] = $5; n[NR] = $6; p[NR] = $7 }
  END {
    for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) {
      if (o[j] < o[i]) { t = o[i]; o[i] = o[j]; o[j] = t }
      if (n[j] < n[i]) { t = n[i]; n[i] = n[j]; n[j] = t }
      if (p[j] < p[i]) { t = p[i]; p[i] = p[j]; p[j] = t }
    }
    m = int((NR + 1) / 2)
    printf "new/floor median %.3f against old/floor median %.3f: %+.1f%%; new/old of the same round, median %.3f (%+.1f%%); target within +3%%\n",
      n[m], o[m], 100 * (n[m] / o[m] - 1), p[m], 100 * (p[m] - 1)
  }' "$tmp/rounds"
