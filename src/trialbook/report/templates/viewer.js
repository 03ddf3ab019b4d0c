"use strict";
(function () {
  // Every string from the run goes through textContent: nothing the agent wrote is ever parsed as HTML.
  var INDEX = JSON.parse(document.getElementById("index").textContent);
  var cache = {};
  var FOLD_LINES = 25;
  var currentSteps = {};

  function trial(key) {
    if (!(key in INDEX.trials)) return null;
    if (!(key in cache)) cache[key] = JSON.parse(document.getElementById("t" + INDEX.trials[key]).textContent);
    return cache[key];
  }
  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) for (var name in attrs) {
      if (name === "text") node.textContent = attrs[name];
      else if (name === "cls") node.className = attrs[name];
      else node.setAttribute(name, attrs[name]);
    }
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }
  function money(v) { return v === null || v === undefined ? null : "$" + v.toFixed(4); }
  function costText(c) {
    var parts = [];
    if (c.reported_usd !== null && c.reported_usd !== undefined) parts.push(money(c.reported_usd) + " reported");
    if (c.estimated_usd !== null && c.estimated_usd !== undefined) parts.push(money(c.estimated_usd) + " estimated");
    if (!parts.length) parts.push("unknown");
    if (c.unpriced_models && c.unpriced_models.length) parts.push("no price for " + c.unpriced_models.join(", "));
    return parts.join(" · ");
  }
  function cutNote(t) { return t && t.cut ? el("div", {cls: "dim small", text: t.cut + " more characters cut; see the raw files"}) : null; }
  function folded(t, cls) {
    if (!t) return el("span", {cls: "dim", text: "(none)"});
    var lines = t.text.split("\n");
    if (lines.length <= FOLD_LINES && t.text.length <= 3000) return el("div", null, el("pre", {cls: cls || "", text: t.text}), cutNote(t));
    var head = lines.slice(0, FOLD_LINES).join("\n");
    return el("div", null, el("pre", {cls: cls || "", text: head}),
      el("details", {cls: "fold"}, el("summary", {text: "show all " + lines.length + " lines"}), el("pre", {text: t.text})), cutNote(t));
  }
  function verdictBadge(passed) {
    var v = passed === true ? "pass" : passed === false ? "fail" : "unknown";
    return el("span", {cls: "badge v-" + v, text: v});
  }
  function kv(pairs) {
    var dl = el("dl", {cls: "kv"});
    pairs.forEach(function (p) { if (p[1] !== null && p[1] !== undefined && p[1] !== "") { dl.appendChild(el("dt", {text: p[0]})); dl.appendChild(el("dd", null, p[1])); } });
    return dl;
  }
  function str(v) { return v === null || v === undefined ? "unknown" : String(v); }

  // ---- trial page -------------------------------------------------------------------------------
  function assertionsTable(t) {
    if (!t.assertions.length) return el("p", {cls: "dim", text: "This eval has no assertions."});
    var body = el("tbody");
    t.assertions.forEach(function (a) {
      var ok = a.passed;
      body.appendChild(el("tr", {cls: ok ? "" : "failed-assertion"},
        el("td", {cls: ok ? "ok" : "bad", text: ok ? "✓ pass" : "✗ fail"}), el("td", {cls: "id", text: a.label}),
        el("td", null, el("pre", {text: a.expected})), el("td", null, el("pre", {text: a.actual}),
          a.error ? el("div", {cls: "failure", text: "check error: " + a.error}) : null)));
    });
    return el("table", {cls: "assertions"}, el("thead", null, el("tr", null, el("th", {text: "result"}), el("th", {text: "check"}),
      el("th", {text: "expected"}), el("th", {text: "actual"}))), body);
  }
  function diffBlock(text) {
    var pre = el("pre", {cls: "diff"});
    text.split("\n").forEach(function (line) {
      var cls = line.indexOf("@@") === 0 ? "hunk" : line.indexOf("+++") === 0 || line.indexOf("---") === 0 ? "" : line[0] === "+" ? "add" : line[0] === "-" ? "del" : "";
      pre.appendChild(el("span", {cls: cls, text: line}));
    });
    return pre;
  }
  function side(s) { return s ? s.size + " bytes, sha256 " + s.sha256.slice(0, 12) : "absent"; }
  function changesSection(t) {
    var c = t.changes;
    if (!c) return el("p", {cls: "dim", text: "No change record for this trial (recorded by trialbook from this version on)."});
    var wrap = el("div", {cls: "changes"});
    wrap.appendChild(el("p", null, c.counts.created + " created, " + c.counts.modified + " modified, " + c.counts.deleted + " deleted"
      + (c.omitted ? " (" + c.omitted + " more paths not listed)" : "")));
    if (!c.files.length) wrap.appendChild(el("p", {cls: "dim", text: "The agent left the template unchanged."}));
    c.files.forEach(function (f, i) {
      var d = el("details", i < 8 ? {open: ""} : null, el("summary", null, el("span", {cls: "badge " + (f.status === "deleted" ? "v-fail" : f.status === "created" ? "v-pass" : "v-cached"), text: f.status}), " ", el("code", {text: f.path})));
      if (f.binary) d.appendChild(el("p", {cls: "small", text: "binary: " + side(f.before) + " → " + side(f.after)}));
      else if (f.diff) { d.appendChild(diffBlock(f.diff)); if (f.diff_truncated) d.appendChild(el("div", {cls: "dim small", text: "diff cut at the size limit"})); }
      else d.appendChild(el("p", {cls: "dim small", text: side(f.before) + " → " + side(f.after)}));
      wrap.appendChild(d);
    });
    return wrap;
  }
  function timeline(t) {
    if (!t.calls.length) {
      var none = t.call_log ? "No shimmed command was called." : "No shims: this trial's commands were not recorded.";
      return el("p", {cls: "dim", text: none});
    }
    var end = 0;
    t.calls.forEach(function (c) { end = Math.max(end, (c.offset_ms || 0) + (c.duration_ms || 0)); });
    var body = el("tbody");
    t.calls.forEach(function (c, i) {
      var bar = el("div", {cls: "bar"});
      bar.style.left = (end ? (c.offset_ms || 0) / end * 100 : 0) + "%";
      bar.style.width = (end ? (c.duration_ms || 0) / end * 100 : 0) + "%";
      var code = c.exit_code === null ? (c.error || "no exit code") : "exit " + c.exit_code;
      body.appendChild(el("tr", {cls: c.exit_code === 0 ? "" : "failed-assertion"}, el("td", {cls: "num", text: String(i + 1)}),
        el("td", {cls: "num", text: c.offset_ms === null ? "?" : "+" + (c.offset_ms / 1000).toFixed(2) + "s"}),
        el("td", {cls: "id", text: c.argv.join(" ")}), el("td", {cls: c.exit_code === 0 ? "ok" : "bad", text: code}),
        el("td", {cls: "num", text: c.duration_ms === null ? "unknown" : c.duration_ms.toFixed(0) + " ms"}),
        el("td", {cls: "dim small", text: c.mode || ""}), el("td", null, el("div", {cls: "track"}, bar))));
    });
    return el("table", {cls: "timeline"}, el("thead", null, el("tr", null, el("th", {text: "#"}), el("th", {text: "start"}),
      el("th", {text: "command"}), el("th", {text: "exit"}), el("th", {text: "took"}), el("th", {text: "shim"}), el("th", {text: "timeline"}))), body);
  }
  function toolCall(call) {
    var status = call.success === true ? "✓" : call.success === false ? "✗" : "?";
    var step = currentSteps[call.id] ? currentSteps[call.id] + ": " : "";
    return el("details", {cls: "tool"}, el("summary", null, status + " " + step + call.name + "  " + (call.summary || "")),
      el("div", {cls: "small dim", text: "arguments"}), folded(call.arguments),
      el("div", {cls: "small dim", text: "output"}), folded(call.result),
      call.output_file ? el("div", {cls: "small"}, "whole output: ", el("a", {cls: "output-file", href: call.output_file.href, text: call.output_file.name})) : null,
      call.error ? el("div", {cls: "failure", text: call.error}) : null,
      call.complete === false ? el("div", {cls: "failure", text: "evidence incomplete for this call"}) : null);
  }
  function transcript(t) {
    var wrap = el("div");
    t.turns.forEach(function (turn, i) {
      if (i === 0 && turn.role === "user") return; // the prompt has its own section
      var box = el("div", {cls: "turn " + turn.role}, el("div", {cls: "role", text: turn.role}));
      if (turn.content) box.appendChild(folded(turn.content));
      turn.tools.forEach(function (c) { box.appendChild(toolCall(c)); });
      wrap.appendChild(box);
    });
    if (!wrap.childNodes.length) wrap.appendChild(el("p", {cls: "dim", text: "No turns were recorded."}));
    return wrap;
  }
  function outsideSection(t, row) {
    var wrap = el("div", {cls: "outside"});
    if (t.network_refused === null && t.outside_writes === null) {
      var how = row && row.isolation && row.isolation !== "none" ? "under isolation " + row.isolation + " for this agent" : "this trial ran without isolation";
      wrap.appendChild(el("p", {cls: "dim", text: "Not watched (" + how + "): what the agent reached or wrote outside its sandbox is not known."}));
      return wrap;
    }
    var refused = t.network_refused || [];
    wrap.appendChild(el("p", {cls: "refused-count", text: t.network_refused === null ? "Network: not watched." : refused.length ? "Connections refused (" + refused.length + "):" : "Network: nothing refused."}));
    if (refused.length) {
      var ul = el("ul", {cls: "refused"});
      refused.forEach(function (c) { ul.appendChild(el("li", null, el("code", {text: (c.host.indexOf(":") >= 0 ? "[" + c.host + "]" : c.host) + ":" + c.port}))); });
      wrap.appendChild(ul);
    }
    var writes = t.outside_writes || [];
    wrap.appendChild(el("p", {cls: "writes-count", text: t.outside_writes === null ? "Writes: not watched." : writes.length ? "Written outside the sandbox (" + writes.length + "):" : "Nothing written outside the sandbox."}));
    if (writes.length) {
      var body = el("tbody");
      writes.forEach(function (w) { body.appendChild(el("tr", null, el("td", {cls: "id", text: w.path}), el("td", {cls: "num", text: w.removed ? "removed" : w.size === 1 ? "1 byte" : w.size + " bytes"}))); });
      wrap.appendChild(el("table", {cls: "writes"}, el("thead", null, el("tr", null, el("th", {text: "path"}), el("th", {text: "size"}))), body));
    }
    return wrap;
  }
  function rowOf(t) { return INDEX.rows[t.test] || null; }
  function renderTrial(key) {
    var root = document.getElementById("trial");
    root.textContent = "";
    var t = trial(key);
    if (!t) { root.appendChild(el("p", {cls: "failure", text: "No trial " + key + " in this report."})); return; }
    var row = rowOf(t);
    currentSteps = t.literal_steps || {};
    root.appendChild(el("h2", null, t.test.replace("::", " × ") + " · trial " + t.trial + " ", verdictBadge(t.passed)));
    if (row && row.compare && t.passed === false) root.appendChild(el("p", null, el("a", {href: "#compare=" + row.compare[0] + "|" + key, text: "compare with a passing trial"})));
    if (t.literal_departure) root.appendChild(el("div", {cls: "note", text: "Left the guide's literal path at " + t.literal_departure}));
    var tokens = Object.keys(t.tokens).map(function (k) { return k.replace("_tokens", "") + " " + t.tokens[k]; }).join(", ");
    root.appendChild(kv([["agent", t.agent + (t.agent_version ? " " + t.agent_version : "")], ["model", t.model], ["stop reason", str(t.stop_reason)],
      ["session", t.success ? "ran to completion" : "did not complete"], ["error", t.error], ["agent time", t.duration_ms === null ? "unknown" : (t.duration_ms / 1000).toFixed(2) + "s (the agent's own run; the overview's trial time adds the sandbox and the checks)"],
      ["cost", costText(t.cost)], ["tokens", tokens || "unknown"], ["isolation", row && row.isolation], ["capture errors", t.capture_errors.join("; ")], ["call log", t.call_log_problems.join("; ")]]));
    root.appendChild(el("h3", {text: "Assertions"})); root.appendChild(assertionsTable(t));
    root.appendChild(el("h3", {text: "What the agent changed"})); root.appendChild(changesSection(t));
    root.appendChild(el("h3", {text: "Shimmed calls"})); root.appendChild(timeline(t));
    root.appendChild(el("h3", {text: "Outside the sandbox"})); root.appendChild(outsideSection(t, row));
    root.appendChild(el("h3", {text: "Prompt"})); root.appendChild(el("details", null, el("summary", {text: "rendered prompt (masked)"}), folded(t.prompt)));
    root.appendChild(el("h3", {text: "Transcript"})); root.appendChild(transcript(t));
    if (t.usage.length) {
      var ub = el("tbody");
      t.usage.forEach(function (u) { ub.appendChild(el("tr", null, el("td", {text: str(u.model)}), el("td", {cls: "num", text: str(u.input_tokens)}), el("td", {cls: "num", text: str(u.output_tokens)}), el("td", {cls: "num", text: str(u.cache_read_tokens)}))); });
      root.appendChild(el("h3", {text: "Usage"}));
      root.appendChild(el("table", null, el("thead", null, el("tr", null, el("th", {text: "model"}), el("th", {text: "input"}), el("th", {text: "output"}), el("th", {text: "cache read"}))), ub));
    }
    root.appendChild(el("h3", {text: "Raw files"}));
    var ul = el("ul");
    t.raw.forEach(function (r) { ul.appendChild(el("li", null, el("a", {href: r.href, text: r.name}))); });
    root.appendChild(t.raw.length ? ul : el("p", {cls: "dim", text: "No raw files found beside the report."}));
  }

  // ---- pass vs fail ----------------------------------------------------------------------------
  function align(a, b) {
    // Longest common subsequence over the command lines, then walk it to pair equal calls.
    var n = a.length, m = b.length, i, j, L = [];
    for (i = 0; i <= n; i++) { L.push(new Array(m + 1).fill(0)); }
    for (i = n - 1; i >= 0; i--) for (j = m - 1; j >= 0; j--) L[i][j] = a[i] === b[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
    var out = []; i = 0; j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[i] === b[j]) { out.push([i, j]); i++; j++; }
      else if (j >= m || (i < n && L[i + 1][j] >= L[i][j + 1])) { out.push([i, null]); i++; }
      else { out.push([null, j]); j++; }
    }
    return out;
  }
  function callText(c) { return c.argv.join(" ") + (c.exit_code === 0 ? "" : "  ⇒ exit " + str(c.exit_code)); }
  function renderCompare(keys) {
    var root = document.getElementById("compare");
    root.textContent = "";
    var a = trial(keys[0]), b = trial(keys[1]);
    if (!a || !b) { root.appendChild(el("p", {cls: "failure", text: "Pick two trials of this report to compare."})); return; }
    var row = rowOf(a);
    root.appendChild(el("h2", {text: a.test.replace("::", " × ") + ": trial " + a.trial + " vs trial " + b.trial}));
    if (row && row.trial_keys.length > 2) {
      var pick = function (which) {
        var s = el("select", {id: "pick-" + which});
        row.trial_keys.forEach(function (k) { var o = el("option", {value: k, text: k.split("#")[1] + (trial(k).passed ? " (pass)" : " (fail)")}); if (k === keys[which]) o.selected = true; s.appendChild(o); });
        s.addEventListener("change", function () { var ks = keys.slice(); ks[which] = s.value; location.hash = "compare=" + ks.join("|"); });
        return s;
      };
      root.appendChild(el("p", null, "left ", pick(0), "  right ", pick(1)));
    }
    [a, b].forEach(function (t) { if (t.literal_departure) root.appendChild(el("div", {cls: "note", text: "trial " + t.trial + " left the guide's literal path at " + t.literal_departure})); });
    var ca = a.calls.map(callText), cb = b.calls.map(callText);
    var argv = function (c) { return c.argv.join(" "); };
    var pairs = align(a.calls.map(argv), b.calls.map(argv)), first = -1;
    var body = el("tbody");
    pairs.forEach(function (p, idx) {
      // The same command with another exit code is paired on one row, and still a divergence.
      var same = p[0] !== null && p[1] !== null && a.calls[p[0]].exit_code === b.calls[p[1]].exit_code;
      if (!same && first < 0) first = idx;
      body.appendChild(el("tr", {cls: same ? "" : (first === idx ? "first-diverge diverge" : "diverge")},
        el("td", {cls: "id", text: p[0] === null ? "" : (p[0] + 1) + ". " + ca[p[0]]}), el("td", {cls: "id", text: p[1] === null ? "" : (p[1] + 1) + ". " + cb[p[1]]})));
    });
    root.appendChild(el("h3", {text: "Shimmed calls, aligned"}));
    root.appendChild(el("p", {cls: "small", id: "first-divergence", text: first < 0 ? "The call sequences are the same." : "First divergence at aligned row " + (first + 1) + "."}));
    root.appendChild(el("table", {cls: "aligned"}, el("thead", null, el("tr", null, el("th", null, "trial " + a.trial + " ", verdictBadge(a.passed)), el("th", null, "trial " + b.trial + " ", verdictBadge(b.passed)))), body));
    var files = {};
    [a, b].forEach(function (t, s) { ((t.changes && t.changes.files) || []).forEach(function (f) { files[f.path] = files[f.path] || [null, null]; files[f.path][s] = f; }); });
    var fb = el("tbody");
    Object.keys(files).sort().forEach(function (path) {
      var f = files[path], desc = function (x) { return x ? x.status + (x.after ? " (" + side(x.after) + ")" : "") : "unchanged"; };
      var same = f[0] && f[1] && f[0].status === f[1].status && JSON.stringify(f[0].after) === JSON.stringify(f[1].after);
      fb.appendChild(el("tr", {cls: same ? "" : "diverge"}, el("td", {cls: "id", text: path}), el("td", {text: desc(f[0])}), el("td", {text: desc(f[1])})));
    });
    root.appendChild(el("h3", {text: "File changes, aligned"}));
    root.appendChild(Object.keys(files).length ? el("table", null, el("thead", null, el("tr", null, el("th", {text: "path"}), el("th", {text: "trial " + a.trial}), el("th", {text: "trial " + b.trial}))), fb) : el("p", {cls: "dim", text: "Neither trial changed a file."}));
    root.appendChild(el("h3", {text: "Assertions"}));
    root.appendChild(el("div", {cls: "grid2"}, assertionsTable(a), assertionsTable(b)));
  }

  // ---- overview: filter and sort ----------------------------------------------------------------
  var tbody = document.querySelector("#overview tbody");
  function applyFilters() {
    var v = document.getElementById("f-verdict").value, ag = document.getElementById("f-agent").value;
    var q = document.getElementById("f-id").value.trim().toLowerCase(), shown = 0, rows = tbody.rows;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i], ok = (!v || r.dataset.verdict === v) && (!ag || r.dataset.agent === ag) && (!q || r.dataset.eval.toLowerCase().indexOf(q) >= 0);
      r.classList.toggle("hidden", !ok); if (ok) shown++;
    }
    document.getElementById("shown").textContent = shown + " of " + rows.length + " shown";
  }
  ["f-verdict", "f-agent", "f-id"].forEach(function (id) { document.getElementById(id).addEventListener("input", applyFilters); });
  document.querySelectorAll("#overview th[data-sort]").forEach(function (th) {
    th.addEventListener("click", function () {
      var key = th.dataset.sort, num = th.dataset.type === "num", asc = !th.classList.contains("asc");
      document.querySelectorAll("#overview th").forEach(function (h) { h.classList.remove("asc", "desc"); });
      th.classList.add(asc ? "asc" : "desc");
      var rows = Array.prototype.slice.call(tbody.rows);
      rows.sort(function (x, y) {
        var a = x.dataset[key], b = y.dataset[key];
        if (num) { // unknown values sort last either way
          if (a === "" || b === "") return a === b ? 0 : a === "" ? 1 : -1;
          return (asc ? 1 : -1) * (parseFloat(a) - parseFloat(b));
        }
        return (asc ? 1 : -1) * a.localeCompare(b);
      });
      rows.forEach(function (r) { tbody.appendChild(r); });
    });
  });

  // ---- routing ------------------------------------------------------------------------------------
  function show(view) {
    document.querySelectorAll(".view").forEach(function (s) { s.classList.toggle("hidden", s.id !== "view-" + view); });
    document.querySelectorAll("nav a").forEach(function (a) { a.classList.toggle("active", a.dataset.view === view); });
  }
  function route() {
    var h = decodeURIComponent(location.hash.slice(1));
    var nav;
    if (h.indexOf("trial=") === 0) { renderTrial(h.slice(6)); nav = document.getElementById("nav-trial"); show("trial"); }
    else if (h.indexOf("compare=") === 0) { renderCompare(h.slice(8).split("|")); nav = document.getElementById("nav-compare"); show("compare"); }
    else if (h === "history" && document.getElementById("view-history")) show("history");
    else show("overview");
    if (nav) { nav.classList.remove("hidden"); nav.setAttribute("href", "#" + h); }
    window.scrollTo(0, 0);
  }
  window.addEventListener("hashchange", route);
  applyFilters();
  route();
})();
