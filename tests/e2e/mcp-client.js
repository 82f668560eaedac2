// mcp-client.js: drives `hotloop mcp` with the official TypeScript SDK's
// client (Client + StdioClientTransport) for t9950, and checks every tool
// result's structuredContent against the tool's outputSchema with ajv.
//   node mcp-client.js example CONFIG.json   record -> brief -> compare on the example, and the rest
//   node mcp-client.js cancel CONFIG.json    a bench cancelled halfway leaves no process behind
// CONFIG: { npm, hotloop, dir, args?, log }. Prints one line per check; exits non-zero on the first failure.
'use strict';
const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');

const [mode, configPath] = process.argv.slice(2);
const config = JSON.parse(fs.readFileSync(configPath, 'utf8'));
const req = createRequire(path.join(config.npm, 'node_modules', 'x.js'));
const { Client } = req('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = req('@modelcontextprotocol/sdk/client/stdio.js');
const Ajv = req('ajv');

const TOOLS = ['record', 'report', 'brief', 'flame', 'asm', 'bench', 'compare', 'scale', 'scenario',
	'kb_search', 'kb_show', 'loop_status'];

function check(cond, what, detail) {
	if (!cond) {
		console.log(`not ok: ${what}${detail === undefined ? '' : ': ' + JSON.stringify(detail).slice(0, 2000)}`);
		process.exit(1);
	}
	console.log(`ok: ${what}`);
}

async function connect() {
	const transport = new StdioClientTransport({
		command: config.hotloop, args: ['mcp', ...(config.args || [])], cwd: config.dir,
		stderr: fs.openSync(config.log, 'a'),
	});
	const client = new Client({ name: 'hotloop-t9950', version: '1.0.0' });
	const errors = [];
	client.onerror = (e) => errors.push(String(e));
	await client.connect(transport);
	return { client, transport, errors };
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = {};

async function listTools(client) {
	const { tools } = await client.listTools();
	for (const t of tools)
		validators[t.name] = ajv.compile(t.outputSchema);
	return tools;
}

// call a tool; its structuredContent must validate against the tool's outputSchema
async function call(client, name, args, opts) {
	// the SDK's default is a minute: compare builds and measures, on a loaded machine too
	const r = await client.callTool({ name, arguments: args }, undefined, Object.assign({ timeout: 900000 }, opts));
	if (!r.isError) {
		const v = validators[name];
		check(r.structuredContent && v(r.structuredContent), `${name}: structuredContent matches its outputSchema`,
			v.errors || r);
		check(r.content[0].type === 'text' && r.content[0].text.length > 0, `${name}: a text rendering too`);
	}
	return r;
}

function children(pid) {
	let out = [];
	try {
		for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
			const c = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
			if (c)
				out = out.concat(c.split(/\s+/).map(Number));
		}
	} catch (e) { /* gone */ }
	return out;
}

function alive(pid) {
	try {
		process.kill(pid, 0);
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		return !/^\d+ \(.*\) Z/.test(stat);	// a zombie has exited
	} catch (e) {
		return false;
	}
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function example() {
	const { client, transport, errors } = await connect();
	const v = client.getServerVersion();
	check(v && v.name === 'hotloop', 'initialize: the server is hotloop', v);
	check(client.getServerCapabilities().tools && client.getServerCapabilities().resources,
		'initialize: tools and resources are offered');

	const tools = await listTools(client);
	const names = tools.map((t) => t.name).sort();
	check(JSON.stringify(names) === JSON.stringify([...TOOLS].sort()), 'tools/list: every tool', names);
	for (const t of tools) {
		check(t.inputSchema && t.inputSchema.type === 'object' && t.outputSchema && t.outputSchema.type === 'object' &&
			t.description, `tools/list: ${t.name} has inputSchema, outputSchema and a description`);
		ajv.compile(t.inputSchema);
	}

	// record -> brief -> compare, the example's own workflow
	const notes = [];
	let r = await call(client, 'record', { workload: 'big' }, { onprogress: (p) => notes.push(p) });
	check(!r.isError, 'record: the big workload recorded', r.content);
	const run = r.structuredContent.run;
	check(r.structuredContent.samples > 0 && fs.existsSync(r.structuredContent.profile), 'record: samples and a profile',
		r.structuredContent);
	check(notes.length > 0 && notes.every((p, i) => i === 0 || p.progress > notes[i - 1].progress),
		'record: progress notifications, each further than the one before', notes);

	r = await call(client, 'brief', { run });
	check(!r.isError, 'brief: of the run', r.content);
	check(r.structuredContent.hotspots[0].function === 'find_word', 'brief: the planted hot function first',
		r.structuredContent.hotspots.map((h) => h.function));
	check(r.content[0].text.includes('find_word'), 'brief: the Markdown names it too');

	r = await call(client, 'brief', {});
	check(!r.isError && r.structuredContent.hotspots[0].function === 'find_word', 'brief: the latest run by default');

	r = await call(client, 'report', { run, top: 5 });
	check(!r.isError && r.structuredContent.rows.length <= 5, 'report: five rows', r.content);

	r = await call(client, 'asm', { binary: 'wordfreq', function: 'find_word', run });
	check(!r.isError && r.structuredContent.instructions.length > 0, 'asm: find_word disassembled', r.content);

	r = await call(client, 'flame', { run });
	check(!r.isError && fs.readFileSync(r.structuredContent.svg, 'utf8').includes('find_word'), 'flame: an SVG with find_word',
		r.content);

	r = await call(client, 'bench', { workload: 'small', runs: 2, warmup: 0 });
	check(!r.isError && r.structuredContent.runs.length === 2 && r.structuredContent.complete, 'bench: two runs', r.content);

	// the candidate on its branch (the shell committed it): both built outside the tree and measured
	const cnotes = [];
	r = await call(client, 'compare', { base: 'main', cand: 'cand', pairs: 6 }, { onprogress: (p) => cnotes.push(p) });
	check(!r.isError, 'compare: main against the candidate branch', r.content);
	check(['keep', 'reject', 'inconclusive'].includes(r.structuredContent.verdict), 'compare: a verdict', r.structuredContent.verdict);
	check(r.content[0].text.includes(r.structuredContent.verdict), 'compare: the text says it');
	check(cnotes.some((p) => /pair|run/.test(p.message || '')), 'compare: progress per run or pair', cnotes.slice(0, 5));
	console.log(`note: compare said ${r.structuredContent.verdict} (${(r.structuredContent.reasons || []).join('; ')})`);

	// the rest, with their errors
	r = await call(client, 'loop_status', {});
	check(!r.isError && r.structuredContent.running === false, 'loop_status: no loop running');
	r = await call(client, 'kb_search', { words: ['hash'] });
	check(!r.isError && r.structuredContent.total === 0, 'kb_search: an empty knowledge base');
	r = await call(client, 'kb_show', { slug: 'nothing-here' });
	check(r.isError && /no attempt 'nothing-here'/.test(r.content[0].text), 'kb_show: an unknown slug is a tool error with lib\'s message',
		r.content);
	r = await call(client, 'scenario', { name: 'none' });
	check(r.isError && /unknown scenario 'none'/.test(r.content[0].text), 'scenario: an unknown one is a tool error', r.content);
	r = await call(client, 'scale', { workload: 'big' });
	check(r.isError && /\{n\}/.test(r.content[0].text), 'scale: a workload without {n} is a tool error', r.content);
	r = await call(client, 'report', { profile: '/etc/passwd' });
	check(r.isError && /outside the project/.test(r.content[0].text), 'report: a path outside the project is refused', r.content);
	r = await call(client, 'bench', { command: ['true'] });
	check(r.isError && /--allow-commands/.test(r.content[0].text), 'bench: a command needs --allow-commands', r.content);
	r = await call(client, 'bench', { runs: 'ten' });
	check(r.isError && /invalid argument 'runs'/.test(r.content[0].text), 'bench: a bad argument is a tool error', r.content);
	let threw = null;
	try {
		await client.callTool({ name: 'no_such_tool', arguments: {} });
	} catch (e) {
		threw = e;
	}
	check(threw && threw.code === -32602 && /unknown tool/.test(threw.message), 'tools/call: an unknown tool is a JSON-RPC error',
		threw && threw.message);

	// resources
	const { resources } = await client.listResources();
	const uri = `hotloop://runs/${run}/brief`;
	check(resources.some((x) => x.uri === uri), 'resources/list: the run\'s brief', resources.map((x) => x.uri));
	const read = await client.readResource({ uri });
	check(read.contents[0].text.includes('find_word'), 'resources/read: the brief names find_word');
	const rep = await client.readResource({ uri: `hotloop://report/.hotloop/runs/${run}/profile.pb.gz` });
	check(rep.contents[0].text.includes('find_word'), 'resources/read: a profile\'s report by its path');
	const { resourceTemplates } = await client.listResourceTemplates();
	check(resourceTemplates.length > 0, 'resources/templates/list');
	threw = null;
	try {
		await client.readResource({ uri: 'hotloop://runs/nope/brief' });
	} catch (e) {
		threw = e;
	}
	check(threw && threw.code === -32002 && /no run 'nope'/.test(threw.message), 'resources/read: an unknown run is -32002 with lib\'s message',
		threw && threw.message);

	check(errors.length === 0, 'the stream stayed clean: no transport errors', errors);
	await client.close();
}

async function cancel() {
	const { client, transport, errors } = await connect();
	await listTools(client);
	const server = transport.pid;
	const pids = path.join(config.dir, 'pids');

	// what children inherit as stdout is the server's stderr, not the protocol's pipe
	check(fs.readlinkSync(`/proc/${server}/fd/1`) === fs.readlinkSync(`/proc/${server}/fd/2`) &&
		fs.readlinkSync(`/proc/${server}/fd/0`) === '/dev/null',
		'the server\'s fd 1 is its stderr and fd 0 /dev/null: children cannot reach the stream',
		[0, 1, 2].map((fd) => fs.readlinkSync(`/proc/${server}/fd/${fd}`)));

	// a noisy workload prints JSON-RPC look-alikes on stdout: the stream must not see them
	let r = await call(client, 'record', { workload: 'noisy', build: false });
	check(!r.isError && r.structuredContent.exit_status === 0, 'record: the noisy workload', r.content);
	r = await call(client, 'bench', { workload: 'noisy', runs: 2, warmup: 0 });
	check(!r.isError && r.structuredContent.complete, 'bench: the noisy workload', r.content);

	const ac = new AbortController();
	const started = Date.now();
	const p = call(client, 'bench', { workload: 'slow', runs: 5, warmup: 0 }, { signal: ac.signal });
	let seen = [];
	while (Date.now() - started < 120000) {
		if (fs.existsSync(pids))
			seen = fs.readFileSync(pids, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
		if (seen.length >= 2)
			break;
		await sleep(100);
	}
	check(seen.length >= 2 && seen.every(alive), 'bench: the slow workload and its child run', seen);
	ac.abort('enough');
	let threw = null;
	try {
		await p;
	} catch (e) {
		threw = e;
	}
	check(threw !== null, 'bench: the cancelled call ends at once for the client');
	// the server kills the run: give it time (no timing asserted: up to a minute)
	let left = seen;
	for (let i = 0; i < 600 && (left.length || children(server).length); i++) {
		await sleep(100);
		left = seen.filter(alive);
	}
	check(left.length === 0, 'cancel: the workload and its child are gone', left);
	check(children(server).length === 0, 'cancel: the server has no process left (launcher, workload)', children(server));

	// the flag was reset: the next long tool runs whole
	r = await call(client, 'bench', { workload: 'noisy', runs: 2, warmup: 0 });
	check(!r.isError && r.structuredContent.complete && r.structuredContent.runs.length === 2,
		'bench: the next one runs whole after a cancel', r.content);
	r = await call(client, 'loop_status', {});
	check(!r.isError, 'loop_status: the server still answers');
	check(errors.length === 0, 'the stream stayed clean: no transport errors', errors);
	await client.close();
}

(mode === 'example' ? example() : cancel()).catch((e) => {
	console.log(`not ok: ${e && e.stack ? e.stack : e}`);
	process.exit(1);
});
