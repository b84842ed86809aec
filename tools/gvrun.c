/* gvrun: start N ranks of a program on this machine, serve their bootstrap
 * (rank, size, job key, allgather, barrier), and stop the job as soon as
 * one rank fails. SPDX-License-Identifier: BSD-3-Clause */
#include "core/core.h"
#include "core/gvrun_proto.h"
#include "transports/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define GRACE_MS 1000 /* SIGTERM, then SIGKILL after this */
/* --timeout's ceiling: 10^9 s (31 years) keeps seconds * 10^9 within 64
 * bits. */
#define TIMEOUT_MAX_S 1000000000L
#define NRANKS_MAX    4096

typedef struct {
    pid_t    pid;
    int      fd;          /* our end of the socketpair, -1 once closed */
    int      alive;
    int      spoke;       /* sent at least one frame: a Grapevine rank */
    int      aborted;     /* sent ABORT: its exit is expected */
    int      finalized;   /* sent FINALIZE: its exit code is its own   */
    int      status;      /* from waitpid */
    /* input assembly */
    uint8_t  hdr[sizeof(gvrun_hdr_t)];
    size_t   hdr_got;
    uint8_t *body;
    size_t   body_len, body_got;
    /* allgather contribution of the current round */
    uint8_t *contrib;
    uint32_t contrib_len;
    int      joined;
} rank_t;

static rank_t  *ranks;
static int      nranks;
static int      nalive;
static int      stopping;      /* already stopping the job */
static int      keep_going;    /* --keep-going: a rank's death is the
                                  other ranks' business (their
                                  peer-failure callback) */
static int      exit_code;
static uint64_t round_start_ns;
/* A rank that aborts often does so because it saw a peer die; wait a
 * moment for that peer's exit so that the first line names the cause. */
#define ABORT_DELAY_NS 200000000ull
static struct {
    uint64_t at_ns;
    int      rank, code;
    char     msg[512];
} pending_abort;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gvrun -n N [--timeout SECONDS] [--keep-going] program "
            "[args...]\n"
            "Starts N ranks of program on this machine.\n"
            "  -n, --np N         number of ranks (1..4096)\n"
            "  -t, --timeout S    stop the job after S seconds, 0..1000000000"
            " (0: never)\n"
            "  -k, --keep-going   a rank that dies does not stop the others "
            "(they handle it\n"
            "                     with gv_on_peer_failure); the exit status "
            "is still its failure\n"
            "  -h, --help         this text\n"
            "Ranks read GV_* variables from the environment (gvinfo -c).\n");
}

/* A whole decimal number from min to max: digits only (no sign, no
 * blanks, not empty), no overflow. */
static int parse_count(const char *s, long min, long max, long *out_p)
{
    char *end;
    long  v;

    if ((*s < '0') || (*s > '9'))
        return -1;
    errno = 0;
    v     = strtol(s, &end, 10);
    if ((*end != '\0') || (errno != 0) || (v < min) || (v > max))
        return -1;
    *out_p = v;
    return 0;
}

static const char *describe(int status, char *buf, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
    return buf;
}

static void kill_all(int sig)
{
    int i;
    for (i = 0; i < nranks; i++)
        if (ranks[i].alive)
            kill(ranks[i].pid, sig);
}

/* Begin fail-stop: tell the others to stop. */
static void stop_job(int code)
{
    if (stopping)
        return;
    stopping  = 1;
    exit_code = code;
    kill_all(SIGTERM);
}

static void close_rank_fd(rank_t *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
}

static void handle_input(int i);

/* Read every frame a rank sent before it exited: its FINALIZE may still
 * sit in the socket when its SIGCHLD is seen. */
static void drain_input(int i)
{
    int avail;
    while ((ranks[i].fd >= 0) && (ioctl(ranks[i].fd, FIONREAD, &avail) == 0) &&
           (avail > 0))
        handle_input(i);
}

