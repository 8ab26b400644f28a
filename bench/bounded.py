#!/usr/bin/env python3
"""The bounded-resource benchmarks against a release feed-server (standard library only,
traffic only to 127.0.0.1, every loop bounded). Prints Markdown for docs/benchmarks.md.

Usage: bounded.py BINARY PHOTO_DIR SCENARIO...
Scenarios: concurrent (20 concurrent ~50 MB photo publishes: peak RSS),
unauthorised (8 unauthorised 100 MB PUTs to a server with --token: RSS growth, statuses),
reads (read latency idle and during a 48-photo publish), healthz (/healthz while 4 clients list
~3 MB feeds), trickle (1,000 clients sending one header line a second).
"""
import http.client, json, multiprocessing, os, re, select, socket, statistics, subprocess, sys, tempfile, threading, time

BINARY, PHOTOS = sys.argv[1], sys.argv[2]
MIB = 1024 * 1024
HEADER_TIMEOUT = int(os.environ.get("HEADER_TIMEOUT", "5"))


# ---------------------------------------------------------------- server and /proc

class Server:
    """A fresh release server on port 0 with its own root; stderr goes to a file."""

    def __init__(self, *args):
        self.root = tempfile.mkdtemp(prefix="bounded-bench-")
        self.log = open(os.path.join(self.root, "server.log"), "w+")
        self.process = subprocess.Popen([BINARY, "--port", "0", "--root", os.path.join(self.root, "data"),
                                         "--access-log", "off", *args], stderr=self.log)
        for _ in range(200):
            self.log.seek(0)
            found = re.search(r"listening on http://[^:]+:(\d+)", self.log.read())
            if found:
                self.port = int(found.group(1))
                return
            time.sleep(0.05)
        raise RuntimeError("server did not start")

    def status(self, key):
        with open(f"/proc/{self.process.pid}/status") as status:
            return int(next(line for line in status if line.startswith(key)).split()[1])

    def close(self):
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        subprocess.run(["rm", "-rf", self.root])


class RSSSampler(threading.Thread):
    """Samples the server's VmRSS every 20 ms until stopped (bounded by `limit_s`)."""

    def __init__(self, server, limit_s=600):
        super().__init__(daemon=True)
        self.server, self.limit_s, self.samples, self.stop_event = server, limit_s, [], threading.Event()

    def run(self):
        end = time.monotonic() + self.limit_s
        while not self.stop_event.is_set() and time.monotonic() < end:
            self.samples.append(self.server.status("VmRSS"))
            time.sleep(0.02)

    def stop(self):
        self.stop_event.set()
        self.join()
        return max(self.samples) if self.samples else 0


def request(port, method, path, body=None, headers=None, timeout=120):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read(), response
    finally:
        connection.close()


def pct(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))]


# ---------------------------------------------------------------- multipart bodies

def photo_bytes():
    names = sorted((n for n in os.listdir(PHOTOS) if n.startswith("photo-")), key=lambda n: int(n[6:-4]))
    return [open(os.path.join(PHOTOS, n), "rb").read() for n in names]


def tagged(jpeg, tag):
    """The same JPEG with a comment segment after SOI, so its bytes (and the encode cache key) differ."""
    text = tag.encode()
    return jpeg[:2] + b"\xff\xfe" + (len(text) + 2).to_bytes(2, "big") + text + jpeg[2:]


def multipart(files, payload=b'{"bench":true}'):
    """(content type, list of body chunks) for a publish of `files` (raw bytes each)."""
    boundary = "bench-boundary-7d1f"
    chunks = [f'--{boundary}\r\nContent-Disposition: form-data; name="payload"\r\n'
              f'Content-Type: application/json\r\n\r\n'.encode() + payload + b"\r\n"]
    for index, data in enumerate(files):
        chunks.append(f'--{boundary}\r\nContent-Disposition: form-data; name="p{index}"; filename="p{index}.jpg"\r\n'
                      f'Content-Type: image/jpeg\r\n\r\n'.encode())
        chunks.append(data)
        chunks.append(b"\r\n")
    chunks.append(f"--{boundary}--\r\n".encode())
    return f"multipart/form-data; boundary={boundary}", chunks


