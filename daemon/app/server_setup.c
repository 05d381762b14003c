/* SPDX-License-Identifier: MIT */
/* What startup and a reload both apply: output.file_mode / dir_mode through the umask, the
 * announcement of a bound listener (the log and --print-ports), and whether a socket systemd
 * passed already serves a listen entry. */
#include "server.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "support/log.h"
#include "support/peer_name.h"
#include "support/tls_server.h"

void server_announce_listener(recd_server *s, const recd_listener *l)
{
    log_info("listening on %s%s", l->bound, l->activated ? " (socket activation)" : "");
    if (s->cli && s->cli->print_ports) {
        printf("listen %s\n", l->bound);
        fflush(stdout);
    }
}

/* New files and directories get output.file_mode / output.dir_mode (part_file creates them 0644 /
 * 0755 before the umask): the bits neither mode grants are added to the umask. */
void server_apply_modes(recd_server *s)
{
    mode_t extra = (mode_t)(0777 & ~(s->cfg.output.file_mode | s->cfg.output.dir_mode));
    umask((mode_t)s->base_umask | extra);
}

bool server_activated_covers(const recd_server *s, const recd_listen_config *cfg)
{
    struct sockaddr_storage ss;
    char url[RECD_CONFIG_URL_MAX + 16] = "";
    if (cfg->transport != RECD_WIRE_UNIX) {
        memset(&ss, 0, sizeof ss);
        int rc = cfg->addr.family == AF_INET6
                     ? uv_ip6_addr(cfg->addr.host, cfg->addr.port, (struct sockaddr_in6 *)&ss)
                     : uv_ip4_addr(cfg->addr.host, cfg->addr.port, (struct sockaddr_in *)&ss);
        if (rc < 0)
            return false;
        recd_peer_name((const struct sockaddr *)&ss,
                       cfg->transport == RECD_WIRE_UDP ? "udp://" : "tcp://", url, sizeof url);
    }
    const recd_listener *l;
    LIST_FOREACH(l, &s->ingest.listeners, link) {
        if (!l->activated || l->cfg.transport != cfg->transport)
            continue;
        if (cfg->transport == RECD_WIRE_UNIX ? strcmp(l->cfg.path, cfg->path) == 0
                                                  : strcmp(url, l->bound) == 0)
            return true;
    }
    return false;
}

/* The configuration asks for TLS: a tls:// listener, or metrics.tls. */
static bool wants_tls(const recd_config *cfg)
{
    for (size_t i = 0; i < cfg->listen_count; i++)
        if (cfg->listen[i].tls)
            return true;
    return cfg->metrics.enabled && cfg->metrics.tls;
}

int server_tls_context(const recd_config *cfg, struct tls_server_ctx **out, char *why, size_t cap)
{
    *out = NULL;
    if (!wants_tls(cfg) && !cfg->tls.cert)
        return 0;
    tls_server_settings set = {.cert = cfg->tls.cert,
                               .key = cfg->tls.key,
                               .client_ca = cfg->tls.client_ca,
                               .min_version = cfg->tls.min_version};
    if (!set.cert || !set.key) {
        snprintf(why, cap, "TLS needs tls.cert and tls.key");
        return -EINVAL;
    }
    return tls_server_ctx_new(&set, out, why, cap);
}
