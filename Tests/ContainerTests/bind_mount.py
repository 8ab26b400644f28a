"""The image serving a host folder bind-mounted as its root, as on a Mac with the iOS Simulator's
App Group folder (docs/recipes.md): run by scripts/container-test.sh against a container started
with `-v FOLDER:/data --user UID:GID`.

Usage: bind_mount.py URL FOLDER UID GID

Checks, from the host: the preview page is reachable; a publish (JSON and a photo) lands in the
folder in the on-disk format, every file and folder owned by UID:GID; a flock the host holds on
the group's publish.lock holds a publish in the container back until it is released (the same
lock across the mount); while 20 publishes replace current.json, a host reader never sees a torn
pointer (atomic renames on the mount); no temporary file is left. Prints one line per check and
'N passed, N failed'; exits 1 on any failure.
"""
import fcntl
import json
import os
import sys
import threading

from exercise import check, multipart, photo, request, results

GROUP = "widgetbridge"  # WidgetBridge's default directoryName


def publish(base, text, with_photo=False):
    payload = {"quotes": [{"id": "q1", "text": text, "image": "photo.jpg"}], "emptyText": ""}
    body, content_type = multipart(payload, {"photo.jpg": photo()} if with_photo else {})
    status, _, answer = request("PUT", f"{base}/feeds/{GROUP}", body, {"Content-Type": content_type})
    return status, json.loads(answer or b"{}")


def pointer(folder):
    with open(os.path.join(folder, GROUP, "current.json"), "rb") as file:
        return json.loads(file.read())


def owners(folder):
    found = set()
    for directory, folders, files in os.walk(folder):
        for name in [directory] + [os.path.join(directory, entry) for entry in folders + files]:
            info = os.lstat(name)
            found.add((info.st_uid, info.st_gid))
    return found


def main():
    base, folder, uid, gid = sys.argv[1].rstrip("/"), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

    status, headers, page = request("GET", f"{base}/preview/{GROUP}")
    check(status == 200 and b'id="matrix"' in page, "the preview page is reachable from the host", str(status))

    status, answer = publish(base, "Carpe diem", with_photo=True)
    check(status == 201, "a publish with a photo into the mounted folder", f"{status} {answer}")
    current = pointer(folder)
    generation = os.path.join(folder, GROUP, "generations", current["current"])
    with open(os.path.join(generation, "feed.json"), "rb") as file:
        feed = json.loads(file.read())
    check(current["current"] == answer.get("generationId") and feed.get("payload", {}).get("quotes", [{}])[0].get("text") == "Carpe diem"
          and os.path.isfile(os.path.join(generation, "assets", "photo.jpg")),
          "the folder holds the generation in the on-disk format", str(current))
    check(owners(folder) == {(uid, gid)}, f"every file and folder is owned by {uid}:{gid}", str(owners(folder)))

    # flock across the mount: while the host holds publish.lock, the container's publish waits.
    lock = open(os.path.join(folder, GROUP, "publish.lock"), "rb")
    fcntl.flock(lock, fcntl.LOCK_EX)
    outcome = {}
    writer = threading.Thread(target=lambda: outcome.update(zip(("status", "answer"), publish(base, "Festina lente"))))
    writer.start()
    writer.join(1.5)
    held = writer.is_alive() and pointer(folder)["current"] == current["current"]
    fcntl.flock(lock, fcntl.LOCK_UN)
    lock.close()
    writer.join(30)
    check(held, "a publish waits while the host holds the group's flock")
    check(outcome.get("status") == 201 and pointer(folder)["current"] == outcome["answer"].get("generationId"),
          "and completes once the host releases it", str(outcome))

    # Atomic renames across the mount: a host reader never sees a torn current.json.
    torn, reads, stop = [], [0], threading.Event()

    def reader():
        while not stop.is_set():
            try:
                pointer(folder)["current"]
                reads[0] += 1
            except (ValueError, KeyError) as error:
                torn.append(repr(error))

    watcher = threading.Thread(target=reader)
    watcher.start()
    statuses = [publish(base, f"Round {n}")[0] for n in range(20)]
    stop.set()
    watcher.join()
    check(statuses == [201] * 20, "20 publishes through the mount", str(statuses))
    check(not torn and reads[0] > 0, f"no torn current.json in {reads[0]} host reads during them", str(torn[:3]))
    leftovers = [name for directory, _, files in os.walk(folder) for name in files if name.endswith(".tmp")]
    leftovers += [name for name in os.listdir(os.path.join(folder, GROUP, "generations")) if name.endswith(".tmp")]
    check(not leftovers, "no temporary file left behind", str(leftovers))
    check(owners(folder) == {(uid, gid)}, f"still all owned by {uid}:{gid}", str(owners(folder)))

    print(f"bind mount: {results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
