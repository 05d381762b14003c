/* SPDX-License-Identifier: MIT */
/* SIGHUP: reload the configuration file (with the command-line overrides on top). A reload
 * applies whole or not at all: an invalid file keeps the running configuration, and so does a
 * valid one that would weaken recd in silence (empty, no auth.token without `token: none`, no
 * listen list: what a half-written file looks like) or whose new listeners cannot be bound. Live
 * options apply at once (listeners are added and removed, nats:// inputs started again with new
 * nats.* options, limits, flushing, rotation, retention, log level); the others keep their old
 * values until a restart, and the reload says which. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recd/nats_connect.h"
#include "server.h"
#include "support/config_schema.h"
#include "support/log.h"
#include "support/tls_server.h"
#include "support/sd_notify.h"

/* The same configured socket: same address, or the same entry text (keeps port-0 listeners). */
static bool same_socket(const recd_listen_config *a, const recd_listen_config *b)
{
    if (a->transport != b->transport || a->tls != b->tls)
        return false;
    return recd_cfg_same_listener(a, b) || strcmp(a->url, b->url) == 0;
}

/* The running listener (not socket-activated) that serves entry, or NULL. */
static recd_listener *serving(recd_server *s, const recd_listen_config *entry)
{
    for (recd_listener *l = LIST_FIRST(&s->ingest.listeners); l; l = LIST_NEXT(l, link))
        if (!l->activated && same_socket(&l->cfg, entry))
            return l;
    return NULL;
}

/* A running listener that next drops holds entry's port: entry can only bind once it is closed
 * (0.0.0.0:7070 replacing 127.0.0.1:7070). */
static bool port_held_by_leaving(recd_server *s, const recd_config *next, const recd_listen_config *entry)
{
    if (entry->transport == RECD_WIRE_UNIX || entry->nats || entry->addr.port == 0)
        return false;
    for (recd_listener *l = LIST_FIRST(&s->ingest.listeners); l; l = LIST_NEXT(l, link)) {
        if (l->activated || l->nats || l->cfg.transport != entry->transport || l->cfg.addr.port != entry->addr.port)
            continue;
        bool stays = false;
        for (size_t i = 0; i < next->listen_count && !stays; i++)
            stays = same_socket(&l->cfg, &next->listen[i]);
        if (!stays)
            return true;
    }
    return false;
}

/* Before anything changes, binds next's new TCP, UDP and Unix listeners, so that a reload whose
 * sockets cannot be had is refused whole instead of leaving recd with fewer listeners. On a
 * failure the ones bound here are closed again and why says which. 0 or the failure. */
static int open_new_listeners(recd_server *s, const recd_config *next, char *why, size_t cap)
{
    recd_listener *opened[RECD_CONFIG_MAX_LISTEN];
    size_t n = 0;
    for (size_t i = 0; i < next->listen_count; i++) {
        const recd_listen_config *entry = &next->listen[i];
        if (entry->nats || serving(s, entry) || server_activated_covers(s, entry) ||
            port_held_by_leaving(s, next, entry))
            continue; /* nats:// inputs open once next is in force, and so do these */
        recd_listener *l;
        char reason[512];
        int rc = listener_open(&s->ingest, entry, &l, reason, sizeof reason);
        if (rc < 0) {
            char shown[220]; /* a password, token or nkey seed as *** */
            recd_nats_redacted(entry->url, shown, sizeof shown);
            snprintf(why, cap, "cannot listen on %s: %s", shown, reason);
            while (n > 0)
                listener_close(opened[--n]);
            return rc;
        }
        opened[n++] = l;
    }
    for (size_t i = 0; i < n; i++)
        server_announce_listener(s, opened[i]);
    return 0;
}

