#!/usr/bin/env python3
"""Real-browser test of the widget-preview page: headless Chromium (Debian's chromium and
chromium-driver) driven by Selenium opens /preview/{group} on a live server; a publish must show
on the page within 3 s without a reload; corrupting the current generation on disk must raise the
fallback banner; platform-limit warnings must show on the frames and in the gallery; injected
faults (fault lab) must show in the history; the console must stay free of errors; screenshots go
to test-output/.

Usage: preview_test.py FEED_SERVER_BINARY OUTPUT_DIR. Prints "N passed, N failed" and exits non-zero on failure.
"""
import json, os, re, struct, subprocess, sys, tempfile, time, urllib.request, zlib
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

binary, output = sys.argv[1], sys.argv[2]
os.makedirs(output, exist_ok=True)
root = tempfile.mkdtemp(prefix="preview-test-")
server = subprocess.Popen([binary, "--port", "0", "--root", root + "/data", "--access-log", "off", "--fault-lab"], stderr=subprocess.PIPE, text=True)
base = re.search(r"listening on (http://\S+)", server.stderr.readline()).group(1)
results = []

def check(name, condition, detail=""):
    results.append(condition)
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else ": " + detail), flush=True)

def png(width, height, rgb):
    row = b"\x00" + bytes(rgb) * width
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b"")

def publish(payload, images, group="quotes", query=""):
    boundary = "previewtestboundary"
    body = b""
    body += f'--{boundary}\r\nContent-Disposition: form-data; name="payload"\r\nContent-Type: application/json\r\n\r\n'.encode() + json.dumps(payload).encode() + b"\r\n"
    for name, data in images.items():
        body += f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\nContent-Type: image/png\r\n\r\n'.encode() + data + b"\r\n"
    body += f"--{boundary}--\r\n".encode()
    request = urllib.request.Request(base + "/feeds/" + group + query, data=body, method="PUT", headers={"Content-Type": "multipart/form-data; boundary=" + boundary})
    return json.load(urllib.request.urlopen(request))

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

options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1100"]:
    options.add_argument(argument)
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
try:
    driver.get(base + "/preview/quotes")
    text = lambda element_id: driver.find_element(By.ID, element_id).text
    check("page shows the served generation", wait_for(lambda: text("gen-id") == first["generationId"], 5), text("gen-id"))
    check("live connection", wait_for(lambda: "live" in text("connection"), 5), text("connection"))
    check("seven widget frames", len(driver.find_elements(By.CSS_SELECTOR, "#frames .widget")) == 7)
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
    codes = lambda selector: [element.get_attribute("data-code") for element in driver.find_elements(By.CSS_SELECTOR, selector)]
    check("the warning list names both codes", wait_for(lambda: sorted(codes("#warnings li")) == ["asset-unreferenced", "ios-image-area"], 3), str(codes("#warnings li")))
    widgets = lambda: driver.find_elements(By.CSS_SELECTOR, "#frames .widget")
    ios_frames = lambda: [w for w in widgets() if w.get_attribute("aria-label").startswith("iOS")]
    android_frames = lambda: [w for w in widgets() if w.get_attribute("aria-label").startswith("Android")]
    check("iOS frames show WidgetKit's placeholder for the oversized image",
          wait_for(lambda: len(ios_frames()) == 5 and all("ios-image-area" in w.get_attribute("data-warnings") and "placeholder" in w.get_attribute("class") for w in ios_frames()), 3),
          str([(w.get_attribute("data-warnings"), w.get_attribute("class")) for w in ios_frames()]))
    check("Android frames carry no iOS warning", all(w.get_attribute("data-warnings") == "" and "placeholder" not in w.get_attribute("class") for w in android_frames()),
          str([w.get_attribute("data-warnings") for w in android_frames()]))
    check("the frame notes say what WidgetKit does", "WidgetKit shows the placeholder" in text("frames"), text("frames")[:300])
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
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    check("no console errors", not errors, json.dumps(errors)[:500])
finally:
    driver.quit()
    server.terminate()
    server.wait()

passed = sum(results)
print(f"{passed} passed, {len(results) - passed} failed")
sys.exit(0 if passed == len(results) else 1)
