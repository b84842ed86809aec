/* Criterion driver of the perf tools' output and arguments (perf/out.h):
 * --csv gives a '#' metadata line, the column names and one well-formed
 * row per measurement; --format json one document; -h prints the usage
 * and exits 0; a bad size or format is named and exits 2; sizes take
 * k/m suffixes; a summary field not measured reads n/a. Two ranks over
 * shm. SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/driver_common.h"

#define PERFOUT_COLUMNS \
    "tool,transport,ranks,metric,config,bytes,unit,median,min,max,iters"

/* Run @a cmd with its stdout only (stderr dropped) into *out_p; returns
 * the exit status. */
static int run_stdout(const char *cmd, char **out_p)
{
    char full[1536];

    snprintf(full, sizeof(full), "{ %s 2>/dev/null; }", cmd);
    return drv_run(full, out_p);
}

/* Split one CSV row into at most @a max fields (a field in double quotes
 * may hold commas); returns the count. Modifies @a line. */
static int csv_fields(char *line, char **f, int max)
{
    int   n = 0;
    char *p = line;

    while ((n < max) && (p != NULL)) {
        if (*p == '"') {
            char *q = strchr(p + 1, '"');

            if (q == NULL)
                return -1;
            f[n++] = p + 1;
            *q     = '\0';
            p      = (q[1] == ',') ? q + 2 : NULL;
            if ((q[1] != ',') && (q[1] != '\0'))
                return -1;
        } else {
            char *c = strchr(p, ',');

            f[n++] = p;
            if (c != NULL)
                *c = '\0';
            p = (c != NULL) ? c + 1 : NULL;
        }
    }
    return (p == NULL) ? n : -1;
}

/* Check the CSV output @a out of tool @a tool run by @a cmd: the metadata
 * line, the columns, and rows of 11 fields of this tool, shm, 2 ranks,
 * min <= median <= max and iters >= 1. Returns the number of rows, and in
 * @a bytes_seen how many rows had each of the sizes of @a sizes. */
static int check_csv(const char *cmd, const char *out, const char *tool,
                     const long *sizes, int *bytes_seen, int nsizes)
{
    char *copy = strdup(out), *save = NULL, *line, want[64];
    int   rows = 0, lineno = 0;

    cr_assert_not_null(copy);
    snprintf(want, sizeof(want), "# tool=%s ", tool);
    for (line = strtok_r(copy, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save), lineno++) {
        char  *f[16];
        double med, lo, hi;
        int    n, i;

        if (lineno == 0) {
            static const char *const keys[] = {
                " version=", " commit=", " date=", " host=",
                " transport=shm ", " ranks=2 ", " libs=\"", " args=\""};

            cr_expect(strncmp(line, want, strlen(want)) == 0,
                      "%s: first line \"%s\", expected \"%s...\"", cmd, line,
                      want);
            for (i = 0; i < (int)(sizeof(keys) / sizeof(keys[0])); i++)
                cr_expect(strstr(line, keys[i]) != NULL,
                          "%s: the metadata line lacks \"%s\": %s", cmd,
                          keys[i], line);
            continue;
        }
        if (lineno == 1) {
            cr_expect_str_eq(line, PERFOUT_COLUMNS, "%s: column line", cmd);
            continue;
        }
        n = csv_fields(line, f, 16);
        cr_expect_eq(n, 11, "%s: row \"%s\" has %d fields, expected 11",
                     cmd, line, n);
        if (n != 11)
            continue;
        rows++;
        cr_expect_str_eq(f[0], tool, "%s: tool column", cmd);
        cr_expect_str_eq(f[1], "shm", "%s: transport column", cmd);
        cr_expect_str_eq(f[2], "2", "%s: ranks column", cmd);
        cr_expect(*f[3] != '\0', "%s: empty metric", cmd);
        cr_expect(*f[6] != '\0', "%s: empty unit", cmd);
        med = strtod(f[7], NULL);
        lo  = strtod(f[8], NULL);
        hi  = strtod(f[9], NULL);
        cr_expect((lo <= med) && (med <= hi),
                  "%s: row \"%s\": not min <= median <= max", cmd, f[3]);
        cr_expect(atoi(f[10]) >= 1, "%s: iters %s", cmd, f[10]);
        for (i = 0; i < nsizes; i++)
            if ((*f[5] != '\0') && (atol(f[5]) == sizes[i]))
                bytes_seen[i]++;
    }
    free(copy);
    return rows;
}

/* pingpong -s 8 -S 64: a latency and a bandwidth row for each of 8, 16,
 * 32 and 64 bytes, and no other size. */
Test(perfout, pingpong_csv, .timeout = 240)
{
    static const long sizes[] = {8, 16, 32, 64, 128, 4};
    int               seen[6] = {0}, rows, i, rc;
    char              cmd[512], *out = NULL;

    snprintf(cmd, sizeof(cmd), "GV_TRANSPORT=shm timeout -k 5 120 "
             "%s/bin/gvrun -n 2 %s/perf/pingpong -s 8 -S 64 -r 2 --csv",
             GV_BUILD_DIR, GV_BUILD_DIR);
    rc = run_stdout(cmd, &out);
    cr_assert_eq(rc, 0, "%s: exit %d:\n%s", cmd, rc, out ? out : "");
    rows = check_csv(cmd, out, "pingpong", sizes, seen, 6);
    cr_expect_eq(rows, 8, "%s: %d rows, expected 8:\n%s", cmd, rows, out);
    for (i = 0; i < 4; i++)
        cr_expect_eq(seen[i], 2, "%s: %d rows of %ld bytes, expected 2",
                     cmd, seen[i], sizes[i]);
    cr_expect_eq(seen[4] + seen[5], 0, "%s: rows of sizes not asked for",
                 cmd);
    free(out);
}

