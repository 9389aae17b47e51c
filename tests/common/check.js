/*
 * Counted checks for the tests written for Node.js (tests/browser, tests/docs): a failed check
 * is said on stderr and the test goes on, so one run lists every failure; done() prints the
 * count and ends the process, non-zero when any check failed.
 */
'use strict';
let checks = 0, failures = 0;

function check(ok, what) {
  checks++;
  if (!ok) {
    failures++;
    console.error('FAIL: ' + what);
  }
}

/* same() - @got and @want are equal as JSON; on failure both are shown, cut to 400 bytes. */
function same(got, want, what) {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  check(g === w, what + (g === w ? '' : '\n  got:  ' + String(g).slice(0, 400) + '\n  want: ' +
                                        String(w).slice(0, 400)));
}

function done(note) {
  console.log(checks + ' checks, ' + failures + ' failed' + (note ? '; ' + note : ''));
  process.exit(failures ? 1 : 0);
}

module.exports = {check, same, done};
