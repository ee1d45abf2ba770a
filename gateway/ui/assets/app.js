'use strict';
// The kubeactor dashboard. Every page lists what it shows from the API of the server
// that serves it, then watches from the list's resourceVersion (newline-delimited JSON
// events), so changes appear without a reload. Nothing is fetched from elsewhere.

const view = document.getElementById('view');
const liveBadge = document.getElementById('live');
const maxRows = 500; // a page renders at most this many rows; the filter narrows them

// h makes an element: h('td', {class: 'num'}, 'text', childNode, [more]).
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

const key = (o) => (o.metadata.namespace || '') + '/' + o.metadata.name;

class Gone extends Error {}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, {once: true});
  });
}

async function apiError(r) {
  try {
    const st = await r.json();
    if (st.message) return new Error(`${r.status}: ${st.message}`);
  } catch (_) { /* not a Status */ }
  return new Error(`${r.status} ${r.statusText}`);
}

// Collection keeps the objects at an API collection path current: a list, then a
// watch from the list's resourceVersion, a new watch from the last version seen when
// one ends, and a new list when the server answers 410 Gone (the version is too old).
class Collection {
  constructor(path, changed) {
    this.path = path;
    this.changed = changed;
    this.items = new Map();
    this.rv = '';
    this.loaded = false;
    this.error = null;
    this.abort = new AbortController();
    this.run();
  }

  stop() { this.abort.abort(); }

  get list() { return [...this.items.values()]; }

  async run() {
    const signal = this.abort.signal;
    let backoff = 500;
    while (!signal.aborted) {
      try {
        if (!this.rv) await this.relist();
        const started = Date.now();
        await this.watch();
        backoff = 500;
        if (Date.now() - started < 1000) await sleep(1000, signal); // a watch that ends at once is not retried at once
      } catch (e) {
        if (signal.aborted) return;
        if (e instanceof Gone) { this.rv = ''; continue; }
        this.error = e.message || String(e);
        setLive(false, this.error);
        this.changed();
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, 10000);
      }
    }
  }

  async relist() {
    const r = await fetch(this.path, {signal: this.abort.signal, headers: {Accept: 'application/json'}});
    if (!r.ok) throw await apiError(r);
    const l = await r.json();
    this.items = new Map((l.items || []).map((o) => [key(o), o]));
    this.rv = l.metadata.resourceVersion;
    this.loaded = true;
    this.error = null;
    this.changed();
  }

  async watch() {
    const sep = this.path.includes('?') ? '&' : '?';
    const url = `${this.path}${sep}watch=true&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(this.rv)}`;
    const r = await fetch(url, {signal: this.abort.signal, headers: {Accept: 'application/json'}});
    if (r.status === 410) throw new Gone();
    if (!r.ok) throw await apiError(r);
    this.error = null;
    setLive(true);
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const {value, done} = await reader.read();
      if (done) return; // the server ended the watch: watch again from this.rv
      buf += value;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) this.apply(JSON.parse(line));
      }
    }
  }

  apply(ev) {
    const o = ev.object || {};
    switch (ev.type) {
      case 'ADDED':
      case 'MODIFIED':
        this.items.set(key(o), o);
        break;
      case 'DELETED':
        this.items.delete(key(o));
        break;
      case 'BOOKMARK':
        break;
      case 'ERROR':
        if (o.code === 410) throw new Gone();
        throw new Error(o.message || 'watch error');
    }
    if (o.metadata && o.metadata.resourceVersion) this.rv = o.metadata.resourceVersion;
    if (ev.type !== 'BOOKMARK') this.changed();
  }
}

