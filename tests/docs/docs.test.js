#!/usr/bin/env node
/*
 * Every command the README and docs/*.md show is run, or at least its flags checked:
 *   - each ```sh block of a page is run, command by command in the page's order, from a scratch
 *     directory that sees the clone's data/, deploy/, tests/ and bench/ and whose build/ is the
 *     build under test (so `build/gpusched` is the program just built), with that build first
 *     on the PATH. A command must exit 0. Lines joined by a trailing backslash and here-documents
 *     are one command; `NAME=value` and `export NAME=value` lines hold for the page's later
 *     commands. One page's files are the next command's input (out.json, then `gpusched bill
 *     out.json`);
 *   - a command that starts gpuschedd must end in `&`, and the next one wait for /healthz (curl
 *     --retry-connrefused), so that a pasted block works; it is started in the background, on a
 *     free port and a scratch store instead of 127.0.0.1:8080 (or 8081) and /tmp/gpusched or
 *     /var/lib/gpusched (every
 *     later command of the page is rewritten the same way), must answer /healthz, and must
 *     exit 0 on SIGTERM once the page is done. Paths under /etc/ are rewritten into the scratch
 *     directory. curl runs with --fail-with-body, so an example the server answers with an
 *     HTTP error fails as its exit status says; a `gpusched get` of a pod must show it running
 *     (a tour whose pod waits forever is a wrong tour);
 *   - what cannot run here is flag-checked: `kubectl` (it needs a cluster) must accept each
 *     flag, as `kubectl SUBCOMMAND --help` or `kubectl options` lists it; `make TARGET` (make
 *     test would run this very test) must be a target (`make -n TARGET`);
 *   - every link to a file of the repository leads to one, and its #anchor to a heading there;
 *   - docs/scenario.md's Cluster and Simulation examples, put together, load (gpusched validate);
 *   - a block introduced as "(`PROGRAM --help`):" is that program's --help, exactly;
 *   - every other place a gpusched, gpuschedd or gpusched-agent command is shown — an inline
 *     `code span` in the prose, a line of another fenced block (a synopsis, a transcript) — has
 *     each of its flags in that program's (or subcommand's) --help.
 * What was run and what only checked is written to OUT_DIR/commands.txt.
 * Usage: GS_BUILD_DIR=build node tests/docs/docs.test.js [OUT_DIR] [PAGE.md...] (source root).
 */
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const {spawn, spawnSync} = require('child_process');
const {check, done} = require('../common/check.js');
const {freePort, healthy} = require('../common/net.js');

const ROOT = process.cwd();
const BUILD = path.resolve(process.env.GS_BUILD_DIR || '');
if (!process.env.GS_BUILD_DIR || !fs.existsSync(path.join(BUILD, 'gpusched'))) {
  console.error('docs.test.js: GS_BUILD_DIR must name the build directory (with gpusched)');
  process.exit(1);
}
const OUT = path.resolve(process.argv[2] || fs.mkdtempSync(path.join(os.tmpdir(), 'gs-docs-')));
fs.mkdirSync(OUT, {recursive: true});
const ONLY = process.argv.slice(3);
const log = [];

/* ---- Reading a page ---- */

