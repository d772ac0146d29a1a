// trnsim profile explorer: renders the JSON of <script id="profile-data"> (docs/profiler.md).
// No libraries, no network. A self-check result is written to <pre id="selftest">.
'use strict';
var ERRORS = [];
window.onerror = function (msg, src, line) { ERRORS.push(String(msg) + ' @' + line); };
(function () {
  var orig = console.error;
  console.error = function () {
    ERRORS.push(Array.prototype.map.call(arguments, String).join(' '));
    if (orig) orig.apply(console, arguments);
  };
})();

var CAUSES = ['none', 'dma', 'engine', 'barrier', 'unresolved'];
var COLORS = { tensor: '#4a7bd0', vector: '#3aa676', scalar: '#d08b2c', gpsimd: '#9b59b6', sync: '#7f8c8d', dma: '#c0504d' };

function $(id) { return document.getElementById(id); }
function el(tag, attrs, text) {
  var e = document.createElement(tag);
  if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function fmtNs(ns) {
  if (!isFinite(ns)) return '-';
  var a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
  if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
  if (a >= 1e3) return (ns / 1e3).toFixed(3) + ' us';
  return ns.toFixed(1) + ' ns';
}
function fmtNum(v, unit) {
  if (!isFinite(v)) return '-';
  var a = Math.abs(v), p = ['', 'K', 'M', 'G', 'T', 'P'], i = 0;
  while (a >= 1000 && i < p.length - 1) { a /= 1000; v /= 1000; i++; }
  return (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2)) + ' ' + p[i] + (unit || '');
}
function pct(v) { return isFinite(v) ? v.toFixed(1) + '%' : '-'; }
function table(headers, rows, opts) {
  var t = el('table'), th = el('thead'), tr = el('tr');
  headers.forEach(function (h, i) {
    var c = el('th', null, h);
    if (opts && opts.left && opts.left.indexOf(i) >= 0) c.className = 'l';
    tr.appendChild(c);
  });
  th.appendChild(tr); t.appendChild(th);
  var tb = el('tbody');
  rows.forEach(function (r, ri) {
    var row = el('tr');
    if (opts && opts.rowClass && opts.rowClass(ri)) row.className = opts.rowClass(ri);
    r.forEach(function (v, i) {
      var c = el('td');
      if (v instanceof Node) c.appendChild(v); else c.textContent = v;
      if (opts && opts.left && opts.left.indexOf(i) >= 0) c.className = 'l';
      row.appendChild(c);
    });
    tb.appendChild(row);
  });
  t.appendChild(tb);
  return t;
}
function bar(fraction, cls) {
  var b = el('span', { 'class': 'bar' + (cls ? ' ' + cls : '') });
  b.style.width = Math.max(1, Math.min(120, 120 * fraction)) + 'px';
  return b;
}
function srcName(run, s) {
  var x = run.sources[s];
  return x && (x.file || x.line) ? (x.file || '?') + ':' + x.line : '-';
}

var DATA = JSON.parse($('profile-data').textContent);
var RUN = DATA.runs[0];

// ------------------------------------------------------------------------------------------
// Summary

function card(parent, k, v) {
  var c = el('div', { 'class': 'card' });
  c.appendChild(el('div', { 'class': 'v' }, v));
  c.appendChild(el('div', { 'class': 'k' }, k));
  parent.appendChild(c);
}