// Poller fetches a path that cannot be watched (metrics) every interval; value is null
// while the path does not answer.
class Poller {
  constructor(path, interval, changed) {
    this.path = path;
    this.value = null;
    this.abort = new AbortController();
    (async () => {
      const signal = this.abort.signal;
      while (!signal.aborted) {
        let v = null;
        try {
          const r = await fetch(path, {signal, headers: {Accept: 'application/json'}});
          if (r.ok) v = await r.json();
        } catch (_) { /* absent or unreachable: no value */ }
        if (signal.aborted) return;
        if (JSON.stringify(v) !== JSON.stringify(this.value)) { this.value = v; changed(); }
        await sleep(interval, signal);
      }
    })();
  }

  stop() { this.abort.abort(); }
}

function setLive(on, why) {
  liveBadge.className = 'live ' + (on ? 'on' : 'off');
  liveBadge.textContent = on ? 'live' : 'reconnecting';
  liveBadge.title = on ? 'watching the API' : (why || '');
}

// ---- formatting ----

function age(ts) {
  if (!ts) return '';
  let s = Math.max(0, Math.floor((Date.now() - Date.parse(ts)) / 1000));
  if (s < 120) return s + 's';
  const m = Math.floor(s / 60);
  if (m < 120) return m + 'm';
  const hr = Math.floor(m / 60);
  if (hr < 48) return hr + 'h';
  return Math.floor(hr / 24) + 'd';
}

const suffixes = {n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60};

// quantity parses a resource.Quantity string ("250m", "3968Mi", "1e3") to a number.
function quantity(q) {
  if (q === undefined || q === null) return NaN;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(String(q).trim());
  if (!m || !(m[2] in suffixes)) return NaN;
  return parseFloat(m[1]) * suffixes[m[2]];
}

function bytes(n) {
  if (!isFinite(n)) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (n >= 10 || i === 0 ? Math.round(n) : n.toFixed(1)) + ' ' + units[i];
}

function cores(n) {
  if (!isFinite(n)) return '';
  return n >= 1 ? (Math.round(n * 100) / 100) + '' : Math.round(n * 1000) + 'm';
}

function labels(m) {
  return Object.entries(m || {}).map(([k, v]) => h('span', {class: 'badge'}, `${k}=${v}`));
}

function podLink(ns, name) {
  return h('a', {href: `#/pods/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`}, name);
}

// podStatus is the word kubectl get pods shows in its STATUS column.
function podStatus(p) {
  if (p.metadata.deletionTimestamp) return 'Terminating';
  const st = p.status || {};
  let s = st.reason || st.phase || 'Pending';
  for (const c of st.containerStatuses || []) {
    const w = c.state && c.state.waiting;
    const t = c.state && c.state.terminated;
    if (w && w.reason) s = w.reason;
    else if (t && st.phase !== 'Succeeded' && st.phase !== 'Failed') s = t.reason || `ExitCode:${t.exitCode}`;
  }
  return s;
}

function statusClass(s) {
  if (s === 'Running' || s === 'Succeeded' || s === 'Completed') return 'ok';
  if (s === 'Pending' || s === 'ContainerCreating' || s === 'Terminating') return 'warn';
  return 'bad';
}

const restarts = (p) => ((p.status || {}).containerStatuses || []).reduce((n, c) => n + (c.restartCount || 0), 0);

function ready(p) {
  const cs = (p.status || {}).containerStatuses || [];
  return `${cs.filter((c) => c.ready).length}/${(p.spec.containers || []).length}`;
}

// table renders rows of objects under columns [title, cell(o)] (cell returns text or
// nodes); rowAttrs(o) gives a row's attributes.
function table(cols, rows, rowAttrs, empty) {
  if (!rows.length) return h('p', {class: 'note'}, empty);
  const shown = rows.slice(0, maxRows);
  return [
    h('table', {},
      h('thead', {}, h('tr', {}, cols.map(([title]) => h('th', {}, title)))),
      h('tbody', {}, shown.map((o) => h('tr', rowAttrs ? rowAttrs(o) : {},
        cols.map(([, cell, cls]) => h('td', cls ? {class: cls} : {}, cell(o))))))),
    rows.length > shown.length ? h('p', {class: 'note'}, `Showing ${shown.length} of ${rows.length}: filter to narrow.`) : null,
  ];
}

