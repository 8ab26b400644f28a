// The widget-preview page's script (GET /preview.js): a file of its own, since the page's
// Content-Security-Policy runs no inline script. Sizes are set through the CSSOM
// (element.style), which that policy allows, never through style attributes, which it refuses.
"use strict";
const group = decodeURIComponent(location.pathname.split("/").pop());
const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);
const feedPath = `/feeds/${encodeURIComponent(group)}`;
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
const kinds = { accessoryCircular: "circular", accessoryRectangular: "rect", accessoryInline: "inline" };
// Title font in points at the default text size, and how the largest accessibility size scales
// it: iOS AX5 body is 53 pt against 17 pt at the default Large (× 3.12); Android's largest font
// scale is 200 % (× 2). Text that does not fit is cut (line clamp) or, when not even one line
// fits, shrunk; both are noted on the frame.
const baseFont = { systemSmall: 14, systemMedium: 14, systemLarge: 15, systemExtraLarge: 15, accessoryCircular: 11, accessoryRectangular: 12, accessoryInline: 13, android: 14 };
const largestScale = { ios: 53 / 17, ipados: 53 / 17, android: 2 };
const appearances = ["light", "dark", "tinted"], textSizes = ["default", "largest"], directions = ["ltr", "rtl"];
const platformNames = { ios: "iOS", ipados: "iPadOS", android: "Android" };
// A device's widget families as frames draw them. `group` is what the matrix filter names: the
// family on iOS and iPadOS, the cell size on Android (both ends of its range).
function deviceFamilies([, , platform, sizes]) {
  const unit = platform === "android" ? "dp" : "pt", prefix = platformNames[platform];
  const spec = (name, width, height, family, group) => ({ name, width, height, family, group, platform, unit, prefix, kind: platform === "android" ? "android" : kinds[family] || "" });
  if (platform === "android") return sizes.flatMap(([cells, minW, maxW, minH, maxH]) => [
    spec(`${cells} portrait (min width × max height)`, minW, maxH, "android", cells),
    spec(`${cells} landscape (max width × min height)`, maxW, minH, "android", cells)]);
  const names = platform === "ios" ? iosFamilies : ipadFamilies;
  return sizes.map(([w, h], i) => spec(names[i], w, h, names[i], names[i]));
}
const currentDevice = () => devices.find((d) => d[0] === $("device").value) || devices[0];
// The profile's members the page edits, each an input named after it.
const members = ["items", "title", "subtitle", "image", "empty"];
const field = (member) => $(member === "zone" ? "zone" : member + "-field");
// Marks the input of the member a refusal names (none: every mark cleared).
function markInvalid(member) {
  for (const m of [...members, "zone"]) if (m === member) field(m).setAttribute("aria-invalid", "true"); else field(m).removeAttribute("aria-invalid");
}
let feed = null, fallback = null, etag = null, warnings = [], historyText = "";
// stored: the group's profile (null without one); timeline: the server's resolved answer;
// chosen: members the user set (in the address too); guessed: a title this page guessed.
let stored = null, timeline = null, timelineProblem = "", chosen = {}, guessed = {};
// The matrix's family filter as the user chose it (the device's list of families may change).
let familyWanted = params.get("family") || "";
for (const member of members) if (params.has(member)) chosen[member] = params.get(member);
const HOUR = 3600000, DAY = 86400000;
// The instant shown, from ?at=<epochMs> (a link reproduces the view); null follows the clock.
let at = /^\d{1,15}$/.test(params.get("at") || "") ? Number(params.get("at")) : null;
$("group-name").textContent = group;
document.title = "Widget preview: " + group;

