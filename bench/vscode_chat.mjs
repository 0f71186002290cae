// The browser side of bench/vscode_chat.py: drives the packaged extension in code-server
// (headless Chromium, Playwright) and reads times inside the chat webview. One JSON argument
// (see vscode_chat.py); writes the measurements to its `out` file.
//
// - open: from the history overlay, click the long chat; time until its last message is in
//   the DOM and a frame was painted (measured in the webview: performance.now()).
// - stream: clear the webview's `relavium:patch` measures, send a message, wait for the last
//   streamed token; the measures are the per-patch render times (main.ts takes them).
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { CodeServer, QUIET_WORKBENCH } from '../tests/e2e/vscode/codeServer.mjs';
import { Workbench, launchChromium } from '../tests/e2e/vscode/workbench.mjs';

const config = JSON.parse(process.argv[2]);

// The chats this benchmark starts use its streaming agent.
const settings = { ...QUIET_WORKBENCH, 'relavium.server.command': config.server, 'relavium.agent': 'streamer' };

/** The chat webview's document as a Playwright Frame (for evaluate). */
async function webviewFrame(page) {
  const outer = await page.locator('iframe.webview.ready[src*="extensionId=relavium.relavium"]').elementHandle();
  const inner = await (await outer.contentFrame()).locator('iframe#active-frame').elementHandle();
  return inner.contentFrame();
}

/** The webview's JS heap in MB (Chromium's performance.memory). */
function jsHeapMb(frame) {
  return frame.evaluate(() => (performance.memory === undefined ? Number.NaN : performance.memory.usedJSHeapSize / 1e6));
}

/** Click the chat in the history and time, inside the webview, until its last message shows. */
async function timedOpen(workbench, sessionId, marker) {
  await workbench.viewAction('Show Chat History');
  const chat = workbench.chat();
  await chat.locator(`.session-open[data-session-id="${sessionId}"]`).waitFor({ timeout: 60_000 });
  const frame = await webviewFrame(workbench.page);
  return frame.evaluate(
    ({ sessionId, marker }) =>
      new Promise((resolve) => {
        const list = document.querySelector('.items');
        const shown = () =>
          [...list.querySelectorAll('.message.assistant .markdown')].some((node) => node.textContent.includes(marker));
        const start = performance.now();
        const observer = new MutationObserver(() => {
          if (shown()) {
            observer.disconnect();
            // The message is in the DOM; the time ends when the frame showing it is painted.
            requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - start), 0));
          }
        });
        observer.observe(list, { childList: true, subtree: true, characterData: true });
        document.querySelector(`.session-open[data-session-id="${sessionId}"]`).click();
      }),
    { sessionId, marker },
  );
}

/**
 * Send `text`, wait for the answer's last token; the render time of each patch meanwhile,
 * and whether it reordered items (the turn's start and end) or only changed them (tokens).
 */
async function timedStream(workbench, text, finalToken) {
  const chat = workbench.chat();
  const frame = await webviewFrame(workbench.page);
  await frame.evaluate(() => performance.clearMeasures('relavium:patch'));
  const input = chat.locator('.composer-input');
  await input.fill(text);
  await input.press('Enter');
  await chat.locator('.message.assistant .markdown', { hasText: finalToken.trim() }).last().waitFor({ timeout: 120_000 });
  await chat.locator('.composer:not(.locked)').waitFor({ timeout: 60_000 });
  return frame.evaluate(() =>
    performance.getEntriesByName('relavium:patch').map((entry) => ({ ms: entry.duration, reordered: entry.detail.reordered })),
  );
}

async function main() {
  const codeServer = new CodeServer({
    cache: config.cache,
    root: path.join(config.root, 'code-server'),
    settings,
  });
  codeServer.installExtension(config.vsix);
  const url = await codeServer.start(config.workspace, config.env);
  const browser = await launchChromium(config.cache);
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  try {
    const artifacts = path.join(config.root, 'screens');
    mkdirSync(artifacts, { recursive: true });
    const workbench = new Workbench(page, artifacts);
    await workbench.open(url);
    await workbench.openRelaviumView();
    const chat = workbench.chat();
    await chat.locator('.banner').waitFor({ state: 'hidden', timeout: 90_000 });

    // The anchor: an answer streaming into a new, empty chat.
    const emptyPatches = await timedStream(workbench, 'Stream an answer, please.', config.finalToken);
    const heapEmptyMb = await jsHeapMb(await webviewFrame(page));

    // Opening the long chat, several times (a new chat in between).
    const openMs = [];
    for (let run = 0; run < config.runs; run += 1) {
      await workbench.viewAction('New Chat');
      await workbench.viewTitle('New chat');
      openMs.push(await timedOpen(workbench, config.sessionId, config.lastMarker));
    }

    // Every earlier page into the view, then an answer streaming below 2,000 messages.
    const loadEarlier = chat.locator('.transcript > button', { hasText: 'Load earlier messages' });
    for (let page = 0; page < 40 && (await loadEarlier.isVisible()); page += 1) {
      const before = await chat.locator('.item').count();
      await loadEarlier.click();
      await chat.locator('.item').nth(before).waitFor({ state: 'attached', timeout: 60_000 });
    }
    const frame = await webviewFrame(page);
    // Back at the newest message, where a reader watches an answer arrive.
    await frame.evaluate(() => {
      const scroller = document.querySelector('.transcript');
      scroller.scrollTop = scroller.scrollHeight;
      scroller.dispatchEvent(new Event('scroll'));
    });
    const messagesInView = await frame.evaluate(
      () => document.querySelectorAll('.message, .tool-card, .tool-group').length,
    );
    const longPatches = await timedStream(workbench, 'Stream another answer, please.', config.finalToken);
    const heapMb = await jsHeapMb(frame);
    const tokens = Number(config.finalToken.trim().slice(1)) + 1;
    writeFileSync(config.out, JSON.stringify({ openMs, emptyPatches, longPatches, tokens, messagesInView, heapMb, heapEmptyMb }));
  } catch (error) {
    // Where it stopped, for whoever reads the failure (bench/results is not committed).
    mkdirSync(path.dirname(config.failedScreenshot), { recursive: true });
    await page.screenshot({ path: config.failedScreenshot }).catch(() => undefined);
    throw error;
  } finally {
    await browser.close();
    await codeServer.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
