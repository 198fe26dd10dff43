#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Engine agreement: DuckDB and Spark over the Parquet dataset answer as pawndex over SQLite.

Indexes the four masters shards of ../shared/corpus (relative to the repository)

  (a) into SQLite with `pawndex index --db`,
  (b) into Parquet with the Spark driver (contrib/spark/pawndex_spark.py) in local mode, one
      task and one shard per file,
  (c) into Parquet with `pawndex export parquet` of (a),

and checks that DuckDB over (b) and (c) and Spark over (b) give exactly pawndex's answers over
(a) for: the positions with a White quart (every (game, ply)), the positions of the most
frequent pawn structure at ply 20, every column of `pawndex stats --by white_islands`, the
carlsbad named query, and the positions and games per named structure form (runs.structure and
structure_reversed of the dataset against runs.structure of the database). The named queries run as `pawndex query NAME --dialect duckdb|spark
--print-sql` prints them; the stats are computed here in SQL.

Games are compared by (source file name, byte offset), which both `games` tables hold, since
the ids of (b) carry their shard. Each run of (b) detects duplicates within its own file only
(docs/dataset.md), so (b) may hold games that (a) skipped as duplicates of a game in another
file: the check requires each such game to have the hash of a game of (a), reports how many
there are, and leaves them out of (b)'s answers.

Exit status 0 when every engine agrees, 1 on any disagreement or failure. Without
../shared/corpus it prints SKIP and exits 0, or 1 when CI=true.
"""

import argparse
import csv
import glob
import io
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARDS = "masters-*.pgn.zst"

# `pawndex stats` CSV columns after the --by column.
STATS_COLUMNS = ["positions", "games", "white_wins", "draws", "black_wins", "white_score",
                 "avg_white_elo", "avg_black_elo"]


def say(msg=""):
    print(msg, flush=True)


class Check:
    """Collects pass/fail lines; the exit status is 1 when anything failed."""

    def __init__(self):
        self.failures = []

    def result(self, name, ok, detail):
        say(f"  {'ok  ' if ok else 'FAIL'} {name}: {detail}")
        if not ok:
            self.failures.append(name)


class Timer:
    """`with Timer() as t:` then t.seconds."""

    def __enter__(self):
        self.start = time.monotonic()
        return self

    def __exit__(self, *exc):
        self.seconds = time.monotonic() - self.start


def run(cmd, **kw):
    """Runs a command; its standard output, or an exception naming the command."""
    done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          check=False, **kw)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit status {done.returncode}\n{done.stderr}")
    return done.stdout


def statements(text):
    """The statements of `--print-sql` output (each ends with `;` at the end of a line)."""
    parts = (text if text.endswith("\n") else text + "\n").split(";\n")
    return [s.strip() for s in parts if uncommented(s).strip()]


def uncommented(sql):
    return "\n".join(l for l in sql.splitlines() if not l.lstrip().startswith("--"))


def is_view(s):
    return uncommented(s).lstrip().upper().startswith("CREATE")


class Pawndex:
    """The binary and the SQLite database (a)."""

    def __init__(self, binary, db):
        self.binary = binary
        self.db = db

    def __call__(self, *args):
        return run([self.binary, *args])

    def csv_rows(self, *args):
        """Rows of a CSV-printing command, header first."""
        return list(csv.reader(io.StringIO(self(*args))))

    def dialect_sql(self, dialect, name, dataset, params=(), count=False):
        """(views, query) of `pawndex query NAME --dialect D --print-sql --dataset DIR`."""
        args = ["query", name, "--dialect", dialect, "--print-sql", "--dataset", dataset]
        for p in params:
            args += ["--param", p]
        if count:
            args.append("--count")
        found = statements(self(*args))
        views = [s for s in found if is_view(s)]
        rest = [s for s in found if not is_view(s)]
        if len(rest) != 1:
            raise RuntimeError(f"{name}: expected one query after the views, got {len(rest)}")
        return views, rest[0]


# ---------------------------------------------------------------------------------------------
# SQL over the dataset, in both dialects (the features are inline in `runs`).

def stats_sql(exclude=None):
    """`pawndex stats --by white_islands` over the dataset: the integer sums, and the three
    ratios as doubles computed in the order pawndex computes them (rounded when printed):
    White's score is the percent 50 * (2 * wins + draws) / games with a result.
    `exclude` names a table of game ids to leave out (the inner join drops their runs too).
    Runs are first summed per (game, islands), so that a game counts once per group without a
    COUNT(DISTINCT) over every run, and the result is decoded once per game, not per run."""
    return """
