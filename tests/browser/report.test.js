#!/usr/bin/env node
/*
 * gpusched report in a real browser: Debian's chromium, driven by playwright-core, opens the
 * pages gpusched report writes for three simulations (a scenario run three ways, one way of
 * another with time-sliced cards, a replay of every policy over two seeds) and checks, against
 * the simulator's JSON itself (never the page's own data), that:
 *   - the page logs no error;
 *   - every chart is there, drawn by Chart.js, with the series and values the JSON gives;
 *   - the bills are gpusched bill's, to the cent;
 *   - moving the time slider (and picking another way) repaints the cluster map, every card in
 *     the state the pods' placements and usage give it at the slider's time.
 * Then gpuschedd's /ui, the same views live: a gpuschedd started here with pods of two tenants,
 * its page opened without a token (no data in the page, the API answers 401), as tenant A (its
 * own pods only, nothing naming tenant B's), and as the admin (every pod, each tenant's
 * allocation as GET /v1/tenants gives it, the map's cards as the pods hold them), again after
 * more pods arrive (a second sample: the slider moves between them), with no console errors.
 * Screenshots go to the directory given as the first argument (meson's build tree).
 * Usage: GPUSCHED_BIN=build/gpusched GPUSCHEDD_BIN=build/gpuschedd node
 * tests/browser/report.test.js OUT_DIR (from the source root).
 */
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const {execFileSync, spawn} = require('child_process');
const {check, same, done} = require('../common/check.js');
const {freePort, request, healthy} = require('../common/net.js');

let chromium;
try {
  ({chromium} = require('playwright-core'));
} catch (e) {
  console.error('report.test.js: playwright-core is not installed: scripts/install-deps runs ' +
                'npm ci in tests/browser');
  process.exit(1);
}
const CHROMIUM = '/usr/bin/chromium';
const BIN = process.env.GPUSCHED_BIN;
const DAEMON = process.env.GPUSCHEDD_BIN;
const OUT = path.resolve(process.argv[2] || fs.mkdtempSync(path.join(os.tmpdir(), 'gs-report-')));
if (!BIN || !DAEMON) {
  console.error('report.test.js: GPUSCHED_BIN and GPUSCHEDD_BIN must name the programs');
  process.exit(1);
}
if (!fs.existsSync(CHROMIUM)) {
  console.error('report.test.js: ' + CHROMIUM + ' is missing: scripts/install-deps installs ' +
                'Debian\'s chromium');
  process.exit(1);
}
fs.mkdirSync(OUT, {recursive: true});

function gpusched(...args) {
  return execFileSync(BIN, args, {encoding: 'utf8', maxBuffer: 1 << 30,
                                  stdio: ['ignore', 'pipe', 'inherit']});
}
const file = (name) => path.join(OUT, name);
const load = (name) => JSON.parse(fs.readFileSync(file(name), 'utf8'));

/* ---- What the JSON says ---- */

