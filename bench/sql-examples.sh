#!/usr/bin/env bash
# Times every SQL example of README.md and docs/*.md in the sqlite3 shell (issue 23: each must
# take at most 1 s on the masters database).
#
#   bash bench/sql-examples.sh DB                 # DB: a pawndex database (masters for the figures)
#   RUNS=5 bash bench/sql-examples.sh DB          # more runs per example (default 3)
#   QUERIES=1 bash bench/sql-examples.sh DB       # also queries/*.sql, one run each (slow)
#
# The examples are read from the ```sql blocks themselves, so what is timed is what the docs
# show (tests/sql_examples.rs reads them the same way and checks each against the pawndex
# command its `-- same as:` line names). A statement ends at a line ending in `;`; its first
# comment line is its title. A statement holding `…` is a sketch, not run. docs/similar.md sketches
# the statement `pawndex similar --sql` prints: after the examples, that statement (Carlsbad,
# --max-distance 4) is timed on its own when a pawndex binary is found (PAWNDEX, default
# target/release/pawndex).
#
# Prints, per example, over RUNS runs of `sqlite3 -readonly DB < statement > file` (seconds,
# process start included, /usr/bin/time): the fastest and the median wall time, the least CPU
# time (user + system: what a busy machine does not inflate), the rows printed, and OVER when
# the median wall time is above 1 s (or the statement failed). Exit status 0 even then.
set -euo pipefail
cd "$(dirname "$0")/.."

db=${1:-}
runs=${RUNS:-3}
pawndex=${PAWNDEX:-target/release/pawndex}
if [[ -z $db || ! -f $db ]]; then
    echo "sql-examples: give a pawndex database as the first argument (bash bench/sql-examples.sh DB)" >&2
    exit 2
fi
if ! command -v sqlite3 >/dev/null; then
    echo "sql-examples: the sqlite3 shell is not installed (apt-get install sqlite3)" >&2
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pawndex-sql-examples.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# --- the examples: one file per statement, and a list (file, where, kind, title) --------------
awk -v out="$tmp" '
    function flush(kind) {
        if (code) {
            n++
            f = sprintf("%s/%02d.sql", out, n)
            printf "%s", text > f
            close(f)
            kind = (text ~ /…/) ? "sketch" : "run"
            if (title == "") { title = text; sub(/\n.*/, "", title) }
            printf "%s\t%s:%d\t%s\t%s\n", f, FILENAME, first, kind, title > (out "/list")
        }
        text = ""; title = ""; code = 0; first = 0
    }
    FNR == 1 { inblock = 0 }
    /^```sql[[:space:]]*$/ { inblock = 1; text = ""; title = ""; code = 0; next }
    inblock && /^```/ { flush(); inblock = 0; next }
    inblock {
        line = $0
        if (!code && line ~ /^[[:space:]]*$/) { text = ""; title = ""; next }
        if (!first) first = FNR
        text = text line "\n"
        if (line ~ /^[[:space:]]*--/) {
            if (!code && title == "") { title = line; sub(/^[[:space:]]*--[[:space:]]*/, "", title) }
            next
        }
        code = 1
        sub(/[[:space:]]*--.*$/, "", line)
        if (line ~ /;[[:space:]]*$/) flush()
    }
' README.md docs/*.md

time_one() { # FILE: prints "wall cpu" seconds of one run; rows (or FAILED) in $tmp/rows
    if /usr/bin/time -f '%e %U %S' -o "$tmp/time" sqlite3 -readonly "$db" <"$1" >"$tmp/out" 2>"$tmp/err"; then
        wc -l <"$tmp/out" | tr -d ' ' >"$tmp/rows"
    else
        echo FAILED >"$tmp/rows"
        grep -v '^Command exited' "$tmp/err" | sed 's/^/    /' >&2 || true
    fi
    awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$tmp/time"
}

over=0
total=0
row() { printf '%6s %6s %6s %8s  %-4s %s  %s\n' "$@"; }
report() { # FILE WHERE TITLE REPEATS
    local file=$1 where=$2 title=$3 repeats=$4 rows flag=""
    for ((i = 0; i < repeats; i++)); do
        time_one "$file"
    done >"$tmp/times"
    rows=$(cat "$tmp/rows")
    # fastest and median wall time, least CPU time
    read -r min median cpu < <(sort -g "$tmp/times" | awk '
        { w[NR] = $1; if (NR == 1 || $2 < c) c = $2 }
        END { printf "%.2f %.2f %.2f\n", w[1], w[int((NR + 1) / 2)], c }')
    if [[ $rows == FAILED ]] || awk -v m="$median" 'BEGIN { exit !(m > 1.0) }'; then
        flag=OVER
        over=$((over + 1))
    fi
    total=$((total + 1))
    row "$min" "$median" "$cpu" "$rows" "$flag" "$where" "$title"
}

games=$(sqlite3 -readonly "$db" "SELECT count(*) FROM games")
echo "# sql-examples: $db ($games games), sqlite3 $(sqlite3 --version | cut -d' ' -f1)," \
    "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)," \
    "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
pair_index=$(sqlite3 -readonly "$db" "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'runs_pair'")
if [[ $pair_index == 1 ]]; then
    echo "# the optional index runs_pair is in this database (docs/sql-examples.md): exact structures use it"
else
    echo "# without the optional index runs_pair (docs/sql-examples.md): exact structures read every run"
fi
echo "# seconds over $runs runs each (process start included): wall (fastest, median), CPU (least)"
row wall median cpu rows "" where example
sketches=()
while IFS=$'\t' read -r file where kind title; do
    if [[ $kind == run ]]; then
        report "$file" "$where" "$title" "$runs"
    else
        sketches+=("$where")
        row - - - - "" "$where" "(sketch, not run) $title"
    fi
done <"$tmp/list"
echo "# $total examples timed, $over with a median over 1 s"

# The sketch in docs/similar.md's "The same in SQL" is of the statement `pawndex similar --sql`
# prints; that statement is generated, not an example, and its times are in docs/similar.md.
if ((${#sketches[@]} > 0)); then
    echo
    echo "# generated: the statement of pawndex similar --structure CARLSBAD --max-distance 4 --sql" \
        "(sketched at ${sketches[*]})"
    if [[ -x $pawndex ]]; then
        "$pawndex" similar --db "$db" --structure "8/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/8" \
            --max-distance 4 --sql >"$tmp/similar.sql"
        total=0 over=0
        report "$tmp/similar.sql" "similar --sql" "" "$runs"
    else
        echo "#   skipped: no pawndex binary at $pawndex (cargo build --release, or set PAWNDEX)"
    fi
fi

if [[ ${QUERIES:-0} == 1 ]]; then
    echo
    echo "# queries/*.sql (the named queries: every matching position, so large outputs), 1 run each"
    row wall median cpu rows "" file ""
    for q in queries/*.sql; do
        {
            echo ".param set :white_pawns 0x1000EF00"
            echo ".param set :black_pawns 0xEF001000000000"
            cat "$q"
        } >"$tmp/query.sql"
        report "$tmp/query.sql" "$q" "" 1
    done
fi
