// The scripted demo conversation, read from the Python package so the e2e drives exactly
// what the bundled offline model has recordings for (relavium_lsp/llm/demo_script.py).
import { spawnSync } from 'node:child_process';

const SCRIPT = `
import json
from relavium_lsp.llm import demo_script as d
print(json.dumps({
    "files": d.DEMO_FILES,
    "sourcePath": d.DEMO_SOURCE_PATH,
    "sourceAfter": d.DEMO_SOURCE_AFTER,
    "selection": {"path": d.DEMO_SELECTION.path, "startLine": d.DEMO_SELECTION.start_line,
                  "endLine": d.DEMO_SELECTION.end_line},
    "askAboutSelection": d.ASK_ABOUT_SELECTION,
    "askForChange": d.ASK_FOR_CHANGE,
    "selectionAnswer": d.SELECTION_ANSWER,
    "changeSummary": d.CHANGE_SUMMARY,
}))
`;

/** Load the demo script's data with the project's Python. */
export function loadDemo(python) {
  const result = spawnSync(python, ['-c', SCRIPT], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.status !== 0) {
    throw new Error(`reading the demo script failed:\n${result.stderr}`);
  }
  return JSON.parse(result.stdout);
}
