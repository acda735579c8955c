/* SPDX-License-Identifier: Apache-2.0 */
/*
 * args.c - getopt_long over one table of every flag; see args.h.
 * Cross-flag checks (conflicts, requirements, each mode's own rules) run
 * after the loop, like argp's ARGP_KEY_END: they are the command's (its
 * usage hook, src/cmd/mode_rules.h), the words of the error and the usage
 * printed with it are ours.  Value checks that the contract reports as
 * JSON errors (zero samples, missing --match in measure ...) are left to
 * the commands.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../common/parse.h"
#include "../../common/suggest.h"
#include "../cmd/mode_rules.h"
#include "../report/report.h" /* enum xp_hist_view */
#include "args.h"

enum opt_id {
	O_JSON = 1000,
	O_NONINTERACTIVE,
	O_NOCOLOR,
	O_HELP,
	O_PID,
	O_LIMIT,
	O_FROM,
	O_TO,
	O_MATCH,
	O_SPEC,
	O_INPUT,
	O_AGENT,
	O_CUPTI_SOCKET,
	O_EVENTS_OUT,
	O_FORMAT,
	O_NAME,
	O_SAMPLES,
	O_DURATION,
	O_TIMEOUT,
	O_MAX_EVENTS,
	O_AGGREGATE,
	O_CPU_SAMPLE,
	O_SYSCALL_AGG,
	O_MAX_GROUPS,
	O_FREQUENCY,
	O_MAX_SAMPLES,
	O_STACK_DEPTH,
	O_MAX_THREADS,
	O_MAX_INFLIGHT,
	O_UNSAFE_OFFSET,
	O_HISTOGRAM,
	O_BY,
	O_MAX_DEPTH,
	O_REPORT,
	O_HIST,
	O_LIST,
	O_EXPLAIN,
	O_EXPLAIN_TOP,
	O_INTERVAL,
	O_METRICS_OUT,
};

struct opt_def {
	struct option lo;
	unsigned long bit; /* 0 = common flag */
};

static const struct opt_def opt_defs[] = {
	{ { "json", no_argument, NULL, O_JSON }, 0 },
	{ { "non-interactive", no_argument, NULL, O_NONINTERACTIVE }, 0 },
	{ { "no-color", no_argument, NULL, O_NOCOLOR }, 0 },
	{ { "help", no_argument, NULL, O_HELP }, 0 },
	{ { "pid", required_argument, NULL, O_PID }, XP_OPT_PID },
	{ { "limit", required_argument, NULL, O_LIMIT }, XP_OPT_LIMIT },
	{ { "from", required_argument, NULL, O_FROM }, XP_OPT_FROM },
	{ { "to", required_argument, NULL, O_TO }, XP_OPT_TO },
	{ { "match", required_argument, NULL, O_MATCH }, XP_OPT_MATCH },
	{ { "spec", required_argument, NULL, O_SPEC }, XP_OPT_SPEC },
	{ { "input", required_argument, NULL, O_INPUT }, XP_OPT_INPUT },
	{ { "agent", required_argument, NULL, O_AGENT }, XP_OPT_AGENT },
	{ { "cupti-socket", required_argument, NULL, O_CUPTI_SOCKET }, XP_OPT_CUPTI_SOCKET },
	{ { "events-out", required_argument, NULL, O_EVENTS_OUT }, XP_OPT_EVENTS_OUT },
	{ { "format", required_argument, NULL, O_FORMAT }, XP_OPT_FORMAT },
	{ { "name", required_argument, NULL, O_NAME }, XP_OPT_NAME },
	{ { "samples", required_argument, NULL, O_SAMPLES }, XP_OPT_SAMPLES },
	{ { "duration-ms", required_argument, NULL, O_DURATION }, XP_OPT_DURATION },
	{ { "timeout-ms", required_argument, NULL, O_TIMEOUT }, XP_OPT_TIMEOUT },
	{ { "max-events", required_argument, NULL, O_MAX_EVENTS }, XP_OPT_MAX_EVENTS },
	{ { "aggregate", no_argument, NULL, O_AGGREGATE }, XP_OPT_AGGREGATE },
	{ { "cpu-sample", no_argument, NULL, O_CPU_SAMPLE }, XP_OPT_CPU_SAMPLE },
	{ { "syscall-aggregate", no_argument, NULL, O_SYSCALL_AGG }, XP_OPT_SYSCALL_AGG },
	{ { "max-groups", required_argument, NULL, O_MAX_GROUPS }, XP_OPT_MAX_GROUPS },
	{ { "frequency-hz", required_argument, NULL, O_FREQUENCY }, XP_OPT_FREQUENCY },
	{ { "max-samples", required_argument, NULL, O_MAX_SAMPLES }, XP_OPT_MAX_SAMPLES },
	{ { "stack-depth", required_argument, NULL, O_STACK_DEPTH }, XP_OPT_STACK_DEPTH },
	{ { "max-threads", required_argument, NULL, O_MAX_THREADS }, XP_OPT_MAX_THREADS },
	{ { "max-inflight", required_argument, NULL, O_MAX_INFLIGHT }, XP_OPT_MAX_INFLIGHT },
	{ { "unsafe-offset", no_argument, NULL, O_UNSAFE_OFFSET }, XP_OPT_UNSAFE_OFFSET },
	{ { "histogram", no_argument, NULL, O_HISTOGRAM }, XP_OPT_HISTOGRAM },
	{ { "by", required_argument, NULL, O_BY }, XP_OPT_BY },
	{ { "max-depth", required_argument, NULL, O_MAX_DEPTH }, XP_OPT_MAX_DEPTH },
	{ { "report", required_argument, NULL, O_REPORT }, XP_OPT_REPORT },
	{ { "hist", required_argument, NULL, O_HIST }, XP_OPT_HIST },
	{ { "list", required_argument, NULL, O_LIST }, XP_OPT_LIST },
	{ { "explain", no_argument, NULL, O_EXPLAIN }, XP_OPT_EXPLAIN },
	{ { "explain-top", required_argument, NULL, O_EXPLAIN_TOP }, XP_OPT_EXPLAIN_TOP },
	{ { "interval-ms", required_argument, NULL, O_INTERVAL }, XP_OPT_INTERVAL },
	{ { "metrics-out", required_argument, NULL, O_METRICS_OUT }, XP_OPT_METRICS_OUT },
};

