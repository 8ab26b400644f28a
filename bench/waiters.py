#!/usr/bin/env python3
"""1,000 concurrent long-poll waiters: server RSS while they are parked, and the time from a
publish to its own answer and to each waiter's response (p50, p99), for feed-server and for the libmicrohttpd floor
(bench/waiters-floor.c: parks and wakes the same requests with no disk and no parsing), in one run.
The requests and the timing are bench/waiters-client.c's.
Prints Markdown.
The kernel's share (bench/waiters-kernel.c: the same number of answers written to accepted
loopback sockets from one thread and from one per core, nothing else) is timed in each round.
Usage: waiters.py FEED_SERVER_BINARY FLOOR_BINARY CLIENT_BINARY KERNEL_BINARY [WAITERS] [ROUNDS]"""
import atexit, http.client, os, re, shutil, socket, statistics, subprocess, sys, tempfile, time

binary, floor_binary, client_binary, kernel_binary = sys.argv[1:5]
count = int(sys.argv[5]) if len(sys.argv) > 5 else 1000
rounds = int(sys.argv[6]) if len(sys.argv) > 6 else 3
# About the size of feed-server's woken answer (490 bytes for this feed).
ANSWER_BYTES = 512


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


# Every server root of the run, removed at exit.
scratch = tempfile.mkdtemp(prefix="waiters-bench-")
atexit.register(shutil.rmtree, scratch, True)


def start_ours():
    root = tempfile.mkdtemp(dir=scratch)
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
    """(statuses, idle RSS KiB, parked RSS KiB, idle threads, parked threads, latencies in s, the
    publish's own answer in s). Exits when a request is not parked, answered or timed."""
    response, _ = request(port, "PUT", "/feeds/bench", b'{"v":1}', {"Content-Type": "application/json"})
    etag = request(port, "GET", "/feeds/bench")[0].getheader("ETag")
    idle_rss, idle_threads = rss_kib(server.pid), threads(server.pid)
    client = subprocess.Popen([client_binary, str(port), str(count), etag, "/feeds/bench", '{"v":2}'],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if client.stdout.readline().strip() != "parked-sent":
        sys.exit("the client could not send its requests")
    deadline = time.time() + 30
    while f"feedserver_open_waiters {count}" not in request(port, "GET", "/metrics")[1].decode():
        if time.time() > deadline:
            client.kill()
            sys.exit(f"the {count} requests were not all parked in 30 s")
        time.sleep(0.05)
    parked_rss, parked_threads = rss_kib(server.pid), threads(server.pid)
    # bench/waiters-client.c sends the publish and times every answer from its sending.
    try:
        output, _ = client.communicate("go\n", timeout=60)
    except subprocess.TimeoutExpired:
        client.kill()
        sys.exit("the client did not finish in 60 s")
    lines = output.splitlines()
    if client.returncode != 0 or not lines or lines[-1] != "done":
        sys.exit(f"the client failed (exit {client.returncode})")
    latencies, statuses, publish_answered = [], {}, float("nan")
    for fields in (line.split() for line in lines[:-1]):
        if fields[0] == "publish":
            if int(fields[2]) not in (200, 201):
                sys.exit(f"the publish was answered {fields[2]}")
            publish_answered = float(fields[1]) / 1000
        elif fields[0] == "waiter" and fields[1] != "-":
            latencies.append(float(fields[1]) / 1000)
            statuses[int(fields[2])] = statuses.get(int(fields[2]), 0) + 1
    if len(latencies) < count:
        sys.exit(f"{count - len(latencies)} of {count} waiters were never answered")
    return statuses, idle_rss, parked_rss, idle_threads, parked_threads, latencies, publish_answered


def pct(ordered, p):
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] * 1000


print("| round | server | waiters | answered | statuses | server RSS idle → parked | threads idle → parked | publish answered | publish → response p50 | p99 | max |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
p99s = {"feed-server": [], "floor": []}
# One writer, and one per core this process may run on (as `nproc` counts them).
kernel_p99s = {1: [], len(os.sched_getaffinity(0)): []}
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
    for writers in kernel_p99s:
        # Exits non-zero (and the run with it) unless every answer arrived whole.
        line = subprocess.run([kernel_binary, str(count), str(writers), str(ANSWER_BYTES)],
                              capture_output=True, text=True, check=True).stdout
        answered = int(re.search(r"answered (\d+)", line).group(1))
        p50, p99, most = (float(value) for value in re.findall(r"([\d.]+) ms", line))
        kernel_p99s[writers].append(p99)
        print(f"| {round_number} | kernel, {writers} writer thread{'s' if writers > 1 else ''} | {count} | {answered} | – | – | – | – "
              f"| {p50:.1f} ms | {p99:.1f} ms | {most:.1f} ms |")
ours, floor = statistics.median(p99s["feed-server"]), statistics.median(p99s["floor"])
print()
print(f"p99 median of {rounds} rounds: feed-server {ours:.1f} ms, floor {floor:.1f} ms, ratio {ours / floor:.2f}×")
print("kernel floor p99 median: " + ", ".join(
    f"{writers} writer thread{'s' if writers > 1 else ''} {statistics.median(values):.1f} ms" for writers, values in kernel_p99s.items())
      + f"; feed-server / kernel with {max(kernel_p99s)} writer threads: {ours / statistics.median(kernel_p99s[max(kernel_p99s)]):.2f}×")
