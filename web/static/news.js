// News topics: add a topic, mark stories read or unread, and mark an article read when it is
// opened. Writes need the token `sonda serve` printed; it is kept for this tab only
// (sessionStorage), so it is typed once per session.
(function () {
  "use strict";
  var KEY = "sonda-token";
  function $(sel) { return document.querySelector(sel); }

  function token() {
    var field = $("#token");
    var t = field && field.value.trim();
    if (t) { try { sessionStorage.setItem(KEY, t); } catch (e) { /* storage off: ask each time */ } return t; }
    try { return sessionStorage.getItem(KEY) || ""; } catch (e) { return ""; }
  }

  function message(text, isError) {
    var m = $("#news-message");
    if (m) { m.textContent = text; m.className = isError ? "error" : ""; }
  }

  function post(path, params) {
    var t = token();
    if (!t) {
      message("Enter the write token first (sonda serve printed it).", true);
      var f = $("#token"); if (f) { f.focus(); }
      return Promise.reject(new Error("no token"));
    }
    var q = new URLSearchParams(params).toString();
    return fetch(path + "?" + q, {
      method: "POST", cache: "no-store",
      headers: { "Authorization": "Bearer " + t, "Accept": "application/json" }
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (j) {
        if (!r.ok) { throw new Error(j.error || ("HTTP " + r.status)); }
        return j;
      });
    });
  }

  // report shows a failed write; a missing token was already asked for.
  function report(e) { if (e.message !== "no token") { message(e.message, true); } }

  // setButton makes a mark button offer the opposite of the read state it shows.
  function setButton(b, read) {
    if (b) { b.dataset.read = read ? "false" : "true"; b.textContent = read ? "Mark unread" : "Mark read"; }
  }

  function setRead(li, read) {
    li.classList.toggle("unread", !read);
    setButton(li.querySelector("button.mark"), read);
  }

  function init() {
    var stored = "";
    try { stored = sessionStorage.getItem(KEY) || ""; } catch (e) { /* ignore */ }
    if (stored) { document.querySelectorAll(".token-field").forEach(function (p) { p.hidden = true; }); }

    var form = $("#add-topic");
    if (form) {
      form.addEventListener("submit", function (ev) {
        ev.preventDefault();
        var name = $("#topic-name").value.replace(/^#/, "").trim();
        if (!name) { message("Type the topic's words first.", true); return; }
        post("/api/topics", { name: name, sites: $("#topic-sites").value.trim() })
          .then(function (j) { window.location.href = "/topics?id=" + encodeURIComponent(j.topic.id); })
          .catch(report);
      });
    }

    var list = $("#stories");
    if (list) {
      list.addEventListener("click", function (ev) {
        var b = ev.target.closest("button.mark");
        if (!b) { return; }
        var li = b.closest("li.story");
        var read = b.dataset.read === "true";
        post("/api/topic/read", { id: list.dataset.topic, article: li.dataset.article, read: read })
          .then(function () { setRead(li, read); message(read ? "Marked read." : "Marked unread.", false); })
          .catch(report);
      });
    }

    var art = $("#article");
    if (art && art.dataset.topic) {
      var button = art.querySelector("button.mark");
      var mark = function (read) {
        return post("/api/topic/read", { id: art.dataset.topic, article: art.dataset.article, read: read })
          .then(function () { setButton(button, read); message(read ? "Marked read." : "Marked unread.", false); });
      };
      if (stored) { mark(true).catch(function (e) { message(e.message, true); }); }
      if (button) {
        button.addEventListener("click", function () {
          mark(button.dataset.read === "true").catch(report);
        });
      }
    }
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
