/* SPDX-License-Identifier: MIT */
/* rectool generate: write a deterministic synthetic recording from a seed, for tests, benchmarks
 * and demos. The generation itself is librecd's synth module, or the format's rectool entry (its
 * own options, a session-only format's sessions). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "file_io.h"
#include "formats.h"
#include "progress.h"
#include "recd/synth.h"

#define GENERATE_FLUSH_BYTES (1u << 20) /* write in big chunks, not one syscall per block */

/* The help text around the format's parts: the synopsis's and the options' (each entry's
 * rt_generate_options), the list of formats, and the formats' notes (rt_print_usage). */
static const char usage_head[] =
    "usage: rectool generate --format FORMAT --duration DUR [--scenario SCENARIO] [--seed N]\n";
static const char usage_body[] =
    "\n"
    "Writes a synthetic recording that is identical, byte for byte, for the same arguments on\n"
    "every host. OUT is written as OUT.part and renamed when complete; '-o -' writes to stdout.\n"
    "\n";
static const char usage_options[] =
    "  --scenario SCENARIO  idle | walk | drive | mixed (default mixed) | traffic (not every\n"
    "                       format plays every one: see below)\n"
    "  --duration DUR       length: 1500ms, 90s, 5m, 1h, 1h30m, 2d (a unit is required),\n"
    "                       at most 7d\n"
    "  --seed N             any unsigned 64-bit number, decimal or 0x-hex (default 1)\n";
static const char usage_tail[] =
    "  -o, --output OUT     output file\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit codes: 0 written, 2 bad arguments, 3 I/O error.\n";

static char usage[4096];

static void append(size_t *used, const char *fmt, const char *text)
{
    int w = snprintf(usage + *used, sizeof usage - *used, fmt, text);
    if (w > 0 && (size_t)w < sizeof usage - *used)
        *used += (size_t)w;
}

/* usage[], from the parts above and the format list. */
static void build_usage(void)
{
    size_t used = 0;
    const rt_format_tool *t;
    append(&used, "%s                       ", usage_head);
    for (size_t i = 0; (t = rt_format_tool_at(i)); i++)
        if (t->generate)
            append(&used, " %s", t->generate->synopsis);
    append(&used, " -o OUT\n%s  --format FORMAT      ", usage_body);
    char names[256];
    rt_synth_format_names(names, sizeof names, " | ");
    append(&used, "%s", names);
    append(&used, "\n%s", usage_options);
    for (size_t i = 0; (t = rt_format_tool_at(i)); i++)
        if (t->generate)
            append(&used, "%s", t->generate->help);
    append(&used, "%s", usage_tail);
}

typedef struct chunked_sink {
    recd_sink out;
    recd_buf buf;
} chunked_sink;

static int chunked_flush(chunked_sink *c)
{
    if (c->buf.len == 0)
        return 0;
    int rc = c->out.write(c->out.ctx, c->buf.data, c->buf.len);
    recd_buf_reset(&c->buf);
    return rc;
}

static int chunked_write(void *ctx, const void *data, size_t len)
{
    chunked_sink *c = ctx;
    int rc = recd_buf_append(&c->buf, data, len);
    if (rc == 0 && c->buf.len >= GENERATE_FLUSH_BYTES)
        rc = chunked_flush(c);
    return rc;
}

static int parse_seed(const char *text, uint64_t *out)
{
    if (!text || text[0] < '0' || text[0] > '9') /* strtoull would take "-1" and " 1" */
        return -EINVAL;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno || *end)
        return -EINVAL;
    *out = (uint64_t)v;
    return 0;
}

#define MAX_OPTIONS 32     /* generate's own and the formats' getopt entries */
#define MAX_LAYOUT_TOOLS 8 /* format entries with options of their own */
#define FIRST_FORMAT_OPTION 256 /* getopt values from here on belong to a format's option */

typedef struct generate_args {
    recd_synth_params p;
    const char *output;
    bool have_format, have_duration;
    const rt_session_synth *session; /* a session-only format: p.format is its base */
    const char *session_format;      /* its name */
    /* The format-only options: each entry's state, and the last option given with its entry. */
    void *layout[MAX_LAYOUT_TOOLS];
    const rt_format_tool *layout_tool;
    const char *layout_option;
} generate_args;

