#!/usr/bin/env python3
"""1,000 concurrent long-poll waiters: server RSS while they are parked, and the time from a
publish to its own answer and to each waiter's response (p50, p99), for feed-server and for the libmicrohttpd floor
(bench/waiters-floor.c: parks and wakes the same requests with no disk and no parsing), in one run.
Prints Markdown.
Usage: waiters.py FEED_SERVER_BINARY FLOOR_BINARY [WAITERS] [ROUNDS]"""
import http.client, os, re, selectors, socket, statistics, subprocess, sys, tempfile, time

binary, floor_binary = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith("VmRSS")).split()[1])


def threads(pid):
    return len(os.listdir(f"/proc/{pid}/task"))


def request(port, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    data = response.read()
    return response, data


def start_ours():
    root = tempfile.mkdtemp(prefix="waiters-bench-")
    server = subprocess.Popen([binary, "--port", "0", "--root", root, "--access-log", "off",
                               "--max-connections", str(count + 100), "--max-waiters", str(count + 10)],
                              stderr=subprocess.PIPE, text=True)
    return server, int(re.search(r":(\d+) ", server.stderr.readline()).group(1))


def start_floor():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([floor_binary, str(port), str(os.cpu_count()), str(count + 100)])
    for _ in range(100):
        try:
            request(port, "GET", "/metrics")
            break
        except OSError:
            time.sleep(0.05)
    return server, port


def measure(server, port):
    """(statuses, idle RSS KiB, parked RSS KiB, idle threads, parked threads, latencies in s)."""
    response, _ = request(port, "PUT", "/feeds/bench", b'{"v":1}', {"Content-Type": "application/json"})
    etag = request(port, "GET", "/feeds/bench")[0].getheader("ETag")
    idle_rss, idle_threads = rss_kib(server.pid), threads(server.pid)
    selector = selectors.DefaultSelector()
    sockets = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(f"GET /feeds/bench?wait=60 HTTP/1.1\r\nHost: x\r\nIf-None-Match: {etag}\r\n\r\n".encode())
        s.setblocking(False)
        selector.register(s, selectors.EVENT_READ)
        sockets.append(s)
    deadline = time.time() + 30
    while time.time() < deadline:
        _, metrics = request(port, "GET", "/metrics")
        if f"feedserver_open_waiters {count}" in metrics.decode():
            break
        time.sleep(0.05)
    parked_rss, parked_threads = rss_kib(server.pid), threads(server.pid)
    # The publish's own answer is read beside the waiters', so neither waits for the other.
    publisher = socket.create_connection(("127.0.0.1", port))
    published = time.perf_counter()
    publisher.sendall(b"PUT /feeds/bench HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 7\r\n\r\n{\"v\":2}")
    publisher.setblocking(False)
    selector.register(publisher, selectors.EVENT_READ)
    latencies, statuses, buffers, publish_answered = [], {}, {}, float("nan")
    while (len(latencies) < count or publish_answered != publish_answered) and time.perf_counter() - published < 30:
        for key, _ in selector.select(timeout=1):
            data = key.fileobj.recv(65536)
            buffers[key.fileobj] = buffers.get(key.fileobj, b"") + data
            if b"\r\n\r\n" in buffers[key.fileobj]:
                selector.unregister(key.fileobj)
                if key.fileobj is publisher:
                    publish_answered = time.perf_counter() - published
                    status = int(buffers[publisher].split(b" ")[1])
                    if status not in (200, 201):
                        sys.exit(f"the publish was answered {status}")
                    continue
                latencies.append(time.perf_counter() - published)
                status = int(buffers[key.fileobj].split(b" ")[1])
                statuses[status] = statuses.get(status, 0) + 1
    for s in sockets + [publisher]:
        s.close()
    return statuses, idle_rss, parked_rss, idle_threads, parked_threads, latencies, publish_answered


def pct(ordered, p):
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] * 1000


print("| round | server | waiters | answered | statuses | server RSS idle → parked | threads idle → parked | publish answered | publish → response p50 | p99 | max |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
p99s = {"feed-server": [], "floor": []}
for round_number in range(1, rounds + 1):
    for name, start in (("feed-server", start_ours), ("floor", start_floor)):
        server, port = start()
        try:
            statuses, idle_rss, parked_rss, idle_threads, parked_threads, latencies, publish_answered = measure(server, port)
        finally:
            server.terminate()
            server.wait()
        ordered = sorted(latencies) or [float("nan")]
        p99s[name].append(pct(ordered, 99))
        print(f"| {round_number} | {name} | {count} | {len(latencies)} | {statuses} | {idle_rss/1024:.1f} → {parked_rss/1024:.1f} MiB "
              f"| {idle_threads} → {parked_threads} | {publish_answered * 1000:.1f} ms | {pct(ordered, 50):.1f} ms | {pct(ordered, 99):.1f} ms | {ordered[-1]*1000:.1f} ms |")
ours, floor = statistics.median(p99s["feed-server"]), statistics.median(p99s["floor"])
print()
print(f"p99 median of {rounds} rounds: feed-server {ours:.1f} ms, floor {floor:.1f} ms, ratio {ours / floor:.2f}×")
