// speedscope-validate.js FILE SCHEMA: check a speedscope file against the
// schema speedscope publishes (file-format-schema.json), with ajv. Exits
// 1 and prints the errors when it does not conform.
'use strict';
const fs = require('fs');
const Ajv = require('ajv');

const [file, schemaPath] = process.argv.slice(2);
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
delete schema.$schema;	// draft-07 meta-schema id; ajv knows the draft
const ajv = new Ajv({ strict: false, allErrors: true });
const validate = ajv.compile(schema);
const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
if (!validate(doc)) {
	console.error(JSON.stringify(validate.errors, null, 2));
	process.exit(1);
}
