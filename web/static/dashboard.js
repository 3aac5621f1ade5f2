// sonda crawl dashboard: polls /api/crawl/status once a second and redraws the figures
// and the SVG charts. Crawled text (hosts, error kinds) only ever goes into textContent or
// SVG text nodes, never into HTML.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var POLL_MS = 1000, RETRY_MS = 3000;
  var fmt = new Intl.NumberFormat();
  var timer = null;

  function $(sel) { return document.querySelector(sel); }
  function figure(name, text) {
    var el = document.querySelector('[data-figure="' + name + '"]');
    if (el && el.textContent !== text) { el.textContent = text; }
  }
  function el(name, attrs, text) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) { if (Object.prototype.hasOwnProperty.call(attrs, k)) { e.setAttribute(k, attrs[k]); } }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function clear(svg) { while (svg.firstChild) { svg.removeChild(svg.firstChild); } }
  function size(svg) {
    var w = Math.max(120, Math.round(svg.clientWidth || 400));
    var h = Math.max(80, Math.round(svg.clientHeight || 160));
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    return { w: w, h: h };
  }
  function short(n) {
    if (n >= 1e6) { return (n / 1e6).toFixed(1) + "M"; }
    if (n >= 1e4) { return (n / 1e3).toFixed(0) + "k"; }
    if (n >= 100 || n === Math.round(n)) { return String(Math.round(n)); }
    return n.toFixed(n >= 10 ? 1 : 2);
  }

  // lineChart draws values (numbers or null) over time as a line with a shaded area,
  // a zero baseline, the maximum at the top left and the time span at the bottom right.
  function lineChart(svg, points, label, unit) {
    if (!svg) { return; }
    clear(svg);
    var s = size(svg), padL = 4, padR = 4, padT = 16, padB = 16;
    var pts = points.filter(function (p) { return p.v !== null && isFinite(p.v); });
    var title = el("title", {}, label + ": no data yet");
    svg.appendChild(title);
    svg.appendChild(el("line", { "class": "grid", x1: padL, x2: s.w - padR, y1: s.h - padB, y2: s.h - padB }));
    if (pts.length === 0) {
      svg.appendChild(el("text", { x: s.w / 2, y: s.h / 2, "text-anchor": "middle" }, "waiting for data"));
      return;
    }
    var t0 = pts[0].t, t1 = pts[pts.length - 1].t, span = Math.max(1, t1 - t0);
    var max = 0;
    pts.forEach(function (p) { if (p.v > max) { max = p.v; } });
    if (max <= 0) { max = 1; }
    var x = function (t) { return padL + (s.w - padL - padR) * (t - t0) / span; };
    var y = function (v) { return s.h - padB - (s.h - padT - padB) * v / max; };
    var d = "", i;
    for (i = 0; i < pts.length; i++) {
      d += (i ? "L" : "M") + x(pts[i].t).toFixed(1) + "," + y(pts[i].v).toFixed(1);
    }
    if (pts.length === 1) { d += "L" + (s.w - padR) + "," + y(pts[0].v).toFixed(1); }
    var area = d + "L" + x(pts.length === 1 ? t0 + span : t1).toFixed(1) + "," + (s.h - padB) + "L" + x(t0).toFixed(1) + "," + (s.h - padB) + "Z";
    svg.appendChild(el("line", { "class": "grid", x1: padL, x2: s.w - padR, y1: padT, y2: padT }));
    svg.appendChild(el("path", { "class": "area", d: area }));
    svg.appendChild(el("path", { "class": "series", d: d }));
    svg.appendChild(el("text", { x: padL, y: padT - 4 }, short(max) + unit));
    svg.appendChild(el("text", { x: padL, y: s.h - 3 }, "0"));
    svg.appendChild(el("text", { x: s.w - padR, y: s.h - 3, "text-anchor": "end" }, "last " + Math.round(span / 1000) + " s"));
    var last = pts[pts.length - 1].v;
    title.textContent = label + ": now " + short(last) + unit + ", at most " + short(max) + unit + " in the last " + Math.round(span / 1000) + " s";
  }

  // barChart draws labelled horizontal bars, largest first.
  function barChart(svg, rows, label, cls) {
    if (!svg) { return; }
    clear(svg);
    var s = size(svg);
    svg.appendChild(el("title", {}, label + (rows.length ? ": " + rows.map(function (r) { return r.k + " " + r.v; }).join(", ") : ": none")));
    if (rows.length === 0) {
      svg.appendChild(el("text", { x: s.w / 2, y: s.h / 2, "text-anchor": "middle" }, "none"));
      return;
    }
    var n = Math.min(rows.length, Math.max(1, Math.floor(s.h / 20)));
    var rowH = Math.min(24, s.h / n), labelW = Math.min(170, s.w * 0.45), max = rows[0].v || 1;
    for (var i = 0; i < n; i++) {
      var r = rows[i], yTop = i * rowH;
      var w = Math.max(1, (s.w - labelW - 50) * r.v / max);
      var name = r.k.length > 26 ? r.k.slice(0, 25) + "…" : r.k;
      svg.appendChild(el("text", { "class": "label", x: labelW - 6, y: yTop + rowH / 2 + 4, "text-anchor": "end" }, name));
      svg.appendChild(el("rect", { "class": "bar" + (cls ? " " + cls : ""), x: labelW, y: yTop + rowH * 0.2, width: w.toFixed(1), height: (rowH * 0.6).toFixed(1) }));
      svg.appendChild(el("text", { x: labelW + w + 4, y: yTop + rowH / 2 + 4 }, fmt.format(r.v)));
    }
  }

  function render(st) {
    figure("state", st.state);
    var upd = document.querySelector('[data-figure="updated"]');
    if (upd && st.updated) { upd.textContent = st.updated.replace("T", " ").replace(/\.\d+/, "").replace("Z", " UTC"); upd.setAttribute("datetime", st.updated); }
    figure("pages", fmt.format(st.pages));
    figure("pages_per_second", st.pages_per_second.toFixed(1));
    figure("queued", fmt.format(st.queued));
    figure("in_flight", fmt.format(st.in_flight));
    figure("hosts", fmt.format(st.hosts));
    var errs = Object.keys(st.errors).map(function (k) { return { k: k, v: st.errors[k] }; });
    errs.sort(function (a, b) { return b.v - a.v || (a.k < b.k ? -1 : 1); });
    figure("errors", fmt.format(errs.reduce(function (a, e) { return a + e.v; }, 0)));
    var lag = st.index_backlog;
    figure("index_backlog", lag ? fmt.format(lag.documents) + " pages, " + lag.lag_seconds.toFixed(1) + " s" : "–");
    var harvest = st.harvest_rate;
    figure("harvest_rate", harvest === null ? "no topic" : (100 * harvest).toFixed(1) + "%");
    var hist = st.history.map(function (p) { return { t: Date.parse(p.at), pps: p.pages_per_second, q: p.queued, h: p.harvest_rate }; });
    lineChart($("#chart-pps"), hist.map(function (p) { return { t: p.t, v: p.pps }; }), "Pages per second", "/s");
    lineChart($("#chart-queue"), hist.map(function (p) { return { t: p.t, v: p.q }; }), "Queue size", "");
    var hf = $("#harvest-figure");
    if (hf) {
      hf.hidden = harvest === null;
      if (harvest !== null) { lineChart($("#chart-harvest"), hist.map(function (p) { return { t: p.t, v: p.h === null ? null : 100 * p.h }; }), "Harvest rate", "%"); }
    }
    barChart($("#chart-errors"), errs, "Errors by kind", "bad");
    barChart($("#chart-hosts"), st.top_hosts.map(function (h) { return { k: h.host, v: h.count }; }), "Top hosts");
  }

  function poll() {
    clearTimeout(timer);
    fetch("/api/crawl/status", { cache: "no-store", headers: { "Accept": "application/json" } })
      .then(function (r) { if (!r.ok) { throw new Error("HTTP " + r.status); } return r.json(); })
      .then(function (st) { render(st); timer = setTimeout(poll, document.hidden ? 5 * POLL_MS : POLL_MS); })
      .catch(function () { figure("state", "server unreachable; retrying"); timer = setTimeout(poll, RETRY_MS); });
  }

  function message(text, isError) {
    var m = $("#control-message");
    if (!m) { return; }
    m.textContent = text;
    m.className = isError ? "error" : "";
  }

  function send(path, body) {
    var token = $("#token").value.trim();
    if (!token) { message("Enter the write token first (sonda serve printed it).", true); $("#token").focus(); return; }
    fetch(path, {
      method: "POST", cache: "no-store",
      headers: { "Authorization": "Bearer " + token, "Content-Type": "application/json", "Accept": "application/json" },
      body: JSON.stringify(body || {})
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (j) {
        if (!r.ok) { throw new Error(j.error || ("HTTP " + r.status)); }
        return j;
      });
    }).then(function (j) {
      if (path === "/api/crawl/seeds") { message("Seeds added: " + j.seeds.length + " in all.", false); }
      else if (path === "/api/crawl/stop") { message("Crawl stopped.", false); }
      else { message("Crawl started.", false); }
      poll();
    }).catch(function (e) { message(e.message, true); });
  }

  function seeds() {
    return $("#seeds").value.split(/\s+/).filter(function (s) { return s.length > 0; });
  }

  function init() {
    var form = $("#crawl-control");
    if (form) {
      form.addEventListener("submit", function (ev) {
        ev.preventDefault();
        var max = parseInt($("#max-pages").value, 10);
        send("/api/crawl/start", { seeds: seeds(), max_pages: isFinite(max) && max > 0 ? max : 0 });
      });
      $("#stop").addEventListener("click", function () { send("/api/crawl/stop"); });
      $("#add-seeds").addEventListener("click", function () {
        var s = seeds();
        if (!s.length) { message("Type one or more seed URLs first.", true); $("#seeds").focus(); return; }
        send("/api/crawl/seeds", { seeds: s });
      });
    }
    document.addEventListener("visibilitychange", function () { if (!document.hidden) { poll(); } });
    window.addEventListener("resize", function () { poll(); });
    poll();
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
