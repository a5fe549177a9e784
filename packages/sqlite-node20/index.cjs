// Node.js 20 has no node:sqlite; devicehub loads better-sqlite3 12 through this package only there
// (lib/store/dialects/sqlite-driver.ts). Its engines (20.x) keep npm from installing it elsewhere.
module.exports = require('better-sqlite3')
