#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plans agreement: every figure of `pawndex plans` equals an independent replay of the games.

Takes the first games (12,000 by default) of ../shared/corpus/masters-1.pgn.zst (relative to
the repository) into a temporary PGN file, indexes it with `pawndex index` into a temporary
database, and replays every game the database stored (table `games`: its byte offset in that
file) from its PGN text with python-chess, square by square. Nothing of pawndex's Rust code is
used: the named structures are classified here from the catalogue's TOML files
(structures/*.toml, rules of docs/structures.md), and the figures are computed here from the
rules of docs/plans.md.

For each of five requests (`--structure-name carlsbad`; the colour-reversed form the slice
reaches most often, isolani~ when it is common; `--structure-name isolani`, whose breaks and
other exits carry both sides' moves; `--structure-name carlsbad --min-elo 2500`,
the filter applied here from the WhiteElo and BlackElo tags; `--structure FEN` of the most
common exact pawn structure at ply 20) it runs `pawndex plans ... --format json --top 1000
--model-games 50` and compares every figure with the replay's: games, plies, results,
baseline (per side), moves and replies (san, side, piece, to, games, median_move, score,
delta; compared as sets keyed by side and san, and checked to be sorted by games), breaks and
other_exits (keyed by side, san and leads_to; written, piece, to, games, median_move,
score_after, delta), squares (the three position counts and all 64 shares of every side,
piece kind and all/won/lost), decades (over every game of the database passing the filter)
and the model games (ids in order, typicality, stay, entered ply, ratings, result, date).
It also checks that the database's stored moves and ply counts are those of the replay.

Needs Python 3.11 or later (tomllib) and python-chess (tests/engines/requirements.txt).
Exit status 0 when every figure agrees, 1 on any disagreement or failure. Without
../shared/corpus it prints SKIP and exits 0, or 1 when CI=true.
"""

import argparse
import array
import collections
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import tomllib

import chess
import chess.pgn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARD = "masters-1.pgn.zst"
TOP = 1000
MODEL_GAMES = 50
# docs/plans.md: the winning side's 10 most played moves make a game's typicality.
TYPICAL_MOVES = 10
# The ply of the exact structure asked for (its most common pawns there).
EXACT_PLY = 20
SIDES = ("white", "black")
ROLES = ((chess.PAWN, "pawn"), (chess.KNIGHT, "knight"), (chess.BISHOP, "bishop"),
         (chess.ROOK, "rook"), (chess.QUEEN, "queen"), (chess.KING, "king"))
# Outcomes, in the order of the JSON's `results`.
WHITE_WINS, DRAW, BLACK_WINS, UNKNOWN = range(4)
RESULTS = {"1-0": WHITE_WINS, "1/2-1/2": DRAW, "0-1": BLACK_WINS}


def say(msg=""):
    print(msg, flush=True)


class Check:
    """Collects pass/fail lines; the exit status is 1 when anything failed."""

    def __init__(self):
        self.failures = []
        self.passed = 0

    def result(self, name, ok, detail, diffs=()):
        say(f"  {'ok  ' if ok else 'FAIL'} {name}: {detail}")
        if ok:
            self.passed += 1
        else:
            self.failures.append(name)
            diffs = list(diffs)
            if diffs:
                say(f"        {len(diffs)} difference{'s' if len(diffs) > 1 else ''}"
                    f"{', the first 5' if len(diffs) > 5 else ''}:")
            for d in diffs[:5]:
                say(f"        {d}")


def run(cmd):
    """Runs a command; its standard output, or an exception naming the command."""
    done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit status {done.returncode}\n{done.stderr}")
    return done.stdout


# --- The catalogue, read from structures/*.toml (docs/structures.md) -------------------------

def file_squares(letter):
    """The squares of a file where a pawn can stand (ranks 2 to 7)."""
    f = ord(letter) - ord("a")
    return {chess.square(f, r) for r in range(1, 7)}


def squares_of(text, files):
    """A square `d4`, or with `files` a file letter standing for its squares."""
    if files and len(text) == 1:
        return file_squares(text)
    return {chess.parse_square(text)}


def turned(squares):
    """The squares on the board turned (rank r becomes rank 9 - r)."""
    return {chess.square_mirror(s) for s in squares}


class Side:
    """One side's conditions as sets of squares."""

    def __init__(self, table):
        self.pawns = set().union(*(squares_of(s, False) for s in table.get("pawns", [])))
        self.none = set().union(*(squares_of(s, True) for s in table.get("none", [])))
        self.one_of = [set().union(*(squares_of(s, False) for s in l))
                       for l in table.get("one_of", [])]
        self.count = []
        for c in table.get("count", []):
            files = set().union(*(file_squares(f) for f in c["files"]))
            self.count.append((files, c.get("min", 0), c.get("max", 255)))

    def turned(self):
        t = Side({})
        t.pawns, t.none = turned(self.pawns), turned(self.none)
        t.one_of = [turned(l) for l in self.one_of]
        t.count = [(turned(f), lo, hi) for f, lo, hi in self.count]
        return t

    def conditions(self):
        # A square counts 1 (a file 6), a one_of list 1, a count 1.
        return len(self.pawns) + len(self.none) + len(self.one_of) + len(self.count)

    def matches(self, pawns):
        return (self.pawns <= pawns and not (self.none & pawns)
                and all(l & pawns for l in self.one_of)
                and all(lo <= len(f & pawns) <= hi for f, lo, hi in self.count))


class Catalogue:
    """The forms (key, reversed) in match order; `name` classifies two pawn bitboards."""

    def __init__(self, folder):
        forms = []
        for entry in sorted(os.listdir(folder)):
            if not entry.endswith(".toml"):
                continue
            with open(os.path.join(folder, entry), "rb") as f:
                d = tomllib.load(f)
            key = entry[:-len(".toml")]
            white, black = Side(d.get("white", {})), Side(d.get("black", {}))
            conditions = white.conditions() + black.conditions()
            priority = d.get("priority", 0)
            forms.append(((-priority, -conditions, key, 0), key, False, white, black))
            if d.get("reversed", False):
                # Colours swapped, board turned: White's rule is Black's turned.
                forms.append(((-priority, -conditions, key, 1), key, True,
                              black.turned(), white.turned()))
        forms.sort(key=lambda f: f[0])
        self.forms = [f[1:] for f in forms]
        self.cache = {}

    def name(self, white, black):
        """`KEY`, `KEY~` for a reversed form, or None."""
        got = self.cache.get((white, black), 0)
        if got != 0:
            return got
        w, b = set(chess.SquareSet(white)), set(chess.SquareSet(black))
        got = None
        for key, rev, wr, br in self.forms:
            if wr.matches(w) and br.matches(b):
                got = key + ("~" if rev else "")
                break
        self.cache[(white, black)] = got
        return got


# --- The games --------------------------------------------------------------------------------

def make_slice(corpus_file, games, path):
    """The first `games` game records of the shard, byte for byte, into `path`."""
    z = subprocess.Popen(["zstd", "-dc", corpus_file], stdout=subprocess.PIPE,
                         stdin=subprocess.DEVNULL)
    n, in_tags = 0, False
    with open(path, "wb") as out:
        for line in z.stdout:
            if line.startswith(b"[Event ") and not in_tags:
                n += 1
                if n > games:
                    break
            in_tags = line.startswith(b"[")
            out.write(line)
    z.stdout.close()
    z.kill()
    z.wait()
    return min(n, games)


class Collector(chess.pgn.BaseVisitor):
    """One game's tags, mainline moves and pawns at every ply (variations skipped)."""

    def begin_game(self):
        self.tags, self.moves, self.pawns, self.stored = {}, [], array.array("Q"), []
        self.board = None

    def visit_header(self, tag, value):
        self.tags.setdefault(tag, value)

    def visit_board(self, board):
        if self.board is None:
            self.board = board

    def begin_variation(self):
        return chess.pgn.SKIP

    def visit_move(self, board, move):
        self.pawns.append(int(board.pieces_mask(chess.PAWN, chess.WHITE)))
        self.pawns.append(int(board.pieces_mask(chess.PAWN, chess.BLACK)))
        self.moves.append(move)
        # docs/schema.md's encoding: castling is king square to rook square.
        to = move.to_square
        if board.is_castling(move):
            to = chess.square(7 if chess.square_file(to) == 6 else 0, chess.square_rank(to))
        self.stored.append(move.from_square | to << 6 | (move.promotion or 0) << 12)

    def end_game(self):
        if self.board is not None:
            self.pawns.append(int(self.board.pieces_mask(chess.PAWN, chess.WHITE)))
            self.pawns.append(int(self.board.pieces_mask(chess.PAWN, chess.BLACK)))

    def handle_error(self, error):
        raise error

    def result(self):
        return self


def elo(tags, tag):
    """A rating tag's integer, else None."""
    v = tags.get(tag, "").strip()
    return int(v) if re.fullmatch(r"[+-]?[0-9]+", v) else None


def decade(date):
    """`1990s` for a date of the 1990s, None for an unknown year."""
    year = (date or "")[:4]
    return f"{int(year) // 10 * 10}s" if len(year) == 4 and year.isdigit() else None


class Game:
    def __init__(self, gid, c, catalogue):
        self.id = gid
        self.tags = c.tags
        self.start = c.tags.get("FEN")
        self.moves = c.moves
        self.pawns = [(c.pawns[i], c.pawns[i + 1]) for i in range(0, len(c.pawns), 2)]
        self.names = [catalogue.name(w, b) for w, b in self.pawns]
        self.outcome = RESULTS.get(c.tags.get("Result"), UNKNOWN)
        self.white_elo, self.black_elo = elo(c.tags, "WhiteElo"), elo(c.tags, "BlackElo")
        self.decade = decade(c.tags.get("Date"))


def one_game(chunk):
    """A game's text with its blank lines dropped, one put back after the tags: some records
    have two blank lines there, which python-chess's reader takes for the end of the game."""
    lines = [l for l in chunk.splitlines() if l.strip()]
    tags = next((i for i, l in enumerate(lines) if not l.startswith("[")), len(lines))
    return "\n".join(lines[:tags] + [""] + lines[tags:]) + "\n"


def replay_all(db, text, catalogue, chk):
    """Every game the database stored, replayed from its PGN text at its offset."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT id, offset, plies, moves FROM games ORDER BY id").fetchall()
    con.close()
    games, moves_differ, plies = [], [], 0
    for gid, offset, stored_plies, blob in rows:
        end = text.find("\n[Event ", offset + 1)
        c = chess.pgn.read_game(io.StringIO(one_game(text[offset:end if end > 0 else None])),
                                Visitor=Collector)
        g = Game(gid, c, catalogue)
        stored = array.array("H", c.stored).tobytes() if sys.byteorder == "little" else None
        if stored_plies != len(g.moves) or (stored is not None and stored != blob):
            moves_differ.append(f"game {gid}: pawndex stored {stored_plies} plies, the PGN "
                                f"replays {len(g.moves)}" + ("" if stored == blob else
                                                             " (the stored moves differ)"))
        plies += len(g.moves)
        games.append(g)
    chk.result("stored games replayed", not moves_differ,
               f"{len(games)} games, {plies} plies; stored moves and plies equal the PGN's "
               f"replay in {len(games) - len(moves_differ)}", moves_differ)
    return games


# --- What plans should answer (docs/plans.md) -------------------------------------------------

def plain_san(san):
    """(san without check mark and disambiguation, piece, to) from python-chess's SAN."""
    s = san.rstrip("+#")
    if s in ("O-O", "O-O-O"):
        return s, "king", None
    m = re.fullmatch(r"([NBRQK])[a-h]?[1-8]?(x?)([a-h][1-8])", s)
    if m:
        piece = {"N": "knight", "B": "bishop", "R": "rook", "Q": "queen", "K": "king"}[m[1]]
        return m[1] + m[2] + m[3], piece, m[3]
    m = re.fullmatch(r"(?:[a-h]x)?([a-h][1-8])(?:=[NBRQ])?", s)
    if not m:
        raise ValueError(f"unexpected SAN {san!r}")
    return s, "pawn", m[1]


def round1(v):
    return None if v is None else float(f"{v:.1f}")


def side_score(by_outcome, side):
    """The side's score in percent over the games with a result, None without one."""
    wins = by_outcome[WHITE_WINS if side == "white" else BLACK_WINS]
    scored = by_outcome[WHITE_WINS] + by_outcome[DRAW] + by_outcome[BLACK_WINS]
    return (50 * (2 * wins + by_outcome[DRAW]) / scored) if scored else None


def lower_median(numbers):
    numbers = sorted(numbers)
    return numbers[(len(numbers) - 1) // 2]


class Expected:
    """The figures of one request, computed from the replay."""

    def __init__(self, games, inside, passes, catalogue):
        self.games = [0] * 4
        self.positions = [0] * 4
        # squares[outcome][side][piece][square]
        self.squares = [[[[0] * 64 for _ in ROLES] for _ in SIDES] for _ in range(4)]
        # (side, san, reply) -> {piece, to, games: [(outcome, number)]}
        self.moves = collections.defaultdict(list)
        self.info = {}
        self.exits = collections.defaultdict(list)
        self.visits = []
        self.decades = collections.Counter()
        self.decades_in = collections.Counter()
        for g in games:
            if not passes(g):
                continue
            self.decades[g.decade] += 1
            flags = [inside(g, ply) for ply in range(len(g.pawns))]
            if any(flags):
                self.decades_in[g.decade] += 1
                self.add(g, flags, catalogue)

    def add(self, g, flags, catalogue):
        o = g.outcome
        board = chess.Board(g.start) if g.start else chess.Board()
        firsts, exits, stay = {}, {}, 0
        captured_on = None
        last = len(g.moves)
        for ply in range(last + 1):
            here = flags[ply]
            if here:
                stay += 1
                self.positions[o] += 1
                for s, color in enumerate((chess.WHITE, chess.BLACK)):
                    for r, (role, _) in enumerate(ROLES):
                        counts = self.squares[o][s][r]
                        for sq in board.pieces(role, color):
                            counts[sq] += 1
            if ply == last:
                break
            m = g.moves[ply]
            capture = board.is_capture(m)
            if here:
                side = "white" if board.turn == chess.WHITE else "black"
                san, piece, to = plain_san(board.san(m))
                if to is None:  # castling: the king's square
                    to = chess.square_name(m.to_square)
                self.info[(side, san)] = (piece, to)
                number = board.fullmove_number
                reply = board.is_check() or (capture and captured_on == m.to_square)
                firsts.setdefault((side, san, reply), number)
                if not flags[ply + 1]:
                    board.push(m)
                    leads_to = catalogue.name(int(board.pieces_mask(chess.PAWN, chess.WHITE)),
                                              int(board.pieces_mask(chess.PAWN, chess.BLACK)))
                    board.pop()
                    exits.setdefault((side, san, leads_to), number)
            captured_on = m.to_square if capture else None
            board.push(m)
        self.games[o] += 1
        for key, number in firsts.items():
            self.moves[key].append((o, number))
        for key, number in exits.items():
            self.exits[key].append((o, number))
        plan = {(side, san) for side, san, reply in firsts if not reply}
        self.visits.append((g, stay, flags.index(True), plan))

    def baseline(self, side):
        return side_score(self.games, side)

    def row(self, side, san, plays):
        by = [0] * 4
        for o, _ in plays:
            by[o] += 1
        score = side_score(by, side)
        base = self.baseline(side)
        delta = None if score is None or base is None else round1(round1(score) - round1(base))
        piece, to = self.info[(side, san)]
        return {"san": san, "side": side, "piece": piece, "to": to, "games": len(plays),
                "median_move": lower_median([n for _, n in plays]), "score": round1(score),
                "delta": delta, "exact": (score, base)}

    def move_list(self, side, reply):
        return {(side, san): self.row(side, san, plays)
                for (s, san, r), plays in self.moves.items() if s == side and r == reply}

    def exit_list(self, pawn):
        out = {}
        for (side, san, leads_to), plays in self.exits.items():
            row = self.row(side, san, plays)
            if (row["piece"] == "pawn") != pawn:
                continue
            row["score_after"] = row.pop("score")
            row["written"] = ("…" if side == "black" else "") + san
            row["leads_to"] = leads_to
            out[(side, san, leads_to)] = row
        return out

    def squares_of(self, side):
        s = SIDES.index(side)
        won, lost = (WHITE_WINS, BLACK_WINS) if side == "white" else (BLACK_WINS, WHITE_WINS)
        groups = {"all": range(4), "won": [won], "lost": [lost]}
        out = {"positions": {k: sum(self.positions[o] for o in os_) for k, os_ in groups.items()}}
        for r, (_, name) in enumerate(ROLES):
            out[name] = {}
            for k, os_ in groups.items():
                of = out["positions"][k]
                out[name][k] = [round1(100 * sum(self.squares[o][s][r][sq] for o in os_) / of)
                                if of else None for sq in range(64)]
        return out

    def model_games(self):
        typical = {}
        for side in SIDES:
            rows = sorted(self.move_list(side, False).values(),
                          key=lambda r: (-r["games"], r["san"]))
            typical[side] = {(side, r["san"]) for r in rows[:TYPICAL_MOVES]}
        ranked = []
        for g, stay, entered, plan in self.visits:
            count = {side: len(plan & typical[side]) for side in SIDES}
            t = {WHITE_WINS: count["white"], BLACK_WINS: count["black"],
                 DRAW: min(count.values()), UNKNOWN: 0}[g.outcome]
            rating = (g.white_elo + g.black_elo
                      if g.white_elo is not None and g.black_elo is not None else None)
            ranked.append(((-t, rating is None, -(rating or 0), -stay, g.id),
                           {"id": g.id, "typicality": t, "stay": stay, "entered_ply": entered,
                            "white_elo": g.white_elo, "black_elo": g.black_elo,
                            "result": g.tags.get("Result"), "date": g.tags.get("Date")}))
        ranked.sort(key=lambda x: x[0])
        return [r for _, r in ranked]


# --- Comparing --------------------------------------------------------------------------------

def compare_fields(name, want, got, chk, fields):
    diffs = [f"{f}: replay {want.get(f)!r}, pawndex {got.get(f)!r}"
             for f in fields if want.get(f) != got.get(f)]
    chk.result(name, not diffs, ", ".join(f"{f} {want.get(f)}" for f in fields), diffs)


def compare_list(name, want, got_rows, key, chk, fields):
    """`want`: key -> row; `got_rows`: pawndex's list. Compared as sets (pawndex keeps the
    first TOP of its order), and pawndex's order checked to be by games, most first."""
    diffs = []
    counts = [r["games"] for r in got_rows]
    if counts != sorted(counts, reverse=True):
        diffs.append(f"not sorted by games (most first): {counts[:20]}")
    got = {}
    for r in got_rows:
        k = key(r)
        if k in got:
            diffs.append(f"{k} listed twice")
        got[k] = r
    if len(want) > TOP:
        # pawndex lists the TOP most played: compare those played more than its last one.
        floor = min(counts) if counts else 0
        want = {k: v for k, v in want.items() if v["games"] > floor}
        got_cmp = {k: v for k, v in got.items() if v["games"] > floor}
        if len(got_rows) != TOP:
            diffs.append(f"{len(got_rows)} entries listed, replay has more than {TOP}")
    else:
        got_cmp = got
    for k in sorted(set(want) - set(got_cmp), key=str):
        diffs.append(f"only in the replay: {k} {want[k]}")
    for k in sorted(set(got_cmp) - set(want), key=str):
        diffs.append(f"only in pawndex: {k} {got_cmp[k]}")
    for k in sorted(set(want) & set(got_cmp), key=str):
        for f in fields:
            if want[k].get(f) != got_cmp[k].get(f):
                note = ""
                if f in ("score", "score_after", "delta"):
                    note = (f" (the score unrounded {want[k]['exact'][0]}, the baseline "
                            f"{want[k]['exact'][1]})")
                diffs.append(f"{k} {f}: replay {want[k].get(f)!r}, pawndex "
                             f"{got_cmp[k].get(f)!r}{note}")
    games = sum(r["games"] for r in want.values())
    chk.result(name, not diffs, f"{len(got_rows)} entries ({len(want)} in the replay), "
               f"{games} game counts", diffs)


MOVE_FIELDS = ("san", "side", "piece", "to", "games", "median_move", "score", "delta")
EXIT_FIELDS = ("san", "written", "side", "piece", "to", "games", "median_move", "score_after",
               "delta", "leads_to")


def compare(label, e, doc, chk):
    say(f"\n{label}")
    results = {"white_wins": e.games[WHITE_WINS], "draws": e.games[DRAW],
               "black_wins": e.games[BLACK_WINS], "unknown": e.games[UNKNOWN]}
    want = {"games": sum(e.games), "plies": sum(e.positions), "results": results,
            "typical_moves": TYPICAL_MOVES}
    compare_fields("games, plies, results", want, doc, chk, list(want))
    if want["games"] == 0:
        chk.result("the request reaches games", False, "no game in the structure")
        return
    base = {side: {"score": round1(e.baseline(side)),
                   "games": e.games[WHITE_WINS] + e.games[DRAW] + e.games[BLACK_WINS]}
            for side in SIDES}
    compare_fields("baseline", base, doc["baseline"], chk, list(SIDES))
    for side in SIDES:
        for lst, reply in (("moves", False), ("replies", True)):
            compare_list(f"{lst} of {side}", e.move_list(side, reply), doc[lst][side],
                         lambda r: (r["side"], r["san"]), chk, MOVE_FIELDS)
    for lst, pawn in (("breaks", True), ("other_exits", False)):
        compare_list(lst, e.exit_list(pawn), doc[lst],
                     lambda r: (r["side"], r["san"], r["leads_to"]), chk, EXIT_FIELDS)
    for side in SIDES:
        want, got = e.squares_of(side), doc["squares"][side]
        diffs = []
        if want["positions"] != got.get("positions"):
            diffs.append(f"positions: replay {want['positions']}, pawndex {got.get('positions')}")
        shares = 0
        for _, piece in ROLES:
            for k in ("all", "won", "lost"):
                w, g = want[piece][k], got.get(piece, {}).get(k)
                shares += len(w)
                if w != g:
                    bad = [i for i in range(64) if g is None or len(g) != 64 or w[i] != g[i]]
                    diffs.append(f"{piece} {k}: {len(bad)} squares differ, first "
                                 f"{chess.square_name(bad[0])}: replay {w[bad[0]]}, pawndex "
                                 f"{None if g is None or len(g) != 64 else g[bad[0]]}")
        chk.result(f"squares of {side}", not diffs,
                   f"positions {want['positions']}, {shares} shares", diffs)
    want = {d: {"games": n, "structure_games": e.decades_in[d],
                "share": round1(100 * e.decades_in[d] / n)} for d, n in e.decades.items()}
    got = {d["decade"]: {k: d[k] for k in ("games", "structure_games", "share")}
           for d in doc["decades"]}
    diffs = [f"{d}: replay {want.get(d)}, pawndex {got.get(d)}"
             for d in sorted(set(want) | set(got), key=str) if want.get(d) != got.get(d)]
    chk.result("decades", not diffs, f"{len(want)} decades, {sum(e.decades.values())} games "
               "under the filter", diffs)
    ranked = e.model_games()
    want = ranked[:MODEL_GAMES]
    got = doc["model_games"]
    diffs = []
    if [m["id"] for m in want] != [m["id"] for m in got]:
        diffs.append(f"ids: replay {[m['id'] for m in want][:12]}…, pawndex "
                     f"{[m['id'] for m in got][:12]}…")
    for w, g in zip(want, got):
        for f in w:
            if w[f] != g.get(f):
                diffs.append(f"game {w['id']} {f}: replay {w[f]!r}, pawndex {g.get(f)!r}")
    tops = collections.Counter(m["typicality"] for m in want)
    chk.result("model games", not diffs, f"{len(got)} games in order of {len(ranked)}, "
               f"typicality {dict(sorted(tops.items(), reverse=True))}", diffs)


# --- Main -------------------------------------------------------------------------------------

def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "pawndex"),
                   help="the binary (default: target/release/pawndex)")
    p.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    p.add_argument("--games", type=int, default=12000,
                   help=f"how many games of {SHARD} to take (default 12000)")
    p.add_argument("--work", help="keep the slice and the database in this directory")
    return p.parse_args()


def skip_or_fail(msg):
    ci = os.environ.get("CI") == "true"
    say("*" * 78)
    say(f"{'FAIL' if ci else 'SKIP'}: plans agreement check: {msg}")
    say("*" * 78)
    return 1 if ci else 0


def main():
    args = parse_args()
    shard = os.path.join(args.corpus, SHARD)
    if not os.path.isfile(shard):
        return skip_or_fail(f"{shard} is not there")
    if not os.access(args.bin, os.X_OK):
        say(f"error: {args.bin} not found: run cargo build --release first")
        return 1
    work = args.work or tempfile.mkdtemp(prefix="pawndex-plans-")
    os.makedirs(work, exist_ok=True)
    try:
        return check(args, shard, work)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


def check(args, shard, work):
    start = time.monotonic()
    chk = Check()
    pgn, db = os.path.join(work, "slice.pgn"), os.path.join(work, "plans.db")
    n = make_slice(shard, args.games, pgn)
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    run([args.bin, "index", "--quiet", "--db", db, pgn])
    say(f"{n} games of {SHARD} indexed by {args.bin} ({time.monotonic() - start:.1f} s)")
    catalogue = Catalogue(os.path.join(ROOT, "structures"))
    with open(pgn, "rb") as f:
        # Latin-1: one character per byte, so the stored byte offsets index the text.
        text = f.read().decode("latin-1")
    games = replay_all(db, text, catalogue, chk)
    say(f"replayed with python-chess {chess.__version__} ({time.monotonic() - start:.1f} s)")

    reversed_forms = collections.Counter(
        name for g in games for name in set(g.names) if name and name.endswith("~"))
    reverse = "isolani~" if reversed_forms["isolani~"] >= 100 else \
        reversed_forms.most_common(1)[0][0]
    at_ply = collections.Counter(g.pawns[EXACT_PLY] for g in games if len(g.pawns) > EXACT_PLY)
    exact = at_ply.most_common(1)[0][0]
    example = next(g for g in games if len(g.pawns) > EXACT_PLY and g.pawns[EXACT_PLY] == exact)
    board = chess.Board(example.start) if example.start else chess.Board()
    for m in example.moves[:EXACT_PLY]:
        board.push(m)
    fen = board.fen()

    def named(form):
        return lambda g, ply: g.names[ply] == form

    def everyone(_g):
        return True

    def rated(n):
        return lambda g: (g.white_elo is not None and g.black_elo is not None
                          and g.white_elo >= n and g.black_elo >= n)

    requests = [
        (["--structure-name", "carlsbad"], named("carlsbad"), everyone),
        (["--structure-name", reverse], named(reverse), everyone),
        # The Isolani's breaks: Black's piece captures on d4 and its pawn breaks, by side.
        (["--structure-name", "isolani"], named("isolani"), everyone),
        (["--structure-name", "carlsbad", "--min-elo", "2500"], named("carlsbad"), rated(2500)),
        (["--structure", fen], lambda g, ply: g.pawns[ply] == exact, everyone),
    ]
    for options, inside, passes in requests:
        t = time.monotonic()
        doc = json.loads(run([args.bin, "plans", *options, "--db", db, "--format", "json",
                              "--top", str(TOP), "--model-games", str(MODEL_GAMES)]))
        e = Expected(games, inside, passes, catalogue)
        compare(f"pawndex plans {' '.join(options)} ({sum(e.games)} games, "
                f"{time.monotonic() - t:.1f} s)", e, doc, chk)

    say(f"\n{chk.passed} lists agree, {len(chk.failures)} differ "
        f"({time.monotonic() - start:.0f} s)")
    if chk.failures:
        say("FAIL: " + "; ".join(chk.failures))
        return 1
    say("ok: every figure of pawndex plans equals the python-chess replay")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as error:  # noqa: BLE001 - any failure is a failed check
        say(f"FAIL: {error}")
        sys.exit(1)
