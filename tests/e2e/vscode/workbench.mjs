// Playwright helpers for driving the VS Code workbench served by code-server.
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';

export const EXTENSION_ID = 'relavium.relavium';

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Debian's headless Chromium, driven by the playwright-core in the e2e cache. */
export function launchChromium(cache) {
  const require = createRequire(path.join(cache, 'playwright', 'node_modules', 'noop.js'));
  const { chromium } = require('playwright-core');
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

export class Workbench {
  /**
   * @param {import('playwright-core').Page} page
   * @param {string} artifacts directory for screenshots
   */
  constructor(page, artifacts) {
    this.page = page;
    this.artifacts = artifacts;
    mkdirSync(artifacts, { recursive: true });
  }

  /** Load the workbench and wait until it is interactive. */
  async open(url) {
    await this.page.goto(url);
    await this.waitForWorkbench();
  }

  async waitForWorkbench() {
    await this.page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    await this.page.locator('.activitybar').waitFor({ timeout: 60_000 });
  }

  /** Save a screenshot as `<name>.png` and return its path. */
  async screenshot(name) {
    const file = path.join(this.artifacts, `${name}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  /** Click the Relavium activity-bar entry (the way a person opens the view). */
  async openRelaviumView() {
    const entry = this.page.locator('.activitybar a[aria-label^="Relavium"]').first();
    await entry.waitFor({ timeout: 60_000 });
    const title = this.page
      .locator('.pane-header[aria-label^="Chat"], .sidebar .title-label h2:has-text("Relavium")')
      .first();
    // Right after a (re)load the workbench may still be restoring its side bar: a click then
    // can land just before the restore shows the container (and so hide it again). Click only
    // while the view is not visible, and look again after each click.
    for (let attempt = 1; ; attempt += 1) {
      if (await title.isVisible()) {
        return;
      }
      await entry.click();
      try {
        await title.waitFor({ state: 'visible', timeout: 10_000 });
        return;
      } catch (error) {
        if (attempt >= 4) {
          throw error;
        }
      }
    }
  }

  /** The chat webview's document (webviews are an iframe inside an iframe). */
  chat() {
    return this.page
      .frameLocator(`iframe.webview.ready[src*="extensionId=${EXTENSION_ID}"]`)
      .frameLocator('iframe#active-frame');
  }

  /** Wait until the side bar's title (where the chat view shows the chat's title) has `text`. */
  async viewTitle(text, timeout = 30_000) {
    await this.page.locator('.part.sidebar .composite.title .title-label h2', { hasText: text }).first().waitFor({ timeout });
  }

  /** Click an action of the chat view's title bar (New Chat, Show Chat History, …) by its label. */
  async viewAction(label) {
    const action = this.page.locator(`.part.sidebar .composite.title .action-label[aria-label^="${label}"]`).first();
    await action.waitFor({ timeout: 30_000 });
    await action.click();
  }

  /** Run a command by its palette title. */
  async runCommand(title) {
    await this.page.keyboard.press('F1');
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(`>${title}`);
    await this.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor();
    await this.page.keyboard.press('Enter');
  }

  /** Open a workspace file through Quick Open and wait for its editor. */
  async openFile(relativePath) {
    const name = relativePath.split('/').at(-1);
    // Quick Open is the workbench's key: a webview that has the focus would swallow it.
    const editor = this.page.locator('.editor-group-container.active .monaco-editor .view-lines').first();
    if (await editor.isVisible()) {
      await editor.click();
    }
    await this.page.keyboard.press('Control+P');
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(relativePath);
    // Click the file's row: Enter would take whichever row is highlighted while the list
    // still filters (often the editor that is already open).
    const row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first();
    await row.waitFor();
    await row.click();
    await this.page.locator(`.editor-group-container.active .tabs-container .tab.active[aria-label*="${name}"]`).first().waitFor();
    await this.page.locator('.editor-group-container.active .monaco-editor .view-lines').first().waitFor();
  }

  /** Select whole lines `start`..`end` (1-based, inclusive) in the active editor. */
  async selectLines(start, end) {
    await this.page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
    await this.page.keyboard.press('Control+Home');
    for (let line = 1; line < start; line += 1) {
      await this.page.keyboard.press('ArrowDown');
    }
    for (let line = start; line < end; line += 1) {
      await this.page.keyboard.press('Shift+ArrowDown');
    }
    await this.page.keyboard.press('Shift+End');
  }

  /** Type `text` as a new last line of the active editor (the way a person would). */
  async typeAtEndOfEditor(text) {
    await this.page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
    await this.page.keyboard.press('Control+End');
    await this.page.keyboard.type(text);
  }

  /** Save the active editor. */
  async saveActiveEditor() {
    await this.page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
    await this.page.keyboard.press('Control+S');
    await this.page
      .locator('.tabs-container .tab.active.dirty')
      .waitFor({ state: 'detached', timeout: 30_000 });
  }

  /** The visible text of the active editor (Monaco renders spaces as no-break spaces). */
  async editorText() {
    const text = await this.page
      .locator('.editor-group-container.active .monaco-editor .view-lines')
      .first()
      .innerText();
    return text.replace(/\u00a0/g, ' ');
  }

  /** Wait until the active editor shows `expected` (a substring). */
  async waitForEditorText(expected, timeout = 60_000) {
    await this.page
      .locator('.editor-group-container.active .monaco-editor .view-lines', {
        hasText: expected,
      })
      .first()
      .waitFor({ timeout });
  }
}
