// The feed list's script (GET /index.js): a file of its own, since the page's
// Content-Security-Policy runs no inline script.
"use strict";
// With --read-token the list needs the token: asked here, kept for the tab (sessionStorage),
// where the preview pages find it too.
async function list() {
  const token = sessionStorage.getItem("feed-server-read-token");
  const response = await fetch("/feeds", { cache: "no-store", headers: token ? { Authorization: "Bearer " + token } : {} });
  if (response.status !== 401) return response.json();
  const form = document.getElementById("token-form");
  form.hidden = false;
  await new Promise((resolve) => { form.onsubmit = (event) => { event.preventDefault(); resolve(); }; });
  sessionStorage.setItem("feed-server-read-token", document.getElementById("token-input").value.trim());
  form.hidden = true;
  return list();
}
list().then(({ groups }) => {
  const body = document.getElementById("groups");
  if (!groups.length) { body.innerHTML = '<tr><td colspan="4">No feeds yet: publish one with <code>PUT /feeds/{group}</code>.</td></tr>'; return; }
  body.replaceChildren(...groups.map((g) => {
    const row = document.createElement("tr");
    const link = document.createElement("a");
    link.href = "/preview/" + encodeURIComponent(g.group);
    link.textContent = g.group;
    const cells = [link, g.generationId || "no readable generation", g.schemaVersion ?? "–", g.generatedAtEpochMs ? new Date(g.generatedAtEpochMs).toLocaleString() : "–"];
    cells.forEach((content, index) => { const td = document.createElement("td"); if (index === 1) td.className = "mono"; td.append(content); row.append(td); });
    return row;
  }));
});
