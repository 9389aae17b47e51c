#!/usr/bin/env node
/*
 * The man pages say only what the programs do: for gpusched(1), gpuschedd(8) and
 * gpusched-agent(8), from their scdoc sources,
 *   - every flag a command's section names is one its --help lists, and every flag --help lists
 *     has its line in the section; every command gpusched --help lists has a section;
 *   - gpusched-agent(8): every flag of its --help has its line in OPTIONS, and every flag the
 *     page names anywhere is one its --help lists;
 *   - every example runs and exits 0: from a scratch directory that sees the clone's data/,
 *     deploy/ and tests/, with the built gpusched and gpuschedd first on the PATH, and a real
 *     gpuschedd started as gpuschedd(8) shows it (on a free port and a scratch data directory
 *     instead of 8080 and /tmp/gpusched), which the client examples then talk to and SIGTERM
 *     stops (exit 0).
 * Usage: GPUSCHED_BIN=... GPUSCHEDD_BIN=... GPUSCHED_AGENT_BIN=... node tests/docs/man.test.js
 * (from the source root).
 */
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const {spawn, spawnSync} = require('child_process');
const {check, done} = require('../common/check.js');
const {freePort, healthy} = require('../common/net.js');

const ROOT = process.cwd();
const BIN = {gpusched: process.env.GPUSCHED_BIN, gpuschedd: process.env.GPUSCHEDD_BIN,
             'gpusched-agent': process.env.GPUSCHED_AGENT_BIN};
if (!BIN.gpusched || !BIN.gpuschedd || !BIN['gpusched-agent']) {
  console.error('man.test.js: GPUSCHED_BIN, GPUSCHEDD_BIN and GPUSCHED_AGENT_BIN must name the ' +
                'programs');
  process.exit(1);
}

/* ---- The pages ---- */

/* The page's sections: {title, subsections: [{heading, flags: Set, lines}]} and its examples. */
function parse(file) {
  const text = fs.readFileSync(path.join(ROOT, 'docs/man', file), 'utf8');
  const page = {file, sections: new Map(), examples: [], prose: []};
  let section = null, sub = null, fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) {
      fenced = !fenced;
      if (fenced) page.examples.push([]);
      continue;
    }
    if (fenced) {
      if (section === 'EXAMPLES' && line.trim()) page.examples[page.examples.length - 1].push(line);
      continue;
    }
    page.prose.push(line);
    if (line.startsWith('# ')) {
      section = line.slice(2).trim();
      sub = {heading: '', flags: new Set()};
      page.sections.set(section, [sub]);
    } else if (line.startsWith('## ')) {
      sub = {heading: line.slice(3).trim(), flags: new Set()};
      page.sections.get(section).push(sub);
    } else if (sub && /^\*-/.test(line)) { /* a flag's line: "*-o*, *--output* _FILE_" */
      for (const m of line.matchAll(/\*(--?[a-z][a-z-]*)\*/g)) sub.flags.add(m[1]);
    }
  }
  return page;
}

function run(prog, args, opts) {
  return spawnSync(BIN[prog], args, Object.assign({encoding: 'utf8'}, opts));
}

/* The flags --help defines, one a line ("  --nodes CSV ...", "  -o, --output FILE ..."). */
function helpFlags(help) {
  const flags = new Set();
  for (const line of help.split('\n')) {
    const m = line.match(/^\s+((?:--?[a-z][a-z-]*)(?:, --?[a-z][a-z-]*)*)(\s|$)/);
    if (m) for (const f of m[1].split(', ')) flags.add(f);
  }
  return flags;
}

const HELP_OF = {
  'simulate': ['simulate', '--help'],
  'simulate --scenario': ['simulate', '--scenario', 'x', '--help'],
  'submit, get, list, cancel, status, tenants, queues, bills': ['submit', '--help'],
  'version': null,
};

function checkFlags(page, prog, section) {
  for (const sub of page.sections.get(section).slice(prog === 'gpuschedd' ? 0 : 1)) {
    const args = prog === 'gpuschedd' ? ['--help'] :
      (sub.heading in HELP_OF ? HELP_OF[sub.heading] : [sub.heading, '--help']);
    const where = page.file + ' ' + (sub.heading || section);
    if (!args) {
      check(sub.flags.size === 0, where + ': no flags');
      continue;
    }
    const r = run(prog, args);
    check(r.status === 0, where + ': ' + prog + ' ' + args.join(' ') + ' exits 0');
    const help = r.stdout + r.stderr;
    for (const f of sub.flags)
      check(new RegExp('(^|[^a-z-])' + f + '([^a-z-]|$)', 'm').test(help),
            where + ': ' + f + ' is in ' + prog + ' ' + args.join(' '));
    for (const f of helpFlags(help))
      check(sub.flags.has(f), where + ': ' + f + ' of ' + prog + ' ' + args.join(' ') +
            ' has its line in the page');
  }
}

/*
 * gpusched-agent's --help lists its flags in a column, several to a line where they go together
 * ("  --discover [--json|--yaml]"):
 * every flag before the description, which follows two spaces or more.
 */
