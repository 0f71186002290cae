/**
 * The chat webview's entry point: builds the layout, applies the host's patches and turns
 * clicks into messages for the host. All state lives in the host; this page only renders.
 */

import { formatCache, formatCost, formatTokens } from '../model/format';
import type { HostToWebview, WebviewToHost } from '../shared/webviewMessages';
import type { ConnectionView, FooterView, HeaderView, ViewPatch } from '../shared/viewState';
import { Composer } from './composer';
import { actionButton, element } from './dom';
import { SessionsPanel } from './sessionsPanel';
import { TranscriptView } from './transcriptView';
import { post } from './vscodeApi';

const STATUS_LABELS: Record<HeaderView['status'], string> = {
  none: '',
  idle: 'ready',
  streaming: 'answering…',
  awaiting_approval: 'waiting for approval',
  awaiting_peer: 'waiting for a sub-agent',
  failed: 'last turn failed',
  ended: 'ended',
};

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

const title = element('div', 'title', 'New chat');
const status = element('span', 'status');
const header = element('header', 'header');
const headerButtons = element('div', 'header-buttons');
headerButtons.append(
  actionButton('Sessions', 'toggleSessions'),
  actionButton('New', 'newChat'),
  actionButton('Rename', 'rename'),
  actionButton('Export', 'export'),
);
const titleRow = element('div', 'title-row');
titleRow.append(title, status);
const agentPicker = actionButton('agent', 'pickAgent', {}, 'picker');
agentPicker.title = 'Pick the agent';
const modelPicker = actionButton('model', 'pickModel', {}, 'picker');
modelPicker.title = 'Pick the model (applies from the next turn)';
const pickers = element('div', 'pickers');
pickers.append(agentPicker, modelPicker);
header.append(titleRow, pickers, headerButtons);

const sessions = new SessionsPanel();
const scroller = element('main', 'transcript');
scroller.setAttribute('role', 'log');
scroller.setAttribute('aria-live', 'polite');
const loadEarlier = actionButton('Load earlier messages', 'loadEarlier');
const list = element('div', 'items');
const emptyHint = element(
  'div',
  'empty-hint',
  'Ask about your code. The selection and active file travel with your message.',
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

const composer = new Composer(() => transcript.lastUserText());
const meta = element('div', 'meta');
const footer = element('footer', 'footer');
footer.append(composer.root, meta);

const app = element('div', 'app');
app.append(banner, header, sessions.root, scroller, footer);
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

function renderHeader(view: HeaderView): void {
  title.textContent = view.loading
    ? 'Loading…'
    : (view.title ?? (view.sessionId === undefined ? 'New chat' : 'Untitled chat'));
  status.textContent = STATUS_LABELS[view.status];
  agentPicker.textContent = `Agent: ${view.agentRef ?? view.nextAgent ?? 'default'} ▾`;
  status.dataset.status = view.status;
  loadEarlier.hidden = !view.hasMoreHistory;
}

function renderFooter(view: FooterView, header: HeaderView): void {
  const model =
    view.model ??
    (header.nextModel === undefined ? undefined : header.nextModel.split('/').slice(1).join('/'));
  modelPicker.textContent = `Model: ${model ?? 'default'} ▾`;
  const pieces = [
    view.model === undefined ? 'model: server default' : `model: ${view.model}`,
    `${formatTokens(view.inputTokens)} in${formatCache(view)} / ${formatTokens(view.outputTokens)} out`,
    formatCost(view.costMicrocents, view.priced),
  ];
  meta.textContent = pieces.join(' · ');
}

function applyPatch(patch: ViewPatch): void {
  const running = patch.header.status === 'streaming' || patch.header.status === 'awaiting_approval';
  renderBanner(patch.connection);
  renderHeader(patch.header);
  renderFooter(patch.footer, patch.header);
  const hasSession = patch.header.sessionId !== undefined;
  transcript.apply(patch, { canFork: hasSession && !running, canApply: hasSession && !running });
  emptyHint.hidden = list.childElementCount > 0;
  composer.update(running, patch.connection.state === 'running');
  composer.setAttachments(patch.attachments);
}

function codeOf(target: HTMLElement): string {
  return target.closest('.code-block')?.querySelector('.code-text')?.textContent ?? '';
}

const FORWARDED = new Set([
  'newChat',
  'rename',
  'export',
  'loadEarlier',
  'restartServer',
  'installServer',
  'chooseExecutable',
  'showLog',
  'setupModel',
  'pickAgent',
  'pickModel',
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
    case 'toggleSessions':
      sessions.toggle();
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
    case 'patch':
      applyPatch(message.patch);
      break;
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
  }
});

renderBanner({ state: 'starting' });
post({ type: 'ready' });
