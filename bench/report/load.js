#!/usr/bin/env node
/*
 * How long gpusched report's pages take to open in Debian's chromium: each page opened RUNS
 * times (default 5) in a fresh tab, from navigation start to the load event (performance
 * timing; the page draws every chart and the cluster map before it), and to the end of the
 * page's own script (its gs-done mark). Prints the file's size, the best and the median.
 * Usage: node bench/report/load.js PAGE.html... (RUNS=N to change the count).
 */
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const {chromium} = require(path.join(__dirname, '../../tests/browser/node_modules/playwright-core'));

(async () => {
  const runs = +(process.env.RUNS || 5);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-bench-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, viewport: {width: 1400, height: 1000},
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const median = (v) => v.slice().sort((a, b) => a - b)[Math.floor(v.length / 2)];
  for (const file of process.argv.slice(2)) {
    const load = [], drawn = [];
    for (let i = 0; i < runs; i++) {
      const page = await browser.newPage();
      await page.goto('file://' + path.resolve(file), {waitUntil: 'load', timeout: 120000});
      const t = await page.evaluate(() => {
        const mark = performance.getEntriesByName('gs-done')[0];
        return [performance.timing.loadEventEnd - performance.timing.navigationStart,
                Math.round(mark ? mark.startTime : -1), document.body.dataset.ready];
      });
      if (t[2] !== '1') throw new Error(file + ': the page did not finish drawing');
      load.push(t[0]);
      drawn.push(t[1]);
      await page.close();
    }
    console.log(file + ': ' + fs.statSync(file).size + ' bytes; load event ' + Math.min(...load) +
                ' ms best, ' + median(load) + ' ms median; drawn ' + Math.min(...drawn) +
                ' ms best, ' + median(drawn) + ' ms median (' + runs + ' runs)');
  }
  await browser.close();
  fs.rmSync(profile, {recursive: true, force: true});
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
