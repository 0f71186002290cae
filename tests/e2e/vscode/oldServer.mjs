#!/usr/bin/env node
// A stand-in for an old relavium-lsp: it answers `initialize` the way a server from before
// the versions contract would (serverInfo 0.0.1, no experimental.relavium.protocolVersion),
// and `shutdown` / `exit`. The install e2e points relavium.server.command at it to see the
// extension refuse it and offer the matching server.
let buffer = Buffer.alloc(0);

function send(message) {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }));
  process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
  process.stdout.write(body);
}

function handle(message) {
  if (message.method === 'initialize') {
    send({
      id: message.id,
      result: { capabilities: {}, serverInfo: { name: 'relavium-lsp', version: '0.0.1' } },
    });
  } else if (message.method === 'shutdown') {
    send({ id: message.id, result: null });
  } else if (message.method === 'exit') {
    process.exit(0);
  } else if (message.id !== undefined && message.method !== undefined) {
    send({ id: message.id, error: { code: -32601, message: `no ${message.method} here` } });
  }
}

process.stdin.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const end = buffer.indexOf('\r\n\r\n');
    if (end < 0) return;
    const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, end).toString())?.[1]);
    if (buffer.length < end + 4 + length) return;
    handle(JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString()));
    buffer = buffer.subarray(end + 4 + length);
  }
});
process.stdin.on('end', () => process.exit(0));