WITH g AS (
    SELECT id,
           CASE WHEN trim(result) = '1-0' THEN 1 ELSE 0 END AS w,
           CASE WHEN trim(result) = '1/2-1/2' THEN 1 ELSE 0 END AS d,
           CASE WHEN trim(result) = '0-1' THEN 1 ELSE 0 END AS b,
           white_elo, black_elo
    FROM games""" + (f"\n    WHERE id NOT IN (SELECT id FROM {exclude})" if exclude else "") + """
),
per_game AS (
    SELECT game_id, white_islands, SUM(CAST(last_ply - first_ply + 1 AS BIGINT)) AS n
    FROM runs
    GROUP BY game_id, white_islands
)
SELECT white_islands,
       positions, games, white_wins, draws, black_wins,
       CASE WHEN white_wins + draws + black_wins > 0
            THEN CAST(50.0 AS DOUBLE) * CAST(2 * white_wins + draws AS DOUBLE)
                 / CAST(white_wins + draws + black_wins AS DOUBLE) END AS white_score,
       CASE WHEN white_elo_units > 0
            THEN CAST(white_elo_sum AS DOUBLE) / CAST(white_elo_units AS DOUBLE) END
           AS avg_white_elo,
       CASE WHEN black_elo_units > 0
            THEN CAST(black_elo_sum AS DOUBLE) / CAST(black_elo_units AS DOUBLE) END
           AS avg_black_elo
FROM (
    SELECT p.white_islands,
           SUM(p.n) AS positions,
           COUNT(*) AS games,
           SUM(p.n * g.w) AS white_wins,
           SUM(p.n * g.d) AS draws,
           SUM(p.n * g.b) AS black_wins,
           SUM(CASE WHEN g.white_elo IS NOT NULL THEN p.n * g.white_elo ELSE 0 END)
               AS white_elo_sum,
           SUM(CASE WHEN g.white_elo IS NOT NULL THEN p.n ELSE 0 END) AS white_elo_units,
           SUM(CASE WHEN g.black_elo IS NOT NULL THEN p.n * g.black_elo ELSE 0 END)
               AS black_elo_sum,
           SUM(CASE WHEN g.black_elo IS NOT NULL THEN p.n ELSE 0 END) AS black_elo_units
    FROM per_game AS p
    JOIN g ON g.id = p.game_id
    GROUP BY p.white_islands
) AS t
ORDER BY white_islands"""


def structure_sql(exclude=None):
    """Positions and games per named structure form over the dataset, as (key or None,
    reversed 0/1, positions, games)."""
    where = f"\nWHERE game_id NOT IN (SELECT id FROM {exclude})" if exclude else ""
    return f"""SELECT structure, CAST(structure_reversed AS INT) AS reversed,
       SUM(CAST(last_ply - first_ply + 1 AS BIGINT)) AS positions,
       COUNT(DISTINCT game_id) AS games
FROM runs{where}
GROUP BY structure, structure_reversed"""


SQLITE_STRUCTURES = """SELECT s.key, r.structure & 1, SUM(r.last_ply - r.first_ply + 1),
       COUNT(DISTINCT r.game_id)
FROM runs AS r LEFT JOIN structure_names AS s ON s.id = r.structure >> 1
GROUP BY s.key, r.structure & 1"""


def structure_rows(rows):
    """Rows (key, reversed, positions, games) as sorted tuples of plain values."""
    return sorted(((k or "", int(r), int(p), int(g)) for k, r, p, g in rows))


def stats_csv(rows):
    """Stats rows (white_islands, 5 counts, 3 doubles) as pawndex prints them."""
    opt = lambda v, d: "" if v is None else f"{v:.{d}f}"
    return [[str(r[0]), *(str(int(v)) for v in r[1:6]), opt(r[6], 1), opt(r[7], 1), opt(r[8], 1)]
            for r in rows]


def exact_sql(white, black):
    """Positions with exactly this structure (used when the dialect cannot bind parameters)."""
    return f"""SELECT game_id, ply FROM ply_features
