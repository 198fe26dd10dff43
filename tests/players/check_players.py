#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Players agreement: every number of `pawndex player` equals an independent computation.

Takes the first games (62,500 by default: the collections of Adams to Carlsen) of
../shared/corpus/masters-1.pgn.zst and the first 20,000 of masters-2.pgn.zst (relative to the
repository) into temporary PGN files and indexes each with `pawndex index` into its own temporary
database. Everything expected is computed here from the databases' public tables and views only
(`games`, `ply_features`, `structure_transitions`, `structure_names`; never pawndex's own
`player_names` nor `structure_results`, which are what is under test) with the rules of
docs/players.md, and the moves with a python-chess replay of the stored moves (the rules of
docs/plans.md):

- names: the folding rule and the merging of spellings into players, written again here from
  docs/players.md, on every spelling of the database; every player that
  `pawndex players --search TEXT --format json` lists (all of them with an empty TEXT, then the
  profiled players' surnames and a few letters) must hold exactly the spellings this rule groups,
  with the shown name, games (as White plus as Black, docs/schema.md), years, ratings and most
  played ECO codes; and typed names ("Carlsen, M.", "carlsen", "Levon Aronian", an initials
  spelling several players match, an unknown name) must find the player the documented steps
  find, or exit 1 naming every candidate;
- profiles: `pawndex player NAME --format json` for several players chosen by querying the
  database (the most games; a player whose spellings merge, e.g. "Carlsen,M" + "Carlsen,Magnus";
  `--as black`; `--time-class` of the most common class; `--vs` the most frequent opponent, whose
  profile comes along; `--baseline` the second database), compared field by field: `player`,
  `names`, `as`, `baseline_source`, `rating`, `games` per colour, every row of `structures`
  (named and exact: games, plies, wins, draws, losses, score, low, high, baseline,
  baseline_games, baseline_band, baseline_band_games, delta, trust, and the games of every move
  and break listed), `best`, `worst`, `years`, `head_to_head` and `opponent`.

Needs Python 3 and python-chess (tests/engines/requirements.txt). Exit status 0 when every number
agrees, 1 on any disagreement or failure. Without ../shared/corpus it prints SKIP and exits 0, or
1 when CI=true.
"""

import argparse
import collections
import json
import re
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import unicodedata

import chess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "plans"))
# The plans check's pieces that are not under test here: its pass/fail lines, its slice of a
# shard, its SAN without check marks and disambiguation (docs/plans.md) and its rounding.
from check_plans import Check, make_slice, plain_san, round1, run, say  # noqa: E402

SHARD, BASELINE_SHARD = "masters-1.pgn.zst", "masters-2.pgn.zst"
SIDES = ("white", "black")
# docs/players.md: the exact structures listed per colour, their least stay, the rows that
# may be best or worst, the moves and breaks listed per row, the rating band, the interval's z.
EXACT = 10
EXACT_STAY = 8
BEST_MIN = 10
BEST = 5
TOP_MOVES = 5
YEAR_FORMS = 5
BAND = 100
Z = 1.96
POINTS = {"1-0": (1, 0), "1/2-1/2": (0, 1), "0-1": (0, 0)}


# --- Names (docs/players.md "Names") -----------------------------------------------------------

# Letters that lose no combining mark under NFKD but fold to plain letters.
SPECIAL = {"ß": "ss", "ł": "l", "ø": "o", "đ": "d", "ð": "d", "þ": "th", "æ": "ae", "œ": "oe",
           "ı": "i", "ħ": "h", "ŀ": "l"}


def fold(name):
    """Accents and case off, a period a space, runs of spaces one, no space by a comma or at
    either end."""
    s = "".join(SPECIAL.get(c, c) for c in name.lower())
    s = "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))
    s = "".join(SPECIAL.get(c, c) for c in s.lower())
    s = " ".join(s.replace(".", " ").split())
    return ",".join(part.strip() for part in s.split(","))


def split_name(folded):
    surname, _, given = folded.partition(",")
    return surname, given


def given_words(folded):
    """The given names of a folded name as words (split at spaces and hyphens)."""
    _, _, given = folded.partition(",")
    return [w for w in re.split(r"[ ,-]+", given) if w]


def plain(folded):
    """docs/players.md: one comma, given names of letters, spaces and hyphens only."""
    if folded.count(",") != 1:
        return False
    given = folded.partition(",")[2]
    return bool(given) and all(c.isalpha() or c in " -" for c in given)


def abbreviates(short, long):
    """docs/players.md: both plain, one surname, each given word of `short` starting the word of
    `long` at the same place, the two not alike."""
    if short == long or not plain(short) or not plain(long):
        return False
    if split_name(short)[0] != split_name(long)[0]:
        return False
    a, b = given_words(short), given_words(long)
    return bool(a) and len(a) <= len(b) and all(y.startswith(x) for x, y in zip(a, b))


def initials(given):
    """The given part's words when they are all one letter (to pick a spelling to type)."""
    words = given.split()
    if words and all(len(w) == 1 and w.isalpha() for w in words):
        return words
    return None


class Players:
    """The players of a database (docs/players.md): spellings with one folded form are one
    player; an abbreviation joins the one complete form it abbreviates (complete: abbreviating
    none), and stays alone (ambiguous) when it abbreviates several."""

    def __init__(self, spelling_games):
        by_fold = collections.defaultdict(list)
        for name in spelling_games:
            by_fold[fold(name)].append(name)
        by_surname = collections.defaultdict(list)
        for f in by_fold:
            by_surname[split_name(f)[0]].append(f)
        complete = {f: not any(abbreviates(f, g) for g in by_surname[split_name(f)[0]])
                    for f in by_fold}
        self.merged_into = {}
        self.ambiguous = {}
        for f in by_fold:
            if complete[f]:
                continue
            targets = [g for g in by_surname[split_name(f)[0]]
                       if complete[g] and abbreviates(f, g)]
            if len(targets) == 1:
                self.merged_into[f] = targets[0]
            else:
                self.ambiguous[f] = targets
        groups = {f: set(names) for f, names in by_fold.items() if f not in self.merged_into}
        for f, t in self.merged_into.items():
            groups[t] |= set(by_fold[f])
        self.key = {frozenset(g): f for f, g in groups.items()}
        self.groups = list(self.key)
        self.by_key = {f: g for g, f in self.key.items()}
        self.folded = {n: fold(n) for n in spelling_games}
        self.of = {name: g for g in self.groups for name in g}
        self.games = spelling_games

    def resolve(self, typed):
        """docs/players.md's four steps: ("one", group), ("ambiguous", [groups]) or
        ("unknown", [])."""
        f = fold(typed)
        if not f:
            return "unknown", []
        kind, found = self.resolve_folded(f)
        if kind != "unknown" or "," in f or " " not in f:
            return kind, found
        given, _, last = f.rpartition(" ")
        return self.resolve_folded(f"{last},{given}")

    def resolve_folded(self, f):
        def answer(found):
            found = list(dict.fromkeys(found))
            if len(found) == 1:
                return "one", found[0]
            return ("ambiguous", found) if found else ("unknown", [])

        spelt = [self.of[n] for n, nf in self.folded.items() if nf == f]
        if spelt:
            group = spelt[0]
            key = self.key[group]
            if key in self.ambiguous:
                return answer([self.by_key[t] for t in self.ambiguous[key]] + [group])
            return "one", group
        if "," in f:
            return answer([g for g, k in self.key.items()
                           if k not in self.ambiguous and (k == f or abbreviates(f, k))])
        return answer([g for g, k in self.key.items() if split_name(k)[0] == f])

    def shown(self, group):
        """The spelling of the group's own folded form with the most games; of tied ones the
        first in byte order."""
        own = [n for n in group if fold(n) == self.key[group]]
        return min(own, key=lambda n: (-self.games[n], n))

    def total(self, group):
        return sum(self.games[n] for n in group)


# --- The databases ----------------------------------------------------------------------------

class Game:
    __slots__ = ("id", "white", "black", "elo", "result", "date", "year", "time_class", "event",
                 "eco", "plies", "fen")


def year_of(date):
    y = (date or "")[:4]
    return int(y) if len(y) == 4 and y.isdigit() else None


class Db:
    """One database's games and, per game, the named forms it reaches with their plies."""

    def __init__(self, path, chk, label):
        self.path = path
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self.con = con
        self.games = {}
        for row in con.execute("SELECT id, white, black, white_elo, black_elo, result, date, "
                               "time_class, event, eco, plies, fen FROM games"):
            g = Game()
            (g.id, g.white, g.black, we, be, g.result, g.date, g.time_class, g.event, g.eco,
             g.plies, g.fen) = row
            g.elo = (we, be)
            g.year = year_of(g.date)
            self.games[g.id] = g
        self.name_of = dict(con.execute("SELECT key, name FROM structure_names"))
        self.spelling_games = collections.Counter()
        self.by_name = collections.defaultdict(list)
        for g in self.games.values():
            for n in {g.white, g.black} - {None}:
                self.spelling_games[n] += 1
                self.by_name[n].append(g)
        self.players = Players(self.spelling_games)
        self.label = label
        self.chk = chk
        self.plyrows = {}

    def scan(self, wanted):
        """One pass over ply_features: every game's named forms with their plies, and the
        games of the wanted exact structures (pawn bitboards) with their stays."""
        t = time.monotonic()
        self.forms = collections.defaultdict(dict)
        self.exact = collections.defaultdict(dict)
        rows = 0
        for gid, wp, bp, key, rev, n in self.con.execute(
                "SELECT game_id, white_pawns, black_pawns, structure, structure_reversed, "
                "count(*) FROM ply_features GROUP BY game_id, white_pawns, black_pawns"):
            rows += 1
            if key is not None:
                f = (key, bool(rev))
                self.forms[gid][f] = self.forms[gid].get(f, 0) + n
            if (wp, bp) in wanted:
                self.exact[(wp, bp)][gid] = n
        self.form_games = collections.defaultdict(list)
        for gid, forms in self.forms.items():
            for f in forms:
                self.form_games[f].append(gid)
        # structure_transitions must say the same games reach the same forms.
        entered = {(gid, key, bool(rev)) for gid, key, rev in self.con.execute(
            "SELECT game_id, to_structure, to_reversed FROM structure_transitions "
            "WHERE to_structure IS NOT NULL")}
        reached = {(gid, *f) for gid, forms in self.forms.items() for f in forms}
        diffs = [f"game {d[0]} reaches {d[1]}{'~' if d[2] else ''} in ply_features only"
                 for d in sorted(reached - entered)[:5]]
        diffs += [f"game {d[0]} enters {d[1]}{'~' if d[2] else ''} in structure_transitions "
                  "only" for d in sorted(entered - reached)[:5]]
        self.chk.result(f"{self.label}: ply_features and structure_transitions", not diffs,
                        f"{len(self.games)} games, {rows} (game, pawns) groups, {len(reached)} "
                        f"(game, named form) pairs ({time.monotonic() - t:.1f} s)", diffs)

    def rows_of(self, gid):
        """A game's plies: (white pawns, black pawns, form or None), ply 0 first."""
        got = self.plyrows.get(gid)
        if got is None:
            got = [(wp, bp, None if key is None else (key, bool(rev)))
                   for wp, bp, key, rev in self.con.execute(
                       "SELECT white_pawns, black_pawns, structure, structure_reversed "
                       "FROM ply_features WHERE game_id = ? ORDER BY ply", (gid,))]
            self.plyrows[gid] = got
        return got

    def fetch(self, gids):
        """Loads the plies of many games at once."""
        todo = sorted(set(gids) - set(self.plyrows))
        for i in range(0, len(todo), 500):
            part = todo[i:i + 500]
            rows = collections.defaultdict(list)
            for gid, ply, wp, bp, key, rev in self.con.execute(
                    "SELECT game_id, ply, white_pawns, black_pawns, structure, "
                    f"structure_reversed FROM ply_features WHERE game_id IN "
                    f"({','.join('?' * len(part))})", part):
                rows[gid].append((ply, wp, bp, None if key is None else (key, bool(rev))))
            for gid in part:
                self.plyrows[gid] = [r[1:] for r in sorted(rows[gid])]


# --- The replay (docs/plans.md's rules) --------------------------------------------------------

class Replays:
    """Per game and ply: (mover white?, plain SAN, piece is a pawn, reply?), from the stored
    moves played with python-chess; the pawns of every ply checked against ply_features."""

    def __init__(self, db, chk):
        self.db, self.chk = db, chk
        self.cache = {}
        self.bad = []
        self.plies = 0

    def of(self, gid):
        got = self.cache.get(gid)
        if got is not None:
            return got
        g = self.db.games[gid]
        (blob,) = self.db.con.execute("SELECT moves FROM games WHERE id = ?", (gid,)).fetchone()
        board = chess.Board(g.fen) if g.fen else chess.Board()
        rows = self.db.rows_of(gid)
        out, captured_on = [], None
        for ply in range(len(blob) // 2):
            v = blob[2 * ply] | blob[2 * ply + 1] << 8
            frm, to, promo = v & 63, (v >> 6) & 63, v >> 12
            piece = board.piece_at(frm)
            if piece and piece.piece_type == chess.KING and board.color_at(to) == board.turn:
                # docs/schema.md: castling is stored king square to rook square.
                to = chess.square(6 if to > frm else 2, chess.square_rank(frm))
            m = chess.Move(frm, to, promo or None)
            if m not in board.legal_moves:
                self.bad.append(f"game {gid} ply {ply + 1}: {m.uci()} is not legal")
                break
            capture = board.is_capture(m)
            san = plain_san(board.san(m))[0]
            reply = board.is_check() or (capture and captured_on == m.to_square)
            out.append((board.turn == chess.WHITE, san, piece.piece_type == chess.PAWN, reply))
            captured_on = m.to_square if capture else None
            board.push(m)
            self.check_pawns(gid, ply + 1, board, rows)
        self.check_pawns(gid, 0, chess.Board(g.fen) if g.fen else chess.Board(), rows)
        self.plies += len(out)
        self.cache[gid] = out
        return out

    def check_pawns(self, gid, ply, board, rows):
        want = (signed(board.pieces_mask(chess.PAWN, chess.WHITE)),
                signed(board.pieces_mask(chess.PAWN, chess.BLACK)))
        if ply >= len(rows) or rows[ply][:2] != want:
            self.bad.append(f"game {gid} ply {ply}: ply_features' pawns differ from the replay's")

    def report(self):
        self.chk.result("stored moves replayed", not self.bad,
                        f"{len(self.cache)} games, {self.plies} plies: legal, and the pawns of "
                        "every ply equal ply_features'", self.bad)


def signed(bits):
    return bits - (1 << 64) if bits >= 1 << 63 else bits


def fen_of(wp, bp):
    """The pawns as a FEN board (rank 8 first)."""
    ranks = []
    for r in range(7, -1, -1):
        s, empty = "", 0
        for f in range(8):
            bit = 1 << (8 * r + f)
            c = "P" if wp & bit else "p" if bp & bit else None
            if c is None:
                empty += 1
            else:
                s += (str(empty) if empty else "") + c
                empty = 0
        ranks.append(s + (str(empty) if empty else ""))
    return "/".join(ranks)


# --- The expected profile (docs/players.md) ----------------------------------------------------

def score_of(w, d, l):
    n = w + d + l
    return 50 * (2 * w + d) / n if n else None


def wilson(w, d, l):
    n = w + d + l
    if not n:
        return None, None
    p = (w + d / 2) / n
    z2 = Z * Z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    margin = Z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return 100 * (centre - margin), 100 * (centre + margin)


def wdl(games, colour):
    """The wins, draws and losses of the side `colour` in the games."""
    w = d = l = 0
    for g in games:
        pts = POINTS.get(g.result)
        if pts is None:
            continue
        if pts[1]:
            d += 1
        elif (pts[0] == 1) == (colour == "white"):
            w += 1
        else:
            l += 1
    return w, d, l


def tally(games, colour):
    w, d, l = wdl(games, colour)
    return {"games": len(games), "wins": w, "draws": d, "losses": l,
            "score": round1(score_of(w, d, l))}


def lower_median(v):
    v = sorted(v)
    return v[(len(v) - 1) // 2]


def delta(a, b):
    return None if a is None or b is None else round1(round1(a) - round1(b))


class Request:
    def __init__(self, label, name, names, options, db, base, as_=None, time_classes=None,
                 vs=None):
        self.label, self.name, self.names, self.options = label, name, names, options
        self.db, self.base, self.as_, self.time_classes, self.vs = db, base, as_, time_classes, vs

    def passes(self, g):
        return self.time_classes is None or g.time_class in self.time_classes

    def player_games(self, colour, names=None):
        names = names or self.names
        if self.as_ and self.as_ != colour:
            return []
        i = SIDES.index(colour)
        return [g for g in self.db.games.values()
                if (g.white, g.black)[i] in names and self.passes(g)]

    def exact_candidates(self, colour, names=None):
        """The exact pawn structures of the player's games of that colour with a stay of at
        least EXACT_STAY plies: (wp, bp) -> games."""
        games = self.player_games(colour, names)
        self.db.fetch(g.id for g in games)
        counts, plies = collections.Counter(), collections.Counter()
        for g in games:
            stays = collections.Counter((wp, bp) for wp, bp, _ in self.db.rows_of(g.id))
            for pawns, n in stays.items():
                if n >= EXACT_STAY:
                    counts[pawns] += 1
                    plies[pawns] += n
        return counts, plies


def top_exact(counts, plies):
    """The EXACT most reached, ties broken by plies; at the cut, every structure tied with the
    last one on both (pawndex then takes the pawn sets' ids, which are its own)."""
    ranked = sorted(counts, key=lambda p: (-counts[p], -plies[p]))
    if len(ranked) <= EXACT:
        return ranked, set()
    cut = (counts[ranked[EXACT - 1]], plies[ranked[EXACT - 1]])
    sure = [p for p in ranked if (counts[p], plies[p]) > cut]
    tied = {p for p in ranked if (counts[p], plies[p]) == cut}
    return sure, tied


def profile(req, replays, names, with_vs=True):
    """The document `pawndex player` should print, and per row the structures the exact rows
    may be chosen among (ties at the cut)."""
    db, base = req.db, req.base
    players = db.players
    group = frozenset(names)
    doc = {"player": players.shown(group), "names": sorted(group),
           "as": req.as_ or "both",
           "baseline_source": req.base.path if req.base is not db else None}
    games = {c: req.player_games(c, names) for c in SIDES}
    ratings = [g.elo[SIDES.index(c)] for c in SIDES for g in games[c]
               if g.elo[SIDES.index(c)] is not None]
    med = lower_median(ratings) if ratings else None
    doc["rating"] = None if med is None else {"median": med, "low": med - BAND,
                                              "high": med + BAND}
    every = games["white"] + games["black"]
    all_w = tuple(map(sum, zip(wdl(games["white"], "white"), wdl(games["black"], "black"))))
    doc["games"] = {c: tally(games[c], c) for c in SIDES}
    doc["games"]["all"] = {"games": len(every), "wins": all_w[0], "draws": all_w[1],
                           "losses": all_w[2], "score": round1(score_of(*all_w))}

    def baseline(colour, in_it, band):
        i = SIDES.index(colour)
        chosen = []
        for gid in in_it:
            g = base.games[gid]
            if (g.white, g.black)[i] in group or not req.passes(g):
                continue
            if band and not (g.elo[i] is not None and med - BAND <= g.elo[i] <= med + BAND):
                continue
            chosen.append(g)
        w, d, l = wdl(chosen, colour)
        return score_of(w, d, l), len(chosen), w + d + l

    def row(kind, key, rev, name, colour, mine, base_games, in_structure):
        """mine: {game: plies}; base_games: the baseline database's games in the structure;
        in_structure(rows, ply): is the game's position at ply in the structure."""
        gs = [db.games[gid] for gid in mine]
        w, d, l = wdl(gs, colour)
        score = score_of(w, d, l)
        low, high = wilson(w, d, l)
        b, b_games, b_scored = baseline(colour, base_games, False)
        bb, bb_games, bb_scored = baseline(colour, base_games, True) if med is not None \
            else (None, None, None)
        n = w + d + l
        shown_b = round1(b)
        if n < BEST_MIN:
            trust = "too few games"
        elif shown_b is None:
            trust = "no baseline"
        elif shown_b > round1(high):
            trust = "below"
        elif shown_b < round1(low):
            trust = "above"
        else:
            trust = "in line"
        moves, breaks = collections.defaultdict(set), collections.defaultdict(set)
        white = colour == "white"
        for g in gs:
            rows = db.rows_of(g.id)
            for ply, (mover_white, san, pawn, reply) in enumerate(replays.of(g.id)):
                if mover_white != white or not in_structure(rows, ply):
                    continue
                if not reply:
                    moves[san].add(g.id)
                if pawn and not in_structure(rows, ply + 1):
                    breaks[san].add(g.id)
        r = {"kind": kind, "key": key, "reversed": rev, "name": name, "colour": colour,
             "games": len(gs), "plies": sum(mine.values()), "wins": w, "draws": d, "losses": l,
             "score": round1(score), "low": round1(low), "high": round1(high),
             "baseline": shown_b, "baseline_games": b_games, "baseline_band": round1(bb),
             "baseline_band_games": bb_games, "delta": delta(score, b), "trust": trust,
             "moves": {s: {"san": s, "games": len(v)} for s, v in moves.items()},
             "breaks": {s: {"san": s, "games": len(v),
                            "score": round1(score_of(*wdl([db.games[i] for i in v], colour)))}
                        for s, v in breaks.items()},
             "_scored": (n, b_scored, bb_scored), "_exact": (score, b)}
        return r

    rows, ties = [], {}
    for colour in SIDES:
        reached = collections.defaultdict(dict)
        for g in games[colour]:
            for f, n in db.forms.get(g.id, {}).items():
                reached[f][g.id] = n
        for (key, rev), mine in reached.items():
            rows.append(row("named", key, rev, db.name_of.get(key), colour, mine,
                            base.form_games.get((key, rev), []),
                            lambda rs, p, f=(key, rev): p < len(rs) and rs[p][2] == f))
        counts, plies = req.exact_candidates(colour, names)
        sure, tied = top_exact(counts, plies)
        for wp, bp in sure + sorted(tied):
            mine = {}
            for g in games[colour]:
                n = sum(1 for rw, rb, _ in db.rows_of(g.id) if (rw, rb) == (wp, bp))
                if n >= EXACT_STAY:
                    mine[g.id] = n
            form = next((f for rw, rb, f in db.rows_of(next(iter(mine)))
                         if (rw, rb) == (wp, bp)), None)
            r = row("exact", fen_of(wp, bp), bool(form and form[1]),
                    db.name_of.get(form[0]) if form else None, colour, mine,
                    [gid for gid, n in base.exact.get((wp, bp), {}).items()
                     if n >= EXACT_STAY],
                    lambda rs, p, pw=(wp, bp): p < len(rs) and rs[p][:2] == pw)
            r["_stays8"] = counts[(wp, bp)]
            rows.append(r)
            if (wp, bp) in tied:
                ties[(fen_of(wp, bp), colour)] = True
    doc["structures"] = rows
    doc["_ties"] = ties
    ranked = [r for r in rows if r["_scored"][0] >= BEST_MIN and r["delta"] is not None]
    doc["best"] = sorted(ranked, key=lambda r: -r["delta"])
    doc["worst"] = sorted(ranked, key=lambda r: r["delta"])
    years = collections.defaultdict(list)
    for g in every:
        years[g.year].append(g)
    doc["years"] = {}
    # The named forms most of the profile's games reach (either colour), the tied ones at the
    # cut included.
    reach = collections.Counter(f for g in {g.id: g for g in every}.values()
                                for f in db.forms.get(g.id, {}))
    ranked = reach.most_common()
    cut = ranked[min(YEAR_FORMS, len(ranked)) - 1][1] if ranked else 0
    doc["year_forms"] = {f for f, n in ranked if n >= cut}
    doc["year_forms_sure"] = {f for f, n in ranked if n > cut}
    for y, gs in years.items():
        if y is None:
            continue
        reach = collections.Counter(f for g in {g.id: g for g in gs}.values()
                                    for f in db.forms.get(g.id, {}))
        n = len({g.id for g in gs})
        doc["years"][y] = {"year": y, "games": n,
                           "structures": {f: {"key": f[0], "reversed": f[1], "games": k,
                                              "share": round1(100 * k / n)}
                                          for f, k in reach.items()}}
    if with_vs and req.vs:
        opp = req.vs
        mutual = [g for g in db.games.values() if req.passes(g) and (
            (g.white in group and g.black in opp) or (g.black in group and g.white in opp))]
        w = d = l = 0
        lst = {}
        for g in mutual:
            colour = "white" if g.white in group else "black"
            a, b, c = wdl([g], colour)
            w, d, l = w + a, d + b, l + c
            lst[g.id] = {"id": g.id, "date": g.date, "event": g.event, "colour": colour,
                         "result": g.result, "eco": g.eco, "plies": g.plies}
        doc["head_to_head"] = {"opponent": players.shown(opp), "names": sorted(opp),
                               "games": len(mutual), "wins": w, "draws": d, "losses": l,
                               "score": round1(score_of(w, d, l)), "list": lst}
        doc["opponent"] = profile(req, replays, opp, with_vs=False)
    return doc


# --- Comparing ----------------------------------------------------------------------------------

ROW_FIELDS = ("name", "games", "plies", "wins", "draws", "losses", "score", "low", "high",
              "baseline", "baseline_games", "baseline_band", "baseline_band_games", "delta",
              "trust")


def row_key(r):
    return (r.get("kind"), r.get("key"), bool(r.get("reversed")), r.get("colour"))


def compare_top(what, want, got, diffs, fields=("games",)):
    """`got` (pawndex's list, top TOP_MOVES) against every candidate `want` (san -> row):
    the listed ones with their numbers, the most played first, none better left out."""
    counts = [m.get("games") for m in got]
    order = [(-(m.get("games") or 0), m.get("san") or "") for m in got]
    if order != sorted(order):
        diffs.append(f"{what}: not by games (most first), then SAN: {order}")
    if len(got) != min(TOP_MOVES, len(want)):
        diffs.append(f"{what}: {len(got)} listed, expected {min(TOP_MOVES, len(want))} of "
                     f"{len(want)}")
    for m in got:
        w = want.get(m.get("san"))
        if w is None:
            diffs.append(f"{what}: {m.get('san')} listed, never played there by the player")
            continue
        for f in fields:
            if w[f] != m.get(f):
                diffs.append(f"{what} {m.get('san')} {f}: expected {w[f]!r}, pawndex "
                             f"{m.get(f)!r}")
    listed = {m.get("san") for m in got}
    if got:
        least = min(counts)
        better = sorted((v["games"], s) for s, v in want.items()
                        if s not in listed and v["games"] > least)
        if better:
            diffs.append(f"{what}: left out though played in more games than {least}: "
                         f"{better[-3:]}")


def compare_profile(label, want, got, chk, opponent=False):
    say(f"\n{label}")
    diffs = []
    for f in ("player", "names", "as", "baseline_source", "rating"):
        if want[f] != got.get(f):
            diffs.append(f"{f}: expected {want[f]!r}, pawndex {got.get(f)!r}")
    chk.result("player, names, as, baseline_source, rating", not diffs,
               f"{want['player']} ({len(want['names'])} spellings), rating {want['rating']}",
               diffs)
    diffs = []
    for c in (*SIDES, "all"):
        w, g = want["games"][c], (got.get("games") or {}).get(c)
        if w != g:
            diffs.append(f"games.{c}: expected {w}, pawndex {g}")
    chk.result("games by colour", not diffs,
               ", ".join(f"{c} {want['games'][c]['games']}" for c in (*SIDES, "all")), diffs)

    # Structures: every named row; the exact rows among the candidates.
    rows = {row_key(r): r for r in want["structures"]}
    got_rows = got.get("structures") or []
    diffs, seen, moves_n, breaks_n = [], set(), 0, 0
    order = [(-r.get("games", 0), SIDES.index(r.get("colour")) if r.get("colour") in SIDES
              else 9, r.get("kind") != "named", r.get("key") or "", bool(r.get("reversed")))
             for r in got_rows]
    for i in range(1, len(order)):
        if order[i] < order[i - 1]:
            diffs.append(f"order: row {i} {row_key(got_rows[i])} ({order[i]}) after "
                         f"{row_key(got_rows[i - 1])} ({order[i - 1]})")
            break
    for r in got_rows:
        k = row_key(r)
        if k in seen:
            diffs.append(f"{k} listed twice")
        seen.add(k)
        w = rows.get(k)
        if w is None:
            diffs.append(f"{k}: listed by pawndex, not expected ({r.get('games')} games)")
            continue
        for f in ROW_FIELDS:
            if w[f] != r.get(f):
                note = ""
                if f in ("score", "baseline", "delta", "low", "high"):
                    note = f" (unrounded score, baseline {w['_exact']}; scored {w['_scored']})"
                diffs.append(f"{k} {f}: expected {w[f]!r}, pawndex {r.get(f)!r}{note}")
        compare_top(f"{k} moves", w["moves"], r.get("moves") or [], diffs)
        compare_top(f"{k} breaks", w["breaks"], r.get("breaks") or [], diffs,
                    ("games", "score"))
        moves_n += len(r.get("moves") or [])
        breaks_n += len(r.get("breaks") or [])
    named_missing = [k for k in rows if k[0] == "named" and k not in seen]
    for k in named_missing:
        diffs.append(f"{k}: expected ({rows[k]['games']} games), not listed by pawndex")
    for colour in SIDES:
        exact_got = [k for k in seen if k[0] == "exact" and k[3] == colour]
        sure = [k for k, r in rows.items() if k[0] == "exact" and k[3] == colour
                and (k[1], colour) not in want["_ties"]]
        for k in sure:
            if k not in seen:
                diffs.append(f"{k}: one of the {EXACT} exact structures most reached with a "
                             f"stay of {EXACT_STAY}+ plies ({rows[k]['_stays8']} games), not "
                             "listed")
        expected_n = min(EXACT, sum(1 for k in rows if k[0] == "exact" and k[3] == colour))
        if len(exact_got) != expected_n:
            diffs.append(f"exact rows of {colour}: {len(exact_got)}, expected {expected_n}")
    n_named = sum(1 for k in seen if k[0] == "named")
    chk.result("structures", not diffs,
               f"{len(got_rows)} rows ({n_named} named, {len(got_rows) - n_named} exact) of "
               f"{len(ROW_FIELDS)} numbers each, {moves_n} moves and {breaks_n} breaks",
               diffs)

    # Best and worst: the rows with BEST_MIN+ games with a result, by delta.
    diffs = []
    for which, sign in (("best", -1), ("worst", 1)):
        lst = got.get(which) or []
        cands = want[which]
        deltas = [e.get("delta") for e in lst]
        wanted = [r["delta"] for r in cands[:BEST]]
        if deltas != wanted:
            diffs.append(f"{which} deltas: expected {wanted}, pawndex {deltas}")
        for e in lst:
            k = row_key({**e, "kind": e.get("kind")})
            w = rows.get(k)
            if w is None or w["_scored"][0] < BEST_MIN:
                diffs.append(f"{which}: {k} is not a row with {BEST_MIN}+ games with a result")
                continue
            for f in ("games", "score", "baseline", "delta"):
                if w[f] != e.get(f):
                    diffs.append(f"{which} {k} {f}: expected {w[f]!r}, pawndex {e.get(f)!r}")
    chk.result("best and worst", not diffs,
               f"{len(got.get('best') or [])} + {len(got.get('worst') or [])} rows of "
               f"{len(want['best'])} with {BEST_MIN}+ games with a result", diffs)

    diffs = []
    got_years = {y.get("year"): y for y in got.get("years") or []}
    order = [y.get("year") for y in got.get("years") or []]
    if order != sorted(order, key=lambda y: (y is None, y or 0)):
        diffs.append(f"years not ascending: {order[:10]}")
    if set(got_years) != set(want["years"]):
        diffs.append(f"years: expected {sorted(want['years'], key=str)}, pawndex "
                     f"{sorted(got_years, key=str)}")
    entries = 0
    for y, gy in got_years.items():
        wy = want["years"].get(y)
        if wy is None:
            continue
        if gy.get("games") != wy["games"]:
            diffs.append(f"year {y} games: expected {wy['games']}, pawndex {gy.get('games')}")
        listed = {(s.get("key"), bool(s.get("reversed"))) for s in gy.get("structures") or []}
        if not listed <= want["year_forms"]:
            diffs.append(f"year {y}: lists {sorted(listed - want['year_forms'])}, not among "
                         f"the {YEAR_FORMS} forms most reached")
        missing = {f for f in want["year_forms_sure"] if wy["structures"].get(f)} - listed
        if missing:
            diffs.append(f"year {y}: leaves out {sorted(missing)}, among the {YEAR_FORMS} "
                         "forms most reached and reached that year")
        for s in gy.get("structures") or []:
            entries += 1
            ws = wy["structures"].get((s.get("key"), bool(s.get("reversed"))))
            want_s = {"games": 0, "share": 0.0} if ws is None else \
                {k: ws[k] for k in ("games", "share")}
            got_s = {k: s.get(k) for k in ("games", "share")}
            if want_s != got_s:
                diffs.append(f"year {y} {s.get('key')}{'~' if s.get('reversed') else ''}: "
                             f"expected {want_s}, pawndex {got_s}")
    chk.result("years", not diffs, f"{len(got_years)} years, {entries} structure shares", diffs)

    if "head_to_head" in want:
        w, g = want["head_to_head"], got.get("head_to_head") or {}
        diffs = [f"head_to_head.{f}: expected {w[f]!r}, pawndex {g.get(f)!r}"
                 for f in ("opponent", "names", "games", "wins", "draws", "losses", "score")
                 if w[f] != g.get(f)]
        dates = [e.get("date") or "" for e in g.get("list") or []]
        if dates != sorted(dates):
            diffs.append(f"head_to_head.list: not by date: {dates[:10]}")
        listed = {e.get("id"): e for e in g.get("list") or []}
        if set(listed) != set(w["list"]):
            diffs.append(f"head_to_head.list ids: only expected {sorted(set(w['list']) - set(listed))[:5]}, "
                         f"only pawndex {sorted(set(listed) - set(w['list']))[:5]}")
        for i, e in listed.items():
            if i in w["list"] and w["list"][i] != {k: e.get(k) for k in w["list"][i]}:
                diffs.append(f"head_to_head game {i}: expected {w['list'][i]}, pawndex {e}")
        chk.result("head_to_head", not diffs, f"{w['games']} games against {w['opponent']} "
                   f"({w['wins']}/{w['draws']}/{w['losses']})", diffs)
        if "opponent" in got:
            compare_profile(f"{label}: the opponent's profile", want["opponent"],
                            got["opponent"], chk, opponent=True)
        else:
            chk.result("opponent", False, "no opponent profile in pawndex's document")


def search_row(db, group):
    """What `players` should say of a player: games (as White, as Black), years, ratings, the
    three most played ECO codes."""
    games = list({g.id: g for n in group for g in db.by_name[n]}.values())
    years = [g.year for g in games if g.year is not None]
    elos = [g.elo[i] for g in games for i, n in enumerate((g.white, g.black))
            if n in group and g.elo[i] is not None]
    ecos = collections.Counter(g.eco for g in games if g.eco)
    white = sum(g.white in group for g in games)
    black = sum(g.black in group for g in games)
    # docs/schema.md: a spelling's games are its games as White plus as Black (a game between
    # two of the player's spellings counts twice).
    return {"games": white + black, "white_games": white, "black_games": black,
            "first_year": min(years, default=None), "last_year": max(years, default=None),
            "min_elo": min(elos, default=None), "max_elo": max(elos, default=None),
            "ecos": ecos}


def compare_search(db, text, chk, binary, limit=1000):
    """Every player `players --search TEXT` lists holds exactly the spellings the rule groups,
    with its numbers; none with more games is left out."""
    doc = json.loads(run([binary, "players", "--search", text, "--min-games", "1",
                          "--limit", str(limit), "--db", db.path, "--format", "json"]))
    listed = doc.get("players", doc) if isinstance(doc, dict) else doc
    diffs = []
    folded = fold(text)
    expected = {g for g in db.players.groups if any(folded in fold(n) for n in g)}
    got_groups, numbers = set(), 0
    games = [p.get("games") for p in listed]
    if games != sorted(games, reverse=True):
        diffs.append(f"not by games, most first: {games[:20]}")
    for p in listed:
        names = frozenset(p.get("names") or p.get("spellings") or [])
        shown = p.get("player") or p.get("shown") or p.get("name")
        got_groups.add(names)
        if names not in db.players.groups:
            first = next(iter(names), None)
            diffs.append(f"{shown!r}: spellings {sorted(names)}, the rule groups "
                         f"{sorted(db.players.of.get(first, ()))}")
            continue
        if names not in expected:
            diffs.append(f"{shown!r}: listed, but no spelling folds to something holding "
                         f"{folded!r}")
        if shown != db.players.shown(names):
            diffs.append(f"{sorted(names)}: shown {shown!r}, expected "
                         f"{db.players.shown(names)!r}")
        want = search_row(db, names)
        for f in ("games", "white_games", "black_games", "first_year", "last_year", "min_elo",
                  "max_elo"):
            if f in p:
                numbers += 1
                if p[f] != want[f]:
                    diffs.append(f"{shown}: {f} {p[f]!r}, expected {want[f]!r}")
            elif f == "games":
                diffs.append(f"{shown}: no games")
        ecos = p.get("ecos") or p.get("openings") or p.get("eco")
        if isinstance(ecos, list) and ecos:
            got_ecos = [e if isinstance(e, str) else e.get("eco") for e in ecos]
            top = want["ecos"].most_common()
            cut = top[min(3, len(top)) - 1][1] if top else 0
            if (len(got_ecos) != min(3, len(top))
                    or any(want["ecos"][e] < cut for e in got_ecos)
                    or sorted(e for e, n in top if n > cut) != sorted(
                        e for e in got_ecos if want["ecos"][e] > cut)):
                diffs.append(f"{shown}: ECO codes {got_ecos}, the most played {top[:4]}")
            numbers += 1
    truncated = len(listed) >= limit
    least = min(games, default=0)
    for g in sorted(expected - got_groups, key=lambda g: -db.players.total(g)):
        if not truncated or db.players.total(g) > least:
            diffs.append(f"not listed: {sorted(g)} ({db.players.total(g)} games)")
    chk.result(f"players --search {text!r}", not diffs,
               f"{len(listed)} players{' (the limit)' if truncated else ''}, "
               f"{sum(len(g) for g in got_groups)} spellings, {numbers} numbers "
               f"({len(expected)} players expected)", diffs)


def compare_resolution(db, typed, chk, binary):
    """`pawndex player TYPED`: the player docs/players.md's steps find (its spellings), or exit
    status 1 naming every candidate."""
    kind, found = db.players.resolve(typed)
    done = subprocess.run([binary, "player", typed, "--db", db.path, "--format", "json",
                           "--exact", "0"], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, check=False)
    diffs = []
    if kind == "one":
        want = f"exit 0 with {sorted(found)}"
        if done.returncode != 0:
            diffs.append(f"exit status {done.returncode}: {done.stderr.strip()[:300]}")
        else:
            names = json.loads(done.stdout).get("names")
            if names != sorted(found):
                diffs.append(f"names {names}, expected {sorted(found)}")
    else:
        shown = [db.players.shown(g) for g in found]
        want = f"exit 1, {kind}" + (f": {shown}" if shown else "")
        if done.returncode != 1:
            diffs.append(f"exit status {done.returncode}, expected 1 ({kind}"
                         f"{': ' + ', '.join(shown) if shown else ''})")
        missing = [n for n in shown if n not in done.stderr]
        if missing:
            diffs.append(f"candidates not named on stderr: {missing}; stderr: "
                         f"{done.stderr.strip()[:300]}")
    chk.result(f"player {typed!r}", not diffs, want, diffs)


# --- Main -------------------------------------------------------------------------------------

def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "pawndex"),
                   help="the binary (default: target/release/pawndex)")
    p.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    p.add_argument("--games", type=int, default=62500,
                   help=f"how many games of {SHARD} to take (default 62500)")
    p.add_argument("--baseline-games", type=int, default=20000,
                   help=f"how many games of {BASELINE_SHARD} for --baseline (default 20000)")
    p.add_argument("--work", help="keep the slices and the databases in this directory "
                   "(reused when there)")
    return p.parse_args()


def skip_or_fail(msg):
    ci = os.environ.get("CI") == "true"
    say("*" * 78)
    say(f"{'FAIL' if ci else 'SKIP'}: players agreement check: {msg}")
    say("*" * 78)
    return 1 if ci else 0


def main():
    args = parse_args()
    shards = [os.path.join(args.corpus, s) for s in (SHARD, BASELINE_SHARD)]
    missing = [s for s in shards if not os.path.isfile(s)]
    if missing:
        return skip_or_fail(f"{missing[0]} is not there")
    if not os.access(args.bin, os.X_OK):
        say(f"error: {args.bin} not found: run cargo build --release first")
        return 1
    work = args.work or tempfile.mkdtemp(prefix="pawndex-players-")
    os.makedirs(work, exist_ok=True)
    try:
        return check(args, shards, work)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


def build(binary, shard, games, work, stem):
    pgn, db = os.path.join(work, f"{stem}.pgn"), os.path.join(work, f"{stem}.db")
    if os.path.exists(db) and not os.path.exists(db + "-wal"):
        return db, None
    n = make_slice(shard, games, pgn)
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    run([binary, "index", "--quiet", "--db", db, pgn])
    return db, n


def choose(db):
    """The requests: players chosen from the database's games."""
    ps = db.players
    ranked = sorted(ps.groups, key=lambda g: (-ps.total(g), ps.shown(g)))
    big = [g for g in ranked if ps.total(g) >= 50]
    merged = next(g for g in big if len({fold(n) for n in g}) > 1)
    others = [g for g in big if g != merged]
    first, second, third = others[0], others[1], others[2]

    def typed(g):
        # The way a person types it: folded, with a space after the comma.
        return ps.shown(g).replace(",", ", ").lower()

    classes = collections.Counter(g.time_class for g in db.games.values()
                                  if g.white in first or g.black in first)
    cls = next(c for c, _ in classes.most_common() if c != "unknown")
    opp = collections.Counter()
    for g in db.games.values():
        if g.white in merged and g.black in ps.of:
            opp[ps.of[g.black]] += 1
        elif g.black in merged and g.white in ps.of:
            opp[ps.of[g.white]] += 1
    rival = next(o for o, _ in opp.most_common() if o != merged and ps.total(o) >= 50)
    # A spelling of the merged player's initials, typed as written.
    initials_name = min((n for n in merged if initials(split_name(fold(n))[1])),
                        key=lambda n: n, default=ps.shown(merged))
    return [
        ("merged spellings, both colours", initials_name, merged, [], {}),
        ("the most games", typed(first), first, [], {}),
        ("--as black", ps.shown(second), second, ["--as", "black"], {"as_": "black"}),
        (f"--time-class {cls}", ps.shown(first), first, ["--time-class", cls],
         {"time_classes": {cls}}),
        ("--as white", ps.shown(third), third, ["--as", "white"], {"as_": "white"}),
        ("--vs", ps.shown(merged), merged, ["--vs", ps.shown(rival)], {"vs": rival}),
    ]


def check(args, shards, work):
    start = time.monotonic()
    chk = Check()
    path, n = build(args.bin, shards[0], args.games, work, "players")
    bpath, bn = build(args.bin, shards[1], args.baseline_games, work, "baseline")
    say(f"{n or 'kept'} games of {SHARD} and {bn or 'kept'} of {BASELINE_SHARD} indexed by "
        f"{args.bin} ({time.monotonic() - start:.1f} s)")
    db, base = Db(path, chk, SHARD), Db(bpath, chk, BASELINE_SHARD)
    say(f"{len(db.games)} and {len(base.games)} games stored; {len(db.spelling_games)} "
        f"spellings make {len(db.players.groups)} players, {len(db.players.merged_into)} "
        "initials spellings merged")

    # Names: the spellings pawndex groups under searches of the players profiled and a few
    # letters.
    specs = choose(db)
    ps = db.players
    texts = sorted({split_name(fold(ps.shown(g)))[0] for _, _, g, _, _ in specs}
                   | {"an", "ber"})
    say("\nnames: players --search")
    # Every player of the database: all its spellings grouped as the rule groups them.
    compare_search(db, "", chk, args.bin, limit=100_000)
    for t in texts:
        compare_search(db, t, chk, args.bin)
    say("\nnames: a typed name finds a player (or exit 1 with the candidates)")
    merged, biggest = specs[0][2], specs[1][2]
    full = split_name(fold(ps.shown(biggest)))
    # Abbreviations left alone: each abbreviates several complete forms.
    ambiguous = sorted((n for n, f in ps.folded.items() if len(ps.ambiguous.get(f, [])) > 1),
                       key=lambda n: (-ps.games[n], n))
    typed = [specs[0][1], ps.shown(merged).upper(),
             specs[0][1].replace(",", ", ") + ".",   # "Carlsen, M."
             split_name(fold(ps.shown(merged)))[0],  # "carlsen"
             full[0], f"{full[1]} {full[0]}".title(),  # "aronian", "Levon Aronian"
             *ambiguous[:2], "Nobody,Xyz"]
    for t in typed:
        compare_resolution(db, t, chk, args.bin)

    requests = []
    for label, typed, group, options, kw in specs:
        requests.append(Request(f"{label}: pawndex player {typed!r} {' '.join(options)}",
                                typed, group, options, db, db, **kw))
    label, typed, group, _, _ = specs[0]
    requests.append(Request(f"--baseline: pawndex player {typed!r} --baseline "
                            f"{os.path.basename(bpath)}", typed, group,
                            ["--baseline", bpath], db, base))
    # The exact structures every request may list, then one pass over each database.
    wanted = {db.path: set(), base.path: set()}
    for r in requests:
        for names in filter(None, (r.names, r.vs)):
            for c in SIDES:
                wanted[r.base.path] |= set(r.exact_candidates(c, names)[0])
    db.scan(wanted[db.path])
    base.scan(wanted[base.path])
    say(f"scanned ({time.monotonic() - start:.1f} s)")
    replays = Replays(db, chk)
    for r in requests:
        t = time.monotonic()
        cmd = [args.bin, "player", r.name, *r.options, "--db", path, "--format", "json"]
        try:
            got = json.loads(run(cmd))
        except (RuntimeError, ValueError) as e:
            chk.result(r.label, False, f"pawndex failed: {e}")
            continue
        want = profile(r, replays, r.names)
        compare_profile(f"{r.label} ({time.monotonic() - t:.1f} s)", want, got, chk)
    say("")
    replays.report()
    say(f"\n{chk.passed} comparisons agree, {len(chk.failures)} differ "
        f"({time.monotonic() - start:.0f} s)")
    if chk.failures:
        say("FAIL: " + "; ".join(chk.failures))
        return 1
    say("ok: every number of pawndex player equals the independent computation")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as error:  # noqa: BLE001 - any failure is a failed check
        import traceback
        traceback.print_exc()
        say(f"FAIL: {error}")
        sys.exit(1)