/* Closes the listeners the configuration no longer has (and, with restart_nats, every nats://
 * input: it retires, and its sessions go on through the new one, docs/fleet.md "Reload"), then
 * opens those it has and no listener serves yet (nats:// inputs, which read their options from
 * the configuration in force, and entries that waited for a closed listener's port). */
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
        if (serving(s, &cfg->listen[i]) || server_activated_covers(s, &cfg->listen[i]))
            continue;
        recd_listener *l;
        char why[512];
        char shown[220]; /* a nats:// URL's password or token as *** */
        recd_nats_redacted(cfg->listen[i].url, shown, sizeof shown);
        if (listener_open(&s->ingest, &cfg->listen[i], &l, why, sizeof why) < 0)
            log_err("reload: cannot listen on %s: %s", shown, why);
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

/* A valid file that is still not applied: the running configuration stays whole. */
static void refuse_reload(recd_server *s, recd_config *next, recd_reload_refusal reason, const char *why)
{
    log_warn("reload refused (%s), keeping the running configuration: %s", recd_reload_refusal_name(reason), why);
    recd_metrics_config_reload_refused(&s->metrics, (int)reason);
    recd_config_free(next);
    recd_sd_notify_ready();
}

static void log_changes(const recd_config_diff *diff)
{
    for (size_t i = 0; i < diff->count && i < RECD_CONFIG_MAX_CHANGES; i++) {
        if (diff->changes[i].live)
            log_info("reload: %s changed", diff->changes[i].key);
        else
            log_warn("reload: %s changed, but only takes effect after a restart; keeping the old value",
                     diff->changes[i].key);
    }
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
    /* A renewed certificate: new connections get it, live ones keep the context they have. */
    struct tls_server_ctx *tls = NULL;
    bool https = s->cfg.metrics.enabled && s->cfg.metrics.tls; /* kept until a restart */
    if (https && !next.tls.cert)
        snprintf(why, sizeof why, "metrics.tls stays on until a restart: tls.cert and tls.key are "
                                  "still needed");
    if ((https && !next.tls.cert) || server_tls_context(&next, &tls, why, sizeof why) < 0) {
        log_err("reload failed, keeping the running configuration: %s", why);
        recd_metrics_config_reload(&s->metrics, 0);
        recd_config_free(&next);
        recd_sd_notify_ready();
        return;
    }
    /* All or nothing: what could still refuse the reload is checked before anything changes. */
    recd_reload_refusal refusal = recd_config_reload_check(&s->cfg, &next, why, sizeof why);
    if (refusal == RECD_RELOAD_ACCEPTED && open_new_listeners(s, &next, why, sizeof why) < 0)
        refusal = RECD_RELOAD_LISTEN_FAILED;
    if (refusal != RECD_RELOAD_ACCEPTED) {
        tls_server_ctx_free(tls);
        refuse_reload(s, &next, refusal, why);
        return;
    }
    tls_server_ctx_free(s->ingest.tls);
    s->ingest.tls = tls;
    recd_config_diff diff;
    recd_config_compare(&s->cfg, &next, &diff);
    log_changes(&diff);
    /* Options that need a restart keep their running values: the output root, the metrics
     * endpoint, and the fleet's layout (its stream, partition count and this instance's name). */
    swap_strings(&next.output.root, &s->cfg.output.root);
    /* metrics.remote_save and metrics.console change live; the endpoint itself does not. */
    next.metrics.enabled = s->cfg.metrics.enabled;
    next.metrics.listen = s->cfg.metrics.listen;
    next.metrics.allow_remote = s->cfg.metrics.allow_remote;
    next.metrics.tls = s->cfg.metrics.tls;
    swap_strings(&next.nats.stream, &s->cfg.nats.stream);
    swap_strings(&next.nats.instance, &s->cfg.nats.instance);
    next.nats.partitions = s->cfg.nats.partitions;
    recd_config old = s->cfg;
    s->cfg = next;
    recd_config_free(&old);
    apply_listeners(s, nats_options_changed(&diff));
    if (LIST_EMPTY(&s->ingest.listeners))
        log_warn("reload: no listeners now (listen: [] and no sockets were passed): nothing can be recorded");
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
