// SPDX-License-Identifier: MIT
// recd's web console: the overview of live sessions, a session's live map, the recordings
// browser and the replay viewer, drawn from the JSON API (docs/http-api.md). Vanilla JavaScript,
// nothing fetched from anywhere but recd itself.
'use strict';

const view = () => document.getElementById('view');
let cleanup = [];           // what the current view must stop when another one opens

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

async function getJSON(url) {
  const r = await fetch(url, { cache: 'no-store' });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error || r.status + ' ' + r.statusText);
  return body;
}

function bytes(n) {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + ' ' + u[i];
}

const fmt = (v, d = 1) => (v === null || v === undefined || Number.isNaN(v)) ? '-' : Number(v).toFixed(d);

// ---- maps ---------------------------------------------------------------------------------

// A map of world coordinates (x east, y north, metres) fitted to a canvas with one scale.
class MapView {
  constructor(canvas) { this.c = canvas; this.g = canvas.getContext('2d'); this.fit(0, 1, 0, 1); }
  fit(minX, maxX, minY, maxY) {
    const pad = 30, w = this.c.width - 2 * pad, h = this.c.height - 2 * pad;
    const sx = Math.max(maxX - minX, 1), sy = Math.max(maxY - minY, 1);
    this.k = Math.min(w / sx, h / sy);
    this.ox = pad + (w - sx * this.k) / 2 - minX * this.k;
    this.oy = pad + (h - sy * this.k) / 2 + maxY * this.k;
    this.extent = [minX, maxX, minY, maxY];
  }
  px(x, y) { return [this.ox + x * this.k, this.oy - y * this.k]; }
  clear() { this.g.clearRect(0, 0, this.c.width, this.c.height); }
  track(points, colour) {
    const g = this.g;
    g.strokeStyle = colour; g.lineWidth = 1.5; g.beginPath();
    points.forEach((p, i) => { const [X, Y] = this.px(p[1], p[2]); i ? g.lineTo(X, Y) : g.moveTo(X, Y); });
    g.stroke();
  }
  marker(x, y, colour, label) {
    const g = this.g, [X, Y] = this.px(x, y);
    g.fillStyle = colour; g.beginPath(); g.arc(X, Y, 5, 0, 2 * Math.PI); g.fill();
    if (label !== undefined) { g.fillStyle = '#1d2330'; g.font = '11px sans-serif'; g.fillText(label, X + 7, Y - 7); }
  }
  // A bar of a round length (1, 2 or 5 x 10^n metres) about a fifth of the width.
  scaleBar() {
    const want = this.c.width / 5 / this.k, p = Math.pow(10, Math.floor(Math.log10(want)));
    const len = [5, 2, 1].map(m => m * p).find(v => v <= want) || p;
    const g = this.g, x0 = 12, y0 = this.c.height - 12, w = len * this.k;
    g.strokeStyle = '#1d2330'; g.lineWidth = 2; g.beginPath();
    g.moveTo(x0, y0 - 5); g.lineTo(x0, y0); g.lineTo(x0 + w, y0); g.lineTo(x0 + w, y0 - 5); g.stroke();
    g.fillStyle = '#1d2330'; g.font = '11px sans-serif';
    g.fillText(len >= 1000 ? len / 1000 + ' km' : len + ' m', x0 + w + 6, y0);
    return len;
  }
}

const palette = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#0a7ea4', '#57606a'];
const colourOf = id => palette[Math.abs(Number(id)) % palette.length];

// A strip chart of (t, value) over the last `span` seconds.
function strip(canvas, series, label, max) {
  const g = canvas.getContext('2d'), w = canvas.width, h = canvas.height;
  g.clearRect(0, 0, w, h);
  g.fillStyle = '#6b7280'; g.font = '11px sans-serif'; g.fillText(label, 4, 12);
  if (series.length < 2) return;
  const t0 = series[0][0], t1 = series[series.length - 1][0] || t0 + 1;
  const top = max || Math.max(1, ...series.map(p => p[1] || 0));
  g.strokeStyle = '#1f6feb'; g.beginPath();
  series.forEach((p, i) => {
    const X = (p[0] - t0) / Math.max(t1 - t0, 1e-9) * (w - 8) + 4, Y = h - 4 - (p[1] || 0) / top * (h - 20);
    i ? g.lineTo(X, Y) : g.moveTo(X, Y);
  });
  g.stroke();
  g.fillText(fmt(series[series.length - 1][1]) + ' (max ' + fmt(top) + ')', w - 130, 12);
}

