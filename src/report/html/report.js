// SPDX-License-Identifier: Apache-2.0
// report.js - the renderer of xprobe's HTML report (src/report/html_report.h).
// It reads the two JSON blocks of the page -- "xprobe-document", the
// document --json prints, and "xprobe-report", what the CLI computed for
// the page (histogram of every pair, threads, the timeline table) -- and
// draws them with the DOM and SVG.  It computes no statistic: every number
// shown is one of the two blocks', so the page and --json cannot disagree.
// Untrusted text (symbols, selectors, names) only ever goes through
// textContent and setAttribute, never through markup.
// Plain ES2017, no library, no network (the page's policy forbids it).
'use strict';
(function () {
  var started = performance.now();
  var SVGNS = 'http://www.w3.org/2000/svg';
  var doc = JSON.parse(document.getElementById('xprobe-document').textContent);
  var rep = JSON.parse(document.getElementById('xprobe-report').textContent);
  var app = document.getElementById('app');
  var tooltip = document.getElementById('tooltip');

  (window.xprobeEarlyErrors || []).forEach(function (t) { window.xprobeNoteError(t); });

  // --- small DOM helpers -------------------------------------------------
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function svg(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
    return e;
  }
  function svgText(x, y, text, anchor, cls) {
    var t = svg('text', { x: x, y: y, 'text-anchor': anchor || 'start' });
    if (cls) t.setAttribute('class', cls);
    t.textContent = text;
    return t;
  }
  function section(title) {
    add(app, el('h2', null, title));
    return add(app, el('section'));
  }
  // A value with its raw form for programs: data-field names the JSON path.
  function field(tag, path, value, shown) {
    var e = el(tag, null, shown === undefined ? value : shown);
    e.setAttribute('data-field', path);
    e.setAttribute('data-value', value === null || value === undefined ? 'null' : String(value));
    return e;
  }
  function kv(dl, label, path, value, shown) {
    add(dl, el('dt', null, label));
    var dd = add(dl, field('dd', path, value, shown));
    return dd;
  }
  function badge(text, cls) { return el('span', 'badge ' + (cls || text), text); }

  // --- number formats ----------------------------------------------------
  // A latency in the unit that suits it, as the CLI's human summary
  // writes one (render_measurement.c fmt_ns): "820.003 us", "1.200 ms".
  var UNITS = [[1e9, 's'], [1e6, 'ms'], [1e3, 'us'], [1, 'ns']];
  function unitOf(ns) {
    for (var i = 0; i < UNITS.length - 1; i++) if (ns >= UNITS[i][0]) return UNITS[i];
    return UNITS[UNITS.length - 1];
  }
  function fmtNs(ns) {
    return ns === null || ns === undefined ? 'n/a' : fmtNsIn(ns, unitOf(ns));
  }
  // A row of latencies shares one unit, its largest value's, so that the
  // row never mixes "820.003 us" with "1.200 ms".
  function rowUnit(values) {
    var top = 0;
    values.forEach(function (v) { if (v !== null && v !== undefined && v > top) top = v; });
    return unitOf(top);
  }
  // @ns in @unit: three decimals, or three significant digits for a value
  // under 0.1 of the unit (down to the nanosecond); whole nanoseconds.
  function fmtNsIn(ns, unit) {
    if (ns === null || ns === undefined) return 'n/a';
    if (unit[0] === 1) return Math.round(ns) + ' ns';
    var v = ns / unit[0], places = 3;
    if (v > 0 && v < 0.1) places = Math.min(Math.round(Math.log10(unit[0])), 2 - Math.floor(Math.log10(v)));
    return v.toFixed(places) + ' ' + unit[1];
  }
  // Short labels for axes and buckets, as the terminal histogram writes
  // them: whole nanoseconds, else three significant digits ("4.10us").
  function fmtShort(ns) {
    var units = [[1e9, 's'], [1e6, 'ms'], [1e3, 'us']];
    if (Math.abs(ns) < 1e3) return Math.round(ns) + 'ns';
    for (var i = 0; i < units.length; i++) {
      if (Math.abs(ns) >= units[i][0]) {
        var v = ns / units[i][0];
        return (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2)) + units[i][1];
      }
    }
    return String(ns);
  }
  function fmtInt(n) { return n === null || n === undefined ? 'n/a' : String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function pct(x) { return (100 * x).toFixed(1) + '%'; }

  // --- the time origin -----------------------------------------------------
  // Timestamps are nanoseconds of the event's clock; a raw CUPTI one has 19
  // digits, more than a JavaScript number holds (2^53), so the timeline's
  // origin also comes as a decimal string (t0_ns_text) and absolute times
  // are added to it digit by digit.
  function addNs(text, ns) {
    var b = String(Math.round(ns)), out = '', carry = 0, i = text.length - 1, j = b.length - 1;
    while (i >= 0 || j >= 0 || carry) {
      var d = (i >= 0 ? +text[i--] : 0) + (j >= 0 ? +b[j--] : 0) + carry;
      out = String(d % 10) + out;
      carry = d >= 10 ? 1 : 0;
    }
    return out;
  }
  // Nanoseconds (a decimal string) as seconds to the millisecond, rounded:
  // "1,700,000,000.124 s".
  function fmtSecondsText(text) {
    var d = addNs(text, 500000);
    while (d.length < 10) d = '0' + d;
    return fmtInt(d.slice(0, -9).replace(/^0+(?=\d)/, '')) + '.' + d.slice(-9, -6) + ' s';
  }
  var CLOCK_NAME = {
    host_monotonic: 'CLOCK_MONOTONIC', cupti_normalized_to_host_monotonic: 'CLOCK_MONOTONIC',
    cupti: 'the CUPTI activity clock'
  };
  // The note under a timeline that says where its zero is: in seconds of
  // its clock for people, the exact nanoseconds in its title and
  // data-t0-ns for programs.
  function originNote(parent, tl, what) {
    var p = add(parent, el('p', 'note'));
    p.id = 'time-origin';
    p.textContent = 'Times on the timeline are offsets from t0, ' + what + ': ' + fmtSecondsText(tl.t0_ns_text) +
      ' on ' + (CLOCK_NAME[tl.t0_clock] || tl.t0_clock || 'the capture\'s clock') + '.';
    p.title = 't0 = ' + tl.t0_ns_text + ' ns (' + (tl.t0_clock || 'unknown clock') + ')';
    p.setAttribute('data-t0-ns', tl.t0_ns_text);
    return p;
  }

  // --- tooltip -----------------------------------------------------------
  // Below right of the pointer, else left of or above it, and always
  // inside the window: the stylesheet wraps a long name (a C++ signature)
  // and bounds the box by the window, so it is measured at the window's
  // corner, where its width is not cut by where it last was.
  function showTip(ev, text) {
    var W = window.innerWidth, H = window.innerHeight;
    tooltip.textContent = text;
    tooltip.style.left = '0px';
    tooltip.style.top = '0px';
    tooltip.hidden = false;
    var x = ev.clientX + 14, y = ev.clientY + 14;
    var w = tooltip.offsetWidth, h = tooltip.offsetHeight;
    if (x + w > W - 4) x = ev.clientX - w - 14;
    if (y + h > H - 4) y = ev.clientY - h - 14;
    tooltip.style.left = Math.max(4, Math.min(x, W - w - 4)) + 'px';
    tooltip.style.top = Math.max(4, Math.min(y, H - h - 4)) + 'px';
  }
  function hideTip() { tooltip.hidden = true; }

  // --- the head every kind shares ----------------------------------------
  var KIND_TITLE = {
    measurement: 'latency measurement', measurement_error: 'measurement failed',
    cpu_sample: 'CPU sample inventory', syscall_aggregate: 'syscall inventory',
    aggregate: 'GPU activity inventory', histogram: 'in-kernel latency histogram'
  };
  function header(title, subtitle, target) {
    var h = add(app, el('header'));
    var h1 = add(h, el('h1', null, 'xprobe '));
    add(h1, el('span', 'kind', KIND_TITLE[rep.kind] || rep.kind));
    if (title) add(h1, document.createTextNode(': ' + title));
    document.title = 'xprobe: ' + (title || KIND_TITLE[rep.kind] || 'report');
    if (subtitle) add(h, el('p', 'sub mono', subtitle));
    var pre = add(h, el('pre', 'cmd'));
    pre.id = 'command';
    pre.textContent = rep.command.map(shellQuote).join(' ');
    var t = add(h, el('p', 'sub'));
    t.id = 'target';
    if (target) {
      t.textContent = 'target: PID ' + target.pid + (target.process_start_time !== null && target.process_start_time !== undefined ?
        ', process start time ' + target.process_start_time : '') + (target.source ? ' (' + target.source + ')' : '');
    }
    if (rep.inputs && rep.inputs.length) t.textContent += (t.textContent ? '; ' : '') + 'input: ' + rep.inputs.join(', ');
  }
  function shellQuote(a) {
    return /^[A-Za-z0-9_@%+=:,.\/-]+$/.test(a) ? a : "'" + a.replace(/'/g, "'\\''") + "'";
  }
  function warningsList(parent, ws) {
    if (!ws || !ws.length) { add(parent, el('p', 'note', 'no warnings')); return; }
    var ul = add(parent, el('ul', 'warnings'));
    ul.id = 'warnings';
    ws.forEach(function (w) {
      var li = add(ul, el('li'));
      add(li, el('code', null, w.code));
      add(li, document.createTextNode(': ' + w.message));
      li.setAttribute('data-code', w.code);
    });
  }
  function footer(extra) {
    var f = add(app, el('footer'));
    f.textContent = (rep.generator || 'xprobe') + ' - this file is self-contained: the document --json prints is in its ' +
      '"xprobe-document" block' + (extra ? '; ' + extra : '') + '.';
  }

  // --- histogram of log2 buckets (bars only for non-empty buckets) -------
  function bucketLabel(b) {
    return '[' + fmtShort(b.lower_ns) + ', ' + fmtShort(b.upper_ns) + ')';
  }
  // @caption goes under the axis; the chart is at least as wide as it.
  function histogramChart(parent, buckets, unitWord, caption) {
    var n = buckets.length;
    var wrap = add(parent, el('div', 'chart'));
    wrap.id = 'histogram';
    if (!n) { add(wrap, el('p', 'note', 'no samples')); return; }
    var max = 0;
    buckets.forEach(function (b) { if (b.count > max) max = b.count; });
    var controls = add(wrap, el('div', 'controls'));
    var logBtn = add(controls, el('button', null, 'log scale'));
    logBtn.type = 'button';
    var slot = Math.max(34, Math.min(70, Math.floor(880 / n)));
    var left = 60, top = 16, height = 220, right = left + slot * n, H = top + height + 70;
    var s = add(wrap, svg('svg', { width: right + 10, height: H, role: 'img', 'aria-label': 'latency histogram' }));
    var grid = add(s, svg('g', { 'class': 'grid' }));
    var axis = add(s, svg('g', { 'class': 'axis' }));
    var bars = add(s, svg('g', {}));
    var cap = add(s, svgText(0, top + height + 34, caption, 'middle', 'caption'));
    captionFits(s, cap, left + slot * n / 2, right + 10);
    var log = false;
    function y(v) {
      if (v <= 0) return top + height;
      var f = log ? Math.log10(v + 1) / Math.log10(max + 1) : v / max;
      return top + height - f * height;
    }
    function draw() {
      while (grid.firstChild) grid.removeChild(grid.firstChild);
      while (axis.firstChild) axis.removeChild(axis.firstChild);
      while (bars.firstChild) bars.removeChild(bars.firstChild);
      var ticks = log ? [0, 1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9].filter(function (t) { return t <= max; }) : niceTicks(0, max, 5);
      ticks.forEach(function (t) {
        add(grid, svg('line', { x1: left, x2: right, y1: y(t), y2: y(t) }));
        add(axis, svgText(left - 6, y(t) + 4, fmtInt(t), 'end'));
      });
      add(axis, svg('line', { x1: left, x2: right, y1: top + height, y2: top + height }));
      buckets.forEach(function (b, i) {
        var x = left + i * slot;
        var lab = svgText(x + slot / 2, top + height + 14, fmtShort(b.lower_ns), 'middle');
        add(axis, lab);
        if (!b.count) return;
        var yy = y(b.count);
        var r = add(bars, svg('rect', {
          'class': 'hbar', x: x + 3, y: yy, width: slot - 6, height: Math.max(1, top + height - yy),
          'data-lower': b.lower_ns, 'data-upper': b.upper_ns, 'data-count': b.count
        }));
        r.addEventListener('mousemove', function (ev) {
          showTip(ev, bucketLabel(b) + '  ' + fmtInt(b.count) + ' ' + unitWord + '\n[' + b.lower_ns + ', ' + b.upper_ns + ') ns');
        });
        r.addEventListener('mouseleave', hideTip);
        add(bars, svgText(x + slot / 2, yy - 3, fmtInt(b.count), 'middle', 'count'));
      });
    }
    logBtn.addEventListener('click', function () { log = !log; logBtn.textContent = log ? 'linear scale' : 'log scale'; draw(); });
    draw();
  }
  // Centre the caption @cap of @s under the plot (at @mid), moved right
  // and the SVG widened past @width where the plot of a few buckets is
  // narrower than the caption, so that none of it is cut off.
  function captionFits(s, cap, mid, width) {
    var w = cap.getComputedTextLength() || 6.5 * cap.textContent.length, x = Math.max(mid, w / 2 + 6);
    cap.setAttribute('x', x);
    s.setAttribute('width', Math.ceil(Math.max(width, x + w / 2 + 6)));
  }
  function niceStep(range, count) {
    if (range <= 0) return 1;
    var raw = range / count, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }
  function niceTicks(lo, hi, count) {
    var step = niceStep(hi - lo, count), out = [];
    if (step < 1 && hi > 5) step = 1;
    for (var t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) out.push(Math.round(t * 1e6) / 1e6);
    return out;
  }

  // --- the zoomable timeline ----------------------------------------------
  // items: {n, lane(j), from(j), to(j), cls, tip(j), color(j)}; lanes: labels.
  // Times are offsets from t0, which originNote() states.
  function timeline(parent, lanes, items) {
    var wrap = add(parent, el('div'));
    wrap.id = 'timeline';
    var controls = add(wrap, el('div', 'controls'));
    var bIn = add(controls, el('button', null, 'zoom in'));
    var bOut = add(controls, el('button', null, 'zoom out'));
    var bReset = add(controls, el('button', null, 'reset'));
    [bIn, bOut, bReset].forEach(function (b) { b.type = 'button'; });
    add(controls, el('span', 'note', 'wheel: zoom at the pointer; drag: pan; hover a bar for its events'));
    var rangeText = add(controls, el('span', 'range'));
    var labelW = 190, plotW = Math.max(600, Math.min(1400, (window.innerWidth || 1200) - 90) - labelW);
    var rowH = 18, axisH = 24, H = axisH + Math.max(1, lanes.length) * rowH + 4;
    var s = add(wrap, svg('svg', { width: labelW + plotW, height: H, 'class': 'timeline', role: 'img', 'aria-label': 'timeline' }));
    var defs = add(s, svg('defs', {}));
    var clip = add(defs, svg('clipPath', { id: 'plot-clip' }));
    add(clip, svg('rect', { x: labelW, y: 0, width: plotW, height: H }));
    lanes.forEach(function (l, i) {
      add(s, svg('rect', { 'class': 'lane-bg' + (i % 2 ? ' odd' : ''), x: 0, y: axisH + i * rowH, width: labelW + plotW, height: rowH }));
      var t = add(s, svgText(6, axisH + i * rowH + 13, l.label));
      t.setAttribute('class', 'lane-label');
    });
    var axis = add(s, svg('g', { 'class': 'axis' }));
    var plot = add(s, svg('g', { 'clip-path': 'url(#plot-clip)' }));
    var lo = Infinity, hi = -Infinity, j;
    for (j = 0; j < items.n; j++) {
      var a = items.from(j), b = items.to(j);
      if (a < lo) lo = a;
      if (b > hi) hi = b;
    }
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    if (hi <= lo) hi = lo + 1;
    var pad = (hi - lo) * 0.02;
    var full = { a: lo - pad, b: hi + pad }, view = { a: full.a, b: full.b };
    var rects = new Array(items.n);
    var frag = document.createDocumentFragment();
    for (j = 0; j < items.n; j++) {
      var r = svg('rect', { 'class': items.cls, y: axisH + items.lane(j) * rowH + 3, height: rowH - 6, 'data-i': j });
      if (items.color) r.style.fill = items.color(j);
      rects[j] = r;
      frag.appendChild(r);
    }
    plot.appendChild(frag);
    function x(t) { return labelW + (t - view.a) / (view.b - view.a) * plotW; }
    function draw() {
      var k;
      for (k = 0; k < items.n; k++) {
        var x0 = x(items.from(k)), x1 = x(items.to(k));
        // a pair shorter than a pixel is still drawn, one pixel wide
        var w = Math.max(1, x1 - x0);
        rects[k].setAttribute('x', x0.toFixed(2));
        rects[k].setAttribute('width', w.toFixed(2));
      }
      while (axis.firstChild) axis.removeChild(axis.firstChild);
      add(axis, svg('line', { x1: labelW, x2: labelW + plotW, y1: axisH - 2, y2: axisH - 2 }));
      niceTicks(view.a, view.b, 8).forEach(function (t) {
        var xx = x(t);
        if (xx < labelW || xx > labelW + plotW) return;
        add(axis, svg('line', { x1: xx, x2: xx, y1: axisH - 6, y2: H }));
        add(axis, svgText(xx + 2, axisH - 9, '+' + fmtShort(t), 'start'));
      });
      rangeText.textContent = 'showing t0 +' + fmtNs(Math.max(0, view.a)) + ' .. t0 +' + fmtNs(view.b) +
        ' (' + fmtNs(view.b - view.a) + ' wide)';
    }
    function zoom(factor, at) {
      var span = view.b - view.a, c = at === undefined ? view.a + span / 2 : at;
      var ns = Math.max(span * factor, 1);
      var f = (c - view.a) / span;
      view.a = c - f * ns;
      view.b = view.a + ns;
      draw();
    }
    bIn.addEventListener('click', function () { zoom(0.5); });
    bOut.addEventListener('click', function () { zoom(2); });
    bReset.addEventListener('click', function () { view.a = full.a; view.b = full.b; draw(); });
    s.addEventListener('wheel', function (ev) {
      var box = s.getBoundingClientRect(), px = ev.clientX - box.left;
      if (px < labelW) return;
      ev.preventDefault();
      zoom(ev.deltaY < 0 ? 0.8 : 1.25, view.a + (px - labelW) / plotW * (view.b - view.a));
    }, { passive: false });
    var drag = null;
    s.addEventListener('mousedown', function (ev) {
      drag = { x: ev.clientX, a: view.a, b: view.b };
      s.classList.add('dragging');
    });
    window.addEventListener('mousemove', function (ev) {
      if (!drag) return;
      var d = (ev.clientX - drag.x) / plotW * (drag.b - drag.a);
      view.a = drag.a - d;
      view.b = drag.b - d;
      draw();
    });
    window.addEventListener('mouseup', function () { drag = null; s.classList.remove('dragging'); });
    s.addEventListener('mousemove', function (ev) {
      var i = ev.target.getAttribute && ev.target.getAttribute('data-i');
      if (i === null || i === undefined || drag) { if (!drag) hideTip(); return; }
      showTip(ev, items.tip(+i));
    });
    s.addEventListener('mouseleave', hideTip);
    draw();
    wrap.xprobeZoom = zoom;
    return wrap;
  }

  function laneLabels(lanes, unit) {
    var pids = {};
    lanes.forEach(function (l) { pids[l.pid] = true; });
    var many = Object.keys(pids).length > 1;
    return lanes.map(function (l) {
      var n = l[unit];
      return { label: 'tid ' + l.tid + (many ? ' (pid ' + l.pid + ')' : '') + ' \u00b7 ' + fmtInt(n) + ' ' + unit };
    });
  }
  function kindText(k) { return k.event_type + (k.name !== null && k.name !== undefined ? ' ' + k.name : ''); }
  function samplingNote(parent, tl, countsWhat) {
    var p = add(parent, el('p', tl.sampled ? 'note sampled' : 'note'));
    p.id = 'sampling-note';
    p.setAttribute('data-sampled', tl.sampled ? 'true' : 'false');
    p.setAttribute('data-drawn', tl.drawn);
    p.setAttribute('data-total', tl.total);
    // the rule (render_html.c) goes on the sentence: what is drawn in
    // words, then the formula with each of its symbols defined
    if (tl.sampled)
      p.textContent = 'Sampled: the timeline draws ' + fmtInt(tl.drawn) + ' of ' + fmtInt(tl.total) + ' ' + tl.unit + 's, ' +
        tl.rule + ' ' + countsWhat;
    else
      p.textContent = 'Every ' + tl.unit + ' is drawn: ' + fmtInt(tl.total) + '.';
  }

  // --- measurement ------------------------------------------------------------
  function renderMeasurement() {
    var m = doc.measurement, c = doc.correlation, sel = rep.selectors;
    header(m.name, sel.start + '  ->  ' + sel.end + '   (--match ' + sel.match_policy + ')', rep.target);
    var cards = add(app, el('div', 'cards'));
    cards.id = 'quality';
    var q = add(cards, el('div', 'card'));
    add(q, el('h3', null, 'status and quality'));
    var dl = add(q, el('dl', 'kv'));
    kv(dl, 'status', 'status', doc.status).replaceChildren(badge(doc.status));
    kv(dl, 'method', 'correlation.method', c.method);
    kv(dl, 'confidence', 'correlation.confidence', c.confidence).replaceChildren(badge(c.confidence));
    kv(dl, 'score', 'correlation.score', c.score, c.score.toFixed(3));
    kv(dl, 'clock', 'clock.alignment', doc.clock.alignment);
    kv(dl, 'clock error bound', 'clock.estimated_error_ns', doc.clock.estimated_error_ns,
      doc.clock.estimated_error_ns === null ? 'unknown' : fmtNs(doc.clock.estimated_error_ns));
    var sc = add(cards, el('div', 'card'));
    add(sc, el('h3', null, 'samples and collection'));
    var dl2 = add(sc, el('dl', 'kv'));
    kv(dl2, 'matched', 'measurement.samples.matched', m.samples.matched, fmtInt(m.samples.matched));
    kv(dl2, 'unmatched start', 'measurement.samples.unmatched_start', m.samples.unmatched_start, fmtInt(m.samples.unmatched_start));
    kv(dl2, 'unmatched end', 'measurement.samples.unmatched_end', m.samples.unmatched_end, fmtInt(m.samples.unmatched_end));
    kv(dl2, 'ambiguous', 'measurement.samples.ambiguous', m.samples.ambiguous, fmtInt(m.samples.ambiguous));
    kv(dl2, 'dropped', 'measurement.samples.dropped', m.samples.dropped, fmtInt(m.samples.dropped));
    kv(dl2, 'host events', 'collection.host_events', doc.collection.host_events, fmtInt(doc.collection.host_events));
    kv(dl2, 'CUDA events', 'collection.cuda_events', doc.collection.cuda_events, fmtInt(doc.collection.cuda_events));
    kv(dl2, 'dropped events', 'collection.dropped_events', doc.collection.dropped_events, fmtInt(doc.collection.dropped_events));
    if (rep.host_ring) {
      var h = rep.host_ring;
      kv(dl2, 'host ring', 'host_ring', h.retained_records, fmtInt(h.retained_records) + ' of ' + fmtInt(h.record_capacity) +
        ' kept, ' + fmtInt(h.observed_records) + ' observed, ' + fmtInt(h.dropped_records) + ' lost');
    }
    if (doc.collection.cupti) {
      var cu = doc.collection.cupti;
      kv(dl2, 'CUPTI records', 'collection.cupti', cu.retained_records, fmtInt(cu.retained_records) + ' of ' + fmtInt(cu.record_capacity) +
        ' kept, ' + fmtInt(cu.dropped_records) + ' dropped');
    }
    var wc = add(cards, el('div', 'card'));
    add(wc, el('h3', null, 'warnings'));
    warningsList(wc, doc.warnings);

    var ps = section('Latency percentiles');
    var t = add(ps, el('table', 'grid'));
    t.id = 'percentiles';
    var hr = add(add(t, el('thead')), el('tr'));
    var keys = ['min', 'p50', 'p90', 'p95', 'p99', 'max', 'mean'];
    keys.forEach(function (k) { add(hr, el('th', null, k)); });
    var tr = add(add(t, el('tbody')), el('tr'));
    var unit = rowUnit(keys.map(function (k) { return m.latency_ns[k]; }));
    keys.forEach(function (k) {
      var v = m.latency_ns[k];
      var td = add(tr, field('td', 'measurement.latency_ns.' + k, v, fmtNsIn(v, unit)));
      td.title = v + ' ns';
    });
    add(ps, el('p', 'note', 'nearest-rank percentiles of ' + fmtInt(m.samples.matched) + ' pairs, as --json reports them'));

    var hs = section('Latency histogram');
    histogramChart(hs, rep.histogram.buckets, 'pairs', 'latency (bucket lower bound; each bucket is [2^k, 2^(k+1)) ns)');
    add(hs, el('p', 'note', 'power-of-two buckets over all ' + fmtInt(rep.histogram.total) +
      ' pairs, counted by xprobe (exact, whatever the timeline draws); empty buckets have no bar'));

    scatter(section('Latency over time'), rep.timeline);
    if (rep.explain) renderExplain(rep.explain);

    var ts = section('Timeline of the evidence pairs');
    var tl = rep.timeline, kinds = rep.kinds;
    samplingNote(ts, tl, 'The histogram, the percentiles and the thread counts include every pair.');
    var lanes = laneLabels(rep.lanes, 'pairs');
    function evLine(role, kind, seq, lane, cpu, at) {
      var l = rep.lanes[lane];
      return role + ': evt_' + seq + '  ' + kindText(kinds[kind]) + '\n       pid ' + l.pid + ' tid ' + l.tid +
        (cpu === null ? '' : ' cpu ' + cpu) + '  t = ' + addNs(tl.t0_ns_text, at) + ' ns (t0 +' + fmtNs(at) + ')';
    }
    timeline(ts, lanes, {
      n: tl.pair.length, cls: 'pair',
      lane: function (j) { return tl.lane[j]; },
      from: function (j) { return Math.min(tl.start[j], tl.end[j]); },
      to: function (j) { return Math.max(tl.start[j], tl.end[j]); },
      tip: function (j) {
        return 'pair #' + tl.pair[j] + '  latency ' + fmtNs(tl.latency[j]) + ' (' + tl.latency[j] + ' ns)\n' +
          evLine('start', tl.start_kind[j], tl.start_seq[j], tl.lane[j], tl.start_cpu[j], tl.start[j]) + '\n' +
          evLine('end  ', tl.end_kind[j], tl.end_seq[j], tl.end_lane[j], tl.end_cpu[j], tl.end[j]);
      }
    });
    originNote(ts, tl, 'the earliest event of the pairs drawn');

    var th = section('Threads');
    var tt = add(th, el('table', 'grid'));
    tt.id = 'threads';
    var hh = add(add(tt, el('thead')), el('tr'));
    ['pid', 'tid', 'pairs', 'min', 'mean', 'max'].forEach(function (k, i) { add(hh, el('th', i < 2 ? 'l' : null, k)); });
    var tb = add(tt, el('tbody'));
    rep.lanes.filter(function (l) { return l.pairs > 0; }).sort(function (a, b) { return b.pairs - a.pairs || a.tid - b.tid; })
      .forEach(function (l) {
        var row = add(tb, el('tr')), unit = unitOf(l.max_ns);
        add(row, el('td', 'l', l.pid));
        add(row, el('td', 'l', l.tid));
        add(row, el('td', null, fmtInt(l.pairs)));
        add(row, el('td', null, fmtNsIn(l.min_ns, unit)));
        add(row, el('td', null, fmtNsIn(l.sum_ns / l.pairs, unit)));
        add(row, el('td', null, fmtNsIn(l.max_ns, unit)));
      });
    if (rep.lanes_total > rep.lanes.length)
      add(th, el('p', 'note', fmtInt(rep.lanes_total - rep.lanes.length) + ' more threads with ' +
        fmtInt(rep.pairs_of_unlisted_lanes) + ' pairs have no pair in the timeline and are not listed'));
    var ev = rep.evidence;
    footer(ev.embedded < ev.total ? 'its evidence holds the first ' + fmtInt(ev.embedded) + ' of ' + fmtInt(ev.total) +
      ' pairs with both full events (the rest of the document is unchanged; --json and --events-out have every pair)' :
      'its evidence holds all ' + fmtInt(ev.total) + ' pairs');
  }

  // --- a failed measurement ------------------------------------------------
  function renderError() {
    var e = doc.error, sel = rep.selectors;
    header(null, sel ? sel.start + '  ->  ' + sel.end + '   (--match ' + sel.match_policy + ')' : null, rep.target);
    var box = add(app, el('div', 'error-box'));
    box.id = 'error';
    var p = add(box, el('p'));
    add(p, field('span', 'error.code', e.code)).className = 'code';
    add(p, document.createTextNode('  '));
    add(p, field('span', 'error.message', e.message));
    add(box, el('p', 'note', 'No result: the measurement failed after collecting' + (e.recoverable ? ' (recoverable: the same command can succeed with other flags, selectors or target state)' : '') + '.'));
    if (e.hints && e.hints.length) {
      var ul = add(box, el('ul'));
      ul.id = 'hints';
      e.hints.forEach(function (h) { add(ul, el('li', null, h)); });
    }
    var ds = section('Details');
    var dt = add(ds, el('table', 'grid'));
    dt.id = 'details';
    Object.keys(e.details).sort().forEach(function (k) {
      var row = add(dt, el('tr'));
      add(row, el('th', 'l', k));
      var v = e.details[k];
      add(row, field('td', 'error.details.' + k, typeof v === 'object' && v !== null ? JSON.stringify(v) : v)).className = 'l mono';
    });
    var cs = section('What was captured');
    var cap = rep.capture;
    var dl = add(cs, el('dl', 'kv'));
    kv(dl, 'events', 'capture.events', cap.events, fmtInt(cap.events));
    kv(dl, 'host events', 'capture.host_events', cap.host_events, fmtInt(cap.host_events));
    kv(dl, 'CUDA events', 'capture.cuda_events', cap.cuda_events, fmtInt(cap.cuda_events));
    kv(dl, 'records lost', 'capture.dropped_records', cap.dropped_records, fmtInt(cap.dropped_records));
    var kt = add(cs, el('table', 'grid'));
    kt.id = 'kinds';
    var kh = add(add(kt, el('thead')), el('tr'));
    ['event type', 'name', 'events'].forEach(function (k, i) { add(kh, el('th', i < 2 ? 'l' : null, k)); });
    var kb = add(kt, el('tbody'));
    rep.kinds.slice().sort(function (a, b) { return b.events - a.events; }).forEach(function (k) {
      var row = add(kb, el('tr'));
      add(row, el('td', 'l mono', k.event_type));
      add(row, el('td', 'l mono', k.name === null ? '' : k.name));
      add(row, el('td', null, fmtInt(k.events)));
    });
    if (rep.kinds_total > rep.kinds.length)
      add(cs, el('p', 'note', fmtInt(rep.kinds_total - rep.kinds.length) + ' more kinds with ' +
        fmtInt(rep.events_of_unlisted_kinds) + ' events have no event in the timeline and are not listed'));
    if (rep.lanes_total > rep.lanes.length)
      add(cs, el('p', 'note', fmtInt(rep.lanes_total - rep.lanes.length) + ' more threads with ' +
        fmtInt(rep.events_of_unlisted_lanes) + ' events have no event in the timeline and are not listed'));
    var ts = section('Timeline of the captured events');
    var tl = rep.timeline;
    samplingNote(ts, tl, 'The counts above include every event.');
    var palette = ['#2f6fb3', '#c2572b', '#2d7d46', '#7b4bb3', '#a86b00', '#0f7f8c', '#b3265f', '#55606b'];
    timeline(ts, laneLabels(rep.lanes, 'events'), {
      n: tl.event.length, cls: 'event',
      lane: function (j) { return tl.lane[j]; },
      from: function (j) { return tl.time[j]; },
      to: function (j) { return tl.time[j]; },
      color: function (j) { return palette[tl.kind[j] % palette.length]; },
      tip: function (j) {
        var l = rep.lanes[tl.lane[j]];
        return 'evt_' + tl.seq[j] + '  ' + kindText(rep.kinds[tl.kind[j]]) + '\npid ' + l.pid + ' tid ' + l.tid +
          (tl.cpu[j] === null ? '' : ' cpu ' + tl.cpu[j]) + '  t = ' + addNs(tl.t0_ns_text, tl.time[j]) + ' ns (t0 +' +
          fmtNs(tl.time[j]) + ')';
      }
    });
    originNote(ts, tl, 'the earliest event captured');
    footer('it is the error document');
  }

  // --- inventories: sorted bars with their selector hints ------------------
  function barTable(parent, id, rows, headers) {
    // rows: {label, share (0..1), value text, count, hints: [{text, cls}], cells: []}
    var t = add(parent, el('table', 'grid bars'));
    t.id = id;
    var hr = add(add(t, el('thead')), el('tr'));
    headers.forEach(function (h, i) { add(hr, el('th', i === 0 || i === 1 ? 'l' : null, h)); });
    var tb = add(t, el('tbody'));
    rows.forEach(function (r, i) {
      var tr = add(tb, el('tr'));
      tr.setAttribute('data-rank', i + 1);
      var lab = add(tr, el('td', 'l'));
      add(lab, el('div', 'mono', r.label));
      (r.hints || []).forEach(function (h) {
        if (h && h.text) add(lab, el('div', 'hint' + (h.cls ? ' ' + h.cls : ''), h.text)).title = h.title || 'selector hint';
      });
      var bc = add(tr, el('td', 'l barcell'));
      var s = add(bc, svg('svg', { width: 260, height: 16 }));
      var rr = add(s, svg('rect', { 'class': 'ibar', x: 0, y: 2, height: 12, width: Math.max(1, 260 * Math.min(1, r.share)),
        'data-count': r.count, 'data-share': r.share }));
      rr.addEventListener('mousemove', function (ev) { showTip(ev, r.label + '\n' + r.value); });
      rr.addEventListener('mouseleave', hideTip);
      add(bc, el('span', 'note', r.value));
      (r.cells || []).forEach(function (c) { add(tr, el('td', null, c)); });
    });
    return t;
  }
  function collectionCard(parent, coll, title) {
    var card = add(parent, el('div', 'card'));
    add(card, el('h3', null, title || 'collection'));
    var dl = add(card, el('dl', 'kv'));
    Object.keys(coll).forEach(function (k) {
      var v = coll[k];
      kv(dl, k.replace(/_/g, ' '), 'collection.' + k, typeof v === 'object' && v !== null ? JSON.stringify(v) : v,
        typeof v === 'number' && Math.floor(v) !== v ? v.toFixed(4) : typeof v === 'number' ? fmtInt(v) : String(v));
    });
  }
  function inventoryHead(inv) {
    header(inv.name, null, inv.target);
    var cards = add(app, el('div', 'cards'));
    var st = add(cards, el('div', 'card'));
    add(st, el('h3', null, 'status'));
    var dl = add(st, el('dl', 'kv'));
    kv(dl, 'status', 'status', doc.status).replaceChildren(badge(doc.status));
    var wc = add(cards, el('div', 'card'));
    add(wc, el('h3', null, 'warnings'));
    warningsList(wc, doc.warnings);
    return { cards: cards, status: dl };
  }
  function renderCpuSample() {
    var inv = doc.inventory, h = inventoryHead(inv);
    kv(h.status, 'event', 'inventory.event', inv.event);
    kv(h.status, 'frequency', 'inventory.frequency_hz', inv.frequency_hz, inv.frequency_hz + ' Hz');
    kv(h.status, 'python', 'inventory.python.status', inv.python.status);
    collectionCard(h.cards, doc.collection);
    var s = section('Hotspots (exclusive samples; share first, then count)');
    var rows = inv.hotspots.slice().sort(function (a, b) {
      return b.exclusive_proportion - a.exclusive_proportion || b.exclusive_count - a.exclusive_count ||
        b.inclusive_count - a.inclusive_count || a.rank - b.rank;
    }).map(function (x) {
      var name = x.function || x.symbol || x.perf_map_symbol || (x.address !== null ? '0x' + x.address.toString(16) : '(unknown)');
      return {
        label: name + (x.binary ? '  (' + x.binary + ')' : ''), share: x.exclusive_proportion, count: x.exclusive_count,
        value: pct(x.exclusive_proportion) + ' exclusive (' + fmtInt(x.exclusive_count) + '), ' + pct(x.inclusive_proportion) + ' inclusive',
        hints: [{ text: x.selector_hint, cls: x.selector_hint_status === 'rejected' ? 'rejected' : '',
          title: 'selector hint (' + x.selector_hint_status + ')' + (x.selector_hint_error ? ': ' + x.selector_hint_error : '') }],
        cells: [x.kind, fmtInt(x.inclusive_count)]
      };
    });
    barTable(s, 'inventory', rows, ['function and selector hint', 'exclusive share', 'kind', 'inclusive']);
    if (inv.python && inv.python.hint) add(s, el('p', 'note', inv.python.hint));
    footer();
  }
  function renderSyscalls() {
    var inv = doc.inventory, h = inventoryHead(inv);
    kv(h.status, 'arch', 'inventory.arch', inv.arch);
    collectionCard(h.cards, doc.collection);
    var total = 0;
    inv.groups.forEach(function (g) { total += g.duration_ns.total; });
    var s = section('Syscalls (time share first, then calls)');
    var rows = inv.groups.slice().sort(function (a, b) {
      return b.duration_ns.total - a.duration_ns.total || b.entries - a.entries || a.syscall_nr - b.syscall_nr;
    }).map(function (g) {
      var share = total ? g.duration_ns.total / total : 0;
      return {
        label: (g.name || 'syscall ' + g.syscall_nr), share: share, count: g.entries,
        value: pct(share) + ' of time, ' + fmtInt(g.entries) + ' calls, mean ' + fmtNs(g.duration_ns.mean),
        hints: [{ text: g.entry_selector_hint }, { text: g.exit_selector_hint }],
        cells: [fmtInt(g.entries), fmtNs(g.duration_ns.total), fmtNs(g.duration_ns.mean), fmtNs(g.duration_ns.max), fmtInt(g.errors)]
      };
    });
    barTable(s, 'inventory', rows, ['syscall and selector hints', 'time share', 'calls', 'total', 'mean', 'max', 'errors']);
    footer();
  }
  function renderAggregate() {
    var inv = doc.inventory, h = inventoryHead(inv);
    kv(h.status, 'start', 'inventory.start_selector', inv.start_selector);
    kv(h.status, 'end', 'inventory.end_selector', inv.end_selector);
    collectionCard(h.cards, doc.collection);
    var total = 0;
    inv.groups.forEach(function (g) { total += g.duration_ns.total; });
    var s = section('GPU activity (time share first, then count)');
    var rows = inv.groups.slice().sort(function (a, b) {
      return b.duration_ns.total - a.duration_ns.total || b.count - a.count;
    }).map(function (g) {
      var share = total ? g.duration_ns.total / total : 0;
      var label = g.activity + (g.name ? ' ' + g.name + (g.name_complete ? '' : '...') : '') + (g.memcpy_kind ? ' ' + g.memcpy_kind : '') +
        (g.device_id !== null ? ' (device ' + g.device_id + ')' : '');
      return {
        label: label, share: share, count: g.count,
        value: pct(share) + ' of time, ' + fmtInt(g.count) + ' activities, mean ' + fmtNs(g.duration_ns.mean),
        hints: [{ text: g.start_selector_hint }, { text: g.end_selector_hint }],
        cells: [fmtInt(g.count), fmtNs(g.duration_ns.total), fmtNs(g.duration_ns.mean), fmtNs(g.duration_ns.max),
          g.total_bytes === null ? '' : fmtInt(g.total_bytes)]
      };
    });
    barTable(s, 'inventory', rows, ['activity and selector hints', 'time share', 'count', 'total', 'mean', 'max', 'bytes']);
    footer();
  }
  function renderHistogram() {
    var hg = doc.histogram;
    header(hg.name, hg.start_selector + '  ->  ' + hg.end_selector + '   (--match ' + hg.match_policy + ', ' + hg.pairing + ')', hg.target);
    var cards = add(app, el('div', 'cards'));
    var st = add(cards, el('div', 'card'));
    add(st, el('h3', null, 'status'));
    var dl = add(st, el('dl', 'kv'));
    kv(dl, 'status', 'status', doc.status).replaceChildren(badge(doc.status));
    kv(dl, 'count', 'histogram.stats.count', hg.stats.count, fmtInt(hg.stats.count));
    kv(dl, 'min', 'histogram.stats.min_ns', hg.stats.min_ns, fmtNs(hg.stats.min_ns));
    kv(dl, 'mean', 'histogram.stats.mean_ns', hg.stats.mean_ns, fmtNs(hg.stats.mean_ns));
    kv(dl, 'max', 'histogram.stats.max_ns', hg.stats.max_ns, fmtNs(hg.stats.max_ns));
    kv(dl, 'grouped by', 'histogram.group_by', hg.group_by);
    var wc = add(cards, el('div', 'card'));
    add(wc, el('h3', null, 'warnings'));
    warningsList(wc, doc.warnings);
    if (doc.collection) collectionCard(cards, doc.collection);
    var ps = section('Percentiles (from the buckets; bounded error)');
    var t = add(ps, el('table', 'grid'));
    t.id = 'percentiles';
    var hr = add(add(t, el('thead')), el('tr'));
    ['percentile', 'value', 'bucket', 'relative error bound'].forEach(function (k) { add(hr, el('th', null, k)); });
    var tb = add(t, el('tbody'));
    var unit = rowUnit(hg.percentiles.map(function (p) { return p.value_ns; }));
    hg.percentiles.forEach(function (p) {
      var row = add(tb, el('tr'));
      add(row, el('td', null, 'p' + p.percentile));
      add(row, field('td', 'histogram.percentiles.' + p.percentile, p.value_ns, fmtNsIn(p.value_ns, unit))).title = p.value_ns + ' ns';
      add(row, el('td', null, '[' + fmtShort(p.bucket_lower_ns) + ', ' + fmtShort(p.bucket_upper_ns) + ')'));
      add(row, el('td', null, pct(p.relative_error_bound)));
    });
    var hs = section('Histogram');
    histogramChart(hs, hg.buckets, 'pairs', 'latency (bucket lower bound)');
    add(hs, el('p', 'note', hg.bucket_scheme.kind + ' buckets (' + hg.bucket_scheme.sub_buckets_per_power_of_two +
      ' per power of two, exact below ' + fmtNs(hg.bucket_scheme.exact_below_ns) + '), counted in the kernel'));
    if (hg.explain) renderExplain(hg.explain);
    if (hg.groups && hg.groups.length) {
      var gs = section('Groups by ' + hg.group_by + ' (pairs first)');
      var total = hg.stats.count || 1;
      var rows = hg.groups.slice().sort(function (a, b) { return b.stats.count - a.stats.count || a.key - b.key; }).map(function (g) {
        return {
          label: g.label, share: g.stats.count / total, count: g.stats.count,
          value: fmtInt(g.stats.count) + ' pairs, mean ' + fmtNs(g.stats.mean_ns) + ', max ' + fmtNs(g.stats.max_ns),
          cells: [fmtInt(g.stats.count), fmtNs(g.stats.min_ns), fmtNs(g.stats.mean_ns), fmtNs(g.stats.max_ns)]
        };
      });
      barTable(gs, 'inventory', rows, ['group', 'share of pairs', 'pairs', 'min', 'mean', 'max']);
    }
    footer();
  }

  // --- --explain: each bucket's bar split by what its pairs' time was ---
  var EX_PARTS = [['on_cpu_ns', 'c', 'on CPU'], ['runqueue_ns', 'r', 'run queue'],
    ['blocked_interruptible_ns', 's', 'blocked (S)'], ['blocked_uninterruptible_ns', 'd', 'blocked (D)']];
  function explainChart(parent, buckets) {
    var wrap = add(parent, el('div', 'chart'));
    wrap.id = 'explain-chart';
    var n = buckets.length, max = 0;
    if (!n) { add(wrap, el('p', 'note', 'no pairs')); return; }
    buckets.forEach(function (b) { if (b.count > max) max = b.count; });
    var slot = Math.max(34, Math.min(70, Math.floor(880 / n)));
    var left = 60, top = 16, height = 200, right = left + slot * n;
    var s = add(wrap, svg('svg', { width: right + 10, height: top + height + 60, role: 'img',
      'aria-label': 'latency histogram split by where the time went' }));
    var axis = add(s, svg('g', { 'class': 'axis' }));
    niceTicks(0, max, 4).forEach(function (t) {
      var yy = top + height - t / max * height;
      add(axis, svgText(left - 6, yy + 4, fmtInt(t), 'end'));
    });
    add(axis, svg('line', { x1: left, x2: right, y1: top + height, y2: top + height }));
    buckets.forEach(function (b, i) {
      var x = left + i * slot, h = b.count / max * height, y0 = top + height;
      var sum = EX_PARTS.reduce(function (a, p) { return a + b[p[0]]; }, 0) || 1;
      add(axis, svgText(x + slot / 2, top + height + 14, fmtShort(b.lower_ns), 'middle'));
      EX_PARTS.forEach(function (p) {
        var seg = b[p[0]] / sum * h;
        if (seg <= 0) return;
        y0 -= seg;
        var r = add(s, svg('rect', { 'class': 'exseg ex-' + p[1], x: x + 3, y: y0, width: slot - 6,
          height: Math.max(0.5, seg), 'data-part': p[0], 'data-ns': b[p[0]], 'data-lower': b.lower_ns }));
        r.addEventListener('mousemove', function (ev) {
          showTip(ev, bucketLabel(b) + '  ' + fmtInt(b.count) + ' pairs\n' + p[2] + ': ' + fmtNs(b[p[0]]) +
            ' (' + pct(b[p[0]] / sum) + ')');
        });
        r.addEventListener('mouseleave', hideTip);
      });
    });
    var lg = add(parent, el('p', 'note exlegend'));
    EX_PARTS.forEach(function (p) {
      add(lg, el('span', 'ex-' + p[1]));
      add(lg, document.createTextNode(p[2]));
    });
  }
  // --- latency over time: one dot per drawn pair (exact results) -----------
  // x: the pair's start after t0; y: its latency, log scale.  With --explain
  // each dot takes the color of the part that took most of its time.
  function dominant(tl, j) {
    if (!tl.on_cpu || tl.on_cpu[j] === null) return null;
    var v = [tl.on_cpu[j], tl.runqueue[j], tl.blocked_s[j], tl.blocked_d[j]], best = 0;
    for (var i = 1; i < 4; i++) if (v[i] > v[best]) best = i;
    return best;
  }
  function scatter(parent, tl) {
    var wrap = add(parent, el('div', 'chart'));
    wrap.id = 'scatter';
    var n = tl.pair.length;
    if (!n) { add(wrap, el('p', 'note', 'no pairs')); return; }
    var xmax = 1, lmin = Infinity, lmax = 1;
    for (var j = 0; j < n; j++) {
      if (tl.start[j] > xmax) xmax = tl.start[j];
      if (tl.latency[j] > lmax) lmax = tl.latency[j];
      if (tl.latency[j] < lmin) lmin = tl.latency[j];
    }
    lmin = Math.max(1, lmin);
    var y0 = Math.floor(Math.log10(lmin)), y1 = Math.max(y0 + 1, Math.ceil(Math.log10(lmax)));
    var left = 70, top = 10, width = 860, height = 220;
    var s = add(wrap, svg('svg', { width: left + width + 20, height: top + height + 40, role: 'img',
      'aria-label': 'latency of each pair over time' }));
    var axis = add(s, svg('g', { 'class': 'axis' }));
    for (var d = y0; d <= y1; d++) {
      var yy = top + height - (d - y0) / (y1 - y0) * height;
      add(axis, svgText(left - 6, yy + 4, fmtShort(Math.pow(10, d)), 'end'));
      add(axis, svg('line', { x1: left, x2: left + width, y1: yy, y2: yy, 'class': 'grid' }));
    }
    niceTicks(0, xmax, 6).forEach(function (t) {
      add(axis, svgText(left + t / xmax * width, top + height + 16, '+' + fmtShort(t), 'middle'));
    });
    var names = ['on CPU', 'run queue', 'blocked (S)', 'blocked (D)'], cls = ['c', 'r', 's', 'd'];
    for (j = 0; j < n; j++) {
      (function (j) {
        var dm = dominant(tl, j), lat = Math.max(1, tl.latency[j]);
        var c = add(s, svg('circle', { 'class': 'dot' + (dm === null ? '' : ' ex-' + cls[dm]),
          cx: left + tl.start[j] / xmax * width,
          cy: top + height - (Math.log10(lat) - y0) / (y1 - y0) * height, r: 2.5,
          'data-pair': tl.pair[j] }));
        c.addEventListener('mousemove', function (ev) {
          var tip = 'pair #' + tl.pair[j] + '  latency ' + fmtNs(tl.latency[j]) + '\nstarts t0 +' + fmtNs(tl.start[j]);
          if (dm !== null)
            tip += '\non CPU ' + fmtNs(tl.on_cpu[j]) + ', run queue ' + fmtNs(tl.runqueue[j]) + ', blocked ' +
              fmtNs(tl.blocked_s[j] + tl.blocked_d[j]) + ' (mostly ' + names[dm] + ')';
          showTip(ev, tip);
        });
        c.addEventListener('mouseleave', hideTip);
      })(j);
    }
    add(parent, el('p', 'note', 'one dot per pair drawn (the timeline\'s ' + fmtInt(n) + '), its latency on a log scale' +
      (tl.on_cpu ? '; colored by the part that took most of it: blue on CPU, orange run queue, grey blocked (S), brown blocked (D)' : '')));
  }

  function stackText(frames) {
    return frames ? frames.slice().reverse().join('\n  ') : '(not captured)';
  }
  function renderExplain(ex) {
    var es = section('Where the time went (--explain)');
    var t = ex.total, blocked = t.blocked_ns, whole = t.on_cpu_ns + t.runqueue_ns + blocked || 1;
    add(es, el('p', 'note', 'on CPU ' + fmtNs(t.on_cpu_ns) + ' (' + pct(t.on_cpu_ns / whole) + '), run queue ' +
      fmtNs(t.runqueue_ns) + ' (' + pct(t.runqueue_ns / whole) + '), blocked ' + fmtNs(blocked) + ' (' +
      pct(blocked / whole) + ') over ' + fmtInt(t.pairs) + ' pairs; ' + fmtInt(t.voluntary_switches) +
      ' voluntary and ' + fmtInt(t.involuntary_switches) + ' involuntary switches, ' + fmtInt(t.migrations) +
      ' migrations. The parts add up to each pair\'s latency.'));
    if (ex.buckets) explainChart(es, ex.buckets);
    if (ex.unexplained_pairs) {
      var u = ex.unexplained_pairs, un = u.threads_differ + u.not_host_clock + u.scheduler_records_lost;
      if (un) add(es, el('p', 'note', fmtInt(un) + ' pairs not explained: ' + fmtInt(u.threads_differ) +
        ' across threads, ' + fmtInt(u.not_host_clock) + ' on a GPU clock, ' + fmtInt(u.scheduler_records_lost) +
        ' after scheduler records were lost'));
    }
    if (ex.blocked_by_syscall.length) {
      var bt = add(es, el('table', 'grid'));
      bt.id = 'explain-blocked';
      var hr = add(add(bt, el('thead')), el('tr'));
      ['blocked in', 'state', 'time'].forEach(function (k) { add(hr, el('th', null, k)); });
      var tb = add(bt, el('tbody'));
      ex.blocked_by_syscall.forEach(function (b) {
        var row = add(tb, el('tr'));
        add(row, el('td', 'mono', b.syscall || 'no syscall (page fault)'));
        add(row, el('td', null, b.state));
        add(row, el('td', null, fmtNs(b.ns)));
      });
    }
    var ss = section('Slowest pairs (' + ex.slowest.length + ' of at most ' + ex.top + '; expand one for its stacks)');
    var list = add(ss, el('div'));
    list.id = 'explain-slow';
    ex.slowest.forEach(function (p) {
      var d = add(list, el('details'));
      var q = p.parts, b = p.longest_block;
      add(d, el('summary', 'mono', fmtNs(p.latency_ns) + '  tid ' + p.tid + ': on CPU ' + fmtNs(q.on_cpu_ns) +
        ', run queue ' + fmtNs(q.runqueue_ns) + ', blocked ' + fmtNs(q.blocked_ns) +
        (b ? '; longest block ' + fmtNs(b.ns) + ' in ' + (b.syscall || 'no syscall') +
          (b.waker ? ', woken by ' + b.waker.comm + ' (tid ' + b.waker.tid + ')' : '') : '')));
      if (!b) { add(d, el('p', 'note', 'no blocked period inside this pair')); return; }
      add(d, el('pre', null, 'blocked (outermost first):\n  ' + stackText(b.user_stack) + '\n  ' +
        stackText(b.kernel_stack)));
      if (b.waker)
        add(d, el('pre', null, 'waker ' + b.waker.comm + ' (pid ' + b.waker.pid + ', tid ' + b.waker.tid +
          '):\n  ' + stackText(b.waker.user_stack) + '\n  ' + stackText(b.waker.kernel_stack)));
    });
  }

  var renderers = {
    measurement: renderMeasurement, measurement_error: renderError, cpu_sample: renderCpuSample,
    syscall_aggregate: renderSyscalls, aggregate: renderAggregate, histogram: renderHistogram
  };
  if (!renderers[rep.kind]) throw new Error('unknown report kind ' + rep.kind);
  renderers[rep.kind]();
  window.xprobeReport = { renderMs: performance.now() - started, kind: rep.kind };
  document.body.setAttribute('data-rendered', 'true');
})();
