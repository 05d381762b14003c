/* SPDX-License-Identifier: MIT */
/* What startup and a reload both apply: output.file_mode / dir_mode through the umask, and the
 * announcement of a bound listener (the log and --print-ports). */
#include "server.h"

#include <stdio.h>
#include <sys/stat.h>

#include "support/log.h"

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
