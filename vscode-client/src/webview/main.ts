/**
 * The chat webview's entry point: builds the layout, applies the host's patches and turns
 * clicks into messages for the host. All state lives in the host; this page only renders.
 *
 * The conversation gets the height: the chat's title and state are in the view's own title
 * bar (set by the host), the agent and model pickers sit in the composer's toolbar, and the
 * chat history is an overlay opened from the view title's history button.
 */

import { formatCache, formatCost, formatTokens } from '../model/format';
import type { HostToWebview, WebviewToHost } from '../shared/webviewMessages';
import type { ConnectionView, FooterView, HeaderView, ViewPatch } from '../shared/viewState';
import { Composer } from './composer';
import { actionButton, element } from './dom';
import { icon } from './icons';
import { SessionsPanel } from './sessionsPanel';
import { TranscriptView } from './transcriptView';
import { post } from './vscodeApi';

const banner = element('div', 'banner');
const bannerText = element('span', 'banner-text');
// While no server runs: get one (the extension installs its bundled server), pick one, or
// read why in the "Relavium" output channel.
const serverButtons = element('span', 'banner-buttons');
serverButtons.append(
  actionButton('Install…', 'installServer', {}, 'secondary'),
  actionButton('Choose executable…', 'chooseExecutable', {}, 'secondary'),
  actionButton('Show log', 'showLog', {}, 'secondary'),
);
banner.append(bannerText, serverButtons);
banner.setAttribute('role', 'status');

const sessions = new SessionsPanel();
const scroller = element('main', 'transcript');
scroller.setAttribute('role', 'log');
scroller.setAttribute('aria-live', 'polite');
const loadEarlier = actionButton('Load earlier messages', 'loadEarlier');
const list = element('div', 'items');
const emptyHint = element('div', 'empty-hint');
emptyHint.append(
  element('div', 'empty-title', 'Ask about your code'),
  element(
    'div',
    'empty-text',
    'The file you have open goes with your message (the chip below the input; × leaves it out). ' +
      'Select lines to ask about them, @ to attach files, / for commands.',
  ),
);
// Shown in an empty chat while only the offline demo model can answer.
const offlineNotice = element('div', 'offline-notice');
offlineNotice.append(
  element(
    'span',
    undefined,
    'The offline demo model is answering: it replays a recorded demo and sends nothing anywhere. ',
  ),
  actionButton('Set Up a Model', 'setupModel', {}, 'secondary'),
);
emptyHint.append(offlineNotice);
scroller.append(loadEarlier, list, emptyHint);
const transcript = new TranscriptView(scroller, list);

const composer = new Composer(
  () => transcript.lastUserText(),
  () => {
    sessions.toggle(false); // the answer appears in the conversation the history covers
  },
);
const agentPicker = actionButton('', 'pickAgent', {}, 'picker picker-agent');
const modelPicker = actionButton('', 'pickModel', {}, 'picker picker-model');
const usage = element('span', 'usage');
composer.tools.append(agentPicker, modelPicker, usage);
const footer = element('footer', 'footer');
footer.append(composer.root);

const stage = element('div', 'stage');
stage.append(scroller, sessions.root);
const app = element('div', 'app');
app.append(banner, stage, footer);
document.body.append(app);

function renderBanner(connection: ConnectionView): void {
  banner.hidden = connection.state === 'running';
  serverButtons.hidden = connection.state !== 'stopped';
  // Nothing to pick from while no server runs (no raw "server not running" errors).
  agentPicker.disabled = connection.state !== 'running';
  modelPicker.disabled = connection.state !== 'running';
  offlineNotice.hidden = connection.offlineModel !== true;
  bannerText.textContent =
    connection.state === 'starting'
      ? 'Starting the Relavium server…'
      : `Relavium server not running — ${connection.reason ?? 'unknown reason'}`;
}

/** A name as the narrow toolbar shows it: the product's own prefix adds nothing there. */
function shortName(name: string): string {
  return name.replace(/^relavium-/, '');
}

function pickerLabel(button: HTMLElement, kind: 'Agent' | 'Model', value: string): void {
  if (button.dataset.value === value) {
    return; // the same label: no DOM work while tokens stream
  }
  button.dataset.value = value;
  button.setAttribute('aria-label', `${kind}: ${value}`);
  button.replaceChildren(
    icon(kind === 'Agent' ? 'agent' : 'model', 'icon picker-icon'),
    element('span', 'picker-value', shortName(value)),
    icon('chevron', 'icon picker-chevron'),
  );
}

function renderToolbar(view: FooterView, header: HeaderView): void {
  const agent = header.agentRef ?? header.nextAgent ?? 'default';
  pickerLabel(agentPicker, 'Agent', agent);
  agentPicker.title = `Agent: ${agent} — pick another for the next chat`;
  const model =
    view.model ??
    (header.nextModel === undefined ? undefined : header.nextModel.split('/').slice(1).join('/'));
  pickerLabel(modelPicker, 'Model', model ?? 'default');
  const tokens = `${formatTokens(view.inputTokens)} in${formatCache(view)} / ${formatTokens(view.outputTokens)} out`;
  const cost = formatCost(view.costMicrocents, view.priced);
  modelPicker.title = `Model: ${model ?? 'the server default'} (a switch applies from the next turn)\n${tokens} · ${cost}`;
  usage.textContent = view.inputTokens + view.outputTokens > 0 ? cost : '';
  usage.title = `model: ${view.model ?? 'server default'} · ${tokens} · ${cost}`;
  loadEarlier.hidden = !header.hasMoreHistory;
}