/* Print a rank's pending abort and stop the job with its code. */
static void report_abort(void)
{
    fprintf(stderr, "gvrun: rank %d (pid %d) %s the job (code %d): %s\n",
            pending_abort.rank, (int)ranks[pending_abort.rank].pid,
            stopping ? "also reported, stopping" : "aborted",
            pending_abort.code, pending_abort.msg);
    pending_abort.at_ns = 0;
    stop_job(pending_abort.code);
}

/* Decide what one rank's exit means. */
static void judge_exit(int i)
{
    int  status = ranks[i].status;
    char why[128];

    if (stopping)
        return;
    /* A rank that reported an abort exits on its own: the pending abort
     * (printed after a short delay, unless a rank's death explains it
     * first) is its message. */
    if (ranks[i].aborted && !WIFSIGNALED(status))
        return;
    /* Failure: a signal; a non-zero exit before gv_finalize; or a
     * Grapevine rank leaving without gv_finalize while the others may wait
     * for it in a collective. */
    if (WIFSIGNALED(status) ||
        (!ranks[i].finalized &&
         ((WEXITSTATUS(status) != 0) || ranks[i].spoke))) {
        int code = WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                       : (WEXITSTATUS(status) != 0
                                              ? WEXITSTATUS(status) : 1);

        if (keep_going) {
            fprintf(stderr, "gvrun: rank %d (pid %d) %s; the other %d "
                    "rank%s go on (--keep-going)\n", i, (int)ranks[i].pid,
                    describe(status, why, sizeof(why)), nalive,
                    (nalive == 1) ? "" : "s");
            if (exit_code == 0)
                exit_code = code;
            return;
        }
        fprintf(stderr, "gvrun: rank %d (pid %d) %s%s; stopping the other "
                "%d rank%s\n", i, (int)ranks[i].pid,
                describe(status, why, sizeof(why)),
                (!WIFSIGNALED(status) && WEXITSTATUS(status) == 0)
                    ? " before gv_finalize" : "",
                nalive, (nalive == 1) ? "" : "s");
        stop_job(code);
    } else if ((WEXITSTATUS(status) != 0) && (exit_code == 0)) {
        exit_code = WEXITSTATUS(status);
    }
}

/* Collect every exit already available, then judge the deaths by signal
 * first: when a rank is killed, its peers notice and abort within
 * microseconds, and the first line must name the rank that was killed. */
static void reap(void)
{
    int   status, i, n = 0, pass;
    int   exited[64];
    pid_t pid;

    while ((n < 64) && ((pid = waitpid(-1, &status, WNOHANG)) > 0)) {
        for (i = 0; i < nranks; i++)
            if (ranks[i].pid == pid)
                break;
        if (i == nranks)
            continue;
        drain_input(i);
        ranks[i].alive  = 0;
        ranks[i].status = status;
        nalive--;
        exited[n++] = i;
    }
    for (pass = 0; pass < 2; pass++)
        for (i = 0; i < n; i++)
            if (!!WIFSIGNALED(ranks[exited[i]].status) == (pass == 0))
                judge_exit(exited[i]);
}

/* A bootstrap collective waits for every rank, and one that has exited
 * without joining it never will. judge_exit() reports the exits that are
 * failures by themselves; this names a rank whose exit looked fine (status
 * 0 without a word to gvrun: it exited before gv_init, or never calls it;
 * or any status after gv_finalize) once the others wait for it, instead
 * of letting them wait out GV_TIMEOUT_S. A program that never calls
 * gv_init on any rank still runs: no collective ever starts. */
