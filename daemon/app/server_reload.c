/* SPDX-License-Identifier: MIT */
/* SIGHUP: reload the configuration file (with the command-line overrides on top). An invalid
 * file keeps the running configuration. Live options apply at once (listeners are added and
 * removed, nats:// inputs started again with new nats.* options, limits, flushing, rotation,
 * retention, log level); the others keep their old values until a restart, and the reload says
 * which. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "support/config_schema.h"
#include "support/log.h"
#include "support/sd_notify.h"

/* The same configured socket: same address, or the same entry text (keeps port-0 listeners). */
static bool same_socket(const recd_listen_config *a, const recd_listen_config *b)
{
    if (a->transport != b->transport)
        return false;
    return recd_cfg_same_listener(a, b) || strcmp(a->url, b->url) == 0;
}

/* Closes the listeners the configuration no longer has (and, with restart_nats, every nats://
 * input: it retires, and its sessions go on through the new one, docs/fleet.md "Reload"), then
 * opens those it has and no listener serves. Runs on the new configuration, which nats:// inputs
 * read their options from when they open. */
static void apply_listeners(recd_server *s, bool restart_nats)
{
    const recd_config *cfg = &s->cfg;
    recd_listener *lnext;
    for (recd_listener *l = LIST_FIRST(&s->ingest.listeners); l; l = lnext) {
        lnext = LIST_NEXT(l, link);
        if (l->activated)
            continue;
        const recd_listen_config *keep = NULL;
        for (size_t i = 0; i < cfg->listen_count && !keep; i++)
            if (same_socket(&l->cfg, &cfg->listen[i]))
                keep = &cfg->listen[i];
        if (!keep || (restart_nats && l->nats)) {
            listener_close(l);
        } else if (keep->encoding != l->cfg.encoding) {
            l->cfg.encoding = keep->encoding; /* new connections use the new decoder choice */
            log_info("%s: encoding is now %s", l->bound, recd_cfg_enum_name(recd_cfg_encodings, keep->encoding));
        }
    }
    for (size_t i = 0; i < cfg->listen_count; i++) {
        bool have = false;
        for (recd_listener *l = LIST_FIRST(&s->ingest.listeners); l && !have; l = LIST_NEXT(l, link))
            have = !l->activated && same_socket(&l->cfg, &cfg->listen[i]);
        if (have)
            continue;
        recd_listener *l;
        char why[512];
        if (listener_open(&s->ingest, &cfg->listen[i], &l, why, sizeof why) < 0)
            log_err("reload: cannot listen on %s: %s", cfg->listen[i].url, why);
        else
            server_announce_listener(s, l);
    }
}

/* A live nats.* option changed: the nats:// inputs start again with it. */
static bool nats_options_changed(const recd_config_diff *diff)
{
    for (size_t i = 0; i < diff->count && i < RECD_CONFIG_MAX_CHANGES; i++)
        if (diff->changes[i].live && strncmp(diff->changes[i].key, "nats.", 5) == 0)
            return true;
    return false;
}

static void swap_strings(char **a, char **b)
{
    char *t = *a;
    *a = *b;
    *b = t;
}

void server_reload(recd_server *s)
{
    if (s->phase != SERVER_RUNNING)
        return;
    recd_sd_notify_reloading();
    recd_config next;
    memset(&next, 0, sizeof next);
    char why[1200];
    if (!s->cli->config_path) {
        log_notice("reload: no configuration file was given (--config): nothing to reload");
        recd_sd_notify_ready();
        return;
    }
    if (recd_cli_load_config(s->cli, &next, why, sizeof why) < 0) {
        log_err("reload failed, keeping the running configuration: %s", why);
        recd_metrics_config_reload(&s->metrics, 0);
        recd_sd_notify_ready();
        return;
    }
    recd_config_diff diff;
    recd_config_compare(&s->cfg, &next, &diff);
    for (size_t i = 0; i < diff.count && i < RECD_CONFIG_MAX_CHANGES; i++) {
        if (diff.changes[i].live)
            log_info("reload: %s changed", diff.changes[i].key);
        else
            log_warn("reload: %s changed, but only takes effect after a restart; keeping the old value",
                     diff.changes[i].key);
    }
    /* Options that need a restart keep their running values: the output root, the metrics
     * endpoint, and the fleet's layout (its stream, partition count and this instance's name). */
    swap_strings(&next.output.root, &s->cfg.output.root);
    next.metrics = s->cfg.metrics;
    swap_strings(&next.nats.stream, &s->cfg.nats.stream);
    swap_strings(&next.nats.instance, &s->cfg.nats.instance);
    next.nats.partitions = s->cfg.nats.partitions;
    recd_config old = s->cfg;
    s->cfg = next;
    recd_config_free(&old);
    apply_listeners(s, nats_options_changed(&diff));
    recd_log_set_level(s->cfg.log.level);
    server_apply_modes(s);
    server_retune_tick(s);
    s->writer.fsync = s->cfg.flush.fsync;
    heap_configure(s->cfg.limits.process_buffer);
    ingest_resume_paused(&s->ingest); /* limits may have grown */
    recd_metrics_config_reload(&s->metrics, 1);
    log_notice("configuration reloaded from %s (%zu changes)", s->cli->config_path, diff.count);
    server_run_retention(s);
    recd_sd_notify_ready();
}
