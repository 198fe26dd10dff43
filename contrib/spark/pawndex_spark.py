#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Index PGN files into a pawndex Parquet dataset with Spark, then query it with Spark SQL.

Each input file is one Spark task: file i runs

    pawndex index --parquet DIR --partition shard=I --shard I --overwrite FILE --quiet

(I = --first-shard + i) on whichever worker Spark picks, so DIR must be storage every worker
and the driver see (a local directory in local mode; NFS, a mounted bucket, ... on a cluster),
and so must every FILE. A retried task writes the same shard again (same ids, --overwrite), so
retries are safe. The driver collects every task's exit status and summary and stops with exit
status 1 when any task failed, before running any query.

Then, with --query NAME (a pawndex named query) or --sql TEXT, it registers the dataset's views
(games, runs, rejects, ply_features) from `pawndex query --dialect spark --print-sql --dataset
DIR` and runs the query with Spark SQL: the rows are printed as CSV on standard output (at most
--limit), or written with --write-csv / --write-parquet.

Exit status: 0 ok, 1 a task or the query failed, 2 usage error. See README.md beside this file.
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import time

# The partition column every task's files go under.
PARTITION = "shard"

# The named query whose --print-sql output provides the views for --sql.
VIEWS_FROM = "white-quart"


class UsageError(Exception):
    """A mistake in the command line: exit status 2."""


class RunError(Exception):
    """A task, pawndex or Spark failed: exit status 1."""


def parse_args(argv):
    """The command line, checked."""
    p = argparse.ArgumentParser(
        prog="pawndex_spark.py",
        description="Index PGN files into a pawndex Parquet dataset with Spark (one task per "
        "file), then run a named query or SQL over it with Spark SQL.",
    )
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="PGN files (.pgn, .pgn.zst, ...), at paths every worker sees")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="the dataset directory (shared storage every worker and the driver see)")
    p.add_argument("--pawndex", metavar="PATH",
                   help="the pawndex binary on the driver (default: pawndex on PATH)")
    ship = p.add_mutually_exclusive_group()
    ship.add_argument("--ship", action="store_true",
                      help="send the --pawndex binary to the workers (SparkContext.addFile) "
                      "instead of running PATH there")
    ship.add_argument("--shipped", metavar="NAME",
                      help="the binary was sent with spark-submit --files; NAME is its file name")
    p.add_argument("--master", default=None,
                   help="Spark master URL (default: local[*], or what spark-submit set)")
    p.add_argument("--first-shard", type=int, default=0, metavar="N",
                   help="shard number of the first file (default 0); file i gets N + i")
    p.add_argument("--index-arg", action="append", default=[], metavar="ARG",
                   help="one more argument for every `pawndex index` (repeatable), "
                   "e.g. --index-arg=--keep-duplicates")
    q = p.add_mutually_exclusive_group()
    q.add_argument("--query", metavar="NAME", help="a pawndex named query to run")
    q.add_argument("--sql", metavar="TEXT",
                   help="a Spark SQL query over the views games, runs, rejects, ply_features")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter of the named query (as for pawndex query)")
    p.add_argument("--count", action="store_true",
                   help="with --query: print the number of matching positions")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--write-csv", metavar="OUTDIR", help="write the result as CSV (a directory)")
    out.add_argument("--write-parquet", metavar="OUTDIR",
                     help="write the result as Parquet (a directory)")
    p.add_argument("--limit", type=int, default=20, metavar="N",
                   help="print at most N rows (default 20; 0 prints every row)")
    try:
        args = p.parse_args(argv)
    except SystemExit as e:
        raise SystemExit(2 if e.code else 0) from None
    if not args.files and not (args.query or args.sql):
        raise UsageError("nothing to do: give FILEs to index, --query NAME or --sql TEXT")
    if args.count and not args.query:
        raise UsageError("--count needs --query NAME")
    if args.param and not args.query:
        raise UsageError("--param needs --query NAME")
    if args.limit < 0:
        raise UsageError("--limit must be 0 or more")
    if not 0 <= args.first_shard or args.first_shard + len(args.files) > 8_388_608:
        raise UsageError("shard numbers run from 0 to 8388607")
    if args.shipped and args.pawndex:
        raise UsageError("--shipped names the binary: leave out --pawndex")
    return args