// ---- the overview -------------------------------------------------------------------------

// A session's refusals and drops: their count, and by reason on hover.
function dropsCell(d) {
  const all = Object.entries(d.refused_by || {}).concat(Object.entries(d.dropped_by || {}));
  const n = all.reduce((sum, [, v]) => sum + v, 0);
  return el('td', { class: 'num', title: all.map(([k, v]) => k + ' ' + v).join(', ') || 'none' }, n);
}

async function overview() {
  const root = view();
  root.replaceChildren(el('h1', {}, 'Live sessions'), el('div', { id: 'sessions' }, 'loading...'),
                       el('h2', {}, 'Process'), el('div', { id: 'process', class: 'panel' }, ''));
  // An answer may come after another view replaced this one: it is then dropped.
  const shown = id => root.isConnected && document.getElementById(id);
  async function refresh() {
    try {
      const s = await getJSON('/api/sessions');
      if (!shown('sessions')) return;
      const rows = s.sessions.map(x => el('tr', { 'data-key': x.key },
        el('td', {}, el('a', { href: '#/session/' + encodeURIComponent(x.key) }, x.key)),
        el('td', {}, x.format), el('td', {}, (x.identity ? x.identity + ' at ' : '') + (x.peer || '-')), el('td', {}, x.state),
        el('td', { class: 'num' }, fmt(x.rate)), el('td', { class: 'num' }, bytes(x.bytes.written)),
        el('td', {}, x.part ? x.part.name : '-'),
        el('td', { class: 'num' }, bytes(x.buffer.used) + ' / ' + bytes(x.buffer.limit)),
        dropsCell(x.drops), el('td', {}, x.ring.can_save ? 'ring' : '-')));
      document.getElementById('sessions').replaceChildren(rows.length ? el('table', {},
        el('tr', {}, ...['session', 'format', 'peer', 'state', 'samples/s', 'written', 'current part',
                          'buffer', 'refused / dropped', 'ring'].map(h => el('th', {}, h))), ...rows)
        : el('p', { class: 'muted' }, 'No session is being recorded. Send one: rectool send FILE --to tcp://127.0.0.1:PORT'));
      const p = await getJSON('/api/process');
      if (!shown('process')) return;
      document.getElementById('process').replaceChildren(
        el('div', {}, 'listeners: ' + p.listeners.join(', ')),
        el('div', {}, 'output root: ' + p.disk.root + (p.disk.free !== undefined ? ' (' + bytes(p.disk.free) + ' free of ' + bytes(p.disk.total) + ')' : '')),
        el('div', {}, 'fleet partitions owned: ' + p.fleet_partitions_owned + ', viewers: ' + p.console.streams),
        el('div', {}, 'recent warnings: ' + (p.warnings.length ? '' : 'none')),
        el('ul', { class: 'events' }, ...p.warnings.map(w => el('li', {}, new Date(w.epoch_ms).toISOString() + ' ' + w.level + ': ' + w.message))));
    } catch (e) {
      if (shown('sessions')) document.getElementById('sessions').replaceChildren(el('p', { class: 'error' }, String(e.message)));
    }
  }
  await refresh();
  const timer = setInterval(refresh, 1000);
  cleanup.push(() => clearInterval(timer));
}

// ---- one live session ---------------------------------------------------------------------