#define NOPTS (sizeof(opt_defs) / sizeof(opt_defs[0]))

static int usage_error(const struct xp_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void xp_args_wrap(FILE *out, const char *text, size_t first_indent, size_t indent);

static int usage_error(const struct xp_command *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n\nUsage: xprobe %s ", cmd->name);
	xp_args_wrap(stderr, cmd->usage, strlen("Usage: xprobe  ") + strlen(cmd->name),
		     strlen("Usage: xprobe  ") + strlen(cmd->name));
	fprintf(stderr, "\nFor more information, try 'xprobe %s --help'.\n", cmd->name);
	return 2;
}

static const char *flag_name(unsigned long bit)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (opt_defs[i].bit == bit)
			return opt_defs[i].lo.name;
	return "?";
}

static int parse_num(const struct xp_command *cmd, const char *flag, const char *arg, uint64_t max,
		     uint64_t *out)
{
	int rc = xpc_parse_u64(arg, 0, max, out);

	if (rc == -ERANGE)
		return usage_error(cmd, "invalid value '%s' for '--%s': number too large", arg,
				   flag);
	if (rc)
		return usage_error(cmd,
				   "invalid value '%s' for '--%s': expected a non-negative integer",
				   arg, flag);
	return 0;
}

/*
 * A millisecond bound: its nanoseconds must fit (XPC_MS_MAX, parse.h), so
 * a value the conversion would wrap (18446744073709551615 ms timing out at
 * once) is a syntax error like any other number out of range.
 */
static int parse_ms(const struct xp_command *cmd, const char *flag, const char *arg, uint64_t *out)
{
	int rc = xpc_parse_u64(arg, 0, XPC_MS_MAX, out);

	if (rc == -ERANGE)
		return usage_error(
			cmd,
			"invalid value '%s' for '--%s': at most %llu milliseconds (the nanoseconds must fit in a signed 64-bit integer)",
			arg, flag, (unsigned long long)XPC_MS_MAX);
	if (rc)
		return usage_error(cmd,
				   "invalid value '%s' for '--%s': expected a non-negative integer",
				   arg, flag);
	return 0;
}

/*
 * A syntax error of the mode rules (src/cmd/mode_rules.h), in the words
 * of the others.
 */
static int mode_error(const struct xp_command *cmd, struct xp_usage *u)
{
	int rc;

	switch (u->kind) {
	case XP_USAGE_CONFLICT:
		rc = usage_error(cmd, "the argument '--%s' cannot be used with '--%s'",
				 flag_name(u->flag), flag_name(u->other));
		break;
	case XP_USAGE_REQUIRES:
		rc = usage_error(cmd, "the argument '--%s' requires '--%s'", flag_name(u->flag),
				 flag_name(u->other));
		break;
	case XP_USAGE_MISSING:
		rc = usage_error(cmd, "the following required argument was not provided: %s",
				 u->text ? u->text : "?");
		break;
	default:
		rc = usage_error(cmd, "%s", u->text ? u->text : "out of memory");
		break;
	}
	xp_usage_free(u);
	return rc;
}

