#!/usr/bin/env node
/*
 * The Grafana dashboards in deploy/grafana/, against a real gpuschedd and a real Prometheus:
 *   - each dashboard imports as Grafana reads it: a unique uid, panel ids unique, every panel on
 *     the 24-column grid without overlapping another, every query through the ${datasource}
 *     variable, every variable an expression uses defined;
 *   - every metric an expression or a variable names is one a running gpuschedd's /metrics
 *     emits (the admin's and the metrics token's scrape, with metrics.perPod) or one
 *     dcgm-exporter exports by default (tests/data/dcgm-exporter/default-counters.csv), and
 *     every label matcher names a label that metric carries;
 *   - every expression parses: written into a rules file that `promtool check rules` accepts;
 *   - every expression returns data: Prometheus scrapes the gpuschedd started here (pods of two
 *     tenants in Volcano queues, GPUQuota and ResourceQuota, a MIG instance, a pod over quota, a
 *     card its agent reported failed) and a stand-in for dcgm-exporter (there is no GPU here)
 *     serving the default counters for the same cards with dcgm-exporter's labels, and each
 *     expression, with its variables at "All" and then at one value, gives at least one series.
 * Usage: GPUSCHEDD_BIN=build/gpuschedd node tests/grafana/dashboards.test.js [OUT_DIR]
 * (from the source root; prometheus and promtool on the PATH, as scripts/install-deps installs).
 */
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const http = require('http');
const {spawn, spawnSync} = require('child_process');
const {check, done} = require('../common/check.js');
const {freePort, request} = require('../common/net.js');

const ROOT = process.cwd();
const BIN = process.env.GPUSCHEDD_BIN;
if (!BIN) {
  console.error('dashboards.test.js: GPUSCHEDD_BIN must name the gpuschedd executable');
  process.exit(1);
}
const DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-grafana-'));
const OUT = path.resolve(process.argv[2] || DIR);
fs.mkdirSync(OUT, {recursive: true});
const file = (name) => path.join(DIR, name);

/* ---- The dashboards ---- */

const BUILTIN = new Set(['__rate_interval', '__range', '__interval', '__range_s', '__interval_ms']);

function panelsOf(dash) {
  const out = [];
  for (const p of dash.panels || []) {
    out.push(p);
    for (const q of p.panels || []) out.push(q); /* a collapsed row keeps its panels inside */
  }
  return out;
}

/* Every query of a dashboard: {where, expr, vars: [names]}. */
function structure(name, dash) {
  const at = name + ': ';
  check(typeof dash.uid === 'string' && /^[a-z0-9-]{1,40}$/.test(dash.uid), at + 'a uid');
  check(typeof dash.title === 'string' && dash.title.length > 0, at + 'a title');
  check(Number.isInteger(dash.schemaVersion), at + 'a schemaVersion');
  const vars = new Map((dash.templating.list || []).map((v) => [v.name, v]));
  const ds = vars.get('datasource');
  check(ds && ds.type === 'datasource' && ds.query === 'prometheus',
        at + 'a datasource variable of type prometheus');
  const ids = new Set(), cells = new Map(), queries = [];
  for (const p of panelsOf(dash)) {
    const pat = at + 'panel ' + p.id + ' "' + p.title + '": ';
    check(Number.isInteger(p.id) && !ids.has(p.id), pat + 'a unique id');
    ids.add(p.id);
    const g = p.gridPos || {};
    check(g.x >= 0 && g.w > 0 && g.x + g.w <= 24 && g.y >= 0 && g.h > 0, pat + 'on the grid');
    const over = new Set();
    for (let y = g.y; y < g.y + g.h; y++)
      for (let x = g.x; x < g.x + g.w; x++) {
        const k = x + ',' + y;
        if (cells.has(k)) over.add(cells.get(k));
        cells.set(k, p.id);
      }
    check(over.size === 0, pat + 'overlaps no other panel (' + [...over].join(', ') + ')');
    if (p.type === 'row') continue;
    check(typeof p.description === 'string' && p.description.length > 20, pat + 'says what it shows');
    check(p.datasource && p.datasource.uid === '${datasource}', pat + 'through ${datasource}');
    check(Array.isArray(p.targets) && p.targets.length > 0, pat + 'queries');
    const refs = new Set();
    for (const t of p.targets || []) {
      check(!refs.has(t.refId), pat + 'refId ' + t.refId + ' unique');
      refs.add(t.refId);
      check(t.datasource && t.datasource.uid === '${datasource}', pat + t.refId + ' via ${datasource}');
      queries.push({where: pat + t.refId, expr: t.expr});
    }
  }
  for (const v of vars.values())
    if (v.type === 'query') {
      check(v.datasource && v.datasource.uid === '${datasource}', at + 'variable ' + v.name +
            ' via ${datasource}');
      queries.push({where: at + 'variable ' + v.name, expr: v.query.query, variable: v.name});
    }
  for (const q of queries) {
    /* $1 in label_replace() is a regex group, which Grafana leaves alone */
    q.vars = [...new Set([...q.expr.matchAll(/\$\{?([A-Za-z_]\w*)\}?/g)].map((m) => m[1]))]
      .filter((v) => !BUILTIN.has(v));
    for (const v of q.vars) check(vars.has(v), q.where + ': variable $' + v + ' is defined');
  }
  return queries;
}

