#!/usr/bin/env python3
"""SIGKILL soak: mixed JSON and multipart publishes and DELETEs against the real binary, killed
at random moments and restarted, ROUNDS times (default 1,000). After every restart it checks,
from the outside (HTTP) and from the folder (independently of the server's reader):

- acknowledged work is never lost: the served payload is the last acknowledged write, or the
  one that was in flight when the process died (a DELETE acknowledged -> 404, or the in-flight
  publish);
- nothing torn: every generation folder that is visible (not .tmp) has a feed.json that parses
  and whose fingerprint recomputes from the payload and the asset files; every asset of the
  served generation downloads whole with the SHA-256 its ETag names;
- nothing left behind: after a last clean publish and SIGTERM, no .tmp folder, no
  current.json.tmp and no .deleted-generations-* folder remains.

Usage: crash-soak.py FEED_SERVER_BINARY [ROUNDS]
"""
import hashlib, http.client, json, os, random, re, shutil, signal, struct, subprocess, sys, tempfile, threading, time, zlib

SEP = "\x1f"


def png(width, height, seed):
    rng = random.Random(seed)
    rows = b"".join(b"\0" + bytes(rng.randrange(256) for _ in range(width * 3)) for _ in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


IMAGES = [png(48, 32, seed) for seed in range(4)]


def request(port, method, path, body=b"", headers=None, timeout=10):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, dict(response.getheaders()), data


def multipart(payload, images):
    boundary = "soak%08x" % random.getrandbits(32)
    parts = [("--%s\r\nContent-Disposition: form-data; name=\"payload\"\r\nContent-Type: application/json\r\n\r\n" % boundary).encode() + payload + b"\r\n"]
    for name, data in images:
        parts.append(("--%s\r\nContent-Disposition: form-data; name=\"image\"; filename=\"%s\"\r\nContent-Type: image/png\r\n\r\n" % (boundary, name)).encode() + data + b"\r\n")
    return b"".join(parts) + ("--%s--\r\n" % boundary).encode(), "multipart/form-data; boundary=" + boundary


def start(binary, root):
    process = subprocess.Popen([binary, "--port", "0", "--root", root, "--access-log", "off", "--grace-seconds", "0",
                                "--keep-previous", "2", "--threads", "2"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    line = process.stdout.readline().decode()
    match = re.search(r"listening on http://[^:]+:(\d+)", line)
    if not match:
        raise SystemExit("no startup line: " + line)
    threading.Thread(target=lambda: process.stdout.read(), daemon=True).start()
    return process, int(match.group(1))


def verify_folder(root):
    """Every visible generation is complete: feed.json parses and its fingerprint recomputes."""
    generations = os.path.join(root, "g", "generations")
    checked = 0
    for name in os.listdir(generations) if os.path.isdir(generations) else []:
        if name.endswith(".tmp"):
            continue
        folder = os.path.join(generations, name)
        with open(os.path.join(folder, "feed.json"), "rb") as handle:
            envelope = json.loads(handle.read())
        compact = json.dumps(envelope["payload"], separators=(",", ":"), ensure_ascii=False).encode()
        lines = [str(envelope["schemaVersion"]), compact.decode()]
        for asset in sorted(envelope.get("assets", []), key=lambda entry: entry["name"].encode()):
            with open(os.path.join(folder, "assets", asset["name"]), "rb") as handle:
                data = handle.read()
            digest = hashlib.sha256(data).hexdigest()
            assert len(data) == asset["bytes"] and digest == asset["sha256"], "torn asset in " + name
            lines.append(SEP.join([asset["name"], str(len(data)), digest]))
        fingerprint = hashlib.sha256(("\n".join(lines) + "\n").encode()).hexdigest()
        assert fingerprint == envelope["fingerprint"], "fingerprint does not recompute in " + name
        checked += 1
    return checked


def verify_served(port, acknowledged, in_flight):
    status, headers, body = request(port, "GET", "/feeds/g")
    allowed = {acknowledged, in_flight} if in_flight is not None else {acknowledged}
    if status == 404:
        assert "deleted" in allowed or acknowledged is None, "404 but %r was acknowledged" % (acknowledged,)
        return "deleted" if acknowledged is not None else None
    assert status == 200, status
    feed = json.loads(body)
    served = feed["payload"]["seq"]
    assert served in allowed, "served seq %s, allowed %s" % (served, allowed)
    for asset in feed["assets"]:
        status, headers, data = request(port, "GET", asset["url"])
        assert status == 200 and len(data) == asset["bytes"], "asset %s incomplete" % asset["url"]
        assert '"%s"' % hashlib.sha256(data).hexdigest() == headers["ETag"], "asset %s torn" % asset["url"]
    return served


def main():
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    scratch = tempfile.mkdtemp(prefix="crash-soak-")
    root = os.path.join(scratch, "data")
    acknowledged = None      # seq of the last acknowledged publish, "deleted", or None
    in_flight = None
    sequence = 0
    history = []
    kills = {"publish-json": 0, "publish-multipart": 0, "delete": 0, "idle": 0}
    operations = 0
    started = time.time()
    for round_number in range(rounds):
        process, port = start(binary, root)
        if round_number > 0:
            try:
                # What is served now is the baseline: the in-flight write may have landed.
                acknowledged = verify_served(port, acknowledged, in_flight)
            except AssertionError:
                print("round %d, recent operations: %s" % (round_number, history[-12:]))
                raise
        verify_folder(root)
        in_flight = None
        state = {"op": "idle"}
        deadline = time.time() + random.uniform(0.005, 0.12)
        killer = threading.Timer(max(0.0, deadline - time.time()), lambda: process.send_signal(signal.SIGKILL))
        killer.start()
        while True:
            sequence += 1
            choice = random.random()
            payload = json.dumps({"seq": sequence, "pad": "x" * random.randrange(0, 30000)}, separators=(",", ":")).encode()
            try:
                if choice < 0.15:
                    state["op"], in_flight = "delete", "deleted"
                    status, _, _ = request(port, "DELETE", "/feeds/g")
                    assert status == 204, status
                    acknowledged = "deleted"
                elif choice < 0.45:
                    state["op"], in_flight = "publish-multipart", sequence
                    count = random.randrange(1, 3)
                    body, content_type = multipart(payload, [("p%d.png" % index, random.choice(IMAGES)) for index in range(count)])
                    status, _, _ = request(port, "PUT", "/feeds/g", body, {"Content-Type": content_type})
                    assert status in (200, 201), status
                    acknowledged = sequence
                else:
                    state["op"], in_flight = "publish-json", sequence
                    status, _, _ = request(port, "PUT", "/feeds/g", payload, {"Content-Type": "application/json"})
                    assert status in (200, 201), status
                    acknowledged = sequence
                operations += 1
                history.append((round_number, sequence, state["op"], "ok"))
                in_flight = None
                state["op"] = "idle"
            except (ConnectionError, http.client.HTTPException, OSError) as error:
                history.append((round_number, sequence, state["op"], type(error).__name__))
                break
        process.wait()
        killer.cancel()
        kills[state["op"]] += 1
        if (round_number + 1) % 100 == 0:
            print("  %d rounds, %d acknowledged operations, %.0f s" % (round_number + 1, operations, time.time() - started), flush=True)

    process, port = start(binary, root)
    verify_served(port, acknowledged, in_flight)
    verify_folder(root)
    status, _, _ = request(port, "PUT", "/feeds/g", b'{"seq":-1}', {"Content-Type": "application/json"})
    assert status == 201, status
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
    leftovers = [name for name in os.listdir(os.path.join(root, "g", "generations")) if name.endswith(".tmp")]
    leftovers += [name for name in os.listdir(os.path.join(root, "g")) if name.startswith(".deleted-generations-") or name.endswith(".tmp")]
    assert not leftovers, "left behind: %s" % leftovers
    checked = verify_folder(root)
    shutil.rmtree(scratch)
    total = sum(kills.values())
    print("%d SIGKILLs (%s), %d acknowledged operations, %.0f s: nothing acknowledged lost, nothing torn, nothing left behind (%d generations verified at the end)"
          % (total, ", ".join("%d %s" % (count, name) for name, count in kills.items()), operations, time.time() - started, checked))


if __name__ == "__main__":
    main()
