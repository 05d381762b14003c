/* SPDX-License-Identifier: MIT */
/* `rectool sc2 build-order|stats FILE`: derived views of a StarCraft II replay, computed from the
 * common event stream its format entry exports (tracker events), so no SC2 internals leak here. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "commands.h"
#include "file_io.h"
#include "formats.h"
#include "recd/format.h"
#include "sniff.h"

#define MAX_PLAYER 16

static const char usage[] =
    "usage: rectool sc2 build-order FILE [--player N] [--json]\n"
    "       rectool sc2 stats FILE [--csv|--json]\n"
    "\n"
    "Views of a StarCraft II replay's tracker events (replays from 2.0.8 on; older ones have none).\n"
    "Commands:\n"
    "  build-order  structures started, units produced and upgrades finished, with supply\n"
    "  stats        supply, resources, income, workers and army value over time (PlayerStats)\n"
    "\n"
    "build-order reads UnitInit, UnitBorn and Upgrade events per player; cosmetic rewards, sprays,\n"
    "larvae and other by-products nobody ordered are left out.\n"
    "\n"
    "  -p, --player N   only player N (1, 2, ...)\n"
    "  -j, --json       JSON instead of text (build-order) or CSV (stats)\n"
    "  -c, --csv        CSV (stats; the default)\n"
    "  -h, --help       show this help\n"
    "\n"
    "Exit: 0 done, 1 not a StarCraft II replay or damaged, 2 usage error, 3 I/O error.\n";

/* Units that appear without anyone ordering them. */
static const char *const by_products[] = {
    "Larva", "Broodling", "BroodlingEscort", "Interceptor", "MULE", "AutoTurret", "Locust",
    "LocustMP", "LocustMPFlying", "CreepTumor", "CreepTumorBurrowed", "CreepTumorQueen",
    "AdeptPhaseShift", "KD8Charge", "ParasiticBombDummy", "InfestedTerransEgg",
    "InfestorTerran", "ForceField", "Egg", "LarvaEgg", "BanelingCocoon", "RavagerCocoon",
    "BroodLordCocoon", "OverlordCocoon", "TransportOverlordCocoon", "LurkerMPEgg",
};

typedef struct sc2_view {
    bool json;
    int player; /* 0: all */
    bool stats; /* stats instead of build order */
    double supply[MAX_PLAYER + 1];
    json_t *rows;
    bool header_done;
    uint64_t events; /* of any kind, for the note on replays without tracker events */
} sc2_view;

static bool is_by_product(const char *name)
{
    for (size_t i = 0; i < sizeof by_products / sizeof by_products[0]; i++)
        if (strcmp(by_products[i], name) == 0)
            return true;
    return strncmp(name, "Reward", 6) == 0 || strncmp(name, "Spray", 5) == 0 ||
           strncmp(name, "GameHeart", 9) == 0;
}

static void clock_text(double t, char *out, size_t len)
{
    long s = (long)t;
    snprintf(out, len, "%ld:%02ld", s / 60, s % 60);
}

