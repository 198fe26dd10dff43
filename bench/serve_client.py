"""The client of bench/serve.sh: latencies per endpoint, the first page's size, a load test and
the server's memory. Usage: python3 bench/serve_client.py URL SERVER_PID"""

import gzip
import http.client
import json
import re
import statistics
import sys
import threading
import time
import urllib.parse

URL, PID = sys.argv[1], int(sys.argv[2])
HOST = urllib.parse.urlparse(URL).netloc


def get(path, headers=None, conn=None):
    """One GET on a keep-alive connection; (status, body, headers, seconds)."""
    own = conn is None
    c = conn or http.client.HTTPConnection(HOST, timeout=600)
    t = time.perf_counter()
    c.request("GET", path, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    dt = time.perf_counter() - t
    if own:
        c.close()
    return r.status, body, dict(r.getheaders()), dt


def q(**params):
    return urllib.parse.urlencode(params)


def measure(name, paths, target_ms):
    """p50 and p95 of the paths (100 of them), one keep-alive connection."""
    conn = http.client.HTTPConnection(HOST, timeout=600)
    times, errors = [], 0
    for p in paths:
        status, body, _, dt = get(p, conn=conn)
        if status != 200:
            errors += 1
        times.append(dt * 1000)
    conn.close()
    times.sort()
    p50 = statistics.median(times)
    p95 = times[max(0, int(len(times) * 0.95) - 1)]
    errs = f", {errors} errors" if errors else ""
    print(f"| {name} | {len(times)} | {p50:.1f} | {p95:.1f} | {target_ms} |{errs}")
    return p95


def boards(n):
    """Pawn boards from the games: ply 20 of n games spread over the database."""
    info = json.loads(get("/api/info")[1])
    games = info["games"]
    out = []
    for i in range(n):
        gid = 1 + (i * 7919) % games
        status, body, _, _ = get(f"/api/game/{gid}")
        if status != 200:
            continue
        plies = json.loads(body)["plies"]
        out.append(plies[min(20, len(plies) - 1)]["board"])
    return out, games


def first_page_bytes():
    """The gzipped bytes of the page and every file it loads (links, scripts, ES imports)."""
    seen, todo, total = set(), ["/"], 0
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        status, body, headers, _ = get(p, {"Accept-Encoding": "gzip"})
        if status != 200:
            continue
        total += len(body)
        text = gzip.decompress(body) if headers.get("content-encoding") == "gzip" else body
        text = text.decode("utf-8", "replace")
        base = p.rsplit("/", 1)[0] + "/"
        for ref in re.findall(r"""(?:src|href)="([^"#?]+)"|from\s+['"]([^'"]+)['"]|import\s+['"]([^'"]+)['"]""", text):
            r = next(x for x in ref if x)
            if r.startswith(("http:", "https:", "data:", "mailto:")):
                continue
            todo.append(urllib.parse.urljoin(base, r))
    return total, len(seen)


def rss():
    fields = {}
    with open(f"/proc/{PID}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            fields[k] = v.strip()
    return fields.get("VmHWM"), fields.get("RssAnon"), fields.get("RssFile")


PEAK_ANON = [0]


def sample_heap():
    """Keeps the largest RssAnon (kB) seen, every 20 ms, for the whole run."""
    while True:
        try:
            anon = int(rss()[1].split()[0])
        except (OSError, ValueError, AttributeError):
            return
        PEAK_ANON[0] = max(PEAK_ANON[0], anon)
        time.sleep(0.02)


def main():
    threading.Thread(target=sample_heap, daemon=True).start()
    bs, games = boards(100)
    carlsbad = "8/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/8"
    page = json.loads(get("/api/games?" + q(limit=50))[1])
    after = page["next"]
    print()
    print("| endpoint | requests | p50 ms | p95 ms | target p95 ms |")
    print("|---|---|---|---|---|")
    measure("classify: /api/structure?counts=0", [f"/api/structure?{q(fen=b, counts=0)}" for b in bs], 5)
    measure("card: /api/structure", [f"/api/structure?{q(fen=b)}" for b in bs], 20)
    measure("similar top 20", [f"/api/similar?{q(fen=b, limit=20)}" for b in bs], 150)
    measure("similar top 20, mirror + reversed",
            [f"/api/similar?{q(fen=b, limit=20, mirror=1, reversed=1)}" for b in bs], 300)
    measure("first 50 games of a structure name",
            [f"/api/games?{q(structure='carlsbad', limit=50)}"] * 100, 200)
    measure("first 50 games", [f"/api/games?{q(limit=50, eco='D3')}"] * 100, 200)
    measure("next page of 50", [f"/api/games?{q(limit=50, after=after)}"] * 100, 100)
    measure("one game with per-ply structures",
            [f"/api/game/{1 + (i * 104729) % games}" for i in range(100)], 15)
    measure("breaks of a named structure", [f"/api/breaks?{q(structure='carlsbad')}"] * 100, 50)
    measure("breaks of an exact structure", [f"/api/breaks?{q(fen=b)}" for b in bs], 500)
    t = time.perf_counter()
    status, _, _, _ = get("/api/stats?" + q(report="islands-vs-score"))
    print(f"| stats report, first time | 1 | {1000 * (time.perf_counter() - t):.0f} | | 3000 |")
    measure("stats report, repeated", ["/api/stats?" + q(report="islands-vs-score")] * 100, 30)

    total, files = first_page_bytes()
    print(f"\nfirst page load: {total / 1024:.1f} KiB gzipped in {files} files (target <= 100 KB)")

    # Classify while 8 similar requests are in flight.
    stop = threading.Event()

    def hammer(i):
        c = http.client.HTTPConnection(HOST, timeout=600)
        k = i
        while not stop.is_set():
            get(f"/api/similar?{q(fen=bs[k % len(bs)], limit=20, mirror=1, reversed=1)}", conn=c)
            k += 8
        c.close()

    threads = [threading.Thread(target=hammer, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    time.sleep(0.5)
    print()
    print("| endpoint | requests | p50 ms | p95 ms | target p95 ms |")
    print("|---|---|---|---|---|")
    measure("classify with 8 similar in flight", [f"/api/structure?{q(fen=b, counts=0)}" for b in bs], 20)
    measure("card with 8 similar in flight", [f"/api/structure?{q(fen=b)}" for b in bs], "-")
    stop.set()
    for th in threads:
        th.join()

    # 16 clients, 2,000 mixed requests.
    mix = []
    for i in range(2000):
        b = bs[i % len(bs)]
        mix.append([
            f"/api/structure?{q(fen=b, counts=0)}",
            f"/api/structure?{q(fen=b)}",
            f"/api/similar?{q(fen=b, limit=20)}",
            f"/api/games?{q(limit=50, after=(i * 37) % games)}",
            f"/api/game/{1 + (i * 104729) % games}",
            f"/api/breaks?{q(structure='carlsbad')}",
            "/api/stats?" + q(report="islands-vs-score"),
            "/",
        ][i % 8])
    errors, lock, done = [0], threading.Lock(), [0]

    def client(part):
        c = http.client.HTTPConnection(HOST, timeout=600)
        for p in part:
            try:
                status = get(p, conn=c)[0]
            except Exception:  # noqa: BLE001 - a failed request is what is counted
                status = 0
                c = http.client.HTTPConnection(HOST, timeout=600)
            with lock:
                done[0] += 1
                if status != 200:
                    errors[0] += 1
        c.close()

    t = time.perf_counter()
    threads = [threading.Thread(target=client, args=(mix[i::16],)) for i in range(16)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    dt = time.perf_counter() - t
    peak, anon, file_ = rss()
    print(f"\nload: 16 clients, {done[0]} mixed requests in {dt:.1f} s, {errors[0]} errors")
    print(f"server memory: peak RSS {peak}; now RssAnon {anon} (heap), RssFile {file_} (mapped database pages)")
    print(f"largest heap seen (RssAnon sampled every 20 ms over the whole run): {PEAK_ANON[0] / 1024:.0f} MiB (target <= 300 MB)")


main()
