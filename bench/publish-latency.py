#!/usr/bin/env python3
"""Publish latency of a ~4 KB JSON feed through PUT /feeds/{group} (journal on, a widget profile
stored), next to its floor: one HTTP round trip plus the bare flush-and-rename sequence the store
must perform (same disk, same folder depth):

  mkdir gen.tmp; write+fsync feed.json; fsync gen.tmp; rename gen.tmp -> gen; fsync generations/;
  write+fsync current.json.tmp; rename -> current.json; fsync group/

Runs alternate in batches so that disk noise hits both sides alike. Prints Markdown.
With BUSY=n, n busy loops at normal priority run for the whole measurement, on every side (a
machine running a parallel build beside the server).
With FLOOR_BINARY (bench/publish-floor.c) the same PUTs also go, in their own batches, to the
libmicrohttpd publish floor: that sequence run by a worker thread behind a suspended connection;
and, in batches of their own, to that floor writing on libmicrohttpd's thread (`inline`), so the
hand-off's own cost is measured in the same run.
Usage: publish-latency.py BINARY WORKDIR [ROUNDS] [PER_ROUND]
"""
import atexit, http.client, json, os, socket, statistics, subprocess, sys, time, re

binary, work = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
per_round = int(sys.argv[4]) if len(sys.argv) > 4 else 100
os.makedirs(work, exist_ok=True)

server = subprocess.Popen([binary, "--port", "0", "--root", os.path.join(work, "data"), "--access-log", os.environ.get("ACCESS_LOG", "off")],
                          stderr=subprocess.PIPE, text=True)
line = server.stderr.readline()
if os.environ.get("ACCESS_LOG") == "on":
    import threading
    log = open(os.path.join(work, "access.log"), "w")
    threading.Thread(target=lambda: [log.write(l) or log.flush() for l in server.stderr], daemon=True).start()
port = int(re.search(r":(\d+) ", line).group(1))

def payload(i):
    quotes = [{"id": f"q{k}", "text": f"Quote {k} of round {i}: the quick brown fox jumps over the lazy dog"} for k in range(40)]
    return json.dumps({"seq": i, "quotes": quotes}).encode()

def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]

def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

def write_durably(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)

bare_group = os.path.join(work, "bare", "g")
os.makedirs(os.path.join(bare_group, "generations"), exist_ok=True)

def bare_once(i, body):
    generations = os.path.join(bare_group, "generations")
    tmp = os.path.join(generations, f"{i}.tmp")
    os.mkdir(tmp)
    write_durably(os.path.join(tmp, "feed.json"), body)
    fsync_dir(tmp)
    os.rename(tmp, os.path.join(generations, str(i)))
    fsync_dir(generations)
    pointer_tmp = os.path.join(bare_group, "current.json.tmp")
    write_durably(pointer_tmp, json.dumps({"current": str(i), "previous": []}).encode())
    os.rename(pointer_tmp, os.path.join(bare_group, "current.json"))
    fsync_dir(bare_group)

floor_binary = os.environ.get("FLOOR_BINARY")

