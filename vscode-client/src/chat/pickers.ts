/**
 * The chat header's agent and model pickers (native quick picks).
 *
 * - Agent: before the first message it picks the agent the new session starts with; in a
 *   running chat it starts a new chat with the chosen agent (a session keeps its agent).
 * - Model: in a session it asks `relavium/setModel`, which applies from the next turn; each
 *   answer's model stays visible on its message (the durable record of the switch) and in the
 *   footer. Before the first message the choice is remembered and applied once the session
 *   exists, from the configured models of `relavium/listModels`.
 */

import * as vscode from 'vscode';
import {
  Methods,
  type ListAgentsResult,
  type ListModelsResult,
  type SessionModelsResult,
  type SetModelResult,
} from '../protocol';
import type { ChatController } from './chatController';
import { describeError } from './chatController';
import { setUpModel } from './modelSetup';

function failed(action: string, error: unknown): void {
  const { code, message } = describeError(error);
  void vscode.window.showErrorMessage(`Relavium: ${action} failed (${code}): ${message}`);
}

/** Pick the agent: for the next new chat, or a new chat right away when one is open. */
export async function pickAgent(controller: ChatController): Promise<void> {
  let agents: ListAgentsResult['agents'];
  try {
    agents = (await controller.server.request<ListAgentsResult>(Methods.listAgents, {})).agents;
  } catch (error) {
    failed('listing agents', error);
    return;
  }
  const current = controller.model.header.agentRef ?? controller.model.header.nextAgent;
  const choice = await vscode.window.showQuickPick(
    agents.map((agent) => ({
      label: agent.name,
      description: `${agent.id}${agent.model === undefined ? '' : ` · ${agent.model}`}`,
      detail: agent.description,
      picked: agent.id === current,
      agentId: agent.id,
    })),
    { placeHolder: 'Agent for the chat (a session keeps its agent: picking another starts a new chat)' },
  );
  if (choice === undefined) {
    return;
  }
  const open =
    controller.model.sessionId !== undefined && choice.agentId !== controller.model.header.agentRef;
  if (open) {
    await controller.newChat();
  }
  controller.model.setNext({ agent: choice.agentId });
  controller.changed();
}

interface ModelPick extends vscode.QuickPickItem {
  id: string;
}

/** The model picker's last entry: set up a provider (`relavium/setupModel`). */
const ADD_MODEL: ModelPick = {
  label: '$(add) Add a model…',
  description: 'set up a provider and its key',
  id: '',
};

async function modelItems(controller: ChatController, sessionId: string | undefined): Promise<ModelPick[]> {
  if (sessionId !== undefined) {
    const result = await controller.server.request<SessionModelsResult>(Methods.sessionModels, { sessionId });
    return result.choices.map((choice) => ({
      label: choice.model,
      description: `on ${choice.provider}${choice.id === result.current.id ? ' · current' : ''}`,
      id: choice.id,
    }));
  }
  const result = await controller.server.request<ListModelsResult>(Methods.listModels, {});
  return result.models
    .filter((model) => model.configured)
    .map((model) => ({ label: model.model, description: `on ${model.providerId}`, id: model.ref }));
}

/** Pick the model asked first from the next turn on. */
export async function pickModel(controller: ChatController): Promise<void> {
  const sessionId = controller.model.sessionId;
  let items: ModelPick[];
  try {
    items = await modelItems(controller, sessionId);
  } catch (error) {
    failed('listing models', error);
    return;
  }
  const choice = await vscode.window.showQuickPick([...items, ADD_MODEL], {
    placeHolder: 'Model to ask first from the next turn on',
  });
  if (choice === undefined) {
    return;
  }
  if (choice === ADD_MODEL) {
    await setUpModel(controller);
    return;
  }
  if (sessionId === undefined || controller.model.sessionId !== sessionId) {
    controller.model.setNext({ model: choice.id });
    controller.changed();
    return;
  }
  await controller.switchModel(choice.id);
}

/**
 * Ask the server to switch the session's model; the view notes it in the transcript. The
 * server keeps the choice with the session, so a restart or another window asks the same model.
 */
export async function switchModel(
  controller: ChatController,
  sessionId: string,
  model: string,
): Promise<boolean> {
  try {
    const result = await controller.server.request<SetModelResult>(Methods.setModel, { sessionId, model });
    if (controller.model.sessionId === sessionId) {
      controller.model.modelSwitched(result.current.model);
      controller.changed();
    }
    return true;
  } catch (error) {
    failed('switching the model', error);
    return false;
  }
}
