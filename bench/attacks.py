#!/usr/bin/env python3
"""Attack benchmarks against a release feed-server (standard library only, traffic only to
127.0.0.1, every loop bounded in count and time, each scenario under an alarm). Each figure is
printed beside an idle figure from the same run and its target, then as one `SUMMARY` line.

Usage: attacks.py BINARY [SCENARIO...]   (default: all, in this order)
  versions  4 clients read a group of three ~9.9 MiB generations under fresh, unpublished
            schemaVersions for 10 s: /healthz and a cached read, every 20 ms (p99 ≤ 50 ms)
  faults    a 20 s slow-publish and 8 corrupt-feed POSTs on one group: the same probes
  sparse    a 4,096-byte pax tar with a GNU sparse entry (255 MiB of hole) restored: bytes
            written under the root and peak RSS
  fifo      --seed --watch, a seed payload.json replaced by a FIFO: later edits, SIGTERM
  cache     8 groups of 4–6 MiB read under two keys each: RSS before, peak, after DELETE
  bigjson   4 concurrent 16 MiB JSON publishes, refused (default limit) and accepted (raised)
  listings  GET /feeds over six ~5 MiB groups; 8 concurrent timelines over 1,000,000 items
  streams   10 event streams on unused schemaVersions: server CPU over 5 s; a long-poll meanwhile
Every scenario ends with SIGTERM and reports the exit status and how long it took.

The helpers that bench/bounded.py already has (request, exchange, percentiles, RSS sampling, the
server on port 0) are imported from it rather than written again.
"""
import contextlib, http.client, io, json, multiprocessing, os, random, signal, socket, subprocess, sys, tarfile, tempfile, threading, time

if len(sys.argv) < 2:
    sys.exit(__doc__)
BINARY = sys.argv[1]
MIB = 1024 * 1024
SHUTDOWN_TIMEOUT = 10            # the server's default --shutdown-timeout
P99_TARGET_MS = 50
RSS_TARGET_MIB = 256
SCENARIO_ALARM_S = 300           # a scenario that runs longer than this is stopped


def _import_bounded():
    """bench/bounded.py reads `BINARY PHOTO_DIR SCENARIO...` from argv when imported and runs the
    scenarios named; with none named it only defines its helpers, which is all we want."""
    saved = sys.argv
    sys.argv = [saved[0], BINARY, "-"]
    sys.dont_write_bytecode = True       # no bench/__pycache__ left in the work tree
    try:
        import bounded
    finally:
        sys.argv = saved
    return bounded


bounded = _import_bounded()
request, exchange, pct, RSSSampler = bounded.request, bounded.exchange, bounded.pct, bounded.RSSSampler


# ---------------------------------------------------------------- the server and /proc

