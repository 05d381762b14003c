/* SPDX-License-Identifier: MIT */
/* dl_table.h: dlopen once under one lock, dlsym each entry, remember the outcome. The handle stays
 * open until exit: the slots point into it. */
#include "base/dl_table.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t dl_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *dl_why(void)
{
    const char *e = dlerror();
    return e ? e : "no reason given";
}

/* Under dl_lock: 1 or a negative errno, with lib->why set on failure. */
static int dl_open(dl_library *lib)
{
    /* The packages only recommend these libraries, so the fix is one command away: name it. */
    char install[160];
    if (lib->package && lib->package[0])
        snprintf(install, sizeof install, "it with: apt-get install %s", lib->package);
    else
        snprintf(install, sizeof install, "%s", lib->soname);
    void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(lib->why, sizeof lib->why,
                 "%s (%s), needed for %s, cannot be loaded (%s); install %s", lib->label,
                 lib->soname, lib->needed_for, dl_why(), install);
        return -ELIBACC;
    }
    for (size_t i = 0; i < lib->count; i++) {
        dlerror();
        void *sym = dlsym(h, lib->symbols[i].name);
        if (!sym) {
            snprintf(lib->why, sizeof lib->why,
                     "%s (%s), needed for %s, lacks %s (%s): not the version built against; "
                     "install %s",
                     lib->label, lib->soname, lib->needed_for, lib->symbols[i].name, dl_why(),
                     install);
            for (size_t k = 0; k < i; k++) /* all or nothing */
                memset(lib->symbols[k].slot, 0, sizeof sym);
            dlclose(h);
            return -ELIBACC;
        }
        /* POSIX guarantees a function pointer and void * share their representation. */
        memcpy(lib->symbols[i].slot, &sym, sizeof sym);
    }
    return 1;
}

int recd__dl_load(dl_library *lib, char *err, size_t errlen)
{
    pthread_mutex_lock(&dl_lock);
    if (lib->state == 0)
        lib->state = dl_open(lib);
    int state = lib->state;
    if (state < 0 && err && errlen)
        snprintf(err, errlen, "%s", lib->why);
    pthread_mutex_unlock(&dl_lock);
    return state < 0 ? state : 0;
}
