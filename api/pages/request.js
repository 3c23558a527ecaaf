// The file request page: a sender names themself, picks or drops files and sends them straight
// to the object store (one form up to 64 MiB, parts above), each with its progress. The drop's
// token is kept in this browser until the drop is finished, so reopening the page and picking
// the same files again resumes what was sent in parts. The bytes go as the app sends them
// (`/app/store.js`).
import { sendForm, sendParts } from "/app/store.js";
import { call } from "/pages/call.js";

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

  async function sendFile(token, item) {
    item.progress(0);
    const added = await call("/add-request-file", { token, fileName: item.file.name, fileSize: item.file.size });
    const progress = (n) => item.progress(n);
    if (added.form) {
      await sendForm(added.form, item.file, progress);
    } else {
      const sign = async (partNumbers) =>
        (await call("/sign-request-parts", { token, arrivalId: added.arrivalId, partNumbers })).parts;
      await sendParts({ ...added.parts, parts: added.parts.stored }, item.file, sign, progress);
    }
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
