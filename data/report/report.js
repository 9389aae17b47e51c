/*
 * gpusched report: the renderer of the report's views, one for every page that shows them.
 * gsReport.render(data, root) draws @data into the element @root, again as often as it is
 * called (each call replaces what the last drew): a replay, a scenario run, or the live view of
 * a running gpuschedd (data.kind 'live', put together from its API by ui.js). A page written by
 * gpusched report carries its data in the element #gs-report-data and is drawn from it at once.
 * Charts are Chart.js's (inlined before this script); the cluster map is a grid of boxes:
 * zones, their nodes, each node's PCIe domains, in each the cards of one NVLink group together,
 * each card coloured by its state at the slider's time.
 * Each chart's canvas has an id (chart-<what>[-<way>]) so a test finds it with Chart.getChart().
 */
'use strict';
window.gsReport = (function () {
  let data, root, charts = [], mapStyle = null;
  const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
                   '#ff9da7', '#9c755f', '#bab0ac'];
  const WAY_COLOURS = {exclusive: '#9c755f', sharing: '#76b7b2', full: '#4e79a7'};
  const tenantColour = new Map();
  const colourOf = (name, i) => tenantColour.get(name) || PALETTE[i % PALETTE.length];

  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.family = 'system-ui, sans-serif';

  /* ---- Small DOM helpers ---- */
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'text') e.textContent = v;
      else if (k === 'class') e.className = v;
      else e.setAttribute(k, v);
    }
    for (const k of kids) if (k) e.appendChild(k);
    return e;
  }
  function section(title, note) {
    const s = el('section', {}, el('h2', {text: title}));
    if (note) s.appendChild(el('p', {class: 'note', text: note}));
    root.appendChild(s);
    return s;
  }
  function chart(parent, id, title, config, tall) {
    const canvas = el('canvas', {id: id});
    parent.appendChild(el('figure', {class: tall ? 'chart tall' : 'chart'},
                          el('figcaption', {text: title}), el('div', {class: 'box'}, canvas)));
    const c = new Chart(canvas, config);
    charts.push(c);
    return c;
  }
  function table(parent, head, rows, cls) {
    const t = el('table', {class: cls || ''});
    t.appendChild(el('thead', {}, el('tr', {}, ...head.map((h) => el('th', {text: h})))));
    const body = el('tbody');
    for (const r of rows) body.appendChild(el('tr', {}, ...r.map((c) => el('td', {text: c}))));
    t.appendChild(body);
    parent.appendChild(t);
    return t;
  }
  const fmt = (x, d) => (x === null || x === undefined ? '-' :
    Number(x).toLocaleString('en-US', {minimumFractionDigits: d, maximumFractionDigits: d}));
  const pct = (ratio) => (ratio === undefined ? '-' : fmt(100 * ratio, 1) + ' %');
  function clock(s, horizon) {
    const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600);
    const m = Math.floor((s % 3600) / 60);
    const hm = String(h).padStart(2, '0') + ':' + String(m).padStart(2, '0');
    return horizon > 86400 ? 'd' + (d + 1) + ' ' + hm : hm;
  }
  const gpus = (milli) => milli / 1000;
  /* Points on a line only when there are few: the live view's first samples. */
  const dots = (t) => (t.steps < 40 ? 2 : 0);
  const timeAxis = () => (data.kind === 'live' ? 'time' : 'simulated time');
  const axes = (x, y, stacked) => ({
    x: {title: {display: true, text: x}, stacked: !!stacked},
    y: {title: {display: true, text: y}, stacked: !!stacked, beginAtZero: true},
  });

  /* ---- Header ---- */
  function header() {
    document.title = data.title;
    const kind = {replay: 'Trace replay', scenario: 'Multi-tenant scenario run',
                  live: 'Live view'}[data.kind] || 'Multi-tenant scenario run';
    root.appendChild(el('header', {}, el('h1', {text: data.title}),
                        el('p', {class: 'note', text: kind + ' from ' + data.source +
                          ', drawn by ' + data.generator + '.'})));
  }

  /* ---- A replay: policies side by side ---- */
  function replay() {
    const pols = data.policies;
    const points = ['80', '90', '95', '100', '110', '130'];
    const s = section('Allocation against arrived demand',
      'GPU allocation (% of capacity) as the arrived GPU request grows, ' +
      (pols[0].seeds.length > 1 ? 'mean over seeds ' + pols[0].seeds.join(', ') : 'one seed') +
      '. A point is drawn where every seed reached it.');
    table(s, ['policy', ...points.map((p) => p + ' %'), 'unallocated GPUs', 'fragmented GPUs',
              'pods placed', 'pods failed'],
          pols.map((p) => [p.name,
            ...points.map((k) => fmt(p.summary.gpu_allocation_at_arrived_pct[k], 2)),
            fmt(p.summary.unallocated_gpus, 1), fmt(p.summary.fragmented_gpus, 1),
            fmt(p.summary.pods_placed, 0), fmt(p.summary.pods_failed, 0)]), 'figures');
    const xs = new Set();
    pols.forEach((p) => p.curve.arrived_pct.forEach((x) => x >= 70 && xs.add(x)));
    const labels = [...xs].sort((a, b) => a - b);
    chart(s, 'chart-curve', 'Allocation % against arrived % (from 70 % arrived: below, every ' +
          'policy places every pod)', {
      type: 'line',
      data: {labels: labels, datasets: pols.map((p, i) => {
        const at = new Map(p.curve.arrived_pct.map((x, j) => [x, p.curve.allocation_pct[j]]));
        return {label: p.name, data: labels.map((x) => (at.has(x) ? at.get(x) : null)),
                borderColor: PALETTE[i % 10], backgroundColor: PALETTE[i % 10], pointRadius: 0,
                borderWidth: 2, spanGaps: false};
      })},
      options: {scales: {x: {title: {display: true, text: 'arrived GPU request, % of capacity'}},
                         y: {min: 70, title: {display: true, text: 'GPU allocation, %'}}}},
    }, true);
    chart(s, 'chart-points', 'Allocation at the study\'s points', {
      type: 'bar',
      data: {labels: points.map((p) => p + ' % arrived'), datasets: pols.map((p, i) => ({
        label: p.name, backgroundColor: PALETTE[i % 10],
        data: points.map((k) => p.summary.gpu_allocation_at_arrived_pct[k]),
      }))},
      options: {scales: {y: {min: 70, title: {display: true, text: 'GPU allocation, %'}}}},
    });
    const f = section('What is left at the end');
    chart(f, 'chart-unallocated', 'Unallocated and fragmented GPUs at the end', {
      type: 'bar',
      data: {labels: pols.map((p) => p.name), datasets: [
        {label: 'unallocated GPUs', backgroundColor: PALETTE[0],
         data: pols.map((p) => p.summary.unallocated_gpus)},
        {label: 'fragmented GPUs', backgroundColor: PALETTE[1],
         data: pols.map((p) => p.summary.fragmented_gpus)}]},
      options: {scales: axes('policy', 'GPUs')},
    });
    const reasons = [...new Set(pols.flatMap((p) => Object.keys(p.summary.failed_by_reason)))];
    chart(f, 'chart-failed', 'Failed pods by reason', {
      type: 'bar',
      data: {labels: pols.map((p) => p.name), datasets: reasons.map((r, i) => ({
        label: r, backgroundColor: PALETTE[(i + 2) % 10],
        data: pols.map((p) => p.summary.failed_by_reason[r] || 0),
      }))},
      options: {scales: axes('policy', 'pods', true)},
    });
  }

  /* ---- A scenario run: one way or several ---- */
  function scenario() {
    const ways = data.ways;
    const horizon = Math.max(...ways.map((w) => w.summary.horizon_s || 0));
    const s = section('At a glance');
    table(s, ['', ...ways.map((w) => w.way)], [
      ['GPU allocation, time-averaged', ...ways.map((w) => pct(w.summary.gpu_allocation_ratio))],
      ['GPU busy (modelled)', ...ways.map((w) => pct(w.summary.gpu_utilization))],
      ['pods completed', ...ways.map((w) => fmt(w.summary.completed, 0))],
      ['pods rejected', ...ways.map((w) => fmt(w.summary.rejected, 0))],
      ['evictions (preemption + reclaim)', ...ways.map((w) =>
        fmt(w.summary.preemptions, 0) + ' + ' + fmt(w.summary.reclaims, 0))],
      ['Jain fairness (x1000)', ...ways.map((w) => fmt(1000 * w.summary.jain_fairness, 0))],
      ['bill, all tenants', ...ways.map((w) => w.bill.total)],
    ], 'figures');

    const tl = ways.filter((w) => w.timeline);
    if (tl.length) demand(tl, horizon);
    for (const w of ways) perWay(w, horizon);
    bills(ways);
    if (data.cluster && data.states) clusterMap(ways.filter((w) => w.map), horizon);
    else section('Cluster map', data.map_note);
  }

  function timeLabels(t, horizon) {
    if (t.labels) return t.labels; /* the live view's wall-clock times */
    return Array.from({length: t.steps}, (_, i) => clock(i * t.step_s, horizon));
  }
  const sum = (lists, i) => lists.reduce((a, l) => a + l[i], 0);

  function demand(ways, horizon) {
    const s = section('Allocation against arrived demand',
      'GPUs allocated (the mean over each step) and GPUs asked by the pods that had arrived and ' +
      'not yet ended (running or waiting), per way.');
    const t0 = ways[0].timeline;
    const datasets = [];
    for (const w of ways) {
      const c = WAY_COLOURS[w.way] || PALETTE[datasets.length % 10];
      const t = w.timeline;
      datasets.push({label: w.way + ' allocated', borderColor: c, backgroundColor: c,
        data: Array.from({length: t.steps}, (_, i) =>
          gpus(sum(t.tenants.map((x) => x.allocated_milli), i))), pointRadius: dots(t), borderWidth: 2});
      datasets.push({label: w.way + ' demand', borderColor: c, backgroundColor: c,
        borderDash: [6, 4], data: Array.from({length: t.steps}, (_, i) =>
          gpus(sum(t.queues.map((x) => x.demand_milli), i))), pointRadius: dots(t), borderWidth: 1});
    }
    datasets.push({label: 'capacity', borderColor: '#333', backgroundColor: '#333',
                   data: Array(t0.steps).fill(gpus(t0.capacity_milli)), pointRadius: dots(t0),
                   borderWidth: 1});
    chart(s, 'chart-demand', 'GPUs allocated and asked', {
      type: 'line', data: {labels: timeLabels(t0, horizon), datasets: datasets},
      options: {scales: axes(timeAxis(), 'GPUs')},
    }, true);
  }

  function stacked(parent, id, title, t, key, horizon) {
    return chart(parent, id, title, {
      type: 'line',
      data: {labels: timeLabels(t, horizon), datasets: t.tenants.map((x, i) => ({
        label: x.name, data: x[key].map(gpus), fill: true, pointRadius: dots(t), borderWidth: 1,
        borderColor: colourOf(x.name, i), backgroundColor: colourOf(x.name, i) + 'b0',
      }))},
      options: {scales: axes(timeAxis(), 'GPUs', true),
                interaction: {mode: 'index', intersect: false}},
    });
  }

  function perWay(w, horizon) {
    const s = section(data.kind === 'live' ? 'Over time' : 'Way ' + w.way,
                      'GPUs are cards; a share of a card counts as its part.' +
                      (data.kind === 'live' ? ' ' + data.sampling : ''));
    s.id = 'way-' + w.way;
    const grid = el('div', {class: 'grid'});
    s.appendChild(grid);
    const t = w.timeline;
    if (t) {
      stacked(grid, 'chart-alloc-' + w.way, 'Allocation by tenant', t, 'allocated_milli', horizon);
      if (t.tenants.length && t.tenants[0].busy_milli)
        stacked(grid, 'chart-busy-' + w.way, 'Utilisation (modelled busy) by tenant', t,
                'busy_milli', horizon);
      chart(grid, 'chart-queues-' + w.way, 'Queue allocation (solid) against deserved share ' +
            '(dashed)', {
        type: 'line',
        data: {labels: timeLabels(t, horizon), datasets: t.queues.flatMap((q, i) => [
          {label: q.name + ' allocated', data: q.allocated_milli.map(gpus), pointRadius: dots(t),
           borderWidth: 2, borderColor: PALETTE[(i + 4) % 10],
           backgroundColor: PALETTE[(i + 4) % 10]},
          {label: q.name + ' deserved', data: q.deserved_milli.map(gpus), pointRadius: dots(t),
           borderWidth: 1, borderDash: [5, 4], borderColor: PALETTE[(i + 4) % 10],
           backgroundColor: PALETTE[(i + 4) % 10]}])},
        options: {scales: axes(timeAxis(), 'GPUs')},
      });
      const ev = w.evictions || {total: 0, series: []};
      if (w.evictions) chart(grid, 'chart-evictions-' + w.way, 'Evictions by victim tenant (' +
            fmt(ev.total, 0) + ' in all)', {
        type: 'bar',
        data: {labels: timeLabels(t, horizon), datasets: ev.series.map((x) => ({
          label: x.tenant + ' ' + (x.kind === 'node' ? 'node failure' : x.kind), data: x.counts,
          stack: 'all',
          backgroundColor: colourOf(x.tenant, 0) +
            ({reclaim: '80', node: '40'}[x.kind] || 'ff'),
        }))},
        options: {scales: axes(timeAxis(), 'pods evicted', true)},
      });
    }
    const wt = w.waits;
    const edges = wt.edges_s;
    const binLabel = (i) => (i === 0 ? 'no wait' : i === edges.length ?
      'over ' + dur(edges[i - 1]) : (i === 1 ? '1 s' : dur(edges[i - 1])) + ' - ' + dur(edges[i]));
    chart(grid, 'chart-waits-' + w.way, 'Wait from submission to start, by workload kind', {
      type: 'bar',
      data: {labels: Array.from({length: edges.length + 1}, (_, i) => binLabel(i)),
             datasets: wt.kinds.map((k, i) => ({label: k.name + ' (' + fmt(k.pods, 0) + ' pods)',
                                                data: k.counts,
                                                backgroundColor: PALETTE[(i + 1) % 10]}))},
      options: {scales: axes('wait', 'pods')},
    });
  }
  function dur(s) {
    return s >= 3600 ? s / 3600 + ' h' : s >= 60 ? s / 60 + ' min' : s + ' s';
  }

  function bills(ways) {
    const s = section('Bills per tenant', 'Priced as gpusched bill prices the same run (' +
                      ways[0].bill.currency + '); exact amounts: gpusched bill --format csv.');
    const names = [...new Set(ways.flatMap((w) => w.bill.tenants.map((t) => t.name)))];
    const of = (w, n) => w.bill.tenants.find((t) => t.name === n);
    table(s, ['tenant', ...ways.map((w) => w.way)], [
      ...names.map((n) => [n, ...ways.map((w) => (of(w, n) ? of(w, n).total : '-'))]),
      ['all tenants', ...ways.map((w) => w.bill.total)]], 'figures');
    chart(s, 'chart-bills', 'Bill per tenant, per way', {
      type: 'bar',
      data: {labels: names, datasets: ways.map((w, i) => ({
        label: w.way, backgroundColor: WAY_COLOURS[w.way] || PALETTE[i % 10],
        data: names.map((n) => (of(w, n) ? of(w, n).total_udollars / 1e6 : 0)),
      }))},
      options: {scales: axes('tenant', ways[0].bill.currency)},
    });
  }

  /* ---- The cluster map ---- */
  /* A tenant the viewer may not see (the live view of a tenant's token) is ''. */
  const tenantName = (t) => t || 'other tenants';
  function stateLabel(st) {
    if (st.mode === 'free') return 'free';
    if (st.mode === 'mig')
      return 'mig ' + st.mig.map((m) => m.profile + '@' + m.start + '=' + tenantName(m.tenant))
        .join(',');
    return st.mode + ' ' + st.tenants.map(tenantName).join(',');
  }
  function stateStyle(st) {
    const c = st.tenants.map((t, i) => colourOf(t, i));
    switch (st.mode) {
    case 'free': return 'background:#eceff1';
    case 'exclusive': return 'background:' + c[0];
    case 'shared': return 'background:repeating-linear-gradient(45deg,' + c.map((x, i) =>
      x + ' ' + 4 * i + 'px ' + (4 * i + 3) + 'px,#fff ' + (4 * i + 3) + 'px ' + 4 * (i + 1) +
      'px').join(',') + ')';
    case 'timesliced': return 'background:repeating-linear-gradient(0deg,' + c.map((x, i) =>
      x + ' ' + 3 * i + 'px ' + (3 * i + 2) + 'px,#fff ' + (3 * i + 2) + 'px ' + 3 * (i + 1) +
      'px').join(',') + ')';
    default: { /* MIG: each instance over its memory slices, free slices grey */
      const stops = [];
      let at = 0;
      const w = 100 / st.slices;
      for (const m of st.mig) {
        if (m.start > at) stops.push('#cfd8dc ' + at * w + '% ' + m.start * w + '%');
        stops.push(colourOf(m.tenant, 0) + ' ' + m.start * w + '% ' + (m.start + m.size) * w +
                   '%');
        at = m.start + m.size;
      }
      if (at < st.slices) stops.push('#cfd8dc ' + at * w + '% 100%');
      return 'background:linear-gradient(to right,' + stops.join(',') + ');' +
             'outline:1px dashed #263238;outline-offset:-1px';
    }
    }
  }

  function clusterMap(ways, horizon) {
    const s = section('Cluster map', 'Zones, their nodes, each node\'s PCIe domains and, inside ' +
      'each, its cards grouped by NVLink group. A card is coloured by its tenant: solid when held ' +
      'whole, striped when shared (diagonal) or time-sliced (across), split by memory slice for ' +
      'MIG instances, grey when free. Hover a card for what holds it.');
    const style = document.createElement('style');
    style.textContent = data.states.map((st, i) => '.s' + i + '{' + stateStyle(st) + '}')
      .join('\n');
    document.head.appendChild(style);
    mapStyle = style;
    const labels = data.states.map(stateLabel);
    const controls = el('div', {class: 'controls'});
    const pick = el('select', {id: 'map-way'});
    ways.forEach((w, i) => pick.appendChild(el('option', {value: String(i), text: w.way})));
    const slider = el('input', {id: 'map-time', type: 'range', min: '0', value: '0'});
    const when = el('output', {id: 'map-clock'});
    controls.append(el('label', {text: 'way '}), pick, el('label', {text: ' time '}), slider,
                    when);
    s.appendChild(controls);
    const legend = el('div', {class: 'legend'});
    (data.tenants || []).forEach((t, i) => legend.appendChild(
      el('span', {}, el('i', {style: 'background:' + colourOf(t, i)}), document.createTextNode(t))));
    if (data.states.some((st) => st.tenants.includes('') || (st.mig || []).some((m) => !m.tenant)))
      legend.appendChild(el('span', {}, el('i', {style: 'background:' + colourOf('', 0)}),
                            document.createTextNode('other tenants')));
    tenantColour.set('', '#78909c'); /* the modes' samples: a tenant of no colour */
    const sample = {tenants: [''], mig: [{start: 0, size: 3, tenant: ''}], slices: 8};
    for (const [mode, text] of [['free', 'free'], ['exclusive', 'whole'], ['shared', 'shared'],
                                ['timesliced', 'time-sliced'], ['mig', 'MIG instances']])
      legend.appendChild(el('span', {}, el('i', {class: 'mode',
        style: stateStyle(Object.assign({}, sample, {mode: mode}))}), document.createTextNode(text)));
    s.appendChild(legend);
    const grid = el('div', {class: 'map', id: 'map'});
    s.appendChild(grid);

    /* The boxes, as one string: tens of thousands of cards are drawn at once. */
    const CHUNK = 64;
    const order = []; /* card numbers in the order the boxes come */
    const html = [];
    let card = 0;
    const named = data.cluster.zones.reduce((a, z) => a + z.nodes.length, 0) <= 300;
    for (const z of data.cluster.zones) {
      html.push('<div class="zone"><h3>', esc(z.name), ' (', z.nodes.length,
                ' nodes)</h3><div class="nodes">');
      z.nodes.forEach((n, at) => {
        /* Rows of nodes in blocks the browser lays out only when they scroll into view. */
        if (at % CHUNK === 0) html.push(at ? '</div>' : '', '<div class="chunk">');
        html.push('<div class="node" title="', esc(n.name + ' - ' + (n.model || 'no GPU') + ', ' +
                  n.template), '">', named ? '<span>' + esc(n.name) + '</span>' : '');
        const domains = [...new Set(n.pcie_domain)].sort((a, b) => a - b);
        for (const d of domains) {
          html.push('<div class="pcie">');
          const groups = [...new Set(n.nvlink_group.filter((g, i) => n.pcie_domain[i] === d))];
          for (const g of groups) {
            html.push('<div class="nvl', g === null ? ' none' : '', '">');
            for (let i = 0; i < n.gpus; i++) {
              if (n.pcie_domain[i] !== d || n.nvlink_group[i] !== g) continue;
              html.push('<b class="card s0" data-c="', card + i, '" data-state="free"></b>');
              order.push(card + i);
            }
            html.push('</div>');
          }
          html.push('</div>');
        }
        html.push('</div>');
        card += n.gpus;
      });
      html.push(z.nodes.length ? '</div>' : '', '</div></div>');
    }
    grid.innerHTML = html.join('');
    grid.classList.add(card <= 600 ? 'large' : card <= 2000 ? 'medium' : 'huge');
    const cells = new Array(card), boxes = grid.getElementsByTagName('b');
    for (let i = 0; i < boxes.length; i++) cells[order[i]] = boxes[i];
    grid.addEventListener('mouseover', (e) => {
      const b = e.target.closest('.card');
      if (b) {
        const n = b.closest('.node');
        b.title = n.title.split(' - ')[0] + ' card ' + (b.dataset.c - cardBase(b)) + ': ' +
                  b.dataset.state;
      }
    });
    function cardBase(b) {
      let min = Infinity;
      for (const x of b.closest('.node').querySelectorAll('.card')) min = Math.min(min, +x.dataset.c);
      return min;
    }

    const decoded = ways.map((w) => w.map.decoded || decode(w.map));
    const shown = new Int32Array(card).fill(0);
    function draw() {
      const wi = +pick.value, m = ways[wi].map, k = +slider.value, K = m.times_s.length;
      const v = decoded[wi];
      for (let c = 0; c < card; c++) {
        const st = v[c * K + k];
        if (st !== shown[c]) {
          shown[c] = st;
          cells[c].className = 'card s' + st;
          cells[c].dataset.state = labels[st];
        }
      }
      when.textContent = m.labels ? m.labels[k] :
        clock(m.times_s[k], horizon) + ' (' + m.times_s[k] + ' s)';
      slider.dataset.time = String(m.times_s[k]);
    }
    function setWay() {
      const m = ways[+pick.value].map;
      slider.max = String(m.times_s.length - 1);
      if (+slider.value > m.times_s.length - 1) slider.value = slider.max;
      draw();
    }
    pick.addEventListener('change', setWay);
    slider.addEventListener('input', draw);
    pick.value = String(ways.length - 1);
    slider.max = String(ways[ways.length - 1].map.times_s.length - 1);
    const K = ways[ways.length - 1].map.times_s.length;
    slider.value = String(data.kind === 'live' ? K - 1 : Math.floor(K / 2)); /* live: now */
    setWay();
  }
  function decode(m) {
    const bin = atob(m.cells);
    const out = new Uint16Array(bin.length / m.width);
    for (let i = 0; i < out.length; i++)
      out[i] = m.width === 2 ? bin.charCodeAt(2 * i) | (bin.charCodeAt(2 * i + 1) << 8) :
        bin.charCodeAt(i);
    return out;
  }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;',
                                                 '"': '&quot;'})[c]);
  }

  /* ---- The live view of a running gpuschedd ---- */
  function live() {
    const w = data.ways[0], n = data.now;
    const s = section('Now', data.scope);
    table(s, ['', 'now'], [
      ['GPUs allocated, whole cluster', fmt(n.gpu_milli_allocated / 1000, 1) + ' of ' +
        fmt((n.gpu_milli - n.gpu_milli_unavailable) / 1000, 0) + ' schedulable'],
      ['pods running / pending, whole cluster', fmt(n.pods_running, 0) + ' / ' +
        fmt(n.pods_pending, 0)],
      ...(data.mine ? [['pods running / pending, ' + data.mine.name,
                        fmt(data.mine.pods_running, 0) + ' / ' + fmt(data.mine.pods_pending, 0)]]
        : []),
      ['bill so far', w.bill.total],
    ], 'figures');
    demand([w], 0);
    perWay(w, 0);
    bills([w]);
    if (data.cluster && data.states) clusterMap([w], 0);
    else section('Cluster map', data.map_note);
    pods(data.pods);
  }

  /* Pods, newest first: what they asked, where they run, why they wait. */
  function pods(list) {
    const s = section('Pods', fmt(list.length, 0) + ' pods' + (data.pods_note ? '; ' +
                      data.pods_note : '') + '.');
    const t = table(s, ['pod', 'tenant', 'queue', 'state', 'node', 'cards', 'asks', 'waited',
                        'reason'], list.map((p) => [p.namespace + '/' + p.name, p.tenant, p.queue,
      p.state, p.node || '-', p.gpus.join(','), p.asks, p.waited, p.reason || '']), 'figures pods');
    t.id = 'pods';
  }

  function render(d, r) {
    for (const c of charts) c.destroy();
    charts = [];
    if (mapStyle) mapStyle.remove();
    mapStyle = null;
    data = d;
    root = r;
    root.textContent = '';
    tenantColour.clear();
    (data.tenants || []).forEach((t, i) => tenantColour.set(t, PALETTE[i % PALETTE.length]));
    tenantColour.set('', '#78909c');
    header();
    if (data.kind === 'replay') replay();
    else if (data.kind === 'live') live();
    else scenario();
  }

  const embedded = document.getElementById('gs-report-data');
  if (embedded) {
    render(JSON.parse(embedded.textContent), document.getElementById('report'));
    document.body.dataset.ready = '1';
    performance.mark('gs-done');
  }
  return {render};
})();
