// scenario-graph.js: draws graph.html (lib/scenario-graph.c embeds it) from
// the JSON in #graph-data: panels stacked on one time axis, the phases as
// bands across them, and under the cursor a line through every panel with
// the values there. Names come from the service and its loads: they reach
// the page as textContent only, never as markup.
'use strict';
(function () {
	const data = JSON.parse(document.getElementById('graph-data').textContent);
	const svg = document.getElementById('chart');
	const NS = svg.namespaceURI;
	const tip = document.getElementById('tip');
	const COLORS = ['#1c64d8', '#e8590c'];	// this run, the overlay
	const CONTEXT = '#98a1ab';		// the machine around the service
	const DASHES = ['', '6 4', '2 3'];
	const FILLS = ['#fde4cc', '#dcebfb', '#e8defa', '#d8f3e2'];
	const IDLE_FILL = '#f2f4f6';
	const LEFT = 76, RIGHT = 24, STRIP = 42, HEAD = 24, PLOT = 96, AXIS = 18, GAP = 12;
	const chosen = {};		// panel id -> index of the view shown
	let shown = [];			// per panel drawn: what the cursor needs
	let axis = null;		// the time axis of the last drawing

	function svgEl(tag, attrs, parent) {
		const e = document.createElementNS(NS, tag);
		for (const k in attrs)
			e.setAttribute(k, attrs[k]);
		if (parent)
			parent.appendChild(e);
		return e;
	}

	function svgText(text, attrs, parent) {
		const e = svgEl('text', attrs, parent);
		e.textContent = text;
		return e;
	}

	function htmlEl(tag, cls, text, parent) {
		const e = document.createElement(tag);
		if (cls)
			e.className = cls;
		if (text !== undefined)
			e.textContent = text;
		if (parent)
			parent.appendChild(e);
		return e;
	}

	// ---- numbers as people read them ------------------------------------

	const SI = ['', 'k', 'M', 'G', 'T', 'P', 'E'];
	const BINARY = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

	function trim(s) {
		return s.indexOf('.') < 0 || s.indexOf('e') >= 0 ? s : s.replace(/0+$/, '').replace(/\.$/, '');
	}

	// About three significant digits.
	function short(v) {
		const a = Math.abs(v);
		if (a === 0)
			return '0';
		if (a >= 1e21 || a < 1e-3)
			return v.toExponential(2).replace(/\.?0+e/, 'e');
		if (a >= 100)
			return v.toFixed(0);
		return trim(v.toPrecision(3));
	}

	// The power of 'base' that v fills, at most names.length - 1.
	function power(v, base, names) {
		let i = 0;
		for (let a = Math.abs(v); i < names.length - 1 && a >= base; i++)
			a /= base;
		return i;
	}

	function value(unit, v) {
		if (unit === 'pct')
			return (Math.abs(v) >= 0.1 && Math.abs(v) < 1000 ? v.toFixed(1) : short(v)) + '%';
		if (unit === 'kib') {
			const i = power(v, 1024, BINARY), d = v / Math.pow(1024, i), a = Math.abs(d);
			return (a >= 1e4 ? short(d) : d.toFixed(a >= 100 || a === 0 ? 0 : a >= 10 ? 1 : 2)) + ' ' + BINARY[i];
		}
		const rate = unit === 'rate' ? '/s' : '';
		if (Math.abs(v) < 1e4 || Math.abs(v) >= 1e21)
			return short(v) + rate;
		const i = power(v, 1000, SI);
		return short(v / Math.pow(1000, i)) + SI[i] + rate;
	}

	function niceStep(x) {
		if (!(x > 0) || !isFinite(x))
			return 1;
		const p = Math.pow(10, Math.floor(Math.log10(x))), f = x / p;
		return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * p;
	}

	function decimals(step) {
		return Math.max(0, Math.min(6, -Math.floor(Math.log10(step) + 1e-9)));
	}

	// Values from lo to hi on a nice grid of about 'n' steps; halves keep huge spans finite.
	function grid(lo, hi, n) {
		const step = niceStep((hi / 2 - lo / 2) / (n / 2));
		let a = Math.floor(lo / step) * step, b = Math.ceil(hi / step) * step;
		if (!isFinite(a))
			a = lo;
		if (!isFinite(b))
			b = hi;
		if (!(b > a))
			b = a + step;
		const ticks = [];
		for (let i = 0; i <= 50; i++) {
			const t = a + i * step;
			if (t > b + step * 1e-6)
				break;
			ticks.push(Math.abs(t) < step * 1e-9 ? 0 : t);
		}
		return { lo: a, hi: b, step: step, ticks: ticks };
	}

	// The y axis of a panel: its range over every run, ticks in the unit that reads best.
	function yAxis(unit, lines) {
		let lo = 0, hi = 0, any = false;
		for (const line of lines)
			for (const pts of line.runs)
				for (const p of pts) {
					lo = Math.min(lo, p[1]);
					hi = Math.max(hi, p[1]);
					any = true;
				}
		if (!(hi > lo))
			hi = lo + 1;
		const big = Math.max(Math.abs(lo), Math.abs(hi));
		let div = 1, suffix = unit === 'pct' ? '%' : '', exp = false;
		if (unit === 'kib') {
			const i = power(big, 1024, BINARY);
			div = Math.pow(1024, i);
			suffix = ' ' + BINARY[i];
		} else if (unit !== 'pct') {
			exp = big >= 1e21;
			const i = exp || big < 1e4 ? 0 : power(big, 1000, SI);
			div = Math.pow(1000, i);
			suffix = SI[i] + (unit === 'rate' ? '/s' : '');
		}
		// the grid in the unit shown (MiB, k, ...); ticks and positions in the data's
		const g = grid(lo / div, hi / div, 4);
		return {
			any: any,
			ticks: g.ticks.map(t => t * div),
			label: v => v === 0 ? '0' : exp ? v.toExponential(1) : (v / div).toFixed(decimals(g.step)) + suffix,
			at: v => 1 - (v / div / 2 - g.lo / 2) / (g.hi / 2 - g.lo / 2),	// 0 top .. 1 bottom
		};
	}

	// ---- drawing --------------------------------------------------------

	function fillOf(kinds, phase) {
		if (phase.kind === 'idle')
			return IDLE_FILL;
		if (!(phase.kind in kinds))
			kinds[phase.kind] = FILLS[Object.keys(kinds).length % FILLS.length];
		return kinds[phase.kind];
	}

	function pathOf(pts, x, y) {
		let d = '';
		for (let i = 0; i < pts.length; i++)
			d += (i ? 'L' : 'M') + x(pts[i][0]).toFixed(1) + ' ' + y(pts[i][1]).toFixed(1);
		return d;
	}

	// Text cut with an ellipsis until it is at most w wide; false when nothing fits.
	function fit(el, text, w) {
		el.textContent = text;
		if (el.getComputedTextLength() <= w)
			return true;
		let lo = 0, hi = text.length - 1;	// the longest cut that fits: at least lo, less than hi + 1
		while (lo < hi) {
			const n = (lo + hi + 1) >> 1;
			el.textContent = text.slice(0, n) + '\u2026';
			if (el.getComputedTextLength() <= w)
				lo = n;
			else
				hi = n - 1;
		}
		el.textContent = text.slice(0, lo) + '\u2026';
		return lo > 0;
	}

	function cpuView() {
		const cpu = data.panels.find(p => p.id === 'cpu');
		return cpu ? cpu.views[chosen.cpu || 0] : null;
	}

	// The phase names on top, each with the mean CPU of every run in it.
	function drawStrip(kinds) {
		const view = cpuView(), key = view && view.phase_mean;
		for (const ph of data.phases) {
			const x0 = axis.x(ph.start_s), x1 = axis.x(ph.end_s), w = x1 - x0, mid = (x0 + x1) / 2;
			svgEl('rect', { x: x0, y: 2, width: Math.max(w, 0), height: STRIP - 6, rx: 3,
					fill: fillOf(kinds, ph) }, svg);
			const name = svgText('', { x: mid, y: 17, 'class': 'phase-name' + (ph.kind === 'idle' ? ' idle' : '') }, svg);
			if (!fit(name, ph.name, w - 6))
				name.textContent = '';
			const means = key ? ph[key] : null;
			if (!means || means.every(m => m === null))
				continue;
			// the longest of these that fits the band
			for (const words of [(ph.running ? 'running, ' : '') + 'CPU mean ', 'CPU mean ', '']) {
				const mean = svgText('', { x: mid, y: 32, 'class': 'phase-mean' }, svg);
				mean.appendChild(document.createTextNode(words));
				means.forEach((m, r) => {
					if (r)
						mean.appendChild(document.createTextNode(' / '));
					const span = svgEl('tspan', { fill: COLORS[r], 'font-weight': 600 }, mean);
					span.textContent = m === null ? '\u2013' : value('pct', m);
				});
				if (mean.getComputedTextLength() <= w - 6)
					break;
				mean.remove();
			}
		}
	}

	// A panel's header: its name, the views to choose from, what each line is.
	function drawHeader(panel, top, viewIndex) {
		const title = svgText(panel.title, { x: LEFT, y: top + 16, 'class': 'panel-title' }, svg);
		let x = LEFT + title.getComputedTextLength() + 14;
		if (panel.views.length > 1)
			panel.views.forEach((v, i) => {
				const t = svgText(v.name, { x: x, y: top + 16, 'class': 'toggle' + (i === viewIndex ? ' on' : '') }, svg);
				if (i !== viewIndex)
					t.addEventListener('click', () => { chosen[panel.id] = i; draw(); });
				x += t.getComputedTextLength() + 12;
			});
		const lines = panel.views[viewIndex].lines;
		if (lines.length < 2)
			return;
		x += 10;
		for (const line of lines) {
			svgEl('line', { x1: x, x2: x + 22, y1: top + 12, y2: top + 12, stroke: line.context ? CONTEXT : '#3b444d',
					'stroke-width': 1.6, 'stroke-dasharray': DASHES[line.dash] || '' }, svg);
			const t = svgText(line.label, { x: x + 27, y: top + 16, 'class': 'line-legend' }, svg);
			x += 27 + t.getComputedTextLength() + 16;
		}
	}

	function drawPanel(panel, top, kinds) {
		const viewIndex = Math.min(chosen[panel.id] || 0, panel.views.length - 1);
		const view = panel.views[viewIndex], pt = top + HEAD, right = axis.width - RIGHT;
		const ya = yAxis(panel.unit, view.lines), y = v => pt + ya.at(v) * PLOT;

		drawHeader(panel, top, viewIndex);
		for (const ph of data.phases)
			svgEl('rect', { x: axis.x(ph.start_s), y: pt, width: Math.max(axis.x(ph.end_s) - axis.x(ph.start_s), 0),
					height: PLOT, fill: fillOf(kinds, ph) }, svg);
		for (const t of ya.any ? ya.ticks : []) {
			const yy = y(t).toFixed(1);
			svgEl('line', { x1: LEFT, x2: right, y1: yy, y2: yy, 'class': 'grid' }, svg);
			svgText(ya.label(t), { x: LEFT - 7, y: +yy + 3.5, 'class': 'y-label' }, svg);
		}
		for (const t of axis.ticks) {
			const xx = axis.x(t).toFixed(1);
			svgEl('line', { x1: xx, x2: xx, y1: pt, y2: pt + PLOT, 'class': 'grid' }, svg);
			svgText(axis.label(t), { x: xx, y: pt + PLOT + 13, 'class': 'x-label' }, svg);
		}
		for (const ph of data.phases)
			for (const t of [ph.start_s, ph.end_s])
				if (t > 0 && t < axis.t1) {
					const xx = axis.x(t).toFixed(1);
					svgEl('line', { x1: xx, x2: xx, y1: pt, y2: pt + PLOT, 'class': 'boundary' }, svg);
				}
		svgEl('rect', { x: LEFT, y: pt, width: right - LEFT, height: PLOT, 'class': 'frame' }, svg);
		// the machine behind, the overlay under this run
		const order = [];
		view.lines.forEach(line => line.runs.forEach((pts, r) => order.push({ line: line, r: r, pts: pts })));
		order.sort((a, b) => (b.line.context - a.line.context) || (b.r - a.r));
		for (const o of order) {
			const color = o.line.context ? CONTEXT : COLORS[o.r];
			if (o.pts.length === 1)
				svgEl('circle', { cx: axis.x(o.pts[0][0]), cy: y(o.pts[0][1]), r: 2.5, fill: color,
						  'class': 'point', 'data-panel': panel.id, 'data-run': o.r }, svg);
			else if (o.pts.length > 1)
				svgEl('path', { d: pathOf(o.pts, axis.x, y), stroke: color, 'stroke-dasharray': DASHES[o.line.dash] || '',
						'class': 'series', 'data-panel': panel.id, 'data-run': o.r }, svg);
		}
		if (!ya.any)
			svgText(panel.unit === 'pct' || panel.unit === 'kib' ? 'no samples' : 'no values',
				{ x: (LEFT + right) / 2, y: pt + PLOT / 2 + 4, 'class': 'empty' }, svg);
		shown.push({ panel: panel, view: view, y: y });
	}

	function draw() {
		const width = Math.max(560, Math.floor(svg.parentNode.clientWidth));
		const t1 = data.t_max > 0 ? data.t_max : 1, plotW = width - LEFT - RIGHT;
		const xg = grid(0, t1, Math.max(2, Math.floor(plotW / 110)));
		const xd = decimals(xg.step), kinds = {};

		while (svg.firstChild)
			svg.removeChild(svg.firstChild);
		shown = [];
		axis = {
			width: width,
			t1: t1,
			x: t => LEFT + t / t1 * plotW,
			t: x => (x - LEFT) / plotW * t1,
			ticks: xg.ticks.filter(t => t <= t1 + 1e-9),
			label: t => t.toFixed(xd) + ' s',
		};
		svg.setAttribute('width', width);
		drawStrip(kinds);
		let top = STRIP;
		for (const panel of data.panels) {
			drawPanel(panel, top, kinds);
			top += HEAD + PLOT + AXIS + GAP;
		}
		svg.setAttribute('height', top);
		svgEl('line', { id: 'cursor', x1: 0, x2: 0, y1: 2, y2: top - GAP - AXIS, 'class': 'cursor',
				visibility: 'hidden' }, svg);
		svgEl('g', { id: 'dots' }, svg);
		svg.setAttribute('data-drawn', shown.length);
	}

	// ---- the cursor -----------------------------------------------------

	// The point nearest to time t in points sorted by time.
	function nearest(pts, t) {
		let lo = 0, hi = pts.length;
		while (lo < hi) {
			const mid = (lo + hi) >> 1;
			if (pts[mid][0] < t)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo === pts.length)
			lo--;
		if (lo > 0 && t - pts[lo - 1][0] <= pts[lo][0] - t)
			lo--;
		return lo >= 0 ? pts[lo] : null;
	}

	// Time under the cursor to a tenth of a pixel's worth, at most milliseconds.
	function t1Decimals() {
		return Math.max(1, Math.min(3, decimals(axis.t1 / (axis.width - LEFT - RIGHT))));
	}

	function phaseAt(t) {
		const ph = data.phases.find(p => t > p.start_s && t <= p.end_s);
		return ph ? ph.name : '';
	}

	function hide() {
		tip.hidden = true;
		const c = document.getElementById('cursor'), dots = document.getElementById('dots');
		if (c)
			c.setAttribute('visibility', 'hidden');
		while (dots && dots.firstChild)
			dots.removeChild(dots.firstChild);
	}

	function hover(e) {
		const box = svg.getBoundingClientRect(), mx = e.clientX - box.left;
		if (!axis || mx < LEFT || mx > axis.width - RIGHT) {
			hide();
			return;
		}
		const t = axis.t(mx), cursor = document.getElementById('cursor'), dots = document.getElementById('dots');
		cursor.setAttribute('x1', mx);
		cursor.setAttribute('x2', mx);
		cursor.setAttribute('visibility', 'visible');
		while (dots.firstChild)
			dots.removeChild(dots.firstChild);

		tip.textContent = '';
		const phase = phaseAt(t);
		htmlEl('div', 'when', t.toFixed(t1Decimals()) + ' s' + (phase ? ' \u00b7 ' + phase : ''), tip);
		const table = htmlEl('table', '', undefined, tip);
		if (data.runs.length > 1) {
			const head = htmlEl('tr', '', undefined, table);
			htmlEl('th', '', '', head);
			data.runs.forEach((label, r) => {
				const th = htmlEl('th', '', undefined, head);
				htmlEl('span', 'swatch', undefined, th).style.background = COLORS[r];
				th.appendChild(document.createTextNode(label));
			});
		}
		for (const s of shown)
			for (const line of s.view.lines) {
				const row = htmlEl('tr', '', undefined, table);
				htmlEl('td', '', s.panel.title + (line.label ? ' \u2013 ' + line.label : ''), row);
				data.runs.forEach((label, r) => {
					const pts = line.runs[r], p = pts && pts.length ? nearest(pts, t) : null;
					htmlEl('td', '', p ? value(s.panel.unit, p[1]) : line.context && r ? '' : '\u2013', row);
					if (p)
						svgEl('circle', { cx: axis.x(p[0]), cy: s.y(p[1]), r: 3.5, 'class': 'dot',
								  fill: line.context ? CONTEXT : COLORS[r] }, dots);
				});
			}
		tip.hidden = false;
		const w = tip.offsetWidth, h = tip.offsetHeight;
		let x = e.clientX + 18, y = e.clientY + 18;
		if (x + w > window.innerWidth - 8)
			x = Math.max(8, e.clientX - 18 - w);
		if (y + h > window.innerHeight - 8)
			y = Math.max(8, window.innerHeight - 8 - h);
		tip.style.left = x + 'px';
		tip.style.top = y + 'px';
	}

	// ---- the page -------------------------------------------------------

	function header() {
		document.getElementById('title').textContent = data.title;
		const facts = [];
		if (data.samples)
			facts.push(data.samples + (data.samples === 1 ? ' sample' : ' samples') + ' every ' +
				   (data.interval_s < 1 ? short(data.interval_s * 1000) + ' ms' : short(data.interval_s) + ' s'));
		else
			facts.push('no samples');
		if (data.ncpus)
			facts.push(data.ncpus + (data.ncpus === 1 ? ' CPU' : ' CPUs'));
		if (data.sampler_cpu_s)
			facts.push('sampling cost ' + short(data.sampler_cpu_s) + ' s of CPU');
		if (data.malformed_metric_lines)
			facts.push(data.malformed_metric_lines + ' malformed metric lines ignored');
		facts.push('hover for values');
		document.getElementById('facts').textContent = facts.join(' \u00b7 ');

		const legend = document.getElementById('legend');
		data.runs.forEach((label, r) => {
			const item = htmlEl('span', 'legend-item', undefined, legend);
			htmlEl('span', 'swatch', undefined, item).style.background = COLORS[r];
			item.appendChild(document.createTextNode(label));
		});
		if (data.runs.length > 1)
			htmlEl('span', 'legend-item', 'aligned by phase' + (data.overlay_dropped ?
				', ' + data.overlay_dropped + ' values outside the matching phases left out' : ''), legend);
	}

	header();
	draw();
	svg.addEventListener('mousemove', hover);
	svg.addEventListener('mouseleave', hide);
	let pending = false;
	window.addEventListener('resize', () => {
		if (pending)
			return;
		pending = true;
		requestAnimationFrame(() => { pending = false; hide(); draw(); });
	});
})();
