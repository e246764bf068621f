// ptxc HTML report (ptxc/html_report.py; docs/report.md): displays the JSON
// model embedded in <script id="ptxc-data">; computes no number of its own.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("ptxc-data").textContent);
  const $ = (sel, root) => (root || document).querySelector(sel);
  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const fmt = (v) => {
    if (v === null || v === undefined) return "-";
    if (typeof v === "number" && !Number.isInteger(v)) return v.toFixed(2);
    return String(v);
  };

  // ------------------------------------------------------- kernel table
  const table = $("#kernels");
  const head = el("tr");
  head.appendChild(el("th", { "data-key": "display" }, "Kernel"));
  for (const [key, title] of data.columns) head.appendChild(el("th", { "data-key": key }, title));
  table.querySelector("thead").appendChild(head);
  const body = table.querySelector("tbody");
  data.kernels.forEach((k, i) => {
    const tr = el("tr", { "data-kernel": String(i) });
    tr.appendChild(el("td", { "data-key": "display", "data-value": k.display }, k.display));
    for (const [key] of data.columns) {
      const v = k.counters[key];
      tr.appendChild(el("td", { class: "num", "data-key": key,
                                "data-value": v === null || v === undefined ? "" : String(v) }, fmt(v)));
    }
    tr.addEventListener("click", () => show(i));
    body.appendChild(tr);
  });
  let sortKey = null, sortDir = 1;
  head.querySelectorAll("th").forEach((th) => th.addEventListener("click", () => {
    const key = th.dataset.key;
    sortDir = key === sortKey ? -sortDir : (key === "display" ? 1 : -1);
    sortKey = key;
    head.querySelectorAll("th").forEach((h) => h.classList.remove("sorted-asc", "sorted-desc"));
    th.classList.add(sortDir > 0 ? "sorted-asc" : "sorted-desc");
    const rows = Array.from(body.rows);
    const val = (tr) => tr.querySelector(`td[data-key="${key}"]`).dataset.value;
    rows.sort((a, b) => {
      const x = val(a), y = val(b);
      const nx = parseFloat(x), ny = parseFloat(y);
      if (x === "" || y === "") return (x === "") - (y === "");
      if (!isNaN(nx) && !isNaN(ny) && key !== "display") return sortDir * (nx - ny);
      return sortDir * x.localeCompare(y);
    });
    rows.forEach((r) => body.appendChild(r));
  }));

  // ------------------------------------------------------- one kernel
  function heat(value, max, rgb) {
    if (!value || !max) return "";
    const a = Math.min(1, value / max) * 0.55 + 0.05;
    return `rgba(${rgb},${a.toFixed(3)})`;
  }

  function codeRow(n, text, counts, title, bg, cls) {
    const tr = el("tr", { class: cls || "", "data-line": String(n) });
    if (title) tr.title = title;
    tr.appendChild(el("td", { class: "n" }, String(n)));
    for (const c of counts) tr.appendChild(el("td", { class: "c" }, c));
    const code = el("td", {}, text);
    if (bg) code.style.background = bg;
    tr.appendChild(code);
    return tr;
  }

  function headRow(names) {
    const tr = el("tr", { class: "head" });
    for (const n of names) tr.appendChild(el("th", {}, n));
    return tr;
  }

  function ptxTable(k) {
    const t = el("table", { class: "code ptx" });
    t.appendChild(headRow(["line", "warps", "PTX"]));
    const max = Math.max(1, ...k.ptx.map((l) => l.warp_execs || 0));
    for (const l of k.ptx) {
      const has = l.warp_execs !== undefined;
      let title = "", bg = "";
      if (has) {
        title = `block ${l.block}: ${l.warp_execs} warp executions, ${l.thread_execs} thread executions`;
        if (l.branch_execs !== undefined) title += `; branch: ${l.divergent} of ${l.branch_execs} divergent`;
        if (l.memory && l.memory.requests) title += `; ${l.memory.space}: ${l.memory.requests} requests, ${l.memory.transactions} transactions, efficiency ${fmt(l.memory.efficiency)}%`;
        if (l.source) title += `\nsource: ${l.source}`;
        bg = l.divergent ? heat(l.divergent, l.branch_execs, "217,83,79")
           : (l.memory && l.memory.efficiency !== null && l.memory.efficiency < 100) ? heat(100 - l.memory.efficiency, 100, "74,120,194")
           : heat(l.warp_execs, max, "240,173,78");
      }
      const tr = codeRow(l.line, l.text, [has ? String(l.warp_execs) : ""], title, bg, has ? "hit" : "");
      if (l.source) tr.dataset.source = l.source.split(" (")[0];
      t.appendChild(tr);
    }
    return t;
  }

  function launchStats(k) {
    const s = k.launch;
    const box = el("div", { class: "stats", id: "launch-stats" });
    if (!s) return box;
    const dims = (d) => d.join("x");
    const items = [["GPU model", s.gpu], ["grid", dims(s.grid)], ["block", dims(s.block)],
                   ["registers/thread", `${s.registers} (${s.registers_source})`],
                   ["static shared", s.static_shared === null ? "-" : `${s.static_shared} B`],
                   ["dynamic shared", `${s.dynamic_shared} B`]];
    if (s.occupancy === null) items.push(["occupancy", `- (${s.why})`]);
    else items.push(["occupancy", `${fmt(s.occupancy)}% (${s.warps_per_sm} of ${s.max_warps_per_sm} warps, ` +
                     `${s.blocks_per_sm} blocks/SM; limited by ${s.limiters.join(", ")})`]);
    for (const [name, value] of items) {
      const item = el("span", { class: "stat", "data-stat": name });
      item.appendChild(el("b", {}, name + " "));
      item.appendChild(document.createTextNode(value));
      box.appendChild(item);
    }
    return box;
  }

  function noLineTable(k) {
    const r = k.no_line;
    const wrap = el("div");
    if (!r) return wrap;
    wrap.appendChild(el("h3", {}, "Instructions without a CUDA line"));
    const t = el("table", { class: "code cuda", id: "no-line" });
    t.appendChild(headRow(["", "inst", "div", "mem eff", ""]));
    const tr = codeRow("-", `${r.instructions} PTX instructions with no .loc line ` +
                       `(${r.thread_inst_executed} thread instructions; PTX lines ${r.ptx_lines.join(" ")})`,
                       [String(r.inst_executed), r.divergent_branch ? String(r.divergent_branch) : "",
                        r.memory_efficiency !== null ? fmt(r.memory_efficiency) + "%" : ""], "", "", "hit");
    tr.dataset.inst = String(r.inst_executed);
    t.appendChild(tr);
    wrap.appendChild(t);
    return wrap;
  }

  function sourceTables(k) {
    const wrap = el("div");
    if (!k.has_lines) {
      wrap.appendChild(el("p", { class: "empty" }, "The PTX has no .loc line information: compile with nvcc -lineinfo (or -G) for the source view."));
      return wrap;
    }
    for (const f of k.source) {
      wrap.appendChild(el("h3", {}, f.file + (f.found ? "" : " (source file not found: lines with counts only)")));
      const t = el("table", { class: "code cuda", "data-file": f.file });
      t.appendChild(headRow(["line", "inst", "div", "mem eff", "CUDA source"]));
      const max = Math.max(1, ...f.lines.map((l) => (l.row ? l.row.inst_executed : 0)));
      for (const l of f.lines) {
        const r = l.row;
        let title = "", bg = "", counts = ["", "", ""];
        if (r) {
          title = `${f.file}:${l.line}\ninst_executed ${r.inst_executed}, thread_inst_executed ${r.thread_inst_executed}, warp efficiency ${fmt(r.warp_execution_efficiency)}%` +
            `\nbranches ${r.branch}, divergent ${r.divergent_branch}` +
            (r.mem_requests ? `\nmemory: ${r.mem_requests} requests, ${r.mem_transactions} transactions, efficiency ${fmt(r.memory_efficiency)}%, ${r.wasted_bytes} bytes wasted` : "") +
            `\nPTX lines ${r.ptx_lines.join(" ")}`;
          counts = [String(r.inst_executed), r.divergent_branch ? String(r.divergent_branch) : "",
                    r.memory_efficiency !== null ? fmt(r.memory_efficiency) + "%" : ""];
          bg = r.divergent_branch ? heat(r.divergent_branch, r.branch, "217,83,79")
             : (r.memory_efficiency !== null && r.memory_efficiency < 100) ? heat(100 - r.memory_efficiency, 100, "74,120,194")
             : heat(r.inst_executed, max, "240,173,78");
        }
        const tr = codeRow(l.line, l.text, counts, title, bg, r ? "hit" : "");
        tr.dataset.source = `${f.file}:${l.line}`;
        if (r) tr.addEventListener("click", () => link(tr.dataset.source));
        t.appendChild(tr);
      }
      wrap.appendChild(t);
    }
    wrap.appendChild(noLineTable(k));
    return wrap;
  }

  function link(where) {
    document.querySelectorAll("tr.linked").forEach((r) => r.classList.remove("linked"));
    document.querySelectorAll(`#detail tr[data-source="${CSS.escape(where)}"]`).forEach((r) => r.classList.add("linked"));
    const first = document.querySelector(`#detail table.ptx tr.linked`);
    if (first) first.scrollIntoView({ block: "nearest" });
  }

  function show(i) {
    const k = data.kernels[i];
    body.querySelectorAll("tr").forEach((r) => r.classList.toggle("selected", r.dataset.kernel === String(i)));
    const d = $("#detail");
    d.hidden = false;
    $("#detail-title").textContent = `Kernel ${k.display}`;
    const old = $("#launch-stats");
    if (old) old.remove();
    $("#detail-title").after(launchStats(k));
    const cfg = $("#panel-cfg");
    cfg.innerHTML = "";
    for (const c of k.cfg) {
      cfg.appendChild(el("h3", {}, `CFG of ${c.function}`));
      const w = el("div", { class: "cfg-wrap" });
      w.innerHTML = c.svg;
      cfg.appendChild(w);
    }
    const src = $("#panel-source");
    src.innerHTML = "";
    const side = el("div", { class: "side" });
    const left = el("div", { class: "cuda-side" });
    left.appendChild(sourceTables(k));
    const right = el("div", { class: "ptx-side" });
    right.appendChild(el("h3", {}, "PTX"));
    right.appendChild(ptxTable(k));
    side.appendChild(left);
    side.appendChild(right);
    src.appendChild(side);
    $("#panel-plots").innerHTML =
      `<h3>Sectors per request, per global memory instruction</h3><div class="plot-wrap">${k.sectors_plot}</div>` +
      `<h3>Divergence per branch</h3><div class="plot-wrap">${k.divergence_plot}</div>`;
    select(currentTab);
  }

  let currentTab = "cfg";
  function select(tab) {
    currentTab = tab;
    document.querySelectorAll(".tabs button").forEach((b) => b.classList.toggle("active", b.dataset.tab === tab));
    document.querySelectorAll(".panel").forEach((p) => p.classList.toggle("active", p.id === `panel-${tab}`));
  }
  document.querySelectorAll(".tabs button").forEach((b) => b.addEventListener("click", () => select(b.dataset.tab)));
  if (data.kernels.length) show(0);
})();
