#!/usr/bin/env python3
"""1,000 concurrent long-poll waiters: server RSS while they are parked, and the time from a
publish to each waiter's response (p50, p99). Prints Markdown.
Usage: waiters.py FEED_SERVER_BINARY [WAITERS]"""
import http.client, json, os, re, selectors, socket, statistics, subprocess, sys, tempfile, time

binary = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
root = tempfile.mkdtemp(prefix="waiters-bench-")
server = subprocess.Popen([binary, "--port", "0", "--root", root, "--access-log", "off", "--max-connections", str(count + 100)],
                          stderr=subprocess.PIPE, text=True)
port = int(re.search(r":(\d+) ", server.stderr.readline()).group(1))

def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith("VmRSS")).split()[1])

def threads(pid):
    return len(os.listdir(f"/proc/{pid}/task"))

def request(method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    data = response.read()
    return response, data

try:
    response, _ = request("PUT", "/feeds/bench", b'{"v":1}', {"Content-Type": "application/json"})
    etag = response.getheader("ETag")
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
        _, metrics = request("GET", "/metrics")
        if f"feedserver_open_waiters {count}" in metrics.decode():
            break
        time.sleep(0.05)
    parked_rss, parked_threads = rss_kib(server.pid), threads(server.pid)

    published = time.perf_counter()
    request("PUT", "/feeds/bench", b'{"v":2}', {"Content-Type": "application/json"})
    latencies, statuses, buffers = [], {}, {}
    while len(latencies) < count and time.perf_counter() - published < 30:
        for key, _ in selector.select(timeout=1):
            data = key.fileobj.recv(65536)
            buffers[key.fileobj] = buffers.get(key.fileobj, b"") + data
            if b"\r\n\r\n" in buffers[key.fileobj]:
                latencies.append(time.perf_counter() - published)
                status = int(buffers[key.fileobj].split(b" ")[1])
                statuses[status] = statuses.get(status, 0) + 1
                selector.unregister(key.fileobj)
    for s in sockets:
        s.close()
finally:
    server.terminate()
    server.wait()

ordered = sorted(latencies)
pct = lambda p: ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] * 1000
print("| waiters | answered | statuses | server RSS idle → parked | threads idle → parked | publish → response p50 | p99 | max |")
print("|---|---|---|---|---|---|---|---|")
print(f"| {count} | {len(latencies)} | {statuses} | {idle_rss/1024:.1f} → {parked_rss/1024:.1f} MiB | {idle_threads} → {parked_threads} | {pct(50):.1f} ms | {pct(99):.1f} ms | {ordered[-1]*1000:.1f} ms |")
