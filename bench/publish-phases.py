"""Where a publish's time goes outside the disk: feed-server against the libmicrohttpd publish floor
(bench/publish-floor.c), read from system-call tracepoints (perf) on the same disk, in one run.

Each publish is cut at the server's own calls: the request read (recvfrom), the hand-off to a
worker (futex), the first mkdir that succeeds (the new generation's .tmp folder), the fifth fsync
after it (the group folder: the write is durable), the worker's 8-byte write that resumes the
connection (eventfd) and the answer's sendmsg. "Non-disk" is the whole minus the time the worker
spends inside its calls of the bare sequence's kinds (mkdir, openat, write, fsync, close, rename)
from that mkdir to that fsync, so the disk's noise (±25 % a run) drops out while everything else
the writer does in between (and any wait) still counts. Only those calls and the cuts are traced; tracing
adds ~1 µs per traced call, and feed-server makes more of them.

usage: publish-phases.py FEED_SERVER FLOOR_BINARY WORKDIR [ROUNDS] [PUBLISHES]
"""
import http.client, json, os, re, socket, statistics, subprocess, sys, time

binary, floor_binary, work = sys.argv[1], sys.argv[2], sys.argv[3]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
publishes = int(sys.argv[5]) if len(sys.argv) > 5 else 300
if rounds < 1 or publishes < 10:
    sys.exit("ROUNDS must be at least 1 and PUBLISHES at least 10")
SEQUENCE = ["mkdir", "openat", "write", "fsync", "close", "rename"]
EVENTS = ["sys_exit_recvfrom", "sys_enter_futex", "sys_enter_sendmsg"] + [
    f"sys_{side}_{call}" for call in SEQUENCE for side in ("enter", "exit")]
STEPS = [("recv", "wake", "read to hand-off"), ("wake", "mkdir", "hand-off to first mkdir"),
         ("mkdir", "durable", "the write (the disk's)"), ("durable", "resume", "durable to resume"),
         ("resume", "send", "resume to answer sent")]


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def payload(i):
    quotes = [{"id": f"q{k}", "text": f"Quote {k} of round {i}: the quick brown fox jumps over the lazy dog"} for k in range(40)]
    return json.dumps({"seq": i, "quotes": quotes}).encode()