function renderSummary(run, parent, heading) {
  parent.appendChild(el('h2', null, heading || 'Summary'));
  run.cores.forEach(function (core) {
    var m = core.metrics;
    if (run.cores.length > 1) parent.appendChild(el('h3', null, 'core ' + core.core));
    var cards = el('div', { 'class': 'cards' });
    card(cards, 'total time', fmtNs(m.total_ns));
    // A kernel without tensor-engine work (vector, scalar, DMA only) is bounded by something
    // else: lead with that engine and MBU instead of an MFU of 0%.
    var tensorWork = m.achieved_flops_per_s > 0;
    if (tensorWork) {
      card(cards, 'MFU (' + m.tensor_mode + ')', pct(m.mfu_percent));
      card(cards, 'HFU', pct(m.hfu_percent));
    }
    card(cards, 'MBU (HBM)', pct(m.mbu_percent));
    card(cards, 'bounding engine', m.bounding_engine + ' ' + pct(m.bounding_active_percent));
    if (!tensorWork) {
      core.tracks.forEach(function (t) {
        if (t.name === m.bounding_engine && t.peak_per_s > 0)
          card(cards, t.name + ' achieved / peak', fmtNum(t.achieved_per_s, t.unit) + ' / ' + fmtNum(t.peak_per_s, t.unit) + ' (' + pct(100 * t.achieved_per_s / t.peak_per_s) + ')');
      });
      if (m.bounding_engine === 'dma' && m.dma_peak_bytes_per_s > 0)
        card(cards, 'DMA (all queues) achieved / peak', fmtNum(m.achieved_dma_bytes_per_s, 'B/s') + ' / ' + fmtNum(m.dma_peak_bytes_per_s, 'B/s') + ' (' + pct(100 * m.achieved_dma_bytes_per_s / m.dma_peak_bytes_per_s) + ')');
      card(cards, 'tensor engine', 'no matmul work (MFU does not apply)');
    } else {
      card(cards, 'tensor achieved / peak', fmtNum(m.achieved_flops_per_s, 'FLOP/s') + ' / ' + fmtNum(m.peak_flops_per_s, 'FLOP/s'));
    }
    card(cards, 'HBM achieved / share', fmtNum(m.achieved_hbm_bytes_per_s, 'B/s') + ' / ' + fmtNum(m.hbm_bandwidth_bytes_per_s, 'B/s'));
    card(cards, 'dma_active_time_percent', pct(m.dma_active_time_percent));
    card(cards, 'average_dma_size', fmtNum(m.average_dma_size, 'B'));
    card(cards, 'mm_arithmetic_intensity', m.mm_arithmetic_intensity.toFixed(1) + ' FLOP/B');
    card(cards, 'peak_flops_bandwidth_ratio', m.peak_flops_bandwidth_ratio.toFixed(1) + ' FLOP/B');
    card(cards, 'throttled (power ramp)', fmtNs(m.throttled_ns));
    card(cards, 'sb_read / sb_write', fmtNum(m.sb_read_bytes, 'B') + ' / ' + fmtNum(m.sb_write_bytes, 'B'));
    parent.appendChild(cards);
    var rows = trackRows(core), totalRow = rows.totalRow;
    var row = el('div', { 'class': 'row2' });
    var box = el('div');
    box.appendChild(table(['engine / queue', 'instructions', 'busy', 'stalled', 'active time', 'achieved', 'peak', 'of peak'], rows,
      { left: [0, 4], rowClass: function (ri) { return ri === totalRow ? 'total' : ''; } }));
    if (totalRow >= 0) box.appendChild(el('div', { 'class': 'hint' }, 'DMA queues share the core\'s ' + m.dma_engines + ' DMA engines: a queue has no peak of its own; the engines\' peak bounds all queues together (busy = time some transfer is in flight).'));
    row.appendChild(box);
    if (core === run.cores[0]) {
      var cv = el('canvas', { id: parent.id === 'summary' ? 'roofline' : 'roofline-' + parent.id, width: 360, height: 240 });
      row.appendChild(cv);
      parent.appendChild(row);
      drawRoofline(cv, run, core);
    } else {
      parent.appendChild(row);
    }
  });
}

function activeCell(percent) {
  var cell = el('span');
  cell.appendChild(bar(percent / 100));
  cell.appendChild(document.createTextNode(' ' + pct(percent)));
  return cell;
}

// One row per queue, then "DMA (all queues)" against the DMA engines' peak after the last DMA
// queue (rows.totalRow is its index, -1 without DMA). A DMA queue's peak is 0: none of its own.
function trackRows(core) {
  var m = core.metrics, rows = [], totalRow = -1;
  core.tracks.forEach(function (t, ti) {
    rows.push([t.name, t.instructions, fmtNs(t.busy_ns), fmtNs(t.stalled_ns), activeCell(t.active_percent),
      t.unit ? fmtNum(t.achieved_per_s, t.unit) : '-', t.peak_per_s ? fmtNum(t.peak_per_s, t.unit) : '-',
      t.peak_per_s ? pct(100 * t.achieved_per_s / t.peak_per_s) : '-']);
    var next = core.tracks[ti + 1];
    if (t.engine === 'dma' && (!next || next.engine !== 'dma')) {
      totalRow = rows.length;
      rows.push(['DMA (all queues)', m.dma_transfers, fmtNs(m.total_ns * m.dma_active_time_percent / 100), '-',
        activeCell(m.dma_active_time_percent), fmtNum(m.achieved_dma_bytes_per_s, 'B/s'),
        m.dma_peak_bytes_per_s ? fmtNum(m.dma_peak_bytes_per_s, 'B/s') : '-',
        m.dma_peak_bytes_per_s ? pct(100 * m.achieved_dma_bytes_per_s / m.dma_peak_bytes_per_s) : '-']);
    }
  });
  rows.totalRow = totalRow;
  return rows;
}