const byName = (a, b) => key(a).localeCompare(key(b));

// matches tells whether o's name, namespace, or any of the extra strings contain the filter.
function matches(filter, o, ...extra) {
  if (!filter) return true;
  const f = filter.toLowerCase();
  return [o.metadata.name, o.metadata.namespace || '', ...extra].some((s) => String(s || '').toLowerCase().includes(f));
}

function state(coll, what) {
  if (coll.error && !coll.loaded) return h('p', {class: 'note error'}, `Cannot list ${what}: ${coll.error}`);
  if (!coll.loaded) return h('p', {class: 'note'}, `Loading ${what}…`);
  return null;
}

// ---- pages ----
// A page names the collections it watches (and polls) and renders from them.

const pages = {
  nodes: () => ({
    title: 'Nodes',
    watch: {nodes: '/api/v1/nodes'},
    poll: {usage: ['/apis/metrics.k8s.io/v1beta1/nodes', 5000]},
    render({nodes, usage}, filter) {
      const used = new Map(((usage.value || {}).items || []).map((m) => [m.metadata.name, m.usage || {}]));
      const rows = nodes.list.filter((n) => matches(filter, n)).sort(byName);
      const cap = (n, r) => ((n.status || {}).capacity || {})[r];
      const meter = (u, c, fmt) => {
        if (!isFinite(u)) return h('span', {class: 'muted'}, '–');
        const pct = isFinite(c) && c > 0 ? Math.round((100 * u) / c) : null;
        return [pct !== null ? h('span', {class: 'meter'}, h('span', {style: `width:${Math.min(pct, 100)}%`})) : null,
          `${fmt(u)}${pct !== null ? ` (${pct}%)` : ''}`];
      };
      const cols = [
        ['Name', (n) => n.metadata.name],
        ['Status', (n) => {
          const r = ((n.status || {}).conditions || []).find((c) => c.type === 'Ready');
          const s = r && r.status === 'True' ? 'Ready' : r && r.status === 'False' ? 'NotReady' : 'Unknown';
          return h('span', {class: 'badge ' + (s === 'Ready' ? 'ok' : 'bad')}, s);
        }],
        ['Conditions', (n) => ((n.status || {}).conditions || []).map((c) => h('span', {
          class: 'badge ' + ((c.type === 'Ready') === (c.status === 'True') ? 'ok' : 'bad'),
          title: [c.reason, c.message].filter(Boolean).join(': '),
        }, `${c.type}=${c.status}`))],
        ['Address', (n) => ((n.status || {}).addresses || []).map((a) => a.address).filter((v, i, a) => a.indexOf(v) === i).join(', '), 'mono'],
        ['CPU', (n) => cap(n, 'cpu') || '', 'num'],
        ['Memory', (n) => bytes(quantity(cap(n, 'memory'))), 'num'],
        ['Pods', (n) => cap(n, 'pods') || '', 'num'],
      ];
      if (usage.value) {
        cols.push(['CPU used', (n) => meter(quantity((used.get(n.metadata.name) || {}).cpu), quantity(cap(n, 'cpu')), cores)]);
        cols.push(['Memory used', (n) => meter(quantity((used.get(n.metadata.name) || {}).memory), quantity(cap(n, 'memory')), bytes)]);
      }
      cols.push(['Age', (n) => age(n.metadata.creationTimestamp), 'num']);
      return [
        state(nodes, 'nodes') || table(cols, rows, (n) => ({'data-name': n.metadata.name}), 'No nodes.'),
        usage.value ? null : h('p', {class: 'note'}, 'Usage is shown when the server answers the metrics.k8s.io API.'),
      ];
    },
  }),

  pods: () => ({
    title: 'Pods',
    watch: {pods: '/api/v1/pods'},
    render({pods}, filter) {
      const st = state(pods, 'pods');
      if (st) return st;
      const rows = pods.list.filter((p) => matches(filter, p, p.spec.nodeName, podStatus(p))).sort(byName);
      if (!rows.length) return h('p', {class: 'note'}, 'No pods.');
      const cols = [
        ['Name', (p) => podLink(p.metadata.namespace, p.metadata.name)],
        ['Status', (p) => { const s = podStatus(p); return h('span', {class: 'badge ' + statusClass(s)}, s); }],
        ['Ready', ready, 'num'],
        ['Restarts', restarts, 'num'],
        ['Node', (p) => p.spec.nodeName || h('span', {class: 'muted'}, 'unscheduled')],
        ['IP', (p) => (p.status || {}).podIP || '', 'mono'],
        ['Age', (p) => age(p.metadata.creationTimestamp), 'num'],
      ];
      const groups = new Map();
      for (const p of rows.slice(0, maxRows)) {
        const ns = p.metadata.namespace;
        if (!groups.has(ns)) groups.set(ns, []);
        groups.get(ns).push(p);
      }
      const attrs = (p) => ({'data-name': p.metadata.name, 'data-namespace': p.metadata.namespace, 'data-status': podStatus(p)});
      return [
        [...groups].map(([ns, ps]) => [h('h2', {}, `Namespace ${ns}`, h('span', {class: 'muted'}, ` · ${ps.length}`)), table(cols, ps, attrs, '')]),
        rows.length > maxRows ? h('p', {class: 'note'}, `Showing ${maxRows} of ${rows.length}: filter to narrow.`) : null,
      ];
    },
  }),

  rcs: () => ({
    title: 'Replication controllers',
    watch: {rcs: '/api/v1/replicationcontrollers'},
    render({rcs}, filter) {
      const sel = (rc) => Object.entries(rc.spec.selector || {}).map(([k, v]) => `${k}=${v}`).join(',');
      const images = (rc) => (((rc.spec.template || {}).spec || {}).containers || []).map((c) => c.image).join(', ');
      const rows = rcs.list.filter((rc) => matches(filter, rc, sel(rc), images(rc))).sort(byName);
      const cols = [
        ['Namespace', (rc) => rc.metadata.namespace],
        ['Name', (rc) => rc.metadata.name],
        ['Desired', (rc) => rc.spec.replicas === undefined ? 1 : rc.spec.replicas, 'num'],
        ['Current', (rc) => (rc.status || {}).replicas || 0, 'num'],
        ['Ready', (rc) => (rc.status || {}).readyReplicas || 0, 'num'],
        ['Selector', (rc) => labels(rc.spec.selector)],
        ['Images', images, 'mono'],
        ['Age', (rc) => age(rc.metadata.creationTimestamp), 'num'],
      ];
      const attrs = (rc) => ({'data-name': rc.metadata.name, 'data-namespace': rc.metadata.namespace});
      return state(rcs, 'replication controllers') || table(cols, rows, attrs, 'No replication controllers.');
    },
  }),

  services: () => ({
    title: 'Services',
    watch: {services: '/api/v1/services', endpoints: '/api/v1/endpoints'},
    render({services, endpoints}, filter) {
      const eps = (svc) => {
        const ep = endpoints.items.get(key(svc));
        const out = [];
        for (const ss of (ep && ep.subsets) || []) {
          for (const a of ss.addresses || []) for (const p of ss.ports || [{}]) out.push(h('span', {class: 'badge ok mono'}, p.port ? `${a.ip}:${p.port}` : a.ip));
          for (const a of ss.notReadyAddresses || []) for (const p of ss.ports || [{}]) out.push(h('span', {class: 'badge warn mono', title: 'not ready'}, p.port ? `${a.ip}:${p.port}` : a.ip));
        }
        return out.length ? out : h('span', {class: 'muted'}, 'none');
      };
      const ports = (svc) => (svc.spec.ports || []).map((p) =>
        `${p.port}${p.targetPort !== undefined && String(p.targetPort) !== String(p.port) ? '→' + p.targetPort : ''}/${p.protocol || 'TCP'}${p.nodePort ? ` (node ${p.nodePort})` : ''}`).join(', ');
      const rows = services.list.filter((s) => matches(filter, s, s.spec.clusterIP)).sort(byName);
      const cols = [
        ['Namespace', (s) => s.metadata.namespace],
        ['Name', (s) => s.metadata.name],
        ['Cluster IP', (s) => s.spec.clusterIP || '', 'mono'],
        ['Ports', ports, 'mono'],
        ['Selector', (s) => labels(s.spec.selector)],
        ['Endpoints', eps],
        ['Age', (s) => age(s.metadata.creationTimestamp), 'num'],
      ];
      const attrs = (s) => ({'data-name': s.metadata.name, 'data-namespace': s.metadata.namespace});
      return state(services, 'services') || table(cols, rows, attrs, 'No services.');
    },
  }),

  events: () => ({
    title: 'Events',
    watch: {events: '/api/v1/events'},
    render({events}, filter) {
      const st = state(events, 'events');
      if (st) return st;
      const rows = events.list.filter((e) => matches(filter, e, e.reason, e.message, e.involvedObject.name))
        .sort((a, b) => lastSeen(b).localeCompare(lastSeen(a)));
      return eventTable(rows, true);
    },
  }),

  pod: (ns, name) => ({
    title: `Pod ${ns}/${name}`,
    noFilter: true,
    watch: {
      pods: `/api/v1/namespaces/${encodeURIComponent(ns)}/pods?fieldSelector=${encodeURIComponent('metadata.name=' + name)}`,
      events: `/api/v1/namespaces/${encodeURIComponent(ns)}/events?fieldSelector=${encodeURIComponent('involvedObject.kind=Pod,involvedObject.name=' + name)}`,
    },
    poll: {
      trace: [`/kubeactor/v1/traces/pods/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`, 5000],
      explain: [`/kubeactor/v1/explain/pods/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`, 5000],
    },
    render({pods, events, trace, explain}) {
      const st = state(pods, 'the pod');
      if (st) return st;
      const p = pods.items.get(`${ns}/${name}`);
      if (!p) return h('p', {class: 'note'}, `There is no pod ${name} in namespace ${ns}.`);
      return podPage(p, events, trace, explain.value);
    },
  }),
};