def put(connection, path, body, expect=(201,)):
    connection.request("PUT", path, body=body, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    assert response.status in expect, (path, response.status)


def traced(pid, connection, first):
    """The publishes' calls as (time µs, thread, event, argument), and system calls per publish."""
    data = os.path.join(work, "perf.data")
    events = ",".join("syscalls:" + e for e in EVENTS)
    record = subprocess.Popen(["perf", "record", "-q", "-o", data, "-e", events, "-p", str(pid)])
    count = subprocess.Popen(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-p", str(pid)],
                             stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)  # both attached
    for i in range(first, first + publishes):
        put(connection, "/feeds/bench", payload(i))
    time.sleep(0.2)
    for tool in (record, count):
        tool.send_signal(2)
    record.wait()
    calls = int(count.communicate()[1].strip().splitlines()[-1].split(",")[0])
    script = subprocess.run(["perf", "script", "-i", data], capture_output=True, text=True).stdout
    line = re.compile(r"\s*\S+\s+(\d+)\s+\[\d+\]\s+([\d.]+):\s+syscalls:(\S+):\s*(.*)")
    calls_seen = [(float(m[2]) * 1e6, int(m[1]), m[3], m[4]) for m in map(line.match, script.splitlines()) if m]
    return calls_seen, calls / publishes


def phases(calls):
    """Per publish, the time of each cut (µs) and the time inside the sequence's calls."""
    done, current = [], None
    for t, thread, event, argument in calls:
        value = int(argument.split("0x")[-1].split()[0], 16) if "0x" in argument else 0
        call = event.split("_", 2)[2]
        if event == "sys_exit_recvfrom":
            if 1000 < value < 1 << 63:  # a PUT's head and body; an error (-EAGAIN) reads as huge
                current = {"recv": t, "mhd": thread}
            continue
        if current is None:
            continue
        if event == "sys_enter_futex" and thread == current["mhd"] and "wake" not in current:
            current["wake"] = t
        elif event == "sys_enter_mkdir" and thread != current["mhd"] and "mkdir" not in current:
            current["worker"], current["mkdir_at"] = thread, t
        elif event == "sys_exit_mkdir" and thread == current.get("worker") and "mkdir" not in current and value == 0:
            current["mkdir"], current["fsyncs"] = current["mkdir_at"], 0
            current["inside"] = t - current["mkdir_at"]
        elif "mkdir" in current and "durable" not in current and thread == current["worker"] and call in SEQUENCE:
            if event.startswith("sys_enter"):
                current["entered"] = t
            elif "entered" in current:
                current["inside"] += t - current.pop("entered")
                if call == "fsync":
                    current["fsyncs"] += 1
                    if current["fsyncs"] == 5:
                        current["durable"] = t
        elif event == "sys_enter_write" and "durable" in current and thread == current["worker"] \
                and "resume" not in current and int(argument.split("count: ")[-1], 16) == 8:
            current["resume"] = t
        elif event == "sys_enter_sendmsg" and thread == current["mhd"] and "resume" in current:
            current["send"] = t
            done.append(current)
            current = None
    return done


def summary(done):
    # A worker already awake takes its job without a futex wake: such publishes have no hand-off
    # cut and count in the other rows only.
    row = {label: statistics.median(p[b] - p[a] for p in done if a in p and b in p) for a, b, label in STEPS}
    row["non-disk"] = statistics.median((p["send"] - p["recv"]) - p["inside"] for p in done)
    return row


os.makedirs(work, exist_ok=True)
ours_port, floor_port = free_port(), free_port()
ours = subprocess.Popen([binary, "--port", str(ours_port), "--root", os.path.join(work, "data"), "--access-log", "off"],
                        stderr=subprocess.DEVNULL)
os.makedirs(os.path.join(work, "floor"), exist_ok=True)
floor = subprocess.Popen([floor_binary, str(floor_port), str(os.cpu_count() or 2), os.path.join(work, "floor", "g")],
                         stdout=subprocess.PIPE, text=True)
floor.stdout.readline()
try:
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", ours_port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    sides = {"feed-server": (ours.pid, http.client.HTTPConnection("127.0.0.1", ours_port)),
             "floor": (floor.pid, http.client.HTTPConnection("127.0.0.1", floor_port))}
    put(sides["feed-server"][1], "/feeds/bench/profile",
        json.dumps({"items": "/quotes", "title": "/text", "zone": "Europe/Berlin"}).encode(), (200, 201))
    for name, (_, connection) in sides.items():
        for i in range(50):  # warm: the group, its lock file, the journal exist
            put(connection, "/feeds/bench", payload(i))
    results = {name: [] for name in sides}
    per_publish = {name: [] for name in sides}
    for round_number in range(rounds):
        for name, (pid, connection) in sides.items():
            calls, per = traced(pid, connection, 1000 * (round_number + 1))
            done = phases(calls)
            assert len(done) >= publishes * 0.9, f"{name}: only {len(done)} of {publishes} publishes cut"
            results[name].append(summary(done))
            per_publish[name].append(per)
    print("| µs per publish, median of rounds' medians | feed-server | floor | difference |")
    print("|---|---|---|---|")
    for label in [s[2] for s in STEPS] + ["non-disk"]:  # the whole less the sequence's own calls
        a = statistics.median(r[label] for r in results["feed-server"])
        b = statistics.median(r[label] for r in results["floor"])
        print(f"| {label} | {a:.0f} | {b:.0f} | {a - b:+.0f} |")
    ours_nd = [r["non-disk"] for r in results["feed-server"]]
    floor_nd = [r["non-disk"] for r in results["floor"]]
    print(f"\nnon-disk time per publish: feed-server {statistics.median(ours_nd):.0f} µs "
          f"({min(ours_nd):.0f}–{max(ours_nd):.0f}), floor {statistics.median(floor_nd):.0f} µs "
          f"({min(floor_nd):.0f}–{max(floor_nd):.0f}); {rounds} rounds of {publishes}")
    print(f"system calls per publish: feed-server {statistics.median(per_publish['feed-server']):.1f}, "
          f"floor {statistics.median(per_publish['floor']):.1f}")
finally:
    ours.kill()
    floor.kill()