// Log-log roofline: ceilings at the tensor peak and the HBM share; points per source line
// (FLOPs over on-chip bytes, FLOPs over busy time) and the whole run (FLOPs over HBM bytes).
function drawRoofline(cv, run, core) {
  var g = cv.getContext('2d'), W = cv.width, H = cv.height, L = 46, B = 26;
  var m = core.metrics, peak = m.peak_flops_per_s || 1, bw = m.hbm_bandwidth_bytes_per_s || 1;
  var pts = [];
  var ins = core.ins, perSrc = {};
  for (var i = 0; i < ins.n; i++) {
    if (!(ins.flops[i] > 0)) continue;
    var s = ins.src[i], p = perSrc[s] || (perSrc[s] = { f: 0, b: 0, t: 0 });
    p.f += ins.flops[i]; p.b += ins.bytes[i]; p.t += ins.occ[i];
  }
  for (var s2 in perSrc) {
    var q = perSrc[s2];
    if (q.b > 0 && q.t > 0) pts.push({ x: q.f / q.b, y: q.f / (q.t * 1e-9), c: '#4a7bd0', label: srcName(run, +s2) });
  }
  if (m.hbm_bytes > 0 && m.achieved_flops_per_s > 0) pts.push({ x: m.mm_arithmetic_intensity, y: m.achieved_flops_per_s, c: '#d9534f', label: 'run (HBM)' });
  var xmin = 0.1, xmax = 1e4, ymin = peak / 1e5, ymax = peak * 2;
  function X(v) { return L + (W - L - 8) * (Math.log10(Math.max(v, xmin)) - Math.log10(xmin)) / (Math.log10(xmax) - Math.log10(xmin)); }
  function Y(v) { return H - B - (H - B - 8) * (Math.log10(Math.max(v, ymin)) - Math.log10(ymin)) / (Math.log10(ymax) - Math.log10(ymin)); }
  g.fillStyle = '#fff'; g.fillRect(0, 0, W, H);
  g.strokeStyle = '#ccd'; g.strokeRect(L, 8, W - L - 8, H - B - 8);
  g.fillStyle = '#333'; g.font = '10px sans-serif';
  g.fillText('FLOP/byte', W / 2, H - 4);
  g.save(); g.translate(10, H / 2 + 20); g.rotate(-Math.PI / 2); g.fillText('FLOP/s', 0, 0); g.restore();
  for (var d = -1; d <= 4; d++) g.fillText('1e' + d, X(Math.pow(10, d)) - 8, H - B + 12);
  g.fillText(fmtNum(peak, ''), 2, Y(peak) + 3);
  g.strokeStyle = '#1f2a44'; g.beginPath();
  var ridge = peak / bw;
  g.moveTo(X(xmin), Y(bw * xmin)); g.lineTo(X(ridge), Y(peak)); g.lineTo(X(xmax), Y(peak)); g.stroke();
  g.fillText('HBM ' + fmtNum(bw, 'B/s'), X(xmin) + 4, Y(bw * xmin * 3) - 4);
  pts.forEach(function (p) { g.fillStyle = p.c; g.beginPath(); g.arc(X(p.x), Y(p.y), 4, 0, 7); g.fill(); });
  // Legend: a source line's point uses on-chip bytes (SBUF/PSUM), which the HBM roof does not
  // bound, so it may sit above that roof; the run's point uses HBM bytes.
  [['#4a7bd0', 'source line: FLOP per on-chip byte'], ['#d9534f', 'run: FLOP per HBM byte']].forEach(function (e, k) {
    var y = H - B - 30 + 12 * k;
    g.fillStyle = e[0]; g.beginPath(); g.arc(L + 10, y - 3, 3, 0, 7); g.fill();
    g.fillStyle = '#333'; g.fillText(e[1], L + 18, y);
  });
  if (!pts.length) {
    g.fillStyle = '#333';
    g.fillText('no tensor-engine FLOPs: bound by ' + m.bounding_engine + ', MBU ' + pct(m.mbu_percent), L + 10, 24);
  }
  cv.title = pts.map(function (p) { return p.label + ': ' + p.x.toFixed(1) + ' FLOP/B, ' + fmtNum(p.y, 'FLOP/s'); }).join('\n');
  cv.setAttribute('data-points', pts.length);
}

// ------------------------------------------------------------------------------------------
// Timeline: one row per (core, track); slices narrower than a pixel are aggregated into
// per-pixel coverage so large runs stay smooth.

var TL = { rows: [], t0: 0, t1: 1, total: 1, sel: null };

function buildRows() {
  TL.rows = [];
  RUN.cores.forEach(function (core, ci) {
    var ins = core.ins, per = core.tracks.map(function () { return []; });
    for (var i = 0; i < ins.n; i++) per[ins.track[i]].push(i);
    core.tracks.forEach(function (t, ti) {
      var idx = per[ti], n = idx.length;
      var st = new Float64Array(n), en = new Float64Array(n);
      for (var k = 0; k < n; k++) { st[k] = ins.start[idx[k]]; en[k] = ins.start[idx[k]] + ins.occ[idx[k]]; }
      TL.rows.push({ core: ci, name: (RUN.cores.length > 1 ? 'c' + core.core + ' ' : '') + t.name, engine: t.engine, idx: idx, st: st, en: en });
    });
  });
  TL.total = Math.max(RUN.total_ns, 1);
  TL.t0 = 0; TL.t1 = TL.total;
}

var ROW_H = 22, LABEL_W = 110, COUNTER_H = 30;

function lowerBound(arr, v) { var lo = 0, hi = arr.length; while (lo < hi) { var m = (lo + hi) >> 1; if (arr[m] < v) lo = m + 1; else hi = m; } return lo; }

