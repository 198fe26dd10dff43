#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Annotate agreement: what `pawndex annotate` says of a game equals an independent replay.

The reference is check_plans.py's (tests/plans, imported, not copied): the first games (12,000
by default) of ../shared/corpus/masters-1.pgn.zst, indexed by `pawndex index` into a temporary
database, every stored game replayed from its PGN text with python-chess and named with the
catalogue read from structures/*.toml; the plans figures are check_plans' tally (`Expected`).
The annotated games are about 200 records of masters-2.pgn.zst spread over the shard, none
with the same moves as a reference game (the shards hold a game once per collected player),
and only records that python-chess reads alone as one game (so every reader gets the same
games). They are annotated with `pawndex annotate --format json` and `--format pgn`, and:

(a) changes: every `changes` entry's ply is a ply where the game's named structure changes in
    the python-chess replay (ply 0 when the game starts in one), every such ply has an entry,
    with the same structure (key, reversed); `san` is a move that python-chess reads as the move
    played there; `to_move` is the side to move; `summary` is the replay's stretches;
(b) figures: every figure of an entry's `reference` (games, positions, white_score,
    black_score, to_move_score, avg_stay, each side's moves and breaks with games and score,
    the model games' ids in order) equals the replay's tally over the reference games, and
    what `pawndex plans --structure-name KEY[~] --format json` and `pawndex structures --format
    json` answer on the same database; `left_by` (games, score, alternatives) equals the
    plans' break or other exit row for that move and destination (replay and plans); `exact`
    entries are the game's unnamed pawn structures kept 8 plies or more (replay) that some
    reference game has, with the reference's games, positions and White's score counted here
    and equal to `pawndex similar --structure FEN --max-distance 0 --limit 1` (for 80 entries
    spread over them, --similar), and where fewer than --min-games games have them, `nearest`
    equal to `similar --structure FEN --min-games N --max-distance 4 --limit 1` (or null);
(c) the PGN: python-chess reads every annotated game back with the input's mainline moves, and
    the comments starting `pawndex:` are exactly at ply 0, the changes' and the exact entries'
    plies; pgn-extract (/usr/games/pgn-extract, Debian's pgn-extract) writes the same UCI moves
    for the input and the output and reports nothing; `pawndex index` of the output stores the
    same games with the same plies; `--strip` gives back the input byte for byte (with and
    without `--db`); annotating the output again gives the output; every pawndex comment is one
    brace comment with no brace inside, and the lines' lengths are reported.

Exit status 0 when everything agrees, 1 on any difference or failure. Without ../shared/corpus
it prints SKIP and exits 0, or 1 when CI=true. A binary without `annotate` is a failure.
"""

import argparse
import collections
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib

import chess
import chess.pgn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "plans"))
import check_plans as cp  # noqa: E402 - the plans check's catalogue, replay and tally

HELD_SHARD = "masters-2.pgn.zst"
HELD = 200
# docs/annotate.md's defaults.
MIN_GAMES = 10
TOP = 3
BREAKS = 2
MODEL_GAMES = 2
ALTERNATIVES = 3
SETTLED = 8
# How far the nearest frequent structure is looked for (similar's distance).
NEAREST_WITHIN = 4
PGN_EXTRACT = "/usr/games/pgn-extract"
# Scid's Tcl interpreter (Debian's scid); optional: CI does not install it.
TKSCID = "/usr/games/tkscid"
# Exact entries asked of `similar` (two runs each): about a quarter s a run on a loaded 2-core
# machine, so a spread sample keeps the check within its time.
SIMILAR = 80
say = cp.say


def run_bytes(cmd, ok=(0,)):
    """Runs a command; (stdout bytes, stderr text), or an exception naming the command."""
    done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    if done.returncode not in ok:
        raise RuntimeError(f"{' '.join(cmd)}: exit status {done.returncode}\n"
                           f"{done.stderr.decode('utf-8', 'replace')[:2000]}")
    return done.stdout, done.stderr.decode("utf-8", "replace")


def has_annotate(binary):
    done = subprocess.run([binary, "annotate", "--help"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, check=False)
    return done.returncode == 0


# --- The held-out games -----------------------------------------------------------------------

def records(data):
    """A shard's game records as byte ranges, split where check_plans.make_slice splits."""
    starts, in_tags, pos = [], False, 0
    for line in data.splitlines(keepends=True):
        if line.startswith(b"[Event ") and not in_tags:
            starts.append(pos)
        in_tags = line.startswith(b"[")
        pos += len(line)
    return [(s, e) for s, e in zip(starts, starts[1:] + [len(data)])]


def read_alone(text):
    """python-chess's reading of a record as it is: (moves, names) of its one game, or None
    when it reads something else (no game, an error, or more than one game)."""
    stream = io.StringIO(text)
    c = chess.pgn.read_game(stream, Visitor=cp.Collector)
    if c is None or chess.pgn.read_game(stream) is not None:
        return None
    return c


def pick_held(shard, reference_moves, want):
    """About `want` records spread over the shard: python-chess reads each alone as one game,
    with 20 plies or more, no game of the reference has its moves, and no record picked before."""
    data = subprocess.run(["zstd", "-dc", shard], capture_output=True, check=True).stdout
    recs = records(data)
    stride = max(1, len(recs) // want)
    picked, seen = [], set()
    for i in range(0, len(recs), stride):
        for s, e in recs[i:i + stride]:
            text = data[s:e].decode("latin-1")
            try:
                c = read_alone(text)
            except Exception:  # noqa: BLE001 - a record python-chess cannot read is not taken
                continue
            if c is None or len(c.moves) < 20:
                continue
            moves = tuple(c.moves)
            if moves in reference_moves or moves in seen:
                continue
            seen.add(moves)
            picked.append(data[s:e])
            break
        if len(picked) == want:
            break
    return picked


class Held:
    """One annotated game as python-chess replays it."""

    def __init__(self, number, text, catalogue):
        c = read_alone(text)
        self.number = number
        self.start = c.tags.get("FEN")
        self.moves = c.moves
        self.pawns = [(c.pawns[i], c.pawns[i + 1]) for i in range(0, len(c.pawns), 2)]
        self.names = [catalogue.name(w, b) for w, b in self.pawns]
        self.label = f"game {number} ({c.tags.get('White', '?')} - {c.tags.get('Black', '?')})"

    def board(self, ply):
        b = chess.Board(self.start) if self.start else chess.Board()
        for m in self.moves[:ply]:
            b.push(m)
        return b

    def changes(self):
        """The plies where the named structure changes (0 when the game starts in one)."""
        out = [0] if self.names[0] else []
        return out + [p for p in range(1, len(self.names)) if self.names[p] != self.names[p - 1]]

    def stretches(self):
        out, first = [], 0
        for p in range(1, len(self.names) + 1):
            if p == len(self.names) or self.names[p] != self.names[first]:
                out.append((self.names[first], first, p - 1))
                first = p
        return out

    def settled(self):
        """The unnamed runs of one exact pawn structure of SETTLED positions or more."""
        out, first = [], 0
        for p in range(1, len(self.pawns) + 1):
            if p == len(self.pawns) or self.pawns[p] != self.pawns[first]:
                if self.names[first] is None and p - first >= SETTLED:
                    out.append((first, p - 1, self.pawns[first]))
                first = p
        return out


def form_of(structure):
    """`KEY` or `KEY~` from a JSON structure object, None for null."""
    if structure is None:
        return None
    return structure["key"] + ("~" if structure["reversed"] else "")


def pawns_fen(white, black):
    board = chess.Board(None)
    for sq in chess.SquareSet(white):
        board.set_piece_at(sq, chess.Piece(chess.PAWN, chess.WHITE))
    for sq in chess.SquareSet(black):
        board.set_piece_at(sq, chess.Piece(chess.PAWN, chess.BLACK))
    return board.board_fen()


def display_names(folder):
    names = {}
    for entry in os.listdir(folder):
        if entry.endswith(".toml"):
            with open(os.path.join(folder, entry), "rb") as f:
                d = tomllib.load(f)
            key = entry[:-len(".toml")]
            names[key] = d.get("name", key)
            names[key + "~"] = f"{names[key]} (reversed)"
    return names


# --- What a reference entry should say --------------------------------------------------------

def quoted(score, games, min_games):
    return None if games < min_games or score is None else score


def order(row):
    """plans' order (src/engine/plans.rs sort_rows): games, most first; SAN; White first;
    destination (no name first, then by key, the normal form first)."""
    to = row.get("leads_to")
    return (-row["games"], row["san"], row["side"] == "black",
            to is not None, (to or "").rstrip("~"), (to or "").endswith("~"))


def expected_reference(e, stays, min_games):
    """The `reference` object (to_move_score left out) from check_plans' tally `e`."""
    games = sum(e.games)
    white, black = cp.round1(e.baseline("white")), cp.round1(e.baseline("black"))
    positions = sum(e.positions)
    ref = {"games": games, "positions": positions,
           "white_score": quoted(white, games, min_games),
           "black_score": quoted(black, games, min_games),
           # structures' JSON writes the average stay with two decimals.
           "avg_stay": float(f"{positions / stays:.2f}") if stays else None,
           "moves": {}, "breaks": {}}
    breaks = list(e.exit_list(True).values())
    for side in cp.SIDES:
        rows = sorted(e.move_list(side, False).values(), key=order)[:TOP]
        ref["moves"][side] = [{"san": r["san"], "games": r["games"],
                               "score": quoted(r["score"], r["games"], min_games)}
                              for r in rows]
        rows = sorted((r for r in breaks if r["side"] == side), key=order)[:BREAKS]
        ref["breaks"][side] = [{"san": r["san"], "games": r["games"],
                                "score": quoted(r["score_after"], r["games"], min_games),
                                "leads_to": r["leads_to"]} for r in rows]
    ref["model_games"] = [m["id"] for m in e.model_games()[:MODEL_GAMES]]
    return unquoted_below(ref, min_games)


def unquoted_below(ref, min_games):
    """A form reached by fewer than `min_games` games: its scores and average stay are not
    quoted (null) and neither are its lists (empty); the games and positions still are."""
    if ref["games"] < min_games:
        ref["avg_stay"] = None
        ref["moves"] = {side: [] for side in cp.SIDES}
        ref["breaks"] = {side: [] for side in cp.SIDES}
        ref["model_games"] = []
    return ref


def plans_reference(doc, row, min_games):
    """The same object from `plans --format json` and the form's `structures` row."""
    games = doc["games"]
    ref = {"games": games, "positions": doc["plies"],
           "white_score": quoted(doc["baseline"]["white"]["score"], games, min_games),
           "black_score": quoted(doc["baseline"]["black"]["score"], games, min_games),
           "avg_stay": quoted(row["avg_stay"], games, min_games) if row else None,
           "moves": {}, "breaks": {}}
    for side in cp.SIDES:
        ref["moves"][side] = [{"san": r["san"], "games": r["games"],
                               "score": quoted(r["score"], r["games"], min_games)}
                              for r in doc["moves"][side][:TOP]]
        ref["breaks"][side] = [{"san": r["san"], "games": r["games"],
                                "score": quoted(r["score_after"], r["games"], min_games),
                                "leads_to": r["leads_to"]}
                               for r in doc["breaks"] if r["side"] == side][:BREAKS]
    ref["model_games"] = [m["id"] for m in doc["model_games"][:MODEL_GAMES]]
    unquoted_below(ref, min_games)
    structure = {"games": row["games"], "positions": row["positions"],
                 "white_score": quoted(row["white_score"], row["games"], min_games),
                 "avg_stay": quoted(row["avg_stay"], row["games"], min_games)} if row else None
    return ref, structure


def got_reference(ref):
    """The annotate entry's `reference` in the shape of the two above."""
    if ref is None:
        return None
    out = {k: ref.get(k) for k in ("games", "positions", "white_score", "black_score",
                                   "avg_stay")}
    out["moves"] = {side: [{k: r.get(k) for k in ("san", "games", "score")}
                           for r in (ref.get("moves") or {}).get(side, [])]
                    for side in cp.SIDES}
    out["breaks"] = {side: [{k: r.get(k) for k in ("san", "games", "score", "leads_to")}
                            for r in (ref.get("breaks") or {}).get(side, [])]
                     for side in cp.SIDES}
    out["model_games"] = [m.get("id") for m in ref.get("model_games") or []]
    return out


def exit_rows(rows, score_key):
    """{(side, san, leads_to): row} of exits with the mover's score under `score`."""
    return {(r["side"], r["san"], r["leads_to"]): {"san": r["san"], "side": r["side"],
                                                   "games": r["games"],
                                                   "score": r[score_key],
                                                   "leads_to": r["leads_to"]}
            for r in rows}


def expected_left_by(exits, side, san, leads_to, min_games):
    """(games, score, alternatives) of the move that left, from {(side, san, leads_to): row}."""
    row = exits.get((side, san, leads_to))
    games = row["games"] if row else 0
    score = quoted(row["score"], games, min_games) if row else None
    others = sorted((r for k, r in exits.items()
                     if k[0] == side and k != (side, san, leads_to)), key=order)[:ALTERNATIVES]
    alts = [{"san": r["san"], "side": r["side"], "games": r["games"],
             "score": quoted(r["score"], r["games"], min_games), "leads_to": r["leads_to"]}
            for r in others]
    return {"games": games, "score": score, "alternatives": alts}


def got_left_by(lb):
    return {"games": lb.get("games"), "score": lb.get("score"),
            "alternatives": [{k: a.get(k) for k in ("san", "side", "games", "score", "leads_to")}
                             for a in lb.get("alternatives") or []]}


def differences(where, want, got, prefix=""):
    """Field-by-field differences of two nested values, each naming `where`."""
    if isinstance(want, dict) and isinstance(got, dict):
        out = []
        for k in want:
            out += differences(where, want[k], got.get(k), f"{prefix}{k}.")
        return out
    if want != got:
        return [f"{where} {prefix.rstrip('.')}: want {want!r}, annotate {got!r}"]
    return []


# --- Main -------------------------------------------------------------------------------------

def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "pawndex"),
                   help="the binary (default: target/release/pawndex)")
    p.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    p.add_argument("--games", type=int, default=12000,
                   help=f"how many games of {cp.SHARD} make the reference (default 12000)")
    p.add_argument("--held", type=int, default=HELD,
                   help=f"how many games of {HELD_SHARD} to annotate (default {HELD})")
    p.add_argument("--similar", type=int, default=SIMILAR,
                   help="how many exact entries to ask `similar` about, spread over them (default "
                        f"{SIMILAR}, 0 for all; every entry is compared with the replay)")
    p.add_argument("--work", help="keep the files and databases in this directory")
    return p.parse_args()


def skip_or_fail(msg):
    ci = os.environ.get("CI") == "true"
    say("*" * 78)
    say(f"{'FAIL' if ci else 'SKIP'}: annotate agreement check: {msg}")
    say("*" * 78)
    return 1 if ci else 0


def main():
    args = parse_args()
    shard = os.path.join(args.corpus, cp.SHARD)
    held_shard = os.path.join(args.corpus, HELD_SHARD)
    for f in (shard, held_shard):
        if not os.path.isfile(f):
            return skip_or_fail(f"{f} is not there")
    if not os.access(args.bin, os.X_OK):
        say(f"error: {args.bin} not found: run cargo build --release first")
        return 1
    if not has_annotate(args.bin):
        say(f"FAIL: {args.bin} has no `annotate` command (`{args.bin} annotate --help` fails)")
        return 1
    work = args.work or tempfile.mkdtemp(prefix="pawndex-annotate-")
    os.makedirs(work, exist_ok=True)
    try:
        return check(args, shard, held_shard, work)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


def fresh(db):
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.remove(f)


def reference(args, shard, work, chk):
    """check_plans' reference: the slice, its database, its replayed games."""
    start = time.monotonic()
    pgn, db = os.path.join(work, "reference.pgn"), os.path.join(work, "reference.db")
    n = cp.make_slice(shard, args.games, pgn)
    fresh(db)
    cp.run([args.bin, "index", "--quiet", "--db", db, pgn])
    say(f"{n} games of {cp.SHARD} indexed by {args.bin} ({time.monotonic() - start:.1f} s)")
    catalogue = cp.Catalogue(os.path.join(ROOT, "structures"))
    with open(pgn, "rb") as f:
        text = f.read().decode("latin-1")
    games = cp.replay_all(db, text, catalogue, chk)
    say(f"replayed with python-chess {chess.__version__} ({time.monotonic() - start:.1f} s)")
    return db, catalogue, games


def check(args, shard, held_shard, work):
    start = time.monotonic()
    chk = cp.Check()
    db, catalogue, ref_games = reference(args, shard, work, chk)
    names = display_names(os.path.join(ROOT, "structures"))

    held_pgn = os.path.join(work, "held.pgn")
    picked = pick_held(held_shard, {tuple(g.moves) for g in ref_games}, args.held)
    with open(held_pgn, "wb") as f:
        f.writelines(picked)
    held = [Held(i + 1, r.decode("latin-1"), catalogue) for i, r in enumerate(picked)]
    say(f"{len(held)} games of {HELD_SHARD} to annotate, none with a reference game's moves "
        f"({sum(len(h.moves) for h in held)} plies; {time.monotonic() - start:.1f} s)")

    t = time.monotonic()
    out, _ = run_bytes([args.bin, "annotate", held_pgn, "--db", db, "--format", "json"])
    docs = [json.loads(line) for line in out.decode("utf-8").splitlines() if line.strip()]
    annotated = os.path.join(work, "annotated.pgn")
    run_bytes([args.bin, "annotate", held_pgn, "--db", db, "-o", annotated])
    say(f"annotated as JSON and PGN ({time.monotonic() - t:.1f} s)")

    say("\n(a) the changes against the replay")
    check_changes(held, docs, chk)
    say("\n(b) the figures against the replay's tally, plans, structures and similar")
    check_figures(args, db, held, docs, ref_games, catalogue, names, chk)
    say("\n(c) the PGN read back")
    check_pgn(args, db, work, held_pgn, annotated, held, docs, chk)

    say(f"\n{chk.passed} checks agree, {len(chk.failures)} differ "
        f"({time.monotonic() - start:.0f} s)")
    if chk.failures:
        say("FAIL: " + "; ".join(chk.failures))
        return 1
    say("ok: pawndex annotate agrees with the replay, plans, structures, similar and the readers")
    return 0


def check_changes(held, docs, chk):
    diffs, compared = [], 0
    if len(docs) != len(held):
        diffs.append(f"{len(docs)} JSON lines for {len(held)} games")
    for h, d in zip(held, docs):
        compared += 1
        where = h.label
        for k, want in (("game", h.number), ("plies", len(h.moves)), ("error", None)):
            if d.get(k) != want:
                diffs.append(f"{where}: {k} {d.get(k)!r}, replay {want!r}")
        want = h.changes()
        got = [c.get("ply") for c in d.get("changes", [])]
        if got != want:
            diffs.append(f"{where}: change plies {got}, replay {want} "
                         f"(replay names {[(p, h.names[p]) for p in want][:8]})")
    chk.result("change plies", not diffs,
               f"{compared} games, {sum(len(h.changes()) for h in held)} changes in the replay",
               diffs)

    diffs, entries = [], 0
    for h, d in zip(held, docs):
        for c in d.get("changes", []):
            ply = c.get("ply")
            if not isinstance(ply, int) or not 0 <= ply < len(h.names):
                continue
            entries += 1
            where = f"{h.label} ply {ply}"
            if form_of(c.get("structure")) != h.names[ply]:
                diffs.append(f"{where}: structure {c.get('structure')}, replay {h.names[ply]}")
            board = h.board(ply)
            to_move = "white" if board.turn == chess.WHITE else "black"
            if c.get("to_move") != to_move:
                diffs.append(f"{where}: to_move {c.get('to_move')}, replay {to_move}")
            if ply == 0:
                if c.get("san") is not None:
                    diffs.append(f"{where}: san {c.get('san')!r} at ply 0")
                continue
            before = h.board(ply - 1)
            played = h.moves[ply - 1]
            try:
                ok = before.parse_san(c.get("san") or "") == played
            except ValueError:
                ok = False
            if not ok:
                diffs.append(f"{where}: san {c.get('san')!r}, played {before.san(played)}")
    chk.result("change entries (structure, san, to_move)", not diffs,
               f"{entries} entries compared", diffs)

    diffs = []
    for h, d in zip(held, docs):
        want = [(name, a, b) for name, a, b in h.stretches()]
        got = [(form_of(s.get("structure")), s.get("first_ply"), s.get("last_ply"))
               for s in d.get("summary", [])]
        if got != want:
            diffs.append(f"{h.label}: summary {got[:6]}, replay {want[:6]}")
    chk.result("summary stretches", not diffs, f"{len(held)} games", diffs)


class Sources:
    """The reference's answers, each asked for once: check_plans' tally, plans, structures."""

    def __init__(self, args, db, ref_games, catalogue):
        self.args, self.db, self.ref_games, self.catalogue = args, db, ref_games, catalogue
        self.tallies, self.plans, self.stays = {}, {}, None
        rows = json.loads(cp.run([args.bin, "structures", "--db", db, "--format", "json"]))
        self.structures = {r["key"] + ("~" if r["reversed"] else ""): r for r in rows}

    def tally(self, form):
        if form not in self.tallies:
            self.tallies[form] = cp.Expected(self.ref_games, lambda g, p: g.names[p] == form,
                                             lambda g: True, self.catalogue)
        return self.tallies[form]

    def plan(self, form):
        if form not in self.plans:
            self.plans[form] = json.loads(cp.run(
                [self.args.bin, "plans", "--structure-name", form, "--db", self.db,
                 "--format", "json", "--top", "1000", "--model-games", str(MODEL_GAMES)]))
        return self.plans[form]

    def stays_of(self, form):
        """Times a reference game enters the form (its stays), counted from the names."""
        if self.stays is None:
            self.stays = collections.Counter()
            for g in self.ref_games:
                for p, name in enumerate(g.names):
                    if name and (p == 0 or g.names[p - 1] != name):
                        self.stays[name] += 1
        return self.stays[form]


def check_figures(args, db, held, docs, ref_games, catalogue, names, chk):
    src = Sources(args, db, ref_games, catalogue)
    t = time.monotonic()
    replay_diffs, plans_diffs, structure_diffs, entries = [], [], [], 0
    left_replay, left_plans, lefts = [], [], 0
    for h, d in zip(held, docs):
        for c in d.get("changes", []):
            ply = c.get("ply")
            if not isinstance(ply, int) or not 0 <= ply < len(h.names):
                continue
            where = f"{h.label} ply {ply}"
            form = h.names[ply]
            if form is not None:
                entries += 1
                e = src.tally(form)
                want = expected_reference(e, src.stays_of(form), MIN_GAMES)
                to_move = "white" if h.board(ply).turn == chess.WHITE else "black"
                want["to_move_score"] = want[f"{to_move}_score"]
                doc = src.plan(form)
                from_plans, from_structures = plans_reference(doc, src.structures.get(form),
                                                              MIN_GAMES)
                from_plans["to_move_score"] = from_plans[f"{to_move}_score"]
                ref = c.get("reference")
                got = got_reference(ref)
                if got is None:
                    replay_diffs.append(f"{where} ({form}): no reference")
                    continue
                got["to_move_score"] = ref.get("to_move_score")
                replay_diffs += differences(f"{where} ({form}, replay)", want, got)
                plans_diffs += differences(f"{where} ({form}, plans)", from_plans, got)
                if from_structures is None:
                    structure_diffs.append(f"{where}: structures has no row {form}")
                else:
                    structure_diffs += differences(f"{where} ({form}, structures)",
                                                   from_structures, got)
            elif c.get("reference") is not None:
                replay_diffs.append(f"{where}: a reference where the replay has no name")
            left = h.names[ply - 1] if ply > 0 else None
            lb = c.get("left_by")
            if left is None:
                if lb is not None:
                    left_replay.append(f"{where}: left_by where no named structure ends")
                continue
            lefts += 1
            if lb is None:
                left_replay.append(f"{where}: no left_by where {left} ends")
                continue
            before = h.board(ply - 1)
            side = "white" if before.turn == chess.WHITE else "black"
            san = cp.plain_san(before.san(h.moves[ply - 1]))[0]
            head = {"from": left, "san": san, "side": side, "leads_to": form}
            got_head = {"from": form_of(lb.get("from")) if isinstance(lb.get("from"), dict)
                        else lb.get("from"), "san": lb.get("san"), "side": lb.get("side"),
                        "leads_to": lb.get("leads_to")}
            left_replay += differences(f"{where} left_by", head, got_head)
            e = src.tally(left)
            replay_exits = {}
            for pawn in (True, False):
                replay_exits.update(exit_rows(e.exit_list(pawn).values(), "score_after"))
            doc = src.plan(left)
            plans_exits = exit_rows(doc["breaks"] + doc["other_exits"], "score_after")
            got = got_left_by(lb)
            left_replay += differences(f"{where} left_by ({left}, replay)",
                                       expected_left_by(replay_exits, side, san, form,
                                                        MIN_GAMES), got)
            left_plans += differences(f"{where} left_by ({left}, plans)",
                                      expected_left_by(plans_exits, side, san, form,
                                                       MIN_GAMES), got)
    forms = len(src.tallies)
    chk.result("reference = replay", not replay_diffs,
               f"{entries} named changes over {forms} forms", replay_diffs)
    chk.result("reference = plans", not plans_diffs, f"{entries} named changes", plans_diffs)
    chk.result("reference = structures", not structure_diffs,
               f"{entries} named changes (games, positions, White's score, average stay)",
               structure_diffs)
    chk.result("left_by = replay", not left_replay, f"{lefts} named structures left",
               left_replay)
    chk.result("left_by = plans", not left_plans, f"{lefts} named structures left", left_plans)
    say(f"  ({time.monotonic() - t:.1f} s)")
    check_exact(args, db, held, docs, ref_games, catalogue, names, chk)


def check_exact(args, db, held, docs, ref_games, catalogue, names, chk):
    t = time.monotonic()
    runs = {h.number: h.settled() for h in held}
    # The reference's games with exactly those pawns, counted from the replay.
    count = {p: [set(), 0, [0] * 4] for want in runs.values() for _, _, p in want}
    for g in ref_games:
        for p in g.pawns:
            c = count.get(p)
            if c is not None:
                c[1] += 1
                if g.id not in c[0]:
                    c[0].add(g.id)
                    c[2][g.outcome] += 1
    place_diffs, known = [], 0
    for h, d in zip(held, docs):
        # Only the pawns the reference knows are commented on.
        want = [(a, b, pawns_fen(*p)) for a, b, p in runs[h.number] if count[p][0]]
        known += len(want)
        got = [(x.get("ply"), x.get("last_ply"), x.get("pawns")) for x in d.get("exact", [])]
        if got != want:
            place_diffs.append(f"{h.label}: exact {got[:4]}, replay {want[:4]}")
    chk.result("exact entries (plies, pawns)", not place_diffs,
               f"{sum(len(r) for r in runs.values())} unnamed runs of {SETTLED}+ plies in the "
               f"replay, {known} of pawns the reference has", place_diffs)

    entries = [(h, x) for h, d in zip(held, docs) for x in d.get("exact", [])
               if isinstance(x.get("ply"), int) and 0 <= x["ply"] < len(h.pawns)
               and h.pawns[x["ply"]] in count]
    ask = len(entries) if args.similar <= 0 else min(args.similar, len(entries))
    asked = {i * len(entries) // ask for i in range(ask)}
    replay_diffs, similar_diffs, nearest_diffs, compared, nearest = [], [], [], 0, 0
    for i, (h, x) in enumerate(entries):
        ply = x["ply"]
        p = h.pawns[ply]
        compared += 1
        where = f"{h.label} ply {ply}"
        games, positions, outcomes = len(count[p][0]), count[p][1], count[p][2]
        white = cp.round1(cp.side_score(outcomes, "white"))
        want = {"games": games, "positions": positions,
                "white_score": quoted(white, games, MIN_GAMES)}
        got = {k: (x.get("reference") or {}).get(k) for k in want}
        replay_diffs += differences(f"{where} exact", want, got)
        if games >= MIN_GAMES and x.get("nearest") is not None:
            nearest_diffs.append(f"{where}: nearest given, the exact pawns have "
                                 f"{games} games")
        if i not in asked:
            continue
        fen = pawns_fen(*p)
        out = cp.run([args.bin, "similar", "--structure", fen, "--max-distance", "0",
                      "--limit", "1", "--format", "json", "--db", db])
        rows = [json.loads(line) for line in out.splitlines() if line.strip()]
        row = rows[0] if rows else {"games": 0, "positions": 0, "white_score": None}
        sim = {"games": row["games"], "positions": row["positions"],
               "white_score": quoted(row["white_score"], row["games"], MIN_GAMES)}
        similar_diffs += differences(f"{where} exact (similar)", sim, got)
        if games >= MIN_GAMES:
            continue
        nearest += 1
        out = cp.run([args.bin, "similar", "--structure", fen, "--min-games", str(MIN_GAMES),
                      "--max-distance", str(NEAREST_WITHIN), "--limit", "1", "--format", "json",
                      "--db", db])
        rows = [json.loads(line) for line in out.splitlines() if line.strip()]
        n = x.get("nearest")
        if not rows:
            if n is not None:
                nearest_diffs.append(f"{where}: nearest {n}, similar has none")
            continue
        row = rows[0]
        bw = chess.Board(row["structure"] + " w - - 0 1")
        name = catalogue.name(int(bw.pieces_mask(chess.PAWN, chess.WHITE)),
                              int(bw.pieces_mask(chess.PAWN, chess.BLACK)))
        want = {"distance": row["distance"], "structure": row["structure"],
                "differs": row["differs"], "games": row["games"],
                "positions": row["positions"],
                "white_score": row["white_score"],
                "name": names.get(name) if name else None}
        nearest_diffs += differences(f"{where} nearest", want, n or {})
    chk.result("exact = replay", not replay_diffs, f"{compared} exact entries", replay_diffs)
    chk.result("exact = similar --max-distance 0", not similar_diffs,
               f"{len(asked)} exact entries of {compared}", similar_diffs)
    chk.result("nearest = similar --min-games", not nearest_diffs,
               f"{nearest} rare exact structures", nearest_diffs)
    say(f"  ({time.monotonic() - t:.1f} s)")


def read_games(path=None, text=None):
    """python-chess's games of a file (or a text): (mainline moves, {ply: comment}, errors)."""
    if text is None:
        with open(path, "rb") as f:
            text = f.read().decode("latin-1")
    stream = io.StringIO(text)
    out = []
    while True:
        game = chess.pgn.read_game(stream)
        if game is None:
            return out
        comments = {0: game.comment} if game.comment else {}
        for ply, node in enumerate(game.mainline(), 1):
            if node.comment:
                comments[ply] = node.comment
        out.append((list(game.mainline_moves()), comments, game.errors))


def pgn_extract(path):
    """pgn-extract's UCI moves of every game (no tags, comments, NAGs or variations), and
    what it reported."""
    out, err = run_bytes([PGN_EXTRACT, "-s", "-Wuci", "-C", "-N", "-V", "--notags",
                          "-w", "100000", path])
    return out.decode("latin-1").split(), err.strip()


def marked_plies(comments):
    return {p for p, c in comments.items() if c.lstrip().startswith("pawndex:")}


def check_scid(work, annotated, held, want, got, chk):
    """Scid imports the annotated file: the same moves, pawndex's comments at the same plies."""
    if not os.access(TKSCID, os.X_OK):
        say(f"  (Scid: {TKSCID} is not installed (Debian package scid): not checked)")
        return
    folder = os.path.join(work, "scid")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    out, err = run_bytes([TKSCID, os.path.join(ROOT, "tests", "annotate", "scid_roundtrip.tcl"),
                          os.path.join(folder, "annotated"), annotated])
    back = read_games(text=out.decode("latin-1"))
    diffs = []
    m = re.search(r"imported (\d+) games; warnings: (.*)", err, re.S)
    if not m or int(m[1]) != len(want) or m[2].strip():
        diffs.append(f"Scid says: {err.strip()[:300]!r}")
    if len(back) != len(want):
        diffs.append(f"Scid writes {len(back)} games back, the input has {len(want)}")
    for h, (wm, _, _), (_, gc, _), (bm, bc, _) in zip(held, want, got, back):
        if wm != bm:
            diffs.append(f"{h.label}: Scid has {len(bm)} moves, the input {len(wm)}")
        if marked_plies(bc) != marked_plies(gc):
            diffs.append(f"{h.label}: pawndex comments at plies {sorted(marked_plies(bc))[:8]} "
                         f"in Scid, {sorted(marked_plies(gc))[:8]} in the file")
    chk.result("Scid imports the same moves and comments", not diffs,
               f"{len(back)} games, {sum(len(marked_plies(c)) for _, c, _ in back)} plies with "
               "a pawndex comment", diffs)


def check_pgn(args, db, work, held_pgn, annotated, held, docs, chk):
    with open(held_pgn, "rb") as f:
        original = f.read()
    with open(annotated, "rb") as f:
        text = f.read()

    want, got = read_games(held_pgn), read_games(annotated)
    diffs = []
    if len(want) != len(got):
        diffs.append(f"python-chess reads {len(got)} games, the input has {len(want)}")
    for h, (wm, _, _), (gm, _, errors) in zip(held, want, got):
        if wm != gm:
            first = next((i for i, (a, b) in enumerate(zip(wm, gm)) if a != b),
                         min(len(wm), len(gm)))
            diffs.append(f"{h.label}: {len(gm)} moves read back, {len(wm)} in the input, "
                         f"first difference at ply {first + 1}")
        if errors:
            diffs.append(f"{h.label}: python-chess reports {errors[:2]}")
    chk.result("python-chess reads the same moves", not diffs,
               f"{len(got)} games, {sum(len(m) for m, _, _ in got)} moves", diffs)

    diffs, marked = [], 0
    for h, d, (_, comments, _) in zip(held, docs, got):
        want_plies = {0} | {c["ply"] for c in d.get("changes", [])} | \
            {x["ply"] for x in d.get("exact", [])}
        have = marked_plies(comments)
        marked += len(have)
        if have != want_plies:
            diffs.append(f"{h.label}: pawndex comments at plies {sorted(have)[:10]}, the "
                         f"changes and exact entries at {sorted(want_plies)[:10]}")
    chk.result("pawndex: comments at the changes' plies", not diffs,
               f"{marked} plies with a pawndex: comment", diffs)

    if os.access(PGN_EXTRACT, os.X_OK):
        (wm, werr), (gm, gerr) = pgn_extract(held_pgn), pgn_extract(annotated)
        diffs = []
        if wm != gm:
            first = next((i for i, (a, b) in enumerate(zip(wm, gm)) if a != b),
                         min(len(wm), len(gm)))
            diffs.append(f"token {first}: input {wm[first:first + 6]}, annotated "
                         f"{gm[first:first + 6]}")
        if gerr != werr:
            diffs.append(f"pgn-extract reports on the annotated file: {gerr[:300]!r} "
                         f"(on the input: {werr[:300]!r})")
        results = sum(1 for tok in gm if tok in ("1-0", "0-1", "1/2-1/2", "*"))
        chk.result("pgn-extract reads the same moves", not diffs,
                   f"{results} games, {len(gm) - results} moves (-Wuci)", diffs)
    else:
        chk.result("pgn-extract reads the same moves", False,
                   f"{PGN_EXTRACT} is not installed (Debian package pgn-extract)")

    check_scid(work, annotated, held, want, got, chk)

    diffs = []
    plies = {}
    for name, path in (("input", held_pgn), ("annotated", annotated)):
        d = os.path.join(work, f"{name}.db")
        fresh(d)
        cp.run([args.bin, "index", "--quiet", "--db", d, path])
        con = cp.sqlite3.connect(f"file:{d}?mode=ro", uri=True)
        plies[name] = [r[0] for r in con.execute("SELECT plies FROM games ORDER BY id")]
        con.close()
    if plies["input"] != plies["annotated"]:
        diffs.append(f"plies per game: input {plies['input'][:10]}, annotated "
                     f"{plies['annotated'][:10]}")
    if len(plies["input"]) != len(held):
        diffs.append(f"the input indexes as {len(plies['input'])} games, not {len(held)}")
    chk.result("pawndex index of the annotated file", not diffs,
               f"{len(plies['annotated'])} games, {sum(plies['annotated'])} plies", diffs)

    diffs = []
    stripped, _ = run_bytes([args.bin, "annotate", annotated, "--strip"])
    stripped_db, _ = run_bytes([args.bin, "annotate", annotated, "--strip", "--db", db])
    for label, s in (("--strip", stripped), ("--strip --db", stripped_db)):
        if s != original:
            first = next((i for i, (a, b) in enumerate(zip(s, original)) if a != b),
                         min(len(s), len(original)))
            diffs.append(f"{label}: {len(s)} bytes, the input {len(original)}; first "
                         f"difference at byte {first}: {s[first:first + 40]!r} vs "
                         f"{original[first:first + 40]!r}")
    again = os.path.join(work, "again.pgn")
    run_bytes([args.bin, "annotate", annotated, "--db", db, "-o", again])
    with open(again, "rb") as f:
        twice = f.read()
    if twice != text:
        first = next((i for i, (a, b) in enumerate(zip(twice, text)) if a != b),
                     min(len(twice), len(text)))
        diffs.append(f"annotated twice: {len(twice)} bytes, once {len(text)}; first "
                     f"difference at byte {first}: {twice[first:first + 60]!r}")
    chk.result("--strip and annotating again", not diffs,
               f"{len(original)} bytes in, {len(text)} bytes annotated", diffs)

    # The syntax other readers rely on (ChessBase, lichess, SCID are not here to ask).
    diffs, comments = [], 0
    body = text.decode("latin-1")
    for m in re.finditer(r"\{pawndex:", body):
        comments += 1
        end = body.find("}", m.end())
        inner = body[m.end():end]
        if end < 0 or "{" in inner:
            diffs.append(f"byte {m.start()}: a pawndex comment with a brace inside or no end: "
                         f"{body[m.start():m.start() + 80]!r}")
    bare = re.sub(r"\{[^}]*\}", "", body)
    if "pawndex:" in bare:
        diffs.append("`pawndex:` outside a brace comment")
    lines = body.splitlines()
    longest = max((len(line) for line in lines), default=0)
    over79 = sum(1 for line in lines if len(line) > 79)
    over255 = sum(1 for line in lines if len(line) > 255)
    in_lines = original.decode("latin-1").splitlines()
    in_longest = max((len(line) for line in in_lines), default=0)
    chk.result("comment syntax", not diffs,
               f"{comments} pawndex comments, each one brace comment without braces inside; "
               f"lines: the longest {longest} characters (input {in_longest}), "
               f"{over79} over 79, {over255} over 255, {len(lines)} lines "
               f"(input {len(in_lines)})", diffs)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as error:  # noqa: BLE001 - any failure is a failed check
        say(f"FAIL: {error}")
        sys.exit(1)
