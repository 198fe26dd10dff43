#!/usr/bin/env bash
# Indexing and query benchmark on the masters corpus (../shared/corpus/masters-*.pgn.zst).
#
#   bash bench/index.sh
#
# Env: KEEP_DB=PATH      keep the database at PATH (default: deleted with the temp dir)
#      PAWNDEX_ARGS=...  extra `pawndex index` flags, e.g. "--threads 2"
#      FLOOR_TARGET=DIR  cargo target dir for the floor tool (default: target/floor)
#      RUNS=N            rounds of floor, index and index --parquet, in turn (default 3)
#      PARQUET=0         skip the `index --parquet` runs
#
# See bench/README.md for what is measured and the targets.
set -euo pipefail
cd "$(dirname "$0")/.."

corpus=../shared/corpus
known_pgn_bytes=268555091 # ../shared/corpus/README.md, all four shards uncompressed

target_floor_ratio=3.0   # issue 26: index <= 3x the replay floor of the same round
target_parquet_ratio=1.5 # issue 26: index --parquet <= 1.5x the floor of the same round
runs=${RUNS:-3}
target_db_ratio=2.0
target_peak_mib=1024
target_query_a_ms=100
target_query_b_ms=10

log() { printf '%s\n' "$*" >&2; }

# --- corpus -----------------------------------------------------------------------------------
shards=()
for i in 1 2 3 4; do
    [[ -f $corpus/masters-$i.pgn.zst ]] && shards+=("$corpus/masters-$i.pgn.zst")
