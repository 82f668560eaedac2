// serve-browser.js: the dashboard of `hotloop serve` in headless Chromium,
// driven by puppeteer-core. Used by t9910-serve-browser.sh.
//
//   node serve-browser.js pages    CONFIG   every page of the live server
//   node serve-browser.js snapshot CONFIG   every page of a snapshot, from file://
//   node serve-browser.js live     CONFIG   rows written to the store appear
//
// CONFIG is a JSON file: npm (build/npm/node_modules), browser, url (the
// server's), snapshot (its index.html), db, sqlite3, shots (where the
// screenshots go) and expect: what the fixture holds, read from the store.
// Prints "ok WHAT" per check and "FAIL WHAT: why" for one that fails; exits
// non-zero when any failed. A page passes only with no console message of
// level error or warning, no page error, no failed request and no response
// of 400 or more.
'use strict';
const fs = require('fs');
const path = require('path');
const net = require('net');
const { execFile, spawn } = require('child_process');

const [mode, configFile] = process.argv.slice(2);
const cfg = JSON.parse(fs.readFileSync(configFile, 'utf8'));
const X = cfg.expect;
const puppeteer = require(path.join(cfg.npm, 'puppeteer-core'));

let failed = 0;
function ok(what) { console.log('ok ' + what); }
function fail(what, why) { failed++; console.log('FAIL ' + what + ': ' + why); }
function check(what, cond, why) { if (cond) ok(what); else fail(what, why || 'not so'); }

// ---- the browser ------------------------------------------------------------

async function launch() {
	return puppeteer.launch({
		executablePath: cfg.browser,
		headless: 'shell',
		args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage',
			'--user-data-dir=' + cfg.profile],
		defaultViewport: { width: 1280, height: 900 },
		protocolTimeout: 60000,
	});
}

// A tab that keeps what went wrong in it: console errors and warnings,
// page errors, failed requests, error responses, requests off 'allowed'.
async function tab(browser, allowed) {
	const page = await browser.newPage();
	const problems = [];

	page.setDefaultTimeout(30000);
	page.on('console', m => {
		if (['error', 'warn', 'warning', 'assert'].includes(m.type()))
			problems.push('console ' + m.type() + ': ' + m.text() +
				(m.location() && m.location().url ? ' (' + m.location().url + ')' : ''));
	});
	page.on('dialog', d => { problems.push('dialog: ' + d.message()); d.dismiss(); });
	page.on('pageerror', e => problems.push('page error: ' + (e && e.message ? e.message : e)));
	page.on('requestfailed', r => {
		// the event stream is cut when the tab closes: not a failure of the page
		if (!page.closing)
			problems.push('request failed: ' + r.url() + ': ' + (r.failure() ? r.failure().errorText : '?'));
	});
	// while the server is down on purpose, the event stream fails to connect;
	// the profiles the fixture put out of reach are refused
	const refused = new RegExp('/api/profiles/(' + (X.refused.length ? X.refused.join('|') : '-') + ')/');
	const push = problems.push.bind(problems);
	problems.push = p => (page.outage && /\/api\/events/.test(p)) || refused.test(p) ? problems.length : push(p);
	page.on('response', r => {
		if (new URL(r.url()).pathname === '/api/events')
			page.apiOrder.push('stream open');
		if (r.status() >= 400)
			problems.push('response ' + r.status() + ': ' + r.url());
	});
	page.apiOrder = [];
	page.on('request', r => {
		const path = new URL(r.url()).pathname;
		if (path.startsWith('/api/') && path !== '/api/events')
			page.apiOrder.push('fetch ' + path);
		if (allowed && !allowed(r.url()))
			problems.push('request off the snapshot: ' + r.url());
	});
	page.problems = problems;
	return page;
}

async function closeTab(page) {
	page.closing = true;
	await page.close();
}

// The view drawn at least once past 'after' (data-ready counts draws)
async function drawn(page, name, after) {
	await page.waitForFunction((n, a) => {
		const m = document.getElementById('main');
		return m && m.getAttribute('data-page') === n && Number(m.getAttribute('data-ready')) > a;
	}, { timeout: 30000 }, name, after || 0);
	return page.$eval('#main', m => Number(m.getAttribute('data-ready')));
}

const texts = (page, sel) => page.$$eval(sel, es => es.map(e => e.textContent.trim()));
const count = (page, sel) => page.$$eval(sel, es => es.length);

