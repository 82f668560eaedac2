// heap-samples.js FILE: decode a pprof file with the npm pprof-format package
// (independent of hotloop's reader) and print one JSON line per sample: its
// string labels, the functions of its stack (leaf first; the last line of a
// location, its outermost function) and its values by sample type name.
// Also a first line with the sample types, default_sample_type, period type,
// period and comments.
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { Profile } = require('pprof-format');

let data = fs.readFileSync(process.argv[2]);
if (data[0] === 0x1f && data[1] === 0x8b)
	data = zlib.gunzipSync(data);
const p = Profile.decode(data);
const str = (i) => p.stringTable.strings[Number(i)];
const locs = new Map(p.location.map((l) => [Number(l.id), l]));
const fns = new Map(p.function.map((f) => [Number(f.id), f]));
const types = p.sampleType.map((t) => str(t.type));

console.log(JSON.stringify({
	sample_types: p.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`),
	default: str(p.defaultSampleType),
	period_type: `${str(p.periodType.type)}/${str(p.periodType.unit)}`,
	period: Number(p.period),
	comments: p.comment.map(str),
}));
for (const s of p.sample) {
	const labels = {};
	for (const l of s.label)
		labels[str(l.key)] = Number(l.str) ? str(l.str) : Number(l.num);
	const stack = [];
	for (const id of s.locationId) {
		const loc = locs.get(Number(id));
		for (const line of loc.line)
			stack.push(str(fns.get(Number(line.functionId)).name));
	}
	const values = {};
	s.value.forEach((v, i) => { values[types[i]] = Number(v); });
	console.log(JSON.stringify({ labels, stack, values }));
}
