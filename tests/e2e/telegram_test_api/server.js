// Runs the npm package telegram-test-api (a third-party Bot API emulator) as a service for the Python e2e
// tests: node server.js <node_modules dir> <port>. It prints one JSON line ({"apiURL": ...}) once it listens
// and stops on SIGTERM/SIGINT or when its stdin closes (the test process died: no orphaned server).
// The emulator is used as published, unpatched; what it lacks is wrapped in Python (proxy.py).
'use strict';

const path = require('path');

const [modulesDir, port] = process.argv.slice(2);
if (!modulesDir || !port) {
  process.stderr.write('usage: node server.js <node_modules dir> <port>\n');
  process.exit(2);
}
// the package lives in an ignored npm prefix (scripts/setup.sh), not next to this file
const TelegramServer = require(path.join(path.resolve(modulesDir), 'telegram-test-api'));

async function main() {
  // storeTimeout: messages older than this are dropped by the emulator; longer than any test
  const server = new TelegramServer({ port: Number(port), host: '127.0.0.1', storeTimeout: 3600 });
  await server.start();
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await server.stop();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdin.on('end', stop);
  process.stdin.resume();
  process.stdout.write(`${JSON.stringify({ apiURL: server.config.apiURL })}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