// An iframe's document, once loaded: its root element's name and how many <g> it has
async function frameDoc(page, sel) {
	const el = await page.waitForSelector(sel);
	const deadline = Date.now() + 30000;
	let f = await el.contentFrame();

	while (Date.now() < deadline) {
		f = await el.contentFrame();
		if (f) {
			try {
				const d = await f.evaluate(() => document.readyState === 'complete' && document.documentElement ?
					{ root: document.documentElement.localName, frames: document.getElementsByTagName('g').length } : null);
				if (d && d.root !== 'html')
					return d;
				if (d && d.root === 'html' && await f.evaluate(() => document.body && document.body.innerHTML.length > 0))
					return d;
			} catch (e) { /* the frame navigated under us: look again */ }
		}
		await new Promise(r => setTimeout(r, 50));
	}
	return null;
}

// A full-page screenshot. The window is made as tall as the page first:
// Chromium paints no frame (a flame graph) that lies outside the window.
async function shot(page, name) {
	const vp = page.viewport();
	const height = await page.evaluate(() => document.documentElement.scrollHeight);
	const frames = () => page.evaluate(() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))));

	fs.mkdirSync(cfg.shots, { recursive: true });
	await page.setViewport({ width: vp.width, height: Math.min(Math.max(height, vp.height), 16000) });
	await frames();
	await Promise.all(page.frames().filter(f => f !== page.mainFrame()).map(f =>
		f.evaluate(() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))).catch(() => {})));
	await page.screenshot({ path: path.join(cfg.shots, name + '.png'), fullPage: true });
	await page.setViewport(vp);
	await frames();
}

// ---- the pages --------------------------------------------------------------

