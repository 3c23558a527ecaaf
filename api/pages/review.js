// The review page: plays the file from a presigned link (renewed before it lapses, keeping the
// place), lists the notes in the order of the timeline a page at a time (a note's time seeks
// the player there; "More notes" shows the next page), and leaves notes at the player's
// current moment and replies to them.
"use strict";
import { call } from "/pages/call.js";

(() => {
  const main = document.getElementById("review");
  if (!main) return;
  const reviewId = main.dataset.reviewId;
  const player = document.getElementById("player");
  const form = document.getElementById("noteForm");
  const nameInput = document.getElementById("reviewerName");
  const noteAt = document.getElementById("noteAt");
  const list = document.getElementById("notes");
  const status = document.getElementById("status");
  // Notes asked of the drive at a time (its most).
  const PAGE = 100;
  // The notes shown, and where the next page starts (null: all are shown).
  let shown = [];
  let cursor = null;
  nameInput.value = localStorage.getItem("drive-reviewer-name") || "";

  function clock(seconds) {
    const s = Math.floor(seconds);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    const mm = h ? String(m).padStart(2, "0") : String(m);
    return (h ? h + ":" : "") + mm + ":" + String(r).padStart(2, "0");
  }

  function say(text, kind) {
    status.textContent = text;
    status.className = kind || "";
  }

  function element(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // Who wrote a note or reply; the owner's are marked as theirs, which no name a reviewer
  // gives can be.
  function who(reviewer) {
    return reviewer.owner ? reviewer.name + " (owner)" : reviewer.name;
  }

  const more = element("button", "more", "More notes");
  more.type = "button";
  more.id = "moreNotes";
  more.hidden = true;
  list.after(more);
  more.addEventListener("click", async () => {
    more.disabled = true;
    try {
      const review = await call("/open-review", { reviewId, cursor, limit: PAGE });
      shown = shown.concat(review.notes);
      cursor = review.nextCursor;
      render(shown);
    } catch (e) {
      say(e.message, "bad");
    } finally {
      more.disabled = false;
    }
  });

  function render(notes) {
    more.hidden = !cursor;
    list.replaceChildren();
    if (!notes.length) list.append(element("li", "empty", "No notes yet."));
    for (const note of notes) {
      const li = element("li");
      li.dataset.noteId = note.id;
      const at = element("button", "at", clock(note.seconds));
      at.type = "button";
      at.setAttribute("aria-label", "Play from " + clock(note.seconds));
      at.addEventListener("click", () => {
        player.currentTime = note.seconds;
        player.play().catch(() => {});
      });
      li.append(at, element("span", "who", who(note.reviewer)));
      if (note.resolved) li.append(element("span", "resolved", "resolved"));
      li.append(element("p", "text", note.text));
      const replies = element("ul", "replies");
      for (const r of note.replies) {
        const item = element("li");
        item.append(element("span", "who", who(r.reviewer) + ": "), element("span", "", r.text));
        replies.append(item);
      }
      li.append(replies);
      const open = element("button", "replyButton", "Reply");
      open.type = "button";
      open.addEventListener("click", () => {
        open.hidden = true;
        const row = element("form", "reply");
        const input = element("input");
        input.type = "text";
        input.maxLength = 2000;
        input.setAttribute("aria-label", "Reply to " + note.reviewer.name);
        const send = element("button", "", "Send reply");
        send.type = "submit";
        row.append(input, send);
        row.addEventListener("submit", async (e) => {
          e.preventDefault();
          await leave({ replyTo: note.id, text: input.value.trim() });
        });
        li.append(row);
        input.focus();
      });
      li.append(open);
      list.append(li);
    }
  }

  // Opens the review again from the start, as many pages as it takes to show as many notes as
  // before (one page at least); answers the last page, with its media link.
  async function reopen() {
    const wanted = Math.max(shown.length, 1);
    let notes = [], review, after = null;
    do {
      review = await call("/open-review", after ? { reviewId, cursor: after, limit: PAGE } : { reviewId, limit: PAGE });
      notes = notes.concat(review.notes);
      after = review.nextCursor;
    } while (after && notes.length < wanted);
    shown = notes;
    cursor = after;
    render(shown);
    return review;
  }

  // Loads the review; a new media link replaces the old one where the player stands.
  async function load() {
    const review = await reopen();
    if (!player.src) {
      player.src = review.mediaUrl;
    } else {
      const at = player.currentTime, paused = player.paused;
      player.src = review.mediaUrl;
      player.currentTime = at;
      if (!paused) player.play().catch(() => {});
    }
    const renewIn = Math.max(new Date(review.expiresAt) - Date.now() - 10 * 60 * 1000, 60 * 1000);
    setTimeout(() => load().catch((e) => say(e.message, "bad")), renewIn);
  }

  async function leave(what) {
    const reviewerName = nameInput.value.trim();
    if (!reviewerName) {
      say("Say who you are first.", "bad");
      nameInput.focus();
      return;
    }
    if (!what.text) return say("Write something first.", "bad");
    localStorage.setItem("drive-reviewer-name", reviewerName);
    try {
      await call("/add-review-note", { reviewId, reviewerName, ...what });
      say(what.replyTo ? "Reply left." : "Note left at " + clock(what.seconds) + ".", "good");
      await reopen();
    } catch (e) {
      say(e.message, "bad");
    }
  }

  player.addEventListener("timeupdate", () => { noteAt.textContent = clock(player.currentTime); });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const text = form.elements.noteText.value.trim();
    await leave({ seconds: player.currentTime, text });
    if (status.className === "good") form.elements.noteText.value = "";
  });
  load().catch((e) => say(e.message, "bad"));
})();
