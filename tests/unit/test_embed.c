/* Embedding on one rank (the self transport): gv_init_opts' options and
 * returned errors, re-init, thread levels, named handlers and their
 * collisions, and the calls that need a running job.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <grapevine.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void self_env(void)
{
    setenv("GV_TRANSPORT", "self", 1);
    setenv("GV_WARN_UNUSED_ENV", "0", 1);
}

static gv_status_t start(gv_layers_t layers, gv_thread_level_t level)
{
    gv_init_opts_t o;

    gv_init_opts_default(&o);
    o.layers       = layers;
    o.thread_level = level;
    return gv_init_opts(&o);
}

Test(embed, defaults)
{
    gv_init_opts_t o;

    memset(&o, 0xff, sizeof(o));
    gv_init_opts_default(&o);
    cr_assert_eq(o.layers, GV_LAYERS_MESSAGES);
    cr_assert_eq(o.bind, GV_INIT_BIND_NONE);
    cr_assert_eq(o.thread_level, GV_THREAD_FUNNELED);
    cr_assert_eq(o.errors_fatal, 0);
}

Test(embed, errors_are_returned_with_their_message, .init = self_env)
{
    gv_init_opts_t o;

    setenv("GV_SPIN_US", "-3", 1);
    gv_init_opts_default(&o);
    cr_assert_eq(gv_init_opts(&o), GV_ERR_INVALID);
    cr_assert(strstr(gv_last_error(), "GV_SPIN_US") != NULL, "%s",
              gv_last_error());
    unsetenv("GV_SPIN_US");
    setenv("GV_TRANSPORT", "carrier-pigeon", 1);
    cr_assert_eq(gv_init_opts(&o), GV_ERR_NOT_FOUND);
    cr_assert(strstr(gv_last_error(), "carrier-pigeon") != NULL, "%s",
              gv_last_error());
    self_env();
    o.thread_level = GV_THREAD_MULTIPLE;
    cr_assert_eq(gv_init_opts(&o), GV_ERR_UNSUPPORTED);
    cr_assert(strstr(gv_last_error(), "SERIALIZED") != NULL);
    o.thread_level = (gv_thread_level_t)9;
    cr_assert_eq(gv_init_opts(&o), GV_ERR_INVALID);
    gv_init_opts_default(&o);
    o.bind = (gv_init_bind_t)5;
    cr_assert_eq(gv_init_opts(&o), GV_ERR_INVALID);
    cr_assert(strstr(gv_last_error(), "bind 5") != NULL);
    cr_assert_eq(gv_init_opts(NULL), GV_ERR_INVALID);
    /* None of that started anything. */
    cr_assert_eq(gv_on_peer_failure(NULL, NULL), GV_ERR_STATE);
    {
        int fd;
        cr_assert_eq(gv_wait_fd(&fd), GV_ERR_STATE);
        cr_assert_eq(gv_wait_arm(), GV_ERR_STATE);
    }
    cr_assert_eq(start(GV_LAYERS_MESSAGES, GV_THREAD_SERIALIZED), GV_OK);
    cr_assert_str_eq(gv_last_error(), "");
    cr_assert_eq(gv_thread_level(), GV_THREAD_SERIALIZED);
    cr_assert_eq(start(GV_LAYERS_MESSAGES, GV_THREAD_SINGLE), GV_ERR_STATE);
    gv_finalize();
}

static int hits;

static void on_hit(int src, const void *p, size_t len, void *arg)
{
    (void)src;
    (void)p;
    (void)len;
    hits += (int)(intptr_t)arg;
}

/* Three starts in one process, each with other layers; handlers
 * registered before the first stay, those after each init go. */