// Each: its screenshot's name, the route, the view's name, and the checks of what it must show.
const pages = [
	['overview', 'overview', 'overview', async (p, w) => {
		check(w + ': a row per loop', await count(p, 'tr.loop') === X.loops,
			(await count(p, 'tr.loop')) + ' rows, ' + X.loops + ' loops');
		const cards = await texts(p, '.card .value');
		check(w + ': the cards count the attempts', cards[1] === String(X.attempts), 'cards ' + cards.join(' '));
		check(w + ': the activity, newest first', await count(p, '#activity li[data-id]') === Math.min(20, X.activity) &&
			(await p.$eval('#activity li', li => li.getAttribute('data-id'))) === String(X.last_activity),
			'the first line is not ' + X.last_activity);
		check(w + ': the gain chart has a line per workload',
			(await p.$$eval('svg.chart', s => s.length ? s[0].querySelectorAll('path.series').length : 0)) === X.gain_workloads,
			'not ' + X.gain_workloads);
		check(w + ': the hotspots of the newest profile', (await count(p, 'table.hotspots tbody tr')) > 0, 'no hotspot row');
	}],
	['attempts', 'attempts', 'attempts', async (p, w) => {
		const n = await count(p, '#strip a.tick[data-id]');
		check(w + ': a tick per attempt in the store', n === X.attempts, n + ' ticks, ' + X.attempts + ' attempts');
		check(w + ': a row per attempt', (await count(p, 'tr.attempt[data-id]')) === X.attempts, 'not ' + X.attempts);
		const verdicts = await p.$$eval('#strip a.tick', ts => ts.map(t => t.className.replace(/.*v-/, '')).sort());
		check(w + ': the ticks have the verdicts of the store', JSON.stringify(verdicts) === JSON.stringify(X.verdicts),
			verdicts.join(',') + ' against ' + X.verdicts.join(','));
		const colours = await p.$$eval('#strip a.tick', ts => ts.map(t => {
			const v = t.className.replace(/.*v-/, ''), sw = document.querySelector('.legend .swatch.v-' + v);
			return { v, tick: getComputedStyle(t).backgroundColor, legend: sw && getComputedStyle(sw).backgroundColor };
		}));
		const bad = colours.filter(c => c.tick !== c.legend);
		check(w + ': each tick in its verdict\'s colour, as the legend says', !bad.length, JSON.stringify(bad.slice(0, 3)));
		check(w + ': a colour per verdict', new Set(colours.map(c => c.tick)).size === new Set(X.verdicts).size,
			JSON.stringify([...new Set(colours.map(c => c.v + ' ' + c.tick))]));
		check(w + ': the kept attempt\'s tick', (await count(p, '#strip a.tick.v-keep[data-id="' + X.kept.id + '"]')) === 1, 'missing');
		const row = await texts(p, 'tr.attempt[data-id="' + X.kept.id + '"] td');
		check(w + ': the kept attempt\'s row names its function', row.includes(X.kept.function), row.join('|'));
	}],
	['attempt-kept', 'attempts/' + X.kept.id, 'attempts', async (p, w) => {
		const h1 = await texts(p, 'h1');
		check(w + ': the heading', h1[0] && h1[0].startsWith('Attempt #' + X.kept.id), h1.join('|'));
		check(w + ': the keep badge', (await count(p, 'h1 .badge.v-keep')) === 1, 'no .badge.v-keep in h1');
		const dd = await texts(p, 'dl.facts dd');
		check(w + ': the function', dd.includes(X.kept.function), dd.join('|'));
		check(w + ': the commit it became', dd.some(d => d.startsWith(X.kept.commit.slice(0, 12))), dd.join('|'));
		check(w + ': the interval plot', (await count(p, 'svg.interval circle.estimate')) === 1, 'no estimate drawn');
		const pairs = await p.$$eval('svg.chart[data-series="2"]', s => s.map(c => c.querySelectorAll('circle.dot').length));
		check(w + ': the pairs chart has its measurements', pairs.length > 0 && pairs[0] === X.kept.dots,
			'dots ' + pairs.join(',') + ', measured ' + X.kept.dots);
		check(w + ': the diff', (await count(p, 'pre.diff span.add')) > 0 && (await count(p, 'pre.diff span.del')) > 0,
			'no added and removed lines');
		if (X.kept.kb)
			check(w + ': its knowledge base report', (await count(p, 'pre.report')) === 1, 'no pre.report');
	}],
	['attempt-rejected', 'attempts/' + X.rejected.id, 'attempts', async (p, w) => {
		check(w + ': the reject badge', (await count(p, 'h1 .badge.v-reject')) === 1, 'no .badge.v-reject in h1');
		const dd = await texts(p, 'dl.facts dd');
		check(w + ': not kept', dd.includes('not kept'), dd.join('|'));
		check(w + ': its reasons', (await count(p, 'ul.reasons li')) === X.rejected.reasons, 'not ' + X.rejected.reasons);
	}],
	['benchmarks', 'benchmarks', 'benchmarks', async (p, w) => {
		check(w + ': the kept attempt in the history',
			(await count(p, 'tr.bench-point a[href="#attempts/' + X.kept.id + '"]')) > 0, 'no link to #attempts/' + X.kept.id);
		const series = await p.$$eval('svg.chart', s => s.map(c => c.querySelectorAll('circle.dot').length));
		check(w + ': every chart has points', series.length > 0 && series.every(n => n > 0), 'dots per chart ' + series.join(','));
	}],
	['profiles', 'profiles', 'profiles', async (p, w) => {
		const f = await frameDoc(p, 'iframe.flame[src$="api/profiles/' + X.profile + '/flame.svg"]');
		check(w + ': the newest flame graph of the kept attempt\'s workload is an SVG', f && f.root === 'svg' && f.frames > 1,
			JSON.stringify(f));
		await p.waitForSelector('.top[data-run="' + X.profile + '"] table.top-table tbody tr');
		check(w + ': its top functions', (await count(p, '.top[data-run="' + X.profile + '"] tbody tr')) > 0, 'no row');
		const latest = await p.$$eval('.top[data-run]', ts => ts.map(t => Number(t.getAttribute('data-run'))));
		for (const id of latest.filter(id => X.refused.includes(id))) {
			await p.waitForFunction(i => /cannot draw this profile/.test(document.querySelector('.top[data-run="' + i + '"]')
				.previousElementSibling.textContent), {}, id);
			check(w + ': run ' + id + '\'s profile, out of reach, is said to be so, not framed',
				(await count(p, 'iframe[src*="api/profiles/' + id + '/"]')) === 0, 'framed');
		}
		const d = await frameDoc(p, '.diff-holder iframe.flame');
		check(w + ': the differential flame graph is an SVG', d && d.root === 'svg' && d.frames > 1, JSON.stringify(d));
	}],
	['scenarios', 'scenarios', 'scenarios', async (p, w) => {
		const runs = await texts(p, 'tr.scenario-run td:nth-child(2)');
		check(w + ': a row per run', runs.length === X.scenario_runs && runs.includes(X.scenario.run), runs.join('|'));
	}],
	['scenario-run', 'scenarios/' + X.scenario.name + '/' + X.scenario.run, 'scenarios', async (p, w) => {
		const h1 = await texts(p, 'h1');
		check(w + ': the heading', h1[0] === 'Scenario ' + X.scenario.name + ', run ' + X.scenario.run, h1.join('|'));
		const charts = await p.$$eval('svg.chart', s => s.map(c => ({
			series: c.querySelectorAll('path.series').length, dots: c.querySelectorAll('circle.dot').length,
			none: c.querySelectorAll('text.none').length })));
		check(w + ': CPU, memory and each metric have a chart', charts.length === 2 + X.scenario.metrics,
			charts.length + ' charts, ' + X.scenario.metrics + ' metrics');
		check(w + ': every chart has its series', charts.length && charts.every(c => (c.series > 0 || c.dots > 0) && !c.none),
			JSON.stringify(charts));
		check(w + ': a row per phase', (await count(p, 'section:last-of-type tbody tr')) === X.scenario.phases,
			'not ' + X.scenario.phases);
	}],
	['kb', 'kb', 'kb', async (p, w, live) => {
		const all = await count(p, 'tr.kb-entry');
		check(w + ': a row per entry', all === X.kb.entries, all + ' rows, ' + X.kb.entries + ' entries');
		await p.type('#kb-search', X.kb.word);
		const hits = await p.$$eval('tr.kb-entry', rs => rs.map(r => r.getAttribute('data-slug')));
		check(w + ': the search filters', hits.length > 0 && hits.length < all && hits.includes(X.kb.slug),
			'"' + X.kb.word + '": ' + hits.join(','));
		if (live) {
			/* the server's search says the same */
			const api = await p.evaluate(q => fetch('/api/kb?q=' + encodeURIComponent(q)).then(r => r.json()), X.kb.word);
			check(w + ': as the API\'s search', api.entries.length === hits.length, api.entries.length + ' from the API');
		}
		await shot(p, (live ? 'serve' : 'snapshot') + '-kb-search');
		await p.type('#kb-search', ' no-such-word-here');
		check(w + ': nothing matches', (await count(p, 'tr.kb-entry')) === 0 && (await count(p, 'p.empty')) === 1, 'rows left');
		await p.$eval('#kb-search', i => { i.value = ''; i.dispatchEvent(new Event('input')); });
	}],
	['bad-address', 'kb/%E0%A4%A', 'overview', async (p, w) => {
		ok(w + ': a malformed address shows the overview');
	}],
	['kb-entry', 'kb/' + X.kb.slug, 'kb', async (p, w) => {
		const h1 = await texts(p, 'h1');
		check(w + ': the heading is the title', h1[0] && h1[0].startsWith(X.kb.title), h1.join('|'));
		check(w + ': its report', (await p.$$eval('pre.report', e => e.length && e[0].textContent.length)) > 0, 'no report');
	}],
];

