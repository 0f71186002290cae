/**
 * Test-only: the end-to-end test's stand-in for another language server's problem. When
 * `RELAVIUM_TEST_DIAGNOSTIC` is set (never by users) to `{"path", "line", "message"}`, one
 * warning is published in a diagnostic collection, so `editor_diagnostics` answers with what
 * VS Code really reports (`languages.getDiagnostics`).
 */

import * as vscode from 'vscode';

interface TestDiagnostic {
  path: string;
  line: number;
  message: string;
}

/** Publish the test diagnostic if the environment asks for one. */
export function publishTestDiagnostic(context: vscode.ExtensionContext): void {
  const raw = process.env.RELAVIUM_TEST_DIAGNOSTIC;
  if (raw === undefined || raw === '') {
    return;
  }
  const wanted = JSON.parse(raw) as TestDiagnostic;
  const collection = vscode.languages.createDiagnosticCollection('relavium-e2e');
  const line = Math.max(0, wanted.line - 1);
  const diagnostic = new vscode.Diagnostic(
    new vscode.Range(line, 0, line, 1),
    wanted.message,
    vscode.DiagnosticSeverity.Warning,
  );
  diagnostic.source = 'relavium-e2e';
  collection.set(vscode.Uri.file(wanted.path), [diagnostic]);
  context.subscriptions.push(collection);
}
