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
 * Screenshots go to the directory given as the first argument (meson's build tree).
 * Usage: GPUSCHED_BIN=build/gpusched node tests/browser/report.test.js OUT_DIR (from the source
 * root).
 */
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const {execFileSync} = require('child_process');
const {check, same, done} = require('../common/check.js');

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
const OUT = path.resolve(process.argv[2] || fs.mkdtempSync(path.join(os.tmpdir(), 'gs-report-')));
if (!BIN) {
  console.error('report.test.js: GPUSCHED_BIN must name the gpusched executable');
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
  const name = {exclusive: 'whole', shared: 'shared', mig: 'mig', timeslice: 'timeslice'};
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
  } finally {
    await browser.close();
    fs.rmSync(profile, {recursive: true, force: true});
  }
  done('screenshots in ' + OUT);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
