/** The sidebar chat view: creates the webview, its HTML and the message channel. */

import * as vscode from 'vscode';
import type { ChatController, ChatView } from '../chat/chatController';
import { routeWebviewMessage, type RouterDeps } from '../chat/webviewRouter';
import { parseWebviewMessage, type HostToWebview } from '../shared/webviewMessages';
import { chatHtml, makeNonce } from './html';

export const CHAT_VIEW_ID = 'relavium.chat';

export class ChatViewProvider implements vscode.WebviewViewProvider {
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly deps: RouterDeps,
    private readonly onHidden: () => void,
  ) {}

  resolveWebviewView(webviewView: vscode.WebviewView): void {
    const { webview } = webviewView;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [dist, media] };
    webview.html = chatHtml({
      cspSource: webview.cspSource,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css')).toString(),
      nonce: makeNonce(),
    });
    const controller: ChatController = this.deps.controller;
    const view: ChatView = {
      get visible() {
        return webviewView.visible;
      },
      post: (message: HostToWebview) => {
        void webview.postMessage(message);
      },
      describe: (title: string, state: string) => {
        if (webviewView.title !== title) {
          webviewView.title = title;
        }
        const description = state === '' ? undefined : state;
        if (webviewView.description !== description) {
          webviewView.description = description;
        }
      },
    };
    controller.attachView(view);
    const subscriptions = [
      webview.onDidReceiveMessage((raw: unknown) => {
        const message = parseWebviewMessage(raw);
        if (message !== undefined) {
          void routeWebviewMessage(this.deps, message);
        }
      }),
      webviewView.onDidChangeVisibility(() => {
        if (!webviewView.visible) {
          controller.onViewHidden();
          this.onHidden();
        }
      }),
    ];
    webviewView.onDidDispose(() => {
      controller.detachView(view);
      for (const subscription of subscriptions) {
        subscription.dispose();
      }
    });
  }
}
