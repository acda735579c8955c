/* SPDX-License-Identifier: Apache-2.0 */
/*
 * output.h - the output contract: the one place that writes a command's
 * result or error (output.c), so that "exactly one document on stdout"
 * holds by construction, and what a terminal gets besides (colors, the
 * live progress line, warnings).  The commands (src/cmd) call it with a
 * document type (report.h: xp_doc_*) and the document's data; nothing
 * here knows a command.
 *
 * Output contract (seed CLI contract, "Common behavior"):
 *   --json: exactly one pretty JSON document on stdout, success or error,
 *           schema_version "2.0"; stderr only for documented diagnostics;
 *   otherwise: a short human summary on stdout, errors as "CODE: message"
 *           (plus "hint: ..." lines) on stderr.
 * Exit codes: 0 result emitted, 1 failure, 2 syntax (usage on stderr, never
 * JSON: src/cli/args.c), 3 target missing/exited/reused, 4 permission
 * denied.
 */
#ifndef XP_REPORT_OUTPUT_H
#define XP_REPORT_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../model/error_record.h"

struct xpc_json;

/* How this run writes: the common flags of every command. */
struct xp_output {
	bool json;            /* --json */
	bool no_color;        /* --no-color (NO_COLOR too: xp_out_color) */
	bool non_interactive; /* --non-interactive: also no progress line */
	/* --json as JSON Lines: every document (intervals, the result, an
	 * error) compact on one line, flushed (measure --histogram
	 * --interval-ms) */
	bool json_lines;
};

/*
 * One document type: its two renderers (JSON inside a writer, the
 * terminal view on a stream), each given the document's data (the view
 * the type names).  @schema names the file under schemas/ its JSON form
 * follows.  The types are report.h's xp_doc_* (render_histogram.h for
 * --histogram's).
 */
struct xp_doc_type {
	const char *schema;
	void (*json)(struct xpc_json *w, const void *doc);
	void (*human)(FILE *out, const void *doc);
};

/*
 * Define the document type @var over the typed renderers @json_fn and
 * @human_fn of a @view_type (each renderer file defines its own, next to
 * the renderers).
 */
#define XP_DOC_TYPE(var, schema_name, view_type, json_fn, human_fn)   \
	static void var##_json(struct xpc_json *w, const void *doc)   \
	{                                                             \
		json_fn(w, (const view_type *)doc);                   \
	}                                                             \
	static void var##_human(FILE *out, const void *doc)           \
	{                                                             \
		human_fn(out, (const view_type *)doc);                \
	}                                                             \
	const struct xp_doc_type var = { schema_name, var##_json, var##_human }

/*
 * Emit a success document @doc of @type: in JSON mode its JSON renderer
 * inside a pretty writer on stdout; otherwise its terminal view on
 * stdout.  Returns 0, or 1 if stdout could not be written.
 */
int xp_out_emit(const struct xp_output *o, const struct xp_doc_type *type, const void *doc);

/*
 * Emit a failure the contract's way and return its exit code (1, 3 or 4).
 * JSON mode: the error envelope on stdout; human mode: "CODE: message"
 * and hints on stderr.
 */
int xp_out_fail(const struct xp_output *o, const struct xp_error *err);

/*
 * A diagnostic line on stderr, "xprobe: warning: <message>", whatever the
 * output mode (the contract: diagnostics, including the online-injection
 * warning, go to stderr).
 */
void xp_out_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Colors: only on a terminal (@fd), never with --no-color, with NO_COLOR
 * set to anything non-empty (https://no-color.org), or with TERM=dumb.
 */
bool xp_out_color(const struct xp_output *o, int fd);

/*
 * The progress line on stderr while a live capture runs: only when
 * stderr is a terminal and --non-interactive was not given (whatever
 * --json says: a terminal is no program reading the document).  One line,
 * redrawn in place ("\r", the line, blanks over the rest), at most once per
 * XP_OUT_PROGRESS_NS, cut to the terminal's width so it never wraps, and
 * erased by xp_out_progress_end before anything else is printed.  Drawing
 * allocates nothing (one write(2) of a stack buffer): it runs inside the
 * live loop (src/live/live_run.c calls back with counters, the command
 * formats them, this writes them).
 */
#define XP_OUT_PROGRESS_NS 100000000ull /* 10 redraws a second at most */

struct xp_out_progress {
	bool on;          /* a terminal, and --non-interactive not given */
	bool color;
	bool drawn;       /* a line is on the screen now */
	size_t width;     /* ... this many bytes of it (blanked by the next) */
	uint64_t last_ns; /* CLOCK_MONOTONIC of the last redraw */
};

void xp_out_progress_init(struct xp_out_progress *p, const struct xp_output *o);
/* Redraw with @text (plain ASCII), unless the last redraw is too recent. */
void xp_out_progress_draw(struct xp_out_progress *p, const char *text);
/* Erase the line ("\r", blanks, "\r") if one is drawn. */
void xp_out_progress_end(struct xp_out_progress *p);

/* Session id of this invocation: "xp_<kind>_<xprobe pid>". */
void xp_out_session_id(const char *kind, char *buf, size_t size);

#endif /* XP_REPORT_OUTPUT_H */
