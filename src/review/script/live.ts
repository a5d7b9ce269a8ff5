/**
 * Browser script part: live updates. Polls the session and its events feed with the review key,
 * and when anything changed fetches the page's regions again and swaps those that differ
 * (regions whose `data-key` is unchanged are kept, so what the reader typed survives). Also
 * re-checks on every poll whether a terminal is still polling, to offer or explain teleport.
 * Runs inside the page script's closure (see index.ts): `state`, `callApi`, `ApiError` are its.
 */
// biome-ignore lint/complexity/noUselessStringRaw: browser code, so a later regex keeps its backslashes.
export const LIVE_UPDATES_SCRIPT = String.raw`

  function stateKeyOf(session) {
    return [
      session.status,
      session.phase,
      (session.pending && session.pending.tool_use_id) || "",
      session.reject_count,
      (session.outcome && session.outcome.kind) || "",
    ].join("|");
  }

  async function tick() {
    state.timer = 0;
    if (state.stopped) return;
    if (document.hidden) return schedule();
    // One poll at a time: an action that asks for a poll while one runs gets the next one.
    if (state.polling) {
      state.pollAgain = true;
      return;
    }
    state.polling = true;
    try {
      const sessionRes = await callApi("GET", "");
      const serverNow = Date.parse(sessionRes.headers.get("Date") || "");
      if (Number.isFinite(serverNow)) state.clockSkewMs = serverNow - Date.now();
      const session = await sessionRes.json();
      state.session = session;
      let changed = state.needsRefresh || stateKeyOf(session) !== state.stateKey;
      for (let page = 0; page < FEED_PAGES_PER_TICK; page++) {
        const query = "?limit=1000" + (state.cursor ? "&after_id=" + encodeURIComponent(state.cursor) : "");
        const feed = await (await callApi("GET", "/events" + query)).json();
        if (Array.isArray(feed.data) && feed.data.length > 0) {
          changed = true;
          if (typeof feed.last_id === "string") state.cursor = feed.last_id;
        }
        if (!feed.has_more) break;
      }
      state.failures = 0;
      showConnection("");
      if (changed) await refreshPage();
      updateTeleportOffer();
      // An archived session never changes again.
      if (session.status === "archived" && !state.needsRefresh) state.stopped = true;
    } catch (err) {
      if (err instanceof ApiError && (err.status === 401 || err.status === 403 || err.status === 404)) {
        state.stopped = true;
        showConnection("This session is no longer available: it was deleted, or this link is not valid any more.");
      } else {
        state.failures += 1;
        if (state.failures >= 2) {
          showConnection("Lost contact with the planport server (" + err.message + "). Retrying every few seconds…");
        }
      }
    } finally {
      state.polling = false;
    }
    if (state.pollAgain && !state.stopped) {
      state.pollAgain = false;
      return tick();
    }
    schedule();
  }

  function schedule() {
    if (state.stopped || state.timer) return;
    state.timer = setTimeout(tick, POLL_INTERVAL_MS);
  }

  function pollNow() {
    if (state.timer) clearTimeout(state.timer);
    state.timer = 0;
    tick();
  }

  async function refreshPage() {
    if (state.refreshing) {
      state.refreshAgain = true;
      return;
    }
    state.refreshing = true;
    state.needsRefresh = true;
    try {
      do {
        state.refreshAgain = false;
        const res = await fetch(location.pathname + location.search + "&part=regions", {
          headers: { Accept: "text/html" },
          cache: "no-store",
          credentials: "omit",
        });
        if (!res.ok) throw new ApiError(res.status, "page_" + res.status, "the page could not be reloaded");
        const text = await res.text();
        const doc = new DOMParser().parseFromString(policy ? policy.createHTML(text) : text, "text/html");
        applyPage(doc);
      } while (state.refreshAgain);
      state.needsRefresh = false;
    } finally {
      state.refreshing = false;
    }
  }

  function applyPage(doc) {
    const focused = document.activeElement;
    const focusedId = focused && focused !== body ? focused.id : "";
    let refocus = false;
    for (const next of Array.from(doc.querySelectorAll("[data-region]"))) {
      const name = next.getAttribute("data-region");
      const current = document.querySelector('[data-region="' + CSS.escape(name) + '"]');
      if (!current) continue;
      const key = next.getAttribute("data-key");
      if (key !== null && key !== "" && key === current.getAttribute("data-key")) continue;
      if (current.isEqualNode(next)) continue;
      for (const script of Array.from(next.querySelectorAll("script"))) script.remove();
      const transcript = current.querySelector(".transcript");
      const pinned = !transcript || transcript.scrollTop + transcript.clientHeight >= transcript.scrollHeight - 8;
      if (focused && current.contains(focused)) refocus = true;
      const adopted = document.adoptNode(next);
      current.replaceWith(adopted);
      enableControls(adopted);
      if (pinned) scrollTranscriptToEnd(adopted);
    }
    document.title = doc.title;
    const cursor = doc.body.dataset.cursor || "";
    if (cursor > state.cursor) state.cursor = cursor;
    state.stateKey = doc.body.dataset.state || state.stateKey;
    if (refocus && focusedId) {
      const again = document.getElementById(focusedId);
      if (again) again.focus();
    }
    renderComments();
    updateTeleportOffer();
    loadDiffs();
  }

  function enableControls(root) {
    for (const fieldset of Array.from(root.querySelectorAll("fieldset[data-needs-script]"))) {
      fieldset.disabled = false;
    }
    updateSelectionControls();
  }

  function scrollTranscriptToEnd(root) {
    const list = root.querySelector(".transcript");
    if (list) list.scrollTop = list.scrollHeight;
  }

  function showConnection(text) {
    const el = document.getElementById("connection");
    if (!el) return;
    el.textContent = text;
    el.hidden = text === "";
  }

  function announce(text) {
    const el = document.getElementById("announcer");
    if (el) el.textContent = text;
  }

  function updateTeleportOffer() {
    const session = state.session;
    const button = document.querySelector("[data-teleport-offer]");
    const reason = document.querySelector("[data-teleport-reason]");
    if (!session || !button || !reason) return;
    const polledAt = Date.parse(session.terminal_polled_at || "");
    const now = Date.now() + state.clockSkewMs;
    const polling = Number.isFinite(polledAt) && now - polledAt <= TERMINAL_POLL_WINDOW_MS;
    button.hidden = !polling;
    reason.hidden = polling;
  }

`;
