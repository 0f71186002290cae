/**
 * Answers `relavium/editorQuery` — the agent's `editor_*` tools — from VS Code itself:
 * `vscode.languages.getDiagnostics` and the `vscode.execute*Provider` commands (every language
 * extension's answers). The reshaping is pure (`model/editorAnswers.ts`); this is the glue.
 */

import * as vscode from 'vscode';
import {
  toDiagnostics,
  toLocations,
  toSymbols,
  type DocumentSymbolLike,
  type LocationLike,
  type LocationLinkLike,
  type SymbolInformationLike,
} from '../model/editorAnswers';
import type { EditorFeature, EditorQueryParams, EditorQueryResult } from '../protocol';

/** What this client answers (declared as `experimental.relavium.editorTools`). */
export const EDITOR_TOOLS: EditorFeature[] = ['diagnostics', 'symbols', 'references', 'definition'];

function kindName(kind: number): string {
  return vscode.SymbolKind[kind] ?? String(kind);
}

function position(params: EditorQueryParams): vscode.Position {
  return new vscode.Position(Math.max(0, (params.line ?? 1) - 1), Math.max(0, (params.character ?? 1) - 1));
}

/** The answer to one `relavium/editorQuery`. */
export async function answerEditorQuery(params: EditorQueryParams): Promise<EditorQueryResult> {
  const limit = params.maxItems;
  const uri = params.path === undefined ? undefined : vscode.Uri.file(params.path);
  switch (params.kind) {
    case 'diagnostics': {
      const entries: [vscode.Uri, vscode.Diagnostic[]][] =
        uri === undefined ? vscode.languages.getDiagnostics() : [[uri, vscode.languages.getDiagnostics(uri)]];
      return { diagnostics: toDiagnostics(entries, limit) };
    }
    case 'symbols': {
      if (uri !== undefined) {
        const symbols = await vscode.commands.executeCommand<
          (DocumentSymbolLike | SymbolInformationLike)[] | undefined
        >('vscode.executeDocumentSymbolProvider', uri);
        return { symbols: toSymbols(uri.fsPath, symbols ?? [], limit, kindName) };
      }
      const found = await vscode.commands.executeCommand<SymbolInformationLike[] | undefined>(
        'vscode.executeWorkspaceSymbolProvider',
        params.query ?? '',
      );
      return { symbols: toSymbols(undefined, found ?? [], limit, kindName) };
    }
    case 'references':
    case 'definition': {
      if (uri === undefined) {
        return { locations: [] };
      }
      const command =
        params.kind === 'references' ? 'vscode.executeReferenceProvider' : 'vscode.executeDefinitionProvider';
      const found = await vscode.commands.executeCommand<(LocationLike | LocationLinkLike)[] | undefined>(
        command,
        uri,
        position(params),
      );
      return { locations: toLocations(found ?? [], limit) };
    }
  }
}
