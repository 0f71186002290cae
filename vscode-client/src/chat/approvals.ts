/**
 * Answers the server's `relavium/requestApproval` requests.
 *
 * Inline first: the tool card in the chat view gets Approve / Reject / Always buttons. When
 * the view is hidden (or shows another session) the request falls back to a modal dialog, and
 * a pending inline request escalates to the modal if the view is hidden while it waits.
 * Dismissing the modal rejects: silence never approves anything. A file change can also be
 * reviewed in the native diff editor (`openDiff`), whose title answers the same request.
 */

import * as vscode from 'vscode';
import type { ApprovalDecision, RequestApprovalParams, RequestApprovalResult } from '../protocol';
import type { ProposedChanges } from './proposedChanges';

/** What the broker needs from the chat view. */
export interface ApprovalSurface {
  /** Whether the chat view is visible and shows `sessionId`. */
  canShowInline(sessionId: string): boolean;
  /** Enable the buttons on the call's card. */
  opened(params: RequestApprovalParams): void;
  /** Record the decision on the card. */
  decided(callId: string, decision: ApprovalDecision): void;
  /** The server gave up waiting: the buttons go inert. */
  withdrawn(callId: string): void;
}

interface Pending {
  params: RequestApprovalParams;
  resolve(decision: ApprovalDecision): void;
  /** Settle without a decision (the server is gone; the answer goes nowhere). */
  drop(): void;
  escalated: boolean;
}

const ALWAYS = 'Always for this session';

function describe(params: RequestApprovalParams): { message: string; detail: string } {
  switch (params.action) {
    case 'fs_write':
      return {
        message: `Relavium wants to write ${params.preview.path ?? 'a file'}`,
        detail:
          params.diff === undefined
            ? `Tool: ${params.toolId}`
            : `Tool: ${params.toolId} (+${params.diff.stat.added} −${params.diff.stat.removed} lines)\n\n` +
              params.diff.unified.slice(0, 4000),
      };
    case 'process':
      return {
        message: 'Relavium wants to run a command',
        detail: `${params.preview.command ?? '(command not shown)'}\nTool: ${params.toolId}`,
      };
    case 'egress':
      return {
        message: `Relavium wants to contact ${params.preview.host ?? 'a network host'}`,
        detail: `Tool: ${params.toolId}`,
      };
  }
}

export class ApprovalBroker {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly surface: ApprovalSurface,
    private readonly proposed?: ProposedChanges,
  ) {}

  /** Handle one `relavium/requestApproval` request. */
  request(params: RequestApprovalParams, token: vscode.CancellationToken): Promise<RequestApprovalResult> {
    return new Promise((resolve) => {
      let settled = false;
      const entry: Pending = {
        params,
        escalated: false,
        resolve: (decision) => {
          if (settled) {
            return;
          }
          settled = true;
          this.pending.delete(params.callId);
          subscription.dispose();
          this.proposed?.forget(params.callId);
          this.surface.decided(params.callId, decision);
          resolve({ decision });
        },
        drop: () => {
          settled = true;
          subscription.dispose();
          resolve({ decision: 'reject' });
        },
      };
      const subscription = token.onCancellationRequested(() => {
        settled = true;
        this.pending.delete(params.callId);
        this.proposed?.forget(params.callId);
        this.surface.withdrawn(params.callId);
        resolve({ decision: 'reject' });
      });
      this.pending.set(params.callId, entry);
      this.surface.opened(params);
      if (!this.surface.canShowInline(params.sessionId)) {
        this.escalate(entry);
      }
    });
  }

  /** The user clicked a button on a card; false when no request waits for that call. */
  decide(callId: string, decision: ApprovalDecision): boolean {
    const entry = this.pending.get(callId);
    entry?.resolve(decision);
    return entry !== undefined;
  }

  /** Open a waiting file change in the native diff editor; false when none waits. */
  async openDiff(callId: string): Promise<boolean> {
    const entry = this.pending.get(callId);
    if (entry === undefined || this.proposed === undefined) {
      return false;
    }
    return this.proposed.open(entry.params);
  }

  /**
   * The server went away: nobody can answer its requests any more. Their cards go inert (the
   * chat marks them cancelled) and their diff editors close.
   */
  dropAll(): void {
    for (const [callId, entry] of [...this.pending]) {
      this.pending.delete(callId);
      this.proposed?.forget(callId);
      this.surface.withdrawn(callId);
      entry.drop();
    }
  }

  /** The chat view was hidden: move waiting requests to modal dialogs. */
  escalateAll(): void {
    for (const entry of this.pending.values()) {
      this.escalate(entry);
    }
  }

  private escalate(entry: Pending): void {
    if (entry.escalated) {
      return;
    }
    entry.escalated = true;
    const { message, detail } = describe(entry.params);
    void vscode.window
      .showWarningMessage(message, { modal: true, detail }, 'Approve', ALWAYS, 'Reject')
      .then((choice) => {
        entry.resolve(choice === 'Approve' ? 'approve' : choice === ALWAYS ? 'approve_always' : 'reject');
      });
  }
}
