/* The posthoc study explorer (posthoc.report.explorer): every cell of the report to the annotations behind it.
   Data: window.POSTHOC_EXPLORER_DATA (explorer-data.js). Every text goes into the page through textContent or a
   text node, never parsed as markup; only http(s) links are clickable. Offsets are Unicode code points. */
(function () {
  "use strict";
  var D = window.POSTHOC_EXPLORER_DATA;
  var PAGE = 100;
  var timings = window.__explorerTimings = {};
  var t0 = performance.now();

  function ints(b64) {
    var raw = atob(b64), bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return new Int32Array(bytes.buffer);
  }
  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function webLink(url) {  /* as posthoc.html.web_link: absolute http(s), no space or control character */
    if (typeof url !== "string" || !/^https?:\/\/[^\/\s]/i.test(url) || /[\s\u0000-\u001f\u007f-\u009f]/.test(url)) return null;
    try { var parsed = new URL(url); } catch (e) { return null; }
    if ((parsed.protocol !== "http:" && parsed.protocol !== "https:") || !parsed.hostname) return null;
    return url.slice(0, url.indexOf(":")).toLowerCase() + url.slice(url.indexOf(":"));
  }
  function linkNode(url) {
    var href = webLink(url);
    if (!href) return el("span", url);
    var a = el("a", url);
    a.href = href; a.rel = "noopener noreferrer nofollow"; a.target = "_blank";
    return a;
  }

  var A = {}, J = {};
  ["dataset", "doc", "system", "start", "end", "link", "verdict", "origin"].forEach(function (k) { A[k] = ints(D.ann[k]); });
  ["offsets", "worker", "outcome", "newLink", "flags"].forEach(function (k) { J[k] = ints(D.judg[k]); });
  var docDataset = ints(D.docs.dataset), listOffsets = ints(D.lists.offsets), listItems = ints(D.lists.items);
  var cellOffsets = ints(D.cells.offsets), cellItems = ints(D.cells.items);
  var N = A.start.length, cellIndex = {};
  D.cells.ids.forEach(function (id, i) { cellIndex[id] = i; });
  var facets = D.facets.map(function (f) {
    var ann = ints(f.ann), val = ints(f.val), start = new Int32Array(N + 1);
    for (var i = 0; i < ann.length; i++) start[ann[i] + 1]++;
    for (i = 0; i < N; i++) start[i + 1] += start[i];
    var fill = start.slice(0, N), byAnn = new Int32Array(ann.length);
    for (i = 0; i < ann.length; i++) byAnn[fill[ann[i]]++] = val[i];
    return {name: f.table + " " + f.column, values: f.values, start: start, vals: byAnn};
  });

  var state = {cell: -1, members: null, list: new Int32Array(0), page: 0, current: -1,
    filters: {}, search: "", left: null, right: null};
  var lowerSurface = null, docAnnotations = null, mark = new Uint8Array(N), cellsOf = {}, shownTable = null;

  /* ---- the cell: union of its lists, distinct, in annotation order ---- */
  function members(cell) {
    var out = [];
    for (var c = cellOffsets[cell]; c < cellOffsets[cell + 1]; c++) {
      var list = cellItems[c];
      for (var i = listOffsets[list]; i < listOffsets[list + 1]; i++) {
        var a = listItems[i];
        if (!mark[a]) { mark[a] = 1; out.push(a); }
      }
    }
    for (i = 0; i < out.length; i++) mark[out[i]] = 0;
    var rows = Int32Array.from(out);
    rows.sort();
    return rows;
  }
  function facetValues(f, a) {
    var out = [];
    for (var i = f.start[a]; i < f.start[a + 1]; i++) out.push(f.values[f.vals[i]]);
    return out;
  }
  function judgedBy(a, worker) {
    for (var i = J.offsets[a]; i < J.offsets[a + 1]; i++) if (J.worker[i] === worker) return true;
    return false;
  }
  function hasFacet(f, a, value) {
    for (var i = f.start[a]; i < f.start[a + 1]; i++) if (f.vals[i] === value) return true;
    return false;
  }
  function applyFilters() {
    var t = performance.now(), fl = state.filters, q = state.search.toLowerCase();
    if (q && !lowerSurface) lowerSurface = D.surface.map(function (s) { return s.toLowerCase(); });
    var source = state.members, n = source ? source.length : N, out = new Int32Array(n), m = 0;
    for (var i = 0; i < n; i++) {
      var a = source ? source[i] : i;
      if (fl.dataset >= 0 && A.dataset[a] !== fl.dataset) continue;
      if (fl.system >= 0 && A.system[a] !== fl.system) continue;
      if (fl.verdict >= 0 && A.verdict[a] !== fl.verdict) continue;
      if (fl.worker >= 0 && !judgedBy(a, fl.worker)) continue;
      var ok = true;
      for (var f = 0; f < facets.length && ok; f++) {
        var v = fl["facet" + f];
        if (v >= 0 && !hasFacet(facets[f], a, v)) ok = false;
      }
      if (!ok || (q && lowerSurface[a].indexOf(q) < 0)) continue;
      out[m++] = a;
    }
    state.list = out.subarray(0, m);
    state.page = 0; state.current = m ? 0 : -1;
    timings.scan = performance.now() - t;
    renderList();
    timings.list = performance.now() - t - timings.scan;
    renderCase();
    timings.filter = performance.now() - t;
  }

  /* ---- controls ---- */
  function select(id, label, names, onChange) {
    var wrap = el("label", label + " "), s = el("select");
    s.id = id;
    var all = el("option", "all"); all.value = "-1"; s.appendChild(all);
    names.forEach(function (name, i) { var o = el("option", name); o.value = String(i); s.appendChild(o); });
    s.addEventListener("change", function () { onChange(parseInt(s.value, 10)); });
    wrap.appendChild(s);
    return wrap;
  }
  function buildControls() {
    var bar = document.getElementById("filters");
    var specs = [["f-dataset", "dataset", D.datasets], ["f-system", "system", D.systems],
      ["f-verdict", "verdict", D.verdicts], ["f-worker", "worker", D.workers]];
    facets.forEach(function (f, i) { specs.push(["f-facet" + i, f.name, f.values]); });
    specs.forEach(function (spec) {
      var key = spec[0].slice(2);
      state.filters[key] = -1;
      bar.appendChild(select(spec[0], spec[1], spec[2], function (v) { state.filters[key] = v; applyFilters(); }));
    });
    var search = el("input"); search.id = "search"; search.type = "search"; search.placeholder = "surface form";
    search.addEventListener("input", function () { state.search = search.value; applyFilters(); });
    var label = el("label", "search "); label.appendChild(search); bar.appendChild(label);
    var button = el("button", "Export CSV"); button.id = "export"; button.type = "button";
    button.addEventListener("click", exportCsv); bar.appendChild(button);
    var tables = document.getElementById("table"), cells = document.getElementById("cell");
    var none = el("option", "every annotation (no cell)"); none.value = ""; tables.appendChild(none);
    D.cells.tables.forEach(function (table, i) {
      if (!cellsOf[table]) { cellsOf[table] = []; var o = el("option", table); o.value = table; tables.appendChild(o); }
      cellsOf[table].push(i);
    });
    tables.addEventListener("change", function () {
      var chosen = cellsOf[tables.value];
      location.hash = chosen ? "cell=" + encodeURIComponent(D.cells.ids[chosen[0]]) : "";
    });
    cells.addEventListener("change", function () {
      location.hash = "cell=" + encodeURIComponent(D.cells.ids[parseInt(cells.value, 10)]);
    });
  }
  /* one table's cells in the second select (a select of every cell, 1,700 options, cost 200 ms a change) */
  function showCellChoice(i) {
    var tables = document.getElementById("table"), cells = document.getElementById("cell");
    var table = i >= 0 ? D.cells.tables[i] : "";
    if (shownTable !== table) {
      shownTable = table;
      tables.value = table;
      var options = document.createDocumentFragment();
      (cellsOf[table] || []).forEach(function (c) { var o = el("option", D.cells.labels[c]); o.value = String(c); options.appendChild(o); });
      cells.replaceChildren(options);
      cells.disabled = !table;
    }
    if (i >= 0) cells.value = String(i);
  }
  function openCell(i) {
    var t = performance.now();
    state.cell = i;
    state.members = i >= 0 ? members(i) : null;
    timings.members = performance.now() - t;
    showCellChoice(i);
    document.getElementById("celllabel").textContent = i >= 0 ? D.cells.labels[i] : "";
    applyFilters();
    timings.cell = performance.now() - t;
    painted("cellPainted", t, i);
  }
  function painted(name, t, what) {  /* the time until the next frame is drawn (bench/explorer_bench.py reads it) */
    requestAnimationFrame(function () { setTimeout(function () { timings[name] = performance.now() - t; timings[name + "Of"] = what; }, 0); });
  }
  function fromHash() {
    var m = /(?:^#|&)cell=([^&]*)/.exec(location.hash), id = m ? decodeURIComponent(m[1]) : null;
    if (id !== null && !(id in cellIndex)) { setStatus("No cell " + id + " in this study's data."); openCell(-1); return; }
    openCell(id === null ? -1 : cellIndex[id]);
  }
  function setStatus(text) { document.getElementById("status").textContent = text; }

  /* ---- the list, one page at a time ---- */
  var COLUMNS = ["#", "dataset", "document", "system", "surface", "link", "verdict"];
  function renderList() {
    var list = state.list, pages = Math.max(1, Math.ceil(list.length / PAGE));
    if (state.current >= 0) state.page = Math.floor(state.current / PAGE);
    var head = document.querySelector("#list thead"), body = document.querySelector("#list tbody");
    if (!head.firstChild) {
      var tr = el("tr");
      COLUMNS.concat(facets.map(function (f) { return f.name; })).forEach(function (c) { tr.appendChild(el("th", c)); });
      head.appendChild(tr);
    }
    var rows = document.createDocumentFragment(), first = state.page * PAGE;
    for (var i = first; i < Math.min(list.length, first + PAGE); i++) {
      var a = list[i], row = el("tr", null, i === state.current ? "current" : "");
      row.dataset.index = String(i);
      [i + 1, D.datasets[A.dataset[a]], D.docs.id[A.doc[a]], D.systems[A.system[a]], D.surface[a],
        A.link[a] >= 0 ? D.links[A.link[a]] : "", D.verdicts[A.verdict[a]]].forEach(function (v, c) {
        row.appendChild(el("td", v, c === 6 ? D.verdicts[A.verdict[a]] : ""));
      });
      facets.forEach(function (f) { row.appendChild(el("td", facetValues(f, a).join(", "))); });
      rows.appendChild(row);
    }
    body.replaceChildren(rows);
    var pager = document.getElementById("pager");
    pager.replaceChildren(el("span", list.length + " annotations" + (state.members ? " (" + state.members.length + " in the cell)" : "") +
      (pages > 1 ? "; page " + (state.page + 1) + " of " + pages + " " : " ")));
    [["previous page", -1], ["next page", 1]].forEach(function (p) {
      if (pages < 2) return;
      var b = el("button", p[0]); b.type = "button";
      b.addEventListener("click", function () { state.page = Math.min(pages - 1, Math.max(0, state.page + p[1])); state.current = state.page * PAGE; renderList(); renderCase(); });
      pager.appendChild(b);
    });
    setStatus(state.list.length ? "" : "No annotation of this cell passes the filters.");
  }
  document.querySelector("#list tbody").addEventListener("click", function (event) {
    var row = event.target.closest("tr");
    if (!row) return;
    move(parseInt(row.dataset.index, 10) - state.current);
  });
  function move(step) {
    if (!state.list.length) return;
    var t = performance.now();
    state.current = Math.min(state.list.length - 1, Math.max(0, state.current + step));
    renderList(); renderCase();
    var row = document.querySelector("#list tr.current");
    if (row) row.scrollIntoView({block: "nearest"});
    timings.move = performance.now() - t;
    painted("movePainted", t, state.current);
  }
  document.addEventListener("keydown", function (event) {
    var tag = event.target && event.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "j" || event.key === "ArrowDown") { move(1); event.preventDefault(); }
    if (event.key === "k" || event.key === "ArrowUp") { move(-1); event.preventDefault(); }
  });

  /* ---- one case: its document, highlighted, and every annotation at that place ---- */
  function annotationsOf(doc) {
    if (!docAnnotations) {
      docAnnotations = {};
      for (var a = 0; a < N; a++) (docAnnotations[A.doc[a]] = docAnnotations[A.doc[a]] || []).push(a);
    }
    return docAnnotations[doc] || [];
  }
  function judgementsText(a) {
    var parts = [];
    for (var i = J.offsets[a]; i < J.offsets[a + 1]; i++) {
      var text = D.workers[J.worker[i]] + ": " + D.outcomes[J.outcome[i]];
      if (J.newLink[i] >= 0) text += " -> " + D.links[J.newLink[i]];
      if (J.flags[i] & 1) text += " (control)";
      if (J.flags[i] & 2) text += " (excluded worker)";
      parts.push(text);
    }
    return parts;
  }
  function judgementsNode(a) {
    var box = el("span");
    for (var i = J.offsets[a]; i < J.offsets[a + 1]; i++) {
      var line = el("div");
      line.appendChild(el("span", D.workers[J.worker[i]] + ": "));
      line.appendChild(el("span", D.outcomes[J.outcome[i]], D.outcomes[J.outcome[i]]));
      if (J.newLink[i] >= 0) { line.appendChild(el("span", " \u2192 ")); line.appendChild(linkNode(D.links[J.newLink[i]])); }
      if (J.flags[i] & 1) line.appendChild(el("span", " (control)", "muted"));
      if (J.flags[i] & 2) line.appendChild(el("span", " (excluded worker)", "muted"));
      box.appendChild(line);
    }
    if (J.offsets[a] === J.offsets[a + 1]) box.appendChild(el("span", "not judged", "muted"));
    return box;
  }
  function textNode(doc, shown, caseRow) {
    var box = el("div", null, "doc"), text = D.docs.text[doc];
    if (text === null) { box.appendChild(el("span", "(this document's text is not in the study: " + D.surface[caseRow] + ")", "muted")); return box; }
    var cps = Array.from(text), cuts = [0, cps.length];
    shown.forEach(function (a) { cuts.push(A.start[a], A.end[a]); });
    cuts = Array.from(new Set(cuts)).filter(function (c) { return c >= 0 && c <= cps.length; }).sort(function (x, y) { return x - y; });
    for (var i = 0; i + 1 < cuts.length; i++) {
      var from = cuts[i], to = cuts[i + 1], piece = cps.slice(from, to).join(""), over = [], isCase = false;
      shown.forEach(function (a) {
        if (A.start[a] <= from && A.end[a] >= to && A.start[a] < A.end[a]) { over.push(a); if (a === caseRow) isCase = true; }
      });
      if (!over.length) { box.appendChild(document.createTextNode(piece)); continue; }
      var m = el("mark", piece, (isCase ? "case " : "") + (over.length > 1 ? "d" + Math.min(3, over.length) : ""));
      m.title = over.map(function (a) { return D.systems[A.system[a]] + ": " + (A.link[a] >= 0 ? D.links[A.link[a]] : "") + " (" + D.verdicts[A.verdict[a]] + ")"; }).join("\n");
      box.appendChild(m);
    }
    return box;
  }
  function placeTable(a, around) {
    var table = el("table"), head = el("tr");
    ["system", "span", "surface", "link", "verdict", "judgements"].concat(facets.map(function (f) { return f.name; }))
      .forEach(function (c) { head.appendChild(el("th", c)); });
    table.appendChild(head);
    around.forEach(function (b) {
      var row = el("tr", null, b === a ? "current" : "");
      row.appendChild(el("td", D.systems[A.system[b]] + (A.origin[b] ? " (" + D.origins[A.origin[b]] + ")" : "")));
      row.appendChild(el("td", A.start[b] + "\u2013" + A.end[b]));
      row.appendChild(el("td", D.surface[b]));
      var link = el("td"); if (A.link[b] >= 0) link.appendChild(linkNode(D.links[A.link[b]])); row.appendChild(link);
      row.appendChild(el("td", D.verdicts[A.verdict[b]], D.verdicts[A.verdict[b]]));
      var judged = el("td"); judged.appendChild(judgementsNode(b)); row.appendChild(judged);
      facets.forEach(function (f) {
        var cell = el("td");
        facetValues(f, b).forEach(function (v) { cell.appendChild(el("span", v, "flag")); });
        row.appendChild(cell);
      });
      table.appendChild(row);
    });
    return table;
  }
  function sideBySide(a, doc, others) {
    var systems = [];
    others.forEach(function (b) { if (systems.indexOf(A.system[b]) < 0) systems.push(A.system[b]); });
    systems.sort(function (x, y) { return x - y; });
    if (state.left === null || systems.indexOf(state.left) < 0) state.left = A.system[a];
    if (state.right === null || systems.indexOf(state.right) < 0 || state.right === state.left)
      state.right = systems.filter(function (s) { return s !== state.left; })[0];
    var box = el("div"), bar = el("div"), sides = el("div", null, "sides");
    box.appendChild(el("h3", "Two systems side by side (the case outlined in both)"));
    ["left", "right"].forEach(function (side) {
      var s = el("select"); s.id = "side-" + side;
      systems.forEach(function (code) { var o = el("option", D.systems[code]); o.value = String(code); s.appendChild(o); });
      if (state[side] !== undefined) s.value = String(state[side]);
      s.addEventListener("change", function () { state[side] = parseInt(s.value, 10); renderCase(); });
      var label = el("label", side + " "); label.appendChild(s); bar.appendChild(label);
    });
    box.appendChild(bar);
    ["left", "right"].forEach(function (side) {
      var code = state[side], col = el("div");
      if (code === undefined) return;
      col.appendChild(el("h3", D.systems[code]));
      col.appendChild(textNode(doc, others.filter(function (b) { return A.system[b] === code; }).concat(A.system[a] === code ? [] : [a]), a));
      sides.appendChild(col);
    });
    box.appendChild(sides);
    return box;
  }
  function renderCase() {
    var pane = document.getElementById("casepane");
    if (state.current < 0) { pane.replaceChildren(el("p", "No annotation to show.", "hint")); return; }
    var a = state.list[state.current], doc = A.doc[a], others = annotationsOf(doc);
    var around = others.filter(function (b) { return A.start[b] < Math.max(A.end[a], A.start[a] + 1) && Math.max(A.end[b], A.start[b] + 1) > A.start[a]; });
    pane.replaceChildren(
      el("h2", "Case " + (state.current + 1) + " of " + state.list.length + ": \u201c" + D.surface[a] + "\u201d"),
      el("p", D.datasets[A.dataset[a]] + " \u00b7 document " + D.docs.id[doc] + " \u00b7 " + D.systems[A.system[a]] +
        " \u00b7 code points " + A.start[a] + "\u2013" + A.end[a], "hint"),
      el("h3", "Every annotation at this place"), placeTable(a, around),
      el("h3", "The document (the case outlined; every annotation of every system marked)"), textNode(doc, others, a),
      sideBySide(a, doc, others));
  }

  /* ---- export: the current list as CSV ---- */
  function csvCell(value) {
    var text = String(value === null || value === undefined ? "" : value);
    if (/^[=+\-@\t\r]/.test(text)) text = "'" + text;  /* no formula in a spreadsheet */
    return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }
  function exportCsv() {
    var lines = [["dataset", "doc_id", "system", "start", "end", "surface", "link", "verdict", "judgements"]
      .concat(facets.map(function (f) { return f.name; })).map(csvCell).join(",")];
    for (var i = 0; i < state.list.length; i++) {
      var a = state.list[i];
      lines.push([D.datasets[A.dataset[a]], D.docs.id[A.doc[a]], D.systems[A.system[a]], A.start[a], A.end[a], D.surface[a],
        A.link[a] >= 0 ? D.links[A.link[a]] : "", D.verdicts[A.verdict[a]], judgementsText(a).join("; ")]
        .concat(facets.map(function (f) { return facetValues(f, a).join("; "); })).map(csvCell).join(","));
    }
    var blob = new Blob([lines.join("\r\n") + "\r\n"], {type: "text/csv;charset=utf-8"}), link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = "explorer-" + (state.cell >= 0 ? D.cells.ids[state.cell].replace(/[^A-Za-z0-9._-]+/g, "_") : "all") + ".csv";
    document.body.appendChild(link); link.click(); link.remove();
    setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
  }

  buildControls();
  window.addEventListener("hashchange", fromHash);
  fromHash();
  timings.firstScreen = performance.now() - t0;
  document.body.dataset.ready = "1";
  painted("firstPaint", 0, "ready");
})();