static void check_departed(void)
{
    char why[128];
    int  i, j, waiting = 0;

    if (stopping || (round_start_ns == 0))
        return;
    for (i = 0; i < nranks; i++)
        if (!ranks[i].alive && !ranks[i].joined && !ranks[i].aborted)
            break;
    if (i == nranks)
        return;
    for (j = 0; j < nranks; j++)
        waiting += ranks[j].joined;
    fprintf(stderr, "gvrun: rank %d (pid %d) %s %s, while %d other rank%s "
            "wait%s for it in a bootstrap collective; stopping the other %d "
            "rank%s\n", i, (int)ranks[i].pid,
            describe(ranks[i].status, why, sizeof(why)),
            ranks[i].finalized ? "after gv_finalize"
                               : "before it joined the job's bootstrap "
                                 "(gv_init)",
            waiting, (waiting == 1) ? "" : "s", (waiting == 1) ? "s" : "",
            nalive, (nalive == 1) ? "" : "s");
    stop_job((WIFEXITED(ranks[i].status) &&
              (WEXITSTATUS(ranks[i].status) != 0))
                 ? WEXITSTATUS(ranks[i].status) : 1);
}

static int send_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if ((n < 0) && (errno == EINTR))
            continue;
        if (n < 0) {
            if (errno == EAGAIN) {
                struct pollfd pfd = {.fd = fd, .events = POLLOUT};
                poll(&pfd, 1, 1000);
                continue;
            }
            return -1;
        }
        p   += n;
        len -= (size_t)n;
    }
    return 0;
}

static void send_frame(rank_t *r, uint16_t type, const void *a, size_t alen)
{
    gvrun_hdr_t h = {GVRUN_MAGIC, type, 0, (uint32_t)alen};
    if ((r->fd < 0) || (send_all(r->fd, &h, sizeof(h)) != 0) ||
        ((alen > 0) && (send_all(r->fd, a, alen) != 0)))
        close_rank_fd(r); /* the rank is gone; reap() reports it */
}

static void try_complete_round(void)
{
    uint32_t len;
    uint8_t *all;
    int      i;

    for (i = 0; i < nranks; i++)
        if (!ranks[i].joined)
            return;
    len = ranks[0].contrib_len;
    for (i = 1; i < nranks; i++) {
        if (ranks[i].contrib_len != len) {
            fprintf(stderr, "gvrun: rank %d gave %u bytes to an allgather "
                    "where rank 0 gave %u; stopping the job\n", i,
                    ranks[i].contrib_len, len);
            stop_job(1);
            return;
        }
    }
    all = gv_malloc((size_t)len * (size_t)nranks);
    for (i = 0; i < nranks; i++) {
        if (len > 0)
            memcpy(all + (size_t)i * len, ranks[i].contrib, len);
        gv_free(ranks[i].contrib);
        ranks[i].contrib = NULL;
        ranks[i].joined  = 0;
    }
    for (i = 0; i < nranks; i++)
        send_frame(&ranks[i], GVRUN_RESULT, all, (size_t)len * nranks);
    gv_free(all);
    round_start_ns = 0;
}

static void handle_frame(int i, const gvrun_hdr_t *h, uint8_t *body)
{
    rank_t *r = &ranks[i];
    int32_t code;

    r->spoke = 1;
    switch (h->type) {
    case GVRUN_ALLGATHER:
        if (r->joined) {
            fprintf(stderr, "gvrun: rank %d joined a collective twice; "
                    "stopping the job\n", i);
            stop_job(1);
            break;
        }
        r->joined      = 1;
        r->contrib     = body;
        r->contrib_len = h->len;
        body           = NULL;
        if (round_start_ns == 0)
            round_start_ns = gv__now_ns();
        try_complete_round();
        break;
    case GVRUN_ABORT:
        r->aborted = 1;
        code       = 1;
        if (h->len >= sizeof(code))
            memcpy(&code, body, sizeof(code));
        if (!stopping && (pending_abort.at_ns == 0)) {
            pending_abort.at_ns = gv__now_ns();
            pending_abort.rank  = i;
            pending_abort.code  = (code != 0) ? code : 1;
            snprintf(pending_abort.msg, sizeof(pending_abort.msg), "%.*s",
                     (int)((h->len >= sizeof(code)) ? h->len - sizeof(code)
                                                    : 0),
                     (h->len >= sizeof(code)) ? (char *)body + sizeof(code)
                                              : "");
        }
        break;
    case GVRUN_FINALIZE:
        r->finalized = 1;
        break;
    default:
        fprintf(stderr, "gvrun: rank %d sent an unknown message type %u; "
                "stopping the job\n", i, h->type);
        stop_job(1);
    }
    gv_free(body);
}