function drawTimeline() {
  var cv = $('timeline-canvas'), dpr = window.devicePixelRatio || 1;
  var cssW = cv.clientWidth || 1200, cssH = COUNTER_H + TL.rows.length * ROW_H + 20;
  cv.style.height = cssH + 'px';
  cv.width = Math.floor(cssW * dpr); cv.height = Math.floor(cssH * dpr);
  var g = cv.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.fillStyle = '#fff'; g.fillRect(0, 0, cssW, cssH);
  var plotW = Math.max(10, cssW - LABEL_W - 4), span = TL.t1 - TL.t0, nsPerPx = span / plotW;
  function px(t) { return LABEL_W + (t - TL.t0) / nsPerPx; }
  // Counter lane: HBM bandwidth of the first core.
  var c0 = RUN.cores[0];
  if (c0) {
    var hb = c0.counters.hbm, bn = c0.counters.bucket_ns, mx = 0;
    for (var h = 0; h < hb.length; h++) mx = Math.max(mx, hb[h]);
    g.fillStyle = '#f0f3f8'; g.fillRect(0, 0, cssW, COUNTER_H - 2);
    g.fillStyle = '#333'; g.font = '11px sans-serif'; g.fillText('HBM GB/s', 4, 18);
    if (mx > 0) {
      g.fillStyle = 'rgba(192,80,77,.6)';
      for (var k = 0; k < hb.length; k++) {
        var x0 = px(k * bn), x1 = px((k + 1) * bn);
        if (x1 < LABEL_W || x0 > cssW) continue;
        var hh = (COUNTER_H - 6) * hb[k] / mx;
        g.fillRect(Math.max(LABEL_W, x0), COUNTER_H - 3 - hh, Math.max(1, x1 - Math.max(LABEL_W, x0)), hh);
      }
      g.fillStyle = '#333'; g.fillText((mx / 1e9).toFixed(1), cssW - 40, 12);
    }
  }
  var cov = new Float32Array(Math.ceil(plotW) + 2);
  TL.rows.forEach(function (r, ri) {
    var y = COUNTER_H + ri * ROW_H;
    g.fillStyle = ri % 2 ? '#fafbfd' : '#fff'; g.fillRect(0, y, cssW, ROW_H);
    g.fillStyle = '#222'; g.font = '11px sans-serif'; g.fillText(r.name, 4, y + 15);
    var color = COLORS[r.engine] || '#888', core = RUN.cores[r.core], ins = core.ins;
    cov.fill(0);
    var k = lowerBound(r.en, TL.t0), n = r.st.length, any = false;
    for (; k < n && r.st[k] <= TL.t1; k++) {
      var s = r.st[k], e = r.en[k], w = (e - s) / nsPerPx;
      if (w >= 2) {
        var i = r.idx[k];
        g.fillStyle = ins.stall[i] > 0 && CAUSES[ins.cause[i]] === 'dma' ? shade(color) : color;
        var xa = Math.max(LABEL_W, px(s)), xb = Math.min(cssW, px(e));
        g.fillRect(xa, y + 3, Math.max(1, xb - xa - 0.5), ROW_H - 6);
        if (TL.sel && TL.sel.core === r.core && TL.sel.i === i) { g.strokeStyle = '#000'; g.lineWidth = 2; g.strokeRect(xa, y + 2, xb - xa, ROW_H - 4); }
        if (xb - xa > 40) { g.fillStyle = '#fff'; g.fillText(core.ins.op ? RUN.ops[ins.op[i]] : '', xa + 3, y + 15, xb - xa - 6); }
      } else {
        // Sub-pixel slice: accumulate its busy fraction into the pixel columns it covers.
        var fa = (Math.max(s, TL.t0) - TL.t0) / nsPerPx, fb = (Math.min(e, TL.t1) - TL.t0) / nsPerPx;
        if (fb <= fa) { cov[Math.max(0, Math.floor(fa))] += 0.05; any = true; continue; }
        for (var p = Math.floor(fa); p < fb && p < cov.length; p++) {
          var o = Math.min(fb, p + 1) - Math.max(fa, p);
          if (o > 0 && p >= 0) cov[p] += o;
        }
        any = true;
      }
    }
    if (any) {
      g.fillStyle = color;
      for (var q = 0; q < cov.length; q++) {
        if (cov[q] <= 0) continue;
        var hgt = (ROW_H - 6) * Math.min(1, cov[q]);
        g.fillRect(LABEL_W + q, y + ROW_H - 3 - hgt, 1, hgt);
      }
    }
  });
  // Time axis.
  var yA = COUNTER_H + TL.rows.length * ROW_H + 12;
  g.fillStyle = '#333';
  for (var a = 0; a <= 5; a++) { var t = TL.t0 + span * a / 5; g.fillText(fmtNs(t), LABEL_W + plotW * a / 5 - (a === 5 ? 60 : 0), yA); }
  $('timeline').setAttribute('data-drawn', TL.rows.length);
}
function shade(c) { return c + 'b0'; }

function hit(ev) {
  var cv = $('timeline-canvas'), rect = cv.getBoundingClientRect();
  var x = ev.clientX - rect.left, y = ev.clientY - rect.top;
  var ri = Math.floor((y - COUNTER_H) / ROW_H);
  if (ri < 0 || ri >= TL.rows.length || x < LABEL_W) return null;
  var plotW = Math.max(10, cv.clientWidth - LABEL_W - 4), t = TL.t0 + (x - LABEL_W) * (TL.t1 - TL.t0) / plotW;
  var r = TL.rows[ri], slack = 3 * (TL.t1 - TL.t0) / plotW, k = lowerBound(r.en, t - slack);
  if (k < r.st.length && r.st[k] <= t + slack) return { core: r.core, i: r.idx[k] };
  return null;
}

