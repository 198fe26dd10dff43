#!/usr/bin/env bash
# The five hand-checked examples of `pawndex similar` (docs/similar.md, "Five structures and their
# neighbours"): prints each command and its output. With TIMES=1, also three wall times of each
# command (seconds, /usr/bin/time) on stderr.
#
#   bash bench/similar-examples.sh [DB]           # DB: a masters database (default: pawndex.db)
#   PAWNDEX=target/release/pawndex TIMES=1 bash bench/similar-examples.sh /tmp/masters.db
#
# The figures in docs/similar.md come from the masters corpus (../shared/corpus/masters-*.pgn.zst,
# indexed with `pawndex index`); another database gives other counts.
set -euo pipefail

db=${1:-pawndex.db}
pawndex=${PAWNDEX:-target/release/pawndex}
if [[ ! -f $db ]]; then
    echo "similar-examples: no database at $db (give its path as the first argument)" >&2
    exit 0
fi
if [[ ! -x $pawndex ]]; then
    echo "similar-examples: no pawndex binary at $pawndex (cargo build --release, or set PAWNDEX)" >&2
    exit 1
fi

# name | target board | extra options
examples=(
    "IQP (Kramnik-Kasparov, London 2000, game 10, ply 24)|8/p4ppp/1p2p3/8/3P4/8/PP3PPP/8|"
    "Carlsbad (Kasparov-Andersson, Belfort 1988, ply 20)|8/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/8|"
    "Hedgehog (Karpov-Kasparov, Moscow 1984, game 3, ply 22)|8/5ppp/pp1pp3/8/2P1P3/8/PP3PPP/8|"
    "Stonewall Dutch (Capablanca-Botvinnik, Hastings 1934/35, ply 20)|8/pp4pp/2p1p3/3p1p2/2PP4/6P1/PP2PP1P/8|"
    "Stonewall Dutch, colours reversed as well|8/pp4pp/2p1p3/3p1p2/2PP4/6P1/PP2PP1P/8|--colour-reversed"
    "King's Indian chain (Karpov-Kasparov, Seville 1987, game 17, ply 16)|8/ppp2p1p/3p2p1/3Pp3/2P1P3/8/PP3PPP/8|"
)

for example in "${examples[@]}"; do
    IFS='|' read -r name board extra <<<"$example"
    # shellcheck disable=SC2206 # extra is a list of options, split on purpose
    args=(similar --db "$db" --structure "$board" --limit 8 $extra)
    echo "# $name"
    echo "\$ pawndex similar --structure \"$board\" --limit 8${extra:+ $extra}"
    "$pawndex" "${args[@]}"
    echo
    if [[ ${TIMES:-0} == 1 ]]; then
        for _ in 1 2 3; do
            /usr/bin/time -f "%e s  $name${extra:+ $extra}" "$pawndex" "${args[@]}" >/dev/null
        done
    fi
done