def exchange(port, method, path, headers, chunks, total, limit_s=300, send_all=False, on_sent=None, chunked=False):
    """Sends a request whose body is `chunks` (or `total` zero bytes when `chunks` is None) while
    reading whatever the server answers, as a client that uploads before it reads would, but
    without losing an early answer. With `send_all` it keeps uploading after an early answer
    until the body is sent or the server closes the connection. Returns (status or None, seconds, body bytes sent, note). `on_sent` is called once the last body byte is sent."""
    started = time.perf_counter()
    sock = socket.create_connection(("127.0.0.1", port), timeout=limit_s)
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}"
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{framing}\r\n"
    if chunked:  # each piece its own chunk, then the last (empty) one
        chunks = [b"%x\r\n%s\r\n" % (len(c), c) for c in chunks] + [b"0\r\n\r\n"]
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    pending = [head.encode()] + (list(chunks) if chunks is not None else [])
    zeros, left_zeros = memoryview(bytes(MIB)), (total if chunks is None else 0)
    view, sent, received, note, answered, eof = memoryview(b""), 0, b"", "", False, False
    sock.setblocking(False)
    deadline = time.monotonic() + limit_s
    try:
        while time.monotonic() < deadline:
            if not view:
                if pending:
                    view = memoryview(pending.pop(0))
                elif left_zeros:
                    view = zeros[:min(MIB, left_zeros)]
                    left_zeros -= len(view)
            if answered and not view:
                break
            writing = [sock] if view else []
            readable, writable, _ = select.select([] if eof else [sock], writing, [], 1)
            if readable:
                try:
                    data = sock.recv(65536)
                except ConnectionResetError:
                    note = "reset"
                    break
                if not data:
                    if not send_all or not view:
                        break
                    eof = True
                received += data
                if complete(received):
                    answered = True
                    if not send_all:
                        break
            if writable and view:
                try:
                    n = sock.send(view[:262144])
                except (BrokenPipeError, ConnectionResetError) as error:
                    note = type(error).__name__
                    view, pending, left_zeros = memoryview(b""), [], 0
                    continue
                view = view[n:]
                sent += n
                if on_sent and not view and not pending and not left_zeros:
                    on_sent()
                    on_sent = None
    finally:
        sock.close()
    status = int(received.split(b" ", 2)[1]) if received.startswith(b"HTTP/1.1 ") else None
    head_len = len(head)
    return status, time.perf_counter() - started, max(0, sent - head_len), note


def complete(data):
    if b"\r\n\r\n" not in data:
        return False
    head, body = data.split(b"\r\n\r\n", 1)
    found = re.search(rb"(?i)content-length: *(\d+)", head)
    return found is not None and len(body) >= int(found.group(1))


# ---------------------------------------------------------------- scenarios