function setupTimeline() {
  var cv = $('timeline-canvas'), drag = null, tip = $('tooltip');
  cv.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    var rect = cv.getBoundingClientRect(), plotW = Math.max(10, cv.clientWidth - LABEL_W - 4);
    var f = Math.min(1, Math.max(0, (ev.clientX - rect.left - LABEL_W) / plotW));
    var span = TL.t1 - TL.t0, c = TL.t0 + f * span, z = ev.deltaY > 0 ? 1.25 : 0.8;
    var ns = Math.max(1, Math.min(TL.total * 1.05, span * z));
    TL.t0 = c - f * ns; TL.t1 = TL.t0 + ns;
    drawTimeline();
  }, { passive: false });
  cv.addEventListener('mousedown', function (ev) { drag = { x: ev.clientX, t0: TL.t0, t1: TL.t1, moved: false }; });
  window.addEventListener('mouseup', function (ev) {
    if (drag && !drag.moved) { var h = hit(ev); if (h) select(h.core, h.i); }
    drag = null;
  });
  cv.addEventListener('mousemove', function (ev) {
    if (drag) {
      var plotW = Math.max(10, cv.clientWidth - LABEL_W - 4), dt = (ev.clientX - drag.x) * (drag.t1 - drag.t0) / plotW;
      if (Math.abs(ev.clientX - drag.x) > 2) drag.moved = true;
      TL.t0 = drag.t0 - dt; TL.t1 = drag.t1 - dt; drawTimeline(); return;
    }
    var h = hit(ev);
    if (!h) { tip.style.display = 'none'; return; }
    var core = RUN.cores[h.core], ins = core.ins, i = h.i;
    tip.textContent = RUN.ops[ins.op[i]] + ' #' + i + '  start ' + fmtNs(ins.start[i]) + '  busy ' + fmtNs(ins.occ[i]) +
      (ins.stall[i] > 0 ? '  stall ' + fmtNs(ins.stall[i]) + ' (' + CAUSES[ins.cause[i]] + ')' : '') + '  ' + srcName(RUN, ins.src[i]);
    var rect = cv.getBoundingClientRect();
    tip.style.left = Math.min(ev.clientX - rect.left + 12, rect.width - 300) + 'px';
    tip.style.top = (ev.clientY - rect.top + 12) + 'px';
    tip.style.display = 'block';
  });
  cv.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  cv.addEventListener('dblclick', function () { TL.t0 = 0; TL.t1 = TL.total; drawTimeline(); });
  window.addEventListener('resize', drawTimeline);
}

// ------------------------------------------------------------------------------------------
// Instruction details, table, source lines, stalls, suggestions

function depName(bits) {
  var s = [];
  if (bits & 1) s.push('flow'); if (bits & 2) s.push('anti'); if (bits & 4) s.push('output');
  return s.length ? s.join('+') : 'order';
}

function select(ci, i) {
  TL.sel = { core: ci, i: i };
  var core = RUN.cores[ci], ins = core.ins, body = $('details-body');
  body.textContent = '';
  var tr = core.tracks[ins.track[i]];
  var rows = [
    ['instruction', '#' + i + ' ' + RUN.ops[ins.op[i]] + ' on ' + tr.name + (RUN.cores.length > 1 ? ' (core ' + core.core + ')' : '')],
    ['assembly', core.text[i] || ''],
    ['source', srcName(RUN, ins.src[i])],
    ['start / busy / latency', fmtNs(ins.start[i]) + ' / ' + fmtNs(ins.occ[i]) + ' / ' + fmtNs(ins.lat[i])],
    ['bound', RUN.bounds[ins.bound[i]] || '-'],
    ['FLOPs / bytes / HBM bytes', fmtNum(ins.flops[i], '') + ' / ' + fmtNum(ins.bytes[i], 'B') + ' / ' + fmtNum(ins.hbm[i], 'B')],
    ['partitions', ins.parts[i]],
    ['stall', ins.stall[i] > 0 ? fmtNs(ins.stall[i]) + ' waiting (' + CAUSES[ins.cause[i]] + ')' +
      (ins.sem[i] >= 0 ? ' on s' + ins.sem[i] : '') + (ins.rel[i] >= 0 ? ', released by #' + ins.rel[i] + ' ' + RUN.ops[ins.op[ins.rel[i]]] : '') : 'none']
  ];
  body.appendChild(table(['field', 'value'], rows, { left: [0, 1] }));
  var preds = [], succs = [];
  core.edges.forEach(function (e) {
    if (e[1] === i) preds.push(e);
    if (e[0] === i) succs.push(e);
  });
  function edgeRows(list, other) {
    return list.map(function (e) {
      var j = e[other];
      return [('#' + j), RUN.ops[ins.op[j]], core.tracks[ins.track[j]].name, depName(e[2]), e[3] >= 0 ? 'semaphore s' + e[3] : 'queue order'];
    });
  }
  body.appendChild(el('h3', null, 'Predecessors'));
  body.appendChild(table(['instruction', 'op', 'queue', 'dependency', 'via'], edgeRows(preds, 0), { left: [1, 2, 3, 4] }));
  body.appendChild(el('h3', null, 'Successors'));
  body.appendChild(table(['instruction', 'op', 'queue', 'dependency', 'via'], edgeRows(succs, 1), { left: [1, 2, 3, 4] }));
  body.querySelectorAll('tbody tr').forEach(function (row) {
    var txt = row.firstChild.textContent;
    if (txt.charAt(0) === '#') row.addEventListener('click', function () { select(ci, +txt.slice(1)); });
  });
  drawTimeline();
}

