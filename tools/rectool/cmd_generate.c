/* SPDX-License-Identifier: MIT */
/* rectool generate: write a deterministic synthetic recording (.rec or .recap) from a seed, for
 * tests, benchmarks and demos. The generation itself is librecd's synth module. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "file_io.h"
#include "progress.h"
#include "recd/synth.h"
#include "formats/carla/carla_synth.h"
#include "synth_player.h"

#define GENERATE_FLUSH_BYTES (1u << 20) /* write in big chunks, not one syscall per block */

static const char usage[] =
    "usage: rectool generate --format FORMAT --duration DUR [--scenario SCENARIO] [--seed N]\n"
    "                        [--actors N] [--width f32|f64] [--ids TABLE] -o OUT\n"
    "\n"
    "Writes a synthetic recording that is identical, byte for byte, for the same arguments on\n"
    "every host. OUT is written as OUT.part and renamed when complete; '-o -' writes to stdout.\n"
    "\n"
    "  --format FORMAT      samp-onfoot | samp-vehicle | recap | carla | samp-player (a player\n"
    "                       who walks and drives in turns, 5 s each: one session as JSON lines,\n"
    "                       for 'rectool send'; --scenario does not apply)\n"
    "  --scenario SCENARIO  idle | walk | drive | mixed (default mixed) | traffic (carla's,\n"
    "                       where mixed means traffic too)\n"
    "                       samp-onfoot has no 'drive' and samp-vehicle no 'walk' (a .rec holds\n"
    "                       one block type); recap 'drive' rides a horse\n"
    "  --duration DUR       length: 1500ms, 90s, 5m, 1h, 1h30m, 2d (a unit is required),\n"
    "                       at most 7d\n"
    "  --seed N             any unsigned 64-bit number, decimal or 0x-hex (default 1)\n"
    "  --actors N           carla: vehicles and walkers, 1..65000 (default 50)\n"
    "  --width W            carla: vector width, f32 (UE4 builds, default) or f64 (UE5)\n"
    "  --ids TABLE          carla: packet-id table, 0.9.13 | 0.9.15 | 0.9.16 (default)\n"
    "  -o, --output OUT     output file\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit codes: 0 written, 2 bad arguments, 3 I/O error.\n";

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

typedef struct generate_args {
    recd_synth_params p;
    const char *output;
    bool have_format, have_duration;
    recd_synth_carla_layout carla; /* --actors, --width, --ids */
    const char *carla_option;      /* the last carla-only option given, for its error */
    bool player;                   /* samp-player: p.format is samp-onfoot */
} generate_args;

/* Fills a from argv; returns -1 to go on, or the exit code to return now. */
static int parse_args(int argc, char **argv, generate_args *a)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},   {"scenario", required_argument, NULL, 's'},
        {"duration", required_argument, NULL, 'd'}, {"seed", required_argument, NULL, 'S'},
        {"actors", required_argument, NULL, 'A'},   {"width", required_argument, NULL, 'W'},
        {"ids", required_argument, NULL, 'I'},
        {"output", required_argument, NULL, 'o'},   {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    a->p.scenario = RECD_SYNTH_SCENARIO_MIXED;
    a->p.seed = 1;
    a->carla = (recd_synth_carla_layout){.width = 4, .ids = RECD_CARLA_IDS_0_9_16};
    rt_getopt_reset();
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            a->player = strcmp(optarg, "samp-player") == 0;
            if (a->player)
                a->p.format = recd_synth_format_find("samp-onfoot");
            else if (rt_parse_synth_format("generate", usage, optarg, &a->p.format) != 0)
                return RT_EXIT_USAGE;
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
        case 'A': {
            char *end;
            unsigned long n = strtoul(optarg, &end, 10);
            if (!*optarg || *end || n == 0 || n > 65000)
                return rt_usage_error("generate", usage, "bad --actors '%s' (1..65000)", optarg);
            a->carla.actors = (uint32_t)n;
            a->carla_option = "--actors";
            break;
        }
        case 'W':
            if (strcmp(optarg, "f32") != 0 && strcmp(optarg, "f64") != 0)
                return rt_usage_error("generate", usage, "bad --width '%s' (f32 or f64)", optarg);
            a->carla.width = optarg[1] == '6' ? 8 : 4;
            a->carla_option = "--width";
            break;
        case 'I':
            if (!recd_carla_ids_parse(optarg, &a->carla.ids))
                return rt_usage_error("generate", usage,
                                      "bad --ids '%s' (0.9.13, 0.9.15 or 0.9.16)", optarg);
            a->carla_option = "--ids";
            break;
        case 'o': a->output = optarg; break;
        case 'h': fputs(usage, stdout); return RT_EXIT_OK;
        default: return rt_bad_option("generate", usage, argv, c);
        }
    }
    if (optind < argc)
        return rt_usage_error("generate", usage, "unexpected argument '%s'", argv[optind]);
    if (!a->have_format)
        return rt_usage_error("generate", usage, "--format is required");
    if (!a->have_duration)
        return rt_usage_error("generate", usage, "--duration is required");
    if (!a->output || !*a->output)
        return rt_usage_error("generate", usage, "-o OUT is required");
    if (a->carla_option && a->p.format != recd_synth_format_find("carla"))
        return rt_usage_error("generate", usage, "%s is for --format carla only", a->carla_option);
    const char *why;
    recd_synth_params check = a->p;
    if (a->player)
        check.scenario = RECD_SYNTH_SCENARIO_WALK; /* walks and drives, whatever --scenario says */
    if (recd_synth_params_check(&check, &why) < 0)
        return rt_usage_error("generate", usage, "%s", why);
    return -1;
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

