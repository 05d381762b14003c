/* SPDX-License-Identifier: MIT */
/* The console's pages: GET / and the files embedded from daemon/app/console/, answered with the
 * strict Content-Security-Policy (no inline scripts, nothing from another origin). */
#include "console.h"

#include <string.h>

#include "console_assets.h"

bool console_route_pages(console *c, const recd_http_request *req, recd_http_reply *reply)
{
    (void)c;
    const char *path = req->path;
    size_t len = req->path_len;
    if (len == 1 && path[0] == '/')
        path = "/index.html", len = strlen(path);
    for (size_t i = 0; i < console_asset_count; i++) {
        const console_asset *a = &console_assets[i];
        if (strlen(a->path) == len && memcmp(a->path, path, len) == 0) {
            recd_http_reply_send(reply, 200, a->content_type,
                                 CONSOLE_SECURITY_HEADERS "Cache-Control: no-cache\r\n", a->data, a->len);
            return true;
        }
    }
    return false;
}
