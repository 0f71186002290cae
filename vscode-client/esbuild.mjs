// Bundles the extension host (Node, CommonJS, `vscode` external), the webview script
// (browser IIFE) and, with --tests, the unit tests for `node --test`.
import { readdirSync, rmSync } from 'node:fs';
import * as esbuild from 'esbuild';

const args = new Set(process.argv.slice(2));
const production = args.has('--production');

const common = {
  bundle: true,
  logLevel: 'warning',
  sourcemap: production ? false : 'linked',
  minify: production,
  legalComments: 'none',
};

const builds = args.has('--tests')
  ? [
      {
        ...common,
        entryPoints: readdirSync('test')
          .filter((name) => name.endsWith('.test.ts'))
          .map((name) => `test/${name}`),
        outdir: 'out-test',
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        sourcemap: 'inline',
      },
    ]
  : [
      {
        ...common,
        entryPoints: ['src/extension.ts'],
        outfile: 'dist/extension.js',
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        external: ['vscode'],
      },
      {
        ...common,
        entryPoints: ['src/webview/main.ts'],
        outfile: 'dist/webview.js',
        platform: 'browser',
        format: 'iife',
        target: 'es2022',
      },
    ];

if (args.has('--tests')) {
  rmSync('out-test', { recursive: true, force: true });
}

if (args.has('--watch')) {
  const contexts = await Promise.all(builds.map((options) => esbuild.context(options)));
  await Promise.all(contexts.map((context) => context.watch()));
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
