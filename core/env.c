/* Parser and printer for the GV_* table in core/env.def. The only file
 * that calls getenv(). SPDX-License-Identifier: BSD-3-Clause */
#include "core/env.h"
#include "core/log.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

gv_env_t gv__env;

typedef struct {
    const char    *name;     /* without the GV_ prefix */
    gv_env_type_t  type;
    const char    *defval;
    const char    *accept;
    uint64_t       min, max;
    const char    *category;
    const char    *doc;
    size_t         offset;   /* of the field in gv_env_t */
    size_t         set_offset;
} env_row_t;

static const env_row_t rows[] = {
#define GV_ENV(_n, _t, _d, _a, _min, _max, _c, _doc)                         \
    {#_n, GV_ENV_##_t, _d, _a, (uint64_t)(_min), (uint64_t)(_max), #_c, _doc, \
     offsetof(gv_env_t, _n), offsetof(gv_env_t, _n##_set)},
#include "core/env.def"
#undef GV_ENV
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

gv_status_t gv__parse_size(const char *s, uint64_t *val_p)
{
    char              *end;
    unsigned long long v;
    uint64_t           mult = 1;

    /* Digits first: strtoull would skip spaces and take a sign. */
    if (!isdigit((unsigned char)*s))
        return GV_ERR_INVALID;
    errno = 0;
    v     = strtoull(s, &end, 10);
    if (errno != 0)
        return GV_ERR_INVALID;
    switch (tolower((unsigned char)*end)) {
    case '\0': break;
    case 'k': mult = 1ull << 10; end++; break;
    case 'm': mult = 1ull << 20; end++; break;
    case 'g': mult = 1ull << 30; end++; break;
    case 't': mult = 1ull << 40; end++; break;
    default: return GV_ERR_INVALID;
    }
    /* "64k", "64kb" and "64kib" all mean 65536 bytes. */
    if ((mult > 1) && ((strcasecmp(end, "b") == 0) ||
                       (strcasecmp(end, "ib") == 0)))
        end += strlen(end);
    if (*end != '\0')
        return GV_ERR_INVALID;
    if ((v != 0) && (mult > UINT64_MAX / v))
        return GV_ERR_INVALID;
    *val_p = (uint64_t)v * mult;
    return GV_OK;
}

static gv_status_t parse_uint(const char *s, uint64_t *val_p)
{
    char              *end;
    unsigned long long v;

    if (!isdigit((unsigned char)*s))
        return GV_ERR_INVALID;
    errno = 0;
    v     = strtoull(s, &end, 10);
    if ((errno != 0) || (*end != '\0'))
        return GV_ERR_INVALID;
    *val_p = v;
    return GV_OK;
}

/* Index of @a s in "a|b|c", or -1. */
static int enum_index(const char *accept, const char *s)
{
    size_t      n = strlen(s);
    const char *p = accept;
    int         i = 0;

    for (;;) {
        const char *bar = strchr(p, '|');
        size_t      len = (bar != NULL) ? (size_t)(bar - p) : strlen(p);
        if ((len == n) && (strncasecmp(p, s, n) == 0))
            return i;
        if (bar == NULL)
            return -1;
        p = bar + 1;
        i++;
    }
}

/* A value echoed in a message is cut to this many characters (with
 * "...") so that the message still names the variable and what it
 * accepts. */
#define ECHO_MAX 64
#define ECHO_FMT "'%.64s%s'"
#define ECHO(_v) (_v), (strlen(_v) > ECHO_MAX) ? "..." : ""

static gv_status_t parse_row(const env_row_t *r, const char *value,
                             gv_env_t *env, char *err, size_t errlen)
{
    char    *field = (char *)env + r->offset;
    uint64_t u     = 0;
    int      i;

    switch (r->type) {
    case GV_ENV_STRING:
        *(const char **)field = value;
        return GV_OK;
    case GV_ENV_ENUM:
        i = enum_index(r->accept, value);
        if (i < 0) {
            snprintf(err, errlen, "GV_%s=" ECHO_FMT " is not accepted; use "
                     "one of: %s", r->name, ECHO(value), r->accept);
            return GV_ERR_INVALID;
        }
        *(int *)field = i;
        return GV_OK;
    case GV_ENV_BOOL:
        i = enum_index("0|1|no|yes|off|on|n|y|false|true", value);
        if (i < 0) {
            snprintf(err, errlen, "GV_%s=" ECHO_FMT " is not a boolean; use "
                     "0 or 1 (also no/yes, off/on)", r->name, ECHO(value));
            return GV_ERR_INVALID;
        }
        *(int *)field = i & 1;
        return GV_OK;
    case GV_ENV_UINT:
    case GV_ENV_SIZE:
        if (((r->type == GV_ENV_UINT) ? parse_uint(value, &u)
                                      : gv__parse_size(value, &u)) != GV_OK) {
            snprintf(err, errlen, "GV_%s=" ECHO_FMT " is not %s; use %s "
                     "from %llu to %llu", r->name, ECHO(value),
                     (r->type == GV_ENV_UINT) ? "a whole number" : "a size",
                     (r->type == GV_ENV_UINT)
                         ? r->accept
                         : "a byte count with an optional k, m, g suffix",
                     (unsigned long long)r->min, (unsigned long long)r->max);
            return GV_ERR_INVALID;
        }
        if ((u < r->min) || (u > r->max) ||
            ((strstr(r->accept, "power of two") != NULL) && (u & (u - 1)))) {
            snprintf(err, errlen, "GV_%s=" ECHO_FMT " is %s; use %s from "
                     "%llu to %llu", r->name, ECHO(value),
                     ((u < r->min) || (u > r->max)) ? "out of range"
                                                    : "not a power of two",
                     r->accept, (unsigned long long)r->min,
                     (unsigned long long)r->max);
            return GV_ERR_INVALID;
        }
        *(uint64_t *)field = u;
        return GV_OK;
    }
    return GV_ERR_INVALID;
}

/* A value the user gave. One rule for every variable: set but empty is
 * refused (a script's "GV_TRANSPORT=$TL" with TL unset must not run with
 * the default); unset the variable for its default. */
static gv_status_t parse_user(const env_row_t *r, const char *value,
                              gv_env_t *env, char *err, size_t errlen)
{
    if (value[0] == '\0') {
        snprintf(err, errlen, "GV_%s is set but empty; unset it for the "
                 "default%s%s%s, or give %s", r->name,
                 (r->defval[0] != '\0') ? " ('" : "", r->defval,
                 (r->defval[0] != '\0') ? "')" : "", r->accept);
        return GV_ERR_INVALID;
    }
    return parse_row(r, value, env, err, errlen);
}

gv_status_t gv__env_parse_one(const char *name, const char *value, char *err,
                              size_t errlen)
{
    gv_env_t scratch;
    size_t   i;

    for (i = 0; i < NROWS; i++)
        if (strcmp(rows[i].name, name) == 0)
            return parse_user(&rows[i], value, &scratch, err, errlen);
    snprintf(err, errlen, "GV_%s is not a Grapevine variable", name);
    return GV_ERR_NOT_FOUND;
}

gv_status_t gv__env_parse(char *err, size_t errlen)
{
    static char transport[64];
    char        name[64];
    const char *value;
    gv_status_t status;
    size_t      i;

    for (i = 0; i < NROWS; i++) {
        const env_row_t *r = &rows[i];
        snprintf(name, sizeof(name), "GV_%s", r->name);
        value = getenv(name);
        *(int *)((char *)&gv__env + r->set_offset) = (value != NULL);
        status = parse_row(r, r->defval, &gv__env, err, errlen);
        if (status != GV_OK) /* a bad default is a bug in env.def */
            return status;
        if (value != NULL) {
            status = parse_user(r, value, &gv__env, err, errlen);
            if (status != GV_OK)
                return status;
        }
    }
    /* Transport names, as every enumerated value, regardless of case. */
    if (strlen(gv__env.TRANSPORT) < sizeof(transport)) {
        for (i = 0; gv__env.TRANSPORT[i] != '\0'; i++)
            transport[i] = (char)tolower((unsigned char)gv__env.TRANSPORT[i]);
        transport[i]      = '\0';
        gv__env.TRANSPORT = transport;
    }
    gv__log_level = GV_LOG_ERROR + gv__env.LOG;
    return GV_OK;
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), i, j;
    size_t prev[65], cur[65];

    if ((la > 64) || (lb > 64))
        return 99;
    for (j = 0; j <= lb; j++)
        prev[j] = j;
    for (i = 1; i <= la; i++) {
        cur[0] = i;
        for (j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = (sub < del) ? ((sub < ins) ? sub : ins)
                                 : ((del < ins) ? del : ins);
        }
        memcpy(prev, cur, sizeof(cur));
    }
    return prev[lb];
}

void gv__env_warn_unknown(void)
{
    char **e;

    if (!gv__env.WARN_UNUSED_ENV)
        return;
    for (e = environ; *e != NULL; e++) {
        const char *eq = strchr(*e, '=');
        char        name[64];
        size_t      len, i, best = 0, bestd = (size_t)-1;

        if ((strncmp(*e, "GV_", 3) != 0) || (eq == NULL))
            continue;
        len = (size_t)(eq - *e) - 3;
        if (len >= sizeof(name))
            len = sizeof(name) - 1;
        memcpy(name, *e + 3, len);
        name[len] = '\0';
        for (i = 0; i < NROWS; i++) {
            size_t d;
            if (strcmp(rows[i].name, name) == 0)
                break;
            d = edit_distance(rows[i].name, name);
            if (d < bestd) {
                bestd = d;
                best  = i;
            }
        }
        if (i < NROWS)
            continue;
        if (bestd <= 3)
            gv_warn("unknown variable GV_%s (maybe GV_%s?); set "
                    "GV_WARN_UNUSED_ENV=0 to silence", name, rows[best].name);
        else
            gv_warn("unknown variable GV_%s; gvinfo -c lists the known ones; "
                    "set GV_WARN_UNUSED_ENV=0 to silence", name);
    }
}

static void format_value(const env_row_t *r, const gv_env_t *env, char *buf,
                         size_t len)
{
    const char *field = (const char *)env + r->offset;
    const char *p;
    int         i;

    switch (r->type) {
    case GV_ENV_STRING:
        snprintf(buf, len, "%s", *(const char *const *)field);
        break;
    case GV_ENV_ENUM:
        p = r->accept;
        for (i = *(const int *)field; (i > 0) && (p != NULL); i--) {
            p = strchr(p, '|');
            p = (p != NULL) ? p + 1 : NULL;
        }
        snprintf(buf, len, "%.*s", (p != NULL) ? (int)strcspn(p, "|") : 0,
                 (p != NULL) ? p : "");
        break;
    case GV_ENV_BOOL:
        snprintf(buf, len, "%d", *(const int *)field);
        break;
    case GV_ENV_UINT:
    case GV_ENV_SIZE:
        snprintf(buf, len, "%llu",
                 (unsigned long long)*(const uint64_t *)field);
        break;
    }
}

void gv__env_print(FILE *f, int markdown)
{
    char   val[128], accept[160];
    size_t i;

    if (markdown) {
        fprintf(f, "| variable | default | accepted | meaning |\n");
        fprintf(f, "| --- | --- | --- | --- |\n");
    }
    for (i = 0; i < NROWS; i++) {
        const env_row_t *r = &rows[i];
        if (strcmp(r->category, "INTERNAL") == 0)
            continue;
        if ((r->type == GV_ENV_UINT) || (r->type == GV_ENV_SIZE))
            snprintf(accept, sizeof(accept), "%s, %llu..%llu", r->accept,
                     (unsigned long long)r->min, (unsigned long long)r->max);
        else
            snprintf(accept, sizeof(accept), "%s", r->accept);
        if (markdown) {
            char *c;
            fprintf(f, "| `GV_%s` | %s%s%s | ", r->name,
                    r->defval[0] ? "`" : "", r->defval[0] ? r->defval
                                                           : "(empty)",
                    r->defval[0] ? "`" : "");
            for (c = accept; *c != '\0'; c++) /* '|' would end the cell */
                fputs((*c == '|') ? " \\| " : (char[]){*c, '\0'}, f);
            fprintf(f, " | %s |\n", r->doc);
            continue;
        }
        format_value(r, &gv__env, val, sizeof(val));
        fprintf(f, "#\n# %s\n# default: %s; accepted: %s; category: %s\n",
                r->doc, r->defval, accept, r->category);
        fprintf(f, "GV_%s=%s%s\n", r->name, val,
                *(const int *)((const char *)&gv__env + r->set_offset)
                    ? "" : "    (default)");
    }
}