done
if ((${#shards[@]} != 4)); then
    echo "bench/index.sh: skipped: $corpus/masters-{1..4}.pgn.zst not found (need ../shared beside the repo)"
    exit 0
fi

# --- build ------------------------------------------------------------------------------------
log "== building pawndex (release)"
cargo build --release
pawndex=${CARGO_TARGET_DIR:-$PWD/target}/release/pawndex

floor_target=${FLOOR_TARGET:-$PWD/target/floor}
log "== building floor (target dir $floor_target)"
CARGO_TARGET_DIR=$floor_target cargo build --release --manifest-path ../shared/tools/floor/Cargo.toml
floor=$floor_target/release/floor

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pawndex-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# --- uncompressed PGN size (also warms the page cache for both timed runs) --------------------
if command -v zstd >/dev/null; then
    pgn_bytes=0
    for f in "${shards[@]}"; do
        pgn_bytes=$((pgn_bytes + $(zstd -dc "$f" | wc -c)))
    done
    pgn_bytes_src="zstd -dc | wc -c"
else
    pgn_bytes=$known_pgn_bytes
    pgn_bytes_src="corpus README (zstd CLI not found)"
fi

# --- rounds: floor, index, index --parquet, in turn -------------------------------------------
# Each round runs the three back to back, so a ratio compares runs made under the same load; the
# report gives the least and the median over the rounds (of each time and of each ratio).
db=$tmp/bench.db
extra=()
read -r -a extra <<<"${PAWNDEX_ARGS:-}"
: >"$tmp/rounds"
for ((round = 1; round <= runs; round++)); do
    log "== round $round of $runs: floor replay, pawndex index, pawndex index --parquet"
    FLOOR_WORKERS=2 /usr/bin/time -f '%e %M' -o "$tmp/floor.time" "$floor" replay "${shards[@]}" >"$tmp/floor.out"
    read -r floor_wall _ <"$tmp/floor.time"
    rm -f "$db" "$db-wal" "$db-shm"
    rc=0
    /usr/bin/time -f '%e %M' -o "$tmp/index.time" \
        "$pawndex" index --db "$db" "${extra[@]}" "${shards[@]}" 2>"$tmp/index.err" || rc=$?
    if ((rc != 0)); then
        log "pawndex index failed (exit $rc); its stderr ends with:"
        tail -n 20 "$tmp/index.err" >&2
        exit "$rc"
    fi
    read -r wall peak_kib <"$tmp/index.time"
    pq_wall=-
    pq_peak=-
    if [[ ${PARQUET:-1} != 0 ]]; then
        rm -rf "$tmp/parquet"
        /usr/bin/time -f '%e %M' -o "$tmp/parquet.time" \
            "$pawndex" index -q --parquet "$tmp/parquet" "${extra[@]}" "${shards[@]}" 2>"$tmp/parquet.err" || {
            log "pawndex index --parquet failed; its stderr ends with:"
            tail -n 20 "$tmp/parquet.err" >&2
            exit 1
        }
        read -r pq_wall pq_peak <"$tmp/parquet.time"
    fi
    echo "$floor_wall $wall $peak_kib $pq_wall $pq_peak" >>"$tmp/rounds"
    log "   floor ${floor_wall} s, index ${wall} s ($((peak_kib / 1024)) MiB), --parquet ${pq_wall} s"
done
floor_out=$(cat "$tmp/floor.out")
# over COLUMN min|median: over the rounds; ratio COLUMN min|median: of COLUMN / floor, per round
over() { awk -v c="$1" '{ print $c }' "$tmp/rounds" | sort -g | awk -v w="$2" '{ v[NR] = $1 } END { if (w == "min") print v[1]; else print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v c="$1" '{ printf "%.2f\n", $c / $1 }' "$tmp/rounds" | sort -g | awk -v w="$2" '{ v[NR] = $1 } END { if (w == "min") print v[1]; else print v[int((NR + 1) / 2)] }'; }
wall=$(over 2 median)
peak_kib=$(awk '$3 > m { m = $3 } END { print m }' "$tmp/rounds")
rm -rf "$tmp/parquet"

# Summary line: "4 file(s), 403033 games read: 327605 indexed, 75426 duplicates, 2 rejected; 27097130 plies; ..."
# (the progress bar shares stderr, so take the last match; absent with --quiet)
summary=$(tr '\r' '\n' <"$tmp/index.err" | tr -d ',' | grep -E '^[0-9]+ file\(s\), [0-9]+ games read:' | tail -n 1 || true)
summary_field() { # regex with one group -> number, or empty
    sed -nE "s/.*$1.*/\\1/p" <<<"$summary"
}
games_read=$(summary_field '[^0-9]([0-9]+) games read')
indexed=$(summary_field '[^0-9]([0-9]+) indexed')
plies=$(summary_field '[^0-9]([0-9]+) plies')

db_bytes=0
for f in "$db" "$db-wal" "$db-shm"; do
    [[ -f $f ]] && db_bytes=$((db_bytes + $(stat -c %s "$f")))
done

# --- report -----------------------------------------------------------------------------------
# num X: X with thousands separators; per_s N: N / wall; verdict VALUE OP TARGET: ok or MISS
num() { awk -v x="$1" 'BEGIN { s = sprintf("%.0f", x); o = ""; while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) } print s o }'; }
per_s() { if [[ -n $1 ]]; then num "$(awk -v n="$1" -v t="$wall" 'BEGIN { print n / t }')"; else echo "n/a (no summary)"; fi; }
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "ok" : "MISS" }'; }

peak_mib=$(awk -v k="$peak_kib" 'BEGIN { printf "%.0f", k / 1024 }')
db_ratio=$(awk -v d="$db_bytes" -v p="$pgn_bytes" 'BEGIN { printf "%.3f", d / p }')
floor_ratio=$(ratio 2 median)

echo
echo "pawndex index benchmark: 4 shards of $corpus/masters-*.pgn.zst, $(nproc) core(s), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$( [[ -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]] && echo ' (+ uncommitted changes)'); index flags: ${PAWNDEX_ARGS:-(none)}"
echo "summary: ${summary:-(none printed)}"
echo "floor:   $floor_out"
echo
printf '  %-24s %-26s %s\n' "measure" "value" "target"
printf '  %-24s %-26s %s\n' "wall time" "$(over 2 min) s min, $wall s median" "(rounds: $runs; see pawndex / floor)"
printf '  %-24s %s\n' "games read/s" "$(per_s "$games_read")"
printf '  %-24s %s\n' "games indexed/s" "$(per_s "$indexed")"
printf '  %-24s %s\n' "plies/s (indexed games)" "$(per_s "$plies")"
printf '  %-24s %-26s %s\n' "peak memory (RSS)" "$peak_mib MiB" "<= $target_peak_mib MiB   $(verdict "$peak_mib" "$target_peak_mib")"
printf '  %-24s %s\n' "database bytes" "$(num "$db_bytes") (db + -wal + -shm)"
printf '  %-24s %s\n' "PGN bytes (uncompressed)" "$(num "$pgn_bytes") ($pgn_bytes_src)"
printf '  %-24s %-26s %s\n' "database / PGN" "${db_ratio}x" "<= ${target_db_ratio}x   $(verdict "$db_ratio" "$target_db_ratio")"
printf '  %-24s %s\n' "floor wall time" "$(over 1 min) s min, $(over 1 median) s median (FLOOR_WORKERS=2)"
printf '  %-24s %-26s %s\n' "pawndex / floor" "$(ratio 2 min)x min, ${floor_ratio}x median" "<= ${target_floor_ratio}x   $(verdict "$floor_ratio" "$target_floor_ratio")"
if [[ ${PARQUET:-1} != 0 ]]; then
    pq_ratio=$(ratio 4 median)
    printf '  %-24s %s\n' "index --parquet wall" "$(over 4 min) s min, $(over 4 median) s median, peak $(awk '$5 > m { m = $5 } END { printf "%.0f", m / 1024 }' "$tmp/rounds") MiB"
    printf '  %-24s %-26s %s\n' "--parquet / floor" "$(ratio 4 min)x min, ${pq_ratio}x median" "<= ${target_parquet_ratio}x   $(verdict "$pq_ratio" "$target_parquet_ratio")"
fi

# --- the SQLite floor: what SQLite alone takes to insert as many runs ----------------------------
# The same `runs` table (its CREATE statement from the database) in an empty file, filled by one
# INSERT … SELECT from generate_series with values of the same sizes: no parsing, no replay, no
# binding, no other table. A yardstick for the writer (bench/README.md: "what 3x would take"),
# timed with the system's sqlite3 shell (its SQLite may be older than pawndex's).
if command -v sqlite3 >/dev/null; then
    runs_rows=$(sqlite3 -readonly "$db" "SELECT count(*) FROM runs")
    runs_create=$(sqlite3 -readonly "$db" "SELECT sql FROM sqlite_schema WHERE name = 'runs'")
    sdb=$tmp/sqlite-floor.db
    rm -f "$sdb"
    {
        echo "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA page_size = 8192;"
        echo "PRAGMA cache_size = -256000; -- as pawndex sets them"
        echo "$runs_create;"
        echo "INSERT INTO runs SELECT value / 34, value % 34 * 3, value % 34 * 3 + 2,"
        echo "    value % 400000 + 1, value % 450000 + 400001, value % 3, value % 4, value % 5"
        echo "FROM generate_series(1, $runs_rows);"
    } >"$tmp/sqlite-floor.sql"
    if /usr/bin/time -f '%e %U %S' -o "$tmp/sqlite-floor.time" sqlite3 "$sdb" <"$tmp/sqlite-floor.sql" >/dev/null 2>"$tmp/sqlite-floor.err"; then
        read -r s_wall s_user s_sys <"$tmp/sqlite-floor.time"
        printf '  %-24s %s\n' "SQLite floor" "$s_wall s ($(awk -v u="$s_user" -v s="$s_sys" 'BEGIN { printf "%.2f", u + s }') s CPU) to insert $(num "$runs_rows") runs rows, nothing else"
        printf '  %-24s %s\n' "pawndex / (floor + it)" "$(awk -v w="$wall" -v f="$(over 1 median)" -v s="$s_wall" 'BEGIN { printf "%.2f", w / (f + s) }')x median"
    else
        printf '  %-24s %s\n' "SQLite floor" "n/a (the sqlite3 shell has no generate_series?)"
    fi
    rm -f "$sdb" "$sdb-wal" "$sdb-shm"
fi

# --- queries ----------------------------------------------------------------------------------
q_a='SELECT count(DISTINCT game_id) FROM ply_features WHERE white_quart != 0'
q_b='SELECT DISTINCT game_id FROM ply_features WHERE white_pawns = ? AND black_pawns = ?'
q_pick='SELECT white_pawns, black_pawns FROM ply_features WHERE game_id = ? AND ply = 20'

if command -v sqlite3 >/dev/null; then
    sql_tool="sqlite3 CLI $(sqlite3 --version | cut -d' ' -f1), .timer real (1 ms resolution)"
    # sql DB SQL [PARAM...]: run SQL once, rows as "a|b" on stdout
    sql() {
        local db=$1 q=$2 i=0 p
        shift 2
        {
            for p in "$@"; do i=$((i + 1)); echo ".parameter set ?$i $p"; done
            printf '%s;\n' "$q"
        } | sqlite3 -batch "$db"
    }
    # time_sql DB SQL [PARAM...]: best of 3 in one session -> "best_ms row_count first_row"
    time_sql() {
        local db=$1 q=$2 i=0 p
        shift 2
        {
            for p in "$@"; do i=$((i + 1)); echo ".parameter set ?$i $p"; done
            echo ".timer on"
            for i in 1 2 3; do echo ".output $tmp/q.rows$i"; printf '%s;\n' "$q"; done
        } | sqlite3 -batch "$db" >"$tmp/q.timer"
        local best
        best=$(awk '/^Run Time: real/ { ms = $4 * 1000; if (best == "" || ms < best) best = ms } END { print best }' "$tmp/q.timer")
        echo "$best $(wc -l <"$tmp/q.rows1") $(head -n 1 "$tmp/q.rows1")"
    }
else
    sql_tool="python3 sqlite3 module (SQLite $(python3 -c 'import sqlite3; print(sqlite3.sqlite_version)')), perf_counter"
    py_sql='
import sqlite3, sys, time
mode, db, q, params = sys.argv[1], sys.argv[2], sys.argv[3], [int(p) for p in sys.argv[4:]]
con = sqlite3.connect(db)
if mode == "run":
    plan = q.startswith("EXPLAIN QUERY PLAN")
    for row in con.execute(q, params):
        print(row[3] if plan else "|".join(str(v) for v in row))
else:
    best = None
    for _ in range(3):
        t = time.perf_counter()
        rows = con.execute(q, params).fetchall()
        ms = (time.perf_counter() - t) * 1000
        best = ms if best is None else min(best, ms)
    first = "|".join(str(v) for v in rows[0]) if rows else ""
    print(f"{best:.1f} {len(rows)} {first}")
'
    sql() { python3 -c "$py_sql" run "$@"; }
    time_sql() { python3 -c "$py_sql" time "$@"; }
fi

# The structure of ply 20 of game 1000 (or of the first game after it that is that long).
pick_game=1000
pick=$(sql "$db" "$q_pick" "$pick_game" | head -n 1)
if [[ -z $pick ]]; then
    pick_row=$(sql "$db" 'SELECT game_id, white_pawns, black_pawns FROM ply_features WHERE game_id > ? AND ply = 20 ORDER BY game_id LIMIT 1' "$pick_game" | head -n 1)
    pick_game=${pick_row%%|*}
    pick=${pick_row#*|}
fi
IFS='|' read -r white_pawns black_pawns <<<"$pick"

read -r a_ms _ a_count <<<"$(time_sql "$db" "$q_a")"
read -r b_ms b_rows _ <<<"$(time_sql "$db" "$q_b" "$white_pawns" "$black_pawns")"

echo
echo "queries (best of 3; $sql_tool):"
echo "  (a) $q_a"
printf '      %s ms  (target <= %s ms  %s); result %s\n' "$a_ms" "$target_query_a_ms" "$(verdict "$a_ms" "$target_query_a_ms")" "$a_count"
sql "$db" "EXPLAIN QUERY PLAN $q_a" | sed 's/^/      /'
echo "  (b) $q_b"
echo "      with white_pawns = $white_pawns, black_pawns = $black_pawns (ply 20 of game $pick_game)"
printf '      %s ms  (target <= %s ms  %s); %s game(s)\n' "$b_ms" "$target_query_b_ms" "$(verdict "$b_ms" "$target_query_b_ms")" "$b_rows"
sql "$db" "EXPLAIN QUERY PLAN $q_b" "$white_pawns" "$black_pawns" | sed 's/^/      /'

# --- keep -------------------------------------------------------------------------------------
if [[ -n ${KEEP_DB:-} ]]; then
    mkdir -p "$(dirname "$KEEP_DB")"
    rm -f "$KEEP_DB" "$KEEP_DB-wal" "$KEEP_DB-shm"
    for suffix in "" -wal -shm; do
        [[ -f $db$suffix ]] && mv "$db$suffix" "$KEEP_DB$suffix"
    done
    echo
    echo "database kept at $KEEP_DB"
fi
