#!/usr/bin/env bash
# Scale benchmark (issue 9): index, append to and query a corpus ten times the masters.
#
#   bash bench/scale.sh                  # the first run also makes the corpus (a few minutes)
#   SKIP_INDEX=1 bash bench/scale.sh     # reuse $SCALE_DIR/scale.db: append and queries only
#   MASTERS_US_PER_PLY=0.7 bash bench/scale.sh   # enables the time-per-ply verdict
#
# Env: COPIES=N        scalegen copies of each masters game (default 10: ~4.0M games, 3.0 GB PGN)
#      SEED=N          scalegen seed (default 20261122)
#      SCALE_DIR=DIR   corpus, append file and databases (default /tmp/pawndex-scale; keep it
#                      outside the repository: the corpus is ~630 MB, the database a few GB)
#      KEEP=0          delete scale.db at the end (default 1: keep it for SKIP_INDEX=1; the append
#                      databases, copies of it, are always deleted)
#      SKIP_INDEX=1    reuse $SCALE_DIR/scale.db from an earlier run; no corpus, floor or index run
#      PAWNDEX=PATH    use this binary instead of `cargo build --release`
#      MASTERS_US_PER_PLY=X  µs per ply of bench/index.sh on this machine (1e6 / its plies/s)
#      TOOLS_TARGET=DIR      cargo target dir for scalegen (default: target/tools)
#      FLOOR_TARGET=DIR      cargo target dir for floor (default: target/floor, as bench/index.sh)
#
# See bench/README.md for what is measured and the targets.
set -euo pipefail
# Paths given relative to the caller's directory, before moving to the repository root.
[[ -n ${PAWNDEX:-} ]] && PAWNDEX=$(realpath -m -- "$PAWNDEX")
SCALE_DIR=$(realpath -m -- "${SCALE_DIR:-/tmp/pawndex-scale}")
cd "$(dirname "$0")/.."

corpus=../shared/corpus
copies=${COPIES:-10}
seed=${SEED:-20261122}
scale_dir=$SCALE_DIR
keep=${KEEP:-1}
skip_index=${SKIP_INDEX:-0}

append_games=4742    # a TWIC issue
append_seed=9004742  # fixed, so the append file is reused whatever SEED is

target_peak_mib=1024
target_db_ratio=2.0
target_ply_factor=1.25   # x the masters µs/ply
target_append_factor=3   # append <= 3x fresh + 1 s (opening a large database)
target_append_open_s=1
target_query_s=5

log() { printf '%s\n' "$*" >&2; }
die() { log "bench/scale.sh: $*"; exit 1; }

# --- inputs -----------------------------------------------------------------------------------
shards=()
for i in 1 2 3 4; do
    [[ -f $corpus/masters-$i.pgn.zst ]] && shards+=("$corpus/masters-$i.pgn.zst")