function setTheme(theme) { document.documentElement.dataset.theme = theme; $("theme").value = theme; localStorage.setItem("feed-preview-theme", theme); }
setTheme(localStorage.getItem("feed-preview-theme") || (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light"));

// Tokens: asked when the server answers 401, then kept for this tab only (sessionStorage: gone
// when the tab closes, never sent to another origin). The read token goes with every read; fetch
// sends it as a header, EventSource cannot, so the event stream gets it as ?access_token= (the
// only place the server takes it from a URL). The write token goes only with the profile's PUT.
const tokenKey = "feed-server-read-token", writeTokenKey = "feed-server-write-token";
const asked = {};
function askForToken(kind, refused) {
  const [form, input, message] = kind === "write" ? ["write-token-form", "write-token-input", "write-token-message"] : ["token-form", "token-input", "token-message"];
  asked[kind] ??= new Promise((resolve) => {
    const name = kind === "write" ? "write token" : "read token";
    $(message).textContent = refused ? `The server refused that token: enter the ${name} again.` : kind === "write" ? "Saving a profile needs this server's write token." : "This server needs a read token.";
    $(form).hidden = false;
    $(input).focus();
    const done = (value) => { $(input).value = ""; $(form).hidden = true; asked[kind] = null; resolve(value); };
    $(form).onsubmit = (event) => { event.preventDefault(); sessionStorage.setItem(kind === "write" ? writeTokenKey : tokenKey, $(input).value.trim()); done(true); };
    if (kind === "write") $("write-token-cancel").onclick = () => done(false);
  });
  return asked[kind];
}
async function api(url, options = {}) {
  for (;;) {
    const token = sessionStorage.getItem(tokenKey);
    const response = await fetch(url, { ...options, headers: { ...(options.headers || {}), ...(token ? { Authorization: "Bearer " + token } : {}) } });
    if (response.status !== 401) return response;
    drop(response);
    await askForToken("read", Boolean(token));
  }
}
// An answer whose body is not wanted: its body is cancelled, never left unread, since an unread
// body can keep its connection busy (a browser has six per server, and the event stream holds one).
function drop(response) { response.body?.cancel().catch(() => {}); return null; }
// A problem+json answer's detail, or its status line.
async function problemText(response) {
  try { const body = await response.json(); return body.detail || body.title || String(response.status); } catch { return `${response.status} ${response.statusText}`; }
}
// An <img> cannot send a header either: with a token, images come through fetch as blobs
// (asset URLs name one generation's file, so each is fetched once).
const blobs = new Map();
function setImage(img, url) {
  if (!sessionStorage.getItem(tokenKey)) { img.src = url; return; }
  if (!blobs.has(url)) blobs.set(url, api(url).then((r) => r.ok ? r.blob() : drop(r)).then((b) => b && URL.createObjectURL(b)));
  blobs.get(url).then((src) => { if (src) img.src = src; });
}
function bytes(n) { return n < 1024 ? n + " B" : n < 1048576 ? (n / 1024).toFixed(1) + " KiB" : (n / 1048576).toFixed(2) + " MiB"; }
function element(tag, className, text) { const el = document.createElement(tag); if (className) el.className = className; if (text !== undefined) el.textContent = text; return el; }

// JSON Pointers (RFC 6901) into the payload, for the fields' suggestions and the page's guess.
const escapeToken = (k) => k.replace(/~/g, "~0").replace(/\//g, "~1");
function itemArrays(value, pointer = "", found = []) {
  if (Array.isArray(value)) { if (value.every((v) => v && typeof v === "object" && !Array.isArray(v))) found.push(pointer); value.forEach((v, i) => itemArrays(v, pointer + "/" + i, found)); }
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) itemArrays(v, pointer + "/" + escapeToken(k), found);
  return found;
}
function textPointers(value, pointer = "", found = [], depth = 0) {
  if (typeof value === "string") found.push(pointer);
  else if (value && typeof value === "object" && !Array.isArray(value) && depth < 3) for (const [k, v] of Object.entries(value)) textPointers(v, pointer + "/" + escapeToken(k), found, depth + 1);
  return found;
}
function resolve(value, pointer) {
  if (!pointer) return value;
  for (const token of pointer.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"))) { if (value == null) return undefined; value = value[token]; }
  return value;
}
const currentItems = () => { const items = resolve(feed.payload, field("items").value); return Array.isArray(items) ? items.filter((i) => i && typeof i === "object") : []; };
function fillList(id, values) { $(id).replaceChildren(...[...new Set(values)].map((v) => { const option = document.createElement("option"); option.value = v; return option; })); }
// Suggestions: the arrays of objects for items; the items' members for title and subtitle;
// for the image, members and `{member}.ext` templates, those naming a stored asset first.
function suggest() {
  fillList("items-options", itemArrays(feed.payload));
  const items = currentItems(), keys = [...new Set(items.flatMap((item) => Object.keys(item)))];
  fillList("text-options", keys.filter((k) => items.some((i) => typeof i[k] === "string" || typeof i[k] === "number")).map((k) => "/" + escapeToken(k)));
  fillList("empty-options", textPointers(feed.payload));
  const names = new Set((feed.assets || []).map((a) => a.name)), suffixes = [...new Set([...names].map((n) => n.slice(n.lastIndexOf(".")).toLowerCase()).filter((s) => s.startsWith(".")))];
  const rules = keys.flatMap((k) => ["/" + escapeToken(k), ...suffixes.map((s) => `{${k}}${s}`)]);
  const hits = (rule) => items.filter((i) => names.has(rule.startsWith("/") ? String(resolve(i, rule)) : rule.replace(/\{([^}]*)\}/g, (_, k) => i[k]))).length;
  fillList("image-options", rules.map((r) => [r, hits(r)]).sort((a, b) => b[1] - a[1]).map(([r]) => r));
}
// With no profile the server guesses the items and the image; the title is the page's guess: a
// member every item has as a string, one named like a title first.
function guessTitle() {
  const items = currentItems(), keys = [...new Set(items.flatMap((item) => Object.keys(item)))];
  const text = keys.filter((k) => items.every((item) => typeof item[k] === "string"));
  const key = text.find((k) => /title|text|name|word|quote|label/i.test(k)) || text[0];
  return key ? "/" + escapeToken(key) : null;
}
function keepInURL() {
  const p = new URLSearchParams();
  for (const member of members) if (member in chosen) p.set(member, chosen[member]);
  if (params.has("zone")) p.set("zone", params.get("zone"));
  if (at !== null) p.set("at", String(at));
  if ($("device").value !== devices[0][0]) p.set("device", $("device").value);
  for (const [name, id] of filterControls) if ($(id).value) p.set(name, $(id).value);
  history.replaceState(null, "", location.pathname + (p.toString() ? "?" + p : ""));
}

// The zone: the address's, else the profile's, else UTC. Its offset at an instant, from the
// browser's own zone data, places the scrubber's day; the server's entries say the true offset.
const zoneName = () => $("zone").value.trim() || stored?.zone || "UTC";
function offsetMs(zone, ms) {
  const fixed = /^([+-])(\d\d):(\d\d)(?::(\d\d))?$/.exec(zone);
  const parts = fixed || (() => { try { return /GMT([+-])(\d\d):(\d\d)/.exec(new Intl.DateTimeFormat("en", { timeZone: zone, timeZoneName: "longOffset" }).format(ms)); } catch { return null; } })();
  return parts ? (parts[1] === "-" ? -1 : 1) * ((Number(parts[2]) * 60 + Number(parts[3])) * 60 + Number(parts[4] || 0)) * 1000 : 0;
}
function dayStart(ms) { const zone = zoneName(), local = ms + offsetMs(zone, ms), midnight = local - (((local % DAY) + DAY) % DAY); return midnight - offsetMs(zone, midnight - offsetMs(zone, ms)); }
// Members sent as overrides: those the user set that differ from the stored profile, the zone
// when it is not the profile's (UTC without one), and the page's title guess; with none the
// server applies the stored profile or infers one.
function overrides() {
  const sent = { ...guessed };
  for (const [member, value] of Object.entries(chosen)) if (value !== (stored?.[member] ?? "")) sent[member] = value;
  if (zoneName() !== (stored?.zone || "UTC")) sent.zone = zoneName();
  return sent;
}
async function loadProfile() {
  const response = await api(feedPath + "/profile", { cache: "no-store" });
  stored = response.ok ? await response.json() : drop(response);
  if (!params.has("zone")) $("zone").value = stored?.zone || "UTC";
}
async function loadTimeline() {
  const shown = at ?? Date.now(), start = dayStart(shown);
  const query = new URLSearchParams({ hours: "24", start: String(start), ...overrides() });
  const response = await api(`${feedPath}/timeline?${query}`, { cache: "no-store" });
  const body = await response.json().catch(() => null);
  timeline = response.ok ? body : null;
  timelineProblem = response.ok ? "" : body?.detail || body?.title || `${response.status} ${response.statusText}`;
  // A refused override is a 422 whose `member` names it: its field is marked.
  markInvalid(response.ok ? undefined : body?.member);
  $("hour").value = String(Math.max(0, Math.min(23, Math.floor((shown - start) / HOUR))));
  if (!timeline) return;
  for (const member of members) if (!(member in chosen)) field(member).value = timeline.profile?.[member] ?? "";
  // Asked again once with the page's title guess when nothing names a title.
  if (!stored && !timeline.profile?.title && !chosen.title && !guessed.title) {
    const title = guessTitle();
    if (title) { guessed = { title }; return loadTimeline(); }
  }
}
// Where the fields come from: the stored profile, the server's inference, this page's guess, or
// changes made here and not saved yet.
function showProfileState() {
  const changed = Object.keys(overrides()).filter((m) => !(m in guessed)), inferred = timeline?.profile?.inferred || [];
  const parts = [stored ? "Stored profile." : "No stored profile."];
  if (inferred.length) parts.push(`The server inferred ${inferred.join(", ")}.`);
  if (Object.keys(guessed).length) parts.push(`This page guessed ${Object.keys(guessed).join(", ")}.`);
  if (changed.length) parts.push(`Changed here, not saved: ${changed.join(", ")}.`);
  if (timelineProblem) parts.push("The timeline was refused: " + timelineProblem);
  $("profile-status").textContent = parts.join(" ");
}

// Lint warnings on a frame: iOS frames get the iOS limits (and the placeholder WidgetKit shows
// when their image is over its area), Android frames the bitmap budget.
function frameWarnings(platform, imageName) {
  const ios = platform !== "android";
  return warnings.filter((w) => (ios && (w.code === "ios-extension-memory" || (w.code === "ios-image-area" && w.asset === imageName))) || (!ios && w.code === "android-bitmap-memory"));
}
function shortText(w) {
  switch (w.code) {
    case "ios-image-area": return `WidgetKit shows the placeholder: ${w.asset} has ${w.actual.toLocaleString("en")} px, over ${w.limit.toLocaleString("en")}`;
    case "ios-extension-memory": return `extension killed: images need ${bytes(w.actual)} decoded, over ${bytes(w.limit)}`;
    case "android-bitmap-memory": return `update rejected: bitmaps need ${bytes(w.actual)}, over ${bytes(w.limit)}`;
    case "item-image-missing": return `no file ${w.asset} in this generation: the widget gets no image`;
    default: return w.detail;
  }
}
function warningItem(w, text) {
  const item = element("li");
  item.dataset.code = w.code;
  item.append(element("code", "", w.code), " " + text);
  return item;
}
async function loadWarnings() {
  warnings = [];
  const response = await api(feedPath + "/warnings", { cache: "no-store" });
  if (!response.ok) return drop(response);
  const body = await response.json();
  // A publish may land between the two reads; its own event brings the matching warnings.
  if (body.generationId === feed.generationId) warnings = body.warnings;
  $("warnings").replaceChildren(...warnings.map((w) => warningItem(w, w.detail)));
  $("warnings-summary").textContent = `${warnings.length} warning(s) of the served generation`;
  // A long list starts folded, so the frames stay in view; it stays as the user left it until
  // another generation comes.
  if ($("warnings-box").dataset.generation !== feed.generationId) $("warnings-box").open = warnings.length <= 4;
  $("warnings-box").dataset.generation = feed.generationId;
}

// What the frames show at the chosen hour, from the server's entry: the item's title, subtitle
// and image, the missing image's name, or the empty state when there are no items.
function shownContent() {
  const entry = timeline?.entries?.[Number($("hour").value)];
  if (!entry) return { entry, mark: timelineProblem ? "no timeline: " + timelineProblem : "no timeline" };
  if (entry.index == null) return timeline.empty?.text ? { entry, title: timeline.empty.text, empty: true } : { entry, empty: true, mark: "no empty state: the profile names none" };
  const content = { entry, title: entry.title || "", subtitle: entry.subtitle || "", image: entry.image, warning: entry.warning, mark: "" };
  if (entry.warning && !entry.image) content.mark = entry.warning.asset ? "image missing: " + entry.warning.asset : entry.warning.detail;
  // A URL is the app's to fetch, never an asset, and this page loads nothing from elsewhere.
  if (entry.image && !entry.image.name) Object.assign(content, { image: null, mark: "image from a URL the app fetches: " + entry.image.url });
  return content;
}
// The entry's local time with its own offset (the one the widget counts hours in), and the zone:
// a named zone with that offset, an offset zone by its offset alone.
function zoneLabel(entry) {
  if (!entry) return "";
  const magnitude = Math.abs(entry.zoneOffsetSeconds), name = timeline.zone || zoneName(), two = (n) => String(n).padStart(2, "0");
  const utc = `UTC${entry.zoneOffsetSeconds < 0 ? "−" : "+"}${two(Math.floor(magnitude / 3600))}:${two(Math.floor(magnitude % 3600 / 60))}${magnitude % 60 ? ":" + two(magnitude % 60) : ""}`;
  const local = new Date(entry.startEpochMs + entry.zoneOffsetSeconds * 1000).toISOString().slice(0, 16).replace("T", " ");
  return `${local} ${/^[+-]\d\d:\d\d(:\d\d)?$/.test(name) ? utc : `${name} (${utc})`}` + (entry.index == null ? " · no items" : ` · item ${entry.index}`);
}
// One widget frame: its text, image or marks, and its notes. `look`: appearance, text size,
// direction; `top` marks the top row, whose label gives the platform and size.
function buildFrame(spec, content, look, top) {
  const frame = element("figure", "frame"), widget = element("div", `widget ${spec.kind} app-${look.appearance}`);
  Object.assign(widget.style, { width: spec.width + "px", height: spec.height + "px" });
  widget.dir = look.direction;
  // The inline family draws text only: its image warnings do not apply.
  const drawsImage = spec.kind !== "inline";
  const notes = drawsImage ? frameWarnings(spec.platform, content.image?.name ?? content.warning?.asset) : [];
  widget.dataset.warnings = notes.map((w) => w.code).join(" ");
  if (notes.some((w) => w.code === "ios-image-area")) widget.classList.add("placeholder");
  if (content.image && drawsImage) { const img = element("img"); setImage(img, content.image.url); img.alt = ""; widget.append(img); }
  if (content.mark && (drawsImage || !content.title)) widget.append(element("div", "mark", content.mark));
  const caption = frameText(content);
  widget.append(caption);
  widget.setAttribute("role", "img");
  widget.setAttribute("aria-label", describe(spec, content, top ? "" : ` (${look.appearance}, ${look.textSize} text, ${look.direction})`, notes));
  const list = element("ul", "frame-warnings");
  list.append(...notes.map((w) => warningItem(w, shortText(w))));
  if (content.warning) list.append(warningItem(content.warning, shortText(content.warning)));
  Object.assign(frame.dataset, { family: spec.family, group: spec.group, appearance: look.appearance, textSize: look.textSize, direction: look.direction, width: spec.width, height: spec.height });
  fitText(caption, spec, look, list);
  frame.append(widget, frameLabel(spec, look, top), list);
  return frame;
}
// Title and subtitle, each in the direction of its own first strong letter, as both platforms
// lay out a text whatever the layout's direction.
function frameText(content) {
  const caption = element("div", "caption");
  for (const [className, text] of [["title", content.title ?? ""], ["subtitle", content.subtitle]]) {
    if (className === "subtitle" && !text) continue;
    const line = element("div", className, text);
    line.dir = "auto";
    caption.append(line);
  }
  return caption;
}
function describe(spec, content, variant, notes) {
  const shown = [content.title || "no title", content.subtitle, content.mark].filter(Boolean).join(", ");
  return `${spec.prefix} ${spec.name}${variant} widget showing ${shown}` + (notes.length ? `, ${notes.length} warning(s)` : "");
}
// Sizes stay whole: the number and its unit never wrap apart.
function frameLabel(spec, look, top) {
  const label = element("figcaption", "", top ? `${spec.prefix} ${spec.name} · ` : `${look.appearance} · ${look.textSize} text · ${look.direction.toUpperCase()}`);
  if (top) label.append(element("span", "nowrap", `${spec.width}×${spec.height} ${spec.unit}`));
  return label;
}
// The text's size at this text setting; lines that do not fit are cut at the text's logical end
// (an ellipsis, as both platforms do) and a line too tall for the frame is shrunk; the frame
// says so. A subtitle gets one line below the title when two fit, else it has no room.
function fitText(caption, spec, look, notes) {
  const padding = { accessoryCircular: 6, accessoryRectangular: 6, accessoryInline: 3 }[spec.family] ?? 10;
  let font = baseFont[spec.family] * (look.textSize === "largest" ? largestScale[spec.platform] : 1);
  const room = spec.height - 2 * padding, across = spec.width - 2 * (padding + 2);
  // A line must be at most the frame's height and hold a couple of letters and the ellipsis.
  const shrunk = Math.min(font, room / 1.25, across / 2.4);
  if (shrunk < font) {
    notes.append(warningItem({ code: "text-shrunk" }, `a line of ${font.toFixed(0)} pt text does not fit the frame; drawn at ${shrunk.toFixed(0)} pt`));
    font = shrunk;
  }
  let lines = Math.max(1, Math.floor(room / (font * 1.25)));
  const [title, subtitle] = caption.children;
  if (subtitle && lines >= 2) { lines -= 1; clamp(subtitle, 1, font * 0.85); }
  else if (subtitle) { subtitle.remove(); notes.append(warningItem({ code: "text-cut" }, "no room for the subtitle")); }
  Object.assign(caption.style, { fontSize: font + "px", padding: `${padding}px ${padding + 2}px` });
  clamp(title, lines, font);
}
function clamp(text, lines, font) {
  Object.assign(text.style, { fontSize: font + "px", webkitLineClamp: String(lines), maxHeight: lines * font * 1.25 + "px" });
  text.dataset.lines = String(lines);
}
// After layout: a text with more lines than fit is cut at its logical end and its frame gets a
// note. The cut is made here, not left to the line clamp: the clamp's ellipsis goes at the visual
// end of the last line, which in right-to-left text holding a number is the number's start
// ("…٣٬٤٥٦" for ١٢٣٬٤٥٦), where both platforms keep the logical start ("١٢٣…").
function noteCutText(container) {
  for (const frame of container.querySelectorAll(".frame")) for (const text of frame.querySelectorAll(".title, .subtitle")) {
    if (!overflows(text)) continue;
    frame.dataset.cut = "true";
    cutAtLogicalEnd(text);
    frame.querySelector(".frame-warnings").append(warningItem({ code: "text-cut" }, `${text.className} cut after ${text.dataset.lines} line(s)`));
  }
}
const overflows = (text) => text.scrollHeight > text.clientHeight + 1;
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
// The longest run of whole letters from the text's start that fits with an ellipsis after it
// (a binary search over grapheme ends: each try is one layout of this text). The full text stays
// in data-full.
function cutAtLogicalEnd(text) {
  const full = text.textContent, ends = [0, ...[...graphemes.segment(full)].map((g) => g.index + g.segment.length)];
  text.dataset.full = full;
  // The whole text's direction, kept: a cut that leaves only digits would otherwise be laid out
  // left to right (dir="auto" finds no strong letter in it), where a device keeps the paragraph's.
  text.dir = getComputedStyle(text).direction;
  const show = (count) => { text.textContent = full.slice(0, ends[count]).trimEnd() + "…"; return !overflows(text); };
  let low = 0, high = ends.length - 2;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (show(middle)) low = middle; else high = middle - 1;
  }
  show(low);
}

// The matrix filters: family (cell size on Android), appearance and text size; all by default.
const filterControls = [["family", "filter-family"], ["appearance", "filter-appearance"], ["text", "filter-text"]];
function fillFilter(id, values, label, wanted) {
  $(id).replaceChildren(...[["", label], ...values.map((v) => [v, v])].map(([value, text]) => { const o = element("option", "", text); o.value = value; return o; }));
  $(id).value = values.includes(wanted) ? wanted : "";
}
function renderMatrix(content) {
  const device = currentDevice(), specs = deviceFamilies(device);
  fillFilter("filter-family", [...new Set(specs.map((s) => s.group))], device[2] === "android" ? "All cell sizes" : "All families", familyWanted);
  const [family, appearance, text] = filterControls.map(([, id]) => $(id).value);
  const blocks = specs.filter((s) => !family || s.group === family).map((spec) => {
    const block = element("div", "mx-family"), heading = element("h3", "", `${spec.name} · `), row = element("div", "mx-row");
    heading.append(element("span", "nowrap", `${spec.width}×${spec.height} ${spec.unit}`));
    for (const a of appearances) for (const t of textSizes) for (const d of directions)
      if ((!appearance || a === appearance) && (!text || t === text)) row.append(buildFrame(spec, content, { appearance: a, textSize: t, direction: d }));
    block.append(heading, row);
    return block;
  });
  $("matrix").replaceChildren(...blocks);
  $("matrix-count").textContent = `${$("matrix").querySelectorAll(".frame").length} frames`;
  noteCutText($("matrix"));
}
// The top row: every family of the chosen device at the default text size, in the page's theme.
function renderFrames() {
  const content = shownContent(), device = currentDevice();
  $("device-note").textContent = device[2] === "android" ? "dp; a launcher gives a range, drawn at both ends" : device[2] === "ipados" ? "points; iPadOS lays widgets out at these canvas sizes and scales them on the Home Screen" : "points";
  $("hour-label").textContent = zoneLabel(content.entry);
  $("at-link").href = location.pathname + location.search;
  const look = { appearance: document.documentElement.dataset.theme, textSize: "default", direction: "ltr" };
  $("frames").replaceChildren(...deviceFamilies(device).map((spec) => buildFrame(spec, content, look, true)));
  noteCutText($("frames"));
  renderMatrix(content);
  showProfileState();
}

function renderTree(value, key) {
  if (value && typeof value === "object") {
    const details = element("details"), summary = element("summary");
    details.open = true;
    if (key !== undefined) summary.append(element("span", "key", String(key)), ": ");
    summary.append(Array.isArray(value) ? "[" + value.length + "]" : "{" + Object.keys(value).length + "}");
    details.append(summary);
    for (const [k, v] of Object.entries(value)) details.append(renderTree(v, Array.isArray(value) ? Number(k) : k));
    return details;
  }
  return element("div", "leaf", (key !== undefined ? key + ": " : "") + JSON.stringify(value));
}
function assetFigure(a) {
  const figure = element("figure"), img = element("img");
  setImage(img, a.url); img.alt = a.name; img.loading = "lazy";
  const caption = element("figcaption", "", a.name + " · ");
  if (a.width && a.height) caption.append(element("span", "nowrap", `${a.width}×${a.height}`), " · ", element("span", "nowrap", bytes(a.width * a.height * 4)), " decoded · ");
  caption.append(element("span", "nowrap", bytes(a.bytes)));
  figure.append(img, caption);
  const own = warnings.filter((w) => w.asset === a.name && (w.code === "ios-image-area" || w.code === "asset-unreferenced"));
  if (own.length) {
    figure.classList.add("warn");
    figure.dataset.warnings = own.map((w) => w.code).join(" ");
    const note = element("p", "asset-warnings", own.map((w) => w.code === "ios-image-area" ? `ios-image-area: ${w.actual.toLocaleString("en")} px > ${w.limit.toLocaleString("en")}` : w.code).join(" · "));
    note.title = own.map((w) => w.detail).join("\n");
    figure.append(note);
  }
  return figure;
}
function renderGeneration() {
  $("gen-id").textContent = feed.generationId;
  $("gen-time").textContent = new Date(feed.generatedAtEpochMs).toLocaleString();
  $("gen-schema").textContent = feed.schemaVersion;
  $("gen-fingerprint").textContent = feed.fingerprint;
  $("updated").textContent = "updated " + new Date().toLocaleTimeString();
  const banner = $("fallback");
  banner.textContent = fallback ? "Fallback: the current generation could not be used, so readers get " + feed.generationId + ". Skipped: " + fallback : "";
  banner.classList.toggle("visible", Boolean(fallback));
  const assets = feed.assets || [];
  const decoded = assets.reduce((sum, a) => sum + (a.width && a.height ? a.width * a.height * 4 : 0), 0);
  $("decoded-total").textContent = `${assets.length} asset(s), ${bytes(assets.reduce((s, a) => s + a.bytes, 0))} on disk, ${bytes(decoded)} decoded of the ~30 MB iOS widget ceiling`;
  $("decoded-meter").value = decoded;
  $("gallery").replaceChildren(...assets.map(assetFigure));
  $("payload").replaceChildren(renderTree(feed.payload));
}
async function render() {
  await loadWarnings();
  renderGeneration();
  await loadProfile();
  await resolveFrames();
  loadHistory();
  loadReloads();
}
// Everything that depends on the profile's fields: the suggestions and the server's timeline.
async function resolveFrames() {
  await loadTimeline();
  suggest();
  renderFrames();
}

async function loadHistory() {
  const response = await api(feedPath + "/generations", { cache: "no-store" });
  if (!response.ok) { historyText = ""; return drop(response); }
  historyText = await response.text();
  const list = JSON.parse(historyText);
  const row = (cells, fault) => {
    const tr = element("tr");
    for (const [text, cls] of cells) tr.append(element("td", cls, text));
    const td = element("td", "fault");
    if (fault) {
      td.append(element("b", "", fault.kind), "WidgetBridge's readers: " + fault.widgetBridge + ". This server: " + fault.server + ".");
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

// The reload strip: the journal's publishes of the last 24 h against WidgetKit's modelled budget
// (GET /feeds/{group}/refreshes). Placed by the answer's own since and now, never the page's
// clock: the server's window moves on while the page is open. An older answer is dropped.
let reloadsAsked = 0;
const clock = (ms, seconds = true) => new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", ...(seconds ? { second: "2-digit" } : {}) });
const duration = (ms, min = Math.round(ms / 60000)) => ms < 60000 ? "under a minute" : min < 60 ? `${min} min` : `${Math.floor(min / 60)} h` + (min % 60 ? ` ${min % 60} min` : "");
async function loadReloads() {
  const asked = ++reloadsAsked, response = await api(feedPath + "/refreshes?hours=24", { cache: "no-store" });
  let body = null;
  try { body = await response.json(); } catch { /* not JSON */ }
  if (asked !== reloadsAsked) return;
  const ledger = response.ok ? body : null;
  for (const id of ["reloads-strip", "reloads-detail", "reloads-legend"]) $(id).hidden = !ledger;
  if (ledger) return renderReloads(ledger);
  $("reloads-summary").textContent = /journal-off$/.test(body?.type || "") ? "No reload history: this server runs with --journal off, so it keeps no record of publishes to replay."
    : "Reload history unavailable: " + (body?.detail || `${response.status} ${response.statusText}`);
}
function renderReloads(r) {
  const width = Math.max(1, r.now - r.since), x = (ms) => Math.min(100, Math.max(0, ((ms - r.since) / width) * 100));
  // Ticks closer than 1.2 % of the window (about 17 min) go to lanes of their own, up to five,
  // so a burst of publishes stays countable; a sixth shares the lane whose last tick is oldest.
  const lanes = [];
  const ticks = r.publishes.map((p) => {
    const at = x(p.at);
    let lane = lanes.findIndex((last) => at - last >= 1.2);
    if (lane < 0) lane = lanes.length < 5 ? lanes.length : lanes.indexOf(Math.min(...lanes));
    lanes[lane] = at;
    const label = `${clock(p.at)} · generation ${p.generationId ?? "unknown"} · iOS: ${p.ios === "over-budget" ? "over budget, reload dropped" : "reloaded"}` +
      (p.visible ? "" : " · changed nothing the widget shows") + " · Android: updated";
    const item = element("li"), tick = element("button", `tick ${p.ios}` + (p.visible ? "" : " invisible"));
    Object.assign(tick, { type: "button", title: label });
    tick.setAttribute("aria-label", label);
    Object.assign(tick.dataset, { ios: p.ios, visible: String(p.visible), generation: p.generationId ?? "" });
    tick.onclick = tick.onfocus = () => { $("reloads-detail").textContent = label; };
    Object.assign(item.style, { left: at + "%", top: 6 + lane * 18 + "px" });
    item.append(tick);
    return item;
  });
  const spans = r.staleSpans.map((s) => {
    const span = element("div", "stale"), stillStale = s.to >= r.now;
    const label = `Stale from ${clock(s.from)} to ${stillStale ? "now" : clock(s.to)} (${duration(s.to - s.from)}): iPhones showed ${s.showing ?? "no generation"}, not ${s.missed ?? "the newest"}`;
    span.title = label;
    for (const [name, value] of [["role", "img"], ["aria-label", label]]) span.setAttribute(name, value);
    // Anchored at its end, at least 4 px wide: a span of seconds in a day stays visible.
    Object.assign(span.style, { right: 100 - x(s.to) + "%", width: `max(${x(s.to) - x(s.from)}%, 4px)` });
    return span;
  });
  $("reloads-ticks").replaceChildren(...ticks);
  $("reloads-track").replaceChildren(...spans, $("reloads-ticks"));
  $("reloads-track").style.height = 10 + Math.max(1, lanes.length) * 18 + "px";
  // Hour labels at whole local hours, every 3 h across a day; the ends say how far back and now.
  const step = Math.max(1, Math.round(width / HOUR / 8)), labels = [[0, `${Math.round(width / HOUR)} h ago`, "start"]];
  for (let t = new Date(r.since).setMinutes(60, 0, 0); t < r.now; t += HOUR)
    if (new Date(t).getHours() % step === 0 && x(t) > 6 && x(t) < 92) labels.push([x(t), clock(t, false)]);
  labels.push([100, "now " + clock(r.now, false), "end"]);
  $("reloads-axis").replaceChildren(...labels.map(([at, text, edge]) => { const label = element("span", edge || "", text); label.style.left = at + "%"; return label; }));
  const over = r.publishes.filter((p) => p.ios === "over-budget").length, wasted = r.publishes.filter((p) => !p.visible).length;
  const stale = r.staleSpans.reduce((sum, s) => sum + s.to - s.from, 0), staleNow = r.staleSpans.some((s) => s.to >= r.now);
  $("reloads-summary").textContent = `${r.reloadsInWindow} of ${r.iosReloadBudget} reloads used in the last 24 h · ${over} over budget · ${wasted} changed nothing visible · ` +
    (stale ? `stale for ${duration(stale)}` + (staleNow ? " (stale now)" : "") : "never stale") + ` · ${r.publishes.length} publish(es)`;
}

// Save as profile: what the fields show now (the server's inference included) becomes the
// group's profile. A 401 asks for the write token; a 422 marks the member it names.
async function saveProfile() {
  const profile = {};
  for (const member of members) if (field(member).value.trim()) profile[member] = field(member).value.trim();
  profile.zone = zoneName();
  markInvalid(null);
  for (let refused = false; ;) {
    const token = sessionStorage.getItem(writeTokenKey) || sessionStorage.getItem(tokenKey);
    const response = await fetch(feedPath + "/profile", { method: "PUT", body: JSON.stringify(profile), headers: { "Content-Type": "application/json", ...(token ? { Authorization: "Bearer " + token } : {}) } });
    if (response.status === 401) { drop(response); if (await askForToken("write", refused)) { refused = true; continue; } $("profile-status").textContent = "Not saved: no write token given."; return; }
    if (!response.ok) return profileRefused(response);
    stored = await response.json();
    chosen = {}; guessed = {};
    keepInURL();
    await resolveFrames();
    $("profile-status").textContent = `Saved as the group's profile (${response.status === 201 ? "created" : "replaced"}). ` + $("profile-status").textContent;
    return;
  }
}
async function profileRefused(response) {
  let body = {};
  try { body = await response.json(); } catch { /* not problem+json */ }
  markInvalid(body.member);
  if ([...members, "zone"].includes(body.member)) field(body.member).focus();
  $("profile-status").textContent = `Not saved (${response.status}): ${body.detail || response.statusText}`;
}

async function refresh() {
  const response = await api(feedPath, { cache: "no-store" });
  if (!response.ok) drop(response);
  if (response.status === 404) { $("fallback").textContent = "No readable generation yet: publish one with PUT /feeds/" + group + "."; $("fallback").classList.add("visible"); loadHistory(); return; }
  if (!response.ok) return;
  etag = response.headers.get("ETag");
  fallback = response.headers.get("X-Feed-Fallback");
  feed = await response.json();
  await render();
}
function showLive(how) { const live = element("span", "live", "live"); $("connection").replaceChildren(live, ` (${how})`); }
// Live: Server-Sent Events; if they are not available, long-poll with If-None-Match.
let events = null;
function follow() {
  if (!window.EventSource) return longPoll();
  const token = sessionStorage.getItem(tokenKey);
  events = new EventSource(feedPath + "/events" + (token ? "?access_token=" + encodeURIComponent(token) : ""));
  events.onopen = () => showLive("events");
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
// A page left for another may be kept in the back/forward cache with its stream open, one of
// the six connections a browser gives a server: a few previews visited in turn would leave none
// for the page shown. The stream is closed on leaving and opened again on coming back.
addEventListener("pagehide", () => { if (events) { events.onerror = null; events.close(); } });
addEventListener("pageshow", (event) => { if (event.persisted && events) refresh().then(follow); });
async function longPoll() {
  showLive("long-poll");
  for (;;) {
    try {
      const response = await api(`${feedPath}?wait=55`, { headers: etag ? { "If-None-Match": etag } : {}, cache: "no-store" });
      if (response.status === 200) { etag = response.headers.get("ETag"); fallback = response.headers.get("X-Feed-Fallback"); feed = await response.json(); await render(); }
      else if (drop(response) ?? response.status !== 304) await new Promise((r) => setTimeout(r, 2000));
    } catch { await new Promise((r) => setTimeout(r, 2000)); }
  }
}
// A fault that leaves the served generation as it was (a broken new current that readers skip)
// sends no event, so the listing is also re-read every 2 s; any change re-reads the feed.
async function watchHistory() {
  try {
    const response = await api(feedPath + "/generations", { cache: "no-store" });
    const text = response.ok ? await response.text() : drop(response) ?? "";
    if (text !== historyText) await refresh();
  } catch { /* the server may be restarting */ }
  setTimeout(watchHistory, 2000);
}

function wireControls() {
  $("theme").addEventListener("change", (e) => { setTheme(e.target.value); if (feed) renderFrames(); });
  for (const member of members) field(member).addEventListener("change", async (e) => {
    chosen[member] = e.target.value.trim();
    if (member === "title") guessed = {};
    keepInURL();
    if (feed) await resolveFrames();
  });
  $("zone").value = params.get("zone") || "";
  $("zone").addEventListener("change", async () => { params.set("zone", zoneName()); keepInURL(); if (feed) await resolveFrames(); });
  fillList("zone-options", ["UTC", ...(Intl.supportedValuesOf ? Intl.supportedValuesOf("timeZone") : [])]);
  // The entry's own start when the timeline has it: a day with a clock change is not 24 × 1 h.
  $("hour").addEventListener("input", () => {
    const hour = Number($("hour").value);
    at = timeline?.entries?.[hour]?.startEpochMs ?? dayStart(at ?? Date.now()) + hour * HOUR;
    keepInURL();
    if (feed) renderFrames();
  });
  $("device").replaceChildren(...devices.map(([id, name]) => { const option = element("option", "", name); option.value = id; return option; }));
  $("device").value = devices.some((d) => d[0] === params.get("device")) ? params.get("device") : devices[0][0];
  $("device").addEventListener("change", () => { familyWanted = ""; $("filter-family").value = ""; keepInURL(); if (feed) renderFrames(); });
  fillFilter("filter-appearance", appearances, "All appearances", params.get("appearance"));
  fillFilter("filter-text", textSizes, "All text sizes", params.get("text"));
  for (const [, id] of filterControls) $(id).addEventListener("change", () => { familyWanted = $("filter-family").value; keepInURL(); if (feed) renderMatrix(shownContent()); });
  $("save-profile").addEventListener("click", saveProfile);
}
wireControls();
refresh().then(follow).then(() => setTimeout(watchHistory, 2000));