/* One JSON line. librecd writes no samp-player state (files never hold one), so a state is written
 * as the on-foot or vehicle state it holds, a vehicle's model and seat added (protocol 2.9). */
static int write_json_line(recd_sink sink, const recd_msg *m)
{
    recd_buf line = {0};
    recd_msg as_rec = *m;
    bool state = m->type == RECD_MSG_STATE;
    bool vehicle = state && m->player.rec_type == RECD_REC_TYPE_VEHICLE;
    if (state)
        as_rec.format = vehicle ? RECD_MSG_FMT_SAMP_VEHICLE : RECD_MSG_FMT_SAMP_ONFOOT;
    int rc = recd_msg_to_json(&as_rec, &line); /* the line with its "}\n" */
    if (rc == 0 && vehicle) {
        char extra[48];
        int n = snprintf(extra, sizeof extra, ",\"vehicle_model\":%u,\"seat\":%u}\n",
                         (unsigned)m->player.vehicle_model, (unsigned)m->player.seat);
        line.len -= 2;
        rc = recd_buf_append(&line, extra, (size_t)n);
    }
    if (rc == 0)
        rc = sink.write(sink.ctx, line.data, line.len);
    recd_buf_free(&line);
    return rc;
}

/* A samp-player session as JSON lines (docs/protocol.md section 2.9): open, the states up to the
 * duration, close; *states counts the states. */
static int write_player(const recd_synth_params *p, recd_sink sink, uint64_t *states)
{
    rt_player_synth g;
    int rc = rt_player_synth_init(&g, p->seed, p->duration_ms);
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_SAMP_PLAYER);
    if (rc == 0)
        rc = write_json_line(sink, &m);
    while (rc == 0) {
        recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_PLAYER);
        if ((rc = rt_player_synth_next(&g, &m)) != 0 || g.last_ms > p->duration_ms)
            break;
        rc = write_json_line(sink, &m);
        ++*states;
    }
    rt_player_synth_free(&g);
    if (rc < 0)
        return rc;
    recd_msg_init(&m, RECD_MSG_CLOSE, RECD_MSG_FMT_SAMP_PLAYER);
    return write_json_line(sink, &m);
}

int cmd_generate(int argc, char **argv)
{
    generate_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;

    rt_output out;
    rc = rt_output_open(&out, a.output);
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
    if (a.player)
        rc = write_player(&a.p, sink, &units);
    else if (a.carla_option) /* the default layout is the format's own */
        rc = recd_synth_write_carla_layout(&a.p, &a.carla, sink, &units);
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
               a.player ? "samp-player" : a.p.format->name,
               a.player ? "walk+drive" : recd_synth_scenario_name(a.p.scenario),
               (unsigned long long)a.p.duration_ms, (unsigned long long)a.p.seed,
               (unsigned long long)units, a.player ? "states" : a.p.format->unit);
    return RT_EXIT_OK;
}