function sessionPage(key) {
  const map = el('canvas', { id: 'live-map', width: 640, height: 480 });
  const speed = el('canvas', { width: 420, height: 90 }), health = el('canvas', { width: 420, height: 90 });
  const status = el('p', { id: 'live-status', class: 'muted' }, 'waiting for samples...');
  const saveOut = el('span', { id: 'save-result' }, '');
  const last = el('input', { id: 'save-last', value: '30s', size: 5 });
  const save = el('button', { id: 'save', onclick: async () => {
    const headers = {};
    const token = document.getElementById('token').value;
    if (token) headers.Authorization = 'Bearer ' + token;
    const r = await fetch('/sessions/' + encodeURIComponent(key) + '/save?last=' + encodeURIComponent(last.value), { method: 'POST', headers });
    saveOut.textContent = r.status + ': ' + (await r.text()).trim();
    saveOut.className = r.ok ? '' : 'error';
  } }, 'Save instant replay');
  const events = el('ul', { class: 'events', id: 'live-events' });
  view().replaceChildren(el('h1', {}, 'Session ' + key), status,
    el('div', { class: 'row' }, map, el('div', {}, speed, health,
      el('div', { class: 'controls' }, 'last', last, save), saveOut, el('h2', {}, 'Latest events'), events)));
  const mv = new MapView(map), tracks = new Map(), speeds = [], healths = [];
  let fitted = null;
  const es = new EventSource('/api/sessions/' + encodeURIComponent(key) + '/stream');
  cleanup.push(() => es.close());
  es.addEventListener('end', () => { status.textContent = 'the session is closed'; es.close(); });
  es.addEventListener('latest', ev => {
    const d = JSON.parse(ev.data);
    for (const p of d.samples) {
      if (p.x === null || p.y === null) continue;
      const tr = tracks.get(p.actor) || [];
      if (!tr.length || tr[tr.length - 1][0] !== p.t) tr.push([p.t, p.x, p.y]);
      if (tr.length > 600) tr.shift();
      tracks.set(p.actor, tr);
    }
    const first = d.samples[0];
    if (first) {
      speeds.push([first.t, first.speed]); healths.push([first.t, first.health ?? first.vehicle_health]);
      if (speeds.length > 600) { speeds.shift(); healths.shift(); }
    }
    // Fit the map to what was seen so far, widened only when a point leaves it.
    const all = [...tracks.values()].flat();
    if (!all.length) return;
    const xs = all.map(p => p[1]), ys = all.map(p => p[2]);
    const e = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    if (!fitted || e[0] < fitted[0] || e[1] > fitted[1] || e[2] < fitted[2] || e[3] > fitted[3]) {
      const m = Math.max(e[1] - e[0], e[3] - e[2], 20) * 0.25;
      fitted = [e[0] - m, e[1] + m, e[2] - m, e[3] + m];
      mv.fit(...fitted);
    }
    mv.clear();
    for (const [id, tr] of tracks) { mv.track(tr, colourOf(id)); }
    for (const p of d.samples) if (p.x !== null) mv.marker(p.x, p.y, colourOf(p.actor), tracks.size > 1 ? p.actor : undefined);
    mv.scaleBar();
    map.dataset.marker = first ? first.x.toFixed(3) + ',' + first.y.toFixed(3) : '';
    status.textContent = d.format + ': ' + d.samples.length + ' actor(s), t=' + fmt(first && first.t, 2) +
      ' s, x=' + fmt(first && first.x, 2) + ' y=' + fmt(first && first.y, 2);
    strip(speed, speeds, 'speed m/s');
    strip(health, healths, 'health', 100);
    events.replaceChildren(...d.events.slice().reverse().map(e => el('li', {}, JSON.stringify(e).slice(0, 200))));
  });
}

// ---- recordings ---------------------------------------------------------------------------

