import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyUnifiedDiff } from '../src/model/unifiedDiff';

// Diffs exactly as relavium-lsp sends them (tools/text_edit.py: file_diff).
const APP = 'def add(a, b):\n    return a - b\n\n\nprint(add(2, 3))\n';
const FIXED_DIFF = [
  '--- a/app.py',
  '+++ b/app.py',
  '@@ -1,5 +1,5 @@',
  ' def add(a, b):',
  '-    return a - b',
  '+    return a + b',
  ' ',
  ' ',
  ' print(add(2, 3))',
  '',
].join('\n');

describe('applyUnifiedDiff', () => {
  it('rebuilds the proposed text from the editor text', () => {
    assert.equal(applyUnifiedDiff(APP, FIXED_DIFF), APP.replace('a - b', 'a + b'));
  });

  it('creates a new file and honours a missing final newline', () => {
    const created = '--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n';
    assert.equal(applyUnifiedDiff('', created), 'a\nb');
  });

  it('refuses a diff that does not fit the text, or was cut', () => {
    assert.equal(applyUnifiedDiff(APP.replace('a - b', 'a * b'), FIXED_DIFF), undefined);
    assert.equal(applyUnifiedDiff(APP, FIXED_DIFF + '[... diff cut: 3 more lines ...]\n'), undefined);
  });
});