// Every page in its own tab, loaded from its address
async function allPages(base, live, allowed) {
	const browser = await launch();

	try {
		for (const [name, route, view, checks] of pages) {
			const w = (live ? '' : 'snapshot ') + '#' + route;
			const page = await tab(browser, allowed);

			try {
				await page.goto(base + '#' + route, { waitUntil: 'load' });
				await drawn(page, view);
				const err = await texts(page, '#main .error');
				check(w + ': drawn', !err.length, err.join('|'));
				const liveText = live ? await page.waitForFunction(() =>
					document.getElementById('live').textContent === 'live').then(() => 'live', () => 'no hello')
					: await page.$eval('#live', e => e.textContent);
				check(w + ': the header says ' + (live ? 'live' : 'snapshot'), liveText === (live ? 'live' : 'snapshot'), liveText);
				// what is committed between the first fetch and the stream's start would come as no event
				if (live)
					check(w + ': the event stream is open before the first fetch', page.apiOrder[0] === 'stream open',
						page.apiOrder.slice(0, 3).join(' '));
				check(w + ': its tab is marked', (await texts(page, '#nav a.here'))[0] !== undefined, 'no #nav a.here');
				await checks(page, w, live);
				await shot(page, (live ? 'serve-' : 'snapshot-') + name);
			} catch (e) {
				fail(w, e.message);
			}
			check(w + ': no console error, page error or failed request', !page.problems.length, page.problems.join('; '));
			await closeTab(page);
		}
	} finally {
		await browser.close();
	}
}

// ---- live -------------------------------------------------------------------