async function recordings() {
  view().replaceChildren(el('h1', {}, 'Recordings'), el('div', { id: 'recordings' }, 'loading...'));
  try {
    const r = await getJSON('/api/recordings');
    if (!document.getElementById('recordings')) return;
    const rows = r.recordings.sort((a, b) => b.mtime_ms - a.mtime_ms).map(f => el('tr', {},
      el('td', {}, f.partial ? f.path : el('a', { href: '#/replay/' + f.path.split('/').map(encodeURIComponent).join('/') }, f.path)),
      el('td', {}, f.format || '?'), el('td', { class: 'num' }, bytes(f.size)),
      el('td', {}, new Date(f.mtime_ms).toISOString().replace('T', ' ').slice(0, 19)),
      el('td', { class: 'num' }, f.units !== undefined ? f.units + ' ' + f.unit : '-'),
      el('td', {}, f.partial ? 'being written' : '')));
    document.getElementById('recordings').replaceChildren(rows.length ? el('table', {},
      el('tr', {}, ...['file', 'format', 'size', 'modified (UTC)', 'length', ''].map(h => el('th', {}, h))), ...rows)
      : el('p', { class: 'muted' }, 'No recordings under the output root yet.'),
      r.truncated ? el('p', { class: 'muted' }, 'The listing is cut at ' + r.count + ' files.') : '');
  } catch (e) {
    const box = document.getElementById('recordings');
    if (box) box.replaceChildren(el('p', { class: 'error' }, String(e.message)));
  }
}

// ---- the replay viewer --------------------------------------------------------------------

// The last point of an actor at or before t (points are in time order), or null.
function pointAt(points, t) {
  let lo = 0, hi = points.length - 1, found = null;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (points[mid][0] <= t) { found = points[mid]; lo = mid + 1; } else hi = mid - 1;
  }
  return found;
}

