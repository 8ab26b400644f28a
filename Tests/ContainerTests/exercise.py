"""Exercises a running feed-server from outside, as a client of the container would.

Usage: exercise.py URL TOKEN [REFERENCE_URL REFERENCE_TOKEN]
       exercise.py --proxy URL TOKEN

Publishes a JSON feed and a multipart feed (a photo with an EXIF orientation, a PNG with alpha,
and one file of each format the server must refuse), reads both back, checks that writes need
the token, and that every other format is skipped with the one reason the server gives any
image it cannot decode. With a reference server (the host's own build against Debian's full
libvips), the multipart publish must give the same answer there: same assets, same bytes (same
fingerprint), same refusals.
With --proxy, URL is a reverse proxy in front of the server (docs/examples/nginx-feed-server.conf):
a 3 MB photo must get through, writes still need the token, and an event stream must deliver a
publish as it happens.
Prints one line per check and a closing 'N passed, N failed' line; exits 1 on any failure.
Needs Pillow (Debian's python3-pil) to make and read the images.
"""
import io
import gzip
import json, tarfile
import os
import sys
import threading
import time
import urllib.error
import urllib.request

from PIL import Image, ImageDraw

REFUSED_REASON = "cannot be decoded: not a JPEG, PNG, WebP or HEIF image, or its header is damaged"
results = {"passed": 0, "failed": 0}


def check(condition, what, detail=""):
    results["passed" if condition else "failed"] += 1
    print(("ok   " if condition else "FAIL ") + what + ("" if condition or not detail else f": {detail}"))


def request(method, url, body=None, headers=None):
    """(status, headers, body bytes) of one request; HTTP errors are answers too."""
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def photo():
    """A 1200x800 landscape JPEG whose EXIF says 'rotate 90° clockwise to view' (orientation 6)."""
    image = Image.new("RGB", (1200, 800))
    draw = ImageDraw.Draw(image)
    for x in range(0, 1200, 8):
        draw.rectangle([x, 0, x + 7, 799], fill=(x * 255 // 1200, 120, 255 - x * 255 // 1200))
    draw.rectangle([0, 0, 199, 199], fill=(255, 0, 0))
    exif = Image.Exif()
    exif[0x0112] = 6
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90, exif=exif.tobytes())
    return out.getvalue()


def badge():
    image = Image.new("RGBA", (300, 300), (0, 0, 0, 0))
    ImageDraw.Draw(image).ellipse([20, 20, 280, 280], fill=(30, 144, 255, 200))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def refused_formats():
    """One small image in each format libvips (or its ImageMagick bridge) could read, but the server must not."""
    image = Image.new("RGB", (64, 48), (200, 60, 30))
    files = {}
    for name, pil_format in [("gif", "GIF"), ("bmp", "BMP"), ("tiff", "TIFF"), ("ppm", "PPM"),
                             ("ico", "ICO"), ("tga", "TGA"), ("pdf", "PDF"), ("jp2", "JPEG2000")]:
        out = io.BytesIO()
        image.save(out, pil_format)
        files[name] = out.getvalue()
    files["svg"] = b'<svg xmlns="http://www.w3.org/2000/svg" width="64" height="48"><rect width="64" height="48" fill="red"/></svg>'
    # Each is named .png, so only the content decides: the server tries to decode every one.
    return {f"{name}.png": data for name, data in files.items()}


def multipart(payload, files):
    boundary = "feed-server-container-test"
    body = io.BytesIO()
    body.write(f'--{boundary}\r\nContent-Disposition: form-data; name="payload"\r\n'
               f'Content-Type: application/json\r\n\r\n{json.dumps(payload)}\r\n'.encode())
    for name, data in files.items():
        body.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{name}"\r\n'
                   f'Content-Type: application/octet-stream\r\n\r\n'.encode())
        body.write(data + b"\r\n")
    body.write(f"--{boundary}--\r\n".encode())
    return body.getvalue(), f"multipart/form-data; boundary={boundary}"


