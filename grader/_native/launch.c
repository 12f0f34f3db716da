/* grader-launch: what an untrusted program's process does to itself between the grader's
 * spawn and the program's exec, so that the grader can start it with vfork (no preexec_fn,
 * no Python in a forked child of a big, threaded parent).
 *
 *   grader-launch [--cgroup DIR]... [--rlimit RESOURCE:SOFT:HARD]... [--uid UID]
 *                 [--seccomp HEX] [--errfd FD] -- PROGRAM [ARG]...
 *
 * In this order: join each cgroup DIR (its pid written to DIR/cgroup.procs: every process the
 * program starts is born there), set each resource limit (RESOURCE is the kernel's number),
 * become UID (no supplementary groups, gid UID), set no_new_privs and install the seccomp
 * program given in hex (struct sock_filter, native byte order), then exec PROGRAM, found on
 * PATH. The grader computes every value; this program only applies them. On any failure it
 * writes "STEP:ERRNO" to FD (close-on-exec: the grader reads end-of-file once PROGRAM runs) and
 * exits 127. grader/engines/launch.py does the same in Python where this was not built.
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
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

static int errfd = -1;

static void fail(const char *step) {
    int e = errno;
    if (errfd >= 0) {
        char buf[64];
        int n = snprintf(buf, sizeof buf, "%s:%d", step, e);
        if (n > 0 && write(errfd, buf, (size_t)n) < 0) { /* nothing more to do */ }
    }
    _exit(127);
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
    const char *uid = NULL, *seccomp = NULL;
    for (; i < argc && strcmp(argv[i], "--") != 0; i += 2) {
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
    if (uid != NULL) {
        long id = strtol(uid, NULL, 10);
        if (setgroups(0, NULL) != 0) fail("setgroups");
        if (setresgid((gid_t)id, (gid_t)id, (gid_t)id) != 0) fail("setgid");
        if (setresuid((uid_t)id, (uid_t)id, (uid_t)id) != 0) fail("setuid");
    }
    if (seccomp != NULL && install_seccomp(seccomp) != 0) fail("seccomp");
    execvp(argv[i + 1], argv + i + 1);
    fail("exec");
    return 127;
}