typedef struct generate_options {
    struct option all[MAX_OPTIONS];
    const rt_format_tool *tool[MAX_OPTIONS]; /* the entry owning all[i], NULL for generate's */
    int format_val[MAX_OPTIONS];             /* the value the entry's table gives all[i] */
} generate_options;

static const struct option common_options[] = {
    {"format", required_argument, NULL, 'f'},   {"scenario", required_argument, NULL, 's'},
    {"duration", required_argument, NULL, 'd'}, {"seed", required_argument, NULL, 'S'},
    {"output", required_argument, NULL, 'o'},   {"help", no_argument, NULL, 'h'},
};

/* generate's options, then each entry's (their getopt values renumbered from
 * FIRST_FORMAT_OPTION, so entries need not agree on letters). */
static void collect_options(generate_options *o)
{
    size_t n = 0;
    memset(o, 0, sizeof *o);
    for (; n < sizeof common_options / sizeof common_options[0]; n++)
        o->all[n] = common_options[n];
    const rt_format_tool *t;
    for (size_t i = 0; (t = rt_format_tool_at(i)); i++)
        for (const struct option *e = t->generate ? t->generate->options : NULL;
             e && e->name && n + 1 < MAX_OPTIONS; e++, n++) {
            o->all[n] = *e;
            o->all[n].flag = NULL;
            o->all[n].val = FIRST_FORMAT_OPTION + (int)n;
            o->tool[n] = t;
            o->format_val[n] = e->val;
        }
}

/* The state of t's options in a, made with the entry's defaults on first use; NULL when out of
 * memory or past MAX_LAYOUT_TOOLS. */
static void *layout_state(generate_args *a, const rt_format_tool *t)
{
    size_t i = 0;
    for (const rt_format_tool *u; (u = rt_format_tool_at(i)) && u != t; i++)
        ;
    if (i >= MAX_LAYOUT_TOOLS)
        return NULL;
    if (!a->layout[i] && (a->layout[i] = calloc(1, t->generate->state_size)))
        t->generate->defaults(a->layout[i]);
    return a->layout[i];
}

static void free_layouts(generate_args *a)
{
    for (size_t i = 0; i < MAX_LAYOUT_TOOLS; i++)
        free(a->layout[i]);
}

/* A format's own option (getopt value c); -1 to go on, or the exit code to return now. */
static int take_format_option(generate_args *a, const generate_options *o, int c)
{
    int i = c - FIRST_FORMAT_OPTION;
    const rt_format_tool *t = o->tool[i];
    void *state = layout_state(a, t);
    if (!state)
        return RT_EXIT_IO;
    if (t->generate->take(state, o->format_val[i], optarg, "generate", usage) != 0)
        return RT_EXIT_USAGE;
    a->layout_tool = t;
    a->layout_option = o->all[i].name;
    return -1;
}

/* The checks once every option is read; -1 to go on, or the exit code to return now. */
static int check_args(int argc, char **argv, generate_args *a)
{
    if (optind < argc)
        return rt_usage_error("generate", usage, "unexpected argument '%s'", argv[optind]);
    if (!a->have_format)
        return rt_usage_error("generate", usage, "--format is required");
    if (!a->have_duration)
        return rt_usage_error("generate", usage, "--duration is required");
    if (!a->output || !*a->output)
        return rt_usage_error("generate", usage, "-o OUT is required");
    if (a->layout_tool && (a->session || rt_format_tool_of(a->p.format) != a->layout_tool))
        return rt_usage_error("generate", usage, "--%s is for --format %s only", a->layout_option,
                              a->layout_tool->names[0]);
    const char *why;
    recd_synth_params check = a->p;
    if (a->session)
        check.scenario = a->session->scenario;
    if (recd_synth_params_check(&check, &why) < 0)
        return rt_usage_error("generate", usage, "%s", why);
    return -1;
}