def phone_photos():
    """What phones hand over: a HEIC (made by libvips with libheif's HEVC encoder, 160x120, kept
    beside this file) and a WebP, each named as the payload names it."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "leaf.heic"), "rb") as heic:
        leaf = heic.read()
    out = io.BytesIO()
    Image.new("RGB", (200, 150), (40, 160, 90)).save(out, "WEBP", quality=80)
    return {"leaf.heic": leaf, "fern.webp": out.getvalue()}


def publish_photos(base, token, refused):
    payload = {"quotes": [{"id": "q1", "text": "Carpe diem", "image": "photo.jpg", "badge": "badge.png"},
                          {"id": "q2", "text": "Ad astra", "image": "leaf.heic", "badge": "fern.webp"}]}
    body, content_type = multipart(payload, {"photo.jpg": photo(), "badge.png": badge(), **phone_photos(), **refused})
    status, _, answer = request("PUT", base + "/feeds/photos", body,
                                {"Content-Type": content_type, "Authorization": f"Bearer {token}"})
    return payload, status, json.loads(answer or b"{}")


def noise_photo():
    """A JPEG of about 3 MB (random pixels do not compress): more than nginx's default body limit."""
    image = Image.frombytes("RGB", (1400, 1000), os.urandom(1400 * 1000 * 3))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=95)
    return out.getvalue()


