// Lint: the recommended rule sets of ESLint and typescript-eslint, plus the layout rules
// that keep imports honest (`import type`, `node:` prefixes) and functions short enough to read.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tap/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', {
        patterns: [{ regex: '^(fs|path|http|https|crypto|os|url|util|events|child_process|net|stream|timers|assert|readline)(/.*)?$', message: 'Use the node: prefix.' }]
      }]
    }
  },
  {
    // A function a reader can hold in mind: factories return small functions instead of growing.
    files: ['lib/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 150, skipBlankLines: true, skipComments: true }] }
  },
  {
    // packages/sqlite-node20: the CommonJS shim Node 20 requires (see its index.cjs).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' }
  }
)
