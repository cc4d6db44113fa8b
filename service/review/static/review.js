
(() => {
  "use strict";
  const token = document.querySelector('meta[name="review-token"]').content;
  const page = Number(document.body.dataset.page), pages = Number(document.body.dataset.pages);
  const cards = Array.from(document.querySelectorAll("article.pair"));
  const status = document.getElementById("status"), help = document.getElementById("help");
  let cur = 0;
  function select(i, scroll) {
    if (!cards.length) return;
    cur = Math.max(0, Math.min(cards.length - 1, i));
    cards.forEach((c, k) => c.classList.toggle("current", k === cur));
    if (scroll) cards[cur].scrollIntoView({block: "start"});
  }
  function goPage(p, hash) {
    if (p >= 1 && p <= pages) location.href = "?page=" + p + (hash || "");
  }
  async function review(k, verdict) {
    const card = cards[k];
    const note = card.querySelector("input.note").value;
    status.textContent = "saving...";
    let resp, body;
    try {
      resp = await fetch("api/feedback", {method: "POST", body: JSON.stringify({item: Number(card.dataset.item),
        verdict: verdict, note: note}), headers: {"Content-Type": "application/json", "X-Review-Token": token}});
      body = await resp.json();
    } catch (err) {
      status.textContent = "NOT saved: " + err;
      return;
    }
    if (!resp.ok) { status.textContent = "NOT saved: " + body.error; return; }
    card.dataset.state = body.verdict;
    card.querySelector(".verdict").textContent = body.verdict === "confirm" ? "confirmed" : "overturned";
    card.querySelector(".record").textContent = JSON.stringify(body.record);
    document.getElementById("reviewed").textContent = body.reviewed;
    status.textContent = "saved " + JSON.stringify(body.record);
    const next = cards.findIndex((c, i) => i > k && c.dataset.state === "open");
    if (next >= 0) select(next, true);
    else status.textContent += page < pages ? "  -- page done: ] for the next page" : "  -- last page done";
  }
  cards.forEach((card, k) => {
    card.querySelector("button.confirm").addEventListener("click", () => { select(k, false); review(k, "confirm"); });
    card.querySelector("button.overturn").addEventListener("click", () => { select(k, false); review(k, "overturn"); });
    card.addEventListener("focusin", () => select(k, false));
  });
  document.getElementById("close-help").addEventListener("click", () => { help.hidden = true; });
  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.target.closest && ev.target.closest("input, textarea, select")) {
      if (ev.key === "Escape") ev.target.blur();
      return;
    }
    switch (ev.key) {
      case "y": if (cards.length) review(cur, "confirm"); break;
      case "n": if (cards.length) review(cur, "overturn"); break;
      case "j": if (cur < cards.length - 1) select(cur + 1, true); else goPage(page + 1); break;
      case "k": if (cur > 0) select(cur - 1, true); else goPage(page - 1, "#last"); break;
      case "]": goPage(page + 1); break;
      case "[": goPage(page - 1); break;
      case "c": if (cards.length) cards[cur].querySelector("input.note").focus(); break;
      case "?": help.hidden = !help.hidden; break;
      case "Escape": help.hidden = true; break;
      default: return;
    }
    ev.preventDefault();
  });
  const open = cards.findIndex((c) => c.dataset.state === "open");
  select(location.hash === "#last" ? cards.length - 1 : Math.max(open, 0), location.hash === "#last");
  (async () => {  // where else each B appeared, one search after the other (the server runs one at a time)
    for (const sec of document.querySelectorAll("section.where[data-item]")) {
      try {
        const resp = await fetch("api/where-else/" + sec.dataset.item);
        sec.innerHTML = await resp.text();  // escaped on the server
      } catch (err) {
        sec.textContent = "where else unavailable: " + err;
      }
    }
  })();
  (async () => {  // explanations, one after the other (the server computes one at a time)
    for (const sec of document.querySelectorAll("section.explain[data-item]")) {
      try {
        const resp = await fetch("api/explain/" + sec.dataset.item);
        sec.innerHTML = await resp.text();  // escaped on the server
      } catch (err) {
        sec.textContent = "explanation unavailable: " + err;
      }
    }
  })();
})();