/* Grafana's part: variables, and label_values() of a variable's query. */
function grafanaToPromQL(expr, values) {
  let e = expr.replace(/\$__rate_interval/g, '1m').replace(/\$__range/g, '5m')
    .replace(/\$__interval/g, '15s');
  e = e.replace(/\$\{?([A-Za-z_]\w*)\}?/g, (_, v) => values[v] || '.*');
  const lv = e.match(/^label_values\((.*),\s*(\w+)\)$/);
  return lv ? {expr: lv[1], label: lv[2]} : {expr: e};
}

/* The metric names in a PromQL expression, and each selector's label names. */
const AGGREGATIONS = new Set(['sum', 'avg', 'min', 'max', 'count', 'group', 'stddev', 'stdvar',
                              'topk', 'bottomk', 'quantile', 'count_values']);
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and',
                          'or', 'unless', 'bool', 'offset', 'Inf', 'NaN', 'inf', 'nan']);
function metricsOf(expr) {
  const names = [], labels = [];
  const text = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  /* selectors: name{...} or a bare name not followed by "(" */
  const re = /([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?|\{[^}]*\}|\[[^\]]*\]|\d+(?:\.\d+)?/g;
  let m, skipGroup = false;
  while ((m = re.exec(text))) {
    if (!m[1]) continue;
    const after = text.slice(re.lastIndex).match(/^\s*\(/);
    if (KEYWORDS.has(m[1])) {
      skipGroup = ['by', 'without', 'on', 'ignoring', 'group_left', 'group_right'].includes(m[1]);
      if (skipGroup && after) re.lastIndex = text.indexOf(')', re.lastIndex) + 1;
      continue;
    }
    if ((after && !m[2]) || AGGREGATIONS.has(m[1])) continue; /* a function or an aggregation */
    names.push(m[1]);
    labels.push(m[2] ? [...m[2].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)/g)]
      .map((x) => x[1]) : []);
  }
  return names.map((n, i) => ({name: n, labels: labels[i]}));
}

/* ---- gpuschedd ---- */

