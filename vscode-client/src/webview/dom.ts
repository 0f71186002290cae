/** Tiny DOM helpers for the webview: every string goes in through `textContent`. */

/** Create an element with an optional class and text. */
export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className !== undefined) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** A button that dispatches `action` through the delegated click handler. */
export function actionButton(
  label: string,
  action: string,
  data: Record<string, string> = {},
  className = 'link-button',
): HTMLButtonElement {
  const button = element('button', className, label);
  button.type = 'button';
  button.dataset.action = action;
  for (const [key, value] of Object.entries(data)) {
    button.dataset[key] = value;
  }
  return button;
}
