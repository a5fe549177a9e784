'use strict'
// A tap plugin that loads TypeScript test files with tsx instead of @tapjs/typescript's ts-node
// (package.json: "plugin": ["!@tapjs/typescript", "devicehub-tap-tsx/index.cjs"]; named by a file of
// the package, because tap's plugin installer looks a bare package name up in the npm registry,
// where this private package is not, and leaves paths alone). ts-node transpiles
// every module of every test process with the TypeScript compiler and keeps no cache: importing
// the server took ~6 s of CPU per test file against ~2.5 s with tsx, whose esbuild transforms
// are cached on disk. The official @tapjs/tsx does the same, but each release pins one exact
// @tapjs/core, which lags tap's own (3.4.8 wants 4.5.8; tap 21.8 ships 4.6.0).
// package.json's `prepare` runs `tap build`: a tap run that has to build its plugins first still
// starts its test files with the loaders it loaded before the build (ts-node).

// Registered with --import in every test process (before tap's own process-info hook).
exports.importLoader = 'tsx'
exports.preload = true
// The files tap counts as tests (@tapjs/typescript declared these; without it only .js and kin).
exports.testFileExtensions = ['ts', 'mts', 'cts']