// Run SQL on the store with the sqlite3 program, as another process; its output
function sql(text) {
	return new Promise((resolve, reject) => {
		execFile(cfg.sqlite3, ['-batch', '-noheader', '-separator', '|', cfg.db], { timeout: 20000 },
			(err, out, errOut) => err ? reject(new Error(errOut || err.message)) : resolve(out.trim()))
			.stdin.end('.timeout 5000\n' + text + '\n');
	});
}

// The statements end with the commit; then the time of the commit (Unix ms) and what 'after' selects
const NOW = "(julianday('now') - 2440587.5) * 86400.0";
async function commit(statements, after) {
	const out = await sql('BEGIN IMMEDIATE;\n' + statements + '\nCOMMIT;\nSELECT CAST(' + NOW + ' * 1000 AS INTEGER)' +
		(after ? ', ' + after : '') + ';');
	const [ms, ...rest] = out.split('|');
	return { at: Number(ms), rest };
}

// The selector in the page within 2 s of the commit; how long it took, or the error
async function within2s(page, sel, at) {
	const left = 2000 - (Date.now() - at);
	if (left <= 0)
		throw new Error('the sqlite3 program took 2 s already');
	await page.waitForSelector(sel, { timeout: left });
	return Date.now() - at;
}

const sleep = ms => new Promise(r => setTimeout(r, ms));

// Wait for f() to be true, at most ms
async function until(what, f, ms) {
	for (const end = Date.now() + ms; Date.now() < end; await sleep(50))
		if (await f())
			return;
	throw new Error(what + ': not within ' + ms / 1000 + ' s');
}

function listening(port) {
	return new Promise(r => {
		const c = net.connect(port, '127.0.0.1');
		c.on('connect', () => { c.destroy(); r(true); });
		c.on('error', () => r(false));
	});
}

// Stop the server (its pid in cfg.server_pid) and start another on its
// port, whose pid goes there; 'meanwhile' runs while none is up
async function restart(page, meanwhile) {
	const port = Number(new URL(cfg.url).port);

	page.outage = true;
	process.kill(Number(fs.readFileSync(cfg.server_pid, 'utf8')), 'SIGTERM');
	await until('the server stops', async () => !(await listening(port)), 20000);
	await page.waitForFunction(() => document.getElementById('live').textContent === 'reconnecting');
	await meanwhile();
	const child = spawn(cfg.hotloop, ['serve', '--port', String(port), '--quiet'], { cwd: cfg.project,
		stdio: ['ignore', fs.openSync(cfg.server_out + '.2', 'w'), fs.openSync(cfg.server_err, 'a')] });
	fs.writeFileSync(cfg.server_pid, String(child.pid));
	child.unref();
	await until('the server is back', () => listening(port), 20000);
	await page.waitForFunction(() => document.getElementById('live').textContent === 'live', { timeout: 30000 });
	page.outage = false;
}

const insertAttempt = (loop, round, fn) =>
	"INSERT INTO attempts (loop_id, round, lens, function, hypothesis, reasons_json, started_at, updated_at) " +
	"VALUES (" + loop + ", " + round + ", 'allocation', '" + fn + "', 'written while the page is open', '[]', " +
	NOW + ", " + NOW + ");\n" +
	"INSERT INTO activity (at, loop_id, level, kind, message) VALUES (" + NOW + ", " + loop +
	", 'info', 'round-start', 'round " + round + ": " + fn + "');";