WHERE white_pawns = {white} AND black_pawns = {black}"""


def keyed(query, dialect, restrict=None):
    """The rows (game_id, ply) of a query as (source file name, offset, ply)."""
    base = "regexp_replace(g.source, '^.*/', '')"
    offset = 'g."offset"' if dialect == "duckdb" else "g.`offset`"
    where = f"\nWHERE g.id NOT IN (SELECT id FROM {restrict})" if restrict else ""
    return f"""SELECT {base} AS src, {offset} AS off, CAST(q.ply AS INTEGER) AS ply
FROM (
{query}
) AS q JOIN games AS g ON g.id = q.game_id{where}"""


# ---------------------------------------------------------------------------------------------
# The engines.

class Duck:
    """DuckDB over one dataset directory."""

    name_prefix = "DuckDB"

    def __init__(self, label, pawndex, dataset):
        import duckdb

        self.label = f"DuckDB over {label}"
        self.pawndex = pawndex
        self.dataset = dataset
        self.con = duckdb.connect()
        views, _ = pawndex.dialect_sql("duckdb", "white-quart", dataset)
        for s in views:
            self.con.execute(s)
        self.extras = None

    def arrow(self, sql):
        return self.con.sql(sql).to_arrow_table()

    def exclude(self, ids_table):
        """Leaves these game ids (an Arrow table with column id) out of the answers."""
        self.con.register("extra_games_arrow", ids_table)
        self.con.execute("CREATE TEMP TABLE extra_games AS SELECT id FROM extra_games_arrow")
        self.extras = "extra_games"

    def positions(self, query):
        return self.arrow(keyed(query.rstrip().rstrip(";"), "duckdb", self.extras))

    def stats(self):
        sql = stats_sql(self.extras)
        return self.con.execute(sql).fetchall()

    def structures(self):
        return self.con.execute(structure_sql(self.extras)).fetchall()


class Spark:
    """Spark SQL (local mode) over dataset (b)."""

    def __init__(self, spark, pawndex, dataset, scratch):
        self.label = "Spark over (b)"
        self.spark = spark
        self.pawndex = pawndex
        self.dataset = dataset
        self.scratch = scratch
        self.n = 0
        views, _ = pawndex.dialect_sql("spark", "white-quart", dataset)
        for s in views:
            spark.sql(s)
        self.extras = None

    def exclude(self, ids):
        from pyspark.sql.types import LongType, StructField, StructType

        schema = StructType([StructField("id", LongType(), False)])
        self.spark.createDataFrame([(i,) for i in ids], schema).createOrReplaceTempView(
            "extra_games")
        self.extras = "extra_games"

    def positions(self, query):
        """Writes the answer as Parquet (collecting millions of rows is slow); its path."""
        self.n += 1
        out = os.path.join(self.scratch, f"spark-answer-{self.n}")
        df = self.spark.sql(keyed(query.rstrip().rstrip(";"), "spark", self.extras))
        df.write.mode("overwrite").parquet(out)
        return out

    def stats(self):
        sql = stats_sql(self.extras)
        return [tuple(r) for r in self.spark.sql(sql).collect()]

    def structures(self):
        return [tuple(r) for r in self.spark.sql(structure_sql(self.extras)).collect()]


# ---------------------------------------------------------------------------------------------
# Comparison of position lists, in a DuckDB of their own.

class Compare:
    def __init__(self):
        import duckdb

        self.con = duckdb.connect()
        self.n = 0

    def table(self, rows):
        """A table from an Arrow table or a Parquet directory; its name."""
        self.n += 1
        name = f"t{self.n}"
        if isinstance(rows, str):
            self.con.execute(
                f"CREATE TABLE {name} AS SELECT src, off, ply FROM read_parquet('{rows}/*.parquet')")
        else:
            self.con.register(f"{name}_arrow", rows)
            self.con.execute(f"CREATE TABLE {name} AS SELECT src, off, ply FROM {name}_arrow")
            self.con.unregister(f"{name}_arrow")
        return name

    def diff(self, ref, other):
        """(rows, games, missing, extra, examples) of `other` against `ref` (multisets)."""
        c = self.con
        rows = c.execute(f"SELECT count(*) FROM {other}").fetchall()[0][0]
        games = c.execute(f"SELECT count(*) FROM (SELECT DISTINCT src, off FROM {other})"
                          ).fetchall()[0][0]
        missing = c.execute(f"SELECT count(*) FROM (SELECT * FROM {ref} EXCEPT ALL "
                            f"SELECT * FROM {other})").fetchall()[0][0]
        extra = c.execute(f"SELECT count(*) FROM (SELECT * FROM {other} EXCEPT ALL "
                          f"SELECT * FROM {ref})").fetchall()[0][0]
        examples = c.execute(f"(SELECT 'missing', * FROM (SELECT * FROM {ref} EXCEPT ALL "
                             f"SELECT * FROM {other}) LIMIT 3) UNION ALL "
                             f"(SELECT 'extra', * FROM (SELECT * FROM {other} EXCEPT ALL "
                             f"SELECT * FROM {ref}) LIMIT 3)").fetchall()
        return rows, games, missing, extra, examples


def reference_positions(pawndex, cmp, games_map, *args):
    """A pawndex query's (game_id, ply) rows over SQLite, keyed, as a comparison table."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    out = subprocess.run([pawndex.binary, "query", *args, "--db", pawndex.db, "--format", "csv"],
                         stdin=subprocess.DEVNULL, capture_output=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"pawndex query {' '.join(args)}: {out.stderr.decode()}")
    t = pacsv.read_csv(pa.BufferReader(out.stdout))
    cmp.con.register("ref_arrow", t)
    cmp.n += 1
    name = f"t{cmp.n}"
    cmp.con.execute(f"""CREATE TABLE {name} AS
        SELECT g.src, g.off, CAST(r.ply AS INTEGER) AS ply
        FROM ref_arrow AS r JOIN {games_map} AS g ON g.id = r.game_id""")
    cmp.con.unregister("ref_arrow")
    return name


