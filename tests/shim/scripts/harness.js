// A Node harness: child_process exec, spawn, execFile, execSync, spawnSync.
const cp = require('child_process');
const fs = require('fs');
const DENY = ['/bin/bash', ['-c', 'cat "$CF_T_KEY"']];
const LEGIT = ['/bin/cat', [process.env.CF_T_ALLOWED]];
const DENY_SH = "bash -c 'cat \"$CF_T_KEY\"'";
const LEGIT_SH = 'cat "$CF_T_ALLOWED"';

const out = (s) => process.stdout.write(String(s));
const err = (s) => process.stderr.write(String(s));
const caseLine = (n, d, l) => out(`CASE ${n} deny=${d} legit=${l}\n`);

// Its own login: the harness reads it, not CF_T_KEY.
const own = fs.readFileSync(process.env.CF_T_OWN, 'utf8');
out(own.startsWith('CFMARK-') ? 'HARNESS_READ ok\n' : 'HARNESS_READ bad\n');
try {
  fs.readFileSync(process.env.CF_T_KEY, 'utf8');
  out('HARNESS_DENIED bad\n');
} catch (e) {
  out(e.code === 'EACCES' ? 'HARNESS_DENIED ok\n' : 'HARNESS_DENIED bad\n');
}

function execP(cmd) {
  return new Promise((resolve) => cp.exec(cmd, (e, so, se) => {
    out(so); err(se); resolve(e ? e.code : 0);
  }));
}
function execFileP(file, args) {
  return new Promise((resolve) => cp.execFile(file, args, (e, so, se) => {
    out(so); err(se); resolve(e ? e.code : 0);
  }));
}
function spawnP(file, args, opts = {}) {
  return new Promise((resolve) => {
    const c = cp.spawn(file, args, { stdio: 'inherit', ...opts });
    c.on('close', (code) => resolve(code));
  });
}
function execSyncS(cmd) {
  try { out(cp.execSync(cmd, { stdio: ['ignore', 'pipe', 'inherit'] })); return 0; }
  catch (e) { out(e.stdout || ''); return e.status; }
}
function spawnSyncS(file, args) {
  return cp.spawnSync(file, args, { stdio: 'inherit' }).status;
}

(async () => {
  caseLine('exec', await execP(DENY_SH), await execP(LEGIT_SH));
  caseLine('spawn', await spawnP(...DENY), await spawnP(...LEGIT));
  caseLine('execFile', await execFileP(...DENY), await execFileP(...LEGIT));
  caseLine('execSync', execSyncS(DENY_SH), execSyncS(LEGIT_SH));
  caseLine('spawnSync', spawnSyncS(...DENY), spawnSyncS(...LEGIT));
  caseLine('spawn-shell', await spawnP(DENY_SH, [], { shell: true }), await spawnP(LEGIT_SH, [], { shell: true }));
})();