def proxy_checks(base, token):
    big = noise_photo()
    body, content_type = multipart({"photo": "big.jpg"}, {"big.jpg": big})
    status, _, _ = request("PUT", base + "/feeds/proxied", body, {"Content-Type": content_type})
    check(status == 401, "through the proxy: a publish without the token is 401", str(status))
    status, _, answer = request("PUT", base + "/feeds/proxied", body,
                                {"Content-Type": content_type, "Authorization": f"Bearer {token}"})
    sizes = [(asset["width"], asset["height"]) for asset in json.loads(answer or b"{}").get("assets", [])]
    check(status in (200, 201) and len(sizes) == 1 and max(sizes[0]) == 512,
          f"through the proxy: a {len(big) // 1000} kB photo published and shrunk", f"{status} {answer[:300]}")

    stream = urllib.request.urlopen(base + "/feeds/proxied/events", timeout=10)
    first = read_event(stream)
    later = {}

    def publish():
        time.sleep(0.5)
        _, _, answer = request("PUT", base + "/feeds/proxied", json.dumps({"n": 2}).encode(),
                               {"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
        later["fingerprint"] = json.loads(answer).get("fingerprint")

    publisher = threading.Thread(target=publish)
    started = time.monotonic()
    publisher.start()
    second = read_event(stream)
    elapsed = time.monotonic() - started
    publisher.join()
    stream.close()
    check(first.get("id") is not None and second.get("id") == later.get("fingerprint") and elapsed < 5,
          f"through the proxy: the event stream delivers a publish as it happens ({elapsed:.1f} s)",
          f"{first} then {second}, publish {later}")


def read_event(stream):
    """The next event's fields (comment lines such as heartbeats are skipped)."""
    fields = {}
    while True:
        raw = stream.readline()
        if raw == b"":
            return fields  # the stream ended
        line = raw.decode().rstrip("\n")
        if not line:
            if "id" in fields:
                return fields
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(": ")
        fields[key] = value


def archive_checks(base, token):
    """The image's own libarchive (tar and gzip only): export a group, restore it into another
    with the same fingerprint, plain and gzip-compressed, and refuse a tar with a `..` entry
    (nothing published)."""
    status, headers, tar = request("GET", base + "/feeds/photos/archive")
    names = []
    if status == 200:
        with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
            names = sorted(archive.getnames())
    check(status == 200 and "payload.json" in names and "meta.json" in names and "assets/photo.jpg" in names,
          "archive export is a tar in the seed layout", f"{status} {names}")
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/x-tar"}
    status, _, answer = request("PUT", base + "/feeds/restored/archive", tar, auth)
    _, original, _ = request("GET", base + "/feeds/photos")
    _, restored, _ = request("GET", base + "/feeds/restored")
    check(status in (200, 201) and original.get("ETag") and original.get("ETag") == restored.get("ETag"),
          "archive restored into another group with the same fingerprint (ETag)",
          f"{status} {answer[:200]} {original.get('ETag')} vs {restored.get('ETag')}")
    zipped = gzip.compress(tar)
    status, _, answer = request("PUT", base + "/feeds/restored-gz/archive", zipped,
                                dict(auth, **{"Content-Type": "application/gzip"}))
    _, restored, _ = request("GET", base + "/feeds/restored-gz")
    check(status in (200, 201) and original.get("ETag") == restored.get("ETag"),
          "a gzip-compressed archive is restored with the same fingerprint (the image's libarchive has zlib)",
          f"{status} {answer[:200]}")
    hostile = io.BytesIO()
    with tarfile.open(fileobj=hostile, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        entry = tarfile.TarInfo("../payload.json")
        entry.size = 2
        archive.addfile(entry, io.BytesIO(b"{}"))
    status, headers, _ = request("PUT", base + "/feeds/hostile/archive", hostile.getvalue(), auth)
    absent, _, _ = request("GET", base + "/feeds/hostile")
    check(status == 400 and headers.get("Content-Type", "").startswith("application/problem+json") and absent == 404,
          "a tar entry with '..' is refused with 400 and nothing is published", f"{status} then GET {absent}")


def main():
    if sys.argv[1] == "--proxy":
        proxy_checks(sys.argv[2].rstrip("/"), sys.argv[3])
        print(f"proxy: {results['passed']} passed, {results['failed']} failed")
        return 1 if results["failed"] else 0

    base, token = sys.argv[1].rstrip("/"), sys.argv[2]
    reference = (sys.argv[3].rstrip("/"), sys.argv[4]) if len(sys.argv) > 4 else None
    feed = {"quotes": [{"id": "q1", "text": "Carpe diem"}], "emptyText": "Nothing yet"}
    data = json.dumps(feed).encode()

    status, headers, _ = request("PUT", base + "/feeds/demo", data, {"Content-Type": "application/json"})
    check(status == 401 and headers.get("Content-Type", "").startswith("application/problem+json"),
          "a publish without the token is 401 problem+json", f"{status} {headers.get('Content-Type')}")

    status, _, _ = request("PUT", base + "/feeds/demo", data,
                           {"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    check(status in (200, 201), "JSON publish with the token", str(status))
    status, _, answer = request("GET", base + "/feeds/demo")
    check(status == 200 and json.loads(answer).get("payload") == feed, "JSON feed read back", answer[:200])
    # 2026-10-25 from local midnight in Berlin: the clocks go back at 03:00, from the image's tzdata.
    status, _, timeline = request("GET", base + "/feeds/demo/timeline?zone=Europe/Berlin&hours=4&start=1792879200000")
    offsets = [entry.get("zoneOffsetSeconds") for entry in json.loads(timeline).get("entries", [])] if status == 200 else []
    check(offsets == [7200, 7200, 7200, 3600], "an IANA zone's daylight-saving change in the timeline", f"{status} {offsets}")

    refused = refused_formats()
    payload, published, answer = publish_photos(base, token, refused)
    check(published in (200, 201) and answer.get("result") == "published", "multipart publish", f"{published} {answer}")
    assets = {asset["name"]: asset for asset in answer.get("assets", [])}
    shot = assets.get("photo.jpg", {})
    check(shot.get("height") == 512 and shot.get("width", 0) < 512,
          "photo turned upright by its EXIF orientation and shrunk to 512", str(shot))
    check(assets.get("badge.png", {}).get("width") == 300, "PNG badge kept at its size", str(assets.get("badge.png")))
    skipped = {item["name"]: item["reason"] for item in answer.get("skipped", [])}
    check(sorted(skipped) == sorted(refused), "every other format skipped", str(sorted(skipped)))
    wrong = {name: reason for name, reason in skipped.items() if reason != REFUSED_REASON}
    check(not wrong, f"each refused as today ('{REFUSED_REASON}')", str(wrong))

    status, _, read = request("GET", base + "/feeds/photos")
    check(status == 200 and json.loads(read).get("payload") == payload, "multipart feed read back", read[:200])
    for name, kind in [("photo.jpg", "JPEG"), ("badge.png", "PNG"), ("leaf.heic", "JPEG"), ("fern.webp", "JPEG")]:
        asset = assets.get(name, {})
        status, _, content = request("GET", base + asset.get("url", "/assets/missing"))
        image = Image.open(io.BytesIO(content)) if status == 200 else None
        check(image is not None and image.format == kind and image.size == (asset["width"], asset["height"])
              and len(content) == asset["bytes"] and not image.getexif(),
              f"{name} read back: a {kind} of the announced size, no metadata", f"{status} {asset}")

    archive_checks(base, token)

    if reference:
        _, ref_status, ref_answer = publish_photos(reference[0], reference[1], refused)
        strip = lambda items: sorted(({k: v for k, v in item.items() if k != "url"} for item in items),
                                     key=lambda item: item["name"])
        check(ref_status == published and strip(ref_answer.get("assets", [])) == strip(answer.get("assets", [])),
              "same assets as the host's build with Debian's libvips42 (names, sizes, bytes)",
              f"{strip(ref_answer.get('assets', []))} vs {strip(answer.get('assets', []))}")
        check(ref_answer.get("fingerprint") == answer.get("fingerprint"), "same generation fingerprint (same bytes)",
              f"{ref_answer.get('fingerprint')} vs {answer.get('fingerprint')}")
        check(sorted(ref_answer.get("skipped", []), key=lambda item: item["name"])
              == sorted(answer.get("skipped", []), key=lambda item: item["name"]),
              "same refusals, same reasons as the host's build")

    print(f"container: {results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