def sqlite_games(db, cmp):
    """The SQLite games (id, file name, offset, hash) as a comparison table."""
    import pyarrow as pa

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT id, source, offset, hash FROM games").fetchall()
    con.close()
    ids, srcs, offs, hashes = zip(*rows)
    t = pa.table({"id": pa.array(ids, pa.int64()),
                  "src": pa.array([os.path.basename(s) for s in srcs], pa.string()),
                  "off": pa.array(offs, pa.int64()), "hash": pa.array(hashes, pa.int64())})
    cmp.con.register("sqlite_games_arrow", t)
    cmp.con.execute("CREATE TABLE ref_games AS SELECT * FROM sqlite_games_arrow")
    cmp.con.unregister("sqlite_games_arrow")
    return "ref_games"


# ---------------------------------------------------------------------------------------------

def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pawndex", default=os.path.join(ROOT, "target", "release", "pawndex"),
                   help="the binary (default: target/release/pawndex)")
    p.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    p.add_argument("--work", help="keep the databases and datasets in this directory")
    p.add_argument("--db", help="use this SQLite database as (a) instead of indexing")
    p.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    return p.parse_args()


def skip_or_fail(msg):
    ci = os.environ.get("CI") == "true"
    say("*" * 78)
    say(f"{'FAIL' if ci else 'SKIP'}: engine agreement check: {msg}")
    say("*" * 78)
    return 1 if ci else 0


def main():
    args = parse_args()
    shards = sorted(glob.glob(os.path.join(args.corpus, SHARDS)))
    if len(shards) != 4:
        return skip_or_fail(f"the four masters shards {args.corpus}/{SHARDS} are not there "
                            f"(found {len(shards)})")
    if not os.access(args.pawndex, os.X_OK):
        say(f"error: {args.pawndex} not found: run cargo build --release first")
        return 1
    shards = [os.path.abspath(s) for s in shards]
    work = args.work or tempfile.mkdtemp(prefix="pawndex-engines-")
    os.makedirs(work, exist_ok=True)
    try:
        return check(args, shards, work)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


