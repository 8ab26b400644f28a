#!/usr/bin/env python3
"""Real-browser test of the widget-preview page: headless Chromium (Debian's chromium and
chromium-driver) driven by Selenium opens /preview/{group} on a live server; a publish must show
on the page within 3 s without a reload; corrupting the current generation on disk must raise the
fallback banner; platform-limit warnings must show on the frames and in the gallery; injected
faults (fault lab) must show in the history; the matrix must draw every variant of every family
at its size with no text outside its frame, filter by family, appearance and text size, and a
?at= link must reproduce the view; with a widget profile the frames must show what the server's
timeline resolves (the item's image or a mark naming the missing file, the empty-state text),
and "Save as profile" must store what the fields say; right-to-left text must be cut at its
logical end; with --read-token the page must ask for the token once and follow the feed with it,
and ask for the write token to save a profile; with --ios-reload-budget 2 the reload strip must
draw each publish's tick (reloaded, over budget, changing nothing visible), the stale span and
the summary, follow a publish, and say so when the server keeps no journal; axe-core must find
no accessibility violation on either page in either theme; the console must stay free of errors, and the browser must report
no Content-Security-Policy violation (the pages' policy allows nothing inline; a deliberate inline
script proves violations are seen) and refuse to frame a page; screenshots go to OUTPUT_DIR.

Usage: preview_test.py FEED_SERVER_BINARY OUTPUT_DIR. Prints "N passed, N failed" and exits non-zero on failure.
"""
import importlib.util, json, os, re, struct, subprocess, sys, tempfile, time, urllib.error, urllib.request, zlib
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import StaleElementReferenceException

binary, output = sys.argv[1], sys.argv[2]
os.makedirs(output, exist_ok=True)
root = tempfile.mkdtemp(prefix="preview-test-")
# The server's log goes to a file: a pipe nobody reads would fill and stall the server mid-test.
server_log = os.path.join(root, "server.log")
with open(server_log, "w") as log:
    server = subprocess.Popen([binary, "--port", "0", "--root", root + "/data", "--access-log", "off", "--fault-lab"], stderr=log, text=True)
for _ in range(200):
    found = re.search(r"listening on (http://\S+)", open(server_log).read())
    if found:
        break
    time.sleep(0.05)
base = found.group(1)
results = []

def check(name, condition, detail=""):
    results.append(condition)
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else ": " + detail), flush=True)

def png(width, height, rgb):
    row = b"\x00" + bytes(rgb) * width
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b"")

def publish(payload, images, group="quotes", query="", server_base=None, headers={}):
    boundary = "previewtestboundary"
    body = b""
    body += f'--{boundary}\r\nContent-Disposition: form-data; name="payload"\r\nContent-Type: application/json\r\n\r\n'.encode() + json.dumps(payload).encode() + b"\r\n"
    for name, data in images.items():
        body += f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\nContent-Type: image/png\r\n\r\n'.encode() + data + b"\r\n"
    body += f"--{boundary}--\r\n".encode()
    request = urllib.request.Request((server_base or base) + "/feeds/" + group + query, data=body, method="PUT", headers={"Content-Type": "multipart/form-data; boundary=" + boundary, **headers})
    return json.load(urllib.request.urlopen(request))

def put_profile(profile, group, server_base=None, headers={}):
    request = urllib.request.Request((server_base or base) + f"/feeds/{group}/profile", data=json.dumps(profile).encode(), method="PUT",
                                     headers={"Content-Type": "application/json", **headers})
    with urllib.request.urlopen(request) as response:
        return response.status, json.load(response)

def get_profile(group, server_base=None, headers={}):
    return json.load(urllib.request.urlopen(urllib.request.Request((server_base or base) + f"/feeds/{group}/profile", headers=headers)))

def inject(group, kind):
    request = urllib.request.Request(base + "/feeds/" + group + "/faults", data=json.dumps({"kind": kind}).encode(), method="POST", headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(request))

