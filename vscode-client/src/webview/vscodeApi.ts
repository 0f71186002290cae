/** The webview's channel to the extension host. */

import type { WebviewToHost } from '../shared/webviewMessages';

interface VsCodeApi {
  postMessage(message: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

// acquireVsCodeApi may be called only once per webview.
const api = acquireVsCodeApi();

/** Send a typed message to the host. */
export function post(message: WebviewToHost): void {
  api.postMessage(message);
}
