/**
 * The chat webview's HTML shell. Pure (no `vscode` import) so the Content-Security-Policy can
 * be unit-tested: nothing loads but the extension's own script and stylesheet, scripts run
 * only with the per-load nonce, and no remote origin is reachable.
 */

import { randomBytes } from 'node:crypto';

export interface WebviewResources {
  /** `webview.cspSource`: the origin the webview serves extension files from. */
  cspSource: string;
  scriptUri: string;
  styleUri: string;
  nonce: string;
}

/** A fresh nonce for one page load. */
export function makeNonce(): string {
  return randomBytes(18).toString('base64');
}

/** The Content-Security-Policy for the chat view. */
export function contentSecurityPolicy(resources: WebviewResources): string {
  return [
    "default-src 'none'",
    `style-src ${resources.cspSource}`,
    `script-src 'nonce-${resources.nonce}'`,
    `img-src ${resources.cspSource} data:`,
    `font-src ${resources.cspSource}`,
    "connect-src 'none'",
    "frame-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');
}

function attribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/** The complete HTML document of the chat view. */
export function chatHtml(resources: WebviewResources): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attribute(contentSecurityPolicy(resources))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${attribute(resources.styleUri)}">
<title>Relavium Chat</title>
</head>
<body>
<script nonce="${attribute(resources.nonce)}" src="${attribute(resources.scriptUri)}"></script>
</body>
</html>`;
}