var TABLE = { core: 0, key: 'start', desc: false, page: 0, size: 50, track: -1, order: null };

function renderInstructions() {
  var sec = $('instructions');
  sec.textContent = '';
  sec.appendChild(el('h2', null, 'Instructions'));
  var core = RUN.cores[TABLE.core];
  if (!core) return;
  var ins = core.ins, controls = el('div', { 'class': 'pager' });
  var sel = el('select', { id: 'track-filter' });
  sel.appendChild(el('option', { value: -1 }, 'all queues'));
  core.tracks.forEach(function (t, ti) { var o = el('option', { value: ti }, t.name); if (ti === TABLE.track) o.selected = true; sel.appendChild(o); });
  sel.addEventListener('change', function () { TABLE.track = +sel.value; TABLE.page = 0; TABLE.order = null; renderInstructions(); });
  controls.appendChild(sel);
  if (RUN.cores.length > 1) {
    var cs = el('select');
    RUN.cores.forEach(function (c, i) { var o = el('option', { value: i }, 'core ' + c.core); if (i === TABLE.core) o.selected = true; cs.appendChild(o); });
    cs.addEventListener('change', function () { TABLE.core = +cs.value; TABLE.page = 0; TABLE.track = -1; TABLE.order = null; renderInstructions(); });
    controls.appendChild(cs);
  }
  if (!TABLE.order) {
    var order = [];
    for (var i = 0; i < ins.n; i++) if (TABLE.track < 0 || ins.track[i] === TABLE.track) order.push(i);
    var key = TABLE.key, col = key === 'engine' ? ins.track : ins[key], sgn = TABLE.desc ? -1 : 1;
    order.sort(function (a, b) { return sgn * (col[a] - col[b]) || a - b; });
    TABLE.order = order;
  }
  var pages = Math.max(1, Math.ceil(TABLE.order.length / TABLE.size));
  TABLE.page = Math.min(TABLE.page, pages - 1);
  var prev = el('button', null, '<'), next = el('button', null, '>');
  prev.addEventListener('click', function () { if (TABLE.page > 0) { TABLE.page--; renderInstructions(); } });
  next.addEventListener('click', function () { if (TABLE.page < pages - 1) { TABLE.page++; renderInstructions(); } });
  controls.appendChild(prev);
  controls.appendChild(el('span', null, 'page ' + (TABLE.page + 1) + ' / ' + pages + ' (' + TABLE.order.length + ' instructions' + (ins.total > ins.n ? ', first ' + ins.n + ' of ' + ins.total + ' embedded' : '') + ')'));
  controls.appendChild(next);
  sec.appendChild(controls);
  var cols = [['#', 'index'], ['queue', 'engine'], ['op', 'op'], ['start', 'start'], ['busy', 'occ'], ['stall', 'stall'], ['cause', 'cause'], ['FLOPs', 'flops'], ['bytes', 'bytes'], ['source', 'src']];
  var t = el('table'), head = el('tr');
  cols.forEach(function (c) {
    var th = el('th', null, c[0] + (TABLE.key === c[1] ? (TABLE.desc ? ' \u25bc' : ' \u25b2') : ''));
    th.addEventListener('click', function () {
      if (c[1] === 'index') { TABLE.key = 'start'; } else if (TABLE.key === c[1]) TABLE.desc = !TABLE.desc; else { TABLE.key = c[1]; TABLE.desc = c[1] === 'stall' || c[1] === 'occ'; }
      TABLE.order = null; renderInstructions();
    });
    head.appendChild(th);
  });
  var th0 = el('thead'); th0.appendChild(head); t.appendChild(th0);
  var tb = el('tbody');
  TABLE.order.slice(TABLE.page * TABLE.size, (TABLE.page + 1) * TABLE.size).forEach(function (i) {
    var r = el('tr');
    if (TL.sel && TL.sel.core === TABLE.core && TL.sel.i === i) r.className = 'sel';
    [i, core.tracks[ins.track[i]].name, RUN.ops[ins.op[i]], fmtNs(ins.start[i]), fmtNs(ins.occ[i]), ins.stall[i] > 0 ? fmtNs(ins.stall[i]) : '',
      ins.stall[i] > 0 ? CAUSES[ins.cause[i]] : '', ins.flops[i] ? fmtNum(ins.flops[i], '') : '', fmtNum(ins.bytes[i], 'B'), srcName(RUN, ins.src[i])]
      .forEach(function (v) { r.appendChild(el('td', null, String(v))); });
    r.addEventListener('click', function () { select(TABLE.core, i); renderInstructions(); });
    tb.appendChild(r);
  });
  t.appendChild(tb);
  sec.appendChild(t);
}