const lastSeen = (e) => e.lastTimestamp || e.eventTime || e.firstTimestamp || e.metadata.creationTimestamp || '';

function eventTable(rows, withObject) {
  const cols = [
    ['Last seen', (e) => age(lastSeen(e)), 'num'],
    ['Type', (e) => h('span', {class: 'badge ' + (e.type === 'Warning' ? 'bad' : '')}, e.type || 'Normal')],
    ['Reason', (e) => e.reason || ''],
  ];
  if (withObject) {
    cols.push(['Object', (e) => {
      const o = e.involvedObject || {};
      return o.kind === 'Pod' ? [`${o.namespace}/`, podLink(o.namespace, o.name)] : `${o.kind || ''} ${o.namespace ? o.namespace + '/' : ''}${o.name || ''}`;
    }]);
  }
  cols.push(['Message', (e) => e.message || ''], ['Count', (e) => e.count || 1, 'num'], ['Source', (e) => [(e.source || {}).component, (e.source || {}).host].filter(Boolean).join(', '), 'muted']);
  return table(cols, rows, null, 'No events.');
}

function containerState(c) {
  const s = (c && c.state) || {};
  if (s.running) return h('span', {class: 'badge ok', title: s.running.startedAt}, `Running ${age(s.running.startedAt)}`);
  if (s.waiting) return h('span', {class: 'badge warn', title: s.waiting.message || ''}, `Waiting: ${s.waiting.reason || ''}`);
  if (s.terminated) return h('span', {class: 'badge ' + (s.terminated.exitCode ? 'bad' : 'ok'), title: s.terminated.message || ''}, `Terminated: ${s.terminated.reason || ''} (exit ${s.terminated.exitCode})`);
  return h('span', {class: 'muted'}, 'not started');
}

