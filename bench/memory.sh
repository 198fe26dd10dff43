#!/usr/bin/env bash
# Peak memory of `pawndex index` against input size: one masters shard, all four, and a ~2 GB
# stream (the four shards decompressed REPEAT times, with --keep-duplicates so every game is
# really written). Memory must not grow with the input size; what may grow is the in-memory map
# of distinct pawn structures and game hashes, bounded by the distinct data, not the bytes read.
#
#   bash bench/memory.sh            # REPEAT=8 (about 2.1 GB of PGN through stdin)
#   REPEAT=2 bash bench/memory.sh   # quicker
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=../shared/corpus
shards=("$corpus"/masters-{1,2,3,4}.pgn.zst)
for f in "${shards[@]}"; do
  [ -f "$f" ] || { echo "bench/memory.sh: $f not found; skipping"; exit 0; }
done
command -v zstd >/dev/null || { echo "bench/memory.sh: needs the zstd command; skipping"; exit 0; }
repeat=${REPEAT:-8}
cargo build --release --quiet
bin=target/release/pawndex
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

measure() { # label, then the command; prints label, peak RSS MiB, wall s
  local label=$1; shift
  /usr/bin/time -f '%M %e' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || {
    echo "failed: $label"; tail -5 "$tmp/err"; exit 1; }
  read -r kb secs < "$tmp/time"
  printf '%-34s peak RSS %6.0f MiB   wall %7.1f s\n' "$label" "$(echo "$kb/1024" | bc -l)" "$secs"
}

echo "pawndex index peak memory ($(git rev-parse --short HEAD), $(nproc) cores)"
rm -f "$tmp"/a.db*; measure "1 shard (67 MB PGN)" "$bin" index --db "$tmp/a.db" "${shards[0]}"
rm -f "$tmp"/b.db*; measure "4 shards (269 MB PGN)" "$bin" index --db "$tmp/b.db" "${shards[@]}"
rm -f "$tmp"/a.db* "$tmp"/b.db*
bytes=$((268555091 * repeat))
rm -f "$tmp"/c.db*
measure "$repeat x 4 shards via stdin ($((bytes / 1000000)) MB)" bash -c \
  "for i in \$(seq $repeat); do zstd -dcq ${shards[*]}; done | $bin index --keep-duplicates --db $tmp/c.db -"
ls -l "$tmp"/c.db | awk '{printf "database of the %s MB run: %.0f MB\n", '"$((bytes / 1000000))"', $5/1e6}'