Test(embed, reinit, .init = self_env)
{
    gv_am_id_t kept, later, named;
    uint64_t   off;
    int        round;

    cr_assert_eq(gv_am_register(on_hit, (void *)1, &kept), GV_OK);
    for (round = 0; round < 3; round++) {
        gv_layers_t layers = (gv_layers_t)(GV_LAYERS_MESSAGES + round);

        cr_assert_eq(start(layers, GV_THREAD_FUNNELED), GV_OK, "round %d: %s",
                     round, gv_last_error());
        cr_assert_eq(gv_am_register(on_hit, (void *)10, &later), GV_OK);
        cr_assert_eq(gv_am_register_named("embed.test", on_hit, (void *)100,
                                          &named), GV_OK, "%s",
                     gv_last_error());
        cr_assert_eq(gv_am_send(0, kept, NULL, 0), GV_OK);
        cr_assert_eq(gv_am_send(0, later, NULL, 0), GV_OK);
        cr_assert_eq(gv_am_send(0, named, NULL, 0), GV_OK);
        gv_barrier();
        cr_assert_eq(hits, 111 * (round + 1));
        cr_assert_eq(gv_sym_alloc(8, 8, &off) == GV_OK,
                     layers >= GV_LAYERS_HEAP);
        gv_finalize();
    }
    cr_assert_eq(gv_init(NULL, NULL), GV_OK);
    cr_assert_eq(gv_thread_level(), GV_THREAD_SINGLE);
    gv_finalize();
}

/* Two names on one id: the second is refused, naming the first. */
Test(embed, named_collision_refused, .init = self_env)
{
    char       names[4096][16], *a = NULL, *b = NULL;
    gv_am_id_t ids[4096], id;
    int        i, j;

    cr_assert_eq(start(GV_LAYERS_MESSAGES, GV_THREAD_FUNNELED), GV_OK);
    /* Find two colliding names by their ids: look them up (which claims
     * no handler), remembering each id. */
    for (i = 0; (i < 4096) && (a == NULL); i++) {
        snprintf(names[i], sizeof(names[i]), "n%d", i);
        if (gv_am_id_named(names[i], &ids[i]) != GV_OK) {
            /* A collision with an earlier lookup: find it. */
            for (j = 0; j < i; j++)
                if (strstr(gv_last_error(), names[j]) != NULL) {
                    a = names[j];
                    b = names[i];
                }
            cr_assert_not_null(a, "refused without naming the other: %s",
                               gv_last_error());
            break;
        }
        cr_assert(ids[i] >= GV_AM_MAX_HANDLERS && ids[i] < GV_AM_NAMED_END);
    }
    cr_assert_not_null(a, "no collision among 4096 names");
    cr_assert(strstr(gv_last_error(), b) != NULL, "%s", gv_last_error());
    cr_assert_eq(gv_am_register_named(b, on_hit, NULL, &id), GV_ERR_INVALID);
    cr_assert_eq(gv_am_register_named(a, on_hit, NULL, &id), GV_OK);
    gv_finalize();
}

Test(embed, named_bad_names, .init = self_env)
{
    char       big[GV_AM_NAME_MAX + 2];
    gv_am_id_t id;

    cr_assert_eq(start(GV_LAYERS_MESSAGES, GV_THREAD_FUNNELED), GV_OK);
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    cr_assert_eq(gv_am_register_named(big, on_hit, NULL, &id), GV_ERR_INVALID);
    cr_assert_eq(gv_am_register_named(NULL, on_hit, NULL, &id),
                 GV_ERR_INVALID);
    cr_assert_eq(gv_am_register_named("ok", NULL, NULL, &id), GV_ERR_INVALID);
    cr_assert_eq(gv_am_register_named("ok", on_hit, NULL, NULL),
                 GV_ERR_INVALID);
    /* An id in the named range nobody claimed here cannot be sent to. */
    cr_assert_eq(gv_am_send(0, GV_AM_NAMED_END - 1, NULL, 0), GV_ERR_INVALID);
    cr_assert(strstr(gv_last_error(), "32767") != NULL, "%s",
              gv_last_error());
    gv_finalize();
}

/* errors_fatal: the error's message, then exit status 1. */
Test(embed, errors_fatal_exits, .init = self_env, .exit_code = 1)
{
    gv_init_opts_t o;

    setenv("GV_HEAP", "lots", 1);
    gv_init_opts_default(&o);
    o.errors_fatal = 1;
    gv_init_opts(&o);
    cr_assert_fail("gv_init_opts returned with errors_fatal set");
}
