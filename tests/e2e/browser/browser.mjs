// SPDX-License-Identifier: MIT
// Headless Chromium (Debian's /usr/bin/chromium) driven by playwright-core,
// for tests/e2e/test_convert.py.  Prints one JSON object on stdout.
//
//   node browser.mjs speedscope PROFILE OUT.png [KEYS [TRACK]]   speedscope
//        opens PROFILE; {"title": the page's title, "toolbar": its first
//        lines, "frames": the function names of its Sandwich table}; with
//        KEYS, goes to the profile whose name holds TRACK (if given),
//        presses KEYS (speedscope's: n next profile, 1 2 3 the views)
//        and takes the screenshot then
//   node browser.mjs svg FILE.svg SEARCH OUT.png  the flame graph: hover the
//        widest frame above the root's child, click it (zoom), search;
//        {"hover": details line, "hot": its name, "zoomed_width": its
//         width after the click, "matched": the search's line}
//   Both also give "errors" (the page's uncaught errors) and "blocked"
//   (the URLs of requests that were not for local files, refused).
//   node browser.mjs shot URL OUT.png WIDTH HEIGHT    a screenshot
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.TK_CHROMIUM || '/usr/bin/chromium';

async function launch(width, height) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width, height },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--no-first-run',
           '--disable-quic'],
  });
  // nothing but local files: a request elsewhere is refused, and listed
  // in the result's "blocked" for the test to fail on
  const blocked = [];
  await ctx.route(/^(?!file:|data:|blob:|about:)/, (r) => {
    console.error('blocked request ' + r.request().url());
    blocked.push(r.request().url());
    r.abort();
  });
  return { ctx, profile, blocked };
}

async function close({ ctx, profile }) {
  await ctx.close();
  fs.rmSync(profile, { recursive: true, force: true });
}

async function speedscope(profilePath, png, keys, track) {
  const b = await launch(1200, 700);
  const page = b.ctx.pages()[0] || await b.ctx.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  // as speedscope's own command line does: a script that hands the file
  // to the page, named in the URL's fragment
  const data = fs.readFileSync(profilePath);
  const js = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tk-ss-')), 'profile.js');
  fs.writeFileSync(js, `speedscope.loadFileFromBase64(${JSON.stringify(path.basename(profilePath))}, ${JSON.stringify(data.toString('base64'))})`);
  const index = path.join(here, 'node_modules', 'speedscope', 'dist', 'release', 'index.html');
  await page.goto(pathToFileURL(index).href + '#localProfilePath=' + js);
  await page.getByText(/Sandwich/).waitFor({ timeout: 30000 });
  const title = await page.evaluate(() => document.title);
  if (keys) {
    for (let i = 0; track && i < 64; i++) {
      if ((await page.evaluate(() => document.body.innerText)).includes(track)) break;
      await page.keyboard.press('n');
      await page.waitForTimeout(200);
    }
    for (const k of keys) {
      await page.keyboard.press(k);
      await page.waitForTimeout(300);
    }
    // the toolbar and the graph's first rows
    await page.screenshot({ path: png, clip: { x: 0, y: 0, width: 1200, height: 240 } });
    png = null;
  }
  await page.getByText(/Sandwich/).click();
  await page.waitForTimeout(500);
  const frames = await page.evaluate(() => {
    const out = new Set();
    document.querySelectorAll('table td, [class*="table"] span, [class*="Table"] span').forEach((e) => {
      const t = (e.textContent || '').trim();
      if (t) out.add(t);
    });
    return [...out];
  });
  const toolbar = await page.evaluate(() => document.body.innerText.split('\n').slice(0, 12));
  if (png) await page.screenshot({ path: png });
  await close(b);
  fs.rmSync(path.dirname(js), { recursive: true, force: true });
  return { title, toolbar, frames, errors, blocked: b.blocked };
}

async function svg(file, search, png) {
  const b = await launch(1200, 400);
  const page = b.ctx.pages()[0] || await b.ctx.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(pathToFileURL(path.resolve(file)).href);
  // the hot frame: the widest at depth 2 (above "all" and the root call)
  const hot = await page.evaluate(() => {
    let best = null;
    document.querySelectorAll('g.f[data-d="2"]').forEach((g) => {
      if (!best || +g.getAttribute('data-w') > +best.getAttribute('data-w')) best = g;
    });
    best.id = 'hot';
    return best.getAttribute('data-n');
  });
  const box = await page.locator('#hot rect').boundingBox();
  await page.mouse.move(box.x + 2, box.y + box.height / 2);
  const hover = await page.locator('#details').textContent();
  await page.mouse.click(box.x + 2, box.y + box.height / 2);
  const zoomed = await page.locator('#hot rect').getAttribute('width');
  const label = await page.locator('#hot text').textContent();
  page.once('dialog', (d) => d.accept(search));
  await page.locator('#search').click();
  const matched = await page.locator('#matched').textContent();
  if (png) await page.locator(':root').screenshot({ path: png });
  await close(b);
  return { hot, hover, zoomed_width: +zoomed, label, matched, errors, blocked: b.blocked };
}

async function shot(url, png, width, height) {
  const b = await launch(+width || 1200, +height || 700);
  const page = b.ctx.pages()[0] || await b.ctx.newPage();
  await page.goto(url);
  await page.waitForTimeout(1500);
  // an SVG document: just the drawing
  const svg = await page.evaluate(() => document.documentElement.tagName === 'svg');
  if (svg) await page.locator(':root').screenshot({ path: png });
  else await page.screenshot({ path: png });
  await close(b);
  return { png };
}

const [what, ...args] = process.argv.slice(2);
const run = { speedscope, svg, shot }[what];
if (!run) {
  console.error('usage: node browser.mjs speedscope|svg|shot ...');
  process.exit(2);
}
console.log(JSON.stringify(await run(...args)));
