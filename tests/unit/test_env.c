/* The GV_* table: size parsing, every error message names the variable,
 * the value and what is accepted; unknown variables get a suggestion.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include "core/env.h"

#include <stdlib.h>
#include <string.h>

static char *read_stderr(void)
{
    static char buf[8192];
    FILE       *f = cr_get_redirected_stderr();
    size_t      n;

    fflush(stderr);
    n      = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    return buf;
}

Test(env, parse_size_units)
{
    static const struct { const char *s; uint64_t v; } ok[] = {
        {"0", 0}, {"4096", 4096}, {"64k", 65536}, {"64K", 65536},
        {"1m", 1 << 20}, {"2g", 2ull << 30}, {"1kb", 1024}, {"1KiB", 1024},
        {"3t", 3ull << 40},
    };
    static const char *bad[] = {"", "-3", "k", "12q", "1.5m", "64kk",
                                "99999999999999999999", "18446744073709551615k",
                                " 5", "5 ", "+5"};
    uint64_t v;
    size_t   i;

    for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        cr_assert_eq(gv__parse_size(ok[i].s, &v), GV_OK, "%s", ok[i].s);
        cr_assert_eq(v, ok[i].v, "%s gave %llu", ok[i].s,
                     (unsigned long long)v);
    }
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(gv__parse_size(bad[i], &v), GV_ERR_INVALID, "'%s'",
                     bad[i]);
}

static void expect_error(const char *name, const char *value,
                         const char *const *parts, size_t nparts)
{
    char   err[512];
    size_t i;

    cr_assert_eq(gv__env_parse_one(name, value, err, sizeof(err)),
                 GV_ERR_INVALID, "GV_%s=%s accepted", name, value);
    for (i = 0; i < nparts; i++)
        cr_assert(strstr(err, parts[i]) != NULL, "message '%s' lacks '%s'",
                  err, parts[i]);
}

Test(env, bad_values_name_variable_value_and_accepted)
{
    const char *size[] = {"GV_AGG_BYTES='-3'", "size", "k, m, g suffix",
                          "from 256 to"};
    const char *low[]  = {"GV_AGG_BYTES='12'", "out of range", "256"};
    const char *log[]  = {"GV_LOG='loud'", "error|warn|info|debug|trace"};
    const char *bind[] = {"GV_BIND='socket'", "core|none"};
    const char *bl[]   = {"GV_STATS='maybe'", "0 or 1"};
    const char *ui[]   = {"GV_SPIN_US='1e3'", "whole number", "0 to"};

    expect_error("AGG_BYTES", "-3", size, 4);
    expect_error("AGG_BYTES", "12", low, 3);
    expect_error("LOG", "loud", log, 2);
    expect_error("BIND", "socket", bind, 2);
    expect_error("STATS", "maybe", bl, 2);
    expect_error("SPIN_US", "1e3", ui, 3);
}

Test(env, good_values_parse)
{
    char err[256];
    cr_assert_eq(gv__env_parse_one("AGG_BYTES", "1m", err, sizeof(err)), GV_OK);
    cr_assert_eq(gv__env_parse_one("LOG", "DEBUG", err, sizeof(err)), GV_OK);
    cr_assert_eq(gv__env_parse_one("STATS", "yes", err, sizeof(err)), GV_OK);
    cr_assert_eq(gv__env_parse_one("TRANSPORT", "tcp", err, sizeof(err)),
                 GV_OK);
    cr_assert_eq(gv__env_parse_one("NOPE", "1", err, sizeof(err)),
                 GV_ERR_NOT_FOUND);
}

Test(env, parse_reads_environment_and_defaults)
{
    char err[512];

    setenv("GV_AGG_BYTES", "128k", 1);
    setenv("GV_AMO", "native", 1);
    unsetenv("GV_HEAP");
    cr_assert_eq(gv__env_parse(err, sizeof(err)), GV_OK, "%s", err);
    cr_assert_eq(gv__env.AGG_BYTES, 128 * 1024);
    cr_assert(gv__env.AGG_BYTES_set);
    cr_assert_eq(gv__env.AMO, GV_AMO_NATIVE);
    cr_assert_eq(gv__env.AGG_ROUTE, GV_AGG_ROUTE_DIRECT);
    setenv("GV_AGG_ROUTE", "Node", 1);
    cr_assert_eq(gv__env_parse(err, sizeof(err)), GV_OK, "%s", err);
    cr_assert_eq(gv__env.AGG_ROUTE, GV_AGG_ROUTE_NODE);
    setenv("GV_AGG_ROUTE", "node2", 1);
    cr_assert_eq(gv__env_parse(err, sizeof(err)), GV_OK, "%s", err);
    cr_assert_eq(gv__env.AGG_ROUTE, GV_AGG_ROUTE_NODE2);
    setenv("GV_AGG_ROUTE", "nodes", 1);
    cr_assert_eq(gv__env_parse(err, sizeof(err)), GV_ERR_INVALID);
    cr_assert(strstr(err, "direct|node|node2") != NULL, "%s", err);
    unsetenv("GV_AGG_ROUTE");
    cr_assert_eq(gv__env.HEAP, 64ull << 20);
    cr_assert(!gv__env.HEAP_set);
    setenv("GV_AGG_BYTES", "lots", 1);
    cr_assert_eq(gv__env_parse(err, sizeof(err)), GV_ERR_INVALID);
    cr_assert(strstr(err, "GV_AGG_BYTES='lots'") != NULL, "%s", err);
}

Test(env, unknown_variable_suggests_closest, .init = cr_redirect_stderr)
{
    char err[512];

    setenv("GV_TRANSPOT", "tcp", 1);
    setenv("GV_COMPLETELY_UNRELATED_KNOB", "1", 1);
    cr_assert_eq(gv__env_parse(err, sizeof(err)), GV_OK);
    gv__env_warn_unknown();
    {
        char *out = read_stderr();
        cr_assert(strstr(out, "unknown variable GV_TRANSPOT (maybe "
                              "GV_TRANSPORT?)") != NULL, "%s", out);
        cr_assert(strstr(out, "unknown variable GV_COMPLETELY_UNRELATED_KNOB;"
                              " gvinfo -c lists") != NULL, "%s", out);
    }
}

Test(env, unknown_variable_warning_can_be_silenced, .init = cr_redirect_stderr)
{
    char err[512];

    setenv("GV_TRANSPOT", "tcp", 1);
    setenv("GV_WARN_UNUSED_ENV", "0", 1);
    cr_assert_eq(gv__env_parse(err, sizeof(err)), GV_OK);
    gv__env_warn_unknown();
    cr_assert_str_empty(read_stderr());
}

Test(env, markdown_table_lists_every_public_row)
{
    char   buf[65536];
    FILE  *f = fmemopen(buf, sizeof(buf), "w");
    char   err[256];

    cr_assert_eq(gv__env_parse(err, sizeof(err)), GV_OK);
    gv__env_print(f, 1);
    fclose(f);
    cr_assert(strstr(buf, "| `GV_TRANSPORT` | `auto` |") != NULL);
    cr_assert(strstr(buf, "`GV_AGG_BYTES`") != NULL);
    cr_assert(strstr(buf, "`GV_BOOT_FD`") == NULL, "internal row printed");
}