async function live() {
	const browser = await launch();
	const page = await tab(browser);
	const times = [];

	try {
		await page.goto(cfg.url + '#attempts', { waitUntil: 'load' });
		let ready = await drawn(page, 'attempts');
		await page.waitForFunction(() => document.getElementById('live').textContent === 'live');
		const before = await count(page, '#strip a.tick');

		// a round starts: an attempt with no verdict yet, and its line of activity
		const loop = await sql('SELECT max(id) FROM loops;');
		const c1 = await commit(insertAttempt(loop, 99, 'live_probe'),
			"(SELECT max(id) FROM attempts), (SELECT max(id) FROM activity)");
		const [id, act] = c1.rest;
		let ms = await within2s(page, '#strip a.tick.v-none[data-id="' + id + '"]', c1.at);
		times.push(ms);
		ok('live: a new attempt\'s tick appears within 2 s of the commit (' + ms + ' ms)');
		ready = await drawn(page, 'attempts', ready - 1);
		check('live: one tick more', (await count(page, '#strip a.tick')) === before + 1, 'not ' + (before + 1));
		check('live: its row, running', (await texts(page, 'tr.attempt[data-id="' + id + '"] .badge'))[0] === 'running', 'no running badge');

		// its verdict: the same row updated
		const c2 = await commit("UPDATE attempts SET verdict = 'reject', stage = 'test', " +
			"reasons_json = '[\"the tests failed\"]', finished_at = " + NOW + ", updated_at = " + NOW + " WHERE id = " + id + ";\n" +
			"INSERT INTO activity (at, loop_id, level, kind, message) VALUES (" + NOW + ", " + loop +
			", 'info', 'verdict', 'round 99: reject at test');", "(SELECT max(id) FROM activity)");
		ms = await within2s(page, '#strip a.tick.v-reject[data-id="' + id + '"]', c2.at);
		times.push(ms);
		ok('live: its verdict shows within 2 s of the commit (' + ms + ' ms)');
		await shot(page, 'live-attempts-updated');

		// a click on its tick opens it
		await page.click('#strip a.tick[data-id="' + id + '"]');
		await page.waitForFunction(i => (document.querySelector('h1') || {}).textContent === 'Attempt #' + i + ' reject at test',
			{ timeout: 30000 }, id);
		ok('live: a click on the tick opens the attempt');

		// the overview: a new line of activity goes on top of the list
		await page.evaluate(() => { location.hash = 'overview'; });
		await drawn(page, 'overview');
		const top = await page.$eval('#activity li', li => li.getAttribute('data-id'));
		check('live: the overview has the lines written before', top === c2.rest[0], 'the first line is ' + top);
		const c3 = await commit("INSERT INTO activity (at, loop_id, level, kind, message) VALUES (" + NOW + ", " + loop +
			", 'warn', 'agent-done', 'round 100: the agent is done');", "(SELECT max(id) FROM activity)");
		ms = await within2s(page, '#activity li:first-child[data-id="' + c3.rest[0] + '"]', c3.at);
		times.push(ms);
		ok('live: a new line of activity is on top within 2 s of the commit (' + ms + ' ms)');
		const line = await texts(page, '#activity li:first-child');
		check('live: the line says what was written', /agent-done round 100: the agent is done$/.test(line[0]), line[0]);
		await shot(page, 'live-overview-updated');
		console.log('commit to DOM, ms: ' + times.join(' '));

		// the search field of the knowledge base keeps what is typed while the page is redrawn
		await page.evaluate(() => { location.hash = 'kb'; });
		ready = await drawn(page, 'kb');
		await page.type('#kb-search', X.kb.word);
		const hits = await count(page, 'tr.kb-entry');
		await commit("INSERT INTO activity (at, loop_id, level, kind, message) VALUES (" + NOW + ", " + loop +
			", 'info', 'round-start', 'round 102: 1 agent');");
		await drawn(page, 'kb', ready);
		await page.type('#kb-search', ' ');
		const field = await page.$eval('#kb-search', i => ({ value: i.value, focused: document.activeElement === i }));
		check('live: the kb search keeps its words and the focus through a redraw',
			field.value === X.kb.word + ' ' && field.focused && (await count(page, 'tr.kb-entry')) === hits,
			JSON.stringify(field));

		// the server stops and comes back: what was written meanwhile shows once the page is back
		await page.evaluate(() => { location.hash = 'attempts'; });
		await drawn(page, 'attempts');
		let c4;
		await restart(page, async () => {
			c4 = await commit(insertAttempt(loop, 101, 'while_down'), '(SELECT max(id) FROM attempts)');
		});
		await page.waitForSelector('#strip a.tick[data-id="' + c4.rest[0] + '"]', { timeout: 30000 });
		ok('live: after the server is back, the attempt written while it was down shows');
	} catch (e) {
		fail('live', e.message);
	}
	check('live: no console error, page error or failed request', !page.problems.length, page.problems.join('; '));
	await closeTab(page);
	await browser.close();
}

// ---- main -------------------------------------------------------------------

(async () => {
	if (mode === 'pages')
		await allPages(cfg.url, true);
	else if (mode === 'snapshot')
		await allPages('file://' + cfg.snapshot, false,
			u => u.startsWith('file://') || u.startsWith('data:') || u.startsWith('about:'));
	else if (mode === 'live')
		await live();
	else
		throw new Error('usage: serve-browser.js pages|snapshot|live CONFIG');
	process.exit(failed ? 1 : 0);
})().catch(e => { console.log('FAIL ' + mode + ': ' + (e.stack || e)); process.exit(1); });