/* The page's fenced blocks {info, lines, line} and its prose lines outside them. */
function parse(text) {
  const blocks = [], prose = [];
  let cur = null;
  text.split('\n').forEach((line, i) => {
    const fence = line.match(/^(\s*)```\s*(\S*)/);
    if (fence && !cur) {
      cur = {info: fence[2], lines: [], line: i + 1};
    } else if (fence && cur) {
      blocks.push(cur);
      cur = null;
    } else if (cur) {
      cur.lines.push(line);
    } else {
      prose.push({text: line, line: i + 1});
    }
  });
  return {blocks, prose};
}

/* A sh block's commands: continuation lines joined, here-documents kept with their command,
 * blank and comment-only lines dropped. [{text, line}] */
function commands(block) {
  const out = [];
  const ls = block.lines;
  for (let i = 0; i < ls.length; i++) {
    const at = block.line + 1 + i;
    let cmd = ls[i];
    if (!cmd.trim() || /^\s*#/.test(cmd)) continue;
    while (/\\$/.test(cmd) && i + 1 < ls.length) cmd = cmd.slice(0, -1) + ' ' + ls[++i].trim();
    const here = cmd.match(/<<-?\s*'?"?(\w+)'?"?/);
    if (here) {
      const body = [];
      while (i + 1 < ls.length && ls[i + 1] !== here[1]) body.push(ls[++i]);
      i++;
      cmd = cmd + '\n' + body.join('\n') + '\n' + here[1];
    }
    out.push({text: cmd, line: at});
  }
  return out;
}

/* Shell words of the command's first line, quotes removed; a trailing comment dropped. */
function words(cmd) {
  const line = cmd.split('\n')[0];
  const out = [];
  const re = /'([^']*)'|"((?:[^"\\]|\\.)*)"|(#.*$)|(\S+)/g;
  let m;
  while ((m = re.exec(line))) {
    if (m[3] !== undefined) break;
    out.push(m[1] !== undefined ? m[1] : m[2] !== undefined ? m[2] : m[4]);
  }
  return out;
}

/* ---- Flags ---- */

const PROGRAMS = ['gpusched', 'gpuschedd', 'gpusched-agent'];
const helpCache = new Map();
function help(args) {
  const key = args.join(' ');
  if (!helpCache.has(key)) {
    const r = spawnSync(path.join(BUILD, args[0]), [...args.slice(1), '--help'],
                        {encoding: 'utf8'});
    helpCache.set(key, {ok: r.status === 0, text: (r.stdout || '') + (r.stderr || '')});
  }
  return helpCache.get(key);
}

/* The flags of one of our programs' command lines are in its --help; @ws its words. */
function checkOurFlags(ws, where) {
  const prog = path.basename(ws[0]);
  const rest = ws.slice(1).flatMap((w) => w.replace(/[[\]]/g, ' ').split(/[\s|]+/))
    .filter((w) => w && w !== '...');
  let args = [prog];
  if (prog === 'gpusched' && rest.length && /^[a-z]+$/.test(rest[0])) {
    args = [prog, rest[0]];
    if (rest[0] === 'simulate' && rest.includes('--scenario')) args.push('--scenario', 'x');
  }
  const h = help(args);
  check(h.ok, where + ': ' + args.join(' ') + ' --help exits 0');
  const flags = rest.filter((w) => /^--?[a-zA-Z]/.test(w)).map((w) => w.split('=')[0])
    .filter((f) => f !== '--help');
  for (const f of flags)
    check(new RegExp('(^|[^a-zA-Z0-9-])' + f.replace(/[-]/g, '\\-') + '([^a-zA-Z0-9-]|$)', 'm')
            .test(h.text), where + ': ' + f + ' is a flag of ' + args.join(' '));
  return flags.length;
}

function kubectlHelp(args) {
  const key = 'kubectl ' + args.join(' ');
  if (!helpCache.has(key)) {
    const r = spawnSync('kubectl', args[0] === 'options' ? args : [...args, '--help'],
                        {encoding: 'utf8'});
    helpCache.set(key, {ok: r.status === 0, text: (r.stdout || '') + (r.stderr || '')});
  }
  return helpCache.get(key);
}

/* kubectl needs a cluster: each flag must be one kubectl SUBCOMMAND --help or `kubectl options`
 * lists. */
function checkKubectl(ws, where) {
  const VALUED = new Set(['-n', '--namespace', '-f', '--filename', '-l', '--selector', '-o',
                          '--output', '-c', '--container', '--context', '--kubeconfig']);
  const sub = [], flags = [];
  for (let i = 1; i < ws.length; i++) {
    if (/^-/.test(ws[i])) {
      const f = ws[i].split('=')[0];
      flags.push(f);
      if (VALUED.has(f) && !ws[i].includes('=')) i++;
    } else {
      sub.push(ws[i]);
    }
  }
  const h = kubectlHelp(sub), g = kubectlHelp(['options']);
  check(h.ok, where + ': kubectl ' + sub.join(' ') + ' --help exits 0' + (h.ok ? '' : ': ' + h.text));
  for (const f of flags)
    check(new RegExp('(^|\\s)' + f.replace(/-/g, '\\-') + '[=,\\s\\[]', 'm').test(h.text + g.text),
          where + ': ' + f + ' is a flag of kubectl ' + sub.join(' '));
}

/* A command line in prose or in another fenced block: its program and words, or null. */
function ourCommand(text) {
  const ws = words(text.replace(/^\$\s+/, ''));
  while (ws.length && /^[A-Z_][A-Z0-9_]*=/.test(ws[0])) ws.shift(); /* NAME=value cmd */
  if (!ws.length) return null;
  return PROGRAMS.includes(path.basename(ws[0])) && /^(build\/)?gpusched/.test(ws[0]) ? ws : null;
}

/* Our commands in a command line's pipeline or list (a | b, a && b, a; b), as words. A '|'
 * inside [...] is a synopsis' alternative ([--nodes FILE | --nodes kubernetes]), not a pipe. */
function segments(cmd) {
  let depth = 0;
  const first = [...cmd.split('\n')[0].replace(/\s+#.*$/, '')].map((ch) => {
    depth += ch === '[' ? 1 : ch === ']' && depth ? -1 : 0;
    return ch === '|' && depth ? ' ' : ch;
  }).join('');
  return first.split(/\s(?:\||&&|;)\s/).map((s) => ourCommand(s.replace(/[<>]\s*\S+/g, '')))
    .filter((ws) => ws);
}

/* A fenced block's lines with a synopsis' indented continuations ("    [--tls-cert PEM]")
 * joined to the command line they continue: [{text, at}], @at the 0-based index of its first. */
function joinContinued(lines) {
  const out = [];
  lines.forEach((l, i) => {
    if (out.length && /^\s+[[-]/.test(l) && segments(out[out.length - 1].text).length)
      out[out.length - 1].text += ' ' + l.trim();
    else
      out.push({text: l, at: i});
  });
  return out;
}

/* ---- Links ---- */

/* GitHub's anchor of a heading: lower case, punctuation but '-' and '_' dropped, spaces '-'. */
const slug = (h) => h.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');

function checkLinks(page, text) {
  const prose = text.replace(/```[\s\S]*?```/g, '');
  for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(m[1])) continue; /* http:, https:, mailto: */
    const [file, anchor] = m[1].split('#');
    const target = file ? path.normalize(path.join(path.dirname(page), file)) : page;
    const ok = fs.existsSync(path.join(ROOT, target));
    check(ok, page + ': link ' + m[1] + ' leads to ' + target);
    if (!ok || anchor === undefined) continue;
    const heads = fs.readFileSync(path.join(ROOT, target), 'utf8').replace(/```[\s\S]*?```/g, '')
      .split('\n').filter((l) => /^#+ /.test(l)).map((l) => slug(l.replace(/^#+ /, '')));
    check(heads.includes(anchor), page + ': link ' + m[1] + ': ' + target + ' has a heading #' +
          anchor);
  }
}

/* ---- --help shown in full ---- */

/* A block a prose line introduces as "(`PROGRAM [SUBCOMMAND] --help`):" is that --help, exactly:
 * a page that copies it goes stale when the options change. */
function checkHelpBlocks(page, blocks, prose) {
  for (const b of blocks.filter((x) => x.info === '')) {
    const before = prose.filter((p) => p.line < b.line && p.text.trim()).pop();
    const m = before && before.line >= b.line - 2 &&
      before.text.match(/\(`((?:build\/)?gpusched[\w-]*(?: [a-z-]+)*) --help`\):\s*$/);
    if (!m) continue;
    const args = m[1].split(' ');
    args[0] = path.basename(args[0]);
    const h = help(args);
    const want = h.text.replace(/\s+$/, ''), shown = b.lines.join('\n').replace(/\s+$/, '');
    check(h.ok && shown === want, page + ':' + b.line + ': the block is `' + m[1] +
          ' --help` as the program prints it' + (shown === want ? '' : ':\n' + want));
    log.push(page + ':' + b.line + '\tCOMPARED\t' + m[1] + ' --help');
  }
}

/* ---- Scenario examples ---- */

/* The bundled stand-in for a topologyFile an example names, which a reader makes on the node. */
const TOPOLOGY_FILES = {'l40s-topo.txt': 'tests/data/topo/l40s_4gpu_2socket_node_sys_2nic_legend_nic_legend.txt'};

/* docs/scenario.md's Cluster example and its Simulation examples put together as a reader would
 * (each later `spec:` fragment's fields added to the Simulation document's spec) must load:
 * `gpusched validate` exits 0, so every node or card the failures name is one of the Cluster's. */
function checkScenarioExamples(page, blocks) {
  const yaml = blocks.filter((b) => b.info === 'yaml');
  const kind = (k) => yaml.find((b) => b.lines.some((l) => l === 'kind: ' + k));
  const cluster = kind('Cluster'), sim = kind('Simulation');
  check(cluster && sim, page + ': has a Cluster and a Simulation example');
  if (!cluster || !sim) return;
  const frags = yaml.filter((b) => b.line > sim.line && b.lines[0] === 'spec:');
  const text = [...cluster.lines, '---', ...sim.lines, ...frags.flatMap((b) => b.lines.slice(1))]
    .join('\n') + '\n';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-docs-scenario-'));
  try {
    for (const m of text.matchAll(/topologyFile:\s*(\S+)/g)) {
      const from = TOPOLOGY_FILES[m[1]];
      check(from, page + ': topologyFile ' + m[1] + ' has a bundled stand-in in docs.test.js');
      if (from) fs.copyFileSync(path.join(ROOT, from), path.join(dir, m[1]));
    }
    fs.writeFileSync(path.join(dir, 'example.yaml'), text);
    const r = spawnSync(path.join(BUILD, 'gpusched'), ['validate', path.join(dir, 'example.yaml')],
                        {encoding: 'utf8'});
    check(r.status === 0, page + ':' + cluster.line + ': the Cluster and Simulation examples (' +
          (1 + frags.length) + ' Simulation blocks) load with gpusched validate' +
          (r.status === 0 ? '' : ' (exit ' + r.status + '):\n' + r.stderr + '\n' + text));
    log.push(page + ':' + cluster.line + '\tVALIDATED\tCluster and Simulation examples');
  } finally {
    fs.rmSync(dir, {recursive: true, force: true});
  }
}

/* ---- Running a page ---- */

function scratch(page) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-docs-' + page.replace(/\W/g, '_') + '-'));
  for (const d of ['data', 'deploy', 'tests', 'bench', 'scripts'])
    fs.symlinkSync(path.join(ROOT, d), path.join(dir, d));
  fs.symlinkSync(BUILD, path.join(dir, 'build'));
  return dir;
}