class Server(bounded.Server):
    """bounded.py's server (port 0, own root, access log off) plus SIGTERM timing and /proc figures."""

    def __init__(self, *args):
        try:
            super().__init__(*args)
        except RuntimeError:
            self.process.kill()
            self.process.wait()
            raise
        self.data = os.path.join(self.root, "data")

    def rss_mib(self):
        return self.status("VmRSS") / 1024

    def hwm_mib(self):
        return self.status("VmHWM") / 1024

    def reset_hwm(self):
        """Resets VmHWM to the current RSS (Linux clear_refs 5), so a peak belongs to one step."""
        with open(f"/proc/{self.process.pid}/clear_refs", "w") as f:
            f.write("5")

    def cpu_seconds(self):
        """utime + stime from /proc/PID/stat (fields 14 and 15, counted after the command name)."""
        with open(f"/proc/{self.process.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def written_bytes(self):
        """wchar of /proc/PID/io: every byte the process handed to write() (files and sockets)."""
        with open(f"/proc/{self.process.pid}/io") as f:
            return int(next(line for line in f if line.startswith("wchar")).split()[1])

    def alive(self):
        if self.process.poll() is not None:
            return False
        try:
            return request(self.port, "GET", "/healthz", timeout=5)[0] == 200
        except OSError:
            return False

    def sigterm(self):
        """SIGTERM and wait up to the shutdown timeout plus 5 s: (exit status or None, seconds)."""
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(SHUTDOWN_TIMEOUT + 5)
        except subprocess.TimeoutExpired:
            code = None
        return code, time.monotonic() - started

    def log_tail(self, lines=5):
        self.log.flush()
        self.log.seek(0)
        return self.log.read().splitlines()[-lines:]


@contextlib.contextmanager
def running(scenario, *args, label="", sigterm=True):
    """A server for one scenario (or one step of it): SIGTERM reported when the step ends
    normally (unless the step reports it itself), the process killed and its root removed
    whatever happens."""
    server = Server(*args)
    try:
        yield server
        if sigterm:
            report_sigterm(scenario, server, label)
    finally:
        server.close()


def report_sigterm(scenario, server, label=""):
    code, seconds = server.sigterm()
    summary(scenario, f"SIGTERM{' (' + label + ')' if label else ''}", f"exit {code} in {seconds:.2f} s", "",
            f"exit 0 within {SHUTDOWN_TIMEOUT} s", code == 0 and seconds <= SHUTDOWN_TIMEOUT)
    if code != 0:
        print(f"  server log tail: {server.log_tail()}")


def tree_bytes(path):
    """(allocated bytes as du counts them, apparent bytes of regular files) under `path`."""
    allocated = apparent = 0
    for folder, dirs, files in os.walk(path):
        for name in dirs + files:
            try:
                st = os.lstat(os.path.join(folder, name))
            except FileNotFoundError:
                continue   # removed while we walked: an upload folder going away
            allocated += st.st_blocks * 512
            if name in files and not os.path.islink(os.path.join(folder, name)):
                apparent += st.st_size
    return allocated, apparent


class TreeSampler(threading.Thread):
    """Samples tree_bytes(path) every 20 ms until stopped (at most `limit_s`): the peak of each."""

    def __init__(self, path, limit_s=120):
        super().__init__(daemon=True)
        self.path, self.limit_s, self.peak, self.stop_event = path, limit_s, (0, 0), threading.Event()

    def run(self):
        end = time.monotonic() + self.limit_s
        while not self.stop_event.is_set() and time.monotonic() < end:
            now = tree_bytes(self.path)
            self.peak = (max(self.peak[0], now[0]), max(self.peak[1], now[1]))
            time.sleep(0.02)

    def stop(self):
        self.stop_event.set()
        self.join()
        return self.peak


# ---------------------------------------------------------------- the machine

def machine_cpu():
    """(busy, total) jiffies of all cores from /proc/stat."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


HEAVY = ("swift-frontend", "swift-build", "swiftc", "swift-test", "clang", "ld", "ld.gold", "cc1", "xctest",
         "feed-server", "feed-fuzz", "python3", "chromium", "podman", "nginx", "schemathesis")


def other_jobs(own_pids):
    """Processes that look like a build or test run (by name), ours excluded, with how many."""
    counts = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) in own_pids:
            continue
        try:
            with open(f"/proc/{pid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        if name in HEAVY or name.endswith("Tests.xctest") or name.startswith("swift-"):
            counts[name] = counts.get(name, 0) + 1
    return counts


def own_pids():
    pids = {os.getpid()}
    for child in multiprocessing.active_children():
        pids.add(child.pid)
    try:
        with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as f:
            pids.update(int(p) for p in f.read().split())
    except OSError:
        pass
    return pids


def load_line(busy_share=None):
    load = open("/proc/loadavg").read().split()[:3]
    jobs = other_jobs(own_pids())
    others = ", ".join(f"{n}×{c}" for n, c in sorted(jobs.items())) or "none"
    share = f"; all cores {busy_share:.0f}% busy during the scenario" if busy_share is not None else ""
    return f"machine: {os.cpu_count()} cores, load average {' '.join(load)}{share}; other build/test processes now: {others}"


# ---------------------------------------------------------------- output

def summary(scenario, figure, ours, idle, target, met):
    """One line per figure: ours, the idle anchor from the same run, the target, met or not."""
    verdict = "" if met is None else ("met" if met else "MISSED")
    print(f"SUMMARY {scenario} | {figure} | ours {ours} | idle {idle or '-'} | target {target or '-'} | {verdict or '-'}")
    sys.stdout.flush()


def latency_figures(values):
    if not values:
        return "no samples"
    return f"p50 {pct(values, 50):.2f} / p99 {pct(values, 99):.2f} / max {max(values):.2f} ms ({len(values)} probes)"


# ---------------------------------------------------------------- probes (their own processes)

PROBE_PATHS = ("/healthz", "/feeds/small")


def _probe_loop(port, path, period, stop, limit_s, queue):
    """GETs `path` every `period` s on one keep-alive connection (a fresh one after an error) until
    `stop` is set or `limit_s` pass. Puts (latencies ms, failures) on `queue`."""
    latencies, failures, connection = [], [], None
    deadline = time.monotonic() + limit_s
    next_at = time.monotonic()
    while not stop.is_set() and time.monotonic() < deadline:
        started = time.perf_counter()
        try:
            if connection is None:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                failures.append(f"status {response.status}")
        except (OSError, http.client.HTTPException) as error:
            failures.append(type(error).__name__)
            connection.close()
            connection = None
        # A failed probe counts with the time it took: it is at least that slow.
        latencies.append((time.perf_counter() - started) * 1000)
        next_at = max(next_at + period, time.monotonic())
        time.sleep(max(0.0, next_at - time.monotonic()))
    if connection:
        connection.close()
    queue.put((latencies, failures))


class Probes:
    """/healthz and a cached read of `small`, each from its own process, so the clients' own GIL
    (threads building megabytes or hammering the server) never adds to what is measured."""

    def __init__(self, port, period=0.02, limit_s=120):
        self.stop_event = multiprocessing.Event()
        self.queues = {path: multiprocessing.Queue() for path in PROBE_PATHS}
        self.workers = [multiprocessing.Process(target=_probe_loop, args=(port, path, period, self.stop_event, limit_s, queue))
                        for path, queue in self.queues.items()]
        for worker in self.workers:
            worker.start()

    def stop(self):
        """{path: (latencies ms, failures)}"""
        self.stop_event.set()
        results = {path: queue.get(timeout=180) for path, queue in self.queues.items()}
        for worker in self.workers:
            worker.join(30)
        return results


def probe_idle(server, seconds=3):
    probes = Probes(server.port)
    time.sleep(seconds)
    return probes.stop()


def report_probes(scenario, idle, during, label):
    print(f"| probe | case | p50 / p99 / max | failures |")
    print(f"|---|---|---|---|")
    for path in PROBE_PATHS:
        for case, figures in (("idle", idle), (label, during)):
            latencies, failures = figures[path]
            print(f"| {path} | {case} | {latency_figures(latencies)} | {len(failures)} {sorted(set(failures)) if failures else ''} |")
    for path in PROBE_PATHS:
        quiet, busy = idle[path][0], during[path][0]
        p99 = pct(busy, 99) if busy else float("inf")
        summary(scenario, f"{path} p99 {label}", f"{p99:.2f} ms (max {max(busy or [0]):.2f}, {len(during[path][1])} failed)",
                f"{pct(quiet, 99):.2f} ms", f"p99 ≤ {P99_TARGET_MS} ms", p99 <= P99_TARGET_MS and not during[path][1])


# ---------------------------------------------------------------- payloads

LOREM = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 16


def sized_payload(size, tag):
    """A JSON payload of about `size` bytes (at most): items with text, distinct per `tag`."""
    head, tail = '{"tag":%s,"items":[' % json.dumps(tag), "]}"
    items, length, i = [], len(head) + len(tail), 0
    while True:
        item = json.dumps({"title": f"{tag} item {i}", "body": LOREM, "rank": i}, separators=(",", ":"))
        if length + len(item) + 1 > size:
            break
        items.append(item)
        length += len(item) + 1
        i += 1
    return (head + ",".join(items) + tail).encode()


def publish(server, group, body, query="", timeout=120):
    status, answer, _ = request(server.port, "PUT", f"/feeds/{group}{query}", body, {"Content-Type": "application/json"}, timeout)
    if status not in (200, 201):
        raise RuntimeError(f"publish {group}: {status} {answer[:300]!r}")
    return json.loads(answer)


def publish_small(server):
    """The small group the probes read, read once so its answer is cached."""
    publish(server, "small", json.dumps({"items": [{"title": f"small {i}"} for i in range(20)]}).encode())
    request(server.port, "GET", "/feeds/small")


def problem_slug(body):
    try:
        return json.loads(body).get("type", "").rsplit("/", 1)[-1]
    except (ValueError, AttributeError):
        return ""


# ---------------------------------------------------------------- versions

def versions():
    """Three ~9.9 MiB generations of `big`; 4 clients read it under schemaVersions nobody
    published, a fresh one each time (so no cache entry and no once-a-second bound applies)."""
    with running("versions", "--keep-previous", "2") as server:
        size = int(9.9 * MIB) - 4096          # the envelope around the payload makes feed.json ~9.9 MiB
        for n in range(3):
            publish(server, "big", sized_payload(size, f"generation {n}"))
        publish_small(server)
        feed_sizes = sorted(os.path.getsize(os.path.join(folder, "feed.json"))
                            for folder, _, files in os.walk(os.path.join(server.data, "big")) if "feed.json" in files)
        print(f"big: {len(feed_sizes)} generations on disk, feed.json {', '.join(f'{s / MIB:.2f}' for s in feed_sizes)} MiB")
        idle = probe_idle(server)

        probes = Probes(server.port)
        time.sleep(0.2)
        used, lock, outcome = {1}, threading.Lock(), {"statuses": {}, "ms": []}

        def fresh_version():
            with lock:
                while True:
                    version = random.randrange(2, 2**31 - 1)
                    if version not in used:
                        used.add(version)
                        return version

        def reader(seconds=10, limit=100_000):
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            end = time.monotonic() + seconds
            for _ in range(limit):
                if time.monotonic() >= end:
                    break
                started = time.perf_counter()
                try:
                    connection.request("GET", f"/feeds/big?schemaVersion={fresh_version()}")
                    response = connection.getresponse()
                    response.read()
                    status = response.status
                except (OSError, http.client.HTTPException) as error:
                    status = type(error).__name__
                    connection.close()
                with lock:
                    outcome["statuses"][status] = outcome["statuses"].get(status, 0) + 1
                    outcome["ms"].append((time.perf_counter() - started) * 1000)
            connection.close()

        rss_before = server.rss_mib()
        rss = RSSSampler(server)
        rss.start()
        cpu_before = server.cpu_seconds()
        threads = [threading.Thread(target=reader) for _ in range(4)]
        for t in threads: t.start()
        for t in threads: t.join(60)
        cpu = server.cpu_seconds() - cpu_before
        during = probes.stop()
        peak = rss.stop() / 1024
        time.sleep(1)
        # RSS after, against before: does every fresh version leave something behind?
        print(f"attack: {sum(outcome['statuses'].values())} reads under fresh versions in ~10 s, statuses {outcome['statuses']}, "
              f"each {latency_figures(outcome['ms'])}; server CPU {cpu:.1f} s; RSS {rss_before:.0f} MiB before, "
              f"peak {peak:.0f}, {server.rss_mib():.0f} 1 s after")
        print()
        report_probes("versions", idle, during, "during the attack")
        summary("versions", "attack reads answered", f"{sum(outcome['statuses'].values())} {outcome['statuses']}", "", "", None)
        summary("versions", "peak RSS during the attack", f"{peak:.0f} MiB", "", f"≤ {RSS_TARGET_MIB} MiB", peak <= RSS_TARGET_MIB)


# ---------------------------------------------------------------- faults

def faults():
    """A 20 s slow-publish on g, then 8 corrupt-feed POSTs to g while it holds, probed throughout
    the hold (until its generation is served)."""
    with running("faults", "--fault-lab") as server:
        publish(server, "g", json.dumps({"items": [{"title": "before the faults"}]}).encode())
        publish_small(server)
        idle = probe_idle(server)

        probes = Probes(server.port)
        time.sleep(0.2)

        def post(kind, extra=None):
            body = json.dumps({"kind": kind, **(extra or {})}).encode()
            started = time.perf_counter()
            try:
                status, answer, _ = request(server.port, "POST", "/feeds/g/faults", body, {"Content-Type": "application/json"}, 60)
            except (OSError, http.client.HTTPException) as error:
                return type(error).__name__, time.perf_counter() - started, ""
            return status, time.perf_counter() - started, answer

        held_at = time.monotonic()
        slow_status, slow_s, slow_answer = post("slow-publish", {"seconds": 20})
        held = json.loads(slow_answer).get("generationId") if slow_status == 201 else None
        results = [None] * 8

        def corrupt(i):
            status, seconds, answer = post("corrupt-feed")
            results[i] = (status, seconds, problem_slug(answer) if status != 201 else "injected")

        threads = [threading.Thread(target=corrupt, args=(i,)) for i in range(8)]
        for t in threads: t.start()
        for t in threads: t.join(90)
        # Wait (bounded) for the held generation to be served: the hold's timer fired.
        served_after = None
        for _ in range(120):
            _, _, answer = request(server.port, "GET", "/feeds/g")
            if held and answer.getheader("X-Feed-Generation") == held:
                served_after = time.monotonic() - held_at
                break
            time.sleep(0.25)
        during = probes.stop()
        alive = server.alive()
        statuses = {}
        for status, _, slug in results:
            key = f"{status} {slug}".strip()
            statuses[key] = statuses.get(key, 0) + 1
        print(f"slow-publish 20 s: {slow_status} in {slow_s * 1000:.1f} ms, generation {held}; "
              f"served {'after %.1f s' % served_after if served_after else 'not within 30 s'}")
        print(f"8 corrupt-feed POSTs: {statuses}; answered in {min(r[1] for r in results) * 1000:.1f}–{max(r[1] for r in results) * 1000:.1f} ms")
        print()
        report_probes("faults", idle, during, "during the hold and the POSTs")
        summary("faults", "8 corrupt-feed POSTs during the hold", str(statuses), "", "answered (409 group-held expected)",
                all(isinstance(r[0], int) for r in results))
        summary("faults", "slow-publish served after its hold", f"{served_after:.1f} s" if served_after else "not served",
                "", "~20 s", served_after is not None and served_after <= 25)
        summary("faults", "server alive afterwards", str(alive), "", "alive", alive)


# ---------------------------------------------------------------- sparse

SPARSE_SIZE = 267386880   # 255 MiB


def sparse_tar(sparse_name, with_payload):
    """A 4,096-byte pax tar: `sparse_name` is a GNU sparse 0.1 entry (the map in pax headers)
    storing 1 byte after a hole of 255 MiB less one; a small payload.json first when
    `with_payload`. Unpacked with its holes filled, it would be 255 MiB."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        if with_payload:
            payload = json.dumps({"items": [{"title": "hole", "image": "hole.png"}]}).encode()
            info = tarfile.TarInfo("payload.json")
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
        info = tarfile.TarInfo(sparse_name)
        info.size = 1
        info.pax_headers = {"GNU.sparse.size": str(SPARSE_SIZE), "GNU.sparse.numblocks": "1",
                            "GNU.sparse.map": f"{SPARSE_SIZE - 1},1"}
        tar.addfile(info, io.BytesIO(b"}"))
    data = buffer.getvalue()
    # tarfile pads to a 10 KiB record; past 4,096 bytes it is only that padding of zeros.
    assert not data[4096:].strip(b"\0"), "the tar needs more than 4,096 bytes"
    return data[:4096]


def sparse():
    """The tar restored as /feeds/g/archive, with and without raised image budgets, the hole in
    an asset and in payload.json; a fresh server each, so VmHWM is that request's peak."""
    cases = [("assets/hole.png", True), ("payload.json", False)]
    queries = ["", "?maxBytes=1073741824&budgetBytes=4294967296"]
    print("| sparse entry | query | status | problem | s | du before → peak → after KiB | file bytes peak growth | wchar growth | VmHWM MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    figures = []
    for name, with_payload in cases:
        body = sparse_tar(name, with_payload)
        for query in queries:
            with running("sparse", label=f"{name}{query and ' raised budgets'}") as server:
                request(server.port, "GET", "/healthz")
                idle_hwm = server.hwm_mib()
                before = tree_bytes(server.data)
                wchar_before = server.written_bytes()
                sampler = TreeSampler(server.data)
                sampler.start()
                started = time.perf_counter()
                status, answer, _ = request(server.port, "PUT", f"/feeds/g/archive{query}", body, {"Content-Type": "application/x-tar"})
                seconds = time.perf_counter() - started
                time.sleep(0.1)
                peak = sampler.stop()
                after = tree_bytes(server.data)
                wrote = server.written_bytes() - wchar_before
                hwm = server.hwm_mib()
                grown = max(0, peak[1] - before[1])
                print(f"| {name} | {query or '-'} | {status} | {problem_slug(answer)} | {seconds:.2f} | "
                      f"{before[0] // 1024} → {peak[0] // 1024} → {after[0] // 1024} | {grown} | {wrote} | {hwm:.1f} (idle {idle_hwm:.1f}) |")
                figures.append((name, query, status, grown, wrote, peak[0] - before[0], hwm, idle_hwm, len(body)))
    print()
    for name, query, status, grown, wrote, du_grown, hwm, idle_hwm, size in figures:
        label = f"{name}{' raised budgets' if query else ''}"
        # wchar also counts the answer on the socket, hence the 64 KiB of slack on it.
        summary("sparse", f"{label}: status, bytes written", f"{status}; files +{grown} B peak, du +{du_grown // 1024} KiB peak, wchar {wrote} B",
                f"body {size} B", "files and wchar ≤ body (+64 KiB slack on wchar)", grown <= size and wrote <= size + 64 * 1024)
        summary("sparse", f"{label}: VmHWM", f"{hwm:.1f} MiB", f"{idle_hwm:.1f} MiB", f"≤ {RSS_TARGET_MIB} MiB", hwm <= RSS_TARGET_MIB)


# ---------------------------------------------------------------- fifo

def wait_for(predicate, limit_s, step=0.05):
    """Polls `predicate` until true or `limit_s`: seconds it took, or None."""
    started = time.monotonic()
    while time.monotonic() - started < limit_s:
        if predicate():
            return time.monotonic() - started
        time.sleep(step)
    return None


def fifo():
    """--seed --watch; a's payload.json becomes a FIFO nobody writes; b is edited before (idle
    anchor) and after it: each edit should still be published, and SIGTERM should still work."""
    seed = tempfile.mkdtemp(prefix="attacks-seed-")
    try:
        for group in ("a", "b"):
            os.makedirs(os.path.join(seed, group))
            with open(os.path.join(seed, group, "payload.json"), "w") as f:
                json.dump({"items": [{"title": f"{group} seeded"}]}, f)

        def served(group):
            try:
                status, body, _ = request(server.port, "GET", f"/feeds/{group}", timeout=5)
            except OSError:
                return None
            return json.loads(body)["payload"] if status == 200 else None

        def edit_b(n):
            """Writes b's payload as an editor would (temporary file, rename): seconds until served."""
            path = os.path.join(seed, "b", "payload.json")
            with open(path + ".tmp~", "w") as f:
                json.dump({"items": [{"title": f"b edit {n}"}]}, f)
            os.rename(path + ".tmp~", path)
            return wait_for(lambda: (served("b") or {}).get("items", [{}])[0].get("title") == f"b edit {n}", 10)

        with running("fifo", "--seed", seed, "--watch") as server:
            seeded = wait_for(lambda: served("a") and served("b"), 10)
            time.sleep(0.5)
            idle_edit = edit_b(0)
            fifo_path = os.path.join(seed, "a", "payload.json")
            os.remove(fifo_path)
            os.mkfifo(fifo_path)
            time.sleep(1.0)                              # the 200 ms debounce, and then some
            edits = [edit_b(n) for n in (1, 2)]
            a_kept = (served("a") or {}).get("items", [{}])[0].get("title") == "a seeded"
            alive = server.alive()
            about_a = [line for line in server.log_tail(50) if "'a'" in line]
            print(f"server log about a: {about_a[-2:]}")
            print(f"seeded in {seeded and round(seeded, 2)} s; b edit before the FIFO published in {idle_edit and round(idle_edit, 2)} s; "
                  f"after: {', '.join(str(e and round(e, 2)) for e in edits)} s; a still serves its last good feed: {a_kept}; alive: {alive}")
            print()
            summary("fifo", "b edits after a's payload.json became a FIFO, published in",
                    ", ".join("not within 10 s" if e is None else f"{e:.2f} s" for e in edits),
                    "not published" if idle_edit is None else f"{idle_edit:.2f} s", "published (≤ 10 s)",
                    all(e is not None for e in edits))
            summary("fifo", "a keeps its last good feed; server alive", f"{a_kept}; {alive}", "", "True; True", a_kept and alive)
    finally:
        # If a reader of the FIFO is still blocked (a server past its kill), opening it for
        # writing without blocking releases it; ENXIO means nobody is waiting.
        with contextlib.suppress(OSError):
            os.close(os.open(os.path.join(seed, "a", "payload.json"), os.O_WRONLY | os.O_NONBLOCK))
        subprocess.run(["rm", "-rf", seed])


# ---------------------------------------------------------------- cache

def cache_round(server, groups, bodies):
    """Publishes `groups`, reads each under two keys (with and without ?schemaVersion=1), twice,
    with 4 concurrent readers, deletes them: (RSS after publishing, peak of the reads, after the
    reads, 1 s after the DELETEs, read statuses, DELETE statuses)."""
    for group, body in zip(groups, bodies):
        publish(server, group, body)
    published = server.rss_mib()
    server.reset_hwm()
    sampler = RSSSampler(server)
    sampler.start()
    keys = [f"/feeds/{g}{q}" for g in groups for q in ("", "?schemaVersion=1")] * 2
    statuses, lock = {}, threading.Lock()

    def reader(part):
        for path in part:
            status = request(server.port, "GET", path)[0]
            with lock:
                statuses[status] = statuses.get(status, 0) + 1

    threads = [threading.Thread(target=reader, args=(keys[i::4],)) for i in range(4)]
    for t in threads: t.start()
    for t in threads: t.join(120)
    peak = max(sampler.stop() / 1024, server.hwm_mib())
    after_reads = server.rss_mib()
    deletes = {request(server.port, "DELETE", f"/feeds/{g}")[0] for g in groups}
    time.sleep(1.0)
    return published, peak, after_reads, server.rss_mib(), statuses, deletes


def cache():
    """Eight groups of 4–6 MiB read under two keys each, then deleted; two rounds, so memory kept
    after the first DELETE can be told apart (reused: the second round stays level; leaked: it
    grows)."""
    with running("cache") as server:
        request(server.port, "GET", "/healthz")
        idle = server.rss_mib()
        groups = [f"c{i}" for i in range(8)]
        bodies = [sized_payload(int((4 + 2 * i / 7) * MIB), group) for i, group in enumerate(groups)]
        rounds = [cache_round(server, groups, bodies) for _ in range(2)]
        print("| round | idle MiB | after 8 publishes | peak during 32 reads | after the reads | after DELETE (+1 s) | read statuses | DELETE |")
        print("|---|---|---|---|---|---|---|---|")
        for n, (published, peak, after_reads, after_delete, statuses, deletes) in enumerate(rounds, 1):
            print(f"| {n} | {idle:.1f} | {published:.1f} | {peak:.1f} | {after_reads:.1f} | {after_delete:.1f} | {statuses} | {deletes} |")
        print()
        peak = max(r[1] for r in rounds)
        summary("cache", "peak RSS reading 16 keys of 4–6 MiB (max of 2 rounds)", f"{peak:.1f} MiB", f"{idle:.1f} MiB",
                f"≤ {RSS_TARGET_MIB} MiB", peak <= RSS_TARGET_MIB)
        summary("cache", "RSS after the reads → after DELETE of all, rounds 1; 2",
                "; ".join(f"{r[2]:.1f} → {r[3]:.1f} MiB" for r in rounds), f"{idle:.1f} MiB", "reported (no target)", None)


# ---------------------------------------------------------------- bigjson

def bigjson():
    """Four concurrent 16 MiB + 64 KiB JSON publishes: refused under the default 16 MiB
    --max-payload-bytes, accepted under 32 MiB as far as the 64 MiB --max-memory-body-bytes holds
    them (each byte counts three times, bytes, parsed form and feed written: one; the others get 503). A fresh server
    for each, so VmHWM is its own."""
    bodies = [sized_payload(16 * MIB + 64 * 1024, f"big {i}") for i in range(4)]
    variants = [("default limit", (), [413] * 4), ("--max-payload-bytes 32 MiB", ("--max-payload-bytes", str(32 * MIB)), [201, 503, 503, 503])]
    print("| variant | statuses | seconds each | idle RSS MiB | peak VmRSS sampled | VmHWM MiB |")
    print("|---|---|---|---|---|---|")
    rows = []
    for label, args, expected in variants:
        with running("bigjson", *args, label=label) as server:
            request(server.port, "GET", "/healthz")
            idle = server.rss_mib()
            sampler = RSSSampler(server)
            sampler.start()
            results = [None] * 4

            def put(i):
                results[i] = exchange(server.port, "PUT", f"/feeds/j{i}", {"Content-Type": "application/json"}, [bodies[i]], len(bodies[i]), limit_s=120)

            threads = [threading.Thread(target=put, args=(i,)) for i in range(4)]
            for t in threads: t.start()
            for t in threads: t.join(150)
            peak, hwm = sampler.stop() / 1024, server.hwm_mib()
            statuses = [r[0] for r in results]
            print(f"| {label} | {statuses} | {', '.join(f'{r[1]:.2f}' for r in results)} | {idle:.1f} | {peak:.1f} | {hwm:.1f} |")
            rows.append((label, statuses, expected, results, idle, hwm))
    print()
    for label, statuses, expected, results, idle, hwm in rows:
        summary("bigjson", f"{label}: statuses, max seconds", f"{statuses}, {max(r[1] for r in results):.2f} s", "",
                f"{expected} in any order", sorted(statuses) == expected)
        summary("bigjson", f"{label}: VmHWM", f"{hwm:.1f} MiB", f"{idle:.1f} MiB", f"≤ {RSS_TARGET_MIB} MiB", hwm <= RSS_TARGET_MIB)


def flood_body(shape, i):
    """(headers, chunks, length, chunked) of a publish just under 16 MiB held in memory: a JSON body,
    the same sent chunked, or a multipart payload part."""
    payload = sized_payload(16 * MIB - 64 * 1024, f"flood {i}")
    if shape == "multipart":
        boundary = "floodboundary"
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"payload\"\r\n"
                f"Content-Type: application/json\r\n\r\n").encode() + payload + f"\r\n--{boundary}--\r\n".encode()
        return {"Content-Type": f"multipart/form-data; boundary={boundary}"}, [body], len(body), False
    pieces = [payload[k:k + MIB] for k in range(0, len(payload), MIB)] if shape == "chunked" else [payload]
    return {"Content-Type": "application/json"}, pieces, len(payload), shape == "chunked"


def jsonflood():
    """24 concurrent publishes of just under 16 MiB each held in memory, on default options, in
    three shapes (JSON, chunked JSON, a multipart payload part), a fresh server each: the bodies
    held in memory are bounded together (--max-memory-body-bytes), so some are refused 503 and the
    peak stays under the target; /healthz is probed throughout."""
    for shape in ("json", "chunked", "multipart"):
        bodies = [flood_body(shape, i) for i in range(24)]
        with running("jsonflood", label=shape) as server:
            publish_small(server)
            idle_probes = probe_idle(server)
            idle = server.rss_mib()
            results = [None] * len(bodies)

            def put(i):
                headers, chunks, length, chunked = bodies[i]
                try:
                    results[i] = exchange(server.port, "PUT", f"/feeds/f{i}", headers, chunks, length, limit_s=120,
                                          chunked=chunked)
                except OSError as error:
                    results[i] = (f"error {type(error).__name__}", 0.0)

            probes = Probes(server.port)
            threads = [threading.Thread(target=put, args=(i,)) for i in range(len(bodies))]
            for t in threads: t.start()
            for t in threads: t.join(150)
            during = probes.stop()
            hwm = server.hwm_mib()
            statuses = [r[0] for r in results]
            counts = {status: statuses.count(status) for status in set(statuses)}
            print(f"| 24 × {bodies[0][2] / MIB:.2f} MiB {shape} | {counts} | slowest {max(r[1] for r in results):.2f} s "
                  f"| idle {idle:.1f} MiB | VmHWM {hwm:.1f} MiB |")
            report_probes("jsonflood", idle_probes, during, f"24 concurrent 16 MiB {shape} publishes")
            summary("jsonflood", f"24 concurrent 16 MiB {shape} publishes: statuses", str(counts), "",
                    "each 201 or 503", all(s in (201, 503) for s in statuses))
            summary("jsonflood", f"24 concurrent 16 MiB {shape} publishes: VmHWM", f"{hwm:.1f} MiB", f"{idle:.1f} MiB",
                    f"≤ {RSS_TARGET_MIB} MiB", hwm <= RSS_TARGET_MIB)


def deleted_files_held(pid):
    """(distinct deleted files the process holds open, their bytes together), from /proc/PID/fd."""
    inodes = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").endswith("(deleted)"):
                info = os.stat(f"/proc/{pid}/fd/{fd}")
                inodes[info.st_ino] = info.st_size
        except OSError:
            pass
    return len(inodes), sum(inodes.values())


def exports():
    """Ten clients ask for the archive of a ~10 MiB group and never read it: the deleted archive
    files the server holds open for them, and /healthz meanwhile."""
    with running("exports") as server:
        publish_small(server)
        publish(server, "big", sized_payload(10 * MIB, "export"))
        idle_probes = probe_idle(server)
        sockets = []
        probes = Probes(server.port)
        for _ in range(10):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", server.port))
            sock.sendall(b"GET /feeds/big/archive HTTP/1.1\r\nHost: x\r\n\r\n")
            sockets.append(sock)
        time.sleep(3)
        files, held = deleted_files_held(server.process.pid)
        during = probes.stop()
        print(f"| 10 stalled archive readers | {files} deleted file(s) held, {held / MIB:.1f} MiB |")
        report_probes("exports", idle_probes, during, "10 stalled archive readers")
        summary("exports", "10 stalled readers of one ~10 MiB archive: deleted files held", f"{files}, {held / MIB:.1f} MiB",
                "", "at most one per work-pool thread (two writers may miss at once)", files <= os.cpu_count())
        for sock in sockets:
            sock.close()


def stalled():
    """20 groups of ~15 MiB, each read once by a client that never reads its answer: every answer
    is evicted from the 64 MiB read cache but held until its connection ends. VmHWM, statuses, and
    /healthz meanwhile."""
    with running("stalled") as server:
        publish_small(server)
        for i in range(20):
            publish(server, f"s{i}", sized_payload(15 * MIB, f"stalled {i}"))
        idle_probes = probe_idle(server)
        idle = server.rss_mib()
        server.reset_hwm()
        probes = Probes(server.port)
        sockets, statuses = [], []
        for i in range(20):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", server.port))
            sock.sendall(f"GET /feeds/s{i} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            sock.settimeout(5)
            statuses.append(int(sock.recv(64).split()[1]))
            sockets.append(sock)
        time.sleep(2)
        during = probes.stop()
        hwm = server.hwm_mib()
        counts = {status: statuses.count(status) for status in set(statuses)}
        print(f"| 20 stalled readers of 15 MiB answers | {counts} | idle {idle:.1f} MiB | VmHWM {hwm:.1f} MiB |")
        report_probes("stalled", idle_probes, during, "20 stalled readers")
        summary("stalled", "20 stalled readers of evicted 15 MiB answers: statuses", str(counts), "",
                "each 200 or 503", all(s in (200, 503) for s in statuses))
        summary("stalled", "20 stalled readers of evicted 15 MiB answers: VmHWM", f"{hwm:.1f} MiB", f"{idle:.1f} MiB",
                f"≤ {RSS_TARGET_MIB} MiB", hwm <= RSS_TARGET_MIB)
        for sock in sockets:
            sock.close()
    stalled_timelines()


def stalled_readers(port, paths):
    """A client per path that sends the GET and never reads past the status line: (sockets, statuses)."""
    sockets, statuses = [], []
    for path in paths:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        sock.settimeout(5)
        statuses.append(int(sock.recv(64).split()[1]))
        sockets.append(sock)
    return sockets, statuses


def stalled_timelines():
    """20 clients each asking for another 168-hour timeline of 24 items of ~95 KiB (~14.5 MB each,
    built per request) and never reading it."""
    with running("stalled", label="timelines") as server:
        items = [{"title": f"t{i}", "body": ("x%d " % i) * 24000} for i in range(24)]
        publish(server, "tl", json.dumps({"items": items}).encode())
        idle = server.rss_mib()
        server.reset_hwm()
        sockets, statuses = stalled_readers(server.port, [f"/feeds/tl/timeline?hours=168&start={i}" for i in range(20)])
        time.sleep(1)
        hwm = server.hwm_mib()
        counts = {status: statuses.count(status) for status in set(statuses)}
        print(f"| 20 stalled readers of 168-hour timelines | {counts} | idle {idle:.1f} MiB | VmHWM {hwm:.1f} MiB |")
        summary("stalled", "20 stalled timeline readers: statuses", str(counts), "", "each 200 or 503",
                all(s in (200, 503) for s in statuses))
        summary("stalled", "20 stalled timeline readers: VmHWM", f"{hwm:.1f} MiB", f"{idle:.1f} MiB",
                f"≤ {RSS_TARGET_MIB} MiB", hwm <= RSS_TARGET_MIB)
        for sock in sockets:
            sock.close()


def mixed():
    """The attacks that hold memory, at once on one server: 20 stalled readers of ~15 MiB answers,
    20 stalled readers of ~14.5 MB timelines, then 24 concurrent JSON publishes of ~16 MiB. Each
    budget (read cache, renders let go, bodies held) is bounded alone; this is their sum."""
    with running("mixed") as server:
        publish_small(server)
        for i in range(20):
            publish(server, f"s{i}", sized_payload(15 * MIB, f"mixed {i}"))
        items = [{"title": f"t{i}", "body": ("x%d " % i) * 24000} for i in range(24)]
        publish(server, "tl", json.dumps({"items": items}).encode())
        bodies = [flood_body("json", i) for i in range(24)]
        idle_probes = probe_idle(server)
        idle = server.rss_mib()
        server.reset_hwm()
        probes = Probes(server.port)
        readers, read_statuses = stalled_readers(server.port, [f"/feeds/s{i}" for i in range(20)])
        timelines, timeline_statuses = stalled_readers(
            server.port, [f"/feeds/tl/timeline?hours=168&start={i}" for i in range(20)])
        results = [None] * len(bodies)

        def put(i):
            headers, chunks, length, chunked = bodies[i]
            try:
                results[i] = exchange(server.port, "PUT", f"/feeds/f{i}", headers, chunks, length, limit_s=120)
            except OSError as error:
                results[i] = (f"error {type(error).__name__}", 0.0)

        threads = [threading.Thread(target=put, args=(i,)) for i in range(len(bodies))]
        for t in threads: t.start()
        for t in threads: t.join(150)
        during = probes.stop()
        hwm = server.hwm_mib()
        statuses = read_statuses + timeline_statuses + [r[0] for r in results]
        counts = {status: statuses.count(status) for status in set(statuses)}
        print(f"| 20 stalled reads + 20 stalled timelines + 24 × 16 MiB publishes | {counts} "
              f"| idle {idle:.1f} MiB | VmHWM {hwm:.1f} MiB |")
        report_probes("mixed", idle_probes, during, "stalled reads, timelines and publishes")
        summary("mixed", "stalled reads, timelines and 16 MiB publishes: statuses", str(counts), "",
                "each 200, 201 or 503", all(s in (200, 201, 503) for s in statuses))
        summary("mixed", "stalled reads, timelines and 16 MiB publishes: VmHWM", f"{hwm:.1f} MiB", f"{idle:.1f} MiB",
                f"≤ {RSS_TARGET_MIB} MiB", hwm <= RSS_TARGET_MIB)
        for sock in readers + timelines:
            sock.close()


def members_body(size):
    """A JSON object of about `size` bytes with as many members as fit: {"k0":0,"k1":0,...}."""
    parts, total, index = [], 1, 0
    while total < size:
        part = f'"k{index}":0'
        parts.append(part)
        total += len(part) + 1
        index += 1
    return ("{" + ",".join(parts) + "}").encode()


def members():
    """Four concurrent publishes of a 16 MiB object with about 1.4 million members (under a 32 MiB
    --max-payload-bytes): the shape that costs a parser most per byte (a name per member)."""
    body = members_body(16 * MIB)
    with running("members", "--max-payload-bytes", str(32 * MIB), label="32 MiB") as server:
        request(server.port, "GET", "/healthz")
        idle = server.rss_mib()
        results = [None] * 4

        def put(i):
            results[i] = exchange(server.port, "PUT", f"/feeds/m{i}", {"Content-Type": "application/json"}, [body], len(body), limit_s=120)

        threads = [threading.Thread(target=put, args=(i,)) for i in range(4)]
        for t in threads: t.start()
        for t in threads: t.join(150)
        hwm = server.hwm_mib()
        statuses = [r[0] for r in results]
        print(f"| 4 × {len(body) / MIB:.1f} MiB objects | {statuses} | {max(r[1] for r in results):.2f} s | idle {idle:.1f} MiB | VmHWM {hwm:.1f} MiB |")
        summary("members", "4 concurrent 16 MiB many-member objects: statuses, slowest",
                f"{statuses}, {max(r[1] for r in results):.2f} s", "",
                "each 201 or 503 (the budget, 3 × 32 MiB, holds two)", 201 in statuses and set(statuses) <= {201, 503})
        summary("members", "4 concurrent 16 MiB many-member objects: VmHWM", f"{hwm:.1f} MiB", f"{idle:.1f} MiB",
                f"≤ {RSS_TARGET_MIB} MiB", hwm <= RSS_TARGET_MIB)


# ---------------------------------------------------------------- listings

def timed_get(port, path, timeout=120):
    started = time.perf_counter()
    status, body, _ = request(port, "GET", path, timeout=timeout)
    return status, time.perf_counter() - started, len(body)


def listings():
    """GET /feeds over six ~5 MiB groups, then 8 concurrent timelines over a payload of
    1,000,000 small items; anchors: the same requests over small groups, idle RSS."""
    with running("listings") as server:
        publish_small(server)
        anchor_list = timed_get(server.port, "/feeds")
        anchor_timeline = timed_get(server.port, "/feeds/small/timeline?items=/items")
        idle = server.rss_mib()
        for i in range(6):
            publish(server, f"l{i}", sized_payload(5 * MIB, f"l{i}"))
        server.reset_hwm()
        lists = [timed_get(server.port, "/feeds") for _ in range(3)]
        list_hwm = server.hwm_mib()

        items = ",".join('{"i":%d}' % i for i in range(1_000_000))
        publish(server, "million", ('{"items":[' + items + "]}").encode())
        del items
        server.reset_hwm()
        sampler = RSSSampler(server)
        sampler.start()
        results = [None] * 8

        def timeline(i):
            try:
                results[i] = timed_get(server.port, "/feeds/million/timeline?items=/items")
            except (OSError, http.client.HTTPException) as error:
                results[i] = (type(error).__name__, 0.0, 0)

        def small_publish(n):
            """A small publish: it runs on the same work pool as the timelines."""
            started = time.perf_counter()
            publish(server, "small", json.dumps({"items": [{"title": f"small, publish {n}"}]}).encode())
            return time.perf_counter() - started

        anchor_publish = small_publish(0)
        threads = [threading.Thread(target=timeline, args=(i,)) for i in range(8)]
        for t in threads: t.start()
        time.sleep(0.1)
        busy_publish = small_publish(1)
        for t in threads: t.join(150)
        timeline_peak = max(sampler.stop() / 1024, server.hwm_mib())
        print(f"| request | status | seconds | bytes | peak RSS MiB |")
        print("|---|---|---|---|---|")
        print(f"| GET /feeds, 1 small group (anchor) | {anchor_list[0]} | {anchor_list[1]:.3f} | {anchor_list[2]} | idle {idle:.1f} |")
        for n, (status, seconds, size) in enumerate(lists, 1):
            print(f"| GET /feeds, + six ~5 MiB groups, #{n} | {status} | {seconds:.3f} | {size} | {list_hwm:.1f} |")
        print(f"| timeline over 20 items (anchor) | {anchor_timeline[0]} | {anchor_timeline[1]:.3f} | {anchor_timeline[2]} | |")
        for n, (status, seconds, size) in enumerate(results, 1):
            print(f"| timeline over 1,000,000 items, 1 of 8 concurrent, #{n} | {status} | {seconds:.3f} | {size} | {timeline_peak:.1f} |")
        print()
        summary("listings", "GET /feeds over six ~5 MiB groups (first, max of 3)", f"{lists[0][1]:.3f} s, {max(l[1] for l in lists):.3f} s",
                f"{anchor_list[1]:.3f} s", "reported (no target)", None)
        summary("listings", "GET /feeds peak RSS", f"{list_hwm:.1f} MiB", f"{idle:.1f} MiB", f"≤ {RSS_TARGET_MIB} MiB", list_hwm <= RSS_TARGET_MIB)
        summary("listings", "8 concurrent timelines over 1,000,000 items: statuses, slowest",
                f"{sorted({r[0] for r in results}, key=str)}, {max(r[1] for r in results):.2f} s", f"{anchor_timeline[1]:.3f} s",
                "all 200 (time reported)", all(r[0] == 200 for r in results))
        summary("listings", "a small publish while the 8 timelines run", f"{busy_publish:.3f} s", f"{anchor_publish:.3f} s",
                "reported (no target)", None)
        summary("listings", "timelines peak RSS", f"{timeline_peak:.1f} MiB", f"{idle:.1f} MiB", f"≤ {RSS_TARGET_MIB} MiB",
                timeline_peak <= RSS_TARGET_MIB)


# ---------------------------------------------------------------- streams

STREAM_FEED_MIB = 5


def open_stream(port, version):
    """An event stream on `version`: the socket once its head has arrived, and its status."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(f"GET /feeds/g/events?schemaVersion={version} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
    head = b""
    with contextlib.suppress(socket.timeout):
        while b"\r\n\r\n" not in head and len(head) < 65536:
            data = sock.recv(4096)
            if not data:
                break
            head += data
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else None
    return sock, status


def long_poll(port, etag, wait=1):
    started = time.perf_counter()
    status, _, _ = request(port, "GET", f"/feeds/g?wait={wait}", headers={"If-None-Match": etag}, timeout=10)
    return status, time.perf_counter() - started


def streams():
    """A ~5 MiB feed g; 10 event streams on schemaVersions nobody published, held 5 s: server CPU
    then, against 5 s with none; a ?wait=1 long-poll with and without them."""
    with running("streams", sigterm=False) as server:
        publish(server, "g", sized_payload(STREAM_FEED_MIB * MIB, "g"))
        etag = request(server.port, "GET", "/feeds/g")[2].getheader("ETag")
        time.sleep(0.5)
        cpu = server.cpu_seconds()
        time.sleep(5)
        idle_cpu = server.cpu_seconds() - cpu
        idle_poll = long_poll(server.port, etag)

        opened = [open_stream(server.port, 9000 + i) for i in range(10)]
        statuses = [status for _, status in opened]
        time.sleep(0.5)
        cpu = server.cpu_seconds()
        time.sleep(5)
        streams_cpu = server.cpu_seconds() - cpu
        poll = long_poll(server.port, etag)
        still_open = 0
        for sock, _ in opened:
            sock.setblocking(False)
            try:
                still_open += sock.recv(65536) != b""
            except BlockingIOError:
                still_open += 1
            except OSError:
                pass
        print(f"g: {STREAM_FEED_MIB} MiB; 10 streams answered {statuses}, {still_open} still open after 5.5 s")
        print()
        summary("streams", "server CPU over 5 s with 10 streams open", f"{streams_cpu:.2f} s", f"{idle_cpu:.2f} s", "≤ 0.5 s",
                streams_cpu <= 0.5)
        summary("streams", "?wait=1 long-poll answered in", f"{poll[0]} in {poll[1]:.3f} s", f"{idle_poll[0]} in {idle_poll[1]:.3f} s",
                "≤ 1.3 s", poll[0] == 304 and poll[1] <= 1.3)
        try:
            # SIGTERM with the streams still open: they should end cleanly, not hold shutdown.
            report_sigterm("streams", server, "10 streams open")
        finally:
            for sock, _ in opened:
                sock.close()


# ---------------------------------------------------------------- main

SCENARIOS = {"versions": versions, "faults": faults, "sparse": sparse, "fifo": fifo, "cache": cache,
             "bigjson": bigjson, "jsonflood": jsonflood, "exports": exports, "stalled": stalled, "mixed": mixed, "members": members, "listings": listings, "streams": streams}


class ScenarioTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise ScenarioTimeout(f"scenario over {SCENARIO_ALARM_S} s")


def main():
    names = sys.argv[2:] or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        sys.exit(f"unknown scenario(s) {unknown}; known: {' '.join(SCENARIOS)}")
    signal.signal(signal.SIGALRM, _alarm)
    print(load_line())
    for name in names:
        print(f"\n### {name}\n")
        sys.stdout.flush()
        busy, total = machine_cpu()
        signal.alarm(SCENARIO_ALARM_S)
        try:
            SCENARIOS[name]()
        except Exception as error:   # one scenario's failure must not hide the others' figures
            summary(name, "scenario", f"failed: {type(error).__name__}: {error}", "", "", False)
        finally:
            signal.alarm(0)
        busy2, total2 = machine_cpu()
        print(load_line(100 * (busy2 - busy) / max(1, total2 - total)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
