// SPDX-License-Identifier: MIT
// Drives Debian's chromium (headless, through playwright-core; never a downloaded browser)
// against a running recd fed by senders of each format (console_browser.sh starts them):
// every page loads, the live map's marker moves while samples arrive, the replay viewer scrubbed
// to a time shows the position `rectool export` gives at that time, "save instant replay" writes a
// file rectool verifies, and no request leaves loopback. Writes a screenshot of each page.
'use strict';
const { chromium } = require('playwright-core');
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const [url, root, rectool, images] = process.argv.slice(2);
const scale = Number(process.env.RECD_TEST_TIME_SCALE || 1);
const origin = new URL(url).origin;
const fails = [];
const fail = m => { console.log('FAIL: ' + m); fails.push(m); };
const offsite = [];

// The position rectool export gives for actor `actor` at time t (the last sample at or before t),
// in the console's map coordinates (metres, x east, y north).
function exported(file, t) {
  // A long file is exported from a minute before t (through its seek index), not whole.
  const range = t > 120 ? ['--from', Math.floor(t - 60) + 's', '--until', Math.ceil(t + 1) + 's'] : [];
  const lines = execFileSync(rectool, ['export', '--to', 'jsonl', file, ...range, '-o', '-'], { maxBuffer: 1 << 28 })
    .toString().split('\n').filter(Boolean).map(JSON.parse).filter(m => m.type === 'state');
  let best = null;
  for (const m of lines) {
    let at, x, y;
    if (m.position) { at = m.t / 1000; x = m.position[0]; y = m.position[1]; }
    else if (m.pos) { at = m.tick / 20; x = m.pos[0]; y = -m.pos[2]; }
    else if (m.positions) {
      const p = m.positions[0];
      if (!p) continue;
      at = m.elapsed; x = p.location[0] / 100; y = -p.location[1] / 100;
    } else continue;
    if (at <= t + 1e-9) best = { at, x, y }; else break;
  }
  return best;
}

async function main() {
  const t0 = Date.now();
  const phase = what => console.log(((Date.now() - t0) / 1000).toFixed(1) + 's ' + what);
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.route('**/*', r => {
    if (new URL(r.request().url()).origin !== origin) { offsite.push(r.request().url()); return r.abort(); }
    return r.continue();
  });
  page.on('pageerror', e => fail('page error: ' + e.message));
  page.on('console', m => { if (m.type() === 'error') fail('console error: ' + m.text()); });
  const timeout = 15000 * scale;

  phase('chromium started');
  // The overview lists the live sessions of each format.
  await page.goto(url + '/');
  for (const key of ['walk', 'ride', 'traffic'])
    await page.waitForSelector(`tr[data-key="${key}"]`, { timeout });
  const csp = (await page.request.get(url + '/')).headers()['content-security-policy'] || '';
  if (!csp.includes("default-src 'self'")) fail('no strict Content-Security-Policy: ' + csp);
  await page.screenshot({ path: path.join(images, 'console-overview.png') });

  phase('overview');
  // The live map of each format's session: its marker moves while samples arrive.
  const marker = async () => page.$eval('#live-map', c => c.dataset.marker || '');
  for (const key of ['ride', 'traffic', 'walk']) {
    await page.goto(url + '/#/session/' + key);
    const first = await until(key + "'s live marker", marker, timeout);
    await until(key + "'s marker to move", async () => { const m = await marker(); return m && m !== first; }, timeout)
      .catch(() => fail(`${key}: the live marker did not move from ${first}`));
  }
  await page.screenshot({ path: path.join(images, 'console-session.png') });

  phase('live maps');
  // Save instant replay: a file appears that rectool verifies.
  const before = new Set(walk(root));
  await page.click('#save');
  await until('the save to answer', async () => /^\d+:/.test(await page.textContent('#save-result')), timeout);
  const said = await page.textContent('#save-result');
  if (!said.startsWith('200')) fail('save answered ' + said);
  let saved = [];
  for (const end = Date.now() + timeout; Date.now() < end && !saved.length; await sleep(100))
    saved = walk(root).filter(f => !before.has(f) && /replay-\d+/.test(f) && !f.endsWith('.part'));
  if (!saved.length) fail('no saved replay under ' + root);
  else execFileSync(rectool, ['verify', saved[0]]);

  phase('save');
  // The recordings browser, then a replay of each format scrubbed to a time.
  await page.goto(url + '/#/recordings');
  await page.waitForSelector('a[href="#/replay/rec/walk.rec"]', { timeout });
  await page.screenshot({ path: path.join(images, 'console-recordings.png') });
  for (const [file, t, shot] of [['rec/walk.rec', 12.5, 'console-replay.png'], ['rec/ride.recap', 7.3, null],
                                 ['rec/traffic.log', 4.2, 'console-replay-actors.png'],
                                 ['rec/day.recap', 43210.5, null]]) {
    await page.goto(url + '/#/replay/' + file);
    await until(file + ' to load', () => page.$eval('#replay-pos', p => p.dataset.t || ''), timeout);
    await page.$eval('#replay-time', (s, v) => { s.value = String(v); s.dispatchEvent(new Event('input')); }, t);
    // A long file's overview is sampled: the position is exact once the window around t is in.
    await until(file + ' exact at ' + t, () => page.$eval('#replay-pos', p => p.dataset.exact === '1' ? 'yes' : ''), timeout);
    await page.$eval('#replay-time', s => s.dispatchEvent(new Event('input')));
    const shown = await page.$eval('#replay-pos', p => ({ t: Number(p.dataset.t), x: Number(p.dataset.x), y: Number(p.dataset.y) }));
    const want = exported(path.join(root, file), shown.t);
    if (!want || Math.abs(want.x - shown.x) > 0.01 || Math.abs(want.y - shown.y) > 0.01)
      fail(`${file} at ${shown.t}s shows ${shown.x},${shown.y}; rectool export says ${JSON.stringify(want)}`);
    if (Math.abs(shown.t - t) > 0.01) fail(`${file}: scrubbed to ${t}, shows ${shown.t}`);
    await page.click('#replay-play');
    await sleep(300);
    await page.click('#replay-play');
    if (shot) await page.screenshot({ path: path.join(images, shot) });
  }
  const day = await (await fetch(url + '/api/recordings/rec/day.recap/window?points=5000')).json();
  if (!day.sampled || !day.indexed || !(day.duration > 86000))
    fail('the 24-hour Recap file was not sampled through its index: ' + JSON.stringify({ sampled: day.sampled, indexed: day.indexed, duration: day.duration }));
  phase('replays');
  await browser.close();
  if (offsite.length) fail('requests left loopback: ' + offsite.join(', '));
  console.log(fails.length ? fails.length + ' failure(s)' : 'browser checks passed');
  process.exit(fails.length ? 1 : 0);
}

function walk(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p)); else out.push(p);
  }
  return out;
}
const sleep = ms => new Promise(r => setTimeout(r, ms));

// Polls fn(page) until it returns something true (waitForFunction would need eval, which the
// console's Content-Security-Policy rightly forbids); throws after the timeout.
async function until(what, fn, timeout) {
  for (const end = Date.now() + timeout; Date.now() < end; await sleep(100)) {
    const v = await fn().catch(() => null);
    if (v) return v;
  }
  throw new Error('timed out waiting for ' + what);
}

main().catch(e => { console.log('FAIL: ' + (e.stack || e)); process.exit(1); });