/* Read what is there from rank i; frames are checked, not trusted. */
static void handle_input(int i)
{
    rank_t     *r = &ranks[i];
    gvrun_hdr_t h;
    ssize_t     n;

    if (r->hdr_got < sizeof(gvrun_hdr_t)) {
        n = recv(r->fd, r->hdr + r->hdr_got, sizeof(r->hdr) - r->hdr_got,
                 MSG_DONTWAIT);
        if (n <= 0) {
            if ((n < 0) && ((errno == EAGAIN) || (errno == EINTR)))
                return;
            close_rank_fd(r); /* EOF: reap() decides whether it failed */
            return;
        }
        r->hdr_got += (size_t)n;
        if (r->hdr_got < sizeof(gvrun_hdr_t))
            return;
        memcpy(&h, r->hdr, sizeof(h));
        if ((h.magic != GVRUN_MAGIC) || (h.len > GVRUN_MAX_LEN + 4096)) {
            fprintf(stderr, "gvrun: rank %d sent a malformed message (magic "
                    "0x%x, length %u); stopping the job\n", i, h.magic,
                    h.len);
            close_rank_fd(r);
            stop_job(1);
            return;
        }
        r->body     = gv_malloc(h.len);
        r->body_len = h.len;
        r->body_got = 0;
    }
    if (r->body_got < r->body_len) {
        n = recv(r->fd, r->body + r->body_got, r->body_len - r->body_got,
                 MSG_DONTWAIT);
        if (n <= 0) {
            if ((n < 0) && ((errno == EAGAIN) || (errno == EINTR)))
                return;
            close_rank_fd(r);
            return;
        }
        r->body_got += (size_t)n;
        if (r->body_got < r->body_len)
            return;
    }
    memcpy(&h, r->hdr, sizeof(h));
    r->hdr_got = 0;
    handle_frame(i, &h, r->body);
    r->body = NULL;
}

/* Whether PATH holds an executable file named @a prog: then execvp's
 * ENOENT was about its #! interpreter or loader, not about @a prog. */
static int on_path(const char *prog)
{
    const char *path = getenv("PATH"), *p, *colon;
    char        full[4096];
    struct stat st;

    for (p = (path != NULL) ? path : ""; *p != '\0'; p = colon + 1) {
        size_t len;

        colon = strchr(p, ':');
        if (colon == NULL)
            colon = p + strlen(p);
        len = (size_t)(colon - p);
        if (snprintf(full, sizeof(full), "%.*s/%s", (int)len,
                     (len > 0) ? p : ".", prog) < (int)sizeof(full) &&
            (stat(full, &st) == 0) && S_ISREG(st.st_mode) &&
            (access(full, X_OK) == 0))
            return 1;
        if (*colon == '\0')
            break;
    }
    return 0;
}

/* Say why execvp failed as a shell would: a name without a '/' is looked
 * up on PATH only, even when a file of that name is right here. */
static void exec_failed(const char *prog, int err)
{
    struct stat st;

    if ((strchr(prog, '/') == NULL) && (err == ENOENT) && on_path(prog)) {
        fprintf(stderr, "gvrun: cannot run %s: it is in PATH, but its "
                "interpreter (#! line) or loader does not exist\n", prog);
    } else if ((strchr(prog, '/') == NULL) && (err == ENOENT) &&
        (stat(prog, &st) == 0)) {
        if (S_ISDIR(st.st_mode) || (access(prog, X_OK) != 0))
            fprintf(stderr, "gvrun: cannot run %s: not found in PATH; "
                    "./%s exists but is not an executable file\n", prog,
                    prog);
        else
            fprintf(stderr, "gvrun: cannot run %s: not found in PATH; use "
                    "./%s to run the one in the current directory\n", prog,
                    prog);
    } else if ((err == ENOENT) && (strchr(prog, '/') == NULL)) {
        fprintf(stderr, "gvrun: cannot run %s: not found in PATH\n", prog);
    } else if ((err == ENOENT) && (stat(prog, &st) == 0)) {
        fprintf(stderr, "gvrun: cannot run %s: it exists, but its "
                "interpreter (#! line) or loader does not\n", prog);
    } else if ((err == EACCES) && (stat(prog, &st) == 0) &&
               S_ISDIR(st.st_mode)) {
        fprintf(stderr, "gvrun: cannot run %s: it is a directory\n", prog);
    } else if (err == EACCES) {
        fprintf(stderr, "gvrun: cannot run %s: permission denied (not an "
                "executable file)\n", prog);
    } else {
        fprintf(stderr, "gvrun: cannot run %s: %s\n", prog, strerror(err));
    }
}