/* putbw --am with sizes given as 1k and 2k; gups and coll: each its rows,
 * well formed. */
Test(perfout, putbw_gups_coll_csv, .timeout = 240)
{
    static const long sizes[] = {1024, 2048};
    static const struct {
        const char *tool, *args;
        int         min_rows;
    } runs[] = {
        {"ambw", "putbw --am -s 1k -S 2k -r 3 -t 0.01 --csv", 4},
        {"gups", "gups --log2 12 --csv", 4},
        {"coll", "coll -i 10 -r 3 -S 2k --csv", 8},
    };
    size_t i;

    for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        int  seen[2] = {0}, rows, rc;
        char cmd[512], *out = NULL;

        snprintf(cmd, sizeof(cmd), "GV_TRANSPORT=shm timeout -k 5 120 "
                 "%s/bin/gvrun -n 2 %s/perf/%s", GV_BUILD_DIR, GV_BUILD_DIR,
                 runs[i].args);
        rc = run_stdout(cmd, &out);
        cr_expect_eq(rc, 0, "%s: exit %d:\n%s", cmd, rc, out ? out : "");
        if (rc == 0) {
            rows = check_csv(cmd, out, runs[i].tool, sizes, seen, 2);
            cr_expect_geq(rows, runs[i].min_rows, "%s: %d rows:\n%s", cmd,
                          rows, out);
            if (i == 0)
                cr_expect((seen[0] == 2) && (seen[1] == 2),
                          "%s: rows of 1024 and 2048 bytes: %d and %d", cmd,
                          seen[0], seen[1]);
        }
        free(out);
    }
}

/* --format json: one document, meta first, rows last. */
Test(perfout, pingpong_json, .timeout = 240)
{
    char  cmd[512], *out = NULL;
    int   rc;

    snprintf(cmd, sizeof(cmd), "GV_TRANSPORT=shm timeout -k 5 120 "
             "%s/bin/gvrun -n 2 %s/perf/pingpong -s 1k -S 1k -r 2 "
             "--format json", GV_BUILD_DIR, GV_BUILD_DIR);
    rc = run_stdout(cmd, &out);
    cr_assert_eq(rc, 0, "%s: exit %d:\n%s", cmd, rc, out ? out : "");
    cr_expect(strncmp(out, "{\"meta\": {\"tool\": \"pingpong\"", 27) == 0,
              "%s: does not begin with the meta object:\n%s", cmd, out);
    cr_expect(strstr(out, "\"rows\": [") != NULL, "%s: no rows:\n%s", cmd,
              out);
    cr_expect(strstr(out, "\"metric\": \"lat\", \"config\": \"send_now\", "
                     "\"bytes\": 1024, \"unit\": \"us\", \"median\": ") !=
                  NULL, "%s: no latency row of 1024 bytes:\n%s", cmd, out);
    cr_expect((strlen(out) > 3) &&
                  (strcmp(out + strlen(out) - 3, "]}\n") == 0),
              "%s: does not end the document:\n%s", cmd, out);
    free(out);
}

/* -h and --help: the usage on stdout, exit 0, before any job starts. */
Test(perfout, help_exits_0, .timeout = 120)
{
    static const char *const tools[] = {
        "pingpong", "putbw", "gups", "gups_dsm", "uts", "ctxswitch",
        "lineping", "a2a_bw", "coll", "containers", "wake", "hop_ucx",
        "bw_ucx"};
    size_t i;

    for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
        char cmd[512], *out = NULL;
        int  rc;

        snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/perf/%s %s",
                 GV_BUILD_DIR, tools[i], (i % 2) ? "-h" : "--help");
        rc = run_stdout(cmd, &out);
        cr_expect_eq(rc, 0, "%s: exit %d", cmd, rc);
        cr_expect((out != NULL) && (strncmp(out, "usage: ", 7) == 0),
                  "%s: no usage on stdout:\n%s", cmd, out ? out : "");
        free(out);
    }
}

/* A bad size or format names the option and what is accepted, exit 2. */
Test(perfout, bad_values_exit_2, .timeout = 120)
{
    static const struct {
        const char *args, *line;
    } bad[] = {
        {"pingpong -s 1x", "-s 1x: accepted 0..67108864 bytes"},
        {"pingpong -S 65m", "-S 65m: accepted"},
        {"putbw -S 2q", "-S 2q: accepted 1..1073741824 bytes"},
        {"a2a_bw -s 4kk", "-s 4kk: accepted 1..67108864 bytes"},
        {"coll -S 1t", "-S 1t: accepted 8..67108864 bytes"},
        {"gups --format xml", "--format xml: accepted text, csv or json"},
        {"a2a_bw --format=yaml", "--format yaml: accepted text, csv or json"},
    };
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char        cmd[512];
        const char *lines[1] = {bad[i].line};

        snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/perf/%s",
                 GV_BUILD_DIR, bad[i].args);
        drv_expect_run(cmd, 2, lines, 1);
    }
}

/* The text summary prints n/a for the sizes it did not measure. */
Test(perfout, summary_not_measured_is_na, .timeout = 240)
{
    const char *lines[1] = {"lat8_us=n/a bw1m_MBps=n/a"};
    char        cmd[512];

    snprintf(cmd, sizeof(cmd), "GV_TRANSPORT=shm timeout -k 5 120 "
             "%s/bin/gvrun -n 2 %s/perf/pingpong -s 16 -S 32 -r 1",
             GV_BUILD_DIR, GV_BUILD_DIR);
    drv_expect_run(cmd, 0, lines, 1);
}