function agentHelpFlags(help) {
  const flags = new Set();
  for (const line of help.split('\n')) {
    if (!/^\s+--/.test(line)) continue;
    const column = line.trim().split(/\s{2,}/)[0];
    for (const m of column.matchAll(/(?:^|[\s[|,])(--[a-z][a-z-]*)/g)) flags.add(m[1]);
  }
  return flags;
}

/* The agent's OPTIONS, all its subsections together, against its --help; and every flag the
 * page names in its text (a description, the exit status) is one the agent has. */
function checkAgent(page) {
  const r = run('gpusched-agent', ['--help']);
  check(r.status === 0, page.file + ': gpusched-agent --help exits 0');
  const help = r.stdout + r.stderr;
  const listed = agentHelpFlags(help);
  check(listed.size > 0, page.file + ': gpusched-agent --help lists flags');
  const lines = new Set();
  for (const sub of page.sections.get('OPTIONS') || []) for (const f of sub.flags) lines.add(f);
  for (const f of lines)
    check(listed.has(f), page.file + ' OPTIONS: ' + f + ' is in gpusched-agent --help');
  for (const f of listed)
    check(lines.has(f), page.file + ' OPTIONS: ' + f + ' of gpusched-agent --help has its line');
  /* --help itself: the agent takes it, its usage does not list it */
  const named = new Set();
  for (const line of page.prose)
    for (const m of line.matchAll(/(?:^|[^a-z0-9-])(--[a-z][a-z-]*)/g)) named.add(m[1]);
  for (const f of named)
    check(f === '--help' || listed.has(f), page.file + ': ' + f + ', named in the page, is in ' +
          'gpusched-agent --help');
  return lines.size;
}

/* ---- The examples ---- */

(async () => {
  const g1 = parse('gpusched.1.scd'), g8 = parse('gpuschedd.8.scd');
  const ga = parse('gpusched-agent.8.scd');
  checkFlags(g1, 'gpusched', 'COMMANDS');
  checkFlags(g8, 'gpuschedd', 'OPTIONS');
  const agentFlags = checkAgent(ga);
  /* Every command gpusched lists has its section. */
  const listed = run('gpusched', ['--help']).stdout;
  const headings = g1.sections.get('COMMANDS').map((s) => s.heading).join(', ');
  for (const m of listed.matchAll(/^ {2}([a-z]+(?:, [a-z]+)*) /gm))
    for (const cmd of m[1].split(', '))
      check(new RegExp('(^|, )' + cmd + '(,|$| )').test(headings),
            'gpusched.1: command ' + cmd + ' has a section');

  /* A scratch directory that sees the clone, the programs first on the PATH. */
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-man-'));
  for (const d of ['data', 'deploy', 'tests']) fs.symlinkSync(path.join(ROOT, d), path.join(dir, d));
  fs.mkdirSync(path.join(dir, 'bin'));
  for (const p of ['gpusched', 'gpuschedd', 'gpusched-agent'])
    fs.symlinkSync(path.resolve(BIN[p]), path.join(dir, 'bin', p));
  const port = await freePort();
  const local = (line) => line.replace(/127\.0\.0\.1:8080/g, '127.0.0.1:' + port)
    .replace(/\/tmp\/gpusched\b/g, path.join(dir, 'store'));
  const env = Object.assign({}, process.env, {PATH: path.join(dir, 'bin') + ':' + process.env.PATH});
  delete env.GPUSCHED_SERVER;
  delete env.GPUSCHED_TOKEN;

  const lines = [...g1.examples.flat(), ...g8.examples.flat(), ...ga.examples.flat()];
  const start = lines.find((l) => l.startsWith('gpuschedd '));
  check(start !== undefined, 'gpuschedd.8: an example starts gpuschedd');
  check(ga.examples.flat().some((l) => l.startsWith('gpusched-agent --discover')),
        'gpusched-agent.8: an example runs gpusched-agent --discover');
  const daemon = spawn('sh', ['-c', 'exec ' + local(start)], {cwd: dir, env,
                                                               stdio: ['ignore', 'ignore', 'pipe']});
  let log = '';
  daemon.stderr.on('data', (d) => (log += d));
  const ended = new Promise((resolve) => daemon.on('exit', (code, sig) => resolve({code, sig})));
  let up = false;
  for (let i = 0; i < 100 && !up && daemon.exitCode === null; i++) {
    up = await healthy(port);
    if (!up) await new Promise((r) => setTimeout(r, 200));
  }
  check(up, 'gpuschedd.8: "' + start + '" answers /healthz' + (up ? '' : '\n' + log));
  try {
    for (const line of lines) {
      if (line === start) continue;
      const l = local(line);
      if (l.startsWith('export ')) { /* export NAME=VALUE ...: for the lines after it */
        for (const m of l.slice(7).matchAll(/([A-Z_]+)=(\S+)/g)) env[m[1]] = m[2];
        continue;
      }
      const r = spawnSync('sh', ['-c', l], {cwd: dir, env, encoding: 'utf8', timeout: 300000,
                                            maxBuffer: 1 << 28});
      check(r.status === 0, 'example "' + line + '" exits 0' +
            (r.status === 0 ? '' : ' (exit ' + r.status + '):\n' + (r.stderr || '').slice(-2000)));
    }
  } finally {
    daemon.kill('SIGTERM');
    const end = await ended;
    check(end.code === 0, 'gpuschedd exits 0 on SIGTERM (got ' + JSON.stringify(end) + ')');
    fs.rmSync(dir, {recursive: true, force: true});
  }
  done(lines.length + ' examples, ' +
       g1.sections.get('COMMANDS').reduce((a, s) => a + s.flags.size, 0) + ' flags of gpusched, ' +
       g8.sections.get('OPTIONS')[0].flags.size + ' of gpuschedd, ' + agentFlags +
       ' of gpusched-agent');
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