/* $27,112.95: half up to the cent, thousands separated (gs_money_format_human). */
function dollars(udollars) {
  const cents = Math.floor((udollars + 5000) / 10000);
  const whole = Math.floor(cents / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return '$' + whole + '.' + String(cents % 100).padStart(2, '0');
}

const EDGES = [0, 60, 300, 900, 3600, 10800, 21600, 43200];
function waitCounts(pods) {
  const kinds = new Map();
  for (const p of pods) {
    const k = p.workload || '(none)';
    if (!kinds.has(k)) kinds.set(k, {pods: 0, counts: Array(EDGES.length + 1).fill(0)});
    const e = kinds.get(k);
    e.pods++;
    if (p.wait_s === null) continue;
    let b = 0;
    while (b < EDGES.length && p.wait_s > EDGES[b]) b++;
    e.counts[b]++;
  }
  return kinds;
}

function evictionCounts(tl) {
  const series = new Map();
  for (const e of tl.evictions) {
    const key = e.tenant + ' ' + e.kind;
    if (!series.has(key)) series.set(key, Array(tl.steps).fill(0));
    const k = Math.min(Math.max(Math.floor(e.t_s / tl.step_s), 0), tl.steps - 1);
    series.get(key)[k]++;
  }
  return series;
}

/* Every card's state at time @t: what the uses covering it say, as the page writes it. */
function cardStates(doc, way, t) {
  const base = new Map();
  let cards = 0;
  for (const z of doc.cluster.zones)
    for (const n of z.nodes) {
      base.set(n.name, cards);
      cards += n.gpus;
    }
  const on = Array.from({length: cards}, () => []);
  for (const p of way.pods)
    p.usage.forEach((u, i) => {
      if (!(u.start_s <= t && t < u.end_s)) return;
      const pl = p.placements[i];
      for (const g of pl.gpus) on[base.get(pl.node) + g].push({mode: u.mode, tenant: p.tenant,
                                                               mig: pl.mig});
    });
  const name = {exclusive: 'exclusive', shared: 'shared', mig: 'mig', timeslice: 'timesliced'};
  return on.map((uses) => {
    if (!uses.length) return 'free';
    if (uses[0].mode === 'mig')
      return 'mig ' + uses.map((u) => [+u.mig.split('@')[1], u.mig + '=' + u.tenant])
        .sort((a, b) => a[0] - b[0]).map((x) => x[1]).join(',');
    return name[uses[0].mode] + ' ' + [...new Set(uses.map((u) => u.tenant))].sort().join(',');
  });
}

/* ---- The page ---- */

async function chartData(page, id) {
  return page.evaluate((id) => {
    const canvas = document.getElementById(id);
    const ch = canvas && Chart.getChart(canvas);
    return ch ? {type: ch.config.type, labels: ch.data.labels,
                 datasets: ch.data.datasets.map((d) => ({label: d.label, data: d.data}))} : null;
  }, id);
}
/* The map's boxes: zones, their nodes, each node's PCIe domains, in each its NVLink groups'
 * cards (the cards' numbers on the page). */
async function mapTree(page) {
  return page.$$eval('#map .zone', (zs) => zs.map((z) => ({
    zone: z.querySelector('h3').textContent.replace(/ \(\d+ nodes\)$/, ''),
    nodes: [...z.querySelectorAll('.node')].map((n) => ({
      name: n.title.split(' - ')[0],
      pcie: [...n.querySelectorAll('.pcie')].map((p) => [...p.querySelectorAll('.nvl')].map(
        (g) => [...g.querySelectorAll('.card')].map((b) => +b.dataset.c))),
    })),
  })));
}

/* The same tree from nodes as the JSON gives them ([{name, zone, gpus, pcie_domain,
 * nvlink_group}], in the map's order): domains in their order, in each the NVLink groups in the
 * order of their first card. */
function wantTree(nodes) {
  const zones = [];
  let base = 0;
  for (const n of nodes) {
    const zone = n.zone === null ? '(no zone)' : n.zone; /* GET /v1/nodes: null, none labelled */
    let z = zones.find((x) => x.zone === zone);
    if (!z) zones.push(z = {zone, nodes: []});
    const domains = [...new Set(n.pcie_domain)].sort((a, b) => a - b);
    z.nodes.push({name: n.name, pcie: domains.map((d) => {
      const groups = [];
      for (let i = 0; i < n.gpus; i++) {
        if (n.pcie_domain[i] !== d) continue;
        let g = groups.find((x) => x.id === n.nvlink_group[i]);
        if (!g) groups.push(g = {id: n.nvlink_group[i], cards: []});
        g.cards.push(base + i);
      }
      return groups.map((g) => g.cards);
    })});
    base += n.gpus;
  }
  return zones;
}

const series = (chart, label) => (chart.datasets.find((d) => d.label === label) || {}).data;
const milli = (v) => v.map((x) => x / 1000);

async function open(browser, html, name) {
  const page = await browser.newPage();
  const errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
    else if (m.type() === 'warning') console.log('  console warning: ' + m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('requestfailed', (r) => errors.push('request failed: ' + r.url()));
  await page.goto('file://' + html);
  await page.waitForFunction(() => document.body.dataset.ready === '1', null, {timeout: 120000});
  const t = await page.evaluate(() => performance.timing.loadEventEnd -
                                      performance.timing.navigationStart);
  console.log('  ' + name + ': ' + fs.statSync(html).size + ' bytes, loaded in ' + t + ' ms');
  return {page, errors};
}

async function scenarioPage(browser, name, doc, bill) {
  const html = file(name + '.html');
  const {page, errors} = await open(browser, html, name);
  const ways = doc.ways || [doc];
  const demand = await chartData(page, 'chart-demand');
  check(demand && demand.type === 'line', name + ': chart-demand drawn');
  for (const w of ways) {
    const tl = w.timeline, at = name + ' ' + w.way + ': ';
    const alloc = await chartData(page, 'chart-alloc-' + w.way);
    const busy = await chartData(page, 'chart-busy-' + w.way);
    check(alloc && busy, at + 'allocation and utilisation charts drawn');
    same(alloc.datasets.map((d) => d.label), tl.tenants.map((x) => x.name), at + 'tenants');
    for (const x of tl.tenants) {
      same(series(alloc, x.name), milli(x.allocated_milli), at + 'allocation of ' + x.name);
      same(series(busy, x.name), milli(x.busy_milli), at + 'busy of ' + x.name);
    }
    same(alloc.labels.length, tl.steps, at + 'one point a step');
    const queues = await chartData(page, 'chart-queues-' + w.way);
    for (const q of tl.queues) {
      same(series(queues, q.name + ' allocated'), milli(q.allocated_milli), at + q.name);
      same(series(queues, q.name + ' deserved'), milli(q.deserved_milli), at + q.name +
           ' deserved');
    }
    const sum = (list, key) => Array.from({length: tl.steps}, (_, i) =>
      list.reduce((a, x) => a + x[key][i], 0) / 1000);
    same(series(demand, w.way + ' allocated'), sum(tl.tenants, 'allocated_milli'),
         at + 'allocated against demand');
    same(series(demand, w.way + ' demand'), sum(tl.queues, 'demand_milli'), at + 'demand');
    const ev = await chartData(page, 'chart-evictions-' + w.way);
    const want = evictionCounts(tl);
    same(ev.datasets.map((d) => d.label).sort(), [...want.keys()].sort(), at + 'eviction series');
    for (const [k, v] of want) same(series(ev, k), v, at + 'evictions of ' + k);
    const waits = await chartData(page, 'chart-waits-' + w.way);
    const kinds = waitCounts(w.pods);
    same(waits.datasets.length, kinds.size, at + 'one wait series per workload kind');
    for (const [k, v] of kinds) {
      const d = waits.datasets.find((x) => x.label.startsWith(k + ' ('));
      check(d !== undefined, at + 'waits of ' + k);
      if (d) same(d.data, v.counts, at + 'wait histogram of ' + k);
    }
  }
  /* Bills: gpusched bill's totals, as numbers in the chart and to the cent in the table. */
  const bills = await chartData(page, 'chart-bills');
  const rows = await page.$$eval('table.figures tr', (trs) =>
    trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  for (const bw of bill.ways) {
    const way = ways.length > 1 ? bw.way : ways[0].way;
    for (const t of bw.tenants) {
      same(series(bills, way)[bills.labels.indexOf(t.tenant)], t.total_udollars / 1e6,
           name + ' ' + way + ': bill of ' + t.tenant);
    }
    const col = rows[0].indexOf(way);
    const total = rows.find((r) => r[0] === 'bill, all tenants');
    same(total && total[col], dollars(bw.total_udollars), name + ' ' + way + ': total bill');
    check(/^\$\d{1,3}(,\d{3})*\.\d\d$/.test(total[col]), name + ': money as people read it');
  }
  await page.screenshot({path: file(name + '.png'), fullPage: true});
  await mapChecks(page, name, doc, ways);
  same(errors, [], name + ': no console errors');
  await page.close();
}

async function mapChecks(page, name, doc, ways) {
  same(await mapTree(page), wantTree(doc.cluster.zones.flatMap((z) => z.nodes.map((n) =>
    Object.assign({zone: z.name}, n)))), name + ': the map is zones > nodes > PCIe domains > ' +
    'NVLink groups > cards, as the JSON\'s cluster');
  const slider = page.locator('#map-time');
  const states = () => page.$$eval('#map .card', (bs) => {
    const out = [];
    for (const b of bs) out[+b.dataset.c] = b.dataset.state;
    return out;
  });
  let before = null, changed = false;
  for (let wi = ways.length - 1; wi >= 0; wi--) {
    await page.selectOption('#map-way', String(wi));
    const max = +(await slider.getAttribute('max'));
    for (const k of [Math.floor(max / 4), Math.floor(max / 2), Math.floor((3 * max) / 4)]) {
      await slider.fill(String(k));
      const t = +(await slider.getAttribute('data-time'));
      const got = await states();
      const want = cardStates(doc, ways[wi], t);
      const wrong = want.map((s, c) => (s === got[c] ? null : c + ': ' + got[c] + ' != ' + s))
        .filter((x) => x);
      check(wrong.length === 0, name + ' ' + ways[wi].way + ' at ' + t + ' s: every card as ' +
            'the JSON says' + (wrong.length ? ' (' + wrong.length + ' differ, ' +
            wrong.slice(0, 3).join('; ') + ')' : ''));
      if (before && JSON.stringify(before) !== JSON.stringify(got)) changed = true;
      before = got;
      const map = await page.$('#map');
      await map.screenshot({path: file(name + '-map-' + ways[wi].way + '-' + t + '.png')});
    }
  }
  check(changed, name + ': the map changes as the slider moves');
  const modes = new Set();
  for (const w of ways) for (const p of w.pods) for (const u of p.usage) modes.add(u.mode);
  console.log('  ' + name + ': card modes ' + [...modes].sort().join(', '));
}

async function replayPage(browser, name, doc) {
  const {page, errors} = await open(browser, file(name + '.html'), name);
  const runs = doc.runs;
  const policies = [...new Set(runs.map((r) => r.policy))];
  const curve = await chartData(page, 'chart-curve');
  same(curve.datasets.map((d) => d.label), policies, name + ': one curve per policy');
  for (const p of policies) {
    const mine = runs.filter((r) => r.policy === p);
    /* The mean over the seeds, in basis points rounded half up, as the report takes it. */
    const want = curve.labels.map((x) => {
      const bp = mine.map((r) => r.curve.allocation_pct[x]);
      return bp.some((v) => v === null || v === undefined) ? null :
        Math.floor((2 * bp.reduce((a, v) => a + Math.floor(v * 100 + 0.5), 0) + bp.length) /
                   (2 * bp.length)) / 100;
    });
    same(series(curve, p), want, name + ' ' + p + ': allocation at each arrived %');
  }
  const points = await chartData(page, 'chart-points');
  for (const p of policies)
    same(series(points, p), ['80', '90', '95', '100', '110', '130'].map((k) =>
      doc.mean[p].gpu_allocation_at_arrived_pct[k]), name + ' ' + p + ': the study\'s points');
  const left = await chartData(page, 'chart-unallocated');
  same(series(left, 'unallocated GPUs'), policies.map((p) => doc.mean[p].unallocated_gpus),
       name + ': unallocated GPUs');
  same(series(left, 'fragmented GPUs'), policies.map((p) => doc.mean[p].fragmented_gpus),
       name + ': fragmented GPUs');
  const failed = await chartData(page, 'chart-failed');
  for (const d of failed.datasets)
    same(d.data, policies.map((p) => doc.mean[p].failed_by_reason[d.label] || 0),
         name + ': failed pods "' + d.label + '"');
  await page.screenshot({path: file(name + '.png'), fullPage: true});
  same(errors, [], name + ': no console errors');
  await page.close();
}

/* ---- gpuschedd's /ui ---- */

/* The live wait chart against the pods' own times (whole seconds from submission to start). */
async function waitChecks(page, pods, who) {
  const kinds = waitCounts(pods.map((p) => ({
    workload: (p.labels || {})['gpusched.io/workload'],
    wait_s: p.state === 'running' ?
      Math.floor((Date.parse(p.start_time) - Date.parse(p.submit_time)) / 1000) : null})));
  const waits = await chartData(page, 'chart-waits-live');
  same(waits.datasets.map((d) => d.label).sort(), [...kinds].map(([k, v]) => k + ' (' + v.pods +
       ' pods)').sort(), who + ': one wait series per workload kind');
  for (const [k, v] of kinds) {
    const d = waits.datasets.find((x) => x.label.startsWith(k + ' ('));
    same(d && d.data, v.counts, who + ': wait histogram of ' + k);
  }
}

const TOKENS = {admin: 'admin-token-ui-test-0123', a: 'team-a-token-ui-test-01',
                b: 'team-b-token-ui-test-01'};

const podSpec = (ns, name, limits) => ({apiVersion: 'v1', kind: 'Pod',
  metadata: {name, namespace: ns, labels: {'gpusched.io/workload': ns === 'team-a' ? 'training' :
    'inference'}}, spec: {containers: [{name: 'main', resources: {limits}}]}});

async function startDaemon() {
  fs.writeFileSync(file('ui-nodes.csv'), 'sn,cpu_milli,memory_mib,gpu,model\n' +
    'node-a100-0,128000,1048576,8,A100-SXM4-80GB\nnode-a100-1,128000,1048576,8,A100-SXM4-80GB\n' +
    'node-l40s-0,64000,524288,4,L40S\n');
  fs.writeFileSync(file('ui-config.yaml'), ['apiVersion: gpusched.io/v1alpha1',
    'kind: DaemonConfig', 'adminToken: ' + TOKENS.admin, 'tenants:',
    '  - {name: team-a, token: ' + TOKENS.a + ', namespaces: [team-a]}',
    '  - {name: team-b, token: ' + TOKENS.b + ', namespaces: [team-b]}', ''].join('\n'));
  fs.writeFileSync(file('ui-policy.yaml'), ['apiVersion: nvidia.com/v1', 'kind: GpuClusterPolicy',
    'metadata: {name: mig}', 'spec:', '  mig: {strategy: mixed}',
    '  devices: [{name: A100-SXM4-80GB, migEnabled: true}]', ''].join('\n'));
  const store = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-ui-store-'));
  const port = await freePort();
  const d = spawn(DAEMON, ['--data-dir', store, '--listen', '127.0.0.1:' + port, '--nodes',
                           file('ui-nodes.csv'), '--config', file('ui-config.yaml'), '--config',
                           file('ui-policy.yaml')], {stdio: ['ignore', 'ignore', 'pipe']});
  let log = '';
  d.stderr.on('data', (x) => (log += x));
  d.ended = new Promise((resolve) => d.on('exit', (code, sig) => resolve({code, sig})));
  Object.assign(d, {port, store, log: () => log});
  for (let i = 0; i < 100; i++) {
    if (await healthy(port)) return d;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('gpuschedd did not start:\n' + log);
}

async function submit(d, token, pod) {
  const r = await request(d.port, 'POST', '/v1/pods', token, pod);
  check(r.status === 201, 'POST ' + pod.metadata.name + ': ' + r.status + ' ' + r.text);
}

/* Every card's state as the admin's API gives it: "node/card" -> label the map writes. */
async function apiCards(d, token) {
  const nodes = JSON.parse((await request(d.port, 'GET', '/v1/nodes', TOKENS.admin)).text).items;
  const pods = JSON.parse((await request(d.port, 'GET', '/v1/pods', token)).text).items;
  const out = [];
  for (const n of nodes) {
    const cards = JSON.parse((await request(d.port, 'GET', '/v1/nodes/' + n.name, TOKENS.admin))
      .text).gpu;
    cards.forEach((c, g) => {
      const mine = pods.filter((p) => p.state === 'running' && p.node === n.name &&
                               p.gpus.includes(g));
      if (!c.allocated_milli) return out.push('free');
      if (c.mode === 'mig')
        return out.push('mig ' + c.mig_instances.map((m) => {
          const p = mine.find((x) => x.mig && x.mig.start === m.start);
          return m.profile + '@' + m.start + '=' + (p ? p.tenant : 'other tenants');
        }).join(','));
      const tenants = [...new Set(mine.map((p) => p.tenant))].sort();
      if (mine.reduce((a, p) => a + p.gpu_milli, 0) < c.allocated_milli)
        tenants.push('other tenants');
      out.push(c.mode + ' ' + tenants.join(','));
    });
  }
  return out;
}

async function uiOpen(browser, d, name) {
  const page = await browser.newPage();
  const errors = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto('http://127.0.0.1:' + d.port + '/ui');
  return {page, errors, name};
}

async function signIn(ui, token, renders) {
  await ui.page.fill('#ui-token', token);
  await ui.page.click('#ui-sign-in button');
  await ui.page.waitForFunction((n) => +document.body.dataset.ready >= n, renders || 1,
                                {timeout: 60000});
}

async function mapStates(page) {
  return page.$$eval('#map .card', (bs) => {
    const out = [];
    for (const b of bs) out[+b.dataset.c] = b.dataset.state;
    return out;
  });
}

async function uiPages(browser) {
  const d = await startDaemon();
  try {
    await submit(d, TOKENS.a, podSpec('team-a', 'a-train-0', {'nvidia.com/gpu': 8}));
    await submit(d, TOKENS.a, podSpec('team-a', 'a-exp-0', {'nvidia.com/gpu': 1,
      'nvidia.com/gpumem': 20000, 'nvidia.com/gpucores': 30}));
    await submit(d, TOKENS.b, podSpec('team-b', 'b-infer-0', {'nvidia.com/gpu': 1,
      'nvidia.com/gpumem': 16000, 'nvidia.com/gpucores': 40}));
    await submit(d, TOKENS.b, podSpec('team-b', 'b-mig-0', {'nvidia.com/mig-1g.10gb': 1}));
    await submit(d, TOKENS.b, podSpec('team-b', 'b-wait-0', {'nvidia.com/gpu': 8}));

    /* The page: no data in it, and without a token nothing but the sign-in form. */
    const raw = await request(d.port, 'GET', '/ui');
    check(raw.status === 200 && /text\/html/.test(raw.headers['content-type']), '/ui is a page');
    for (const secret of ['a-train-0', 'b-infer-0', 'team-a', 'team-b', 'node-a100-0'])
      check(!raw.text.includes(secret), '/ui carries no data (' + secret + ')');
    check(/script-src 'sha256-/.test(raw.headers['content-security-policy'] || '') &&
          /frame-ancestors 'none'/.test(raw.headers['content-security-policy']),
          '/ui sends a Content-Security-Policy by its scripts\' hashes');
    for (const p of ['/v1/pods', '/v1/tenants', '/v1/nodes'])
      check((await request(d.port, 'GET', p)).status === 401, p + ' without a token: 401');
    const anon = await uiOpen(browser, d, 'ui-anonymous');
    await anon.page.waitForSelector('#ui-token');
    check(await anon.page.$('canvas') === null, 'no token: no charts');
    await anon.page.fill('#ui-token', 'not-a-token-0123456789');
    await anon.page.click('#ui-sign-in button');
    await anon.page.waitForSelector('#ui-error');
    check(/not signed in/i.test(await anon.page.textContent('#ui-error')),
          'a wrong token: the page says it is not signed in');
    same(anon.errors.filter((e) => /401/.test(e)).length, 1,
         'a wrong token: one call refused, not one per view (an address is shut out after ten)');
    check(await anon.page.$('canvas') === null && !(await anon.page.content()).includes('a-train'),
          'a wrong token: no data');
    await anon.page.screenshot({path: file('ui-anonymous.png'), fullPage: true});
    /* the browser logs the 401 it was given; nothing else */
    same(anon.errors.filter((e) => !/401/.test(e)), [], 'ui-anonymous: no other console errors');
    await anon.page.close();

    /* Tenant A: its pods, nothing of B's. */
    const a = await uiOpen(browser, d, 'ui-team-a');
    await signIn(a, TOKENS.a);
    const rowsA = await a.page.$$eval('#pods tbody tr', (trs) => trs.map((tr) =>
      tr.children[0].textContent));
    same(rowsA.sort(), ['team-a/a-exp-0', 'team-a/a-train-0'], 'tenant A sees its own pods');
    const textA = await a.page.evaluate(() => document.body.innerText + JSON.stringify(
      Object.values(Chart.instances).map((c) => c.data)));
    for (const secret of ['b-infer-0', 'b-mig-0', 'b-wait-0', 'team-b'])
      check(!textA.includes(secret), 'tenant A\'s page names nothing of B\'s: ' + secret);
    same(await mapStates(a.page), await apiCards(d, TOKENS.a),
         'tenant A: every card as the API shows it, B\'s unnamed');
    await waitChecks(a.page, JSON.parse((await request(d.port, 'GET', '/v1/pods', TOKENS.a)).text)
      .items, 'tenant A');
    check((await a.page.textContent('#ui-caller')).includes('team-a'), 'signed in as team-a');
    /* the token stays for the tab: a reload shows the data again without asking */
    await a.page.reload();
    await a.page.waitForFunction(() => +document.body.dataset.ready >= 1, null, {timeout: 60000});
    check(await a.page.$('#pods') !== null, 'the token is kept across a reload');
    await a.page.screenshot({path: file('ui-team-a.png'), fullPage: true});
    same(a.errors, [], 'ui-team-a: no console errors');
    await a.page.close();

    /* The admin: every pod, every tenant's allocation, then a second sample. */
    const adm = await uiOpen(browser, d, 'ui-admin');
    await signIn(adm, TOKENS.admin);
    const rows = await adm.page.$$eval('#pods tbody tr', (trs) => trs.length);
    check(rows === 5, 'the admin sees every pod (' + rows + ')');
    const tenants = JSON.parse((await request(d.port, 'GET', '/v1/tenants', TOKENS.admin)).text)
      .items;
    let alloc = await chartData(adm.page, 'chart-alloc-live');
    for (const t of tenants)
      same(series(alloc, t.name), [t.gpu_milli_allocated / 1000], 'admin: allocation of ' + t.name);
    const bills = await chartData(adm.page, 'chart-bills');
    check(bills && bills.labels.includes('team-b'), 'admin: bills per tenant');
    /* money as gpuschedd writes it for people (to the cent, the C formatter's), shown as is */
    const apiBill = JSON.parse((await request(d.port, 'GET', '/v1/bills', TOKENS.admin)).text);
    same(apiBill.total_human, dollars(apiBill.total_udollars), 'GET /v1/bills: total_human');
    const nowRows = await adm.page.$$eval('table.figures tr', (trs) =>
      trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    const billRow = nowRows.find((r) => r[0] === 'bill so far');
    check(billRow && /^\$\d{1,3}(,\d{3})*\.\d\d$/.test(billRow[1]),
          'admin: the bill so far as people read it (' + (billRow || [])[1] + ')');
    /* the wait histogram (GET /v1/waits) as the pods' own times give it */
    const apiPods = JSON.parse((await request(d.port, 'GET', '/v1/pods', TOKENS.admin)).text).items;
    await waitChecks(adm.page, apiPods, 'admin');
    /* the map's boxes: the nodes' PCIe domains and NVLink groups as GET /v1/nodes gives them */
    const nodes = JSON.parse((await request(d.port, 'GET', '/v1/nodes', TOKENS.admin)).text).items;
    const tree = await mapTree(adm.page);
    same(tree, wantTree(nodes), 'admin: the map is zones > nodes > PCIe domains > NVLink ' +
         'groups > cards, as GET /v1/nodes');
    const a100 = tree.flatMap((z) => z.nodes).find((n) => n.name === 'node-a100-0');
    same(a100 && a100.pcie.map((d) => d.map((g) => g.length)), [[2], [2], [2], [2]],
         'admin: an HGX A100 node is four PCIe switches of two NVLink-joined cards');
    const queues = await chartData(adm.page, 'chart-queues-live');
    const nq = JSON.parse((await request(d.port, 'GET', '/v1/queues', TOKENS.admin)).text)
      .items.length;
    check(queues && queues.datasets.length === 2 * nq,
          'admin: each queue (' + nq + ') against its deserved share');
    const first = await mapStates(adm.page);
    same(first, await apiCards(d, TOKENS.admin), 'admin: every card as the pods hold it');
    check(first.some((s) => /^mig 1g\.10gb@\d+=team-b$/.test(s)), 'admin: the MIG instance on ' +
          'its card');
    /* its memory slices as NVIDIA's table gives them (1g.10gb: 1 of an A100-80GB's 8), from
     * the API: the page draws them and knows no MIG table of its own */
    const migCards = [];
    for (const n of nodes)
      for (const c of JSON.parse((await request(d.port, 'GET', '/v1/nodes/' + n.name,
                                                TOKENS.admin)).text).gpu)
        if (c.mode === 'mig') migCards.push(c);
    same(migCards.map((c) => [c.mig_slices, c.mig_instances.map((m) => [m.profile, m.size])]),
         [[8, [['1g.10gb', 1]]]], 'GET /v1/nodes/NAME: the MIG instance\'s memory slices');
    await submit(d, TOKENS.a, podSpec('team-a', 'a-train-1', {'nvidia.com/gpu': 4}));
    await adm.page.click('#ui-refresh');
    await adm.page.waitForFunction(() => +document.body.dataset.ready >= 2, null, {timeout: 60000});
    alloc = await chartData(adm.page, 'chart-alloc-live');
    const a2 = JSON.parse((await request(d.port, 'GET', '/v1/tenants/team-a', TOKENS.admin)).text);
    same(series(alloc, 'team-a').length, 2, 'admin: two samples');
    same(series(alloc, 'team-a')[1], a2.gpu_milli_allocated / 1000, 'admin: team-a after a-train-1');
    const slider = adm.page.locator('#map-time');
    same(await slider.getAttribute('max'), '1', 'the slider runs over the samples');
    const now = await mapStates(adm.page);
    await slider.fill('0');
    same(await mapStates(adm.page), first, 'the slider shows the first sample\'s cards');
    check(JSON.stringify(now) !== JSON.stringify(first), 'the cards changed between samples');
    await adm.page.screenshot({path: file('ui-admin.png'), fullPage: true});
    await (await adm.page.$('#map')).screenshot({path: file('ui-admin-map.png')});
    same(adm.errors, [], 'ui-admin: no console errors');
    await adm.page.close();
  } finally {
    d.kill('SIGTERM');
    const end = await d.ended;
    check(end.code === 0, 'gpuschedd exits 0 on SIGTERM' + (end.code === 0 ? '' :
          ':\n' + d.log().slice(-2000)));
    fs.rmSync(d.store, {recursive: true, force: true});
  }
}

(async () => {
  /* The runs, written into the output directory. */
  gpusched('generate', 'tenant-day', '--nodes', '16', '--pods', '400', '--sharing', 'mig/slices',
           '--quiet', '-o', file('compare.yaml'));
  gpusched('simulate', '--scenario', file('compare.yaml'), '--json', file('compare.json'),
           '--quiet');
  gpusched('generate', 'tenant-day', '--nodes', '8', '--pods', '200', '--sharing', 'timeslice',
           '--quiet', '-o', file('timeslice.yaml'));
  gpusched('simulate', '--scenario', file('timeslice.yaml'), '--way', 'full', '--json',
           file('timeslice.json'), '--quiet');
  gpusched('simulate', '--nodes', 'data/fgd-reference/openb-eighth/nodes.csv', '--policy', 'all',
           '--seeds', '42..43', '--quiet', '--json', file('replay.json'));
  for (const n of ['compare', 'timeslice', 'replay'])
    gpusched('report', file(n + '.json'), '-o', file(n + '.html'));
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, viewport: {width: 1400, height: 1000},
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  try {
    for (const n of ['compare', 'timeslice'])
      await scenarioPage(browser, n, load(n + '.json'),
                         JSON.parse(gpusched('bill', '--format', 'json', file(n + '.json'))));
    await replayPage(browser, 'replay', load('replay.json'));
    await uiPages(browser);
  } finally {
    await browser.close();
    fs.rmSync(profile, {recursive: true, force: true});
  }
  done('screenshots in ' + OUT);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