def concurrent():
    """20 concurrent publishes of ~50 MB of photos each (distinct bytes per request)."""
    photos = photo_bytes()
    per_request = 0
    while sum(len(p) for p in photos[:per_request]) < 50_000_000:
        per_request += 1
    server = Server()
    try:
        idle = server.status("VmRSS")
        sampler = RSSSampler(server)
        sampler.start()
        results = [None] * 20

        def publish(index):
            files = [tagged(photos[(index * 7 + j) % len(photos)], f"r{index}p{j}") for j in range(per_request)]
            content_type, chunks = multipart(files)
            total = sum(len(c) for c in chunks)
            results[index] = (total,) + exchange(server.port, "PUT", f"/feeds/c{index}", {"Content-Type": content_type}, chunks, total)

        started = time.perf_counter()
        threads = [threading.Thread(target=publish, args=(i,)) for i in range(20)]
        for t in threads: t.start()
        for t in threads: t.join(600)
        wall = time.perf_counter() - started
        peak_sampled = sampler.stop()
        hwm = server.status("VmHWM")
        statuses = {}
        for r in results:
            statuses[r[1]] = statuses.get(r[1], 0) + 1
        mb = statistics.mean(r[0] for r in results) / 1e6
        print("| publishes | photos each | MB each | statuses | wall s | RSS idle MiB | peak VmRSS sampled MiB | VmHWM MiB | target |")
        print("|---|---|---|---|---|---|---|---|---|")
        print(f"| 20 | {per_request} | {mb:.1f} | {statuses} | {wall:.1f} | {idle/1024:.1f} | {peak_sampled/1024:.1f} | "
              f"{hwm/1024:.1f} | ≤ 160 MiB: {'met' if hwm <= 160 * 1024 else 'missed'} |")
    finally:
        server.close()


def unauthorised():
    """8 concurrent 100 MB PUTs without the token, no Expect header: all must be 401.
    UNAUTHORISED_MB=60 sends bodies the server drains (under its 64 MiB drain bound) instead."""
    size_mb = int(os.environ.get("UNAUTHORISED_MB", "100"))
    server = Server("--token", "bench-secret")
    try:
        request(server.port, "GET", "/healthz")
        request(server.port, "PUT", "/feeds/warm", b"{}", {"Content-Type": "application/json"})
        before, hwm_before = server.status("VmRSS"), server.status("VmHWM")
        sampler = RSSSampler(server)
        sampler.start()
        results = [None] * 8
        boundary = "multipart/form-data; boundary=x"

        def put(index):
            kinds = [("multipart", boundary), ("json", "application/json")]
            kind, content_type = kinds[index % 2]
            results[index] = (kind,) + exchange(server.port, "PUT", f"/feeds/u{index}", {"Content-Type": content_type}, None, size_mb * 1_000_000, send_all=True)

        threads = [threading.Thread(target=put, args=(i,)) for i in range(8)]
        for t in threads: t.start()
        for t in threads: t.join(600)
        peak = sampler.stop()
        after, hwm = server.status("VmRSS"), server.status("VmHWM")
        statuses = {}
        for r in results:
            statuses[r[1]] = statuses.get(r[1], 0) + 1
        print("| PUTs | statuses | body MB sent per client (min–max) | client s (max) | notes | RSS before MiB | peak VmRSS MiB | growth MiB | VmHWM before → after MiB | target |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        sent = [r[3] / 1e6 for r in results]
        notes = sorted({r[4] for r in results if r[4]}) or ["-"]
        growth = (peak - before) / 1024
        print(f"| 8 × {size_mb} MB (4 multipart, 4 JSON) | {statuses} | {min(sent):.1f}–{max(sent):.1f} | {max(r[2] for r in results):.2f} | "
              f"{', '.join(notes)} | {before/1024:.1f} | {peak/1024:.1f} | {growth:.1f} | {hwm_before/1024:.1f} → {hwm/1024:.1f} | "
              f"≤ 16 MiB, all 401: {'met' if growth <= 16 and statuses == {401: 8} else 'missed'} |")
    finally:
        server.close()


def read_loop(port, stop, latencies, limit, path="/feeds/read", starts=None):
    """Reads `path` over one keep-alive connection until `stop` is set or `limit` reads; each
    read's start (time.time()) goes to `starts` when given."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for _ in range(limit):
            if stop.is_set():
                break
            started = time.perf_counter()
            if starts is not None:
                starts.append(time.time())
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            latencies.append((time.perf_counter() - started) * 1000)
            if response.status != 200:
                raise RuntimeError(f"read answered {response.status}")
            time.sleep(0.002)
    finally:
        connection.close()


def _loop_into(port, stop, queue, limit, path):
    latencies, starts = [], []
    try:
        read_loop(port, stop, latencies, limit, path, starts)
    finally:
        queue.put(list(zip(starts, latencies)))


def probes(port, stop, count, limit, path):
    """`count` read loops in their own processes, so the client's GIL (other threads building or
    parsing megabytes) never adds to the latency measured. Returns (start, join) functions."""
    queue = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=_loop_into, args=(port, stop, queue, limit, path)) for _ in range(count)]

    def join(with_starts=False):
        results = [queue.get(timeout=300) for _ in workers]
        for w in workers: w.join(60)
        pairs = [x for r in results for x in r]
        return pairs if with_starts else [ms for _, ms in pairs]
    for w in workers: w.start()
    return join


def autogroups(servers):
    """Each server's scheduler autogroup: with sched_autogroup_enabled=1, a process in a group of
    its own gets an equal share of the CPU against every other group, the load's included."""
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            enabled = f.read().strip()
    except OSError:
        return "none (no sched_autogroup_enabled)"
    groups = []
    for name, pid in servers:
        try:
            with open(f"/proc/{pid}/autogroup") as f:
                groups.append(f"{name} {f.read().split()[0]}")
        except (OSError, TypeError, IndexError):
            groups.append(f"{name} unknown")
    return f"sched_autogroup_enabled={enabled}; this script {open('/proc/self/autogroup').read().split()[0]}; " + ", ".join(groups)


