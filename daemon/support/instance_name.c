/* SPDX-License-Identifier: MIT */
/* This recd's name for file names (instance_name.h). */
#include "support/instance_name.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define INSTANCE_NAME_MAX 64

/* Keeps the bytes a file name component and a NATS key token both allow. */
static void tidy(char *s)
{
    if (!*s)
        snprintf(s, INSTANCE_NAME_MAX + 1, "recd");
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_'))
            *s = '_';
}

const char *instance_name(const recd_config *cfg)
{
    static char host[INSTANCE_NAME_MAX + 1];
    static char configured[INSTANCE_NAME_MAX + 1];
    if (cfg->nats.instance && *cfg->nats.instance) {
        snprintf(configured, sizeof configured, "%s", cfg->nats.instance);
        tidy(configured);
        return configured;
    }
    if (!host[0]) {
        if (gethostname(host, sizeof host - 1) != 0)
            host[0] = '\0';
        host[sizeof host - 1] = '\0';
        tidy(host);
    }
    return host;
}
