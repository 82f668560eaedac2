// sarif-validate.js FILE DIR: check a SARIF log against the SARIF 2.1.0
// JSON schema that @microsoft/jest-sarif ships (DIR: that package), with
// the ajv 6 beside it (the schema is draft-04). Exits 1 with the errors.
'use strict';
const fs = require('fs');
const path = require('path');

const [file, pkg] = process.argv.slice(2);
const Ajv = require(require.resolve('ajv', { paths: [pkg] }));
const ajvDir = path.dirname(require.resolve('ajv/package.json', { paths: [pkg] }));
const schema = JSON.parse(fs.readFileSync(path.join(pkg, 'lib/schemas/sarif-2.1.0-rtm.5.json'), 'utf8'));
const ajv = new Ajv({ schemaId: 'id', allErrors: true, meta: false, validateSchema: false });
ajv.addMetaSchema(require(path.join(ajvDir, 'lib/refs/json-schema-draft-04.json')));
const validate = ajv.compile(schema);
const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
if (!validate(doc)) {
	console.error(JSON.stringify(validate.errors, null, 2));
	process.exit(1);
}
