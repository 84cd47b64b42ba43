// Validates Kubernetes manifests offline: every object of every YAML file
// given, against the API's schema for its kind (kubernetes-models), with no
// cluster. Exits 1 naming the file, the object and what is wrong with it.
//
//   npm ci && node validate.mjs ../../lp-kube/<launch>/launch.yaml
//
// The schemas check types, required fields and enums; like the API server's
// older default, they let unknown fields through.

import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

// The module of a kind: core objects (apiVersion v1) are under v1/, the
// others under <group>/<version>/.
async function modelOf(apiVersion, kind) {
  if (typeof apiVersion !== "string" || typeof kind !== "string" ||
      !/^[A-Za-z0-9.\/]+$/.test(apiVersion) || !/^[A-Za-z0-9]+$/.test(kind))
    throw new Error("it needs a string apiVersion and kind");
  try {
    const module = await import(`kubernetes-models/${apiVersion}/${kind}`);
    return module[kind];
  } catch {
    throw new Error(`kubernetes-models has no ${kind} of ${apiVersion}`);
  }
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node validate.mjs FILE.yaml...");
  process.exit(2);
}
let failed = 0, checked = 0;
for (const file of files) {
  let documents;
  try {
    documents = parseAllDocuments(readFileSync(file, "utf8"), { uniqueKeys: true });
  } catch (e) {
    console.error(`${file}: cannot read it: ${e.message}`);
    failed++;
    continue;
  }
  for (const [i, document] of documents.entries()) {
    if (document.errors.length > 0) {
      console.error(`${file}, document ${i + 1}: not YAML: ${document.errors[0].message}`);
      failed++;
      continue;
    }
    const object = document.toJS();
    if (object === null) continue;  // an empty document, as after a last ---
    const name = `${object.kind ?? "?"} ${object.metadata?.name ?? "?"}`;
    try {
      const Model = await modelOf(object.apiVersion, object.kind);
      new Model(object).validate();
      checked++;
    } catch (e) {
      console.error(`${file}: ${name} (document ${i + 1}) is not valid: ${e.message}`);
      failed++;
    }
  }
}
if (failed > 0) {
  console.error(`${failed} object(s) not valid, ${checked} valid`);
  process.exit(1);
}
console.log(`${checked} object(s) valid in ${files.length} file(s)`);
