#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `pawndex players --search` and `pawndex player NAME` timed (issue 40).
#
#   bash bench/players.sh DB                      # DB: the masters database, or the scale one
#   RUNS=5 PLAYERS="Carlsen,M|Anand,V" SEARCHES="carlsen|an" bash bench/players.sh DB
#   PAWNDEX_BIN=/path/to/pawndex bash bench/players.sh DB   # no build
#
# Per command: RUNS runs (3 by default) after one untimed warm-up, the least and the median wall
# time (`date +%s.%N` around the process) and the largest peak RSS (`/usr/bin/time -v`'s
# "Maximum resident set size"). The profiles are `--format json`, one per name of PLAYERS
# (separated by `|`; default "Carlsen,M", 3,421 games on the masters database, and on a database
# of more than a million games also the player closest to 3,000 games); the searches are
# `--format json` of each text of SEARCHES (separated by `|`). Each line also gives the games the
# profile covers (its `games.all.games`) or the players listed.
# Targets: a profile of a player with about 3,000 games <= 1 s on the masters database, <= 2 s on
# the 4M-game scale database; `players --search` <= 100 ms on both.
set -euo pipefail
db=${1:?usage: bench/players.sh DB}
runs=${RUNS:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${PAWNDEX_BIN:-$root/target/release/pawndex}
if [[ -z ${PAWNDEX_BIN:-} ]]; then
  (cd "$root" && cargo build --release --quiet)
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pawndex-players-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

games=$(sqlite3 "file:$db?mode=ro" "SELECT max(id) FROM games")
if ((games > 1000000)); then target_profile=2.0; else target_profile=1.0; fi
target_search=0.100
echo "# bench/players.sh $(date -u +%FT%TZ) commit $(git -C "$root" rev-parse --short HEAD) cores $(nproc) runs $runs"
echo "# db $db: $games games; binary $bin"

# PLAYERS set and empty: no profile timed (SEARCHES likewise).
players=${PLAYERS-}
if [[ ! -v PLAYERS ]]; then
  players="Carlsen,M"
  if ((games > 1000000)); then
    # The spelling with the number of games closest to 3,000 (as White and as Black), through
    # the name index of schema 6.
    near=$(sqlite3 "file:$db?mode=ro" "SELECT name FROM player_names ORDER BY abs(games - 3000), name LIMIT 1")
    players="$players|$near"
  fi
fi
searches=${SEARCHES-carlsen|Carlsen, M.|kasparov|an|magnus carlsen}

# timed CMD...: RUNS timed runs after a warm-up; prints "least median peak_mib" and keeps
# the last run's output in $tmp/out.
timed() {
  "$@" >"$tmp/out" 2>"$tmp/err" || { echo "failed: $* ($(head -c 300 "$tmp/err"))" >&2; return 1; }
  local walls=() peak=0 rss start end
  for _ in $(seq "$runs"); do
    start=$(date +%s.%N)
    /usr/bin/time -v -o "$tmp/time" "$@" >"$tmp/out" 2>/dev/null
    end=$(date +%s.%N)
    walls+=("$(echo "$end - $start" | bc)")
    rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$tmp/time")
    ((rss > peak)) && peak=$rss
  done
  local sorted
  sorted=$(printf '%s\n' "${walls[@]}" | sort -g)
  printf '%.3f %.3f %d\n' "$(echo "$sorted" | head -1)" \
    "$(echo "$sorted" | sed -n "$(((runs + 1) / 2))p")" "$((peak / 1024))"
}

verdict() { # VALUE TARGET
  if (($(echo "$1 <= $2" | bc))); then echo ok; else echo "over the target"; fi
}

printf '%-34s %9s %8s %8s %8s  %s\n' command covers least_s median_s peak_MiB "target"
while IFS= read -r text; do
  read -r least median peak < <(timed "$bin" players --search "$text" --db "$db" --format json)
  listed=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d=d.get("players", d) if isinstance(d, dict) else d; print(len(d))' "$tmp/out")
  printf '%-34s %9s %8.3f %8.3f %8d  <= %s s %s\n' "players --search '$text'" "$listed pl" \
    "$least" "$median" "$peak" "$target_search" "$(verdict "$median" "$target_search")"
done < <([[ -n $searches ]] && tr '|' '\n' <<<"$searches")
while IFS= read -r name; do
  read -r least median peak < <(timed "$bin" player "$name" --db "$db" --format json)
  covers=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["games"]["all"]["games"])' "$tmp/out")
  printf '%-34s %9s %8.3f %8.3f %8d  <= %s s %s\n' "player '$name'" "$covers g" \
    "$least" "$median" "$peak" "$target_profile" "$(verdict "$median" "$target_profile")"
done < <([[ -n $players ]] && tr '|' '\n' <<<"$players")
