// pprof-check.js FILE: decode a pprof file (gzipped or not) with the npm
// pprof-format package, an implementation of profile.proto independent of
// hotloop's, and print what it found as JSON: sample types, the total of
// each, string_table[0], and the function with the most flat (leaf) value
// of the first sample type. Exits 1 when the file does not decode, or a
// string index or id in it points at nothing.
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { Profile } = require('pprof-format');

let data = fs.readFileSync(process.argv[2]);
if (data[0] === 0x1f && data[1] === 0x8b)
	data = zlib.gunzipSync(data);
const p = Profile.decode(data);
const problems = [];
const str = (i) => {
	const s = p.stringTable.strings[Number(i)];
	if (s === undefined)
		problems.push(`string index ${i} is past the table`);
	return s;
};
const locs = new Map(p.location.map((l) => [Number(l.id), l]));
const fns = new Map(p.function.map((f) => [Number(f.id), f]));

const totals = p.sampleType.map(() => 0);
const flat = new Map();
for (const s of p.sample) {
	s.value.forEach((v, i) => { totals[i] += Number(v); });
	for (const id of s.locationId)
		if (!locs.has(Number(id)))
			problems.push(`sample refers to location ${id}, which is absent`);
	const leaf = s.locationId.length ? locs.get(Number(s.locationId[0])) : undefined;
	const line = leaf && leaf.line.length ? leaf.line[0] : undefined;
	const fn = line ? fns.get(Number(line.functionId)) : undefined;
	const name = fn ? str(fn.name) : '[unknown]';
	flat.set(name, (flat.get(name) || 0) + Number(s.value[0]));
}
let top = null;
for (const [name, v] of flat)
	if (top === null || v > flat.get(top))
		top = name;
const sampleTypes = p.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`);
if (problems.length) {
	console.error(problems.slice(0, 10).join('\n'));
	process.exit(1);
}
console.log(JSON.stringify({
	sample_types: sampleTypes,
	totals,
	string0: p.stringTable.strings[0],
	samples: p.sample.length,
	mappings: p.mapping.length,
	top,
}));
