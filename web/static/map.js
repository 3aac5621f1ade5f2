// The datasets page's map: draw a search box on an offline world map (plate carrée, so a
// longitude-latitude box is a rectangle), with the mouse, a finger or the keyboard, and see
// the boxes of the results. The box goes into the form's bbox field; "Search this box"
// (or Enter on the map) submits it. No library: the projection is one scale and offset.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var frame = document.getElementById("map-frame");
  var overlay = document.getElementById("map-overlay");
  var input = document.getElementById("bbox");
  var form = document.getElementById("dataset-form");
  var status = document.getElementById("map-status");
  if (!frame || !overlay || !input || !form) { return; }

  var box = parse(input.value); // [west, south, east, north] or null
  var sel = null;

  function parse(s) {
    var p = (s || "").split(",").map(function (x) { return parseFloat(x); });
    if (p.length !== 4 || p.some(function (x) { return !isFinite(x); })) { return null; }
    return p;
  }
  function clamp(x, lo, hi) { return Math.max(lo, Math.min(hi, x)); }
  function round(x) { return Math.round(x * 100) / 100; }
  function fmt(b) { return b.map(round).join(","); }

  // toDegrees turns a pointer position into [lon, lat].
  function toDegrees(ev) {
    var r = frame.getBoundingClientRect();
    var lon = -180 + 360 * (ev.clientX - r.left) / r.width;
    var lat = 90 - 180 * (ev.clientY - r.top) / r.height;
    return [clamp(lon, -180, 180), clamp(lat, -90, 90)];
  }

  function rect(b, cls) {
    var west = b[0], east = b[2];
    var parts = west <= east ? [[west, east]] : [[west, 180], [-180, east]]; // across the antimeridian
    var g = document.createElementNS(NS, "g");
    g.setAttribute("class", cls);
    parts.forEach(function (p) {
      var w = p[1] - p[0], h = b[3] - b[1];
      var el;
      if (w < 0.5 && h < 0.5) { // a point, or nearly: a dot that stays visible
        el = document.createElementNS(NS, "circle");
        el.setAttribute("cx", (p[0] + p[1]) / 2); el.setAttribute("cy", -(b[1] + b[3]) / 2); el.setAttribute("r", 1.5);
      } else {
        el = document.createElementNS(NS, "rect");
        el.setAttribute("x", p[0]); el.setAttribute("y", -b[3]);
        el.setAttribute("width", Math.max(w, 0.3)); el.setAttribute("height", Math.max(h, 0.3));
      }
      g.appendChild(el);
    });
    return g;
  }

  function drawSelection() {
    if (sel) { overlay.removeChild(sel); sel = null; }
    if (box) {
      sel = rect(box, "sel");
      overlay.appendChild(sel);
      input.value = fmt(box);
      status.textContent = "Box west " + round(box[0]) + ", south " + round(box[1]) + ", east " + round(box[2]) + ", north " + round(box[3]) + ".";
    } else {
      input.value = "";
      status.textContent = "No box drawn.";
    }
  }

  // The results' boxes; a result and its box light up together.
  var items = document.querySelectorAll(".dataset[data-bbox]");
  Array.prototype.forEach.call(items, function (li) {
    var b = parse(li.getAttribute("data-bbox"));
    if (!b) { return; }
    var g = rect(b, "res");
    overlay.insertBefore(g, overlay.firstChild);
    function on() { g.setAttribute("class", "res hi"); }
    function off() { g.setAttribute("class", "res"); }
    li.addEventListener("mouseenter", on); li.addEventListener("mouseleave", off);
    li.addEventListener("focusin", on); li.addEventListener("focusout", off);
  });

  var start = null;
  frame.addEventListener("pointerdown", function (ev) {
    if (ev.button !== 0) { return; }
    start = toDegrees(ev);
    frame.setPointerCapture(ev.pointerId);
    ev.preventDefault();
  });
  frame.addEventListener("pointermove", function (ev) {
    if (!start) { return; }
    var p = toDegrees(ev);
    box = [Math.min(start[0], p[0]), Math.min(start[1], p[1]), Math.max(start[0], p[0]), Math.max(start[1], p[1])];
    drawSelection();
  });
  function end(ev) {
    if (!start) { return; }
    var p = toDegrees(ev);
    if (Math.abs(p[0] - start[0]) < 0.01 && Math.abs(p[1] - start[1]) < 0.01) {
      // A click: a small box around the point, 2 degrees wide.
      box = [clamp(p[0] - 1, -180, 180), clamp(p[1] - 1, -90, 90), clamp(p[0] + 1, -180, 180), clamp(p[1] + 1, -90, 90)];
      drawSelection();
    }
    start = null;
    frame.focus();
  }
  frame.addEventListener("pointerup", end);
  frame.addEventListener("pointercancel", function () { start = null; });

  // Keyboard: arrows move the box, Shift+arrows move its north-east corner, Alt for fine
  // steps; Enter searches, Escape clears.
  frame.addEventListener("keydown", function (ev) {
    var step = ev.altKey ? 1 : 5;
    var d = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] }[ev.key];
    if (d) {
      if (!box) { box = [-20, -10, 20, 10]; }
      if (ev.shiftKey) {
        box[2] = clamp(box[2] + d[0], box[0], 180);
        box[3] = clamp(box[3] + d[1], box[1], 90);
      } else {
        var w = box[2] - box[0], h = box[3] - box[1];
        box[0] = clamp(box[0] + d[0], -180, 180 - w); box[2] = box[0] + w;
        box[1] = clamp(box[1] + d[1], -90, 90 - h); box[3] = box[1] + h;
      }
      drawSelection();
      ev.preventDefault();
    } else if (ev.key === "Enter") {
      if (box) { form.requestSubmit(); }
      ev.preventDefault();
    } else if (ev.key === "Escape") {
      box = null; drawSelection(); ev.preventDefault();
    }
  });

  input.addEventListener("change", function () { box = parse(input.value); drawSelection(); });
  document.getElementById("map-search").addEventListener("click", function () {
    if (!box) { status.textContent = "Draw a box first: drag on the map, or focus it and use the arrow keys."; frame.focus(); return; }
    form.requestSubmit();
  });
  document.getElementById("map-clear").addEventListener("click", function () { box = null; drawSelection(); frame.focus(); });
  if (box) { drawSelection(); }
})();
