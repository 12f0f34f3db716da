/* grader-launch: what an untrusted program's process does to itself between the grader's
 * spawn and the program's exec, so that the grader can start it with vfork (no preexec_fn,
 * no Python in a forked child of a big, threaded parent).
 *
 *   grader-launch [--init] [--cgroup DIR]... [--rlimit RESOURCE:SOFT:HARD]... [--uid UID]
 *                 [--drop-caps] [--seccomp HEX] [--errfd FD] -- PROGRAM [ARG]...
 *
 * In this order: join each cgroup DIR (its pid written to DIR/cgroup.procs: every process the
 * program starts is born there), set each resource limit (RESOURCE is the kernel's number),
 * empty the capability bounding set (--drop-caps), become UID (no supplementary groups, gid
 * UID; no inheritable or ambient capabilities left), set no_new_privs (with --drop-caps or a
 * seccomp program) and install the seccomp program given in hex (struct sock_filter, native
 * byte order), then exec PROGRAM, found on PATH. The grader computes every value; this
 * program only applies them. On any failure it writes "STEP:ERRNO" to FD (close-on-exec: the
 * grader reads end-of-file once PROGRAM runs), or without FD a line to stderr, and exits 127 (126
 * where the program was found but cannot be executed, as a shell does).
 *
 * --init: first fork, and stay behind as the first process of a sandbox's PID namespace (bwrap
 * --as-pid-1), the steps and PROGRAM running in the child: it waits for the child, so that
 * the child's CPU time reaches the grader's wait4, and exits with its status (128+N for a
 * death by signal N), as `sh -c '"$@"; exit $?'` does; PROGRAM, not being process 1, dies of
 * any signal, even one it sends itself. Inside bwrap this one exec stands for that shell and
 * for setpriv.
 *
 * grader/engines/launch.py does the same in Python (but --init and --drop-caps, which the
 * grader asks only of this program) where this was not built.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int errfd = -1;
static const char *program = "";

static void fail(const char *step) {
    int e = errno;
    if (errfd >= 0) {
        char buf[64];
        int n = snprintf(buf, sizeof buf, "%s:%d", step, e);
        if (n > 0 && write(errfd, buf, (size_t)n) < 0) { /* nothing more to do */ }
    } else {
        fprintf(stderr, "grader-launch: %s %s: %s\n", step, program, strerror(e));
    }
    /* as a shell: 127 for a program not found, 126 for one found but not executable */
    _exit(strcmp(step, "exec") == 0 && e != ENOENT ? 126 : 127);
}

/* Empty the bounding set: no exec can give a capability back. */
static int drop_bounding_set(void) {
    for (int cap = 0; cap < 64; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
            if (errno == EINVAL) return 0; /* past the last capability */
            return -1;
        }
    return 0;
}

/* No inheritable capability (setuid leaves them), hence no ambient one either. */
static int clear_inheritable(void) {
    struct __user_cap_header_struct head = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &head, data) != 0) return -1;
    data[0].inheritable = data[1].inheritable = 0;
    if (syscall(SYS_capset, &head, data) != 0) return -1;
    return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == 0 || errno == EINVAL ? 0 : -1;
}

/* --init: the child goes on; this process waits for it and ends as it ended. */
static void stay_as_init(void) {
    pid_t child = fork();
    if (child < 0) fail("fork");
    if (child == 0) return;
    int status;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR) _exit(127);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

static int join_cgroup(const char *dir) {
    char path[4096], pid[32];
    if (snprintf(path, sizeof path, "%s/cgroup.procs", dir) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int n = snprintf(pid, sizeof pid, "%ld", (long)getpid());
    int ok = write(fd, pid, (size_t)n) == n;
    int e = errno;
    close(fd);
    errno = e;
    return ok ? 0 : -1;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int install_seccomp(const char *hex) {
    size_t len = strlen(hex);
    if (len == 0 || len % (2 * sizeof(struct sock_filter)) != 0) {
        errno = EINVAL;
        return -1;
    }
    unsigned char *bytes = malloc(len / 2);
    if (bytes == NULL) return -1;
    for (size_t i = 0; i < len / 2; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            errno = EINVAL;
            return -1;
        }
        bytes[i] = (unsigned char)(hi << 4 | lo);
    }
    struct sock_fprog prog = {(unsigned short)(len / 2 / sizeof(struct sock_filter)), (struct sock_filter *)bytes};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

int main(int argc, char **argv) {
    int i = 1;
    /* the error channel first, whatever its place: every later failure is reported on it */
    for (int j = 1; j + 1 < argc && strcmp(argv[j], "--") != 0; j++)
        if (strcmp(argv[j], "--errfd") == 0) {
            errfd = atoi(argv[j + 1]);
            if (fcntl(errfd, F_SETFD, FD_CLOEXEC) != 0) errfd = -1;
        }
    for (int j = 1; j + 1 < argc; j++)
        if (strcmp(argv[j], "--") == 0) {
            program = argv[j + 1];
            break;
        }
    if (i < argc && strcmp(argv[i], "--init") == 0) {
        stay_as_init();
        i++;
    }
    const char *uid = NULL, *seccomp = NULL;
    int drop_caps = 0;
    for (; i < argc && strcmp(argv[i], "--") != 0; i += 2) {
        if (strcmp(argv[i], "--drop-caps") == 0) {
            drop_caps = 1;
            i--;
            continue;
        }
        if (i + 1 >= argc) {
            errno = EINVAL;
            fail("usage");
        }
        const char *opt = argv[i], *val = argv[i + 1];
        if (strcmp(opt, "--cgroup") == 0) {
            if (join_cgroup(val) != 0) fail("cgroup");
        } else if (strcmp(opt, "--rlimit") == 0) {
            int resource;
            unsigned long long soft, hard;
            if (sscanf(val, "%d:%llu:%llu", &resource, &soft, &hard) != 3) {
                errno = EINVAL;
                fail("usage");
            }
            struct rlimit rl = {(rlim_t)soft, (rlim_t)hard};
            if (setrlimit(resource, &rl) != 0) fail("setrlimit");
        } else if (strcmp(opt, "--uid") == 0) {
            uid = val;
        } else if (strcmp(opt, "--seccomp") == 0) {
            seccomp = val;
        } else if (strcmp(opt, "--errfd") != 0) {
            errno = EINVAL;
            fail("usage");
        }
    }
    if (i + 1 >= argc) {
        errno = EINVAL;
        fail("usage");
    }
    if (drop_caps && drop_bounding_set() != 0) fail("capabilities");
    if (uid != NULL) {
        long id = strtol(uid, NULL, 10);
        if (setgroups(0, NULL) != 0) fail("setgroups");
        if (setresgid((gid_t)id, (gid_t)id, (gid_t)id) != 0) fail("setgid");
        if (setresuid((uid_t)id, (uid_t)id, (uid_t)id) != 0) fail("setuid");
    }
    if (drop_caps && clear_inheritable() != 0) fail("capabilities");
    if (drop_caps && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs");
    if (seccomp != NULL && install_seccomp(seccomp) != 0) fail("seccomp");
    execvp(argv[i + 1], argv + i + 1);
    fail("exec");
    return 127;
}
