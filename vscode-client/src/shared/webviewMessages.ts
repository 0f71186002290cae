/**
 * Messages between the extension host and the chat webview, with a validator for the
 * webview → host direction.
 *
 * The webview renders model output, so it is treated as less trusted than the host: the host
 * accepts only well-formed messages from it, and every action it can ask for is one the user
 * could also do from the UI.
 */

import type { ApprovalDecision, ReviewDecision, SessionSummary } from '../protocol';
import type { ViewPatch } from './viewState';

/** Host → webview. */
export type HostToWebview =
  | { type: 'patch'; patch: ViewPatch }
  | { type: 'files'; query: string; files: string[] }
  | { type: 'sessions'; query: string; sessions: SessionSummary[]; error?: string }
  | { type: 'sessionsChanged' }
  | { type: 'setDraft'; text: string }
  | { type: 'focusInput' }
  | { type: 'showHistory' };

/** Webview → host. */
export type WebviewToHost =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  | { type: 'abort' }
  | { type: 'approval'; callId: string; decision: ApprovalDecision }
  | { type: 'openDiff'; callId: string }
  | { type: 'openTerminal'; callId: string }
  | { type: 'retry'; itemId: string }
  | { type: 'fork'; itemId: string }
  | { type: 'rewind'; itemId: string }
  | { type: 'copy'; text: string }
  | { type: 'insert'; text: string }
  | { type: 'apply'; text: string; lang: string }
  | { type: 'openLink'; href: string }
  | { type: 'listSessions'; query: string }
  | { type: 'resume'; sessionId: string }
  | { type: 'rename'; sessionId?: string }
  | { type: 'delete'; sessionId?: string }
  | { type: 'newChat' }
  | { type: 'export' }
  | { type: 'loadEarlier' }
  | { type: 'detach'; id: string }
  | { type: 'pickAgent' }
  | { type: 'findFiles'; query: string }
  | { type: 'attachFile'; path: string }
  | { type: 'editMessage'; itemId: string }
  | { type: 'retryTurn'; itemId: string }
  | { type: 'pickModel' }
  | { type: 'restartServer' }
  | { type: 'installServer' }
  | { type: 'chooseExecutable' }
  | { type: 'showLog' }
  | { type: 'setupModel' }
  /** Leave the active editor's file / selection out of the next message. */
  | { type: 'dismissImplicit' }
  /** A turn's changed file: open its diff against the turn's checkpoint. */
  | { type: 'openChange'; userSequence: number; path: string }
  /** Keep or undo a turn's changes (one file, or all of them without `path`). */
  | { type: 'reviewChanges'; userSequence: number; decision: ReviewDecision; path?: string }
  /** The button of a notice (Retry, Undo). */
  | { type: 'noticeAction'; itemId: string };

const MAX_TEXT = 200_000;
const MAX_ID = 200;
const DECISIONS: readonly string[] = ['approve', 'reject', 'approve_always'];
const BARE: ReadonlySet<string> = new Set([
  'ready',
  'abort',
  'newChat',
  'export',
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

function text(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.length <= max;
}

function id(value: unknown): value is string {
  return text(value, MAX_ID) && value.length > 0;
}

function optionalId(value: unknown): value is string | undefined {
  return value === undefined || id(value);
}

function sequence(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function path(value: unknown): value is string {
  return text(value, 4096) && value !== '';
}

/** Validate a message posted by the webview; anything malformed yields `undefined`. */
export function parseWebviewMessage(raw: unknown): WebviewToHost | undefined {
  if (typeof raw !== 'object' || raw === null) {
    return undefined;
  }
  const message = raw as Record<string, unknown>;
  const type = message.type;
  if (typeof type !== 'string') {
    return undefined;
  }
  if (BARE.has(type)) {
    return { type } as WebviewToHost;
  }
  switch (type) {
    case 'send':
    case 'copy':
    case 'insert':
      return text(message.text, MAX_TEXT) ? { type, text: message.text } : undefined;
    case 'listSessions':
      return text(message.query, 500) ? { type, query: message.query } : undefined;
    case 'openLink':
      return text(message.href, 4096) ? { type, href: message.href } : undefined;
    case 'approval':
      return id(message.callId) &&
        typeof message.decision === 'string' &&
        DECISIONS.includes(message.decision)
        ? { type, callId: message.callId, decision: message.decision as ApprovalDecision }
        : undefined;
    case 'openDiff':
    case 'openTerminal':
      return id(message.callId) ? { type, callId: message.callId } : undefined;
    case 'findFiles':
      return text(message.query, 500) ? { type, query: message.query } : undefined;
    case 'attachFile':
      return path(message.path) ? { type, path: message.path } : undefined;
    case 'editMessage':
    case 'retryTurn':
    case 'retry':
    case 'fork':
    case 'rewind':
    case 'noticeAction':
      return id(message.itemId) ? { type, itemId: message.itemId } : undefined;
    case 'openChange':
      return sequence(message.userSequence) && path(message.path)
        ? { type, userSequence: message.userSequence, path: message.path }
        : undefined;
    case 'reviewChanges': {
      const decision = message.decision;
      if (!sequence(message.userSequence) || (decision !== 'keep' && decision !== 'undo')) {
        return undefined;
      }
      if (message.path === undefined) {
        return { type, userSequence: message.userSequence, decision };
      }
      return path(message.path)
        ? { type, userSequence: message.userSequence, decision, path: message.path }
        : undefined;
    }
    case 'apply':
      return text(message.text, MAX_TEXT) && text(message.lang, 100)
        ? { type, text: message.text, lang: message.lang }
        : undefined;
    case 'detach':
      return id(message.id) ? { type, id: message.id } : undefined;
    case 'resume':
      return id(message.sessionId) ? { type, sessionId: message.sessionId } : undefined;
    case 'rename':
    case 'delete':
      return optionalId(message.sessionId) ? { type, sessionId: message.sessionId } : undefined;
    default:
      return undefined;
  }
}

/** Only web links leave the editor; anything else (command:, file:, javascript:) is refused. */
export function isSafeExternalLink(href: string): boolean {
  try {
    const url = new URL(href);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