/* An argument no flag of @cmd has: said, with the closest flag when one is. */
static int unknown_flag(const struct xp_command *cmd, const char *a, size_t n,
			const struct option *longopts)
{
	const char *names[NOPTS + 1], *best;
	char word[128];
	size_t k = 0;

	for (; longopts[k].name && k < NOPTS; k++)
		names[k] = longopts[k].name;
	snprintf(word, sizeof(word), "%.*s", (int)(n < sizeof(word) - 1 ? n : sizeof(word) - 1),
		 a + 2);
	best = xpc_closest(word, names, k);
	if (best)
		return usage_error(
			cmd,
			"unexpected argument '%.*s' found\n\n  tip: a similar argument exists: '--%s'",
			(int)n + 2, a, best);
	return usage_error(cmd, "unexpected argument '%.*s' found", (int)n + 2, a);
}

/*
 * getopt_long accepts unambiguous prefixes ("--jso"); scripts must not come
 * to depend on that, so every flag must be spelled in full.  Values of
 * flags given as "--flag VALUE" are skipped, as getopt would take them.
 */
static int check_exact_names(const struct xp_command *cmd, int argc, char **argv,
			     const struct option *longopts)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct option *o;
		size_t n;

		if (strcmp(a, "--") == 0)
			return 0;
		if (strcmp(a, "-h") == 0 || a[0] != '-' || a[1] == '\0')
			continue;
		if (a[1] != '-')
			return usage_error(cmd, "unexpected argument '%s' found", a);
		n = strcspn(a + 2, "=");
		for (o = longopts; o->name; o++)
			if (strlen(o->name) == n && strncmp(o->name, a + 2, n) == 0)
				break;
		if (!o->name)
			return unknown_flag(cmd, a, n, longopts);
		if (o->has_arg == required_argument && a[2 + n] != '=')
			i++;
	}
	return 0;
}

/*
 * @text word-wrapped at HELP_COLUMNS: the first line after @first_indent
 * columns already used, the others indented by @indent.
 */
#define HELP_COLUMNS 100
void xp_args_wrap(FILE *out, const char *text, size_t first_indent, size_t indent)
{
	size_t col = first_indent;
	const char *p = text;

	while (*p) {
		size_t w = strcspn(p, " ");

		if (col > indent && col + 1 + w > HELP_COLUMNS) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = indent;
		} else if (col > first_indent || (col > indent && p != text)) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, w, out);
		col += w;
		p += w;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
}

void xp_args_help(const struct xp_command *cmd, FILE *out)
{
	char head[64];

	xp_args_wrap(out, cmd->summary, 0, 0);
	snprintf(head, sizeof(head), "Usage: xprobe %s", cmd->name);
	fprintf(out, "\n%s ", head);
	xp_args_wrap(out, cmd->usage, strlen(head) + 1, strlen(head) + 1);
	fprintf(out, "\n%s", cmd->help);
	if (cmd->examples)
		fprintf(out, "\nExamples:\n%s", cmd->examples);
}