function renderSource() {
  var sec = $('source');
  var lines = RUN.sources.map(function (s, i) { return { i: i, s: s }; }).filter(function (x) { return x.s.n > 0; });
  lines.sort(function (a, b) { return (b.s.busy_ns + b.s.stall_ns) - (a.s.busy_ns + a.s.stall_ns); });
  var mx = lines.length ? Math.max.apply(null, lines.map(function (x) { return x.s.busy_ns + x.s.stall_ns; })) : 1;
  sec.appendChild(table(['source line', 'code', 'instructions', 'busy', '', 'stalled', '', 'FLOPs'], lines.map(function (x) {
    return [srcName(RUN, x.i), el('code', null, x.s.code || ''), x.s.n, fmtNs(x.s.busy_ns), bar(x.s.busy_ns / (mx || 1)), fmtNs(x.s.stall_ns), bar(x.s.stall_ns / (mx || 1), 'stall'), fmtNum(x.s.flops, '')];
  }), { left: [0, 1, 4, 6] }));
}

// "file:line `code`" of a source line (an instruction without an origin says so).
function lineRef(run, s) {
  var span = el('span', { 'class': 'line' });
  var x = run.sources[s];
  if (!s || !x) { span.textContent = 'an instruction without a source line'; return span; }
  span.appendChild(document.createTextNode(srcName(run, s)));
  if (x.code) { span.appendChild(document.createTextNode(' ')); span.appendChild(el('code', null, x.code)); }
  return span;
}

// "waiting `code` waited X for releasing `code` (a DMA transfer)".
function stallSentence(run, p) {
  var s = el('span', { 'class': 'stall-line' });
  s.appendChild(lineRef(run, p.waiting));
  s.appendChild(document.createTextNode(' waited ' + fmtNs(p.ns) + ' for '));
  if (p.cause === 'dma' || p.cause === 'engine') {
    s.appendChild(lineRef(run, p.releasing));
    s.appendChild(document.createTextNode(p.cause === 'dma' ? ' (a DMA transfer)' : ' (an engine instruction)'));
  } else if (p.cause === 'barrier') {
    s.appendChild(document.createTextNode('the other cores (core barrier)'));
  } else {
    s.appendChild(document.createTextNode('no semaphore release (unresolved)'));
  }
  return s;
}

function shareCell(percent) {
  var cell = el('span');
  cell.appendChild(bar(percent / 100, 'stall'));
  cell.appendChild(document.createTextNode(' ' + pct(percent)));
  return cell;
}

var MAX_STALL_LINES = 100;

// Stall time by (waiting line, releasing line); queues and semaphores are details.
function renderStallLines(core, sec) {
  function names(list) { return list.map(function (t) { return core.tracks[t] ? core.tracks[t].name : '?'; }).join(', '); }
  var shown = core.stall_lines.slice(0, MAX_STALL_LINES);
  sec.appendChild(el('h3', null, 'by source line: what waited, for what'));
  sec.appendChild(table(['share of stall time', 'waiting line, stall time, releasing line', 'queues', 'semaphores', 'instructions'], shown.map(function (p) {
    var queues = names(p.waiting_tracks) + (p.releasing_tracks.length ? ' \u2190 ' + names(p.releasing_tracks) : '');
    return [shareCell(p.percent), stallSentence(RUN, p), queues, p.sems.map(function (x) { return 's' + x; }).join(', ') || '-', p.n];
  }), { left: [0, 1, 2, 3] }));
  var rest = core.stall_lines.slice(MAX_STALL_LINES);
  if (rest.length) {
    var ns = 0, share = 0;
    rest.forEach(function (p) { ns += p.ns; share += p.percent; });
    sec.appendChild(el('div', { 'class': 'hint' }, rest.length + ' more pairs: ' + fmtNs(ns) + ' (' + pct(share) + ' of stall time)'));
  }
}

// Stall time sums the stalls of parallel queues, so it can exceed the run: every share here is
// of the core's stall time (or, for HBM, of the DMA engines' time), never of the run.
function renderStalls() {
  var sec = $('stalls');
  RUN.cores.forEach(function (core) {
    if (RUN.cores.length > 1) sec.appendChild(el('h3', null, 'core ' + core.core));
    var m = core.metrics, queues = core.tracks.length;
    if (m.stall_ns > 0) {
      sec.appendChild(el('div', { 'class': 'hint' }, 'Stall time ' + fmtNs(m.stall_ns) + ', summed over ' + queues + ' queue' + (queues > 1 ? 's' : '') +
        ' = ' + pct(100 * m.stall_ns / ((m.total_ns * queues) || 1)) + ' of queue-time (run ' + fmtNs(m.total_ns) + ' x ' + queues +
        '). Shares below are of this stall time and sum to 100%.'));
      renderStallLines(core, sec);
    } else {
      sec.appendChild(el('div', null, 'No stalls: every instruction started when its queue was free.'));
    }
    var groups = { semaphore: 'by semaphore', queue: 'by releasing queue', other: 'other' };
    Object.keys(groups).forEach(function (g) {
      var rows = core.stalls.filter(function (s) { return s.group === g; });
      if (!rows.length) return;
      sec.appendChild(el('h3', null, groups[g]));
      sec.appendChild(table(['key', 'stall time', 'share of stall time', 'instructions'], rows.map(function (s) {
        return [s.key, fmtNs(s.ns), shareCell(s.percent), s.n];
      }), { left: [0, 2] }));
    });
    core.stalls.forEach(function (s) {
      if (s.group !== 'hbm') return;
      sec.appendChild(el('h3', null, 'HBM bandwidth'));
      sec.appendChild(el('div', null, 'HBM contention added ' + fmtNs(s.ns) + ' to DMA engine time: ' + pct(s.percent) +
        ' of the engines\' time (run ' + fmtNs(m.total_ns) + ' x ' + m.dma_engines + ' engines).'));
    });
  });
}