done
if ((${#shards[@]} != 4)) || [[ ! -d ../shared/tools/scalegen || ! -d ../shared/tools/floor ]]; then
    echo "bench/scale.sh: skipped: ../shared (masters-{1..4}.pgn.zst, tools/scalegen, tools/floor) not found beside the repo"
    exit 0
fi
if ! command -v zstd >/dev/null; then
    echo "bench/scale.sh: skipped: needs the zstd command"
    exit 0
fi
[[ $copies =~ ^[1-9][0-9]*$ && $seed =~ ^[0-9]+$ ]] || die "COPIES and SEED must be whole numbers"
(((seed | 1) != (append_seed | 1))) || die "SEED=$seed draws the same random moves as the append file; pick another"

mkdir -p "$scale_dir"
corpus_file=$scale_dir/scale-$copies-$seed.pgn.zst
bytes_file=$scale_dir/scale-$copies-$seed.pgn.bytes  # cached uncompressed size
append_file=$scale_dir/append-$append_games.pgn
scale_db=$scale_dir/scale.db
scale_db_corpus=$scale_db.corpus  # written after a complete index run: which corpus it holds
fresh_db=$scale_dir/append-fresh.db
append_db=$scale_dir/append.db

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pawndex-scale.XXXXXX")
# The append databases are not reusable (a second append would find only duplicates): always go.
trap 'rm -rf "$tmp" "$fresh_db" "$fresh_db-wal" "$fresh_db-shm" "$append_db" "$append_db-wal" "$append_db-shm"' EXIT

# --- builds -----------------------------------------------------------------------------------
if [[ -n ${PAWNDEX:-} ]]; then
    pawndex=$PAWNDEX
    [[ -x $pawndex ]] || die "PAWNDEX=$pawndex is not an executable"
else
    log "== building pawndex (release)"
    cargo build --release
    pawndex=${CARGO_TARGET_DIR:-$PWD/target}/release/pawndex
fi

scalegen=
build_scalegen() { # on first use only: with SKIP_INDEX=1 and a cached append file it is not needed
    [[ -n $scalegen ]] && return
    local target=${TOOLS_TARGET:-$PWD/target/tools}
    log "== building scalegen (target dir $target)"
    CARGO_TARGET_DIR=$target cargo build --release --quiet --manifest-path ../shared/tools/scalegen/Cargo.toml
    scalegen=$target/release/scalegen
}

# --- helpers ----------------------------------------------------------------------------------
# A game starts at an "[Event " line that opens the file or follows a blank line.
game_start='/^\[Event / && (NR == 1 || prev ~ /^\r?$/)'
first_games() { awk -v n="$1" "$game_start"' { if (++games > n) exit } { print; prev = $0 }'; }
count_games() { awk "$game_start"' { games++ } { prev = $0 } END { print games + 0 }' "$1"; }

db_bytes() { # DB -> bytes of DB, DB-wal and DB-shm
    local n=0 f
    for f in "$1" "$1-wal" "$1-shm"; do
        [[ -f $f ]] && n=$((n + $(stat -c %s "$f")))
    done
    echo "$n"
}

# index_run NAME DB FILE...: `pawndex index --db DB FILE...` under /usr/bin/time; sets run_wall,
# run_peak_mib and run_summary (the end summary line of its stderr)
index_run() {
    local name=$1 db=$2 rc=0 peak_kib
    shift 2
    log "== $name: pawndex index --db $db $*"
    /usr/bin/time -f '%e %M' -o "$tmp/$name.time" \
        "$pawndex" index --db "$db" "$@" 2>"$tmp/$name.err" || rc=$?
    if ((rc != 0)); then
        log "pawndex index failed (exit $rc); its stderr ends with:"
        tail -n 20 "$tmp/$name.err" >&2
        exit "$rc"
    fi
    read -r run_wall peak_kib <"$tmp/$name.time"
    run_peak_mib=$(awk -v k="$peak_kib" 'BEGIN { printf "%.0f", k / 1024 }')
    # "1 file(s), 4742 games read: 4742 indexed, 0 duplicates, 0 rejected; 412345 plies; ..."
    # (the progress bar shares stderr, so take the last match)
    run_summary=$(tr '\r' '\n' <"$tmp/$name.err" | tr -d ',' | grep -E '^[0-9]+ file\(s\), [0-9]+ games read:' | tail -n 1 || true)
    log "   $run_wall s, $run_peak_mib MiB; ${run_summary:-(no summary)}"
}
summary_field() { # SUMMARY REGEX-with-one-group -> number, or empty
    sed -nE "s/.*$2.*/\\1/p" <<<"$1"
}

# best_of_3 NAME CMD...: run CMD three times under /usr/bin/time; sets best_s ("" if it failed),
# runs_s and run_err; its stdout stays in $tmp/NAME.out
best_of_3() {
    local name=$1 i w rc
    shift
    best_s="" runs_s="" run_err=""
    for i in 1 2 3; do
        rc=0
        /usr/bin/time -f '%e' -o "$tmp/$name.time" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
        if ((rc != 0)); then
            best_s=""
            run_err="failed (exit $rc): $(grep -v '^Command exited' "$tmp/$name.err" | tail -n 1)"
            log "   $run_err"
            return
        fi
        w=$(tail -n 1 "$tmp/$name.time")
        runs_s+="${runs_s:+ }$w"
        best_s=$(awk -v a="$best_s" -v b="$w" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }')
    done
    log "   runs $runs_s s"
}

# num X: X with thousands separators; verdict VALUE TARGET: ok, MISS, or n/a without a value
num() { awk -v x="$1" 'BEGIN { s = sprintf("%.0f", x); o = ""; while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) } print s o }'; }
verdict() { if [[ -z $1 || -z $2 ]]; then echo "n/a"; else awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "ok" : "MISS" }'; fi; }
# calc FORMAT A OP B [C]: A/B, or A*B+C when OP is '*', printed with FORMAT
calc() { awk -v f="$1" -v a="$2" -v op="$3" -v b="$4" -v c="${5:-0}" 'BEGIN { printf f, (op == "/" ? a / b : a * b) + c }'; }
# show VALUE TEXT FALLBACK: TEXT when VALUE is set, else FALLBACK
show() { if [[ -n $1 ]]; then echo "$2"; else echo "$3"; fi; }

# --- scale corpus -----------------------------------------------------------------------------
if [[ $skip_index == 1 ]]; then
    [[ -f $scale_db && -f $scale_db_corpus ]] ||
        die "SKIP_INDEX=1 needs a complete $scale_db from an earlier run (none found)"
    corpus_file=$(cat "$scale_db_corpus")
    bytes_file=${corpus_file%.pgn.zst}.pgn.bytes
    log "== SKIP_INDEX=1: reusing $scale_db (built from $(basename "$corpus_file"))"
else
    if [[ -f $corpus_file ]]; then
        log "== reusing $corpus_file"
    else
        build_scalegen
        log "== making $corpus_file (scalegen $copies $seed, a few minutes)"
        start=$SECONDS
        "$scalegen" "$copies" "$seed" "${shards[@]}" | zstd -q -T2 >"$corpus_file.partial"
        mv "$corpus_file.partial" "$corpus_file"
        rm -f "$bytes_file"
        log "   $((SECONDS - start)) s, $(num "$(stat -c %s "$corpus_file")") bytes"
    fi
    if [[ ! -s $bytes_file ]]; then
        log "== measuring the uncompressed PGN (zstd -dc | wc -c)"
        zstd -dc "$corpus_file" | wc -c | tr -d ' ' >"$bytes_file.partial"
        mv "$bytes_file.partial" "$bytes_file"
    fi
fi
pgn_bytes=
[[ -s $bytes_file ]] && pgn_bytes=$(cat "$bytes_file")

# --- floor and index --------------------------------------------------------------------------
wall='' peak_mib='' summary='' games_read='' indexed='' plies='' floor_wall='' floor_out=''
if [[ $skip_index != 1 ]]; then
    floor_target=${FLOOR_TARGET:-$PWD/target/floor}
    log "== building floor (target dir $floor_target)"
    CARGO_TARGET_DIR=$floor_target cargo build --release --quiet --manifest-path ../shared/tools/floor/Cargo.toml
    floor=$floor_target/release/floor

    cat "$corpus_file" >/dev/null # into the page cache, so that floor and pawndex read it alike
    log "== floor: FLOOR_WORKERS=2 floor replay $(basename "$corpus_file")"
    FLOOR_WORKERS=2 /usr/bin/time -f '%e %M' -o "$tmp/floor.time" "$floor" replay "$corpus_file" >"$tmp/floor.out"
    read -r floor_wall _ <"$tmp/floor.time"
    floor_out=$(cat "$tmp/floor.out")
    log "   $floor_wall s; $floor_out"

    rm -f "$scale_db" "$scale_db-wal" "$scale_db-shm" "$scale_db_corpus"
    index_run index "$scale_db" "$corpus_file"
    wall=$run_wall peak_mib=$run_peak_mib summary=$run_summary
    games_read=$(summary_field "$summary" '[^0-9]([0-9]+) games read')
    indexed=$(summary_field "$summary" '[^0-9]([0-9]+) indexed')
    plies=$(summary_field "$summary" '[^0-9]([0-9]+) plies')
    echo "$corpus_file" >"$scale_db_corpus"
fi
scale_db_bytes=$(db_bytes "$scale_db")

# --- append -----------------------------------------------------------------------------------
if [[ -f $append_file ]]; then
    log "== reusing $append_file"
else
    build_scalegen
    log "== making $append_file (the first $append_games games of scalegen 1 $append_seed masters-1)"
    # awk stops reading after the last game, so scalegen ends on a broken pipe: ignore its
    # status and check the game count instead.
    { "$scalegen" 1 "$append_seed" "$corpus/masters-1.pgn.zst" 2>"$tmp/scalegen.err" || true; } |
        first_games "$append_games" >"$append_file.partial"
    n=$(count_games "$append_file.partial")
    if ((n != append_games)); then
        tail -n 5 "$tmp/scalegen.err" >&2
        die "$append_file.partial holds $n games, not $append_games"
    fi
    mv "$append_file.partial" "$append_file"
fi
append_pgn_bytes=$(stat -c %s "$append_file")

rm -f "$fresh_db" "$fresh_db-wal" "$fresh_db-shm"
index_run fresh "$fresh_db" "$append_file"
fresh_wall=$run_wall fresh_peak_mib=$run_peak_mib fresh_summary=$run_summary
rm -f "$fresh_db" "$fresh_db-wal" "$fresh_db-shm"

avail=$(df -B1 --output=avail "$scale_dir" | tail -n 1 | tr -d ' ')
((avail > scale_db_bytes + (1 << 30))) ||
    die "not enough space in $scale_dir to copy scale.db ($(num "$scale_db_bytes") bytes, $(num "$avail") free)"
log "== copying scale.db to append.db ($(num "$scale_db_bytes") bytes)"
rm -f "$append_db" "$append_db-wal" "$append_db-shm"
cp "$scale_db" "$append_db"
[[ -f $scale_db-wal ]] && cp "$scale_db-wal" "$append_db-wal"
# The copy's pages are still dirty in the page cache: the append's first checkpoint (an fsync)
# would write back all 6 GB and count it as the append's time (2.5 s instead of 0.8 s).
sync
index_run append "$append_db" "$append_file"
append_wall=$run_wall append_peak_mib=$run_peak_mib append_summary=$run_summary
rm -f "$append_db" "$append_db-wal" "$append_db-shm"

# --- queries ----------------------------------------------------------------------------------
log "== pawndex query white-quart --count (best of 3)"
best_of_3 quart "$pawndex" query white-quart --count --db "$scale_db"
quart_s=$best_s quart_runs=$runs_s
quart_result=${run_err:-$(head -n 1 "$tmp/quart.out") positions}

# The CSV (a few rows) goes to a temp file rather than /dev/null so that the report can show it.
log "== pawndex stats --by white_islands (best of 3)"
best_of_3 islands "$pawndex" stats --by white_islands --db "$scale_db" -o "$tmp/islands.csv"
islands_s=$best_s islands_runs=$runs_s
islands_err=$run_err

# --- report -----------------------------------------------------------------------------------
db_ratio='' us_per_ply='' ply_target='' floor_ratio=''
[[ -n $pgn_bytes ]] && db_ratio=$(calc %.3f "$scale_db_bytes" / "$pgn_bytes")
[[ -n $plies && -n $wall ]] && us_per_ply=$(awk -v w="$wall" -v p="$plies" 'BEGIN { printf "%.3f", w * 1e6 / p }')
[[ -n ${MASTERS_US_PER_PLY:-} ]] && ply_target=$(calc %.3f "$MASTERS_US_PER_PLY" '*' "$target_ply_factor")
[[ -n $wall && -n $floor_wall ]] && floor_ratio=$(calc %.1f "$wall" / "$floor_wall")
append_ratio=$(calc %.2f "$append_wall" / "$fresh_wall")
append_target_s=$(calc %.2f "$fresh_wall" '*' "$target_append_factor" "$target_append_open_s")

skipped="skipped (SKIP_INDEX=1)"
row() { printf '  %-30s %-30s %-28s %s\n' "$@"; }

echo
echo "pawndex scale benchmark: $(basename "$corpus_file") ($(show "$wall" "COPIES=$copies, SEED=$seed" "scale.db reused")), $(nproc) core(s), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$( [[ -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]] && echo ' (+ uncommitted changes)'); binary $pawndex"
echo "index:   ${summary:-$skipped}"
echo "floor:   ${floor_out:-$skipped}"
echo "fresh:   ${fresh_summary:-(none printed)}"
echo "append:  ${append_summary:-(none printed)}"
echo "append file: $append_file ($append_games games, $(num "$append_pgn_bytes") bytes)"
echo
row "figure" "value" "target" "verdict"
row "games indexed" "$(show "$indexed" "$(num "${indexed:-0}") of $(num "${games_read:-0}") read" "$skipped")" "-" ""
row "plies (indexed games)" "$(show "$plies" "$(num "${plies:-0}")" "$skipped")" "-" ""
row "index wall time" "$(show "$wall" "$wall s" "$skipped")" "-" ""
row "index peak RSS" "$(show "$peak_mib" "$peak_mib MiB" "$skipped")" "<= $target_peak_mib MiB" "$(verdict "$peak_mib" "$target_peak_mib")"
row "database bytes" "$(num "$scale_db_bytes")" "(db + -wal + -shm)" ""
row "PGN bytes (uncompressed)" "$(show "$pgn_bytes" "$(num "${pgn_bytes:-0}")" "n/a (no $(basename "$bytes_file"))")" "(zstd -dc | wc -c)" ""
row "database / PGN" "$(show "$db_ratio" "${db_ratio}x" "n/a")" "<= ${target_db_ratio}x" "$(verdict "$db_ratio" "$target_db_ratio")"
row "time per ply" "$(show "$us_per_ply" "$us_per_ply µs" "$skipped")" \
    "$(show "$ply_target" "<= $ply_target µs (${target_ply_factor}x masters)" "n/a (run bench/index.sh)")" "$(verdict "$us_per_ply" "$ply_target")"
row "floor wall time" "$(show "$floor_wall" "$floor_wall s" "$skipped")" "(FLOOR_WORKERS=2)" ""
row "pawndex / floor" "$(show "$floor_ratio" "${floor_ratio}x" "$skipped")" "-" ""
row "fresh: $append_games games" "$fresh_wall s, $fresh_peak_mib MiB" "<= $target_peak_mib MiB" "$(verdict "$fresh_peak_mib" "$target_peak_mib")"
row "append: $append_games games" "$append_wall s, $append_peak_mib MiB" "<= $target_peak_mib MiB" "$(verdict "$append_peak_mib" "$target_peak_mib")"
row "append / fresh" "${append_ratio}x" "<= ${target_append_factor}x fresh + ${target_append_open_s} s = $append_target_s s" "$(verdict "$append_wall" "$append_target_s")"
row "query white-quart --count" "$(show "$quart_s" "$quart_s s" failed)" "<= $target_query_s s" "$(verdict "${quart_s:-1e9}" "$target_query_s")"
row "stats --by white_islands" "$(show "$islands_s" "$islands_s s" failed)" "<= $target_query_s s" "$(verdict "${islands_s:-1e9}" "$target_query_s")"

echo
echo "queries (whole process, best of 3 by /usr/bin/time, on scale.db):"
echo "  pawndex query white-quart --count   runs ${quart_runs:-none} s"
echo "    $quart_result"
echo "  pawndex stats --by white_islands    runs ${islands_runs:-none} s"
if [[ -n $islands_err ]]; then
    echo "    $islands_err"
else
    sed 's/^/    /' "$tmp/islands.csv"
fi

# --- keep -------------------------------------------------------------------------------------
echo
if [[ $keep == 0 || $keep == no ]]; then
    rm -f "$scale_db" "$scale_db-wal" "$scale_db-shm" "$scale_db_corpus"
    echo "scale.db deleted (KEEP=$keep); kept $corpus_file and $append_file"
else
    echo "kept: $scale_db (SKIP_INDEX=1 reuses it), $corpus_file, $append_file"
fi