def driver_binary(args):
    """The pawndex binary the driver runs itself (for --print-sql)."""
    if args.shipped:
        from pyspark import SparkFiles

        return SparkFiles.get(args.shipped)
    path = args.pawndex or shutil.which("pawndex")
    if not path:
        raise UsageError("pawndex is not on PATH: give --pawndex PATH")
    if not os.access(path, os.X_OK):
        raise UsageError(f"--pawndex {path}: not an executable file")
    return os.path.abspath(path)


def dataset_path(out):
    """DIR as the tasks and the views name it: absolute, unless it is a URL."""
    return out if "://" in out else os.path.abspath(out)


def index_command(binary, out, shard, path, extra):
    """The `pawndex index` command line of one task."""
    return [binary, "index", "--parquet", out, "--partition", f"{PARTITION}={shard}",
            "--shard", str(shard), "--overwrite", *extra, path, "--quiet"]


def task_binary(binary, shipped_name):
    """On a worker: the binary to run (a shipped one from SparkFiles, made executable)."""
    if shipped_name is None:
        return binary
    from pyspark import SparkFiles

    path = SparkFiles.get(shipped_name)
    if not os.access(path, os.X_OK):
        os.chmod(path, 0o755)
    return path


def make_task(binary, shipped_name, out, extra):
    """The function one Spark task runs on (shard, file): a dict with its exit status."""

    def run(item):
        shard, path = item
        start = time.monotonic()
        result = {"shard": shard, "file": path, "host": socket.gethostname()}
        try:
            cmd = index_command(task_binary(binary, shipped_name), out, shard, path, extra)
            done = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, check=False)
            result["status"] = done.returncode
            result["summary"] = (done.stderr.decode("utf-8", "replace")
                                 + done.stdout.decode("utf-8", "replace")).strip()
        except OSError as e:
            result["status"] = 127
            result["summary"] = f"cannot run pawndex: {e}"
        result["seconds"] = round(time.monotonic() - start, 1)
        return result

    return run


def index_files(spark, args, binary):
    """Runs one task per file; returns the task results, raises RunError if any failed."""
    sc = spark.sparkContext
    if __name__ != "__main__":
        # Imported (by the engine check, say): the workers import this module to run a task.
        sc.addPyFile(os.path.abspath(__file__))
    shipped_name = None
    if args.ship:
        sc.addFile(binary)
        shipped_name = os.path.basename(binary)
    elif args.shipped:
        shipped_name = args.shipped
    # Absolute paths: a task's working directory is not the driver's.
    files = [f if "://" in f else os.path.abspath(f) for f in args.files]
    items = [(args.first_shard + i, f) for i, f in enumerate(files)]
    rdd = sc.parallelize(items, numSlices=len(items))
    task = make_task(binary, shipped_name, dataset_path(args.out), args.index_arg)
    results = sorted(rdd.map(task).collect(), key=lambda r: r["shard"])
    for r in results:
        mark = "ok" if r["status"] == 0 else f"FAILED (exit status {r['status']})"
        say(f"shard {r['shard']}: {r['file']} on {r['host']}: {mark} in {r['seconds']} s")
        for line in r["summary"].splitlines():
            say(f"  {line}")
    failed = [r for r in results if r["status"] != 0]
    if failed:
        names = ", ".join(f"shard {r['shard']} ({r['file']})" for r in failed)
        raise RunError(f"{len(failed)} of {len(results)} tasks failed: {names}")
    return results


def print_sql(binary, name, dataset, params=(), count=False):
    """`pawndex query NAME --dialect spark --print-sql --dataset DIR`: its statements."""
    cmd = [binary, "query", name, "--dialect", "spark", "--print-sql", "--dataset", dataset]
    for p in params:
        cmd += ["--param", p]
    if count:
        cmd.append("--count")
    done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise (UsageError if done.returncode == 2 else RunError)(
            f"{' '.join(cmd)} failed (exit status {done.returncode}): {done.stderr.strip()}")
    return statements(done.stdout)


