#!/usr/bin/env python3
"""Drives a C2SP tlog-witness with add-checkpoint requests (bench/witness.sh).

    witness_load.py URL BODIES [--heartbeats N] [--clients C]

URL is the witness's submission prefix (POST URL/add-checkpoint). BODIES is the directory the
example `add_checkpoint_bodies` writes: the `grow-NNNN` bodies are sent in order, one at a
time over one keep-alive connection (a log growing batch by batch: each cosigning verifies a
consistency proof and moves the witness's state); then `heartbeat` (the final tree again, no
proof) N times from C clients at once. Every answer must be 200; prints one JSON object.
"""
import http.client
import json
import os
import sys
import threading
import time
import urllib.parse


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else None


def post(conn, path, body):
    t = time.perf_counter()
    conn.request("POST", path, body=body, headers={"Content-Type": "text/plain"})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise SystemExit(f"{path}: {r.status} {data[:200]!r}")
    return time.perf_counter() - t


def main():
    url, bodies = sys.argv[1], sys.argv[2]
    heartbeats = int(sys.argv[sys.argv.index("--heartbeats") + 1]) if "--heartbeats" in sys.argv else 2000
    clients = int(sys.argv[sys.argv.index("--clients") + 1]) if "--clients" in sys.argv else 8
    u = urllib.parse.urlsplit(url)
    path = u.path.rstrip("/") + "/add-checkpoint"
    grow = sorted(f for f in os.listdir(bodies) if f.startswith("grow-"))
    grow_bodies = [open(os.path.join(bodies, f), "rb").read() for f in grow]
    beat = open(os.path.join(bodies, "heartbeat"), "rb").read()

    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    t0 = time.perf_counter()
    grow_lat = [post(conn, path, b) for b in grow_bodies]
    grow_wall = time.perf_counter() - t0
    conn.close()

    lat, lock, errors = [], threading.Lock(), []
    per = heartbeats // clients

    def client():
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        mine = []
        try:
            for _ in range(per):
                mine.append(post(c, path, beat))
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(repr(e))
        with lock:
            lat.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    beat_wall = time.perf_counter() - t0
    if errors:
        raise SystemExit(f"heartbeat errors: {errors[:3]}")
    ms = lambda s: round(s * 1000, 2)  # noqa: E731
    print(json.dumps({
        "grow": {"requests": len(grow_lat), "per_second": round(len(grow_lat) / grow_wall, 1),
                 "p50_ms": ms(pct(grow_lat, 50)), "p99_ms": ms(pct(grow_lat, 99))},
        "heartbeat": {"requests": len(lat), "clients": clients,
                      "per_second": round(len(lat) / beat_wall, 1),
                      "p50_ms": ms(pct(lat, 50)), "p99_ms": ms(pct(lat, 99))},
    }))


main()