async function runPage(page, blocks) {
  const dir = scratch(page);
  const port = await freePort();
  const local = (s) => s.replace(/127\.0\.0\.1:808[01]\b/g, '127.0.0.1:' + port)
    .replace(/\/(tmp|var\/lib)\/gpusched\b/g, path.join(dir, 'store'))
    .replace(/(^|[\s=])\/etc\//g, '$1' + dir + '/etc/');
  const env = Object.assign({}, process.env, {PATH: BUILD + ':' + process.env.PATH});
  delete env.GPUSCHED_SERVER;
  delete env.GPUSCHED_TOKEN;
  /* an HTTP error fails the command (a curl the page already gives -f keeps it) */
  let prelude = 'curl() { case " $* " in *" -f "*|*" -sf "*|*" --fail "*) command curl "$@" ;; ' +
    '*) command curl --fail-with-body "$@" ;; esac; }\n';
  const daemons = [];
  let ran = 0, checked = 0;
  let started = null; /* where gpuschedd was started: the next command must wait for it */
  try {
    for (const b of blocks)
      for (const c of commands(b)) {
        const where = page + ':' + c.line;
        const ws = words(c.text);
        const prog = path.basename(ws[0] || '');
        if (started)
          check(/\/healthz\b/.test(c.text) && /--retry-connrefused/.test(c.text), started +
                ': the command after gpuschedd waits for it (curl --retry-connrefused .../healthz);' +
                ' pasted, the next one would find nothing listening');
        started = null;
        if (prog === 'make') {
          const r = spawnSync('make', ['-n', ...ws.slice(1)], {cwd: ROOT, encoding: 'utf8'});
          check(r.status === 0, where + ': make ' + ws.slice(1).join(' ') + ' is a target');
          log.push(where + '\tTARGET-CHECKED\t' + c.text);
          checked++;
          continue;
        }
        if (prog === 'kubectl') {
          checkKubectl(ws, where);
          log.push(where + '\tFLAG-CHECKED\t' + c.text);
          checked++;
          continue;
        }
        if (ws.length && (ws[0] === 'export' ? ws.slice(1) : ws).every((w) => /^[A-Z_][A-Z0-9_]*=/
          .test(w))) { /* assignments only: they hold for the page's later commands */
          prelude += local(c.text.replace(/\s+#.*$/, '')) + '\n';
          log.push(where + '\tSET\t' + c.text);
          continue;
        }
        if (prog === 'gpuschedd') {
          checkOurFlags(ws, where);
          check(/&\s*$/.test(c.text), where + ': gpuschedd is started in the background (&);' +
                ' pasted, a block would stop at it');
          started = where;
          const line = local(c.text).replace(/\s*&\s*$/, '');
          const d = spawn('sh', ['-c', prelude + 'exec ' + line], {cwd: dir, env,
                                                                   stdio: ['ignore', 'ignore', 'pipe']});
          let dlog = '';
          d.stderr.on('data', (x) => (dlog += x));
          d.ended = new Promise((resolve) => d.on('exit', (code, sig) => resolve({code, sig})));
          let up = false;
          for (let i = 0; i < 150 && !up && d.exitCode === null; i++) {
            up = await healthy(port);
            if (!up) await new Promise((r) => setTimeout(r, 200));
          }
          check(up, where + ': gpuschedd answers /healthz' + (up ? '' : '\n' + dlog.slice(-2000)));
          daemons.push({d, where, log: () => dlog});
          log.push(where + '\tDAEMON\t' + c.text);
          ran++;
          continue;
        }
        const r = spawnSync('sh', ['-c', prelude + local(c.text)], {cwd: dir, env,
          encoding: 'utf8', timeout: 600000, maxBuffer: 1 << 30});
        check(r.status === 0, where + ': "' + c.text.split('\n')[0] + '" exits 0' +
              (r.status === 0 ? '' : ' (exit ' + r.status + (r.error ? ', ' + r.error.message : '') +
               '):\n' + (r.stderr || '').slice(-2000)));
        for (const seg of segments(c.text)) {
          checkOurFlags(seg, where);
          if (r.status === 0 && seg[1] === 'get')
            check(/\brunning\b/.test(r.stdout), where + ': "' + seg.join(' ') +
                  '" shows the pod running:\n' + r.stdout.slice(-2000));
        }
        log.push(where + '\tRUN\t' + c.text.split('\n')[0]);
        ran++;
      }
  } finally {
    for (const x of daemons) {
      x.d.kill('SIGTERM');
      const end = await x.d.ended;
      check(end.code === 0, x.where + ': gpuschedd exits 0 on SIGTERM (' + JSON.stringify(end) +
            ')' + (end.code === 0 ? '' : '\n' + x.log().slice(-2000)));
    }
    fs.rmSync(dir, {recursive: true, force: true});
  }
  return {ran, checked};
}

(async () => {
  const pages = ONLY.length ? ONLY : ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md')).sort().map((f) => 'docs/' + f)];
  let ran = 0, checked = 0, shown = 0;
  for (const page of pages) {
    const source = fs.readFileSync(path.join(ROOT, page), 'utf8');
    const {blocks, prose} = parse(source);
    checkLinks(page, source);
    if (page === 'docs/scenario.md') checkScenarioExamples(page, blocks);
    checkHelpBlocks(page, blocks, prose);
    const sh = blocks.filter((b) => b.info === 'sh');
    const r = await runPage(page, sh);
    ran += r.ran;
    checked += r.checked;
    /* Commands shown elsewhere: other fenced blocks' lines, code spans in the prose. */
    for (const b of blocks.filter((x) => x.info !== 'sh'))
      joinContinued(b.lines).forEach(({text: l, at: i}) => {
        const segs = segments(l.replace(/^\$\s+/, ''));
        for (const ws of segs) checkOurFlags(ws, page + ':' + (b.line + 1 + i));
        if (segs.length) {
          log.push(page + ':' + (b.line + 1 + i) + '\tFLAG-CHECKED\t' + l);
          shown++;
        }
      });
    const text = prose.map((p) => p.text).join('\n');
    for (const m of text.matchAll(/`((?:[^`\n]|\n(?!\s*\n))+)`/g)) { /* within a paragraph */
      const segs = segments(m[1].replace(/\s*\n\s*/g, ' ')).filter((ws) => ws.length > 1);
      if (segs.length) {
        const line = prose[text.slice(0, m.index).split('\n').length - 1].line;
        for (const ws of segs) checkOurFlags(ws, page + ':' + line);
        log.push(page + ':' + line + '\tFLAG-CHECKED\t' + m[1]);
        shown++;
      }
    }
    console.log(page + ': ' + r.ran + ' commands run, ' + r.checked + ' flag-checked');
  }
  fs.writeFileSync(path.join(OUT, 'commands.txt'), log.join('\n') + '\n');
  done(ran + ' commands run, ' + checked + ' checked without running, ' + shown +
       ' commands shown in prose or other blocks flag-checked; list in ' +
       path.join(OUT, 'commands.txt'));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
