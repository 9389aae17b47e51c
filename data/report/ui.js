/*
 * gpuschedd's /ui: the report's views of the running daemon, drawn by gsReport.render() (the
 * report's renderer) from what the daemon's API answers. The page itself carries no data: this
 * script asks for a bearer token, keeps it in sessionStorage (this tab only, gone when it
 * closes), and sends it with every API call, so a tenant's token sees what the API shows a
 * tenant (its own pods, tenant, bill; cards held by others without their names) and the
 * admin's everything. Every EVERY_MS it samples allocation, queues and cards again; the charts
 * over time and the map's slider run over the samples of this tab (the last SAMPLES_MAX).
 * Ids a test reads: #ui-token, #ui-sign-in, #ui-error, #ui-refresh, #ui-sign-out, #ui-caller;
 * body[data-ready] is the number of renders so far.
 */
'use strict';
(function () {
  const KEY = 'gpusched-token';
  const EVERY_MS = 15000, SAMPLES_MAX = 240, PODS_MAX = 20000, DETAIL_NODES_MAX = 256;
  const root = document.getElementById('report');
  const bar = document.createElement('div');
  bar.id = 'ui-bar';
  bar.className = 'controls';
  document.body.insertBefore(bar, root);
  let samples = [], timer = null, busy = false, renders = 0;

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /* ---- Signing in ---- */

  function signIn(message) {
    clearTimeout(timer);
    samples = [];
    root.textContent = '';
    bar.textContent = '';
    const form = el('form', {id: 'ui-sign-in'});
    const token = el('input', {id: 'ui-token', type: 'password', autocomplete: 'off',
                               placeholder: 'bearer token', size: '40'});
    form.append(el('label', {for: 'ui-token'}, 'gpuschedd token '), token,
                el('button', {type: 'submit'}, 'Show'));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      sessionStorage.setItem(KEY, token.value.trim());
      refresh();
    });
    bar.appendChild(form);
    if (message) bar.appendChild(el('p', {id: 'ui-error', class: 'note'}, message));
    root.appendChild(el('p', {class: 'note'}, 'A tenant\'s token shows its own pods, tenant ' +
      'and bill; the admin\'s token every tenant\'s. The token stays in this tab.'));
    token.focus();
  }

  function signedIn(caller) {
    bar.textContent = '';
    const out = el('button', {id: 'ui-sign-out', type: 'button'}, 'Sign out');
    out.addEventListener('click', () => {
      sessionStorage.removeItem(KEY);
      signIn();
    });
    const again = el('button', {id: 'ui-refresh', type: 'button'}, 'Refresh');
    again.addEventListener('click', () => refresh());
    bar.append(el('span', {id: 'ui-caller'}, 'Signed in as ' + caller), again, out);
  }

  /* ---- The API ---- */

  class AuthError extends Error {}

  async function api(path) {
    const r = await fetch(path, {headers: {Authorization: 'Bearer ' + sessionStorage.getItem(KEY)},
                                 cache: 'no-store'});
    const body = await r.json().catch(() => ({}));
    if (r.status === 401) throw new AuthError(body.error || 'the token is not valid');
    if (!r.ok) throw new Error(path + ': ' + r.status + ' ' + (body.error || r.statusText));
    return body;
  }

  async function allPods() {
    const items = [];
    let next = '';
    do {
      const page = await api('/v1/pods?limit=1000' + (next ? '&continue=' + next : ''));
      items.push(...page.items);
      next = page.continue || '';
    } while (next && items.length < PODS_MAX);
    return {items, cut: !!next};
  }

  /* Each node's cards ([{allocated_milli, mode, pods, mig_instances}]), a few at a time. */
  async function details(nodes) {
    const out = new Map(), queue = nodes.slice(0, DETAIL_NODES_MAX);
    await Promise.all(Array.from({length: 8}, async () => {
      for (let n; (n = queue.shift());)
        out.set(n.name, (await api('/v1/nodes/' + encodeURIComponent(n.name))).gpu);
    }));
    return out;
  }

  /* ---- A sample ---- */

  /* Card @c (GET /v1/nodes/NAME's) as the report's map draws it: its mode as the daemon
   * names it, its tenants (the running pods on it the viewer sees, '' for the rest), and a MIG
   * card's instances with their memory slices as the daemon gives them. */
  function cardState(c, mine) {
    if (!c || !c.allocated_milli) return {mode: 'free', tenants: []};
    if (c.mode === 'mig')
      return {mode: 'mig', tenants: [], slices: c.mig_slices, mig: c.mig_instances.map((m) => {
        const p = mine.find((x) => x.mig && x.mig.start === m.start);
        return {profile: m.profile, start: m.start, size: m.size, tenant: p ? p.tenant : ''};
      })};
    const tenants = [...new Set(mine.map((p) => p.tenant))].sort();
    if (mine.reduce((a, p) => a + p.gpu_milli, 0) < c.allocated_milli) tenants.push('');
    return {mode: c.mode, tenants};
  }

  async function sample() {
    /* One call first: a wrong token costs one failed authentication, not one per call (the
     * daemon shuts an address out after ten in a minute). */
    const status = await api('/v1/status');
    const [tenants, queues, nodes, bills, waits, pods] = await Promise.all([
      api('/v1/tenants'), api('/v1/queues'), api('/v1/nodes'), api('/v1/bills'),
      api('/v1/waits'), allPods()]);
    const cards = await details(nodes.items);
    const on = new Map(); /* node/card -> the running pods the viewer sees there */
    for (const p of pods.items)
      if (p.state === 'running')
        for (const g of p.gpus) {
          const k = p.node + '/' + g;
          if (!on.has(k)) on.set(k, []);
          on.get(k).push(p);
        }
    const states = new Map();
    for (const n of nodes.items)
      for (let g = 0; g < n.gpus; g++) {
        const detail = cards.get(n.name);
        const mine = on.get(n.name + '/' + g) || [];
        const c = detail ? detail[g] : {allocated_milli: mine.length ? 1 : 0, mode: 'exclusive'};
        states.set(n.name + '/' + g, cardState(c, mine));
      }
    return {t: new Date(), status, tenants: tenants.items, queues: queues.items,
            nodes: nodes.items, bills, waits, pods, states,
            detailed: cards.size === nodes.items.length};
  }

  /* ---- The report's data, from the samples ---- */

  const hms = (d) => d.toTimeString().slice(0, 8);

  function asks(p) {
    if (p.mig) return 'mig-' + p.mig.profile;
    if (p.gpu_milli && p.gpu_milli < 1000)
      return p.num_gpu + ' x ' + (p.gpumem_mib ? p.gpumem_mib + ' MiB, ' : '') + p.gpu_milli / 10 +
        ' %';
    return p.num_gpu ? p.num_gpu + ' GPU' : '-';
  }

  function waited(p, now) {
    const end = p.start_time ? Date.parse(p.start_time) : now.getTime();
    const s = Math.max(0, Math.round((end - Date.parse(p.submit_time)) / 1000));
    return (s >= 3600 ? Math.floor(s / 3600) + ' h ' + Math.floor(s % 3600 / 60) + ' min' :
            s >= 60 ? Math.floor(s / 60) + ' min ' + s % 60 + ' s' : s + ' s') +
      (p.start_time ? '' : ' so far');
  }

  function build(host) {
    const last = samples[samples.length - 1];
    const names = [...new Set(samples.flatMap((x) => x.tenants.map((t) => t.name)))].sort();
    const qnames = [...new Set(samples.flatMap((x) => x.queues.map((q) => q.name)))];
    const series = (f) => samples.map(f);
    const timeline = {
      steps: samples.length, labels: samples.map((x) => hms(x.t)),
      step_s: samples.length > 1 ? Math.round((last.t - samples[0].t) / 1000 /
                                              (samples.length - 1)) : 0,
      capacity_milli: last.status.gpu_milli - last.status.gpu_milli_unavailable,
      tenants: names.map((n) => ({name: n, allocated_milli: series((x) => {
        const t = x.tenants.find((y) => y.name === n);
        return t ? t.gpu_milli_allocated : 0;
      })})),
      queues: qnames.map((n) => {
        const q = (x) => x.queues.find((y) => y.name === n) || {};
        return {name: n, deserved_milli: series((x) => q(x).deserved_milli || 0),
                allocated_milli: series((x) => q(x).allocated_milli || 0),
                demand_milli: series((x) => (q(x).allocated_milli || 0) + (q(x).pending_milli || 0))};
      }),
    };
    /* The map: every card's state in each sample, as the report's matrix of state numbers. */
    const keyOf = new Map(), states = [];
    const stateNo = (st) => {
      const k = JSON.stringify(st);
      if (!keyOf.has(k)) {
        keyOf.set(k, states.length);
        states.push(st);
      }
      return keyOf.get(k);
    };
    stateNo({mode: 'free', tenants: []});
    const order = [];
    const zones = new Map();
    for (const n of last.nodes) {
      /* a node without topology.kubernetes.io/zone: a label value has no spaces, so no zone's */
      const zone = n.zone === null ? '(no zone)' : n.zone;
      if (!zones.has(zone)) zones.set(zone, []);
      zones.get(zone).push({name: n.name, template: n.gpu_model || 'no GPU', model: n.gpu_model,
                              gpus: n.gpus, pcie_domain: n.pcie_domain,
                              nvlink_group: n.nvlink_group});
    }
    for (const z of zones.values())
      for (const n of z) for (let g = 0; g < n.gpus; g++) order.push(n.name + '/' + g);
    const K = samples.length, cells = new Uint16Array(order.length * K);
    order.forEach((key, c) => samples.forEach((x, k) => {
      cells[c * K + k] = stateNo(x.states.get(key) || {mode: 'free', tenants: []});
    }));
    const b = last.bills;
    const bill = {currency: b.currency, total: b.total_human,
                  tenants: b.tenants.map((t) => ({name: t.tenant, total_udollars: t.total_udollars,
                                                  total: t.total_human}))};
    const caller = last.status.caller;
    const pods = last.pods.items.slice().reverse();
    return {
      kind: 'live', title: 'gpuschedd at ' + host, source: host, generator: 'gpuschedd /ui',
      scope: caller === 'admin' ? 'Every tenant (the admin\'s token).' :
        'Tenant ' + caller + ': its own pods, tenant and bill; other tenants\' cards unnamed.',
      sampling: 'Sampled in this tab every ' + EVERY_MS / 1000 + ' s since ' + hms(samples[0].t) +
        ' (' + K + ' samples).',
      tenants: [...new Set([...names, ...b.tenants.map((t) => t.tenant)])].sort(),
      now: last.status,
      mine: caller === 'admin' ? null : last.tenants.find((t) => t.name === caller) || null,
      ways: [{way: 'live', timeline, waits: last.waits, bill,
              map: {times_s: samples.map((x) => Math.round((x.t - samples[0].t) / 1000)),
                    labels: timeline.labels, decoded: cells}}],
      cluster: {zones: [...zones].map(([name, nodes]) => ({name, nodes}))},
      states,
      map_note: '',
      pods: pods.map((p) => Object.assign({}, p, {asks: asks(p), waited: waited(p, last.t),
                                                   queue: p.queue || ''})),
      pods_note: (last.pods.cut ? 'the first ' + PODS_MAX + ' only' : '') +
        (last.detailed ? '' : (last.pods.cut ? '; ' : '') + 'cards of the first ' +
         DETAIL_NODES_MAX + ' nodes in detail'),
    };
  }

  /* ---- Polling ---- */

  async function refresh() {
    if (!sessionStorage.getItem(KEY)) return signIn();
    if (busy) return;
    busy = true;
    clearTimeout(timer);
    try {
      const x = await sample();
      samples.push(x);
      if (samples.length > SAMPLES_MAX) samples.shift();
      signedIn(x.status.caller);
      gsReport.render(build(location.host), root);
      document.body.dataset.ready = String(++renders);
      timer = setTimeout(refresh, EVERY_MS);
    } catch (e) {
      if (e instanceof AuthError) {
        sessionStorage.removeItem(KEY);
        signIn('Not signed in: ' + e.message + '.');
      } else {
        bar.appendChild(el('p', {id: 'ui-error', class: 'note'}, String(e.message || e)));
        timer = setTimeout(refresh, EVERY_MS);
      }
    } finally {
      busy = false;
    }
  }

  refresh();
})();