async function replay(path) {
  const map = el('canvas', { id: 'replay-map', width: 720, height: 520 });
  const timeline = el('canvas', { id: 'replay-events', width: 720, height: 24 });
  const slider = el('input', { id: 'replay-time', type: 'range', min: 0, max: 1, step: 0.001, value: 0 });
  const play = el('button', { id: 'replay-play' }, 'Play');
  const speedSel = el('select', { id: 'replay-speed' }, ...[0.5, 1, 2, 5, 10, 50].map(v => el('option', { value: v }, v + 'x')));
  speedSel.value = '1';
  const pos = el('p', { id: 'replay-pos', class: 'muted' }, 'loading...');
  const header = el('pre', { id: 'replay-header' }, '');
  const actors = el('ul', { class: 'actors', id: 'replay-actors' }), events = el('ul', { class: 'events' });
  view().replaceChildren(el('h1', {}, 'Replay ' + path), pos,
    el('div', { class: 'row' }, el('div', {}, map, timeline, el('div', { class: 'controls' }, play, speedSel, slider)),
      el('div', { class: 'panel' }, el('h2', {}, 'Actors'), actors, el('h2', {}, 'Events'), events,
        el('details', {}, el('summary', {}, 'Recording header'), header))));
  const windowUrl = '/api/recordings/' + path.split('/').map(encodeURIComponent).join('/') + '/window?points=';
  let w;
  try {
    w = await getJSON(windowUrl + '5000');
  } catch (e) {
    pos.textContent = String(e.message); pos.className = 'error'; return;
  }
  if (!pos.isConnected) return; // another view opened meanwhile
  const mv = new MapView(map);
  const ex = w.extent, m = Math.max(ex.max_x - ex.min_x, ex.max_y - ex.min_y, 10) * 0.05;
  mv.fit(ex.min_x - m, ex.max_x + m, ex.min_y - m, ex.max_y + m);
  const duration = w.duration || 0, start = w.from || 0;
  slider.max = String(duration); slider.step = 'any'; // a 24-hour file is scrubbed to the sample too
  header.textContent = w.header ? JSON.stringify(w.header, null, 1).slice(0, 4000) : 'none';
  actors.replaceChildren(...w.actors.map(a => el('li', {}, el('span', { class: 'swatch' }, ''), 'id ' + a.id + ' (' + a.samples + ' samples)')));
  const describe = ev => ev ? Object.entries(ev).filter(([k]) => k !== 'type' && k !== 'session')
    .slice(0, 3).map(([k, v]) => k + '=' + (typeof v === 'object' ? '...' : v)).join(' ') : '';
  events.replaceChildren(...w.events.slice(0, 300).map(e => el('li', {}, fmt(e.t, 2) + ' s: ' + describe(e.event))));
  // Events on the timeline: a tick at each event's time.
  const g = timeline.getContext('2d');
  g.fillStyle = '#eceef2'; g.fillRect(0, 0, timeline.width, timeline.height);
  g.fillStyle = '#d1242f';
  for (const e of w.events) g.fillRect((e.t - start) / Math.max(duration - start, 1e-9) * (timeline.width - 2), 4, 2, 16);
  // A thinned or sampled overview (a long file) is drawn as the route; the position at t comes
  // from a detailed window around t, fetched through the seek index when t leaves the one held.
  const coarse = w.thinned || w.sampled;
  const span = Math.min(60, Math.max(duration / 2, 1));
  let detail = null, fetching = null;
  function wantDetail(t) {
    if (!coarse || fetching !== null || (detail && t >= detail.from && t <= detail.to)) return;
    const from = Math.max(0, t - span), to = Math.min(duration, t + span);
    fetching = t;
    getJSON(windowUrl + '5000&from=' + from + '&to=' + to).then(d => {
      detail = d; fetching = null;
      if (!pos.isConnected) return;
      events.replaceChildren(...d.events.slice(0, 300).map(e => el('li', {}, fmt(e.t, 2) + ' s: ' + describe(e.event))));
      draw(Number(slider.value));
    }).catch(() => { fetching = null; });
  }
  function draw(t) {
    mv.clear();
    const many = w.actors.length > 50;
    for (const a of w.actors) if (!many) mv.track(a.points.filter(p => p[0] <= t), colourOf(a.id) + '88');
    const near = detail && t >= detail.from && t <= detail.to ? detail : null;
    wantDetail(t);
    let shown = null;
    for (const a of (near || w).actors) {
      const p = pointAt(a.points, t);
      if (!p) continue;
      mv.marker(p[1], p[2], colourOf(a.id), many ? undefined : a.id);
      if (!shown) shown = { id: a.id, p };
    }
    mv.scaleBar();
    pos.textContent = 't=' + t.toFixed(3) + ' s' + (shown ? ' actor ' + shown.id + ' x=' + shown.p[1].toFixed(3) + ' y=' + shown.p[2].toFixed(3) + ' (sample at ' + shown.p[0].toFixed(3) + ' s)' : '') +
      ' - ' + w.format + ', ' + w.actors.length + ' actor(s), ' + w.samples_total + ' samples' + (w.sampled ? ' (sampled at keyframes)' : w.thinned ? ' (thinned)' : '');
    pos.dataset.x = shown ? shown.p[1] : ''; pos.dataset.y = shown ? shown.p[2] : ''; pos.dataset.t = t;
    pos.dataset.exact = !coarse || near ? '1' : ''; // every sample at t is known, not a thinned one
  }
  let playing = null, last = 0;
  function frame(now) {
    const t = Math.min(Number(slider.value) + (now - last) / 1000 * Number(speedSel.value), duration);
    last = now; slider.value = String(t); draw(t);
    if (t >= duration) { stop(); return; }
    playing = requestAnimationFrame(frame);
  }
  function stop() { if (playing) cancelAnimationFrame(playing); playing = null; play.textContent = 'Play'; }
  play.addEventListener('click', () => {
    if (playing) { stop(); return; }
    play.textContent = 'Pause'; last = performance.now(); playing = requestAnimationFrame(frame);
  });
  slider.addEventListener('input', () => draw(Number(slider.value)));
  cleanup.push(stop);
  draw(0);
}

// ---- routing ------------------------------------------------------------------------------

function route() {
  cleanup.forEach(f => f());
  cleanup = [];
  const h = location.hash.replace(/^#/, '') || '/';
  if (h.startsWith('/session/')) return sessionPage(decodeURIComponent(h.slice(9)));
  if (h === '/recordings') return recordings();
  if (h.startsWith('/replay/')) return replay(h.slice(8).split('/').map(decodeURIComponent).join('/'));
  return overview();
}

window.addEventListener('hashchange', route);
window.addEventListener('DOMContentLoaded', () => {
  const token = document.getElementById('token');
  token.value = sessionStorage.getItem('recd-token') || '';
  token.addEventListener('change', () => sessionStorage.setItem('recd-token', token.value));
  route();
});
