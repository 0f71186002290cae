// End-to-end test of the Relavium extension in a real VS Code (code-server + headless
// Debian Chromium). Run through run.sh, which installs the cached dependencies and packages
// the extension first.
//
//   node e2e.mjs --cache DIR --vsix FILE --artifacts DIR [--smoke] [--server-command PATH]
//
// --smoke: no language server; checks the workbench, the view and the "server not running"
// state. Without it the full scenario runs against the real `relavium-lsp serve`.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseArgs } from 'node:util';
import { CodeServer, QUIET_WORKBENCH, pathWithoutServer } from './codeServer.mjs';
import { loadDemo } from './demo.mjs';
import { SecondWindow } from './secondWindow.mjs';
import { Workbench, launchChromium } from './workbench.mjs';

const { values: options } = parseArgs({
  options: {
    cache: { type: 'string' },
    vsix: { type: 'string' },
    artifacts: { type: 'string' },
    smoke: { type: 'boolean', default: false },
    'server-command': { type: 'string' },
    'keep-temp': { type: 'boolean', default: false },
    // Where the light and dark screenshots of the chat go (the README links to them).
    screenshots: { type: 'string' },
  },
});
for (const required of ['cache', 'vsix', 'artifacts']) {
  if (options[required] === undefined) {
    throw new Error(`--${required} is required`);
  }
}

const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'relavium-e2e-')));
const workspace = path.join(root, 'workspace');
const settings = {
  ...QUIET_WORKBENCH,
  // In the user settings, although code-server's window is a remote one: the setting is
  // window-scoped, so VS Code honours it there (issue 33; machine-scoped, it was dropped).
  'relavium.server.command': options.smoke ? '' : (options['server-command'] ?? ''),
};

const serverCommand = options['server-command'];
const demo = options.smoke ? undefined : loadDemo(path.join(path.dirname(serverCommand ?? ''), 'python'));

let codeServer;
let browser;
let workbench;
// The test-only diagnostic the extension publishes (RELAVIUM_TEST_DIAGNOSTIC), which
// editor_diagnostics must answer from VS Code.
const LINT_MESSAGE = 'relavium-e2e: suspicious greeting';
// The server's environment: a second server process given the same one shares the history.
const serverEnv = {
  RELAVIUM_HOME: path.join(root, 'relavium-home'),
  RELAVIUM_DB_KEY: randomBytes(32).toString('hex'),
  ...(demo === undefined
    ? {}
    : {
        RELAVIUM_TEST_DIAGNOSTIC: JSON.stringify({
          path: path.join(workspace, demo.sourcePath),
          line: 1,
          message: LINT_MESSAGE,
        }),
      }),
};

/** One OpenAI-style streamed completion (server-sent events). */
function completionEvents(delta, finishReason) {
  const chunk = (d, finish) => ({
    id: 'chatcmpl-e2e',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'loopback-lint',
    choices: [{ index: 0, delta: d, finish_reason: finish }],
  });
  return [chunk({ role: 'assistant', content: '' }, null), chunk(delta, null), chunk({}, finishReason)]
    .map((event) => `data: ${JSON.stringify(event)}\n\n`)
    .join('') + 'data: [DONE]\n\n';
}

// A loopback OpenAI-compatible model: it asks editor_diagnostics first, then answers with
// what the tool returned. The requests it saw are kept for the assertions. Asked for the
// session notes (NOTES_PROMPT) it writes two files in a row, then says so.
const modelRequests = [];
const NOTES_PROMPT = 'Write the two session notes.';
const NOTES = [
  { path: 'always-first.txt', content: 'first session note\n' },
  { path: 'always-second.txt', content: 'second session note\n' },
];

/** The notes script's next answer: one write_file per note, then a closing line. */
function notesEvents(messages) {
  const lastUser = messages.findLastIndex((message) => message.role === 'user');
  const written = messages.slice(lastUser + 1).filter((message) => message.role === 'tool').length;
  if (written >= NOTES.length) {
    return completionEvents({ content: 'Both notes are written.' }, 'stop');
  }
  const call = {
    index: 0,
    id: `call-note-${written + 1}`,
    type: 'function',
    function: { name: 'write_file', arguments: JSON.stringify(NOTES[written]) },
  };
  return completionEvents({ tool_calls: [call] }, 'tool_calls');
}

const loopbackModel = createServer((request, response) => {
  let body = '';
  request.on('data', (piece) => (body += piece));
  request.on('end', () => {
    if (request.method !== 'POST') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ object: 'list', data: [] }));
      return;
    }
    const json = JSON.parse(body);
    modelRequests.push(json);
    const last = json.messages[json.messages.length - 1];
    const lastUser = json.messages.findLast((message) => message.role === 'user');
    const events = JSON.stringify(lastUser?.content ?? '').includes(NOTES_PROMPT)
      ? notesEvents(json.messages)
      : last.role === 'tool'
        ? completionEvents({ content: `The editor reports: ${last.content}` }, 'stop')
        : completionEvents(
            {
              tool_calls: [
                {
                  index: 0,
                  id: 'call-diagnostics',
                  type: 'function',
                  function: { name: 'editor_diagnostics', arguments: JSON.stringify({ path: demo.sourcePath }) },
                },
              ],
            },
            'tool_calls',
          );
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.end(events);
  });
});