async function until(what, fn, tries) {
  for (let i = 0; i < (tries || 150); i++) {
    if (await fn().catch(() => false)) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  check(false, 'waited for ' + what);
  return false;
}

const NODES = [['gpu-a100-0', 8, 'A100-SXM4-80GB'], ['gpu-a100-1', 8, 'A100-SXM4-80GB'],
               ['gpu-l40s-0', 4, 'L40S']];
const TOKENS = {admin: 'admin-token-grafana-0123', a: 'data-team-token-0123456',
                b: 'algo-team-token-0123456', node: 'node-token-grafana-01234',
                metrics: 'metrics-token-grafana-0123'};

function pod(ns, name, limits, extra) {
  return Object.assign({apiVersion: 'v1', kind: 'Pod', metadata: {name, namespace: ns,
    labels: {user: 'u1'}, annotations: {'scheduling.volcano.sh/queue-name': ns}},
    spec: {containers: [{name: 'main', resources: {limits}}]}}, extra);
}

async function startDaemon() {
  fs.writeFileSync(file('nodes.csv'), 'sn,cpu_milli,memory_mib,gpu,model\n' +
                   NODES.map(([n, g, m]) => n + ',128000,1048576,' + g + ',' + m).join('\n') + '\n');
  fs.writeFileSync(file('config.yaml'), [
    'apiVersion: gpusched.io/v1alpha1', 'kind: DaemonConfig',
    'adminToken: ' + TOKENS.admin, 'nodeToken: ' + TOKENS.node,
    'metrics: {token: ' + TOKENS.metrics + ', perPod: true, scrapesPerSecond: 50}',
    'tenants:',
    '  - {name: data-team, token: ' + TOKENS.a + ', namespaces: [data-team]}',
    '  - {name: algo-team, token: ' + TOKENS.b + ', namespaces: [algo-team]}', ''].join('\n'));
  fs.writeFileSync(file('policy.yaml'), `apiVersion: gpusched.io/v1alpha1
kind: GPUQuota
metadata: {name: data-team, namespace: data-team}
spec:
  tenant: data-team
  quotas: {a100-80gb: {total: 12, dedicated: 8, shared: 4}, l40s: {total: 4, dedicated: 0, shared: 4}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: gpus, namespace: algo-team}
spec: {hard: {requests.nvidia.com/gpu: "6", pods: "10", requests.cpu: "64", requests.memory: 256Gi}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: data-team}
spec: {weight: 3}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: algo-team}
spec: {weight: 1, capability: {nvidia.com/gpu: 8}}
---
apiVersion: nvidia.com/v1
kind: GpuClusterPolicy
metadata: {name: mig}
spec:
  mig: {strategy: mixed}
  devices: [{name: A100-SXM4-80GB, migEnabled: true}]
`);
  const port = await freePort();
  const d = spawn(BIN, ['--data-dir', file('store'), '--listen', '127.0.0.1:' + port,
                        '--nodes', file('nodes.csv'), '--config', file('config.yaml'),
                        '--config', file('policy.yaml')], {stdio: ['ignore', 'ignore', 'pipe']});
  let log = '';
  d.stderr.on('data', (x) => (log += x));
  d.ended = new Promise((resolve) => d.on('exit', (code, sig) => resolve({code, sig})));
  d.port = port;
  d.log = () => log;
  await until('gpuschedd answers /healthz', async () =>
    (await request(port, 'GET', '/healthz')).status === 200);
  const submit = async (token, body, want) => {
    const r = await request(port, 'POST', '/v1/pods', token, body);
    check(r.status === (want || 201), 'POST ' + body.metadata.name + ': ' + r.status + ' ' + r.text);
  };
  await submit(TOKENS.a, pod('data-team', 'train-0', {'nvidia.com/gpu': 8, cpu: '16'}));
  await submit(TOKENS.a, pod('data-team', 'train-1', {'nvidia.com/gpu': 8, cpu: '16'}));
  await submit(TOKENS.a, pod('data-team', 'infer-0', {'nvidia.com/gpu': 1,
    'nvidia.com/gpumem': 20000, 'nvidia.com/gpucores': 30}));
  await submit(TOKENS.b, pod('algo-team', 'exp-0', {'nvidia.com/gpu': 2, cpu: '4',
    memory: '16Gi'}));
  await submit(TOKENS.b, pod('algo-team', 'exp-mig', {'nvidia.com/mig-1g.10gb': 1, cpu: '1',
    memory: '4Gi'}));
  await submit(TOKENS.b, pod('algo-team', 'exp-big', {'nvidia.com/gpu': 8, cpu: '1',
    memory: '1Gi'})); /* over quota */
  /* a card fails: its agent reports Xid 79 */
  const h = await request(port, 'POST', '/v1/nodes/gpu-l40s-0/gpus/3/health', TOKENS.node,
                          {healthy: false, xid: 79});
  check(h.status === 200, 'card health reported: ' + h.status + ' ' + h.text);
  return d;
}

/* Which card each running pod holds: "node/gpu" -> {namespace, pod}. */
async function cardsOf(port) {
  const r = await request(port, 'GET', '/v1/pods?state=running', TOKENS.admin);
  const on = new Map();
  for (const p of JSON.parse(r.text).items)
    for (const g of p.gpus) on.set(p.node + '/' + g, {namespace: p.namespace, pod: p.name});
  return on;
}

/* ---- A stand-in for dcgm-exporter: its default counters for the same cards ---- */

function dcgmCounters() {
  const text = fs.readFileSync(path.join(ROOT, 'tests/data/dcgm-exporter/default-counters.csv'),
                               'utf8');
  const out = [];
  for (const line of text.split('\n')) {
    if (!line.trim() || line.trim().startsWith('#')) continue;
    const [name, type, help] = line.split(',').map((s) => s.trim());
    out.push({name, type, help});
  }
  return out;
}

function dcgmExporter(counters, cards) {
  let scrapes = 0;
  const server = http.createServer((req, res) => {
    scrapes++;
    const lines = [];
    for (const c of counters) {
      if (c.type === 'label') continue; /* a label on the others (DCGM_FI_DRIVER_VERSION) */
      lines.push('# HELP ' + c.name + ' ' + c.help, '# TYPE ' + c.name + ' ' + c.type);
      NODES.forEach(([node, gpus, model], n) => {
        for (let g = 0; g < gpus; g++) {
          const held = cards.get(node + '/' + g);
          const labels = {gpu: g, UUID: 'GPU-' + n + '0000000-0000-4000-8000-00000000000' + g,
            pci_bus_id: '00000000:' + (0x10 + g).toString(16) + ':00.0', device: 'nvidia' + g,
            modelName: 'NVIDIA ' + model, Hostname: node, DCGM_FI_DRIVER_VERSION: '550.90.07'};
          if (held) Object.assign(labels, {namespace: held.namespace, pod: held.pod,
                                           container: 'main'});
          const bad = node === 'gpu-l40s-0' && g === 3;
          const v = {DCGM_FI_DEV_GPU_UTIL: held ? 40 + 7 * g : 0, DCGM_FI_DEV_FB_USED: held ? 30000 : 0,
            DCGM_FI_DEV_FB_FREE: held ? 51000 : 81000, DCGM_FI_DEV_XID_ERRORS: bad ? 79 : 0,
            DCGM_FI_DEV_ROW_REMAP_FAILURE: bad ? 1 : 0,
            DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS: bad ? 2 : 0,
            DCGM_FI_DEV_GPU_TEMP: 40 + g}[c.name];
          const value = v !== undefined ? v : c.type === 'counter' ? scrapes * (g + 1) : 10 + g;
          lines.push(c.name + '{' + Object.entries(labels).map(([k, x]) => k + '="' + x + '"')
            .join(',') + '} ' + value);
        }
      });
    }
    res.writeHead(200, {'Content-Type': 'text/plain; version=0.0.4'});
    res.end(lines.join('\n') + '\n');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/* ---- Prometheus ---- */

async function startPrometheus(daemonPort, dcgmPort) {
  const port = await freePort();
  fs.writeFileSync(file('metrics-token'), TOKENS.metrics);
  fs.writeFileSync(file('prometheus.yml'), `global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: gpuschedd
    authorization: {credentials_file: ${file('metrics-token')}}
    static_configs: [{targets: ['127.0.0.1:${daemonPort}']}]
  - job_name: dcgm-exporter
    honor_labels: true
    static_configs: [{targets: ['127.0.0.1:${dcgmPort}']}]
`);
  const p = spawn('prometheus', ['--config.file=' + file('prometheus.yml'),
    '--storage.tsdb.path=' + file('tsdb'), '--web.listen-address=127.0.0.1:' + port,
    '--log.level=warn'], {stdio: ['ignore', 'ignore', 'pipe']});
  let log = '';
  p.stderr.on('data', (x) => (log += x));
  p.ended = new Promise((resolve) => p.on('exit', (code, sig) => resolve({code, sig})));
  p.port = port;
  p.log = () => log;
  await until('Prometheus is ready', async () =>
    (await request(port, 'GET', '/-/ready')).status === 200);
  return p;
}

async function query(port, expr) {
  const r = await request(port, 'GET', '/api/v1/query?query=' + encodeURIComponent(expr));
  return JSON.parse(r.text);
}

/* ---- The checks ---- */

function promtoolParses(all) {
  const rules = ['groups:', '  - name: dashboards', '    rules:'];
  all.forEach((q, i) => {
    if (q.variable) return;
    rules.push('      - record: gpusched_dashboard:query_' + i, '        expr: |');
    for (const l of grafanaToPromQL(q.expr, {}).expr.split('\n')) rules.push('          ' + l);
  });
  fs.writeFileSync(file('dashboards-rules.yaml'), rules.join('\n') + '\n');
  const r = spawnSync('promtool', ['check', 'rules', file('dashboards-rules.yaml')],
                      {encoding: 'utf8'});
  check(r.status === 0, 'promtool check rules accepts every expression:\n' + r.stdout + r.stderr);
  fs.copyFileSync(file('dashboards-rules.yaml'), path.join(OUT, 'dashboards-rules.yaml'));
}

/* Family -> label names, from a scrape's text. */
function families(text) {
  const fam = new Map();
  for (const line of text.split('\n')) {
    const t = line.match(/^# TYPE (\S+) (\S+)/);
    if (t) {
      if (!fam.has(t[1])) fam.set(t[1], new Set());
      if (t[2] === 'histogram')
        for (const s of ['_bucket', '_sum', '_count']) fam.set(t[1] + s, new Set(['le']));
      continue;
    }
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s/);
    if (!m) continue;
    if (!fam.has(m[1])) fam.set(m[1], new Set());
    for (const l of (m[2] || '').matchAll(/([a-zA-Z_]\w*)="/g)) fam.get(m[1]).add(l[1]);
  }
  return fam;
}

(async () => {
  const dashes = fs.readdirSync(path.join(ROOT, 'deploy/grafana')).filter((f) => f.endsWith('.json'));
  check(dashes.length >= 2, 'deploy/grafana holds the dashboards');
  const all = [], uids = new Set();
  for (const f of dashes) {
    const dash = JSON.parse(fs.readFileSync(path.join(ROOT, 'deploy/grafana', f), 'utf8'));
    check(!uids.has(dash.uid), f + ': uid ' + dash.uid + ' unique');
    uids.add(dash.uid);
    all.push(...structure(f, dash));
  }
  promtoolParses(all);

  const d = await startDaemon();
  let dcgm = null, prom = null;
  try {
    const scrape = await request(d.port, 'GET', '/metrics', TOKENS.metrics);
    check(scrape.status === 200, 'gpuschedd /metrics with the metrics token');
    await request(d.port, 'POST', '/v1/pods', TOKENS.a, {}); /* a batch: the bills come in */
    const fams = families(scrape.text + (await request(d.port, 'GET', '/metrics',
                                                       TOKENS.metrics)).text);
    fs.writeFileSync(path.join(OUT, 'gpuschedd.metrics'), scrape.text);
    const counters = dcgmCounters();
    const DCGM_LABELS = ['gpu', 'UUID', 'pci_bus_id', 'device', 'modelName', 'Hostname',
                         'hostname', 'DCGM_FI_DRIVER_VERSION', 'namespace', 'pod', 'container',
                         'GPU_I_PROFILE', 'GPU_I_ID'];
    const known = new Map(fams);
    for (const c of counters)
      if (c.type !== 'label' && !known.has(c.name)) known.set(c.name, new Set(DCGM_LABELS));
    for (const q of all) {
      const {expr} = grafanaToPromQL(q.expr, {});
      const used = metricsOf(expr);
      check(used.length > 0, q.where + ': names a metric');
      for (const u of used) {
        check(known.has(u.name), q.where + ': ' + u.name + ' is a metric gpuschedd emits or ' +
              'dcgm-exporter exports by default');
        for (const l of u.labels)
          check(!known.has(u.name) || known.get(u.name).has(l),
                q.where + ': ' + u.name + ' has a label ' + l);
      }
    }

    dcgm = await dcgmExporter(counters, await cardsOf(d.port));
    prom = await startPrometheus(d.port, dcgm.address().port);
    await until('both targets scraped five times', async () => {
      const r = await query(prom.port, 'count_over_time(up[1m]) >= 5');
      return r.data.result.length === 2;
    });
    /* Something to count in the rates: answers, refusals, one more pod placed. */
    for (let i = 0; i < 3; i++) await request(d.port, 'GET', '/metrics', TOKENS.a); /* 403 */
    const r = await request(d.port, 'POST', '/v1/pods', TOKENS.b,
                            pod('algo-team', 'exp-late', {'nvidia.com/gpu': 1, cpu: '1',
                              memory: '1Gi'}));
    check(r.status === 201, 'a late pod: ' + r.status);
    await until('bills scraped', async () =>
      (await query(prom.port, 'gpusched_bill_accrued_total')).data.result.length === 2);
    await new Promise((res) => setTimeout(res, 3000));

    /* Each expression gives data with its variables at "All", and for each variable some one
     * value of it gives data too (the others at "All"): the filter keeps the query working. */
    const report = [];
    const series = async (expr, values) => {
      const g = grafanaToPromQL(expr, values);
      const res = await query(prom.port, g.label ? 'group by (' + g.label + ') (' + g.expr + ')'
                                                  : g.expr);
      return {n: res.status === 'success' ? res.data.result.length : -1, res, g};
    };
    for (const q of all) {
      const {n, res, g} = await series(q.expr, {});
      check(n > 0, q.where + ': gives data (' + (res.error || n + ' series') + ')\n  ' + g.expr);
      report.push(q.where + ': ' + n + ' series');
      for (const v of q.vars) {
        const lv = grafanaToPromQL(all.find((x) => x.variable === v).expr, {});
        const vals = (await query(prom.port, 'group by (' + lv.label + ') (' + lv.expr + ')'))
          .data.result.map((x) => x.metric[lv.label]);
        let hit = null;
        for (const val of vals)
          if ((await series(q.expr, {[v]: val})).n > 0) {
            hit = val;
            break;
          }
        check(hit !== null, q.where + ': gives data for some value of $' + v + ' (' +
              vals.join(', ') + ')');
        report.push(q.where + ': $' + v + '=' + hit);
      }
    }
    fs.writeFileSync(path.join(OUT, 'queries.txt'), report.join('\n') + '\n');
  } finally {
    if (prom) {
      prom.kill('SIGTERM');
      await prom.ended;
    }
    if (dcgm) dcgm.close();
    d.kill('SIGTERM');
    const end = await d.ended;
    check(end.code === 0, 'gpuschedd exits 0 on SIGTERM (' + JSON.stringify(end) + ')' +
          (end.code === 0 ? '' : '\n' + d.log().slice(-2000)));
    fs.rmSync(DIR, {recursive: true, force: true});
  }
  done(all.length + ' queries in ' + dashes.length + ' dashboards; results in ' + OUT);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