/* Read the signals that came (the signalfd is non-blocking): SIGINT,
 * SIGTERM or SIGHUP stops the job, passing the signal on to the ranks
 * started so far. */
static void take_signals(int sfd)
{
    struct signalfd_siginfo si;

    while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo == SIGCHLD)
            continue;
        fprintf(stderr, "gvrun: got signal %d (%s); stopping the job\n",
                (int)si.ssi_signo, strsignal((int)si.ssi_signo));
        if (!stopping) {
            stopping  = 1;
            exit_code = 128 + (int)si.ssi_signo;
            kill_all((int)si.ssi_signo);
        }
    }
}

static void spawn(int i, char **argv, const gvrun_hello_t *tmpl,
                  const sigset_t *oldmask)
{
    int   sv[2];
    pid_t parent = getpid();
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        fprintf(stderr, "gvrun: socketpair: %s\n", strerror(errno));
        exit(1);
    }
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "gvrun: fork: %s\n", strerror(errno));
        stop_job(1);
        close(sv[0]);
        close(sv[1]);
        return;
    }
    if (pid == 0) {
        char fdstr[16];
        int  j;
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        for (j = 0; j < i; j++)
            if (ranks[j].fd >= 0)
                close(ranks[j].fd);
        close(sv[0]);
        /* Clear close-on-exec on the rank's end only. */
        fcntl(sv[1], F_SETFD, 0);
        snprintf(fdstr, sizeof(fdstr), "%d", sv[1]);
        setenv("GV_BOOT_FD", fdstr, 1);
        sigprocmask(SIG_SETMASK, oldmask, NULL);
        execvp(argv[0], argv);
        exec_failed(argv[0], errno);
        _exit(127);
    }
    close(sv[1]);
    ranks[i].pid   = pid;
    ranks[i].fd    = sv[0];
    ranks[i].alive = 1;
    nalive++;
    {
        gvrun_hello_t hello = *tmpl;
        hello.rank          = (uint32_t)i;
        send_frame(&ranks[i], GVRUN_HELLO, &hello, sizeof(hello));
    }
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"np", required_argument, NULL, 'n'},
        {"timeout", required_argument, NULL, 't'},
        {"keep-going", no_argument, NULL, 'k'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    char          err[512];
    long          timeout_s = 0, np;
    gvrun_hello_t hello;
    sigset_t      mask, oldmask;
    int           sfd, c, i;
    uint64_t      start_ns, stop_ns = 0;
    struct pollfd *pfds;

    gv__log_level = GV_LOG_WARN;
    nranks        = 0;
    while ((c = getopt_long(argc, argv, "+n:t:kh", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (parse_count(optarg, 1, NRANKS_MAX, &np) != 0) {
                fprintf(stderr, "gvrun: -n '%s' is not a rank count; use a "
                        "number from 1 to %d\n", optarg, NRANKS_MAX);
                return 2;
            }
            nranks = (int)np;
            break;
        case 't':
            if (parse_count(optarg, 0, TIMEOUT_MAX_S, &timeout_s) != 0) {
                fprintf(stderr, "gvrun: --timeout '%s' is not a number of "
                        "seconds; use a whole number from 0 (never) to "
                        "%ld\n", optarg, TIMEOUT_MAX_S);
                return 2;
            }
            break;
        case 'k':
            keep_going = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if ((nranks == 0) || (optind >= argc)) {
        usage(stderr);
        return 2;
    }
    /* Check the GV_* environment once here, so that a typo gives one
     * message instead of one per rank. */
    if (gv__env_parse(err, sizeof(err)) != GV_OK) {
        fprintf(stderr, "gvrun: %s\n", err);
        return 1;
    }
    gv__env_warn_unknown();
    if (gv__tl_name_check(gv__env.TRANSPORT) != GV_OK)
        return 1;

    memset(&hello, 0, sizeof(hello));
    hello.size = (uint32_t)nranks;
    if ((gv__random_bytes(hello.key, sizeof(hello.key)) != GV_OK) ||
        (gv__random_bytes(&hello.job_id, sizeof(hello.job_id)) != GV_OK))
        return 1;

    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, &oldmask);
    sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        fprintf(stderr, "gvrun: signalfd: %s\n", strerror(errno));
        return 1;
    }

    ranks = gv_calloc((size_t)nranks, sizeof(*ranks));
    for (i = 0; i < nranks; i++)
        ranks[i].fd = -1;
    /* A signal during a long start (thousands of ranks) stops it: the
     * ranks started so far get the signal and the rest never start. */
    for (i = 0; (i < nranks) && !stopping; i++) {
        spawn(i, argv + optind, &hello, &oldmask);
        take_signals(sfd);
    }

    pfds     = gv_calloc((size_t)nranks + 1, sizeof(*pfds));
    start_ns = gv__now_ns();
    while (nalive > 0) {
        uint64_t now = gv__now_ns();
        int      n;

        pfds[0].fd     = sfd;
        pfds[0].events = POLLIN;
        for (i = 0; i < nranks; i++) {
            pfds[i + 1].fd     = stopping ? -1 : ranks[i].fd;
            pfds[i + 1].events = POLLIN;
        }
        n = poll(pfds, (nfds_t)nranks + 1, 100);
        if ((n < 0) && (errno != EINTR)) {
            fprintf(stderr, "gvrun: poll: %s\n", strerror(errno));
            stop_job(1);
        }
        if ((n > 0) && (pfds[0].revents & POLLIN))
            take_signals(sfd);
        for (i = 0; (n > 0) && (i < nranks); i++)
            if ((pfds[i + 1].fd >= 0) &&
                (pfds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
                handle_input(i);
        reap();
        check_departed();
        now = gv__now_ns();
        if (!stopping && (timeout_s > 0) &&
            (now - start_ns > (uint64_t)timeout_s * 1000000000ull)) {
            fprintf(stderr, "gvrun: the job ran longer than --timeout %ld s;"
                    " stopping %d rank%s\n", timeout_s, nalive,
                    (nalive == 1) ? "" : "s");
            stop_job(124);
        }
        if (!stopping && (round_start_ns != 0) &&
            (now - round_start_ns > gv__timeout_ns())) {
            fprintf(stderr, "gvrun: a bootstrap collective waited more than "
                    "%llu s (GV_TIMEOUT_S) for rank(s):",
                    (unsigned long long)gv__env.TIMEOUT_S);
            for (i = 0; i < nranks; i++)
                if (!ranks[i].joined)
                    fprintf(stderr, " %d (pid %d)", i, (int)ranks[i].pid);
            fprintf(stderr, "; stopping the job\n");
            stop_job(1);
        }
        if ((pending_abort.at_ns != 0) &&
            (stopping || (now - pending_abort.at_ns > ABORT_DELAY_NS)))
            report_abort();
        if (stopping) {
            if (stop_ns == 0)
                stop_ns = now;
            else if (now - stop_ns > GRACE_MS * 1000000ull)
                kill_all(SIGKILL);
        }
    }
    /* Every rank exited within the delay after one reported an abort (it
     * exits on its own, and its peers with it): the abort still decides
     * the job's exit status. */
    if (pending_abort.at_ns != 0)
        report_abort();
    return exit_code;
}