// duration words nanoseconds as the CLI's trace does (µs, ms or s).
function duration(ns) {
  if (ns < 1e6) return `${Math.round(ns / 1e3)}µs`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(2)}ms`;
  return `${(ns / 1e9).toFixed(2)}s`;
}

// traceTable shows the traces of the trace path's answer (newest first) as trees:
// each span's start offset in its trace, its duration, its name indented below its
// parent, and its attributes.
function traceTable(hist) {
  const rows = [];
  const traces = ((hist && hist.traces) || []).slice().sort((a, b) => b.start.localeCompare(a.start));
  for (const t of traces) {
    const walk = (spans, depth) => {
      for (const n of spans || []) {
        rows.push({t, n, depth});
        walk(n.children, depth + 1);
      }
    };
    walk(t.spans, 0);
  }
  return table([
    ['Trace', (r) => h('span', {title: r.t.traceId}, r.t.traceId.slice(0, 8)), 'mono'],
    ['Start', (r) => '+' + duration(r.n.startOffsetNanos || 0), 'num'],
    ['Duration', (r) => duration(r.n.durationNanos || 0), 'num'],
    ['Span', (r) => {
      // Indented through the CSSOM: the page's CSP refuses style attributes.
      const el = h('span', {'data-depth': r.depth}, r.n.name);
      el.style.paddingLeft = `${1.2 * r.depth}em`;
      return el;
    }],
    ['Attributes', (r) => Object.entries(r.n.attributes || {}).filter(([k]) => k !== 'k8s.object').map(([k, v]) => `${k}=${v}`).join(' '), 'mono muted'],
  ], rows, (r) => ({'data-span': r.n.name, 'data-trace': r.t.traceId}), 'No trace of this pod is kept.');
}

function podPage(p, events, trace, explanation) {
  const tracePath = trace.value ? trace.path : null;
  const st = p.status || {};
  const status = podStatus(p);
  const resources = (r) => ['requests', 'limits'].map((k) => Object.entries((r || {})[k] || {}).map(([n, q]) => `${k === 'requests' ? 'req' : 'lim'} ${n} ${q}`).join(', ')).filter(Boolean).join('; ');
  const statuses = new Map((st.containerStatuses || []).map((c) => [c.name, c]));
  const evs = events.list.sort((a, b) => lastSeen(b).localeCompare(lastSeen(a)));
  return [
    h('dl', {id: 'pod-summary', 'data-status': status},
      h('dt', {}, 'Status'), h('dd', {}, h('span', {class: 'badge ' + statusClass(status)}, status), p.spec.nodeName ? ` on ${p.spec.nodeName}` : ''),
      h('dt', {}, 'Created'), h('dd', {}, `${p.metadata.creationTimestamp} (${age(p.metadata.creationTimestamp)} ago)`),
      h('dt', {}, 'Pod IP'), h('dd', {class: 'mono'}, st.podIP || '–'),
      h('dt', {}, 'Host IP'), h('dd', {class: 'mono'}, st.hostIP || '–'),
      h('dt', {}, 'Host networking'), h('dd', {}, p.spec.hostNetwork ? 'yes' : 'no'),
      h('dt', {}, 'Labels'), h('dd', {}, labels(p.metadata.labels)),
      h('dt', {}, 'Created by'), h('dd', {}, ((p.metadata.ownerReferences || [])[0] || {}).name ? `${p.metadata.ownerReferences[0].kind} ${p.metadata.ownerReferences[0].name}` : '–'),
      h('dt', {}, 'Restart policy'), h('dd', {}, p.spec.restartPolicy || ''),
      h('dt', {}, 'Service account'), h('dd', {}, p.spec.serviceAccountName || '–'),
      h('dt', {}, 'Conditions'), h('dd', {}, (st.conditions || []).map((c) => h('span', {class: 'badge ' + (c.status === 'True' ? 'ok' : 'warn'), title: c.message || ''}, `${c.type}=${c.status}`))),
      tracePath ? [h('dt', {}, 'Trace'), h('dd', {}, h('a', {href: tracePath, id: 'trace-link'}, 'this pod\u2019s trace'))] : null,
    ),
    h('h2', {}, 'Containers'),
    table([
      ['Name', (c) => c.name],
      ['Image', (c) => c.image, 'mono'],
      ['State', (c) => containerState(statuses.get(c.name))],
      ['Ready', (c) => ((statuses.get(c.name) || {}).ready ? 'yes' : 'no')],
      ['Restarts', (c) => (statuses.get(c.name) || {}).restartCount || 0, 'num'],
      ['Ports', (c) => (c.ports || []).map((pt) => `${pt.containerPort}/${pt.protocol || 'TCP'}`).join(', '), 'mono'],
      ['Resources', (c) => resources(c.resources), 'mono'],
    ], p.spec.containers || [], (c) => ({'data-name': c.name}), 'No containers.'),
    h('h2', {}, 'Events'),
    eventTable(evs, false),
    h('h2', {}, 'Explanation'),
    explanation ? h('pre', {id: 'pod-explain', class: 'mono'}, (explanation.lines || []).join('\n'))
      : h('p', {class: 'note'}, 'The explanation is shown when the server answers the explain path.'),
    h('h2', {}, 'Trace'),
    h('div', {id: 'pod-trace'}, trace.value ? traceTable(trace.value) : h('p', {class: 'note'}, 'The trace is shown when the server traces.')),
  ];
}

// ---- routing ----

let current = null;

// route maps the location's hash to a page: #/nodes (also the book's #/dashboard/),
// #/pods, #/pods/<namespace>/<name>, #/rcs, #/services, #/events.
function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'pods' && parts.length === 3) return ['pods', pages.pod(parts[1], parts[2])];
  if (pages[parts[0]] && parts[0] !== 'pod') return [parts[0], pages[parts[0]]()];
  return ['nodes', pages.nodes()];
}

function show() {
  if (current) current.stop();
  const [nav, spec] = route();
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('current', a.dataset.page === nav);
  document.title = `${spec.title} · kubeactor`;
  const body = h('div', {id: 'content'});
  const filter = spec.noFilter ? null : h('input', {type: 'search', placeholder: 'Filter', 'aria-label': 'Filter', oninput: () => draw()});
  view.replaceChildren(h('div', {class: 'bar'}, h('h1', {}, spec.title), filter), body);

  const sources = {};
  let pending = null;
  const changed = () => { if (!pending) pending = setTimeout(draw, 30); };
  function draw() {
    clearTimeout(pending);
    pending = null;
    body.replaceChildren(...[spec.render(sources, filter ? filter.value.trim() : '')].flat(Infinity).filter(Boolean));
  }
  for (const [name, path] of Object.entries(spec.watch || {})) sources[name] = new Collection(path, changed);
  for (const [name, [path, every]] of Object.entries(spec.poll || {})) sources[name] = new Poller(path, every, changed);
  const ages = setInterval(draw, 5000); // ages move on
  draw();
  current = {stop() { clearInterval(ages); clearTimeout(pending); for (const s of Object.values(sources)) s.stop(); }};
}

window.addEventListener('hashchange', show);
show();

fetch('/version').then((r) => (r.ok ? r.json() : null)).then((v) => {
  if (v) document.getElementById('version').textContent = `kubeactor ${v.gitVersion || ''} · ${v.platform || ''}`;
}).catch(() => {});
