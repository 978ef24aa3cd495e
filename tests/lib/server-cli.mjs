// tests/lib/server-cli.mjs — what the test servers (tests/idp/server.mjs,
// tests/upstream/fixture.mjs) share: their command line and their ready line.
//
// commandLine(prog, usageText, options): the values of parseArgs (strict) over options and
// those every test server has (--port, --host 127.0.0.1, --ready-file, --quiet, -h/--help),
// and usage(msg), which writes "PROG: msg" (when given) and usageText to stderr and exits 2;
// an unknown option or --help ends there.
// announceReady(url, file): "ready URL" on stdout, and in file when one is given, written
// whole, then renamed: a watcher never reads half a line.
import fs from 'node:fs';
import { parseArgs } from 'node:util';

const common = {
  port: { type: 'string' },
  host: { type: 'string', default: '127.0.0.1' },
  'ready-file': { type: 'string' },
  quiet: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h' },
};

export function commandLine(prog, usageText, options) {
  const usage = (msg) => {
    if (msg) process.stderr.write(`${prog}: ${msg}\n`);
    process.stderr.write(`${usageText}\n`);
    process.exit(2);
  };
  let args;
  try {
    ({ values: args } = parseArgs({ options: { ...common, ...options }, strict: true }));
  } catch (e) {
    usage(e.message);
  }
  if (args.help) usage();
  return { args, usage };
}

export function announceReady(url, file) {
  const line = `ready ${url}\n`;
  if (file) {
    fs.writeFileSync(`${file}.tmp`, line);
    fs.renameSync(`${file}.tmp`, file);
  }
  process.stdout.write(line);
}