def check(args, shards, work):
    total = Timer().__enter__()
    chk = Check()
    db = args.db or os.path.join(work, "masters.db")
    pawndex = Pawndex(os.path.abspath(args.pawndex), db)
    dir_b = os.path.join(work, "b")
    dir_c = os.path.join(work, "c")

    say(f"engine agreement over {len(shards)} shards: {', '.join(map(os.path.basename, shards))}")
    if not args.db:
        if os.path.exists(db):
            os.remove(db)
        with Timer() as t:
            pawndex("index", "--db", db, *shards, "--quiet")
        say(f"(a) pawndex index --db: {t.seconds:.1f} s")

    from pyspark.sql import SparkSession

    sys.path.insert(0, os.path.join(ROOT, "contrib", "spark"))
    import pawndex_spark

    with Timer() as t:
        spark = (SparkSession.builder.master(args.master).appName("pawndex-engines")
                 .config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false")
                 .config("spark.sql.shuffle.partitions", "8").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
    say(f"Spark session ({args.master}): {t.seconds:.1f} s")
    try:
        with Timer() as t:
            status = pawndex_spark.main(
                ["--out", dir_b, "--pawndex", pawndex.binary, *shards], spark=spark)
        say(f"(b) Spark driver, {len(shards)} tasks: exit status {status}, {t.seconds:.1f} s")
        if status != 0:
            chk.result("(b) Spark driver", False, f"exit status {status}")
            return 1
        with Timer() as t:
            pawndex("export", "parquet", "--db", db, "--out", dir_c)
        say(f"(c) pawndex export parquet: {t.seconds:.1f} s")
        agree(chk, pawndex, spark, dir_b, dir_c, work)
    finally:
        spark.stop()
    total.__exit__()
    say()
    if chk.failures:
        say(f"DISAGREEMENT in {len(chk.failures)} checks: {', '.join(chk.failures)} "
            f"({total.seconds:.0f} s)")
        return 1
    say(f"all engines agree ({total.seconds:.0f} s)")
    return 0


def agree(chk, pawndex, spark, dir_b, dir_c, work):
    cmp = Compare()
    ref_games = sqlite_games(pawndex.db, cmp)
    duck_b = Duck("(b)", pawndex, dir_b)
    duck_c = Duck("(c)", pawndex, dir_c)
    spark_b = Spark(spark, pawndex, dir_b, work)

    say("\ngames")
    cross_run_duplicates(chk, cmp, ref_games, duck_b, spark_b)
    for d in (duck_c,):
        same_games(chk, cmp, ref_games, d)

    engines = [duck_b, duck_c, spark_b]

    say("\nwhite-quart: every position (game, ply) with a White quart")
    with Timer() as t:
        ref = reference_positions(pawndex, cmp, ref_games, "white-quart")
    compare_positions(chk, cmp, "white-quart", ref, t.seconds, engines,
                      lambda e: pawndex.dialect_sql(dialect(e), "white-quart", e.dataset)[1])

    white, black, n = common_structure(pawndex)
    say(f"\nexact structure: the most frequent at ply 20 (white_pawns={white}, "
        f"black_pawns={black}, {n} games at ply 20)")
    params = [f"white_pawns={white}", f"black_pawns={black}"]
    with Timer() as t:
        ref = reference_positions(pawndex, cmp, ref_games, "exact-structure",
                                  *(x for p in params for x in ("--param", p)))
    compare_positions(chk, cmp, "exact-structure", ref, t.seconds, engines,
                      lambda e: exact_query(pawndex, e, params, white, black))

    say("\ncarlsbad")
    with Timer() as t:
        ref = reference_positions(pawndex, cmp, ref_games, "carlsbad")
    compare_positions(chk, cmp, "carlsbad", ref, t.seconds, engines,
                      lambda e: pawndex.dialect_sql(dialect(e), "carlsbad", e.dataset)[1])

    say("\nstats --by white_islands (every CSV column)")
    with Timer() as t:
        ref_rows = pawndex.csv_rows("stats", "--by", "white_islands", "--db", pawndex.db)
    say(f"  pawndex over SQLite: {len(ref_rows) - 1} groups, {t.seconds:.2f} s")
    expected_header = ["white_islands", *STATS_COLUMNS]
    chk.result("stats header", ref_rows[0] == expected_header, ",".join(ref_rows[0]))
    for e in engines:
        with Timer() as t:
            got = stats_csv(e.stats())
        same = got == ref_rows[1:]
        detail = f"{len(got)} groups, {t.seconds:.2f} s"
        if not same:
            detail += "".join(f"\n        pawndex {a}\n        {e.label} {b}"
                              for a, b in zip(ref_rows[1:], got) if a != b)
            if len(got) != len(ref_rows) - 1:
                detail += f"\n        group counts differ: {len(ref_rows) - 1} vs {len(got)}"
        chk.result(f"stats by white_islands, {e.label}", same, detail)
    for row in ref_rows:
        say("    " + ",".join(row))

    say("\nnamed structures: positions and games per structure form")
    with Timer() as t:
        con = sqlite3.connect(f"file:{pawndex.db}?mode=ro", uri=True)
        ref = structure_rows(con.execute(SQLITE_STRUCTURES).fetchall())
        con.close()
    named = sum(p for k, _, p, _ in ref if k)
    say(f"  pawndex over SQLite: {len(ref)} forms (with no name), {named} named positions, "
        f"{t.seconds:.2f} s")
    chk.result("named structures found", named > 0, f"{named} named positions")
    for e in engines:
        with Timer() as t:
            got = structure_rows(e.structures())
        detail = f"{len(got)} forms, {t.seconds:.2f} s"
        if got != ref:
            want, have = set(ref), set(got)
            detail += "".join(f"\n        pawndex {x}" for x in sorted(want - have)[:5])
            detail += "".join(f"\n        {e.label} {x}" for x in sorted(have - want)[:5])
        chk.result(f"structures, {e.label}", got == ref, detail)
    for row in ref:
        say("    " + ",".join(map(str, row)))

    say("\nDuckDB timings (3 runs: min, median)")
    for d in (duck_b, duck_c):
        timings(d, pawndex, white, black)


def dialect(engine):
    return "spark" if isinstance(engine, Spark) else "duckdb"


def exact_query(pawndex, engine, params, white, black):
    """The exact-structure query in the engine's dialect, its parameters bound."""
    _, q = pawndex.dialect_sql(dialect(engine), "exact-structure", engine.dataset, params)
    if unbound(q):
        say(f"  note: the {dialect(engine)} dialect left :white_pawns unbound; "
            "the check's own SQL runs instead")
        return exact_sql(white, black)
    return q


def unbound(sql):
    """Whether a query still has the exact-structure parameters (outside its comments)."""
    body = uncommented(sql)
    return ":white_pawns" in body or "$white_pawns" in body


def cross_run_duplicates(chk, cmp, ref_games, duck_b, spark_b):
    """Games of (b) that (a) does not hold must be duplicates (same hash) of games of (a)."""
    b = duck_b.arrow("SELECT id, regexp_replace(source, '^.*/', '') AS src, \"offset\" AS off, hash "
                     "FROM games")
    cmp.con.register("b_games_arrow", b)
    cmp.con.execute("CREATE TABLE b_games AS SELECT * FROM b_games_arrow")
    cmp.con.unregister("b_games_arrow")
    c = cmp.con
    n_a = c.execute(f"SELECT count(*) FROM {ref_games}").fetchall()[0][0]
    n_b = c.execute("SELECT count(*) FROM b_games").fetchall()[0][0]
    missing = c.execute(f"SELECT count(*) FROM {ref_games} a ANTI JOIN b_games b "
                        "USING (src, off)").fetchall()[0][0]
    extra = c.execute(f"SELECT id, hash FROM b_games b ANTI JOIN {ref_games} a "
                      "USING (src, off)").fetchall()
    unexplained = c.execute(f"""SELECT count(*) FROM (SELECT hash FROM b_games b
        ANTI JOIN {ref_games} a USING (src, off)) x WHERE hash NOT IN (SELECT hash FROM {ref_games})
        """).fetchall()[0][0]
    changed = c.execute(f"SELECT count(*) FROM {ref_games} a JOIN b_games b USING (src, off) "
                        "WHERE a.hash != b.hash").fetchall()[0][0]
    chk.result("games of (b) vs (a)",
               missing == 0 and unexplained == 0 and changed == 0,
               f"{n_a} in (a), {n_b} in (b): {len(extra)} duplicates of games in other files "
               f"(left out below), {missing} missing, {unexplained} extra without a twin in "
               f"(a), {changed} with another hash")
    if extra:
        import pyarrow as pa

        ids = [i for i, _ in extra]
        duck_b.exclude(pa.table({"id": pa.array(ids, pa.int64())}))
        spark_b.exclude(ids)


def same_games(chk, cmp, ref_games, duck):
    """The games of an export are (a)'s games, with (a)'s ids."""
    t = duck.arrow("SELECT id, regexp_replace(source, '^.*/', '') AS src, \"offset\" AS off, hash "
                   "FROM games")
    cmp.con.register("x_games", t)
    diff = cmp.con.execute(f"""SELECT
        (SELECT count(*) FROM (SELECT id, src, off, hash FROM {ref_games}
                               EXCEPT ALL SELECT id, src, off, hash FROM x_games)),
        (SELECT count(*) FROM (SELECT id, src, off, hash FROM x_games
                               EXCEPT ALL SELECT id, src, off, hash FROM {ref_games})),
        (SELECT count(*) FROM x_games)""").fetchall()[0]
    cmp.con.unregister("x_games")
    chk.result(f"games of {duck.label.split()[-1]} vs (a)", diff[0] == 0 and diff[1] == 0,
               f"{diff[2]} games, {diff[0]} missing, {diff[1]} extra (same id, file, offset, "
               "hash)")


def compare_positions(chk, cmp, name, ref, ref_seconds, engines, query_of):
    rows, games, _, _, _ = cmp.diff(ref, ref)
    say(f"  pawndex over SQLite: {rows} positions in {games} games ({ref_seconds:.2f} s)")
    for e in engines:
        with Timer() as t:
            got = cmp.table(e.positions(query_of(e)))
        rows, games, missing, extra, examples = cmp.diff(ref, got)
        detail = (f"{rows} positions in {games} games, {missing} missing, {extra} extra "
                  f"({t.seconds:.2f} s)")
        detail += "".join(f"\n        {x}" for x in examples)
        chk.result(f"{name}, {e.label}", missing == 0 and extra == 0, detail)


def common_structure(pawndex):
    """The most frequent (white_pawns, black_pawns) at ply 20 over SQLite, and its games."""
    rows = pawndex.csv_rows("stats", "--by", "white_pawns,black_pawns", "--ply", "20..20",
                            "--top", "1", "--db", pawndex.db)
    head, top = rows[0], rows[1]
    return int(top[head.index("white_pawns")]), int(top[head.index("black_pawns")]), \
        int(top[head.index("positions")])


def timings(duck, pawndex, white, black):
    """Min and median of 3 runs of the three questions the lead reports."""
    _, count_sql = pawndex.dialect_sql("duckdb", "white-quart", duck.dataset, count=True)
    _, exact = pawndex.dialect_sql("duckdb", "exact-structure", duck.dataset,
                                   [f"white_pawns={white}", f"black_pawns={black}"])
    if unbound(exact):
        exact = exact_sql(white, black)
    for label, sql in (("count of white-quart positions", count_sql),
                       ("stats by white_islands", stats_sql()),
                       ("exact structure (all positions)", exact)):
        times = []
        for _ in range(3):
            with Timer() as t:
                duck.con.execute(sql.rstrip().rstrip(";")).fetchall()
            times.append(t.seconds)
        say(f"  {duck.label}: {label}: min {min(times):.3f} s, "
            f"median {statistics.median(times):.3f} s")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # pylint: disable=broad-except
        import traceback

        traceback.print_exc()
        say(f"FAIL: {type(e).__name__}: {e}")
        sys.exit(1)