def start_floor(name, *mode):
    """The C floor serving a fresh folder `name` (`inline`: on libmicrohttpd's thread), and a
    connection to it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        floor_port = probe.getsockname()[1]
    os.makedirs(os.path.join(work, name), exist_ok=True)
    process = subprocess.Popen([floor_binary, str(floor_port), str(os.cpu_count() or 2), os.path.join(work, name, "g"), *mode],
                               stdout=subprocess.PIPE, text=True)
    process.stdout.readline()
    return process, http.client.HTTPConnection("127.0.0.1", floor_port)

floor_server, floor_connection = start_floor("floor") if floor_binary else (None, None)
inline_server, inline_connection = start_floor("inline", "inline") if floor_binary else (None, None)

busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(int(os.environ.get("BUSY", "0")))]
atexit.register(lambda: [loop.kill() for loop in busy])  # also when a request below fails
connection = http.client.HTTPConnection("127.0.0.1", port)
profile = json.dumps({"items": "/quotes", "title": "/text", "zone": "Europe/Berlin"}).encode()
connection.request("PUT", "/feeds/bench/profile", body=profile, headers={"Content-Type": "application/json"})
response = connection.getresponse()
response.read()
assert response.status in (200, 201), response.status
def timed_put(http, body):
    """Seconds for one publish of `body`, answered 201."""
    start = time.perf_counter()
    http.request("PUT", "/feeds/bench", body=body, headers={"Content-Type": "application/json"})
    response = http.getresponse()
    response.read()
    elapsed = time.perf_counter() - start
    assert response.status == 201, response.status
    return elapsed

def usage(pid):
    """CPU seconds (user + system, the process's, ended threads included) and each living
    thread's context switches (voluntary and not) so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICKS
    switches = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as status:
                switches[task] = sum(int(line.split()[1]) for line in status
                                     if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
        except OSError:
            pass  # a thread that ended meanwhile
    return cpu, switches

TICKS = os.sysconf("SC_CLK_TCK")

class Cost:
    """What a server spends on the publishes of the batches measured with it: CPU (to within a
    clock tick per batch) and context switches (a thread that ends within a batch takes its
    switches with it: then the figure is a lower bound, marked ≥)."""
    def __init__(self):
        self.cpu, self.switches, self.count, self.batches, self.lost = 0.0, 0, 0, 0, False
    def measure(self, pid, batch):
        cpu, switches = usage(pid)
        self.count += batch()
        after_cpu, after_switches = usage(pid)
        self.cpu += after_cpu - cpu
        self.switches += sum(n - switches.get(task, 0) for task, n in after_switches.items())
        self.lost = self.lost or not switches.keys() <= after_switches.keys()
        self.batches += 1
    def line(self):
        within = self.batches / TICKS / self.count * 1e6
        return (f"CPU {self.cpu / self.count * 1e6:.0f} ± {within:.0f} µs, "
                f"{'≥ ' if self.lost else ''}{self.switches / self.count:.2f} context switches")

publish, bare, roundtrip, floor_publish, inline_publish = [], [], [], [], []
ours_cost, floor_cost, inline_cost = Cost(), Cost(), Cost()
sequence = 0

def put_batch(http, times):
    """One batch of publishes of fresh payloads, each timed into `times`; returns their number."""
    global sequence
    for _ in range(per_round):
        sequence += 1
        times.append(timed_put(http, payload(sequence)))
    return per_round
try:
    for _ in range(rounds):
        ours_cost.measure(server.pid, lambda: put_batch(connection, publish))
        for _ in range(per_round):
            start = time.perf_counter()
            connection.request("GET", "/healthz")
            connection.getresponse().read()
            roundtrip.append(time.perf_counter() - start)
        for _ in range(per_round):
            sequence += 1
            body = payload(sequence)
            start = time.perf_counter()
            bare_once(sequence, body)
            bare.append(time.perf_counter() - start)
        if floor_connection:
            floor_cost.measure(floor_server.pid, lambda: put_batch(floor_connection, floor_publish))
            inline_cost.measure(inline_server.pid, lambda: put_batch(inline_connection, inline_publish))
finally:
    server.terminate()
    server.wait()
    for floor_process in (floor_server, inline_server):
        if floor_process:
            floor_process.terminate()
            floor_process.wait()

size = len(payload(1))
ms = lambda s: f"{s * 1000:.2f}"
print("| what | n | p50 ms | p99 ms | mean ms |")
print("|---|---|---|---|---|")
print(f"| PUT /feeds/bench (HTTP, keep-alive) | {len(publish)} | {ms(percentile(publish, 50))} | {ms(percentile(publish, 99))} | {ms(statistics.mean(publish))} |")
print(f"| bare flush-and-rename sequence | {len(bare)} | {ms(percentile(bare, 50))} | {ms(percentile(bare, 99))} | {ms(statistics.mean(bare))} |")
print(f"| HTTP round trip alone (GET /healthz) | {len(roundtrip)} | {ms(percentile(roundtrip, 50))} | {ms(percentile(roundtrip, 99))} | {ms(statistics.mean(roundtrip))} |")
if floor_publish:
    print(f"| PUT to the libmicrohttpd publish floor (bench/publish-floor.c) | {len(floor_publish)} | {ms(percentile(floor_publish, 50))} | {ms(percentile(floor_publish, 99))} | {ms(statistics.mean(floor_publish))} |")
    print(f"| PUT to that floor writing on libmicrohttpd's thread (`inline`) | {len(inline_publish)} | {ms(percentile(inline_publish, 50))} | {ms(percentile(inline_publish, 99))} | {ms(statistics.mean(inline_publish))} |")
print()
floor = percentile(bare, 50) + percentile(roundtrip, 50)
print(f"p50 ratio: {percentile(publish, 50) / floor:.2f} against the floor (bare sequence + round trip, {ms(floor)} ms); "
      f"{percentile(publish, 50) / percentile(bare, 50):.2f} against the bare sequence alone; payload {size} bytes; workdir {work}; "
      f"{len(busy)} busy loops")
if floor_publish:
    print(f"hand-off floor ratio: {percentile(publish, 50) / percentile(floor_publish, 50):.2f} against the libmicrohttpd publish floor "
          f"({ms(percentile(floor_publish, 50))} ms: the bare sequence on a worker thread behind a suspended connection)")
    print(f"C floors against the floor: {percentile(floor_publish, 50) / floor:.2f} with the hand-off, "
          f"{percentile(inline_publish, 50) / floor:.2f} writing on libmicrohttpd's thread")
print(f"server cost per publish: {ours_cost.line()}" + (f"; the libmicrohttpd publish floor: {floor_cost.line()}; "
      f"writing on libmicrohttpd's thread: {inline_cost.line()}" if floor_publish else ""))
