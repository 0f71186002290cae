// End-to-end test of what a new user sees: a fresh VS Code profile, no relavium-lsp anywhere,
// only the VSIX (with its bundled wheel). Install the server from the notification, chat on
// the offline model, set up a model against a loopback OpenAI-compatible server, and see an
// old server refused with the matching install offered.
//
//   node install.mjs --cache DIR --vsix FILE --artifacts DIR --wheelhouse DIR
//
// The wheelhouse (wheelhouse.sh) holds the dependencies' wheels: the extension installs from
// it alone because the test sets RELAVIUM_TEST_PIP_FIND_LINKS (never set by users).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CodeServer, pathWithoutServer } from './codeServer.mjs';
import { Workbench, launchChromium } from './workbench.mjs';

const { values: options } = parseArgs({
  options: {
    cache: { type: 'string' },
    vsix: { type: 'string' },
    artifacts: { type: 'string' },
    wheelhouse: { type: 'string' },
    'keep-temp': { type: 'boolean', default: false },
  },
});
for (const required of ['cache', 'vsix', 'artifacts', 'wheelhouse']) {
  if (options[required] === undefined) {
    throw new Error(`--${required} is required`);
  }
}
const VERSION = JSON.parse(
  readFileSync(new URL('../../../vscode-client/package.json', import.meta.url), 'utf8'),
).version;

const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'relavium-install-e2e-')));
const workspace = path.join(root, 'workspace');
const relaviumHome = path.join(root, 'relavium-home');
const settings = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.ignoreRecommendations': true,
  'security.workspace.trust.enabled': false,
  'window.restoreWindows': 'none',
  'chat.disableAIFeatures': true,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

// A local OpenAI-compatible server that lists one model (the setup's check asks it).
const modelServer = createServer((request, response) => {
  response.writeHead(request.url === '/v1/models' ? 200 : 404, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ object: 'list', data: [{ id: 'coder-7b', object: 'model' }] }));
});

const serverEnv = {
  PATH: pathWithoutServer(),
  RELAVIUM_HOME: relaviumHome,
  RELAVIUM_DB_KEY: randomBytes(32).toString('hex'),
  RELAVIUM_TEST_PIP_FIND_LINKS: options.wheelhouse,
};
let codeServer;
let browser;
let workbench;
let storage;

before(async () => {
  mkdirSync(workspace, { recursive: true });
  writeFileSync(path.join(workspace, 'app.py'), 'print("hello")\n');
  await new Promise((resolve) => modelServer.listen(0, '127.0.0.1', resolve));
  codeServer = new CodeServer({ cache: options.cache, root, settings });
  codeServer.installExtension(path.resolve(options.vsix));
  storage = path.join(codeServer.dataDir, 'User', 'globalStorage', 'relavium.relavium');
  const url = await codeServer.start(workspace, serverEnv);
  browser = await launchChromium(options.cache);
  workbench = new Workbench(
    await browser.newPage({ viewport: { width: 1400, height: 900 } }),
    options.artifacts,
  );
  await workbench.open(url);
});

after(async () => {
  modelServer.close();
  await browser?.close();
  await codeServer?.stop();
  if (!options['keep-temp']) {
    rmSync(root, { recursive: true, force: true });
  }
});

function step(name, body) {
  it(name, async () => {
    try {
      await body();
    } catch (error) {
      const slug = name
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .slice(0, 60);
      await workbench?.screenshot(`install-failed-${slug}`).catch(() => undefined);
      throw error;
    }
  });
}

/** A notification toast holding `text`, and a click on its button `label`. */
async function clickNotificationButton(text, label, timeout = 60_000) {
  const toast = workbench.page.locator('.notification-toast', { hasText: text }).last();
  await toast.waitFor({ timeout });
  await toast.locator('.monaco-button', { hasText: label }).first().click();
}

function quickInput() {
  return workbench.page.locator('.quick-input-widget input');
}

