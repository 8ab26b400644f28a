// The widget-preview page's script (GET /preview.js): a file of its own, since the page's
// Content-Security-Policy runs no inline script. Sizes are set through the CSSOM
// (element.style), which that policy allows, never through style attributes, which it refuses.
"use strict";
const group = decodeURIComponent(location.pathname.split("/").pop());
const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);
// Point sizes: iOS as WidgetKit gives them on a 390-pt-wide iPhone; Android as a launcher grid
// of 73 × 73 dp cells (2 × 2 and 4 × 2), the nominal Android 12+ cell on a typical phone.
const frames = [
  ["iOS systemSmall", 170, 170, ""], ["iOS systemMedium", 364, 170, ""], ["iOS systemLarge", 364, 382, ""],
  ["iOS accessoryRectangular", 172, 76, "rect"], ["iOS accessoryCircular", 76, 76, "circular"],
  ["Android 2×2", 146, 146, "android"], ["Android 4×2", 292, 146, "android"],
];
// Widget sizes per device. iOS and iPadOS: Apple's Human Interface Guidelines, Widgets,
// Specifications (points; iPad "canvas" sizes, the ones a widget lays out in). Android: the
// widget sizing guide's default sizes for a handheld and a tablet (dp); a launcher reports a
// range, so each cell size is drawn at both ends: portrait (min width × max height) and
// landscape (max width × min height). Sources and figures: docs/widget-limits.md.
const devices = [
  ["iphone-430", "iPhone 15 Pro Max, 15 Plus, 16 Plus (430×932 pt)", "ios", [[170, 170], [364, 170], [364, 382], [76, 76], [172, 76], [257, 26]]],
  ["iphone-414", "iPhone 11, 11 Pro Max, XR, XS Max (414×896 pt)", "ios", [[169, 169], [360, 169], [360, 379], [76, 76], [160, 72], [248, 26]]],
  ["iphone-393", "iPhone 15, 15 Pro, 16 (393×852 pt)", "ios", [[158, 158], [338, 158], [338, 354], [72, 72], [160, 72], [234, 26]]],
  ["iphone-375", "iPhone SE 2nd and 3rd generation, 8 (375×667 pt)", "ios", [[148, 148], [321, 148], [321, 324], [68, 68], [153, 68], [225, 26]]],
  ["iphone-360", "iPhone 12 mini, 13 mini (360×780 pt)", "ios", [[155, 155], [329, 155], [329, 345], [72, 72], [157, 72], [225, 26]]],
  ["ipad-1024", "iPad Pro 12.9-inch, iPad Air 13-inch (1024×1366 pt)", "ipados", [[170, 170], [378.5, 170], [378.5, 378.5], [795, 378.5]]],
  ["ipad-820", "iPad Air 11-inch, iPad 10th generation (820×1180 pt)", "ipados", [[155, 155], [342, 155], [342, 342], [715.5, 342]]],
  ["ipad-744", "iPad mini 8.3-inch (744×1133 pt)", "ipados", [[141, 141], [305.5, 141], [305.5, 305.5], [634.5, 305.5]]],
  ["android-handheld", "Android handheld (sizing guide, Pixel launcher)", "android", [["2×1", 109, 306, 56, 130], ["2×2", 109, 306, 115, 276], ["4×1", 245, 624, 56, 130], ["4×2", 245, 624, 115, 276]]],
  ["android-tablet", "Android tablet (sizing guide)", "android", [["2×1", 180, 304, 64, 120], ["2×2", 180, 304, 184, 304], ["3×2", 298, 488, 184, 304]]],
];
const iosFamilies = ["systemSmall", "systemMedium", "systemLarge", "accessoryCircular", "accessoryRectangular", "accessoryInline"];
const ipadFamilies = ["systemSmall", "systemMedium", "systemLarge", "systemExtraLarge"];
// Title font in points at the default text size, and how the largest accessibility size scales
// it: iOS AX5 body is 53 pt against 17 pt at the default Large (× 3.12); Android's largest font
// scale is 200 % (× 2). Text that does not fit is cut (line clamp) or, when not even one line
// fits, shrunk; both are noted on the frame.
const baseFont = { systemSmall: 14, systemMedium: 14, systemLarge: 15, systemExtraLarge: 15, accessoryCircular: 11, accessoryRectangular: 12, accessoryInline: 13, android: 14 };
const largestScale = { ios: 53 / 17, ipados: 53 / 17, android: 2 };
const appearances = ["light", "dark", "tinted"], textSizes = ["default", "largest"], directions = ["ltr", "rtl"];
// Widget families as the matrix draws them: [label, width, height, kind, platform, family].
function deviceFamilies(device) {
  const [, , platform, sizes] = device;
  if (platform === "android") return sizes.flatMap(([cells, minW, maxW, minH, maxH]) => [
    [`${cells} portrait (min width × max height)`, minW, maxH, "android", "android", "android"],
    [`${cells} landscape (max width × min height)`, maxW, minH, "android", "android", "android"]]);
  const names = platform === "ios" ? iosFamilies : ipadFamilies;
  return sizes.map(([w, h], i) => [names[i], w, h, { accessoryCircular: "circular", accessoryRectangular: "rect", accessoryInline: "inline" }[names[i]] || "", "ios", names[i]]);
}
let feed = null, fallback = null, etag = null, timeline = [], warnings = [], historyText = "";
const HOUR = 3600000, DAY = 86400000;
// The instant shown, from ?at=<epochMs> (a link reproduces the view); null follows the clock.
let at = /^\d{1,15}$/.test(params.get("at") || "") ? Number(params.get("at")) : null;
$("group-name").textContent = group;
document.title = "Widget preview: " + group;