static int stats_row(sc2_view *v, const recd_replay_event *ev, json_t *f)
{
    json_int_t am = json_integer_value(json_object_get(f, "army_minerals"));
    json_int_t av = json_integer_value(json_object_get(f, "army_vespene"));
    if (v->json) {
        json_t *row = json_pack("{sIsfsI}", "loop", (json_int_t)ev->t_raw, "t", ev->t, "player",
                                (json_int_t)ev->actor);
        const char *keys[] = {"food_used", "food_made", "minerals", "vespene", "minerals_rate",
                              "vespene_rate", "workers"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            json_object_set(row, keys[i], json_object_get(f, keys[i]));
        json_object_set_new(row, "army_value", json_integer(am + av));
        json_array_append_new(v->rows, row);
        return 0;
    }
    if (!v->header_done) {
        puts("loop,t,player,food_used,food_made,minerals,vespene,minerals_rate,vespene_rate,"
             "workers,army_value");
        v->header_done = true;
    }
    printf("%lld,%.4f,%lld,%g,%g,%lld,%lld,%lld,%lld,%lld,%lld\n", (long long)ev->t_raw, ev->t,
           (long long)ev->actor, json_number_value(json_object_get(f, "food_used")),
           json_number_value(json_object_get(f, "food_made")),
           (long long)json_integer_value(json_object_get(f, "minerals")),
           (long long)json_integer_value(json_object_get(f, "vespene")),
           (long long)json_integer_value(json_object_get(f, "minerals_rate")),
           (long long)json_integer_value(json_object_get(f, "vespene_rate")),
           (long long)json_integer_value(json_object_get(f, "workers")), (long long)(am + av));
    return 0;
}

static int build_row(sc2_view *v, const recd_replay_event *ev, json_t *f)
{
    const char *what, *name;
    if (strcmp(ev->kind, "unit_init") == 0) {
        what = "structure";
        name = json_string_value(json_object_get(f, "unit_type"));
    } else if (strcmp(ev->kind, "unit_born") == 0) {
        what = "unit";
        name = json_string_value(json_object_get(f, "unit_type"));
    } else if (strcmp(ev->kind, "upgrade") == 0) {
        what = "upgrade";
        name = json_string_value(json_object_get(f, "upgrade"));
    } else {
        return 0;
    }
    /* Loop 0 holds the starting units and cosmetic upgrades, not decisions. */
    if (!name || ev->t_raw == 0 || is_by_product(name))
        return 0;
    double supply = v->supply[ev->actor];
    if (v->json) {
        json_array_append_new(v->rows, json_pack("{sIsfsIsfssss}", "loop", (json_int_t)ev->t_raw,
                                                 "t", ev->t, "player", (json_int_t)ev->actor,
                                                 "supply", supply, "kind", what, "name", name));
        return 0;
    }
    char clock[48];
    clock_text(ev->t, clock, sizeof clock);
    printf("%6s  p%lld  %5g  %-9s  %s\n", clock, (long long)ev->actor, supply, what, name);
    return 0;
}

static int on_event(void *data, const recd_replay_event *ev)
{
    sc2_view *v = data;
    v->events++;
    if (ev->actor < 1 || ev->actor > MAX_PLAYER || (v->player && ev->actor != v->player))
        return 0;
    bool is_stats = strcmp(ev->kind, "player_stats") == 0;
    if (!is_stats && v->stats)
        return 0;
    json_t *f = json_loadb(ev->fields, ev->fields_len, 0, NULL);
    if (!f)
        return -EBADMSG;
    int rc = 0;
    if (is_stats) {
        v->supply[ev->actor] = json_number_value(json_object_get(f, "food_used"));
        if (v->stats)
            rc = stats_row(v, ev, f);
    } else {
        rc = build_row(v, ev, f);
    }
    json_decref(f);
    return rc;
}

static int run_view(const char *path, sc2_view *v)
{
    rt_input in;
    int rc = rt_input_open(&in, path);
    if (rc < 0) {
        rt_error("%s: %s", path, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    rt_sniffed what;
    rt_sniff(in.data, in.len, &what);
    const recd_format *sc2 = recd_format_find("sc2replay");
    if (!sc2 || what.format != sc2) {
        rt_error("%s: %s, not a StarCraft II replay", path, what.description);
        rt_input_close(&in);
        return RT_EXIT_INVALID;
    }
    v->rows = json_array();
    char err[256] = "";
    rc = recd_format_export_events(sc2, in.data, in.len, on_event, v, err, sizeof err);
    rt_input_close(&in);
    int exit_code = RT_EXIT_OK;
    if (rc == 0 && v->events == 0)
        fprintf(stderr, "rectool: %s has no tracker events (replays before 2.0.8 have none)\n", path);
    if (rc < 0) {
        rt_error("%s: %s", path, err[0] ? err : recd_strerror(rc));
        exit_code = rt_exit_for_error(rc);
    }
    if (v->json && json_dumpf(v->rows, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) == 0)
        fputc('\n', stdout);
    json_decref(v->rows);
    if (fflush(stdout) != 0)
        exit_code = RT_EXIT_IO;
    return exit_code;
}

static int cmd_sc2(int argc, char **argv)
{
    static const struct option options[] = {{"player", required_argument, NULL, 'p'},
                                            {"json", no_argument, NULL, 'j'},
                                            {"csv", no_argument, NULL, 'c'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    sc2_view v;
    memset(&v, 0, sizeof v);
    int c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":p:jch", options, NULL)) != -1) {
        switch (c) {
        case 'p': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > MAX_PLAYER)
                return rt_usage_error("sc2", usage, "--player takes 1..%d, not '%s'", MAX_PLAYER,
                                      optarg);
            v.player = (int)n;
            break;
        }
        case 'j': v.json = true; break;
        case 'c': v.json = false; break;
        case 'h': fputs(usage, stdout); return RT_EXIT_OK;
        default: return rt_bad_option("sc2", usage, argv, c);
        }
    }
    if (argc - optind != 2)
        return rt_usage_error("sc2", usage, "give a view (build-order or stats) and one FILE");
    const char *view = argv[optind];
    if (strcmp(view, "stats") == 0)
        v.stats = true;
    else if (strcmp(view, "build-order") != 0)
        return rt_usage_error("sc2", usage, "unknown view '%s' (build-order or stats)", view);
    return run_view(argv[optind + 1], &v);
}

static const char *const sc2_names[] = {"sc2replay", NULL};

static const rt_command sc2_commands[] = {
    {"sc2", cmd_sc2, "StarCraft II replays: build order, supply and resources over time"},
    {NULL, NULL, NULL},
};

const rt_format_tool rt_format_tool__sc2 = {.names = sc2_names, .commands = sc2_commands};
