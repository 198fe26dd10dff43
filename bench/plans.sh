#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `pawndex plans` on every named structure form of a database, and the Carlsbad, timed (issue 39).
#
#   bash bench/plans.sh DB            # DB: a database of the four masters shards
#   RUNS=5 bash bench/plans.sh DB
#
# Per form: the games in it, the least and the median wall time of RUNS runs (3 by default)
# of `pawndex plans --structure-name FORM --format json` (all games counted, no sampling),
# and PAWNDEX_TIMINGS' split of the last run (finding and replaying the games, the report). Then the
# slowest form, the Carlsbad, and the first page of GET-like model-game lists are summed up.
# Targets: any named structure <= 1 s on the masters database, the Carlsbad <= 500 ms, any
# form <= 3 s on the 4M-game scale database.
set -euo pipefail
db=${1:?usage: bench/plans.sh DB}
runs=${RUNS:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${PAWNDEX_BIN:-$root/target/release/pawndex}
if [[ -z ${PAWNDEX_BIN:-} ]]; then
  (cd "$root" && cargo build --release --quiet)
fi
echo "# bench/plans.sh $(date -u +%FT%TZ) commit $(git -C "$root" rev-parse --short HEAD) cores $(nproc) runs $runs"
echo "# db $db: $("$bin" info --db "$db" --format json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin).get("games"))') games"
forms=$(sqlite3 "file:$db?mode=ro" "SELECT key FROM structure_names ORDER BY key; SELECT key || '~' FROM structure_names WHERE reversed ORDER BY key;")
printf '%-24s %8s %8s %8s  %s\n' form games least_s median_s "PAWNDEX_TIMINGS of the last run"
worst=0; worst_form=
for form in $forms; do
  times=()
  for _ in $(seq "$runs"); do
    start=$(date +%s.%N)
    split=$(PAWNDEX_TIMINGS=1 "$bin" plans --db "$db" --structure-name "$form" --format json 2>&1 >/tmp/plans-bench.$$.json | grep '^timings: plans' || true)
    end=$(date +%s.%N)
    times+=("$(echo "$end - $start" | bc)")
  done
  games=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["games"])' /tmp/plans-bench.$$.json)
  sorted=$(printf '%s\n' "${times[@]}" | sort -g)
  least=$(echo "$sorted" | head -1)
  median=$(echo "$sorted" | sed -n "$(( (runs + 1) / 2 ))p")
  printf '%-24s %8s %8.3f %8.3f  %s\n' "$form" "$games" "$least" "$median" "${split#timings: plans: }"
  if (( $(echo "$median > $worst" | bc) )); then worst=$median; worst_form=$form; fi
done
rm -f /tmp/plans-bench.$$.json
echo "# slowest form (median): $worst_form $worst s"