before(async () => {
  mkdirSync(workspace, { recursive: true });
  const files = { ...(demo?.files ?? { 'app.py': 'print("hello")\n' }) };
  if (demo !== undefined) {
    // Two workspace agents: the agent picker has choices, and the offline model gets a second
    // name, so the model picker can switch and the answer shows which model replied.
    const agent = (id, model, tools) =>
      `id: ${id}\nname: ${id}\ndescription: ${id} agent\nmodel: ${model}\nprovider: offline\n` +
      `system_prompt: "You help."\ntools: [${tools}]\n`;
    files['.relavium/agents/reviewer.agent.yaml'] = agent('reviewer', 'relavium-offline-alt', '');
    files['.relavium/agents/writer.agent.yaml'] = agent('writer', 'relavium-offline-demo', 'read_file, write_file');
    // A third agent names the loopback model, so the model picker offers it.
    files['.relavium/agents/linter.agent.yaml'] = agent('linter', 'loopback-lint', 'editor_diagnostics').replace(
      'provider: offline',
      'provider: loop',
    );
    await new Promise((resolve) => loopbackModel.listen(0, '127.0.0.1', resolve));
    mkdirSync(serverEnv.RELAVIUM_HOME, { recursive: true });
    writeFileSync(
      path.join(serverEnv.RELAVIUM_HOME, 'config.toml'),
      `[providers.loop]\nkind = "openai"\nbase_url = "http://127.0.0.1:${loopbackModel.address().port}/v1"\n` +
        'allow_local_endpoint = true\ntimeout_s = 30\n',
    );
  }
  for (const [relative, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(workspace, relative)), {
      recursive: true,
    });
    writeFileSync(path.join(workspace, relative), content);
  }
  codeServer = new CodeServer({ cache: options.cache, root, settings });
  codeServer.installExtension(path.resolve(options.vsix));
  const env = options.smoke ? { PATH: pathWithoutServer() } : serverEnv;
  const url = await codeServer.start(workspace, env);
  browser = await launchChromium(options.cache);
  const page = await browser.newPage({
    viewport: { width: 1400, height: 900 },
  });
  workbench = new Workbench(page, options.artifacts);
  try {
    await workbench.open(url);
  } catch (error) {
    await workbench.screenshot('failed-to-open');
    throw error;
  }
});

after(async () => {
  loopbackModel.close();
  await browser?.close();
  await codeServer?.stop();
  if (!options['keep-temp']) {
    rmSync(root, { recursive: true, force: true });
  }
});