function renderSuggestions(run, sec) {
  var list = el('div', { 'class': 'sugg-list' });
  run.suggestions.forEach(function (s) {
    var d = el('div', { 'class': 'sugg', 'data-rule': s.rule });
    d.appendChild(el('div', { 'class': 't' }, s.title));
    d.appendChild(el('div', null, s.detail));
    d.appendChild(el('div', { 'class': 's' }, (run.cores.length > 1 ? 'core ' + s.core + ' ' : '') + (s.source || '')));
    list.appendChild(d);
  });
  if (!run.suggestions.length) list.appendChild(el('div', null, 'No rule fired for this run.'));
  sec.appendChild(list);
}

// ------------------------------------------------------------------------------------------
// Comparison (two runs)

function renderCompare(a, b) {
  var sec = $('compare');
  sec.appendChild(el('h2', null, 'Comparison: ' + a.title + ' \u2192 ' + b.title));
  function delta(x, y, lowerBetter) {
    var d = y - x, s = el('span', { 'class': (d === 0 ? '' : ((d < 0) === lowerBetter ? 'pos' : 'neg')) });
    s.textContent = (x ? (d >= 0 ? '+' : '') + (100 * d / x).toFixed(1) + '%' : '-');
    return s;
  }
  var ma = a.cores[0] ? a.cores[0].metrics : {}, mb = b.cores[0] ? b.cores[0].metrics : {};
  sec.appendChild(table(['metric', 'before', 'after', 'change'], [
    ['total time', fmtNs(a.total_ns), fmtNs(b.total_ns), delta(a.total_ns, b.total_ns, true)],
    ['MFU', pct(ma.mfu_percent), pct(mb.mfu_percent), delta(ma.mfu_percent, mb.mfu_percent, false)],
    ['MBU', pct(ma.mbu_percent), pct(mb.mbu_percent), delta(ma.mbu_percent, mb.mbu_percent, false)],
    ['bounding engine', ma.bounding_engine, mb.bounding_engine, '']
  ], { left: [0] }));
  sec.appendChild(el('h3', null, 'Per engine (busy time)'));
  var names = {}, rows = [];
  function busyOf(run) { var m = {}; run.cores.forEach(function (c) { c.tracks.forEach(function (t) { var k = (run.cores.length > 1 ? 'c' + c.core + ' ' : '') + t.name; m[k] = (m[k] || 0) + t.busy_ns; names[k] = 1; }); }); return m; }
  var ba = busyOf(a), bb = busyOf(b);
  Object.keys(names).forEach(function (k) { rows.push([k, fmtNs(ba[k] || 0), fmtNs(bb[k] || 0), delta(ba[k] || 0, bb[k] || 0, true)]); });
  sec.appendChild(table(['engine / queue', 'before', 'after', 'change'], rows, { left: [0] }));
  sec.appendChild(el('h3', null, 'Per source line (busy + stall)'));
  function lineMap(run) { var m = {}; run.sources.forEach(function (s, i) { if (s.n) m[srcName(run, i)] = s.busy_ns + s.stall_ns; }); return m; }
  var la = lineMap(a), lb = lineMap(b), keys = {};
  Object.keys(la).concat(Object.keys(lb)).forEach(function (k) { keys[k] = 1; });
  sec.appendChild(table(['source line', 'before', 'after', 'change'], Object.keys(keys).map(function (k) {
    return [k, fmtNs(la[k] || 0), fmtNs(lb[k] || 0), delta(la[k] || 0, lb[k] || 0, true)];
  }), { left: [0] }));
  var sb = el('div', { id: 'summary-after' });
  renderSummary(b, sb, 'Summary after: ' + b.title);
  sec.appendChild(sb);
}

// ------------------------------------------------------------------------------------------

function main() {
  document.title = RUN.title || 'trnsim profile';
  $('title').textContent = (DATA.mode === 'compare' ? 'trnsim profile comparison' : 'trnsim profile') + (RUN.title ? ': ' + RUN.title : '') + ' (' + RUN.chip + ')';
  renderSummary(RUN, $('summary'), DATA.mode === 'compare' ? 'Summary before: ' + RUN.title : 'Summary');
  if (DATA.mode === 'compare' && DATA.runs[1]) renderCompare(RUN, DATA.runs[1]);
  buildRows();
  setupTimeline();
  drawTimeline();
  renderSuggestions(RUN, $('suggestions'));
  renderStalls();
  renderInstructions();
  renderSource();
}

try { main(); } catch (e) { ERRORS.push('exception: ' + (e && e.stack ? e.stack : e)); }
$('selftest').textContent = JSON.stringify({
  tracks: TL.rows.length,
  expected_tracks: +$('timeline').getAttribute('data-tracks'),
  suggestions: document.querySelectorAll('#suggestions .sugg').length,
  instructions: document.querySelectorAll('#instructions tbody tr').length,
  summary: !!document.querySelector('#summary .card'),
  errors: ERRORS
});