class Nginx:
    """nginx serving one file at /feeds/read, keep-alive, access log off: the reference server
    for `reads`, probed at the same moments as feed-server, so what the load does to any
    server on these cores is measured beside what it does to ours."""

    def __init__(self, body):
        self.root = tempfile.mkdtemp(prefix="bounded-nginx-")
        os.makedirs(os.path.join(self.root, "www", "feeds"))
        with open(os.path.join(self.root, "www", "feeds", "read"), "wb") as f:
            f.write(body)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        conf = os.path.join(self.root, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""user root; worker_processes 2; pid {self.root}/nginx.pid; error_log {self.root}/error.log;
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; keepalive_requests 1000000; default_type application/json;
  server {{ listen 127.0.0.1:{self.port}; root {self.root}/www; location / {{ etag on; }} }} }}
""")
        # In the foreground, in this script's session, as feed-server and the floor are: a daemon
        # calls setsid, and with the kernel's autogroups (sched_autogroup_enabled) a new session
        # is a scheduling group of its own, given a share equal to everything in this one, the
        # load included. NGINX_SESSION=own keeps that, to see what it is worth.
        self.process = None
        if os.environ.get("NGINX_SESSION") == "own":
            subprocess.run(["nginx", "-c", conf], check=True)
        else:
            self.process = subprocess.Popen(["nginx", "-c", conf, "-g", "daemon off;"])
        for _ in range(100):
            try:
                if request(self.port, "GET", "/feeds/read")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        self.close()
        raise RuntimeError("nginx did not start")

    def pid(self):
        """The master's pid (a daemon's from its pid file), or None."""
        if self.process:
            return self.process.pid
        try:
            with open(os.path.join(self.root, "nginx.pid")) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return None

    def close(self):
        pid = self.pid()
        if pid:
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                pass
        if self.process:
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        time.sleep(0.3)
        subprocess.run(["rm", "-rf", self.root])


class Floor:
    """bench/floor.c, the least a libmicrohttpd 0.9.75 server can do for a cached read, serving
    the same bytes with feed-server's daemon settings and two worker threads (feed-server's
    default on two cores): the limit for `reads`, probed at the same moments as feed-server."""

    def __init__(self, body, etag, generation):
        self.root = tempfile.mkdtemp(prefix="bounded-floor-")
        source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "floor.c")
        binary, body_file = os.path.join(self.root, "floor"), os.path.join(self.root, "body")
        subprocess.run(["cc", "-O2", "-o", binary, source, "-lmicrohttpd"], check=True)
        with open(body_file, "wb") as f:
            f.write(body)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.process = subprocess.Popen([binary, str(self.port), "2", body_file, etag, generation], stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                if request(self.port, "GET", "/feeds/read")[1] == body:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("the floor did not start")

    def close(self):
        self.process.terminate()
        self.process.wait(10)
        subprocess.run(["rm", "-rf", self.root])


def reads():
    """Read latency of a cached feed (2 keep-alive readers), idle and during a 48-photo publish,
    with nginx and the libmicrohttpd floor serving the same bytes, each probed the same way at
    the same moments (2 readers each)."""
    photos = photo_bytes()
    server = Server()
    nginx = floor = None
    try:
        request(server.port, "PUT", "/feeds/read", json.dumps({"items": [{"title": f"item {i}"} for i in range(40)]}),
                {"Content-Type": "application/json"})
        _, served, answer = request(server.port, "GET", "/feeds/read")
        nginx = Nginx(served)
        floor = Floor(served, answer.getheader("ETag"), answer.getheader("X-Feed-Generation"))
        idle_stop = multiprocessing.Event()
        join_ours, join_nginx, join_floor = (probes(port, idle_stop, 2, 1000, "/feeds/read") for port in (server.port, nginx.port, floor.port))
        idle, idle_nginx, idle_floor = join_ours(), join_nginx(), join_floor()

        content_type, chunks = multipart(photos)
        total = sum(len(c) for c in chunks)
        stop, outcome = multiprocessing.Event(), {}

        def publish():
            outcome["started"] = time.time()
            outcome["result"] = exchange(server.port, "PUT", "/feeds/photos", {"Content-Type": content_type}, chunks, total,
                                         on_sent=lambda: outcome.setdefault("sent", time.time()))
            outcome["answered"] = time.time()
            stop.set()

        join_ours, join_nginx, join_floor = (probes(port, stop, 2, 100_000, "/feeds/read") for port in (server.port, nginx.port, floor.port))
        time.sleep(0.2)
        publisher = threading.Thread(target=publish)
        publisher.start()
        publisher.join(600)
        stop.set()
        busy_pairs, busy_nginx_pairs, busy_floor_pairs = join_ours(True), join_nginx(True), join_floor(True)
        busy, busy_nginx, busy_floor = ([ms for _, ms in pairs] for pairs in (busy_pairs, busy_nginx_pairs, busy_floor_pairs))
        status, seconds = outcome["result"][0], outcome["result"][1]
        idle_p99, busy_p99, worst = pct(idle, 99), pct(busy, 99), max(busy)
        during = f"during the 48-photo publish ({status}, {seconds:.2f} s, {total/1e6:.0f} MB)"
        print("| server | case | reads | p50 ms | p99 ms | max ms |")
        print("|---|---|---|---|---|---|")
        for name, quiet, loaded in (("feed-server", idle, busy), ("nginx (same bytes, reference)", idle_nginx, busy_nginx),
                                    ("libmicrohttpd floor (same bytes, limit)", idle_floor, busy_floor)):
            print(f"| {name} | idle | {len(quiet)} | {pct(quiet, 50):.2f} | {pct(quiet, 99):.2f} | {max(quiet):.2f} |")
            print(f"| {name} | {during} | {len(loaded)} | {pct(loaded, 50):.2f} | {pct(loaded, 99):.2f} | {max(loaded):.2f} |")
        print()
        print(f"Worst read {worst:.2f} ms (target ≤ 20 ms: {'met' if worst <= 20 else 'missed'}); "
              f"p99 {busy_p99 / idle_p99:.2f}× idle p99 (target ≤ 2×: {'met' if busy_p99 <= 2 * idle_p99 else 'missed'}); "
              f"nginx in the same run: p99 {pct(busy_nginx, 99) / pct(idle_nginx, 99):.2f}× its idle p99, "
              f"worst {max(busy_nginx):.2f} ms; the floor: p99 {pct(busy_floor, 99) / pct(idle_floor, 99):.2f}× its idle p99, "
              f"worst {max(busy_floor):.2f} ms.")
        print(f"Scheduler autogroups: {autogroups((('feed-server', server.process.pid), ('nginx', nginx.pid()), ('floor', floor.process.pid)))}.")
        # Where the tail is: reads that started while the body was being received, and those that
        # started while the images were prepared (upload done, answer not yet sent).
        started, sent, answered = outcome["started"], outcome.get("sent", outcome["started"]), outcome["answered"]
        print()
        print(f"By phase (upload {sent - started:.2f} s, preparation {answered - sent:.2f} s):")
        print()
        print("| server | phase | reads | p50 ms | p99 ms | p99 / idle p99 | max ms |")
        print("|---|---|---|---|---|---|---|")
        for name, quiet, pairs in (("feed-server", idle, busy_pairs), ("nginx", idle_nginx, busy_nginx_pairs), ("floor", idle_floor, busy_floor_pairs)):
            for phase, low, high in (("upload", started, sent), ("preparation", sent, answered)):
                values = [ms for start, ms in pairs if low <= start < high]
                if values:
                    print(f"| {name} | {phase} | {len(values)} | {pct(values, 50):.2f} | {pct(values, 99):.2f} | "
                          f"{pct(values, 99) / pct(quiet, 99):.2f} | {max(values):.2f} |")
    finally:
        try:
            if nginx:
                nginx.close()
        finally:
            try:
                if floor:
                    floor.close()
            finally:
                server.close()


def big_feed(seed, size=3_000_000):
    """A ~3 MB JSON feed: items with text, so timeline and listings have real work to do."""
    items, length, i = [], 0, 0
    while length < size:
        item = {"title": f"g{seed} item {i}", "body": ("lorem ipsum dolor sit amet " * 40) + str(i), "rank": i}
        items.append(item)
        length += len(json.dumps(item))
        i += 1
    return json.dumps({"items": items, "seed": seed}).encode()


def healthz():
    """/healthz latency while 4 clients list 3 MB feeds and a publisher keeps the listings changing."""
    server = Server("--keep-previous", "8")
    try:
        groups = [f"big{i}" for i in range(4)]
        for round_ in range(3):
            for g in groups:
                request(server.port, "PUT", f"/feeds/{g}", big_feed(round_ * 10 + groups.index(g)), {"Content-Type": "application/json"})
        idle, stop = [], threading.Event()
        read_loop(server.port, stop, idle, 500, "/healthz")
        # Built before the clock starts: building 3 MB of JSON holds the client's GIL.
        feeds = [big_feed(100 + n) for n in range(8)]

        listed = {"count": 0, "statuses": {}}
        lock = threading.Lock()

        def lister(index):
            g = groups[index]
            paths = ["/feeds", f"/feeds/{g}/generations", f"/feeds/{g}/timeline?items=/items"]
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            for n in range(100_000):
                if stop.is_set():
                    break
                connection.request("GET", paths[n % 3])
                response = connection.getresponse()
                response.read()
                with lock:
                    listed["count"] += 1
                    listed["statuses"][response.status] = listed["statuses"].get(response.status, 0) + 1
            connection.close()

        def publisher():
            # A new generation every 0.5 s, so listing caches keep being invalidated.
            for n in range(1000):
                if stop.wait(0.5):
                    break
                request(server.port, "PUT", f"/feeds/{groups[n % 4]}", feeds[n % 8], {"Content-Type": "application/json"})

        threads = [threading.Thread(target=lister, args=(i,)) for i in range(4)] + [threading.Thread(target=publisher)]
        for t in threads: t.start()
        time.sleep(1)
        busy = probes(server.port, multiprocessing.Event(), 1, 1500, "/healthz")()
        stop.set()
        for t in threads: t.join(120)
        worst = max(busy)
        print("| case | /healthz probes | p50 ms | p99 ms | max ms | listings answered | statuses |")
        print("|---|---|---|---|---|---|---|")
        print(f"| idle | {len(idle)} | {pct(idle, 50):.2f} | {pct(idle, 99):.2f} | {max(idle):.2f} | | |")
        print(f"| 4 listers + a 3 MB publish every 0.5 s | {len(busy)} | {pct(busy, 50):.2f} | {pct(busy, 99):.2f} | "
              f"{worst:.2f} | {listed['count']} | {listed['statuses']} |")
        print()
        print(f"Worst /healthz {worst:.2f} ms (target ≤ 20 ms: {'met' if worst <= 20 else 'missed'}).")
    finally:
        server.close()


def trickle():
    """1,000 clients that send one header line a second, on a server whose every slot they take;
    then fresh clients ask /healthz. With --header-timeout T, each should be answered within T + 1 s."""
    count = int(os.environ.get("TRICKLERS", "1000"))
    server = Server("--max-connections", str(count), "--header-timeout", str(HEADER_TIMEOUT))
    sockets = []
    try:
        idle_status, _, _ = request(server.port, "GET", "/healthz")
        for i in range(count):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            s.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode())
            sockets.append(s)
        opened = time.perf_counter()
        stop = threading.Event()

        def trickler():
            # One header line a second on every socket still open, for at most 4× the deadline.
            for n in range(HEADER_TIMEOUT * 4):
                if stop.wait(1):
                    break
                for s in sockets:
                    try:
                        s.send(f"X-Slow-{n}: 1\r\n".encode(), socket.MSG_DONTWAIT)
                    except OSError:
                        pass

        feeder = threading.Thread(target=trickler)
        feeder.start()
        time.sleep(1)
        fresh = []
        for attempt in range(3):
            started = time.perf_counter()
            status, note = None, ""
            for _ in range(HEADER_TIMEOUT * 4):
                try:
                    status, _, _ = request(server.port, "GET", "/healthz", timeout=HEADER_TIMEOUT * 4)
                    break
                except (ConnectionResetError, ConnectionRefusedError, http.client.RemoteDisconnected) as error:
                    note = type(error).__name__
                    time.sleep(0.05)
                except socket.timeout:
                    note = "timeout"
                    break
            fresh.append((status, time.perf_counter() - started, started - opened, note))
        stop.set()
        feeder.join(30)
        time.sleep(max(0.0, opened + HEADER_TIMEOUT + 2 - time.perf_counter()))
        closed = 0
        for s in sockets:
            try:
                s.setblocking(False)
                if s.recv(4096) == b"":
                    closed += 1
            except BlockingIOError:
                pass
            except OSError:
                closed += 1
        print(f"| tricklers (= --max-connections) | --header-timeout s | fresh client | started after tricklers s | status | answered in s | target ≤ {HEADER_TIMEOUT + 1} s |")
        print("|---|---|---|---|---|---|---|")
        for n, (status, seconds, after, note) in enumerate(fresh, 1):
            print(f"| {count} | {HEADER_TIMEOUT} | {n} | {after:.2f} | {status}{' (' + note + ' before)' if note else ''} | {seconds:.2f} | "
                  f"{'met' if status == 200 and seconds <= HEADER_TIMEOUT + 1 else 'missed'} |")
        print()
        print(f"Tricklers closed by the server {HEADER_TIMEOUT + 2} s after they connected: {closed} of {count}.")
    finally:
        for s in sockets:
            s.close()
        server.close()


SCENARIOS = {"concurrent": concurrent, "unauthorised": unauthorised, "reads": reads, "healthz": healthz, "trickle": trickle}
for name in sys.argv[3:]:
    print(f"\n### {name}\n")
    sys.stdout.flush()
    SCENARIOS[name]()
    sys.stdout.flush()
