import js from '@eslint/js';
import drizzle from 'eslint-plugin-drizzle';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['.next/**', 'node_modules/**', 'drizzle/**', '.data*/**', 'test-results/**', 'playwright-report/**', 'next-env.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly' },
    },
    plugins: { drizzle },
    rules: {
      'drizzle/enforce-delete-with-where': ['error', { drizzleObjectName: ['db', 'tx'] }],
      'drizzle/enforce-update-with-where': ['error', { drizzleObjectName: ['db', 'tx'] }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
    },
  },
  {
    // The core is pure: no database, framework, network or other layer of the project.
    files: ['server/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['~/*', 'next', 'next/*', 'next-auth*', 'react', 'react-dom', '@trpc/*', 'drizzle-orm*', 'postgres', '@electric-sql/*'], message: 'server/core is pure: pass values in, get values out.' },
            { group: ['**/db/*', '**/services/*', '**/api/*', '**/adapters/*', '**/app/*'], message: 'server/core must not import other layers.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'process', message: 'server/core reads no environment: take configuration as a parameter.' }],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Inject a clock into server/core.' },
        { object: 'Math', property: 'random', message: 'Inject randomness into server/core.' },
      ],
    },
  },
  {
    // Arrows point down: the server never reaches into the pages (formatting lives in server/i18n/format.ts).
    files: ['server/**/*.ts', 'db/**/*.ts'],
    ignores: ['server/core/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['~/app/*', '**/app/*'], message: 'server/ and db/ must not import from app/: move what both need into server/.' }] }],
    },
  },
  {
    // No import circles in server/ and db/ (issue #25): in a circle no module is the lower one, and a module
    // may run before what it imports has loaded. The resolver reads tsconfig's paths, so `~/` imports count;
    // type-only imports are not followed (they vanish at run time). Costs about 12 s of CPU per full lint.
    files: ['server/**/*.ts', 'db/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.tsx', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