describe('VS Code: a fresh install gets its server by itself', () => {
  step('offers to install the server when none is found, and the chat banner says so', async () => {
    await workbench.openRelaviumView();
    const chat = workbench.chat();
    await chat.locator('.banner button:has-text("Install…")').waitFor({ timeout: 60_000 });
    assert.equal(await chat.locator('.banner button:has-text("Choose executable…")').isVisible(), true);
    assert.equal(await chat.locator('.banner button:has-text("Show log")').isVisible(), true);
    assert.equal(await chat.locator('.picker').first().isDisabled(), true, 'no pickers without a server');
    assert.match((await chat.locator('.banner-text').textContent()) ?? '', /relavium-lsp is not installed/);
    await workbench.page
      .locator('.notification-toast', { hasText: 'Relavium needs its server' })
      .waitFor({ timeout: 30_000 });
    await workbench.screenshot('install-01-offer');
  });

  step('installs the bundled server into global storage and starts it', async () => {
    await clickNotificationButton('Relavium needs its server', 'Install the Relavium server');
    const chat = workbench.chat();
    await chat.locator('.banner').waitFor({ state: 'hidden', timeout: 600_000 });
    await workbench.screenshot('install-02-installed');
    const executable = path.join(storage, 'server', VERSION, 'venv', 'bin', 'relavium-lsp');
    assert.ok(existsSync(executable), `${executable} exists`);
    assert.equal(
      JSON.parse(readFileSync(path.join(storage, 'server', VERSION, 'installed.json'), 'utf8')).version,
      VERSION,
    );
    assert.deepEqual(readdirSync(workspace), ['app.py'], 'nothing lands in the repository');
    const userSettings = JSON.parse(
      readFileSync(path.join(codeServer.dataDir, 'User', 'settings.json'), 'utf8'),
    );
    assert.deepEqual(userSettings, settings, 'nor in the settings');
  });

  step('chats on the offline model, whose answer points at Set Up a Model', async () => {
    const chat = workbench.chat();
    await chat.locator('.offline-notice button:has-text("Set Up a Model")').waitFor({ timeout: 60_000 });
    const input = chat.locator('.composer-input');
    await input.fill('How do I set up a provider?');
    await input.press('Enter');
    const answer = chat.locator('.message.assistant .markdown', { hasText: 'Relavium: Set Up a Model' });
    await answer.waitFor({ timeout: 120_000 });
    assert.match(await answer.innerText(), /:RelaviumSetup/);
    await workbench.screenshot('install-03-offline-answer');
  });

  step('sets up a model against a local OpenAI-compatible server', async () => {
    await workbench.runCommand('Relavium: Set Up a Model');
    // The picker is up once its first (hosted) provider shows.
    await workbench.page
      .locator('.quick-input-list .monaco-list-row', { hasText: 'OpenAI' })
      .first()
      .waitFor({ timeout: 30_000 });
    await quickInput().fill('llama.cpp');
    // The list is virtual: the row exists once the filter brought it into view.
    await workbench.page
      .locator('.quick-input-list .monaco-list-row', { hasText: 'llama.cpp server' })
      .first()
      .waitFor({ timeout: 30_000 });
    await workbench.page.keyboard.press('Enter');
    await workbench.page.locator('.quick-input-widget', { hasText: 'Model of llama.cpp server' }).waitFor();
    await quickInput().fill('coder-7b');
    await workbench.page.keyboard.press('Enter');
    await workbench.page
      .locator('.quick-input-widget', { hasText: 'Where llama.cpp server listens' })
      .waitFor();
    await quickInput().fill(`http://127.0.0.1:${modelServer.address().port}/v1`);
    await workbench.page.keyboard.press('Enter');
    await workbench.page
      .locator('.quick-input-widget', { hasText: 'API key for llama.cpp server' })
      .waitFor();
    assert.equal(await quickInput().getAttribute('type'), 'password', 'the key is typed hidden');
    await workbench.page.keyboard.press('Enter');
    const done = workbench.page.locator('.notification-toast', {
      hasText: 'new chats use llamacpp/coder-7b',
    });
    await done.waitFor({ timeout: 60_000 });
    assert.match(
      await done.innerText(),
      /✓ llama\.cpp server: .* answers with 1 model\(s\); serves coder-7b/,
    );
    await workbench.screenshot('install-04-model-set-up');
    const config = readFileSync(path.join(relaviumHome, 'config.toml'), 'utf8');
    assert.match(config, /default_model = "llamacpp\/coder-7b"/);
    await workbench.chat().locator('.offline-notice').waitFor({ state: 'hidden', timeout: 30_000 });
  });

  step('refuses an old server and offers the matching install', async () => {
    // The user points the setting at an old server (the window starts again with it).
    const oldServer = path.join(path.dirname(fileURLToPath(import.meta.url)), 'oldServer.mjs');
    await codeServer.stop();
    writeFileSync(
      path.join(codeServer.dataDir, 'User', 'settings.json'),
      JSON.stringify({ ...settings, 'relavium.server.command': oldServer }, null, 2),
    );
    await workbench.open(await codeServer.start(workspace, serverEnv));
    await workbench.openRelaviumView();
    const offer = workbench.page.locator('.notification-toast', { hasText: 'does not match this extension' });
    await offer.waitFor({ timeout: 60_000 });
    assert.match(await offer.innerText(), /version 0\.0\.1, protocol none/);
    await offer.locator('.monaco-button', { hasText: 'Install the matching server' }).waitFor();
    const banner = workbench.chat().locator('.banner-text');
    await banner.filter({ hasText: 'does not match this extension' }).waitFor({ timeout: 30_000 });
    await workbench.screenshot('install-05-mismatch');
  });
});
