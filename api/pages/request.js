// The file request page: a sender names themself, picks or drops files and sends them straight
// to the object store (one form up to 64 MiB, parts above), each with its progress. The drop's
// token is kept in this browser until the drop is finished, so reopening the page and picking
// the same files again resumes what was sent in parts.
"use strict";
(() => {
  const main = document.getElementById("request");
  const form = document.getElementById("send");
  if (!main || !form) return;
  const requestId = main.dataset.requestId;
  const picker = document.getElementById("files");
  const zone = document.getElementById("zone");
  const list = document.getElementById("list");
  const status = document.getElementById("status");
  const button = document.getElementById("sendButton");
  const saved = "drive-drop-" + requestId;
  const items = [];

  function size(bytes) {
    const units = ["bytes", "KB", "MB", "GB", "TB"];
    let n = bytes, u = 0;
    while (n >= 1000 && u < units.length - 1) { n /= 1000; u += 1; }
    return (u === 0 ? n : n.toFixed(1)) + " " + units[u];
  }

  function say(text, kind) {
    status.textContent = text;
    status.className = kind || "";
  }

  function add(files) {
    for (const file of files) {
      if (items.some((i) => i.file.name === file.name && i.file.size === file.size)) continue;
      const li = document.createElement("li");
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = file.name + " (" + size(file.size) + ")";
      const state = document.createElement("span");
      state.className = "state";
      state.textContent = "waiting";
      const bar = document.createElement("progress");
      bar.max = Math.max(file.size, 1);
      bar.value = 0;
      bar.setAttribute("aria-label", file.name);
      li.append(name, state, bar);
      list.append(li);
      items.push({
        file, li, sent: false,
        progress(done) { bar.value = done; state.textContent = Math.floor((100 * done) / bar.max) + "%"; },
        finish() { bar.value = bar.max; li.className = "done"; state.textContent = "sent"; this.sent = true; },
        fail(why) { li.className = "failed"; state.textContent = why; },
      });
    }
    say(items.length ? "" : "Pick at least one file.");
  }

  picker.addEventListener("change", () => add(picker.files));
  zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("over"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("over");
    add(e.dataTransfer.files);
  });

  class Refused extends Error {
    constructor(body, status) {
      super(body.error || "the drive answered " + status);
      this.code = body.code;
    }
  }

  async function call(route, body) {
    const answer = await fetch(route, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = await answer.json().catch(() => ({}));
    if (!answer.ok) throw new Refused(json, answer.status);
    return json;
  }

  // One request to the store with upload progress; fetch has none.
  function send(method, url, body, progress) {
    return new Promise((resolve, reject) => {
      const x = new XMLHttpRequest();
      x.open(method, url);
      x.upload.onprogress = (e) => progress(e.loaded);
      x.onload = () => (x.status < 300 ? resolve() : reject(new Error("the store answered " + x.status)));
      x.onerror = () => reject(new Error("the connection was cut"));
      x.send(body);
    });
  }

  async function retried(attempt) {
    for (let n = 1; ; n += 1) {
      try {
        return await attempt();
      } catch (e) {
        if (n === 4 || e instanceof Refused) throw e;
        await new Promise((r) => setTimeout(r, 1000 * n));
      }
    }
  }

  async function sendForm(target, item) {
    const body = new FormData();
    for (const [k, v] of Object.entries(target.uploadForm)) body.append(k, v);
    body.append("file", item.file);
    await retried(() => send("POST", target.uploadUrl, body, (n) => item.progress(n)));
  }

  // Parts go four at a time, as the command-line client sends them: the store takes them
  // side by side, and a part that fails is tried again alone.
  const PARTS_IN_FLIGHT = 4;

  async function sendParts(token, arrivalId, plan, item) {
    const stored = new Set(plan.stored.map((p) => p.partNumber));
    const urls = new Map(plan.signedParts.map((p) => [p.partNumber, p]));
    const missing = [];
    for (let n = 1; n <= plan.partCount; n += 1) if (!stored.has(n)) missing.push(n);
    let done = plan.stored.reduce((sum, p) => sum + p.size, 0);
    const sending = new Map();
    const shown = () => item.progress(done + [...sending.values()].reduce((a, b) => a + b, 0));
    shown();
    async function sign(n) {
      if (urls.has(n)) return urls.get(n);
      const wanted = missing.filter((m) => m >= n && !urls.has(m)).slice(0, 100);
      const more = await call("/sign-request-parts", { token, arrivalId, partNumbers: wanted });
      for (const p of more.parts) urls.set(p.partNumber, p);
      return urls.get(n);
    }
    let next = 0;
    async function worker() {
      while (next < missing.length) {
        const n = missing[next];
        next += 1;
        const part = await sign(n);
        const start = (n - 1) * plan.partSize;
        const bytes = item.file.slice(start, start + part.size);
        sending.set(n, 0);
        await retried(() => send("PUT", part.url, bytes, (loaded) => { sending.set(n, loaded); shown(); }));
        sending.delete(n);
        done += part.size;
        shown();
      }
    }
    await Promise.all(Array.from({ length: Math.min(PARTS_IN_FLIGHT, missing.length) }, worker));
  }

  async function sendFile(token, item) {
    item.progress(0);
    const added = await call("/add-request-file", { token, fileName: item.file.name, fileSize: item.file.size });
    if (added.form) await sendForm(added.form, item);
    else await sendParts(token, added.arrivalId, added.parts, item);
    await call("/finish-request-file", { token, arrivalId: added.arrivalId });
    item.finish();
  }

  async function dropToken(senderName, note) {
    const kept = JSON.parse(localStorage.getItem(saved) || "null");
    if (kept && kept.senderName === senderName) return kept.token;
    const started = await call("/start-request-drop", { requestId, senderName, note: note || null });
    localStorage.setItem(saved, JSON.stringify({ senderName, token: started.token }));
    return started.token;
  }

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const senderName = form.elements.senderName.value.trim();
    const note = form.elements.note.value.trim();
    if (!senderName) return say("Say who you are first.", "bad");
    const waiting = items.filter((i) => !i.sent);
    if (!waiting.length) return say("Pick at least one file.", "bad");
    button.disabled = true;
    say("Sending…");
    let failed = 0;
    try {
      let token = await dropToken(senderName, note);
      for (const item of waiting) {
        try {
          await sendFile(token, item);
        } catch (err) {
          if (err.code === "invalid_token" || err.code === "drop_finished") {
            localStorage.removeItem(saved);
            token = await dropToken(senderName, note);
            try { await sendFile(token, item); continue; } catch (again) { err = again; }
          }
          failed += 1;
          item.fail(err.message);
        }
      }
      if (failed === 0) {
        const finished = await call("/finish-request-drop", { token });
        localStorage.removeItem(saved);
        say("Sent " + finished.files + (finished.files === 1 ? " file" : " files") + ". Thank you.", "good");
      } else {
        say(failed + " of " + waiting.length + " could not be sent; press Send to try them again.", "bad");
      }
    } catch (err) {
      say(err.message, "bad");
    } finally {
      button.disabled = false;
    }
  });
})();
