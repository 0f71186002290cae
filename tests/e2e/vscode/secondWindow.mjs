// A second editor window for the VS Code e2e: another `relavium-lsp serve` process on the same
// history (same RELAVIUM_HOME and database key), driven over stdio JSON-RPC by a tiny client.
// What it does must show up in the VS Code window by itself (issue 18).
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';

export class SecondWindow {
  constructor(command, workspace, env) {
    this.workspace = workspace;
    this.nextId = 1;
    this.pending = new Map();
    this.buffer = Buffer.alloc(0);
    this.stderr = [];
    this.process = spawn(command, ['serve'], {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.process.stdout.on('data', (chunk) => this.read(chunk));
    this.process.stderr.on('data', (chunk) => this.stderr.push(String(chunk)));
  }

  read(chunk) {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) {
        return;
      }
      const length = Number(/Content-Length: (\d+)/i.exec(this.buffer.subarray(0, end).toString())?.[1]);
      if (this.buffer.length < end + 4 + length) {
        return;
      }
      const message = JSON.parse(this.buffer.subarray(end + 4, end + 4 + length).toString());
      this.buffer = this.buffer.subarray(end + 4 + length);
      const waiter =
        message.id !== undefined && message.method === undefined ? this.pending.get(message.id) : undefined;
      if (waiter !== undefined) {
        this.pending.delete(message.id);
        if (message.error) {
          waiter.reject(new Error(`${message.error.message} (${JSON.stringify(message.error.data)})`));
        } else {
          waiter.resolve(message.result);
        }
      } else if (message.id !== undefined && message.method !== undefined) {
        this.send({ jsonrpc: '2.0', id: message.id, result: null }); // e.g. client/registerCapability
      }
    }
  }

  send(message) {
    const body = Buffer.from(JSON.stringify(message));
    this.process.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.process.stdin.write(body);
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  notify(method, params) {
    this.send({ jsonrpc: '2.0', method, params });
  }

  async open() {
    const uri = pathToFileURL(this.workspace).href;
    await this.request('initialize', {
      processId: process.pid,
      rootUri: uri,
      capabilities: {},
      workspaceFolders: [{ uri, name: 'workspace' }],
      initializationOptions: { clientName: 'second-window' },
    });
    this.notify('initialized', {});
  }

  async close() {
    try {
      await this.request('shutdown', null);
      this.notify('exit', null);
    } finally {
      this.process.kill();
    }
  }
}
