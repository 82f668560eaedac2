/*
 * flame.h: interactive SVG flame graphs, plain or differential. The SVG is
 * self-contained (script and style inline, nothing fetched): hover shows a
 * frame's details, a click zooms into it, Ctrl-F or the Search control
 * highlights the frames matching a regular expression and shows their share.
 * The caller owns the profiles and the output buffer.
 */
#ifndef HOTLOOP_FLAME_H
#define HOTLOOP_FLAME_H

#include <stdbool.h>

struct profile;
struct strbuf;

struct flame_options {
	const char *title;	/* NULL: "Flame Graph" or "Differential Flame Graph" */
	const char *name;	/* the input, named in the subtitle */
	const char *base_name;	/* the base of a differential graph */
	const char *sample_type;	/* NULL: profile_pick_sample_type()'s choice */
	int width;		/* of the image, in pixels */
	double min_width;	/* frames narrower than this are left out */
	bool min_width_percent;	/* min_width is a percentage of the total width */
	bool reverse;		/* merge stacks from the leaf: leaves at the base */
	bool no_inline;		/* inlined frames folded into the function holding them */
};

#define FLAME_OPTIONS_INIT { .width = 1200, .min_width = 0.1 }

#define FLAME_FRAME_HEIGHT 16
#define FLAME_MIN_IMAGE_WIDTH 200
#define FLAME_MAX_IMAGE_WIDTH 100000
/* Stacks deeper than this are cut (with a warning): the image stays usable. */
#define FLAME_MAX_DEPTH 2048

/*
 * Append the SVG flame graph of p to out. Frames are function names
 * (inlined frames separate, kernel and inlined frames coloured apart),
 * children in name order. With base, the graph is differential: the shape
 * is p's, and each frame is coloured by how its share of the total changed
 * from base (red grew, blue shrank, grey unchanged; frames absent from base
 * are full red).
 */
int flame_render(const struct profile *p, const struct profile *base,
		 const struct flame_options *o, struct strbuf *out);

#endif
