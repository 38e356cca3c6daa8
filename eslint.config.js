// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import agentd from './tools/eslint/plugin.js';
import { LAYERS } from './tools/eslint/layers-config.js';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules',
      'bench/results',
      'data',
      'coverage',
      'scratch',
      'dist',
      '.dist-next',
      '.dist-old',
      // Each example is a project of its own (its own install, tsconfig and checks: .ci/run type-checks it).
      'examples',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Tests read untyped JSON off the wire and let expect() check its shape.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  { files: ['**/*.js', '**/*.mjs'], ignores: ['web/**'], languageOptions: { globals: globals.node } },
  { files: ['web/**/*.js'], languageOptions: { globals: globals.browser } },
  {
    // Budgets for size (small functions and files: ARCHITECTURE.md §6), in lines of code (blank and comment lines
    // skipped). A function over 100 lines needs an exemption by name in tools/eslint/function-budget.json, which
    // only shrinks: no entry is added, an exempted function may shrink, never grow, and leaves the list once it fits
    // (tools/eslint/function-budget.js; docs/development.md).
    files: ['src/**/*.ts', 'machines/**/*.ts'],
    plugins: { agentd },
    rules: {
      'agentd/function-budget': [
        'error',
        { root: import.meta.dirname, max: 100, exemptions: 'tools/eslint/function-budget.json' },
      ],
      'max-lines': ['error', { max: 300, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // House rules on imports (ARCHITECTURE.md §6): components import only what their layer allows.
    files: ['src/**/*.ts', 'machines/**/*.ts'],
    plugins: { agentd },
    rules: { 'agentd/layers': ['error', { root: import.meta.dirname, ...LAYERS }] },
  },
);