int xp_args_parse(const struct xp_command *cmd, int argc, char **argv, struct xp_cli *cli,
		  bool *done)
{
	struct option longopts[NOPTS + 1];
	unsigned char used[NOPTS + 1] = { 0 };
	unsigned long seen = 0;
	size_t i, n = 0;
	int c, rc, li = -1;

	*done = false;
	for (i = 0; i < NOPTS; i++)
		if (!opt_defs[i].bit || (cmd->flags & opt_defs[i].bit))
			longopts[n++] = opt_defs[i].lo;
	memset(&longopts[n], 0, sizeof(longopts[n]));

	if ((rc = check_exact_names(cmd, argc, argv, longopts)))
		return rc;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, &li)) != -1) {
		unsigned long bit = 0;
		uint64_t v;

		for (i = 0; i < NOPTS; i++)
			if (opt_defs[i].lo.val == c)
				bit = opt_defs[i].bit;
		/* every flag once (--json, --no-color ... too), but --input */
		if (li >= 0 && c != O_INPUT && c != O_HELP && used[li]++)
			return usage_error(cmd, "the argument '--%s' cannot be used multiple times",
					   longopts[li].name);
		li = -1;
		seen |= bit;
		switch (c) {
		case O_JSON:
			cli->out.json = true;
			break;
		case O_NONINTERACTIVE:
			cli->out.non_interactive = true;
			break;
		case O_NOCOLOR:
			cli->out.no_color = true;
			break;
		case 'h':
		case O_HELP:
			xp_args_help(cmd, stdout);
			*done = true;
			return 0;
		case O_PID:
			if ((rc = parse_num(cmd, "pid", optarg, UINT32_MAX, &v)))
				return rc;
			cli->has_pid = true;
			cli->pid = (uint32_t)v;
			break;
		case O_LIST:
			cli->list = optarg;
			break;
		case O_LIMIT:
			if ((rc = parse_num(cmd, "limit", optarg, UINT64_MAX, &cli->limit)))
				return rc;
			cli->has_limit = true;
			break;
		case O_FROM:
			cli->from = optarg;
			break;
		case O_TO:
			cli->to = optarg;
			break;
		case O_MATCH:
			cli->match = optarg;
			break;
		case O_SPEC:
			cli->spec = optarg;
			break;
		case O_INPUT:
			if (cli->ninputs == XP_MAX_INPUTS)
				return usage_error(cmd, "at most %d '--input' files",
						   XP_MAX_INPUTS);
			cli->inputs[cli->ninputs++] = optarg;
			break;
		case O_AGENT:
			cli->agent = optarg;
			break;
		case O_CUPTI_SOCKET:
			cli->cupti_socket = optarg;
			break;
		case O_EVENTS_OUT:
			cli->events_out = optarg;
			break;
		case O_FORMAT:
			if (strcmp(optarg, "jsonl") && strcmp(optarg, "chrome"))
				return usage_error(
					cmd,
					"invalid value '%s' for '--format': expected jsonl or chrome",
					optarg);
			cli->format = optarg;
			break;
		case O_NAME:
			cli->name = optarg;
			break;
#define NUM_CASE(id, flag, field)                                                 \
	case id:                                                                  \
		if ((rc = parse_num(cmd, flag, optarg, UINT64_MAX, &cli->field))) \
			return rc;                                                \
		cli->has_##field = true;                                          \
		break;
			NUM_CASE(O_SAMPLES, "samples", samples)
		case O_DURATION:
			if ((rc = parse_ms(cmd, "duration-ms", optarg, &cli->duration_ms)))
				return rc;
			cli->has_duration_ms = true;
			break;
		case O_TIMEOUT:
			if ((rc = parse_ms(cmd, "timeout-ms", optarg, &cli->timeout_ms)))
				return rc;
			cli->has_timeout_ms = true;
			break;
			NUM_CASE(O_MAX_EVENTS, "max-events", max_events)
			NUM_CASE(O_MAX_GROUPS, "max-groups", max_groups)
			NUM_CASE(O_FREQUENCY, "frequency-hz", frequency_hz)
			NUM_CASE(O_MAX_SAMPLES, "max-samples", max_samples)
			NUM_CASE(O_STACK_DEPTH, "stack-depth", stack_depth)
			NUM_CASE(O_MAX_THREADS, "max-threads", max_threads)
			NUM_CASE(O_MAX_INFLIGHT, "max-inflight", max_inflight)
			NUM_CASE(O_MAX_DEPTH, "max-depth", max_depth)
			NUM_CASE(O_EXPLAIN_TOP, "explain-top", explain_top)
#undef NUM_CASE
		case O_AGGREGATE:
			cli->aggregate = true;
			break;
		case O_CPU_SAMPLE:
			cli->cpu_sample = true;
			break;
		case O_SYSCALL_AGG:
			cli->syscall_aggregate = true;
			break;
		case O_UNSAFE_OFFSET:
			cli->unsafe_offset = true;
			break;
		case O_HISTOGRAM:
			cli->histogram = true;
			break;
		case O_EXPLAIN:
			cli->explain = true;
			break;
		case O_BY:
			cli->by = optarg;
			break;
		case O_REPORT:
			cli->report = optarg;
			break;
		case O_INTERVAL:
			if ((rc = parse_ms(cmd, "interval-ms", optarg, &cli->interval_ms)))
				return rc;
			cli->has_interval_ms = true;
			break;
		case O_METRICS_OUT:
			cli->metrics_out = optarg;
			break;
		case O_HIST:
			if (!strcmp(optarg, "log2"))
				cli->hist = XP_HIST_LOG2;
			else if (!strcmp(optarg, "linear"))
				cli->hist = XP_HIST_LINEAR;
			else if (!strcmp(optarg, "none"))
				cli->hist = XP_HIST_NONE;
			else
				return usage_error(
					cmd,
					"invalid value '%s' for '--hist': expected log2, linear or none",
					optarg);
			break;
		case ':':
			return usage_error(cmd,
					   "a value is required for '%s' but none was supplied",
					   argv[optind - 1]);
		case '?':
		default:
			return usage_error(cmd, "unexpected argument '%s' found", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(cmd, "unexpected argument '%s' found", argv[optind]);
	cli->given = seen;
	if (cmd->check) {
		struct xp_usage u = { 0 };

		if (cmd->check(cli, cmd->flags, &u))
			return mode_error(cmd, &u);
	}
	return 0;
}