def statements(text):
    """SQL statements of a script whose statements end with `;` at the end of a line."""
    parts = (text if text.endswith("\n") else text + "\n").split(";\n")
    return [s.strip() for s in parts if strip_comments(s).strip()]


def strip_comments(sql):
    """The SQL without its `--` comment lines (to tell empty statements and view definitions)."""
    return "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))


def is_view(statement):
    """Whether a statement creates a view (the --dataset preamble)."""
    return strip_comments(statement).lstrip().upper().startswith("CREATE")


def register_views(spark, binary, dataset):
    """Creates the dataset's views in the session; returns their statements."""
    views = [s for s in print_sql(binary, VIEWS_FROM, dataset) if is_view(s)]
    if not views:
        raise RunError(f"pawndex printed no CREATE VIEW statements for --dataset {dataset}")
    for s in views:
        spark.sql(s)
    return views


def query_frame(spark, args, binary):
    """The DataFrame of --query or --sql, the views registered first."""
    dataset = dataset_path(args.out)
    if args.sql:
        register_views(spark, binary, dataset)
        return spark.sql(args.sql)
    found = print_sql(binary, args.query, dataset, args.param, args.count)
    views = [s for s in found if is_view(s)]
    rest = [s for s in found if not is_view(s)]
    if len(rest) != 1:
        raise RunError(f"expected one query after the views from pawndex, got {len(rest)}")
    for s in views:
        spark.sql(s)
    return spark.sql(rest[0])


def emit(df, args):
    """Writes or prints the result."""
    if args.write_csv:
        df.write.mode("overwrite").option("header", True).csv(args.write_csv)
        say(f"wrote {args.write_csv}")
        return
    if args.write_parquet:
        df.write.mode("overwrite").parquet(args.write_parquet)
        say(f"wrote {args.write_parquet}")
        return
    import csv

    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(df.columns)
    rows = df.limit(args.limit + 1) if args.limit else df
    shown = 0
    for row in rows.toLocalIterator():
        if args.limit and shown == args.limit:
            say(f"(first {args.limit} rows; --limit 0 prints all, --write-csv writes all)")
            break
        w.writerow(["" if v is None else v for v in row])
        shown += 1
    sys.stdout.flush()


def session(master):
    """A Spark session (local[*] unless a master is given or spark-submit set one)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("pawndex").config("spark.ui.showConsoleProgress", "false")
    if master:
        builder = builder.master(master)
    elif "PYSPARK_GATEWAY_PORT" not in os.environ:
        # Not under spark-submit (which passes its --master to the JVM it started).
        builder = builder.master("local[*]")
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def say(msg):
    """A message on standard error."""
    print(msg, file=sys.stderr, flush=True)


def run(args, spark):
    """Indexes the files and runs the query in an open session."""
    binary = driver_binary(args)
    if args.files:
        start = time.monotonic()
        results = index_files(spark, args, binary)
        say(f"indexed {len(results)} files into {args.out} in "
            f"{time.monotonic() - start:.1f} s")
    if args.query or args.sql:
        emit(query_frame(spark, args, binary), args)


def main(argv=None, spark=None):
    """The command: exit status 0, 1 or 2. A given session is used and left open."""
    try:
        args = parse_args(argv)
        for f in args.files:
            if "://" not in f and not os.path.isfile(f):
                raise UsageError(f"{f}: no such file")
        own = spark is None
        if own:
            spark = session(args.master)
        try:
            run(args, spark)
        finally:
            if own:
                spark.stop()
        return 0
    except UsageError as e:
        say(f"error: {e}")
        return 2
    except RunError as e:
        say(f"error: {e}")
        return 1
    except SystemExit as e:
        return e.code
    except Exception as e:  # Spark's own errors (AnalysisException, Py4J, ...)
        say(f"error: {type(e).__name__}: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