/* Fills a from argv; returns -1 to go on, or the exit code to return now. */
static int parse_args(int argc, char **argv, generate_args *a)
{
    generate_options o;
    collect_options(&o);
    memset(a, 0, sizeof *a);
    a->p.scenario = RECD_SYNTH_SCENARIO_MIXED;
    a->p.seed = 1;
    rt_getopt_reset();
    int c, rc;
    while ((c = getopt_long(argc, argv, ":o:h", o.all, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (rt_parse_synth_format("generate", usage, optarg, &a->p.format, &a->session) != 0)
                return RT_EXIT_USAGE;
            a->session_format = optarg;
            a->have_format = true;
            break;
        case 's':
            if (rt_parse_synth_scenario("generate", usage, optarg, &a->p.scenario) != 0)
                return RT_EXIT_USAGE;
            break;
        case 'd':
            if (rt_parse_duration("generate", usage, "--duration", optarg, &a->p.duration_ms) != 0)
                return RT_EXIT_USAGE;
            a->have_duration = true;
            break;
        case 'S':
            if (parse_seed(optarg, &a->p.seed) < 0)
                return rt_usage_error("generate", usage,
                                      "bad seed '%s' (an unsigned 64-bit number)", optarg);
            break;
        case 'o': a->output = optarg; break;
        case 'h': rt_print_usage("generate", usage); return RT_EXIT_OK;
        default:
            if (c < FIRST_FORMAT_OPTION)
                return rt_bad_option("generate", usage, argv, c);
            if ((rc = take_format_option(a, &o, c)) >= 0)
                return rc;
        }
    }
    return check_args(argc, argv, a);
}

typedef struct generate_progress {
    rt_progress bar;
    unsigned calls;
} generate_progress;

/* Once per block or tick: looks at the clock only every 256th time. */
static void on_progress(void *ctx, uint64_t done_ms)
{
    generate_progress *g = ctx;
    if ((++g->calls & 255) == 0)
        rt_progress_update(&g->bar, done_ms);
}

/* Writes the recording a asks for; the exit code. */
static int generate(generate_args *ap)
{
    const generate_args a = *ap;
    rt_output out;
    int rc = rt_output_open(&out, a.output);
    if (rc < 0) {
        rt_error("generate: cannot create %s.part: %s", a.output, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    chunked_sink chunks = {rt_output_sink(&out), {0}};
    recd_sink sink = {chunked_write, &chunks};
    uint64_t units = 0;
    generate_progress progress = {.calls = 0};
    /* Minutes of recording take a moment; days take half a minute (a Recap week about 30 s). */
    rt_progress_start(&progress.bar, "generating", a.p.duration_ms, strcmp(a.output, "-") != 0);
    rt_progress_set_unit(&progress.bar, RT_UNIT_REC_MS, NULL);
    if (a.session)
        rc = a.session->write(&a.p, sink, &units);
    else if (a.layout_tool) /* without options, the layout is the format's own */
        rc = a.layout_tool->generate->write(&a.p, layout_state(ap, a.layout_tool), sink, &units);
    else
        rc = recd_synth_write_progress(&a.p, sink, &units, on_progress, &progress);
    rt_progress_finish(&progress.bar);
    if (rc == 0)
        rc = chunked_flush(&chunks);
    recd_buf_free(&chunks.buf);
    if (rc < 0) {
        rt_output_abort(&out);
        rt_error("generate: writing %s failed: %s", a.output, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    bool to_stdout = strcmp(a.output, "-") == 0;
    rc = rt_output_commit(&out);
    if (rc < 0) {
        rt_error("generate: cannot finish %s: %s", a.output, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    if (!to_stdout)
        printf("%s: %s %s, %llu ms, seed %llu: %llu %s\n", a.output,
               a.session ? a.session_format : a.p.format->name,
               a.session ? a.session->summary : recd_synth_scenario_name(a.p.scenario),
               (unsigned long long)a.p.duration_ms, (unsigned long long)a.p.seed,
               (unsigned long long)units, a.session ? a.session->unit : a.p.format->unit);
    return RT_EXIT_OK;
}

int cmd_generate(int argc, char **argv)
{
    build_usage();
    generate_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc < 0)
        rc = generate(&a);
    free_layouts(&a);
    return rc;
}