/** Re-check a UI condition until it holds (Playwright's waitFor cannot watch input values). */
async function until(condition, what, timeout = 30_000) {
  const deadline = Date.now() + timeout;
  while (!(await condition())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Switch the colour theme through the palette, as a person does. */
async function setTheme(theme) {
  // Not runCommand: its fuzzy match may pick "Browse Color Themes in Marketplace".
  await workbench.page.keyboard.press('F1');
  const palette = workbench.page.locator('.quick-input-widget input');
  await palette.waitFor();
  await palette.fill('>Preferences: Color Theme');
  await workbench.page
    .locator('.quick-input-widget .monaco-list-row[aria-label^="Preferences: Color Theme"]')
    .first()
    .click();
  await workbench.page.locator('.quick-input-widget input').fill(theme);
  const row = workbench.page.locator('.quick-input-widget .monaco-list-row', { hasText: theme });
  await row.first().waitFor({ timeout: 30_000 });
  await row.first().click();
  await workbench.page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
}

/**
 * The README's screenshots of the chat: light, high contrast, then dark (the default). The
 * window keeps its width (the side bar's default ~300 px); it is made as tall as it takes for
 * the last turn's changed-files summary and the approval waiting now to be in one picture.
 */
async function themeScreenshots() {
  const chat = workbench.chat();
  const viewport = workbench.page.viewportSize();
  const summary = await chat.locator('.changes-card').last().boundingBox();
  const buttons = await chat.locator('.approval-buttons').last().boundingBox();
  const transcript = await chat.locator('.transcript').boundingBox();
  const needed = buttons.y + buttons.height - summary.y + 24;
  if (needed > transcript.height) {
    await workbench.page.setViewportSize({ width: viewport.width, height: Math.ceil(viewport.height + needed - transcript.height) });
  }
  try {
    for (const [theme, name] of [
      ['Light Modern', 'vscode-chat-light'],
      ['Dark High Contrast', 'vscode-chat-high-contrast'],
      ['Dark Modern', 'vscode-chat-dark'],
    ]) {
      await setTheme(theme);
      const file = await workbench.screenshot(name);
      if (options.screenshots !== undefined) {
        mkdirSync(options.screenshots, { recursive: true });
        copyFileSync(file, path.join(options.screenshots, `${name}.png`));
      }
    }
  } finally {
    await workbench.page.setViewportSize(viewport);
  }
}

/** The conversation gets at least 85 % of the chat view's height (issue 37). */
async function assertConversationHeight(chat) {
  const transcript = await chat.locator('.transcript').boundingBox();
  const app = await chat.locator('.app').boundingBox();
  const share = transcript.height / app.height;
  assert.ok(share >= 0.85, `the conversation has ${(share * 100).toFixed(1)} % of the view's height`);
}

/** The running `relavium-lsp serve` of this test's window (found by its command and home). */
function windowServerPids() {
  const home = `RELAVIUM_HOME=${serverEnv.RELAVIUM_HOME}`;
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!argv.includes(serverCommand) || !argv.includes('serve')) continue;
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(home)) {
        pids.push(Number(entry));
      }
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** A test step that leaves a screenshot behind when it fails. */
function step(name, body) {
  it(name, async () => {
    try {
      await body();
    } catch (error) {
      const slug = name
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .slice(0, 60);
      await workbench?.screenshot(`failed-${slug}`).catch(() => undefined);
      throw error;
    }
  });
}

describe('VS Code: Relavium chat view', () => {
  step('loads the workbench with the extension installed', async () => {
    await workbench.screenshot('01-workbench');
    const installed = codeServer.logLines.join('\n');
    assert.doesNotMatch(installed, /Error: .*relavium/i);
  });

  step('opens the Relavium view from the activity bar and renders the chat webview', async () => {
    await workbench.openRelaviumView();
    const chat = workbench.chat();
    await chat.locator('.composer-input').waitFor({ timeout: 60_000 });
    // The chat's title lives in the view's title bar, not in the webview.
    await workbench.viewTitle('New chat');
    await workbench.screenshot('02-chat-view');
  });

  if (options.smoke) {
    step('says why when the server is not running, and offers to get one', async () => {
      const chat = workbench.chat();
      const banner = chat.locator('.banner');
      await banner.locator('text=/is not installed/').waitFor({ timeout: 30_000 });
      const text = await banner.textContent();
      assert.match(text ?? '', /Relavium server not running — relavium-lsp is not installed/);
      for (const label of ['Install…', 'Choose executable…', 'Show log']) {
        assert.equal(await chat.locator(`.banner button:has-text("${label}")`).isVisible(), true, label);
      }
      assert.equal(await chat.locator('.composer-input').isDisabled(), true);
      assert.equal(await chat.locator('.picker').first().isDisabled(), true);
      await workbench.screenshot('03-server-not-running');
    });
  }

  if (!options.smoke) {
    step('attaches the selection as a context chip with Ask About Selection', async () => {
      await workbench.openFile(demo.selection.path);
      await workbench.selectLines(demo.selection.startLine, demo.selection.endLine);
      const chat = workbench.chat();
      await chat.locator('.banner').waitFor({ state: 'hidden', timeout: 60_000 });
      await workbench.runCommand('Relavium: Ask About Selection');
      const label = `${demo.selection.path}:${demo.selection.startLine}-${demo.selection.endLine}`;
      await chat.locator('.composer .chip:not(.implicit)', { hasText: label }).waitFor({ timeout: 30_000 });
      assert.equal(await chat.locator('.composer-input').inputValue(), '', 'nothing is pasted');
      await workbench.screenshot('03-selection-chip');
    });

    step('sends a question about a selection and streams the answer', async () => {
      const chat = workbench.chat();
      const input = chat.locator('.composer-input');
      await input.fill(demo.askAboutSelection);
      await input.press('Enter');
      const sent = chat.locator('.message.user', { hasText: demo.askAboutSelection });
      await sent.waitFor();
      await sent.locator('.chip', { hasText: demo.selection.path }).waitFor();
      assert.equal(await chat.locator('.composer .chip:not(.implicit)').count(), 0, 'the chip went with the message');
      const answer = chat.locator('.message.assistant .markdown', {
        hasText: 'builds a greeting',
      });
      await answer.waitFor({ timeout: 60_000 });
      await chat.locator('.composer:not(.locked) .composer-button:has-text("Send")').waitFor({ timeout: 60_000 });
      await workbench.screenshot('04-streamed-answer');
      assert.match(await answer.innerText(), /greet/);
    });

    step('shows the diff before writing, and accepting it in the diff editor changes the file', async () => {
      const chat = workbench.chat();
      const input = chat.locator('.composer-input');
      await input.fill(demo.askForChange);
      await input.press('Enter');
      const approve = chat.locator('.approval-buttons button:has-text("Approve")');
      await approve.waitFor({ timeout: 60_000 });
      assert.match(
        await chat.locator('.approval-what').last().innerText(),
        new RegExp(demo.sourcePath.replace('.', '\\.')),
      );
      // The card shows the unified diff; the native diff editor shows the proposed text.
      const diff = chat.locator('.approval-diff').last();
      await diff.waitFor();
      assert.match(await diff.innerText(), /\+def greet\(name: str\) -> str:/);
      await workbench.screenshot('05-approval-requested');
      await chat.locator('.approval button:has-text("Open diff")').click();
      const diffTab = workbench.page.locator('.tabs-container .tab[aria-label*="proposed by Relavium"]');
      await diffTab.first().waitFor({ timeout: 30_000 });
      await workbench.screenshot('05b-diff-editor');
      // The diff editor's title bar says Accept Change / Reject Change in words.
      await workbench.page.locator('.editor-actions .action-label', { hasText: 'Accept Change' }).first().click();
      await diffTab.first().waitFor({ state: 'detached', timeout: 30_000 });
      await workbench.waitForEditorText('def greet(name: str) -> str:');
      await chat
        .locator('.message.assistant .markdown', { hasText: 'now takes' })
        .waitFor({ timeout: 60_000 });
      await workbench.screenshot('06-file-changed');
      assert.match(await workbench.editorText(), /Return a friendly greeting/);
    });

    step('a write the user typed over meanwhile is refused, and its card shows it failed', async () => {
      const chat = workbench.chat();
      const input = chat.locator('.composer-input');
      // Undo the accepted edit (one undo step), so the agent's replacement applies again.
      await workbench.page
        .locator('.editor-group-container.active .monaco-editor .view-lines')
        .first()
        .click();
      await workbench.page.keyboard.press('Control+Z');
      await until(async () => !/str\) -> str/.test(await workbench.editorText()), 'the undone edit');
      await input.fill(demo.askForChange);
      await input.press('Enter');
      const approve = chat.locator('.approval-buttons button:has-text("Approve")');
      await approve.waitFor({ timeout: 60_000 });
      // A real agent turn on screen: the last turn's changed-files summary, the plan, the
      // readable tool lines and a diff awaiting approval — in every kind of theme.
      await chat.locator('.changes-card', { hasText: '1 file changed' }).waitFor({ timeout: 30_000 });
      await assertConversationHeight(chat);
      await themeScreenshots();
      // The agent has read the file; the user edits it before answering the prompt.
      await workbench.typeAtEndOfEditor('# my own note');
      await workbench.waitForEditorText('# my own note');
      await approve.click();
      const failed = chat.locator('.tool-card.state-failed', { hasText: 'Edit greeting.py' });
      await failed.waitFor({ timeout: 60_000 });
      assert.match(
        (await failed.locator('.tool-output').textContent()) ?? '',
        /changed in the editor after the agent read it/,
      );
      await chat.locator('.composer-button:has-text("Send")').waitFor({ timeout: 60_000 });
      await workbench.screenshot('07-refused-write');
      assert.match(await workbench.editorText(), /# my own note/);
      await workbench.saveActiveEditor();
    });

    step('Esc during an approval stops the turn: the message stays, marked, and comes back with its chip', async () => {
      await workbench.openFile(demo.selection.path);
      await workbench.selectLines(demo.selection.startLine, demo.selection.endLine);
      await workbench.runCommand('Relavium: Ask About Selection');
      const chat = workbench.chat();
      const label = `${demo.selection.path}:${demo.selection.startLine}-${demo.selection.endLine}`;
      await chat.locator('.composer .chip:not(.implicit)', { hasText: label }).waitFor({ timeout: 30_000 });
      const input = chat.locator('.composer-input');
      await input.fill(demo.askForChange);
      await input.press('Enter');
      const card = chat.locator('.tool-card', { hasText: 'Edit greeting.py' }).last();
      await card.locator('.approval-buttons button:has-text("Approve")').waitFor({ timeout: 60_000 });
      await input.focus();
      await input.press('Escape');
      await chat.locator('.message.user.outcome-cancelled', { hasText: demo.askForChange }).last().waitFor({ timeout: 30_000 });
      await card.locator('.approval-state', { hasText: 'Cancelled' }).waitFor({ timeout: 30_000 });
      assert.equal(await card.locator('.approval-state', { hasText: 'Approved' }).count(), 0, 'nobody approved it');
      await until(async () => (await input.inputValue()) === demo.askForChange, 'the message back in the composer');
      await chat.locator('.composer .chip:not(.implicit)', { hasText: label }).waitFor({ timeout: 30_000 });
      await workbench.screenshot('07b-aborted-during-approval');
      // Clean up for the next steps: an empty composer without the chip.
      await input.fill('');
      await chat.locator('.composer .chip:not(.implicit) .chip-remove').click();
      assert.doesNotMatch(await workbench.editorText(), /str\) -> str/, 'nothing was written');
    });

    step('the server dies during an approval: the turn says so, and Retry works after the restart', async () => {
      const chat = workbench.chat();
      const input = chat.locator('.composer-input');
      await input.fill(demo.askForChange);
      await input.press('Enter');
      const card = chat.locator('.tool-card', { hasText: 'Edit greeting.py' }).last();
      await card.locator('.approval-buttons button:has-text("Approve")').waitFor({ timeout: 60_000 });
      const pids = windowServerPids();
      assert.equal(pids.length, 1, `one server of this window runs (found ${pids.join(', ')})`);
      process.kill(pids[0], 'SIGKILL');
      const stopped = chat.locator('.notice', { hasText: 'The server restarted — this turn was stopped' }).last();
      await stopped.waitFor({ timeout: 30_000 });
      // The restarted server's transcript says the same; the composer takes messages again.
      await chat.locator('.banner').waitFor({ state: 'hidden', timeout: 60_000 });
      await chat.locator('.composer:not(.locked)').waitFor({ timeout: 30_000 });
      const cut = chat.locator('.tool-card', { hasText: 'Edit greeting.py' }).last();
      await cut.locator('.approval-state', { hasText: 'Cancelled' }).waitFor({ timeout: 30_000 });
      await workbench.screenshot('07c-server-restarted');
      await stopped.locator('button:has-text("Retry")').click();
      const retried = chat.locator('.tool-card', { hasText: 'Edit greeting.py' }).last();
      const reject = retried.locator('.approval-buttons button:has-text("Reject")');
      await reject.waitFor({ timeout: 60_000 });
      await reject.click();
      // A change the user rejects is their decision: one neutral line, nothing red.
      await retried.locator('.approval-state', { hasText: 'You rejected this change' }).waitFor({ timeout: 30_000 });
      assert.equal(await retried.evaluate((node) => node.classList.contains('tool-rejected')), true);
      await chat.locator('.composer:not(.locked)').waitFor({ timeout: 60_000 });
      assert.doesNotMatch(await workbench.editorText(), /str\) -> str/, 'nothing was written');
    });

    step('a slash command exports the chat into an editor named after the session', async () => {
      const chat = workbench.chat();
      const input = chat.locator('.composer-input');
      await input.fill('');
      await input.pressSequentially('/exp');
      await chat.locator('.completions .completion', { hasText: '/export' }).waitFor();
      await workbench.screenshot('08-slash-completion');
      await input.press('Enter');
      await until(async () => (await input.inputValue()) === '/export', 'the completed command');
      await input.press('Enter');
      const name = 'what-does-the-selected-function-do.relavium.yaml';
      await workbench.page.locator(`.tabs-container .tab[aria-label*="${name}"]`).first().waitFor({ timeout: 30_000 });
      await workbench.waitForEditorText('relaviumExport');
      await workbench.screenshot('09-exported-workflow');
      const yaml = await workbench.editorText();
      assert.match(yaml, /from: input\s+to: turn-1/);
      assert.match(yaml, /id: what-does-the-selected-function-do/);
      assert.equal(await chat.locator('.message.user', { hasText: '/export' }).count(), 0, 'not sent as a message');
    });

    step('picks another model from the header; the next answer comes from it', async () => {
      const chat = workbench.chat();
      await chat.locator('.picker-model').click();
      const row = workbench.page.locator('.quick-input-widget .quick-input-list .monaco-list-row', {
        hasText: 'relavium-offline-alt',
      });
      await row.first().waitFor({ timeout: 30_000 });
      await workbench.screenshot('10-model-picker');
      await row.first().click();
      await chat.locator('.notice', { hasText: 'Model switched to relavium-offline-alt' }).waitFor({ timeout: 30_000 });
      const input = chat.locator('.composer-input');
      await input.fill('Which model is this?');
      await input.press('Enter');
      await chat
        .locator('.message.assistant .model-tag', { hasText: 'relavium-offline-alt' })
        .last()
        .waitFor({ timeout: 60_000 });
      await chat.locator('.composer-button:has-text("Send")').waitFor({ timeout: 60_000 });
      await chat.locator('.picker-model', { hasText: 'offline-alt' }).waitFor();
    });

    step('Apply always names its target, and warns when the languages differ', async () => {
      // Lines of a Python file are still selected from earlier: Apply asks before replacing them.
      await workbench.openFile(demo.selection.path);
      await workbench.selectLines(demo.selection.startLine, demo.selection.endLine);
      const chat = workbench.chat();
      const block = chat.locator('.message.assistant').last().locator('.code-block');
      await block.locator('.code-text span[class^="hljs-"]').first().waitFor({ timeout: 30_000 });
      await block.locator('button:has-text("Apply")').click();
      const rows = workbench.page.locator('.quick-input-widget .monaco-list-row');
      const replace = rows.filter({ hasText: `Replace lines ${demo.selection.startLine}–${demo.selection.endLine} of ${demo.selection.path}` });
      await replace.first().waitFor({ timeout: 30_000 });
      assert.match(await replace.first().innerText(), /The block is toml; src\/greeting\.py is python/);
      await workbench.screenshot('11a-apply-target');
      await workbench.page.keyboard.press('Escape');
      await workbench.page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
      assert.doesNotMatch(await workbench.editorText(), /default_model/, 'nothing applied unasked');
      // Rejecting an Apply is the user's decision: one neutral card, no red, no warning toast.
      await block.locator('button:has-text("Apply")').click();
      await rows.filter({ hasText: 'Write a new file' }).first().click();
      const pathInput = workbench.page.locator('.quick-input-widget input');
      await pathInput.fill('rejected.toml');
      await workbench.page.keyboard.press('Enter');
      const card = chat.locator('.tool-card', { hasText: 'rejected.toml' });
      await card.locator('.approval-buttons button:has-text("Reject")').click();
      await card.locator('.approval-state', { hasText: 'You rejected this change' }).waitFor({ timeout: 30_000 });
      await chat.locator('.composer:not(.locked)').waitFor({ timeout: 30_000 });
      assert.equal(await card.count(), 1, 'one card');
      assert.equal(await chat.locator('.tool-card.state-failed:not(.tool-rejected)', { hasText: 'rejected.toml' }).count(), 0);
      assert.equal(await workbench.page.locator('.notifications-toasts', { hasText: 'not applied' }).count(), 0);
      assert.equal(existsSync(path.join(workspace, 'rejected.toml')), false);
    });

    step('applies a highlighted code block through the approval, as an agent edit', async () => {
      await workbench.openFile('README.md');
      const chat = workbench.chat();
      const block = chat.locator('.message.assistant').last().locator('.code-block');
      await block.locator('.code-text span[class^="hljs-"]').first().waitFor({ timeout: 30_000 });
      await block.locator('button:has-text("Apply")').click();
      const newFile = workbench.page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Write a new file' });
      await newFile.first().waitFor({ timeout: 30_000 });
      await newFile.first().click();
      const pathInput = workbench.page.locator('.quick-input-widget input');
      await pathInput.waitFor();
      await pathInput.fill('relavium.toml');
      await workbench.page.keyboard.press('Enter');
      const approve = chat.locator('.approval-buttons button:has-text("Approve")');
      await approve.waitFor({ timeout: 60_000 });
      assert.match(await chat.locator('.approval-what').last().innerText(), /relavium\.toml/);
      await workbench.screenshot('11-apply-approval');
      await approve.click();
      const written = path.join(workspace, 'relavium.toml');
      await until(() => existsSync(written) && readFileSync(written, 'utf8').includes('default_model'), 'the applied file');
      await chat.locator('.tool-card.state-succeeded', { hasText: 'Wrote relavium.toml' }).last().waitFor({ timeout: 30_000 });
      await chat.locator('.composer:not(.locked)').waitFor({ timeout: 30_000 });
    });

    step('@ attaches a workspace file as a chip', async () => {
      const chat = workbench.chat();
      const input = chat.locator('.composer-input');
      await input.fill('');
      await input.pressSequentially('Summarise @READ');
      await chat.locator('.completions .completion', { hasText: 'README.md' }).first().waitFor({ timeout: 30_000 });
      await input.press('Enter');
      await chat.locator('.composer .chip:not(.implicit)', { hasText: 'README.md' }).waitFor();
      assert.equal(await input.inputValue(), 'Summarise ');
      await workbench.screenshot('12-file-chip');
      await input.press('Enter');
      await chat.locator('.message.user', { hasText: 'Summarise' }).last().locator('.chip', { hasText: 'README.md' }).waitFor();
      await chat.locator('.composer-button:has-text("Send")').waitFor({ timeout: 60_000 });
    });

    step('rebuilds the transcript after a window reload', async () => {
      await workbench.page.reload();
      await workbench.waitForWorkbench();
      const chat = workbench.chat();
      await workbench.openRelaviumView();
      await chat.locator('.message.user', { hasText: demo.askAboutSelection }).waitFor({ timeout: 60_000 });
      await chat
        .locator('.message.assistant .markdown', {
          hasText: 'builds a greeting',
        })
        .waitFor();
      const card = chat.locator('.tool-card', { hasText: 'Edited greeting.py' }).first();
      await card.waitFor();
      // The approval decision and the duration come back from the event log.
      try {
        await card.locator('.approval-state', { hasText: 'Approved' }).waitFor({ timeout: 30_000 });
      } catch (error) {
        console.log('tool cards after the reload:', await chat.locator('.tool-card').allInnerTexts());
        throw error;
      }
      await card.locator('.tool-timing').waitFor({ state: 'attached' });
      await chat.locator('.message.user .chip', { hasText: demo.selection.path }).first().waitFor();
      // The model picked before the reload is still the one the next turn uses.
      await chat.locator('.picker-model', { hasText: 'offline-alt' }).waitFor({ timeout: 30_000 });
      await workbench.screenshot('13-after-reload');
    });

    step('reconnects after two reloads in a row and answers again', async () => {
      // The second reload lands while the first window's extension host is still starting.
      await workbench.page.reload();
      await workbench.page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
      await workbench.page.reload();
      await workbench.waitForWorkbench();
      await workbench.openRelaviumView();
      const chat = workbench.chat();
      await chat.locator('.message.user', { hasText: demo.askAboutSelection }).waitFor({ timeout: 60_000 });
      await chat.locator('.banner').waitFor({ state: 'hidden', timeout: 60_000 });
      const input = chat.locator('.composer-input');
      await input.fill('Are you still there?');
      await input.press('Enter');
      await chat
        .locator('.message.assistant .markdown', { hasText: 'offline demo model' })
        .last()
        .waitFor({ timeout: 60_000 });
      await workbench.screenshot('14-after-two-reloads');
    });

    step('edits a sent message: the chat forks before it, the old version stays listed', async () => {
      const chat = workbench.chat();
      const sent = chat.locator('.message.user', { hasText: 'Are you still there?' }).last();
      await sent.hover();
      await sent.locator('button:has-text("Edit")').click();
      await chat.locator('.notice', { hasText: 'Forked before your message' }).waitFor({ timeout: 30_000 });
      const input = chat.locator('.composer-input');
      await until(async () => (await input.inputValue()) === 'Are you still there?', 'the message back in the composer');
      await input.fill('Are you there now?');
      await input.press('Enter');
      await chat.locator('.message.user', { hasText: 'Are you there now?' }).waitFor();
      await chat.locator('.composer-button:has-text("Send")').waitFor({ timeout: 60_000 });
      assert.equal(await chat.locator('.message.user', { hasText: 'Are you still there?' }).count(), 0);
      await workbench.screenshot('15-edited-in-fork');
    });

    step('finds the chat again through the Sessions panel search', async () => {
      const chat = workbench.chat();
      await workbench.viewAction('Show Chat History');
      const search = chat.locator('.sessions-search');
      await search.fill('docstring');
      const entry = chat.locator('.session-entry', { hasText: demo.askAboutSelection }).first();
      await entry.waitFor({ timeout: 30_000 });
      await workbench.screenshot('11-session-search');
      await search.fill('zebra-unicorn-never-said');
      await chat.locator('.sessions-status', { hasText: 'No sessions found.' }).waitFor();
      await search.fill('');
      await entry.locator('.session-open').waitFor();
      await entry.locator('.session-open').click();
      await chat.locator('.sessions').waitFor({ state: 'hidden' });
      await chat.locator('.message.user', { hasText: demo.askForChange }).first().waitFor();
    });

    step('shows a session another window (a second server process) created, by itself', async () => {
      const chat = workbench.chat();
      await workbench.viewAction('Show Chat History');
      await chat.locator('.session-entry', { hasText: demo.askAboutSelection }).first().waitFor({ timeout: 30_000 });
      const other = new SecondWindow(serverCommand, workspace, serverEnv);
      try {
        await other.open();
        const title = 'Started in another window';
        const started = await other.request('relavium/startSession', { title, source: 'cli' });
        // No click, no search: the panel re-lists on relavium/sessionsChanged.
        const entry = chat.locator('.session-entry', { hasText: title });
        await entry.waitFor({ timeout: 30_000 });
        await other.request('relavium/renameSession', {
          sessionId: started.sessionId,
          title: 'Renamed in another window',
        });
        await chat
          .locator('.session-entry', { hasText: 'Renamed in another window' })
          .waitFor({ timeout: 30_000 });
        await workbench.screenshot('12-session-from-another-window');
        await chat.locator('.sessions-search').press('Escape');
        await chat.locator('.sessions').waitFor({ state: 'hidden' });
      } finally {
        await other.close();
      }
    });

    step('editor_diagnostics is answered by VS Code with the problems it reports', async () => {
      const chat = workbench.chat();
      await chat.locator('.picker-model').click();
      const row = workbench.page.locator('.quick-input-widget .quick-input-list .monaco-list-row', {
        hasText: 'loopback-lint',
      });
      await row.first().waitFor({ timeout: 30_000 });
      await row.first().click();
      await chat.locator('.notice', { hasText: 'Model switched to loopback-lint' }).waitFor({ timeout: 30_000 });
      const input = chat.locator('.composer-input');
      await input.fill(`Any problems in ${demo.sourcePath}?`);
      await input.press('Enter');
      const card = chat.locator('.tool-card.state-succeeded', { hasText: 'Checked problems in greeting.py' }).last();
      await card.waitFor({ timeout: 60_000 });
      assert.match((await card.locator('.tool-output').textContent()) ?? '', new RegExp(LINT_MESSAGE));
      await chat
        .locator('.message.assistant .markdown', { hasText: 'The editor reports' })
        .last()
        .waitFor({ timeout: 60_000 });
      await workbench.screenshot('16-editor-diagnostics');
      const offered = modelRequests[0].tools.map((tool) => tool.function.name);
      assert.ok(offered.includes('editor_diagnostics'), 'declared: VS Code answers it');
      const toolMessage = modelRequests[1].messages.at(-1);
      assert.equal(toolMessage.role, 'tool');
      assert.match(toolMessage.content, new RegExp(`${demo.sourcePath.replace('.', '\\.')}:1:1: warning: ${LINT_MESSAGE}`));
    });

    step('edits the workspace memory as a file; a newer save from another window reaches the editor', async () => {
      await workbench.runCommand('Relavium: Edit Workspace Memory');
      await workbench.page
        .locator('.tabs-container .tab[aria-label*="Workspace Memory.md"]')
        .first()
        .waitFor({ timeout: 30_000 });
      await workbench.typeAtEndOfEditor('Build and test with make test.');
      await workbench.saveActiveEditor();
      const other = new SecondWindow(serverCommand, workspace, serverEnv);
      try {
        await other.open();
        const saved = await other.request('relavium/getWorkspaceMemory', { workingDir: workspace });
        // The offline model's automatic introspection passes (new_session) may have written
        // their notes first: the user's line is saved on top of whatever revision was open.
        assert.match(saved.text, /Build and test with make test\.\s*$/);
        assert.ok(saved.revision >= 1, `revision ${saved.revision}`);
        await other.request('relavium/setWorkspaceMemory', {
          workingDir: workspace,
          text: `${saved.text}\nSaved in another window.\n`,
          baseRevision: saved.revision,
        });
        // relavium/workspaceMemoryChanged → the unmodified editor reloads by itself.
        await workbench.waitForEditorText('Saved in another window.');
      } finally {
        await other.close();
      }
    });

    step('after "Always for this session" on a file change, the next edit shows its diff in the tool card', async () => {
      const chat = workbench.chat();
      const input = chat.locator('.composer-input');
      await input.fill(NOTES_PROMPT);
      await input.press('Enter');
      const first = chat.locator('.tool-card', { hasText: NOTES[0].path }).last();
      const always = first.locator('.approval-buttons button:has-text("Always")');
      await always.waitFor({ timeout: 60_000 });
      assert.match(await first.locator('.approval-diff').innerText(), /\+first session note/);
      await always.click();
      // No approval card for the second write: its tool card shows the change itself
      // (agent:tool_result.diff), open.
      const second = chat.locator('.tool-card.state-succeeded', { hasText: NOTES[1].path }).last();
      await second.waitFor({ timeout: 60_000 });
      assert.equal(await second.locator('.approval').count(), 0, 'approved by the session rule');
      const change = second.locator('details.tool-diff[open]');
      await change.waitFor({ timeout: 30_000 });
      assert.match(await change.locator('summary').innerText(), /Changes \(\+1 −0\)/);
      assert.match(await change.locator('.approval-diff').innerText(), /\+second session note/);
      await chat
        .locator('.message.assistant .markdown', { hasText: 'Both notes are written.' })
        .last()
        .waitFor({ timeout: 60_000 });
      await workbench.screenshot('17-always-then-diff');
      // The editor creates each file, then saves its text.
      for (const note of NOTES) {
        const file = path.join(workspace, note.path);
        await until(() => existsSync(file) && readFileSync(file, 'utf8') === note.content, `${note.path} on disk`);
      }
    });

    step('reviews the turn\'s changes: keeps one file from its diff editor, undoes the other', async () => {
      const chat = workbench.chat();
      const review = chat.locator('.changes-card', { hasText: '2 files changed' }).last();
      await review.waitFor({ timeout: 30_000 });
      await review.locator('.changes-open', { hasText: NOTES[0].path }).click();
      const tab = workbench.page.locator('.tabs-container .tab[aria-label*="before the turn"]');
      await tab.first().waitFor({ timeout: 30_000 });
      // The diff editor's title bar says what its buttons do: Keep Change / Undo Change.
      const keep = workbench.page.locator('.editor-actions .action-label', { hasText: 'Keep Change' }).first();
      await keep.waitFor({ timeout: 30_000 });
      await workbench.screenshot('18-review-diff');
      await keep.click();
      await review.locator('.changes-file.review-kept', { hasText: NOTES[0].path }).waitFor({ timeout: 30_000 });
      await review.locator('.changes-file', { hasText: NOTES[1].path }).locator('button[title^="Undo"]').click();
      await review.locator('.changes-file.review-undone', { hasText: NOTES[1].path }).waitFor({ timeout: 30_000 });
      await workbench.screenshot('19-reviewed');
      const kept = path.join(workspace, NOTES[0].path);
      assert.equal(readFileSync(kept, 'utf8'), NOTES[0].content, 'the kept file is as the agent left it');
      await until(() => !existsSync(path.join(workspace, NOTES[1].path)), 'the undone file is gone (the turn created it)');
    });

    step('exports the chat as a readable Markdown transcript with the changes summary', async () => {
      await workbench.runCommand('Relavium: Export Chat as Markdown');
      await workbench.page.locator('.tabs-container .tab[aria-label*=".md"]').first().waitFor({ timeout: 30_000 });
      await workbench.waitForEditorText('### You');
      // The newest exchange is at the end (the editor renders only the lines in view).
      await workbench.page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
      await workbench.page.keyboard.press('Control+End');
      await workbench.waitForEditorText('files changed');
      const text = await workbench.editorText();
      // The undone file no longer differs from before the turn: it counts +0 −0.
      assert.match(text, /2 files changed \+1 −0/);
      assert.match(text, /always-first\.txt` \(new, kept\) \+1 −0/);
      assert.match(text, /always-second\.txt` \(new, undone\) \+0 −0/);
      await workbench.screenshot('20-markdown-export');
    });

    step('"Restore to here" puts the files back on disk, and its Undo brings them back again', async () => {
      const chat = workbench.chat();
      const first = path.join(workspace, NOTES[0].path);
      const second = path.join(workspace, NOTES[1].path);
      assert.equal(readFileSync(first, 'utf8'), NOTES[0].content, 'kept by the review');
      const asked = chat.locator('.message.user', { hasText: NOTES_PROMPT }).last();
      await asked.hover();
      await asked.locator('button:has-text("Restore to here")').click();
      // VS Code's modal confirmation (sessionActions.ts: rewindToItem).
      const dialog = workbench.page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      await workbench.screenshot('21-restore-confirm');
      await dialog.getByRole('button', { name: 'Restore', exact: true }).click();
      const notice = chat.locator('.notice', { hasText: 'Restored to before that message' }).last();
      await notice.waitFor({ timeout: 60_000 });
      // The turn created the kept note: restoring to before it removes the file.
      await until(() => !existsSync(first), `${NOTES[0].path} removed by the restore`);
      assert.ok(!existsSync(second), 'the note the review undid stays absent');
      await workbench.screenshot('22-restored');
      await notice.locator('button.notice-action', { hasText: 'Undo' }).click();
      await chat.locator('.notice', { hasText: 'Restore undone' }).last().waitFor({ timeout: 60_000 });
      await until(
        () => existsSync(first) && readFileSync(first, 'utf8') === NOTES[0].content,
        `${NOTES[0].path} back as the agent wrote it`,
      );
      assert.ok(!existsSync(second), 'the undo puts back only what the restore changed');
      await workbench.screenshot('23-restore-undone');
    });

    step('two fast Enters never drop a message: the second waits in the composer, then goes', async () => {
      await workbench.viewAction('New Chat');
      const chat = workbench.chat();
      await workbench.viewTitle('New chat');
      const input = chat.locator('.composer-input');
      await input.fill('First quick question?');
      await input.press('Enter');
      await input.fill('Second quick question?');
      await input.press('Enter');
      await chat.locator('.message.user', { hasText: 'First quick question?' }).waitFor({ timeout: 30_000 });
      // The composer locked at the first Enter: the second one either waits in the composer,
      // which said why, or — if the first turn was already over — went out. Never lost.
      if ((await input.inputValue()) === 'Second quick question?') {
        assert.match(await chat.locator('.composer-hint').textContent(), /Turn running — Esc to stop/);
        await chat.locator('.composer:not(.locked)').waitFor({ timeout: 60_000 });
        await input.press('Enter');
      }
      await chat.locator('.message.user', { hasText: 'Second quick question?' }).waitFor({ timeout: 30_000 });
      await chat.locator('.composer:not(.locked)').waitFor({ timeout: 60_000 });
      assert.equal(await chat.locator('.message.user').count(), 2);
      assert.equal(await chat.locator('.message.assistant').count(), 2, 'both were answered');
    });

    step('replays the chat from its recordings into a new chat that says how it went', async () => {
      await workbench.runCommand('Relavium: Replay Chat from Its Recordings');
      const row = workbench.page.locator('.quick-input-widget .quick-input-list .monaco-list-row', {
        hasText: 'Serve every tool call from the recording',
      });
      await row.first().waitFor({ timeout: 30_000 });
      await row.first().click();
      const chat = workbench.chat();
      await chat
        .locator('.notice', { hasText: 'Replay (recorded) finished: 2 turn(s), identical to the original' })
        .waitFor({ timeout: 60_000 });
      await workbench.viewTitle('(replay)');
      assert.equal(await chat.locator('.message.user', { hasText: 'Second quick question?' }).count(), 1);
      assert.equal(await chat.locator('.message.assistant').count(), 2, 'both answers replayed');
    });
  }
});
