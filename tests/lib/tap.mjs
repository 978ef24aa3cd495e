// tests/lib/tap.mjs — a tiny TAP producer for node suites (the twin of tap.sh).
// ok(cond, desc, detail?) prints "ok N - desc" or "not ok N - desc" with the detail as
// "# " lines (strings as they are, other values as JSON, at most 40 lines); done() prints
// the plan and exits non-zero when a test failed.
let n = 0;
let failed = 0;

export function ok(cond, desc, detail) {
  n += 1;
  if (cond) {
    console.log(`ok ${n} - ${desc}`);
  } else {
    failed += 1;
    console.log(`not ok ${n} - ${desc}`);
    if (detail !== undefined && detail !== '') {
      const text = typeof detail === 'string' ? detail : JSON.stringify(detail, null, 2);
      for (const line of String(text).split('\n').slice(0, 40)) console.log(`# ${line}`);
    }
  }
  return cond;
}

export function done() {
  console.log(`1..${n}`);
  process.exit(failed ? 1 : 0);
}