def wait_for(predicate, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if predicate():
                return True
        except Exception:
            pass
        time.sleep(0.05)
    return False

first = publish({"quotes": [{"id": "q1", "text": "Carpe diem", "image": "q1.png"}, {"id": "q2", "text": "Festina lente", "image": "q2.png"}], "emptyText": "Nothing yet"},
                {"q1.png": png(600, 400, (200, 40, 40)), "q2.png": png(400, 600, (40, 40, 200))})

def matrix_frames():
    return driver.execute_script("""
      return [...document.querySelectorAll('#matrix .frame')].map((frame) => {
        const widget = frame.querySelector('.widget'), title = frame.querySelector('.title');
        const w = widget.getBoundingClientRect(), t = title.getBoundingClientRect();
        return { family: frame.dataset.family, appearance: frame.dataset.appearance, textSize: frame.dataset.textSize,
                 direction: frame.dataset.direction, width: Number(frame.dataset.width), height: Number(frame.dataset.height),
                 boxWidth: w.width, boxHeight: w.height, dir: getComputedStyle(widget).direction,
                 inside: t.left >= w.left - 0.5 && t.right <= w.right + 0.5 && t.top >= w.top - 0.5 && t.bottom <= w.bottom + 0.5,
                 scrollWidth: title.scrollWidth, clientWidth: title.clientWidth, font: parseFloat(getComputedStyle(title).fontSize),
                 cut: frame.dataset.cut === 'true', warnings: widget.dataset.warnings,
                 notes: [...frame.querySelectorAll('.frame-warnings li')].map((li) => li.dataset.code) };
      });""")

def check_variants(device, families):
    driver.execute_script("const s = document.getElementById('device'); s.value = arguments[0]; s.dispatchEvent(new Event('change'));", device)
    frames = matrix_frames()
    combos = sorted((f["family"], f["width"], f["height"], f["appearance"], f["textSize"], f["direction"]) for f in frames)
    expected = sorted((family, w, h, a, t, d) for family, w, h in families for a in ["light", "dark", "tinted"] for t in ["default", "largest"] for d in ["ltr", "rtl"])
    check(f"{device}: every family in every appearance, text size and direction ({len(frames)} frames)", combos == expected, str(combos[:6]))
    check(f"{device}: every frame at its size", all(abs(f["boxWidth"] - f["width"]) < 0.5 and abs(f["boxHeight"] - f["height"]) < 0.5 for f in frames),
          str([(f["family"], f["width"], f["boxWidth"], f["height"], f["boxHeight"]) for f in frames if abs(f["boxWidth"] - f["width"]) >= 0.5][:3]))
    check(f"{device}: no title wider than its box or outside its frame", all(f["scrollWidth"] <= f["clientWidth"] and f["inside"] for f in frames),
          str([f for f in frames if not (f["scrollWidth"] <= f["clientWidth"] and f["inside"])][:2]))
    check(f"{device}: right-to-left frames lay out right to left", all(f["dir"] == f["direction"] for f in frames))
    return frames

def check_matrix():
    long_title = "Ceterum censeo Carthaginem esse delendam, " * 6
    quotes = [{"text": f"Hour quote {n}" if n != 2 else long_title, "image": "m.png"} for n in range(5)]
    published = publish({"quotes": quotes}, {"m.png": png(300, 200, (20, 120, 200))}, group="matrix")
    driver.get(base + "/preview/matrix")
    check("matrix page shows its generation", wait_for(lambda: driver.find_element(By.ID, "gen-id").text == published["generationId"], 5))
    note = driver.find_element(By.ID, "preview-note").text
    check("the page says it previews the data as the widget's code resolves it, not SwiftUI or Glance",
          "not of SwiftUI or Glance rendering" in note and "WidgetRotation's index" in note and "the image file the profile names" in note, note)
    wait_for(lambda: len(matrix_frames()) > 0, 3)
    phone = check_variants("iphone-430", [("systemSmall", 170, 170), ("systemMedium", 364, 170), ("systemLarge", 364, 382),
                                          ("accessoryCircular", 76, 76), ("accessoryRectangular", 172, 76), ("accessoryInline", 257, 26)])
    small = {(f["appearance"], f["textSize"], f["direction"]): f for f in phone if f["family"] == "systemSmall"}
    check("largest text is AX5 (53/17 of the default)", all(abs(small[(a, "largest", d)]["font"] / small[(a, "default", d)]["font"] - 53 / 17) < 0.01
                                                            for a in ["light", "dark", "tinted"] for d in ["ltr", "rtl"]), str([(k, f["font"]) for k, f in small.items()][:4]))
    check("a title too tall for the inline family is shrunk, and says so", all("text-shrunk" in f["notes"] for f in phone if f["family"] == "accessoryInline" and f["textSize"] == "largest"))
    check_variants("ipad-1024", [("systemSmall", 170, 170), ("systemMedium", 378.5, 170), ("systemLarge", 378.5, 378.5), ("systemExtraLarge", 795, 378.5)])
    android = check_variants("android-handheld", [(f"android", w, h) for w, h in [(109, 130), (306, 56), (109, 276), (306, 115), (245, 130), (624, 56), (245, 276), (624, 115)]])
    labels = driver.find_element(By.ID, "matrix").text
    check("Android frames name the launcher's range ends", "2×2 portrait (min width × max height) · 109×276 dp" in labels and "2×2 landscape (max width × min height) · 306×115 dp" in labels)

    # ?at=: the scrubber writes the hour into the address; opening that address shows the same view.
    driver.execute_script("const s = document.getElementById('device'); s.value = 'iphone-430'; s.dispatchEvent(new Event('change'));")
    title_of = lambda: driver.find_element(By.CSS_SELECTOR, "#frames .widget .title").text
    shown_at = None
    for hour in range(24):
        driver.execute_script("const h = document.getElementById('hour'); h.value = arguments[0]; h.dispatchEvent(new Event('input'));", hour)
        if title_of() and title_of().startswith("Ceterum"):
            shown_at = int(re.search(r"[?&]at=(\d+)", driver.current_url).group(1))
            break
    check("moving the scrubber sets ?at=", shown_at is not None, driver.current_url)
    if shown_at is None:
        return
    timeline = json.load(urllib.request.urlopen(f"{base}/feeds/matrix/timeline?items=/quotes&hours=1&start={shown_at}"))
    check("the frames show the server's timeline item for that instant", timeline["entries"][0]["item"]["text"] == long_title)
    cut = [f for f in matrix_frames() if f["family"] == "systemSmall" and f["textSize"] == "largest"]
    check("the long title is cut in the small family at the largest text size, and the frame says so", cut and all(f["cut"] and "text-cut" in f["notes"] for f in cut))
    link, label, hour = driver.current_url, driver.find_element(By.ID, "hour-label").text, driver.find_element(By.ID, "hour").get_attribute("value")
    driver.get("about:blank")
    driver.get(link)
    check("the ?at= link reproduces the view (hour, item, title)",
          wait_for(lambda: driver.find_element(By.ID, "hour-label").text == label and driver.find_element(By.ID, "hour").get_attribute("value") == hour and title_of().startswith("Ceterum"), 5),
          f"{driver.find_element(By.ID, 'hour-label').text} vs {label}")
    driver.set_window_size(1400, 4200)
    driver.find_element(By.ID, "matrix").screenshot(os.path.join(output, "preview-matrix.png"))
    driver.set_window_size(1400, 1100)
    check("matrix screenshot kept", os.path.getsize(os.path.join(output, "preview-matrix.png")) > 10000)

def check_matrix_limits():
    driver.execute_script("const s = document.getElementById('device'); s.value = 'iphone-393'; s.dispatchEvent(new Event('change'));")
    frames = matrix_frames()
    check("the limits page's matrix puts ios-image-area on every iOS frame but the inline one (it draws no image)",
          len(frames) == 72 and all(("ios-image-area" in f["warnings"]) == (f["family"] != "accessoryInline") for f in frames),
          str([(f["family"], f["warnings"]) for f in frames][:8]))
    driver.execute_script("const s = document.getElementById('device'); s.value = 'android-tablet'; s.dispatchEvent(new Event('change'));")
    check("and none on the Android frames", all("ios-image-area" not in f["warnings"] for f in matrix_frames()))

HOUR = 3600000

def at_index(index, count):
    """An instant of today (UTC) whose rotation index in UTC is `index`: floor(epochMs / 1 h) mod count."""
    day = int(time.time() * 1000) // 86400000 * 86400000
    hour = next(h for h in range(24) if (day // HOUR + h) % count == index)
    return day + hour * HOUR + 60000

def set_control(element_id, value):
    driver.execute_script("const e = document.getElementById(arguments[0]); e.value = arguments[1]; e.dispatchEvent(new Event('change'));", element_id, value)

def value_of(element_id):
    return driver.find_element(By.ID, element_id).get_attribute("value")

# What each frame of the top row and the matrix shows: its title, the mark inside it (a missing
# image, no empty state), the natural width of its image, and its notes.
def shown_frames():
    return driver.execute_script("""
      return [...document.querySelectorAll('#frames .frame, #matrix .frame')].map((frame) => {
        const widget = frame.querySelector('.widget'), img = widget.querySelector('img'), mark = widget.querySelector('.mark');
        return { inline: widget.classList.contains('inline'), title: (widget.querySelector('.title').dataset.full ?? widget.querySelector('.title').textContent),
                 mark: mark && mark.getBoundingClientRect().height > 0 ? mark.textContent : null, image: img ? img.naturalWidth : null,
                 notes: frame.querySelector('.frame-warnings').textContent };
      });""")

def top_row():
    return driver.execute_script("""return [...document.querySelectorAll('#frames .frame')].map((f) => {
      const box = f.querySelector('.widget').getBoundingClientRect();
      return [f.querySelector('figcaption').textContent, Math.round(box.width * 2) / 2, Math.round(box.height * 2) / 2]; });""")

AXE = open(os.path.join(importlib.util.find_spec("axe_playwright_python").submodule_search_locations[0], "axe.min.js")).read()

def check_axe(name):
    driver.execute_script(AXE)
    found = driver.execute_async_script("""
      const done = arguments[arguments.length - 1];
      axe.run(document, { resultTypes: ["violations"] }).then(
        (r) => done(r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }))),
        (e) => done([{ id: "axe-error", impact: String(e), targets: [] }]));""")
    check(f"axe-core: no accessibility violation on {name}", not found,
          "; ".join(f"{v['id']} ({v['impact']}) at {', '.join(v['targets'])}" for v in found))

def check_profile():
    """WidgetBridge's README example: 20 quotes named by id, photos for q1 to q10 only."""
    text = lambda element_id: driver.find_element(By.ID, element_id).text
    quotes = [{"id": f"q{n}", "text": f"Quote {n}: what we think, we become"} for n in range(1, 21)]
    photos = {f"q{n}.png": png(300, 200, (12 * n, 90, 200 - 8 * n)) for n in range(1, 11)}
    published = publish({"quotes": quotes, "emptyText": "No quotes yet"}, photos, group="wb")
    status, stored = put_profile({"items": "/quotes", "title": "/text", "image": "{id}.png", "empty": "/emptyText"}, "wb")
    check("PUT /feeds/wb/profile stores the profile (201)", status == 201 and stored.get("image") == "{id}.png", f"{status} {stored}")
    driver.get(base + "/")
    check("the feed list links the group", wait_for(lambda: "wb" in [a.text for a in driver.find_elements(By.CSS_SELECTOR, "main #groups a")], 5))
    check_axe("/")
    # The system's dark preference: the page must state its colours, or a checker (and a browser
    # without the preference's defaults) judges its dark-mode text against white.
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    driver.get(base + "/")
    wait_for(lambda: "wb" in [a.text for a in driver.find_elements(By.CSS_SELECTOR, "main #groups a")], 5)
    check_axe("/ (dark colour-scheme preference)")
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

    driver.get(f"{base}/preview/wb?at={at_index(13, 20)}")
    check("the profile page shows its generation", wait_for(lambda: text("gen-id") == published["generationId"], 5), text("gen-id"))
    fields = lambda: [value_of(f"{m}-field") for m in ["items", "title", "subtitle", "image", "empty"]] + [value_of("zone")]
    check("the fields show the stored profile, the zone UTC by default", wait_for(lambda: fields() == ["/quotes", "/text", "", "{id}.png", "/emptyText", "UTC"], 5), str(fields()))
    missing = lambda: [f for f in shown_frames() if not f["inline"] and f["mark"] != "image missing: q14.png" or "q14.png" not in f["notes"]]
    check("at an hour whose item has no photo, every frame (top row and matrix) names the missing file",
          wait_for(lambda: len(shown_frames()) > 72 and not missing(), 5), str(missing()[:2]))
    check("and shows that item's title", all(f["title"] == "Quote 14: what we think, we become" for f in shown_frames()), str({f["title"] for f in shown_frames()}))
    check("the hour label names the item and the zone", "item 13" in text("hour-label") and "UTC" in text("hour-label"), text("hour-label"))
    driver.save_screenshot(os.path.join(output, "preview-profile.png"))
    for theme in ["light", "dark"]:
        set_control("theme", theme)
        check_axe(f"/preview/wb ({theme} theme)")

    driver.get(f"{base}/preview/wb?at={at_index(3, 20)}")
    drawn = lambda: [f for f in shown_frames() if not f["inline"]]
    check("at an hour whose item has a photo, every frame draws it",
          wait_for(lambda: len(drawn()) > 60 and all(f["image"] and f["image"] > 0 and f["mark"] is None for f in drawn()), 5), str(drawn()[:2]))
    check_filters()
    check_top_row()
    check_zone()
    check_save_profile()

    published = publish({"quotes": [], "emptyText": "No quotes yet"}, {}, group="wb")
    check("with no items every frame shows the profile's empty-state text",
          wait_for(lambda: text("gen-id") == published["generationId"] and all(f["title"] == "No quotes yet" for f in shown_frames()), 5),
          str({f["title"] for f in shown_frames()}))
    check("and the hour label says there are no items", "no items" in text("hour-label"), text("hour-label"))
    put_profile({"items": "/quotes", "title": "/text"}, "wb")
    driver.refresh()
    check("a profile that names no empty state: every frame says so",
          wait_for(lambda: (frames := shown_frames()) and len(frames) > 72 and all((f["mark"] or "").startswith("no empty state") for f in frames), 5),
          str({f["mark"] for f in shown_frames()}))

def check_filters():
    frames = lambda: driver.execute_script("return [...document.querySelectorAll('#matrix .frame')].map((f) => [f.dataset.family, f.dataset.appearance, f.dataset.textSize])")
    set_control("filter-family", "systemMedium")
    check("the family filter leaves only that family's frames", len(frames()) == 12 and {f[0] for f in frames()} == {"systemMedium"}, str(frames()[:3]))
    set_control("filter-appearance", "dark")
    set_control("filter-text", "largest")
    check("appearance and text size filter too", frames() == [["systemMedium", "dark", "largest"]] * 2, str(frames()))
    check("the filters are kept in the address", all(p in driver.current_url for p in ["family=systemMedium", "appearance=dark", "text=largest"]), driver.current_url)
    for control in ["filter-family", "filter-appearance", "filter-text"]:
        set_control(control, "")
    check("all frames again with every filter at all", len(frames()) == 72, str(len(frames())))

def check_top_row():
    phone = top_row()
    check("the top row draws the chosen iPhone's families in pt",
          [(w, h) for _, w, h in phone] == [(170, 170), (364, 170), (364, 382), (76, 76), (172, 76), (257, 26)] and all(label.endswith(" pt") for label, _, _ in phone), str(phone))
    set_control("device", "android-handheld")
    android = top_row()
    check("the top row follows the device selector, Android frames in dp",
          [(w, h) for _, w, h in android] == [(109, 130), (306, 56), (109, 276), (306, 115), (245, 130), (624, 56), (245, 276), (624, 115)]
          and all(label.startswith("Android") and label.endswith(" dp") for label, _, _ in android), str(android))
    set_control("device", "iphone-430")

def check_zone():
    set_control("zone", "Asia/Kolkata")
    check("the zone field takes an IANA name; the hour label shows the entry's offset",
          wait_for(lambda: "Asia/Kolkata (UTC+05:30)" in driver.find_element(By.ID, "hour-label").text, 5), driver.find_element(By.ID, "hour-label").text)
    set_control("zone", "+05:30")
    check("and a fixed offset", wait_for(lambda: "UTC+05:30 ·" in driver.find_element(By.ID, "hour-label").text, 5), driver.find_element(By.ID, "hour-label").text)
    set_control("zone", "UTC")

def check_save_profile():
    title = lambda: driver.find_element(By.CSS_SELECTOR, "#frames .widget .title").text
    set_control("title-field", "/id")
    check("a changed field is sent as an override: the frames show the item's id", wait_for(lambda: title() == "q4", 5), title())
    check("and the page says the change is not saved", "not saved: title" in driver.find_element(By.ID, "profile-status").text, driver.find_element(By.ID, "profile-status").text)
    set_control("image-field", "{id")
    driver.find_element(By.ID, "save-profile").click()
    status = lambda: driver.find_element(By.ID, "profile-status").text
    check("a refused profile (422) says why and marks the member", wait_for(lambda: "Not saved (422)" in status() and value_of("image-field") == "{id"
          and driver.find_element(By.ID, "image-field").get_attribute("aria-invalid") == "true", 5), status())
    set_control("image-field", "{id}.png")
    driver.find_element(By.ID, "save-profile").click()
    check("Save as profile stores what the fields say", wait_for(lambda: "Saved" in status(), 5) and get_profile("wb").get("title") == "/id", f"{status()} {get_profile('wb')}")
    check("and the address no longer carries the override", "title=" not in driver.current_url, driver.current_url)

def check_rtl():
    """An Arabic title at the largest text size: cut at its logical end, its first letters shown;
    a subtitle that starts with a number keeps the number's start (a visual cut kept its end)."""
    arabic = "الحياة قصيرة جدا ولكن الفن طويل والفرصة سريعة الزوال والتجربة خطيرة والحكم صعب " * 2
    number = "١٢٣٬٤٥٦ مستخدم"
    publish({"quotes": [{"id": "a1", "text": arabic, "sub": number}]}, {}, group="rtl")
    put_profile({"items": "/quotes", "title": "/text", "subtitle": "/sub"}, "rtl")
    driver.get(base + "/preview/rtl?text=largest")
    frames = lambda: driver.execute_script("""
      const shown = (text, count) => {
        const node = text.firstChild, box = text.getBoundingClientRect();
        if (!node) return false;
        const r = document.createRange(); r.setStart(node, 0); r.setEnd(node, Math.min(count, node.length));
        const b = r.getBoundingClientRect();
        return b.width > 0 && b.left >= box.left - 0.5 && b.right <= box.right + 0.5 && b.top >= box.top - 0.5 && b.bottom <= box.bottom + 0.5;
      };
      const logical = (text) => { const full = text.dataset.full, seen = text.textContent;
        return full === undefined ? true : seen.endsWith('…') && seen.length <= full.length && full.startsWith(seen.slice(0, -1).trimEnd()); };
      return [...document.querySelectorAll('#frames .frame, #matrix .frame')].map((frame) => {
        const title = frame.querySelector('.title'), sub = frame.querySelector('.subtitle');
        return { family: frame.dataset.family, textSize: frame.dataset.textSize, direction: frame.dataset.direction, cut: frame.dataset.cut === 'true',
                 first: shown(title, 6), logical: logical(title), titleCut: title.dataset.full !== undefined, dir: getComputedStyle(title).direction,
                 sub: sub ? { first: shown(sub, 3) && sub.scrollHeight <= sub.clientHeight + 1, logical: logical(sub), text: sub.textContent,
                              dir: getComputedStyle(sub).direction } : null };
      });""")
    check("the right-to-left title reaches every frame", wait_for(lambda: len(frames()) > 36 and all(f["first"] or f["last"] for f in frames()), 5))
    largest = [f for f in frames() if f["textSize"] == "largest"]
    check("an Arabic title at the largest text size keeps its first letters in view, in frames of both directions",
          len(largest) == 36 and all(f["first"] and f["dir"] == "rtl" for f in largest), str([f for f in largest if not (f["first"] and f["dir"] == "rtl")][:3]))
    check("and is cut at its logical end, the cut noted", all(f["cut"] and f["titleCut"] and f["logical"] for f in largest), str([f for f in largest if not (f["cut"] and f["titleCut"] and f["logical"])][:3]))
    subtitled = [f for f in frames() if f["sub"]]
    check("a subtitle that starts with a number keeps the number's start in view, cut at its logical end",
          len(subtitled) > 0 and all(f["sub"]["first"] and f["sub"]["logical"] for f in subtitled), str([f for f in subtitled if not (f["sub"]["first"] and f["sub"]["logical"])][:3]))
    check("and stays right to left once cut, as its whole text is (a cut leaving digits only would read left to right)",
          all(f["sub"]["dir"] == "rtl" for f in subtitled), str([f["sub"] for f in subtitled if f["sub"]["dir"] != "rtl"][:3]))
    driver.find_element(By.ID, "matrix").screenshot(os.path.join(output, "preview-rtl.png"))

def check_read_token():
    reader, writer = "rd-browser-7Hq2", "wr-browser-3Lm8"
    log_path = os.path.join(root, "token-server.log")
    with open(log_path, "w") as log:
        guarded = subprocess.Popen([binary, "--port", "0", "--root", root + "/guarded", "--read-token", reader, "--token", writer], stderr=log, text=True)
    try:
        wait_for(lambda: "listening on" in open(log_path).read(), 10)
        guarded_base = re.search(r"listening on (http://\S+)", open(log_path).read()).group(1)
        auth = {"Authorization": "Bearer " + writer}
        first = publish({"items": [{"title": "Guarded one", "image": "g.png"}]}, {"g.png": png(64, 64, (200, 200, 20))}, group="g", server_base=guarded_base, headers=auth)
        driver.get(guarded_base + "/preview/g")
        form = lambda: driver.find_element(By.ID, "token-form")
        check("with --read-token the page asks for the token", wait_for(lambda: form().is_displayed(), 5))
        driver.find_element(By.ID, "token-input").send_keys("wrong-token")
        driver.find_element(By.CSS_SELECTOR, "#token-form button").click()
        check("a refused token is asked again", wait_for(lambda: form().is_displayed() and "refused" in driver.find_element(By.ID, "token-message").text, 5))
        driver.find_element(By.ID, "token-input").send_keys(reader)
        driver.find_element(By.CSS_SELECTOR, "#token-form button").click()
        text = lambda element_id: driver.find_element(By.ID, element_id).text
        check("with the token the page shows the feed", wait_for(lambda: text("gen-id") == first["generationId"], 5), text("gen-id"))
        check("and follows it through the event stream", wait_for(lambda: "live" in text("connection") and "events" in text("connection"), 5), text("connection"))
        check("images come through fetch with the token", wait_for(lambda: driver.execute_script(
            "return [...document.querySelectorAll('#gallery img')].every((i) => i.src.startsWith('blob:') && i.naturalWidth === 64)"), 5))
        second = publish({"items": [{"title": "Guarded two", "image": "g.png"}]}, {"g.png": png(64, 64, (20, 200, 20))}, group="g", server_base=guarded_base, headers=auth)
        check("a publish reaches the page through the guarded event stream", wait_for(lambda: text("gen-id") == second["generationId"], 3), text("gen-id"))
        driver.get(guarded_base + "/preview/g")
        check("the token is kept for the tab: a reload does not ask again",
              wait_for(lambda: text("gen-id") == second["generationId"], 5) and not form().is_displayed())
        set_control("title-field", "/title")
        driver.find_element(By.ID, "save-profile").click()
        check("saving a profile asks for the write token", wait_for(lambda: driver.find_element(By.ID, "write-token-form").is_displayed(), 5), text("profile-status"))
        driver.find_element(By.ID, "write-token-input").send_keys(writer)
        driver.find_element(By.CSS_SELECTOR, "#write-token-form button[type=submit]").click()
        check("with it the profile is saved", wait_for(lambda: "Saved" in text("profile-status"), 5)
              and get_profile("g", guarded_base, {"Authorization": "Bearer " + reader}).get("title") == "/title", text("profile-status"))
        driver.get(guarded_base + "/")
        check("the feed list uses the tab's token too", wait_for(lambda: "g" in [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#groups a")], 5))
        driver.execute_script("sessionStorage.clear()")
    finally:
        stop_server(guarded)
    logged = open(log_path).read()
    check("the server logged the event stream", "GET /feeds/g/events 200" in logged, logged[-500:])
    check("the access log never shows the token", reader not in logged and "access_token" not in logged)

def start_server(name, *flags):
    """Another server on a root of its own (its log in the test's folder); answers its base URL."""
    log_path = os.path.join(root, name + ".log")
    with open(log_path, "w") as log:
        process = subprocess.Popen([binary, "--port", "0", "--root", os.path.join(root, name), "--access-log", "off", *flags], stderr=log, text=True)
    wait_for(lambda: "listening on" in open(log_path).read(), 10)
    return process, re.search(r"listening on (http://\S+)", open(log_path).read()).group(1)

def stop_server(process):
    """Leaves the server's pages first: a page still open would retry its event stream against the
    stopped server, and Chromium would log the refused connection as a console error."""
    driver.get("about:blank")
    process.terminate()
    process.wait()

def check_reloads():
    """--ios-reload-budget 2 and a profile that shows /quotes' /text: four publishes, the second
    changing only a stamp (invisible-change), the third and fourth past the budget (iPhones keep
    the second's data, a stale span to now); the strip must draw them, a fifth publish must reach
    it through the event stream, and with --journal off the section says there is no history."""
    budgeted, reload_base = start_server("reloads", "--ios-reload-budget", "2")
    try:
        put_profile({"items": "/quotes", "title": "/text"}, "r", reload_base)
        answers = [publish({"quotes": [{"text": text}], "stamp": stamp}, {}, group="r", server_base=reload_base)
                   for text, stamp in [("one", 1), ("one", 2), ("two", 3), ("three", 4)]]
        codes = [[w["code"] for w in a["warnings"]] for a in answers]
        check("the second publish (only the stamp changed) is answered with invisible-change, the others are not",
              codes == [[], ["invisible-change"], [], []], str(codes))
        ledger = json.load(urllib.request.urlopen(reload_base + "/feeds/r/refreshes?hours=24"))
        check("GET /refreshes: two reloaded, two over budget, a stale span to now",
              [p["ios"] for p in ledger["publishes"]] == ["reloaded", "reloaded", "over-budget", "over-budget"]
              and len(ledger["staleSpans"]) == 1 and ledger["staleSpans"][0]["showing"] == answers[1]["generationId"], json.dumps(ledger)[:600])
        driver.get(reload_base + "/preview/r")
        text = lambda element_id: driver.find_element(By.ID, element_id).text
        ticks = lambda: driver.execute_script("""return [...document.querySelectorAll('#reloads-ticks .tick')].map((t) => {
          const box = t.getBoundingClientRect();
          return { ios: t.dataset.ios, visible: t.dataset.visible, generation: t.dataset.generation, label: t.getAttribute('aria-label'),
                   title: t.title, shown: box.width > 8 && box.height > 8, shape: getComputedStyle(t).borderRadius, border: getComputedStyle(t).borderStyle }; });""")
        check("the reload strip shows a tick per publish", wait_for(lambda: len(ticks()) == 4, 5), str(ticks()))
        drawn = ticks()
        check("two ticks are marked over budget, and drawn as another shape than the reloaded ones",
              [t["ios"] for t in drawn] == ["reloaded", "reloaded", "over-budget", "over-budget"]
              and {t["shape"] for t in drawn if t["ios"] == "over-budget"}.isdisjoint({t["shape"] for t in drawn if t["ios"] == "reloaded"}), str(drawn))
        check("one tick, the second, is marked as changing nothing visible (hollow, dashed)",
              [t["visible"] for t in drawn] == ["true", "false", "true", "true"] and drawn[1]["border"] == "dashed" and drawn[0]["border"] == "solid", str(drawn))
        check("every tick is drawn and named with its generation and outcome",
              all(t["shown"] and t["label"] == t["title"] and a["generationId"] in t["label"] for t, a in zip(drawn, answers))
              and "over budget" in drawn[2]["label"] and "changed nothing" in drawn[1]["label"], str(drawn))
        stale = lambda: driver.execute_script("""return [...document.querySelectorAll('#reloads-track .stale')].map((s) => {
          const box = s.getBoundingClientRect(), track = s.parentElement.getBoundingClientRect();
          return { width: box.width, right: track.right - box.right, label: s.getAttribute('aria-label') }; });""")
        check("a stale span is drawn, at the strip's end (now), naming what iPhones still show",
              len(stale()) == 1 and stale()[0]["width"] >= 3 and stale()[0]["right"] < 4 and answers[1]["generationId"] in stale()[0]["label"], str(stale()))
        summary = text("reloads-summary")
        check("the summary counts reloads, over budget, invisible changes and the stale time",
              summary.startswith("2 of 2 reloads used in the last 24 h") and "2 over budget" in summary and "1 changed nothing visible" in summary
              and "stale for" in summary, summary)
        check("the strip has an hour axis from 24 h ago to now", text("reloads-axis").startswith("24 h ago") and "now" in text("reloads-axis"), text("reloads-axis"))
        driver.find_elements(By.CSS_SELECTOR, "#reloads-ticks .tick")[2].click()
        check("a chosen tick's publish is spelled out below the strip", "over budget" in text("reloads-detail") and answers[2]["generationId"] in text("reloads-detail"), text("reloads-detail"))
        fifth = publish({"quotes": [{"text": "four"}], "stamp": 5}, {}, group="r", server_base=reload_base)
        check("a publish refreshes the strip through the event stream",
              wait_for(lambda: len(ticks()) == 5 and ticks()[4]["generation"] == fifth["generationId"] and "3 over budget" in text("reloads-summary"), 5), text("reloads-summary"))
        driver.execute_script("document.getElementById('reloads').scrollIntoView()")
        driver.find_element(By.ID, "reloads").screenshot(os.path.join(output, "preview-reloads.png"))
        check("reload strip screenshot kept", os.path.getsize(os.path.join(output, "preview-reloads.png")) > 5000)
        for theme in ["light", "dark"]:
            set_control("theme", theme)
            check_axe(f"/preview/r with the reload strip ({theme} theme)")
    finally:
        stop_server(budgeted)
    unjournaled, quiet_base = start_server("no-journal", "--journal", "off")
    try:
        publish({"quotes": [{"text": "one"}]}, {}, group="q", server_base=quiet_base)
        driver.get(quiet_base + "/preview/q")
        summary = lambda: driver.find_element(By.ID, "reloads-summary").text
        check("with --journal off the section says there is no reload history, and draws no strip",
              wait_for(lambda: "--journal off" in summary(), 5) and not driver.find_element(By.ID, "reloads-strip").is_displayed(), summary())
    finally:
        stop_server(unjournaled)

options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1100"]:
    options.add_argument(argument)
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
driver.set_script_timeout(120)
# Every document, before its own scripts run: each securitypolicyviolation event becomes a console
# error with a marker, so the browser log holds every violation of every page this test opens
# (Chromium's own "Refused to ..." messages are counted as well).
driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
  document.addEventListener("securitypolicyviolation", (e) => console.error(
    "CSP-VIOLATION " + e.effectiveDirective + " blocked " + (e.blockedURI || "inline") + " at " + e.sourceFile + ":" + e.lineNumber));
"""})

def csp_violations(entries):
    return [entry for entry in entries if "CSP-VIOLATION" in entry["message"] or "Content Security Policy" in entry["message"]]

def check_policy_headers():
    for path in ["/", "/preview/quotes"]:
        policy = urllib.request.urlopen(base + path).headers.get("Content-Security-Policy", "")
        check(f"{path}: the policy allows nothing inline and no framing", "unsafe-" not in policy and "frame-ancestors 'none'" in policy, policy)

def check_violations_are_seen_and_framing_refused():
    driver.get(base + "/preview/quotes")
    wait_for(lambda: driver.find_element(By.ID, "gen-id").text != "–", 5)
    driver.execute_script("const s = document.createElement('script'); s.textContent = 'window.__inline = 1'; document.body.append(s);")
    seen = []
    check("a deliberate inline script is refused and reported (the violation check sees violations)",
          wait_for(lambda: seen.extend(csp_violations(driver.get_log("browser"))) or any("CSP-VIOLATION script-src" in e["message"] for e in seen), 3)
          and driver.execute_script("return window.__inline === undefined"), json.dumps(seen)[:500])
    # The preview frames the feed list of its own origin: even that is refused (the frame gets an
    # error page of an opaque origin, so its document is out of reach), and the browser says why.
    driver.execute_script("const f = document.createElement('iframe'); f.id = 'framing-probe'; f.src = '/'; document.body.append(f);")
    refused = []
    check("no page can be framed, not even by its own origin (frame-ancestors 'none')",
          wait_for(lambda: refused.extend(driver.get_log("browser")) or any("frame-ancestors" in e["message"] for e in refused), 5)
          and driver.execute_script("return document.getElementById('framing-probe').contentDocument === null"), json.dumps(refused)[:500])

try:
    check_policy_headers()
    driver.get(base + "/preview/quotes")
    text = lambda element_id: driver.find_element(By.ID, element_id).text
    check("page shows the served generation", wait_for(lambda: text("gen-id") == first["generationId"], 5), text("gen-id"))
    check("live connection", wait_for(lambda: "live" in text("connection"), 5), text("connection"))
    check("the top row draws the six families of the default iPhone", len(driver.find_elements(By.CSS_SELECTOR, "#frames .widget")) == 6)
    check("frames show a title from the items", wait_for(lambda: any(t in text("frames") for t in ["Carpe diem", "Festina lente"]), 3), text("frames"))
    check("gallery lists both assets with decoded size", wait_for(lambda: "2 asset(s)" in text("decoded-total"), 3), text("decoded-total"))
    driver.execute_script("window.__notReloaded = true")

    second = publish({"quotes": [{"id": "q3", "text": "Tempus fugit", "image": "q1.png"}], "emptyText": "Nothing yet"}, {"q1.png": png(600, 400, (40, 160, 40))})
    started = time.time()
    shown = wait_for(lambda: text("gen-id") == second["generationId"] and "Tempus fugit" in text("frames"), 3)
    check(f"a publish shows within 3 s without reload ({time.time() - started:.2f} s)", shown and driver.execute_script("return window.__notReloaded === true"), text("gen-id"))

    with open(f"{root}/data/quotes/generations/{second['generationId']}/feed.json", "w") as feed:
        feed.write('{"schemaVersion":1,"gener')
    banner = lambda: driver.find_element(By.ID, "fallback")
    check("corrupting the current generation raises the fallback banner",
          wait_for(lambda: banner().is_displayed() and second["generationId"] in banner().text and "unparsable" in banner().text, 3), banner().text)
    check("the page then shows the previous generation", wait_for(lambda: text("gen-id") == first["generationId"], 3), text("gen-id"))
    check("history lists the corrupt generation", wait_for(lambda: "corrupt" in text("history"), 3), text("history"))

    driver.find_element(By.ID, "theme").send_keys("Dark")
    driver.save_screenshot(os.path.join(output, "preview.png"))

    # Platform limits: a 1024 × 1024 image (over WidgetKit's 718,080 pixels) and one no item names.
    limits = publish({"items": [{"title": "Too big", "image": "sun.png"}]},
                     {"sun.png": png(1024, 1024, (230, 160, 20)), "extra.png": png(64, 64, (20, 20, 20))}, group="limits", query="?maxDimension=1024")
    check("the publish answer carries the warnings", sorted(w["code"] for w in limits["warnings"]) == ["asset-unreferenced", "ios-image-area"], json.dumps(limits["warnings"])[:300])
    driver.get(base + "/preview/limits")
    check("limits page shows its generation", wait_for(lambda: text("gen-id") == limits["generationId"], 5), text("gen-id"))
    def codes(selector):
        # The list is drawn again when the page's live updates arrive: an element read while it is
        # replaced is stale, and the read is tried again.
        for _ in range(20):
            try:
                return [element.get_attribute("data-code") for element in driver.find_elements(By.CSS_SELECTOR, selector)]
            except StaleElementReferenceException:
                time.sleep(0.05)
        return ["(stale)"]
    check("the warning list names both codes", wait_for(lambda: sorted(codes("#warnings li")) == ["asset-unreferenced", "ios-image-area"], 10), str(codes("#warnings li")))
    widgets = lambda: driver.find_elements(By.CSS_SELECTOR, "#frames .widget")
    ios_frames = lambda: [w for w in widgets() if w.get_attribute("aria-label").startswith("iOS")]
    android_frames = lambda: [w for w in widgets() if w.get_attribute("aria-label").startswith("Android")]
    drawing = lambda: [w for w in ios_frames() if "inline" not in w.get_attribute("class")]
    check("iOS frames that draw an image show WidgetKit's placeholder for the oversized one",
          wait_for(lambda: len(ios_frames()) == 6 and len(drawing()) == 5 and all("ios-image-area" in w.get_attribute("data-warnings") and "placeholder" in w.get_attribute("class") for w in drawing()), 3),
          str([(w.get_attribute("data-warnings"), w.get_attribute("class")) for w in ios_frames()]))
    check("the frame notes say what WidgetKit does", "WidgetKit shows the placeholder" in text("frames"), text("frames")[:300])
    driver.execute_script("const s = document.getElementById('device'); s.value = 'android-handheld'; s.dispatchEvent(new Event('change'));")
    check("Android frames carry no iOS warning", len(android_frames()) == 8 and all(w.get_attribute("data-warnings") == "" and "placeholder" not in w.get_attribute("class") for w in android_frames()),
          str([w.get_attribute("data-warnings") for w in android_frames()]))
    driver.execute_script("const s = document.getElementById('device'); s.value = 'iphone-430'; s.dispatchEvent(new Event('change'));")
    figure = lambda name: driver.find_element(By.XPATH, f"//div[@id='gallery']/figure[img[@alt='{name}']]")
    check("the gallery marks the oversized image", wait_for(lambda: "warn" in figure("sun.png").get_attribute("class") and "ios-image-area" in figure("sun.png").text, 3), figure("sun.png").text)
    check("the gallery marks the unreferenced image", "asset-unreferenced" in figure("extra.png").text, figure("extra.png").text)

    # Fault lab: injected faults show in the history with why readers skip them (or do not).
    missing = inject("limits", "missing-asset")
    row = lambda fault: driver.find_element(By.CSS_SELECTOR, f"#history tr[data-fault='{fault}']")
    check("an injected missing-asset shows in the history, with WidgetBridge's readers reading it",
          wait_for(lambda: missing["generationId"] in row("missing-asset").text and "reads it" in row("missing-asset").text, 4), text("history")[:400])
    inject("limits", "corrupt-pointer")
    check("an injected corrupt pointer gets a current.json row", wait_for(lambda: "current.json" in row("corrupt-pointer").text, 4), text("history")[:400])
    check("and the fallback banner names the unusable pointer", wait_for(lambda: "unusable-pointer" in banner().text, 4), banner().text)
    driver.save_screenshot(os.path.join(output, "preview-limits.png"))
    check_matrix_limits()
    check_matrix()
    check_profile()
    check_rtl()
    check_read_token()
    check_reloads()
    # Designed answers that Chromium logs as network errors (it logs every non-2xx fetch): the
    # guarded server's 401s (before the token is given, and for the wrong one), the profile's 404
    # for a group without one, the 422 of the refused profile and of its override, and the
    # 404 journal-off of the reload history on a server run with --journal off.
    designed = lambda message: "status of 401" in message or (("/profile" in message or "/refreshes" in message) and "status of 404" in message) \
        or ("/profile" in message and "status of 422" in message) or ("/timeline" in message and "status of 422" in message)
    logged = driver.get_log("browser")
    check("no Content-Security-Policy violation on any page", not csp_violations(logged), json.dumps(csp_violations(logged))[:500])
    errors = [entry for entry in logged if entry["level"] == "SEVERE" and not (entry["source"] == "network" and designed(entry["message"]))]
    check("no console errors", not errors, json.dumps(errors)[:500])
    check_violations_are_seen_and_framing_refused()
finally:
    driver.quit()
    server.terminate()
    server.wait()

passed = sum(results)
print(f"{passed} passed, {len(results) - passed} failed")
sys.exit(0 if passed == len(results) else 1)