function setTheme(theme) { document.documentElement.dataset.theme = theme; $("theme").value = theme; localStorage.setItem("feed-preview-theme", theme); }
setTheme(localStorage.getItem("feed-preview-theme") || (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light"));
$("theme").addEventListener("change", (e) => setTheme(e.target.value));

// Read token: asked once when the server answers 401, then kept for this tab only
// (sessionStorage: gone when the tab closes, never sent to another origin). fetch sends it as
// a header; EventSource cannot, so the event stream gets it as ?access_token= (the only place
// the server takes it from a URL).
const tokenKey = "feed-server-read-token";
let tokenAsked = null;
function askForToken(refused) {
  tokenAsked ??= new Promise((resolve) => {
    const form = $("token-form");
    $("token-message").textContent = refused ? "The server refused that token: enter the read token again." : "This server needs a read token.";
    form.hidden = false;
    $("token-input").focus();
    form.onsubmit = (event) => {
      event.preventDefault();
      sessionStorage.setItem(tokenKey, $("token-input").value.trim());
      $("token-input").value = "";
      form.hidden = true;
      tokenAsked = null;
      resolve();
    };
  });
  return tokenAsked;
}
async function api(url, options = {}) {
  for (;;) {
    const token = sessionStorage.getItem(tokenKey);
    const response = await fetch(url, { ...options, headers: { ...(options.headers || {}), ...(token ? { Authorization: "Bearer " + token } : {}) } });
    if (response.status !== 401) return response;
    await askForToken(Boolean(token));
  }
}
// An <img> cannot send a header either: with a token, images come through fetch as blobs
// (asset URLs name one generation's file, so each is fetched once).
const blobs = new Map();
function setImage(img, url) {
  if (!sessionStorage.getItem(tokenKey)) { img.src = url; return; }
  if (!blobs.has(url)) blobs.set(url, api(url).then((r) => r.ok ? r.blob() : null).then((b) => b && URL.createObjectURL(b)));
  blobs.get(url).then((src) => { if (src) img.src = src; });
}

function bytes(n) { return n < 1024 ? n + " B" : n < 1048576 ? (n / 1024).toFixed(1) + " KiB" : (n / 1048576).toFixed(2) + " MiB"; }

// Arrays of objects in the payload, as JSON Pointers; the first one is the default item list.
function itemArrays(value, pointer = "", found = []) {
  if (Array.isArray(value)) { if (value.length && value.every((v) => v && typeof v === "object" && !Array.isArray(v))) found.push(pointer); value.forEach((v, i) => itemArrays(v, pointer + "/" + i, found)); }
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) itemArrays(v, pointer + "/" + k.replace(/~/g, "~0").replace(/\//g, "~1"), found);
  return found;
}
function resolve(value, pointer) {
  if (!pointer) return value;
  for (const token of pointer.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"))) { if (value == null) return undefined; value = value[token]; }
  return value;
}
function chooseFields(items) {
  const keys = [...new Set(items.flatMap((item) => Object.keys(item)))];
  const names = new Set((feed.assets || []).map((a) => a.name));
  const image = keys.find((k) => items.some((item) => typeof item[k] === "string" && names.has(item[k])))
    || keys.find((k) => /image|photo|picture|icon|asset/i.test(k)) || "";
  const text = keys.filter((k) => k !== image && items.every((item) => typeof item[k] === "string"));
  const title = text.find((k) => /title|text|name|word|quote|label/i.test(k)) || text[0] || "";
  return { keys, title, image };
}
function fillSelect(select, options, value) {
  select.replaceChildren(...["", ...options].map((o) => { const el = document.createElement("option"); el.value = o; el.textContent = o || "(none)"; return el; }));
  select.value = options.includes(value) ? value : "";
}
function keepInURL() {
  const p = new URLSearchParams();
  for (const [name, id] of [["items", "items-field"], ["title", "title-field"], ["image", "image-field"]]) if ($(id).value) p.set(name, $(id).value);
  if ($("zone").value !== "0") p.set("zone", $("zone").value);
  if (at !== null) p.set("at", String(at));
  if ($("device").value !== devices[0][0]) p.set("device", $("device").value);
  history.replaceState(null, "", location.pathname + (p.toString() ? "?" + p : ""));
}

function renderTree(value, key) {
  if (value && typeof value === "object") {
    const details = document.createElement("details");
    details.open = true;
    const summary = document.createElement("summary");
    summary.innerHTML = (key !== undefined ? '<span class="key"></span>: ' : "") + (Array.isArray(value) ? "[" + value.length + "]" : "{" + Object.keys(value).length + "}");
    if (key !== undefined) summary.querySelector(".key").textContent = key;
    details.append(summary);
    for (const [k, v] of Object.entries(value)) details.append(renderTree(v, Array.isArray(value) ? Number(k) : k));
    return details;
  }
  const leaf = document.createElement("div");
  leaf.className = "leaf";
  leaf.textContent = (key !== undefined ? key + ": " : "") + JSON.stringify(value);
  return leaf;
}

// The scrubber runs over the 24 hours of the day (in the chosen zone) that holds `at`.
function zoneMs() { return Math.round(Number($("zone").value) * 3600) * 1000; }
function dayStart(ms) { const local = ms + zoneMs(); return local - (((local % DAY) + DAY) % DAY) - zoneMs(); }
async function loadTimeline(pointer) {
  timeline = [];
  const shown = at ?? Date.now();
  $("hour").value = String(Math.floor((shown - dayStart(shown)) / HOUR));
  if (!pointer) return;
  const response = await api(`/feeds/${encodeURIComponent(group)}/timeline?items=${encodeURIComponent(pointer)}&hours=24&zoneOffsetSeconds=${zoneMs() / 1000}&start=${dayStart(shown)}`);
  if (response.ok) timeline = (await response.json()).entries;
}

// Warnings on a frame: iOS frames get the iOS limits (and the placeholder WidgetKit shows when
// their image is over its area), Android frames the bitmap budget, every frame a missing image.
function frameWarnings(platform, imageName) {
  return warnings.filter((w) => (w.code === "asset-not-found" && w.asset === imageName)
    || (platform === "ios" && (w.code === "ios-extension-memory" || (w.code === "ios-image-area" && w.asset === imageName)))
    || (platform === "android" && w.code === "android-bitmap-memory"));
}
function shortText(w) {
  switch (w.code) {
    case "ios-image-area": return `WidgetKit shows the placeholder: ${w.asset} has ${w.actual.toLocaleString("en")} px, over ${w.limit.toLocaleString("en")}`;
    case "ios-extension-memory": return `extension killed: images need ${bytes(w.actual)} decoded, over ${bytes(w.limit)}`;
    case "android-bitmap-memory": return `update rejected: bitmaps need ${bytes(w.actual)}, over ${bytes(w.limit)}`;
    case "asset-not-found": return `no file ${w.asset}: the image stays empty`;
    default: return w.detail;
  }
}
function warningItem(w, text) {
  const item = document.createElement("li");
  item.dataset.code = w.code;
  const code = document.createElement("code");
  code.textContent = w.code;
  item.append(code, " " + text);
  return item;
}
async function loadWarnings() {
  warnings = [];
  const response = await api(`/feeds/${encodeURIComponent(group)}/warnings`, { cache: "no-store" });
  if (!response.ok) return;
  const body = await response.json();
  // A publish may land between the two reads; its own event brings the matching warnings.
  if (body.generationId === feed.generationId) warnings = body.warnings;
  $("warnings").replaceChildren(...warnings.map((w) => warningItem(w, w.detail)));
}

// What the frames show at the chosen hour: the timeline entry's item, its title and image.
function shownContent() {
  const entry = timeline[Number($("hour").value)];
  const item = entry ? entry.item : (resolve(feed.payload, $("items-field").value) || [])[0];
  const title = item && $("title-field").value ? String(item[$("title-field").value] ?? "") : (feed.payload && feed.payload.emptyText) || "";
  const imageName = item && $("image-field").value ? item[$("image-field").value] : null;
  return { entry, title, imageName, asset: (feed.assets || []).find((a) => a.name === imageName) };
}
function zoneLabel(ms) {
  const hours = zoneMs() / HOUR;
  return new Date(ms + zoneMs()).toISOString().slice(0, 16).replace("T", " ") + " UTC" + (hours >= 0 ? "+" : "") + hours;
}
// One widget frame with its limit warnings. `look` (matrix only): appearance, text size, direction.
function buildFrame([name, width, height, kind, platform, family], content, look) {
  const frame = document.createElement("figure");
  frame.className = "frame";
  const widget = document.createElement("div");
  widget.className = "widget " + kind;
  widget.style.width = width + "px";
  widget.style.height = height + "px";
  widget.setAttribute("role", "img");
  // The inline family draws text only: its image warnings do not apply.
  const notes = frameWarnings(platform, content.imageName).filter((w) => kind !== "inline" || !w.asset);
  widget.dataset.warnings = notes.map((w) => w.code).join(" ");
  if (notes.some((w) => w.code === "ios-image-area")) widget.classList.add("placeholder");
  const variant = look ? ` (${look.appearance}, ${look.textSize} text, ${look.direction})` : "";
  widget.setAttribute("aria-label", `${name}${variant} widget showing ${content.title || "no title"}` + (notes.length ? `, ${notes.length} warning(s)` : ""));
  if (content.asset && kind !== "inline") { const img = document.createElement("img"); setImage(img, content.asset.url); img.alt = ""; widget.append(img); }
  const caption = document.createElement("div");
  caption.className = "title";
  caption.textContent = content.title;
  widget.append(caption);
  const label = document.createElement("figcaption");
  label.textContent = look ? `${look.appearance} · ${look.textSize} text · ${look.direction.toUpperCase()}` : `${name} · ${width}×${height} pt`;
  const list = document.createElement("ul");
  list.className = "frame-warnings";
  list.append(...notes.map((w) => warningItem(w, shortText(w))));
  if (look) {
    widget.classList.add("mx", "app-" + look.appearance);
    widget.dir = look.direction;
    Object.assign(frame.dataset, { family, appearance: look.appearance, textSize: look.textSize, direction: look.direction, width, height });
    fitTitle(caption, family, platform, width, height, look, list);
  }
  frame.append(widget, label, list);
  return frame;
}
// The title's size at this text setting; lines that do not fit are cut with an ellipsis and a
// line too tall for the frame is shrunk, and the frame says so.
function fitTitle(caption, family, platform, width, height, look, notes) {
  const padding = { accessoryCircular: 6, accessoryRectangular: 6, accessoryInline: 3 }[family] ?? 10;
  let font = baseFont[family] * (look.textSize === "largest" ? largestScale[platform] : 1);
  const room = height - 2 * padding, across = width - 2 * (padding + 2);
  // A line must be at most the frame's height and hold a couple of letters and the ellipsis.
  const shrunk = Math.min(font, room / 1.25, across / 2.4);
  if (shrunk < font) {
    notes.append(warningItem({ code: "text-shrunk" }, `a line of ${font.toFixed(0)} pt text does not fit the frame; drawn at ${shrunk.toFixed(0)} pt`));
    font = shrunk;
  }
  const lines = Math.max(1, Math.floor(room / (font * 1.25)));
  // The inset is a transparent border, not padding: overflow is clipped at the padding edge, so
  // padding would let the first cut line show through.
  Object.assign(caption.style, { fontSize: font + "px", padding: "0", border: "solid transparent", backgroundOrigin: "border-box", borderWidth: `${padding}px ${padding + 2}px`, webkitLineClamp: String(lines) });
  caption.dataset.lines = String(lines);
}
// After layout: a title with more lines than fit gets a note on its frame.
function noteCutText() {
  for (const frame of $("matrix").querySelectorAll(".frame")) {
    const caption = frame.querySelector(".title");
    if (caption.scrollHeight <= caption.clientHeight + 1) continue;
    frame.dataset.cut = "true";
    frame.querySelector(".frame-warnings").append(warningItem({ code: "text-cut" }, `text cut after ${caption.dataset.lines} line(s)`));
  }
}
function renderMatrix(content) {
  const device = devices.find((d) => d[0] === $("device").value) || devices[0];
  $("device-note").textContent = device[2] === "android" ? "dp; a launcher gives a range, drawn at both ends" : device[2] === "ipados" ? "points; iPadOS lays widgets out at these canvas sizes and scales them on the Home Screen" : "points";
  $("matrix").replaceChildren(...deviceFamilies(device).map((spec) => {
    const block = document.createElement("div");
    block.className = "mx-family";
    const heading = document.createElement("h3");
    heading.textContent = `${spec[0]} · ${spec[1]}×${spec[2]} ${device[2] === "android" ? "dp" : "pt"}`;
    const row = document.createElement("div");
    row.className = "mx-row";
    for (const appearance of appearances) for (const textSize of textSizes) for (const direction of directions)
      row.append(buildFrame(spec, content, { appearance, textSize, direction }));
    block.append(heading, row);
    return block;
  }));
  noteCutText();
}

function renderFrames() {
  const content = shownContent();
  const shown = content.entry ? content.entry.startEpochMs : at ?? Date.now();
  $("hour-label").textContent = zoneLabel(shown) + (content.entry ? " · item " + content.entry.index : "");
  $("at-link").href = location.pathname + location.search;
  $("frames").replaceChildren(...frames.map(([name, width, height, kind]) =>
    buildFrame([name, width, height, kind, name.startsWith("iOS") ? "ios" : "android"], content)));
  renderMatrix(content);
}

async function render() {
  $("gen-id").textContent = feed.generationId;
  $("gen-time").textContent = new Date(feed.generatedAtEpochMs).toLocaleString();
  $("gen-schema").textContent = feed.schemaVersion;
  $("gen-fingerprint").textContent = feed.fingerprint;
  $("updated").textContent = "updated " + new Date().toLocaleTimeString();
  const banner = $("fallback");
  if (fallback) {
    banner.textContent = "Fallback: the current generation could not be used, so readers get " + feed.generationId + ". Skipped: " + fallback;
    banner.classList.add("visible");
  } else { banner.textContent = ""; banner.classList.remove("visible"); }
  await loadWarnings();
  const assets = feed.assets || [];
  const decoded = assets.reduce((sum, a) => sum + (a.width && a.height ? a.width * a.height * 4 : 0), 0);
  $("decoded-total").textContent = `${assets.length} asset(s), ${bytes(assets.reduce((s, a) => s + a.bytes, 0))} on disk, ${bytes(decoded)} decoded of the ~30 MB iOS widget ceiling`;
  $("decoded-meter").value = decoded;
  $("gallery").replaceChildren(...assets.map((a) => {
    const figure = document.createElement("figure");
    const img = document.createElement("img"); setImage(img, a.url); img.alt = a.name; img.loading = "lazy";
    const caption = document.createElement("figcaption");
    caption.textContent = `${a.name} · ${a.width && a.height ? a.width + "×" + a.height + " · " + bytes(a.width * a.height * 4) + " decoded · " : ""}${bytes(a.bytes)}`;
    figure.append(img, caption);
    const own = warnings.filter((w) => w.asset === a.name && (w.code === "ios-image-area" || w.code === "asset-unreferenced"));
    if (own.length) {
      figure.classList.add("warn");
      figure.dataset.warnings = own.map((w) => w.code).join(" ");
      const note = document.createElement("p");
      note.className = "asset-warnings";
      note.textContent = own.map((w) => w.code === "ios-image-area" ? `ios-image-area: ${w.actual.toLocaleString("en")} px > ${w.limit.toLocaleString("en")}` : w.code).join(" · ");
      note.title = own.map((w) => w.detail).join("\n");
      figure.append(note);
    }
    return figure;
  }));
  $("payload").replaceChildren(renderTree(feed.payload));
  const arrays = itemArrays(feed.payload);
  fillSelect($("items-field"), arrays, $("items-field").value || params.get("items") || arrays[0] || "");
  const items = resolve(feed.payload, $("items-field").value) || [];
  const fields = chooseFields(Array.isArray(items) ? items.filter((i) => i && typeof i === "object") : []);
  fillSelect($("title-field"), fields.keys, $("title-field").dataset.chosen || params.get("title") || fields.title);
  fillSelect($("image-field"), fields.keys, $("image-field").dataset.chosen || params.get("image") || fields.image);
  await loadTimeline($("items-field").value);
  renderFrames();
  loadHistory();
}

async function loadHistory() {
  const response = await api(`/feeds/${encodeURIComponent(group)}/generations`, { cache: "no-store" });
  if (!response.ok) { historyText = ""; return; }
  historyText = await response.text();
  const list = JSON.parse(historyText);
  const row = (cells, fault) => {
    const tr = document.createElement("tr");
    for (const [text, cls] of cells) { const td = document.createElement("td"); td.textContent = text; if (cls) td.className = cls; tr.append(td); }
    const td = document.createElement("td");
    td.className = "fault";
    if (fault) {
      const kind = document.createElement("b");
      kind.textContent = fault.kind;
      td.append(kind, "WidgetBridge's readers: " + fault.widgetBridge + ". This server: " + fault.server + ".");
      tr.dataset.fault = fault.kind;
    }
    tr.append(td);
    return tr;
  };
  // A broken pointer has no generation row of its own: it gets one as current.json.
  const pointerFaults = (list.faults || []).filter((f) => !f.generationId);
  $("history").replaceChildren(
    ...pointerFaults.map((f) => row([["current.json", "id"], ["corrupt", "state-corrupt"], ["not a usable pointer", ""]], f)),
    ...list.generations.map((g) => row([[g.id, "id"], [g.state, "state-" + g.state], [g.reason || "", ""]], g.fault)));
}

async function refresh() {
  const response = await api(`/feeds/${encodeURIComponent(group)}`, { cache: "no-store" });
  if (response.status === 404) { $("fallback").textContent = "No readable generation yet: publish one with PUT /feeds/" + group + "."; $("fallback").classList.add("visible"); loadHistory(); return; }
  if (!response.ok) return;
  etag = response.headers.get("ETag");
  fallback = response.headers.get("X-Feed-Fallback");
  feed = await response.json();
  await render();
}

// Live: Server-Sent Events; if they are not available, long-poll with If-None-Match.
function follow() {
  if (!window.EventSource) return longPoll();
  const token = sessionStorage.getItem(tokenKey);
  const events = new EventSource(`/feeds/${encodeURIComponent(group)}/events` + (token ? "?access_token=" + encodeURIComponent(token) : ""));
  events.onopen = () => { $("connection").innerHTML = '<span class="live">live</span> (events)'; };
  events.addEventListener("generation", () => refresh());
  // The feed was deleted, or nothing is readable: refresh() shows that.
  events.addEventListener("gone", () => refresh());
  // EventSource gives up for good on a 401 (a token changed or revoked): start again once the
  // feed can be read, asking for the token if need be.
  events.onerror = () => {
    $("connection").textContent = "reconnecting…";
    if (events.readyState === EventSource.CLOSED) setTimeout(() => refresh().then(follow), 2000);
  };
}
async function longPoll() {
  $("connection").innerHTML = '<span class="live">live</span> (long-poll)';
  for (;;) {
    try {
      const response = await api(`/feeds/${encodeURIComponent(group)}?wait=55`, { headers: etag ? { "If-None-Match": etag } : {}, cache: "no-store" });
      if (response.status === 200) { etag = response.headers.get("ETag"); fallback = response.headers.get("X-Feed-Fallback"); feed = await response.json(); await render(); }
      else if (response.status !== 304) await new Promise((r) => setTimeout(r, 2000));
    } catch { await new Promise((r) => setTimeout(r, 2000)); }
  }
}

for (const id of ["items-field", "title-field", "image-field"]) $(id).addEventListener("change", async (e) => { e.target.dataset.chosen = e.target.value; keepInURL(); if (feed) await render(); });
$("hour").addEventListener("input", () => {
  at = dayStart(at ?? Date.now()) + Number($("hour").value) * HOUR;
  keepInURL();
  if (feed) renderFrames();
});
$("device").replaceChildren(...devices.map(([id, name]) => { const option = document.createElement("option"); option.value = id; option.textContent = name; return option; }));
$("device").value = devices.some((d) => d[0] === params.get("device")) ? params.get("device") : devices[0][0];
$("device").addEventListener("change", () => { keepInURL(); if (feed) renderFrames(); });
$("zone").value = params.get("zone") || "0";
$("zone").addEventListener("change", async () => { keepInURL(); if (feed) { await loadTimeline($("items-field").value); renderFrames(); } });
// A fault that leaves the served generation as it was (a broken new current that readers skip)
// sends no event, so the listing is also re-read every 2 s; any change re-reads the feed.
async function watchHistory() {
  try {
    const response = await api(`/feeds/${encodeURIComponent(group)}/generations`, { cache: "no-store" });
    const text = response.ok ? await response.text() : "";
    if (text !== historyText) await refresh();
  } catch { /* the server may be restarting */ }
  setTimeout(watchHistory, 2000);
}
refresh().then(follow).then(() => setTimeout(watchHistory, 2000));
