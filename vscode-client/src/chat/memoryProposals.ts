/**
 * Proposed workspace-memory changes (issue 35, docs/design.md §2.6). An introspection
 * checkpoint's notes are in no prompt until the user accepts them: when a
 * `session:checkpoint` event names a `memoryProposalId`, the user is told and can review;
 * reviewing opens each pending proposal's diff and asks Accept / Reject
 * (`relavium/listMemoryProposals`, `relavium/decideMemoryProposal`). The command
 * "Relavium: Review Memory Proposals" does the same on demand.
 */

import * as vscode from 'vscode';
import {
  Methods,
  type DecideMemoryProposalResult,
  type MemoryProposals,
  type SessionEvent,
} from '../protocol';
import type { RelaviumServer } from '../server/relaviumServer';

export class MemoryProposalReview {
  constructor(private readonly server: RelaviumServer) {}

  /** A checkpoint that proposed changes: say so (they wait, unused, until accepted). */
  onSessionEvent(event: SessionEvent): void {
    if (event.type !== 'session:checkpoint' || event.memoryProposalId === undefined) {
      return;
    }
    void vscode.window
      .showInformationMessage(
        'Relavium: a checkpoint proposes notes for the workspace memory. They are not used until you accept them.',
        'Review',
      )
      .then((choice) => (choice === 'Review' ? this.review() : undefined));
  }

  /** Show each pending proposal's diff and ask Accept / Reject (Escape stops). */
  async review(): Promise<void> {
    const listed = await this.server.request<MemoryProposals>(Methods.listMemoryProposals, {});
    if (listed.proposals.length === 0) {
      void vscode.window.showInformationMessage('Relavium: no proposed memory changes are waiting.');
      return;
    }
    for (const proposal of listed.proposals) {
      const document = await vscode.workspace.openTextDocument({
        language: 'diff',
        content: proposal.diff?.unified ?? proposal.text,
      });
      await vscode.window.showTextDocument(document, { preview: true });
      const choice = await vscode.window.showInformationMessage(
        `Relavium: add these notes, proposed by a ${proposal.reason} checkpoint of session ` +
          `${proposal.sessionId ?? 'unknown'}, to the workspace memory?`,
        { modal: true },
        'Accept',
        'Reject',
      );
      if (choice === undefined) {
        return;
      }
      await this.server.request<DecideMemoryProposalResult>(Methods.decideMemoryProposal, {
        proposalId: proposal.id,
        decision: choice === 'Accept' ? 'accept' : 'reject',
      });
    }
  }
}