function applyPatch(patch: ViewPatch): void {
  const running = patch.header.status === 'streaming' || patch.header.status === 'awaiting_approval';
  renderBanner(patch.connection);
  renderToolbar(patch.footer, patch.header);
  const hasSession = patch.header.sessionId !== undefined;
  transcript.apply(patch, { running, hasSession });
  emptyHint.hidden = !transcript.empty || patch.header.loading;
  composer.update(running, patch.connection.state === 'running', patch.composer);
  composer.setAttachments(patch.attachments, patch.composer.implicit);
}

function codeOf(target: HTMLElement): string {
  return target.closest('.code-block')?.querySelector('.code-text')?.textContent ?? '';
}

const PATCH_MEASURE = 'relavium:patch';
const MEASURES_KEPT = 5000;
let patchesMeasured = 0;

const FORWARDED = new Set([
  'newChat',
  'loadEarlier',
  'restartServer',
  'installServer',
  'chooseExecutable',
  'showLog',
  'setupModel',
  'pickAgent',
  'pickModel',
  'dismissImplicit',
]);

function onAction(target: HTMLElement, action: string): WebviewToHost | undefined {
  const data = target.dataset;
  switch (action) {
    case 'openLink':
      return { type: 'openLink', href: data.href ?? '' };
    case 'copyCode':
      return { type: 'copy', text: codeOf(target) };
    case 'insertCode':
      return { type: 'insert', text: codeOf(target) };
    case 'applyCode':
      return {
        type: 'apply',
        text: codeOf(target),
        lang: target.closest<HTMLElement>('.code-block')?.dataset.lang ?? '',
      };
    case 'approval':
      if (data.decision === 'approve' || data.decision === 'reject' || data.decision === 'approve_always') {
        target
          .closest('.approval-buttons')
          ?.querySelectorAll('button')
          .forEach((button) => {
            button.disabled = true;
          });
        return { type: 'approval', callId: data.callId ?? '', decision: data.decision };
      }
      return undefined;
    case 'openDiff':
      return { type: 'openDiff', callId: data.callId ?? '' };
    case 'openTerminal':
      return { type: 'openTerminal', callId: data.callId ?? '' };
    case 'openChange':
      return { type: 'openChange', userSequence: Number(data.seq), path: data.path ?? '' };
    case 'reviewChanges':
      if (data.decision === 'keep' || data.decision === 'undo') {
        return {
          type: 'reviewChanges',
          userSequence: Number(data.seq),
          decision: data.decision,
          ...(data.path === undefined ? {} : { path: data.path }),
        };
      }
      return undefined;
    case 'noticeAction':
      return { type: 'noticeAction', itemId: data.itemId ?? '' };
    case 'fork':
      return { type: 'fork', itemId: data.itemId ?? '' };
    case 'rewind':
      return { type: 'rewind', itemId: data.itemId ?? '' };
    case 'copyMessage':
      return { type: 'copy', text: transcript.textOf(data.itemId ?? '') };
    case 'editMessage':
      return { type: 'editMessage', itemId: data.itemId ?? '' };
    case 'retryTurn':
      return { type: 'retryTurn', itemId: data.itemId ?? '' };
    case 'retry':
      return { type: 'retry', itemId: data.itemId ?? '' };
    case 'detach':
      return { type: 'detach', id: data.id ?? '' };
    case 'resume':
      sessions.toggle(false);
      return { type: 'resume', sessionId: data.sessionId ?? '' };
    case 'renameSession':
      return { type: 'rename', sessionId: data.sessionId };
    case 'deleteSession':
      return { type: 'delete', sessionId: data.sessionId };
    case 'closeSessions':
      sessions.toggle(false);
      composer.focus();
      return undefined;
    default:
      return FORWARDED.has(action) ? ({ type: action } as WebviewToHost) : undefined;
  }
}

document.addEventListener('click', (event) => {
  const target = (event.target as HTMLElement | null)?.closest<HTMLElement>('[data-action]');
  const action = target?.dataset.action;
  if (target === null || target === undefined || action === undefined) {
    return;
  }
  event.preventDefault();
  const message = onAction(target, action);
  if (message !== undefined) {
    post(message);
  }
});

window.addEventListener('message', (event: MessageEvent<HostToWebview>) => {
  const message = event.data;
  switch (message.type) {
    case 'patch': {
      // Timed so the benchmark can read what rendering costs (bench/vscode_chat.py).
      const start = performance.now();
      applyPatch(message.patch);
      // `reordered`: items came, went or moved (a turn's start and end); else a patch of
      // changed items only — while an answer streams, its tokens.
      const detail = { upserts: message.patch.upserts.length, reordered: message.patch.order !== undefined };
      performance.measure(PATCH_MEASURE, { start, detail });
      patchesMeasured += 1;
      if (patchesMeasured % MEASURES_KEPT === 0) {
        performance.clearMeasures(PATCH_MEASURE); // bounded, however long the chat runs
      }
      break;
    }
    case 'sessions':
      sessions.show(message.query, message.sessions, message.error);
      break;
    case 'files':
      composer.showFiles(message.query, message.files);
      break;
    case 'sessionsChanged':
      sessions.refresh();
      break;
    case 'setDraft':
      composer.setDraft(message.text);
      break;
    case 'focusInput':
      composer.focus();
      break;
    case 'showHistory':
      sessions.toggle(true);
      break;
  }
});

renderBanner({ state: 'starting' });
post({ type: 'ready' });
