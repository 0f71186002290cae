/**
 * "Relavium: Set Up a Model": pick a provider (hosted or a local server preset), a model, the
 * server's address for a local one, and the key in a hidden input box; the server stores the
 * key in the OS keychain, writes the user config and checks the provider
 * (`relavium/setupModel`). The key only ever travels in that one request.
 */

import * as vscode from 'vscode';
import {
  Methods,
  type ListProviderPresetsResult,
  type ProviderPresetInfo,
  type SetupModelParams,
  type SetupModelResult,
} from '../protocol';
import type { ChatController } from './chatController';
import { describeError } from './chatController';

interface PresetPick extends vscode.QuickPickItem {
  preset: ProviderPresetInfo;
}

async function pickPreset(presets: ProviderPresetInfo[]): Promise<ProviderPresetInfo | undefined> {
  const hosted = presets.filter((preset) => !preset.local);
  const local = presets.filter((preset) => preset.local);
  const item = (preset: ProviderPresetInfo): PresetPick => ({
    label: preset.label,
    description: preset.id,
    detail: `${preset.needsKey ? 'needs an API key' : 'no key needed'}${preset.baseUrl === undefined ? '' : ` · ${preset.baseUrl}`}`,
    preset,
  });
  const separator = (label: string): vscode.QuickPickItem => ({
    label,
    kind: vscode.QuickPickItemKind.Separator,
  });
  const choice = await vscode.window.showQuickPick<PresetPick | vscode.QuickPickItem>(
    [separator('Hosted'), ...hosted.map(item), separator('On your machine'), ...local.map(item)],
    { placeHolder: 'Relavium: which provider serves the model?', matchOnDescription: true },
  );
  return choice !== undefined && 'preset' in choice ? choice.preset : undefined;
}

async function pickModelName(preset: ProviderPresetInfo): Promise<string | undefined> {
  const other = 'Another model…';
  if (preset.suggestedModels.length > 0) {
    const choice = await vscode.window.showQuickPick([...preset.suggestedModels, other], {
      placeHolder: `Model of ${preset.label}`,
    });
    if (choice === undefined || choice !== other) {
      return choice;
    }
  }
  const typed = await vscode.window.showInputBox({
    title: `Model of ${preset.label}`,
    prompt: 'The model name as the provider spells it',
    ignoreFocusOut: true,
    validateInput: (value) => (/^\S+$/.test(value.trim()) ? undefined : 'A model name, without spaces'),
  });
  return typed?.trim();
}

async function askBaseUrl(preset: ProviderPresetInfo): Promise<string | undefined | null> {
  if (!preset.local) {
    return undefined; // hosted: the preset's address
  }
  const typed = await vscode.window.showInputBox({
    title: `Where ${preset.label} listens`,
    value: preset.baseUrl ?? 'http://127.0.0.1:8080/v1',
    prompt: 'The OpenAI-compatible base URL (usually ending in /v1)',
    ignoreFocusOut: true,
    validateInput: (value) => (/^https?:\/\/\S+$/.test(value.trim()) ? undefined : 'An http(s):// URL'),
  });
  if (typed === undefined) {
    return null; // cancelled
  }
  const url = typed.trim();
  return url === preset.baseUrl ? undefined : url;
}

async function askKey(preset: ProviderPresetInfo): Promise<string | undefined | null> {
  const typed = await vscode.window.showInputBox({
    title: `API key for ${preset.label}`,
    prompt: preset.needsKey
      ? 'Stored in the OS keychain; never in settings or files. Leave empty to keep a stored key.'
      : 'Only if your server was started with a key (stored in the OS keychain). Usually empty.',
    password: true,
    ignoreFocusOut: true,
    validateInput: (value) =>
      /\s/.test(value.trim()) ? 'The key contains spaces: paste it exactly' : undefined,
  });
  if (typed === undefined) {
    return null;
  }
  return typed.trim() === '' ? undefined : typed.trim();
}

/** Run the whole setup; resolves with the server's answer (undefined when cancelled or failed). */
export async function setUpModel(controller: ChatController): Promise<SetupModelResult | undefined> {
  let presets: ProviderPresetInfo[];
  try {
    presets = (await controller.server.request<ListProviderPresetsResult>(Methods.listProviderPresets, {}))
      .presets;
  } catch (error) {
    const { code, message } = describeError(error);
    void vscode.window.showErrorMessage(
      `Relavium: setting up a model needs the server (${code}): ${message}`,
    );
    return undefined;
  }
  const preset = await pickPreset(presets);
  const model = preset === undefined ? undefined : await pickModelName(preset);
  if (preset === undefined || model === undefined || model === '') {
    return undefined;
  }
  const baseUrl = await askBaseUrl(preset);
  const apiKey = baseUrl === null ? null : await askKey(preset);
  if (baseUrl === null || apiKey === null) {
    return undefined;
  }
  const params: SetupModelParams = {
    preset: preset.id,
    model,
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(baseUrl === undefined ? {} : { baseUrl }),
  };
  let result: SetupModelResult;
  try {
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Relavium: setting up ${preset.label}…` },
      () => controller.server.request<SetupModelResult>(Methods.setupModel, params),
    );
  } catch (error) {
    const { code, message } = describeError(error);
    void vscode.window.showErrorMessage(`Relavium: the setup failed (${code}): ${message}`);
    return undefined;
  }
  const where = {
    keychain: ' The key is in the OS keychain.',
    file: ' The key is in your keyring file.',
    none: '',
  };
  const summary = `Relavium: new chats use ${result.defaultModel} (${result.configPath}).${where[result.keyStored]}`;
  if (result.check.ok) {
    void vscode.window.showInformationMessage(`${summary} ✓ ${result.check.message}`);
  } else {
    void vscode.window.showWarningMessage(`${summary} ✗ ${result.check.message}`);
  }
  await controller.onModelSetUp();
  return result;
}
