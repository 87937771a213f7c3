// ESLint flat config for the VS Code client (run from the repository root:
// `eslint -c vscode-client/eslint.config.mjs vscode-client`).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export default tseslint.config(
  { ignores: ['vscode-client/out-test/**', 'vscode-client/e2e/fixture/**', 'vscode-client/e2e/screenshots/**'] },
  {
    files: ['vscode-client/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.strictTypeChecked, ...tseslint.configs.stylisticTypeChecked],
    languageOptions: {
      parserOptions: { project: ['./tsconfig.json'], tsconfigRootDir: here },
      globals: globals.node,
    },
    rules: {
      eqeqeq: 'error',
      curly: 'error',
      'no-console': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    files: ['vscode-client/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      // node:test's describe/it return promises the runner awaits.
      '@typescript-eslint/no-floating-promises': 'off',
      curly: 'off',
    },
  },
  {
    files: ['vscode-client/**/*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { ...globals.node } },
    rules: { eqeqeq: 'error' },
  },
  {
    // The e2e runner passes functions to the browser page (page.evaluate).
    files: ['vscode-client/e2e/**/*.mjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
);
