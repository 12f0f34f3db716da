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
 *
 * --serve FD --host DIR --work DIR: a job slot's resident sandbox (grader/engines/resident.py):
 * the first process of a bwrap sandbox kept alive for many runs, started by the grader as root
 * with a few capabilities. It reads requests from the SOCK_SEQPACKET socket FD, each the
 * options above (without --init and --errfd) plus --cwd DIR, --env NAME=VALUE and --view PATH,
 * NUL-separated, with the run's stdin, stdout and stderr as SCM_RIGHTS. For each it bind-mounts
 * every PATH read-only from DIR (the host's root, under a folder only root may enter), forks
 * the run's process (a session of its own, a new IPC namespace, default signal dispositions,
 * umask 022, nothing open but its three fds) which applies the options and execs, and answers
 * "run" with a pidfd of it (or "fail STEP:ERRNO" where it could not; a failure of the process's
 * own steps is told on its stderr, exit status 127, as inside a sandbox before); once told "go" it waits for it (reaping the orphans it leaves on the
 * way), kills every other process of the sandbox, answers "exit STATUS UTIME_US STIME_US", then
 * empties /tmp, /dev/shm and the work folder (restoring their owners, modes and extended
 * attributes) and says "ready" again (first at its start). A cleanup that fails ends the
 * sandbox instead: never a run in a dirty one. End-of-file on FD ends it too. The views stay
 * mounted for the next request: it unmounts those it does not ask for (and removes what was
 * made for them) before it mounts its own, so a run sees its own views and no other's, not
 * even their names, and a slot that runs the same scripts again mounts nothing.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
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

extern char **environ;

/* Apply the options from argv[i] on (up to "--"), then exec the program after "--". */
static void setup_and_exec(int argc, char **argv, int i) {
    const char *uid = NULL, *seccomp = NULL, *cwd = NULL;
    int drop_caps = 0, nenv = 0;
    char **env = calloc((size_t)argc + 1, sizeof *env);
    if (env == NULL) fail("usage");
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
        } else if (strcmp(opt, "--cwd") == 0) {
            cwd = val;
        } else if (strcmp(opt, "--env") == 0) {
            env[nenv++] = (char *)val;
        } else if (strcmp(opt, "--errfd") != 0 && strcmp(opt, "--view") != 0) {
            errno = EINVAL;
            fail("usage");
        }
    }
    if (i + 1 >= argc) {
        errno = EINVAL;
        fail("usage");
    }
    if (cwd != NULL && chdir(cwd) != 0) fail("chdir");
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
    if (nenv > 0) environ = env; /* execvp searches the run's own PATH */
    execvp(argv[i + 1], argv + i + 1);
    fail("exec");
}

/* --- the resident sandbox (--serve) ------------------------------------------------------- */

#define MAX_REQUEST (1 << 18)
#define MAX_VIEWS 64

static const char *host_root, *work_dir;
static const char *cleaned[3]; /* /tmp, /dev/shm, the work folder */
static struct stat cleaned_as[3];

static int send_reply(int sock, const char *text, int fd) {
    struct iovec iov = {(void *)text, strlen(text)};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd >= 0) {
        memset(&u, 0, sizeof u);
        msg.msg_control = u.buf;
        msg.msg_controllen = sizeof u.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    return sendmsg(sock, &msg, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

/* A request: its text in buf (n bytes) and up to 3 fds; 0 at end-of-file, -1 on an error. */
static ssize_t read_request(int sock, char *buf, int fds[3]) {
    union {
        char buf[CMSG_SPACE(3 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = {buf, MAX_REQUEST - 1};
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = u.buf;
    msg.msg_controllen = sizeof u.buf;
    ssize_t n;
    while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
    fds[0] = fds[1] = fds[2] = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); n > 0 && c != NULL; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            memcpy(fds, CMSG_DATA(c), (count > 3 ? 3 : count) * sizeof(int));
        }
    if (n > 0) buf[n] = '\0';
    return n;
}

#define MAX_MADE 1024
static char *made[MAX_MADE]; /* what make_mount_point made for the views mounted, in order */
static int nmade;

static int made_here(const char *p) {
    if (nmade == MAX_MADE || (made[nmade] = strdup(p)) == NULL) return -1;
    nmade++;
    return 0;
}

/* mkdir -p PATH inside the sandbox, its last part a file when the host's is one; what it makes
 * is removed once no view needs it (a run sees no trace of another run's views, not even names). */
static int make_mount_point(const char *path, int is_dir) {
    char p[4096];
    if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) return -1;
    for (char *s = p + 1;; s++)
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (c == '\0' && !is_dir) {
                int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                if (fd < 0) return errno == EEXIST ? 0 : -1;
                close(fd);
                return made_here(p);
            }
            if (mkdir(p, 0755) == 0) {
                if (made_here(p) != 0) return -1;
            } else if (errno != EEXIST) {
                return -1;
            }
            if (c == '\0') return 0;
            *s = c;
        }
}

/* The views mounted now, each with the host's file it shows (its device and inode when mounted):
 * they stay for the next run that asks for them, whose request then costs no mount (a mount
 * and an unmount cost a grace period of the kernel's RCU each, milliseconds under load). */
struct view {
    char *path;
    dev_t dev;
    ino_t ino;
};
static struct view mounted[MAX_VIEWS];
static int nmounted;

/* Where PATH of the host is seen from inside (under the host's root); -1 if too long. */
static int host_path(char *out, size_t size, const char *path) {
    return snprintf(out, size, "%s%s", host_root, path) >= (int)size ? -1 : 0;
}

/* Bind PATH of the host read-only at PATH, unless it is mounted already and still the host's
 * same file (a folder removed and made again under the same name is mounted again). */
static int mount_view(const char *path) {
    char source[4096];
    struct stat st;
    if (host_path(source, sizeof source, path) != 0 || stat(source, &st) != 0) return -1;
    for (int k = 0; k < nmounted; k++)
        if (strcmp(mounted[k].path, path) == 0 && mounted[k].dev == st.st_dev && mounted[k].ino == st.st_ino) return 0;
    if (nmounted == MAX_VIEWS) {
        errno = E2BIG;
        return -1;
    }
    if (make_mount_point(path, S_ISDIR(st.st_mode)) != 0) return -1;
    if (mount(source, path, NULL, MS_BIND | MS_REC, NULL) != 0) return -1;
    if (mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0) {
        int e = errno;
        umount2(path, MNT_DETACH);
        errno = e;
        return -1;
    }
    if ((mounted[nmounted].path = strdup(path)) == NULL) {
        umount2(path, MNT_DETACH);
        return -1;
    }
    mounted[nmounted].dev = st.st_dev;
    mounted[nmounted].ino = st.st_ino;
    nmounted++;
    return 0;
}

/* Whether PATH is one of the N views WANTED, or a folder above one. */
static int holds_a_view(const char *path, char **wanted, int n) {
    size_t len = strlen(path);
    for (int k = 0; k < n; k++)
        if (strncmp(wanted[k], path, len) == 0 && (wanted[k][len] == '\0' || wanted[k][len] == '/')) return 1;
    return 0;
}

/* Unmount every view but the N WANTED whose host file is still the one mounted (the last ones
 * first), then remove what was made for the views and holds none of WANTED: the run to come
 * sees no trace of another run's views, not even their names. Returns -1 on a failure. */
static int keep_views(char **wanted, int n) {
    char source[4096];
    struct stat st;
    for (int k = nmounted - 1; k >= 0; k--) {
        int keep = 0;
        for (int w = 0; !keep && w < n; w++)
            keep = strcmp(mounted[k].path, wanted[w]) == 0 && host_path(source, sizeof source, wanted[w]) == 0 &&
                   stat(source, &st) == 0 && st.st_dev == mounted[k].dev && st.st_ino == mounted[k].ino;
        if (keep) continue;
        if (umount2(mounted[k].path, MNT_DETACH) != 0) return -1;
        free(mounted[k].path);
        memmove(&mounted[k], &mounted[k + 1], (size_t)(--nmounted - k) * sizeof *mounted);
    }
    int kept = 0;
    for (int k = 0; k < nmade; k++) { /* made in order, parents first: removed children first */
        int m = nmade - 1 - k;
        if (holds_a_view(made[m], wanted, n)) continue;
        if (rmdir(made[m]) != 0 && (errno != ENOTDIR || unlink(made[m]) != 0)) return -1;
        free(made[m]);
        made[m] = NULL;
    }
    for (int k = 0; k < nmade; k++)
        if (made[k] != NULL) made[kept++] = made[k];
    nmade = kept;
    return 0;
}

#define MAX_DEPTH 256 /* folders deeper than this fail the cleanup (the server's memory stays small) */

/* Remove everything in the folder open at dirfd (closed here) that is on the file system dev:
 * never a mount point (the work folder under /tmp), nor the folders holding one. Returns how
 * many entries could not be removed. A tree deeper than MAX_DEPTH fails the cleanup, and with
 * it the sandbox: the slot starts a new one, whose tmpfs are new. */
static int empty_dir(int dirfd, dev_t dev, int depth) {
    DIR *d = fdopendir(dirfd);
    if (d == NULL) {
        close(dirfd);
        return 1;
    }
    int failed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        struct stat st;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            failed++;
        } else if (st.st_dev != dev) {
            continue; /* a mount point */
        } else if (S_ISDIR(st.st_mode)) {
            int sub = depth == MAX_DEPTH ? -1 : openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            int inside = sub < 0 ? 1 : empty_dir(sub, dev, depth + 1);
            if (inside == 0 && unlinkat(dirfd, e->d_name, AT_REMOVEDIR) != 0 && errno != ENOTEMPTY) failed++;
            failed += inside;
        } else if (unlinkat(dirfd, e->d_name, 0) != 0) {
            failed++;
        }
    }
    closedir(d);
    return failed;
}

/* Empty the folder, and give it back its owner, mode and no extended attribute but security.*. */
static int clean_folder(const char *dir, const struct stat *as) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    int failed = empty_dir(fd, as->st_dev, 0) != 0;
    if (lchown(dir, as->st_uid, as->st_gid) != 0 || chmod(dir, as->st_mode & 07777) != 0) failed = 1;
    char names[8192];
    ssize_t n = llistxattr(dir, names, sizeof names);
    if (n < 0 && errno != ENOTSUP) failed = 1;
    for (ssize_t k = 0; k < n; k += (ssize_t)strlen(names + k) + 1)
        if (strncmp(names + k, "security.", 9) != 0 && lremovexattr(dir, names + k) != 0) failed = 1;
    return failed ? -1 : 0;
}

/* Kill every process of the sandbox but this one, and reap them all. */
static void kill_the_rest(void) {
    for (;;) {
        if (kill(-1, SIGKILL) != 0 && errno == ESRCH) {
            while (waitpid(-1, NULL, WNOHANG) > 0) {}
            return;
        }
        while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {}
    }
}

/* The run's process: everything set, then the options applied and the program exec'd; a
 * failure is told on the run's stderr with exit status 127 (126), as inside a sandbox before. */
static void child(int argc, char **argv, int fds[3]) {
    for (int j = 0; j + 1 < argc; j++)
        if (strcmp(argv[j], "--") == 0) {
            program = argv[j + 1];
            break;
        }
    for (int k = 0; k < 3; k++)
        if (dup2(fds[k], k) != k) fail("fds");
    if (syscall(SYS_close_range, 3, ~0U, 0) != 0) fail("fds");
    if (setsid() < 0) fail("setsid");
    if (unshare(CLONE_NEWIPC) != 0) fail("ipc");
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC); /* the server's is -1000 */
    if (fd >= 0 && write(fd, "0", 1) != 1) { /* where the server could not lower its own */ }
    if (fd >= 0) close(fd);
    struct sigaction dfl = {0};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++) sigaction(sig, &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    umask(022);
    setup_and_exec(argc, argv, 0);
}

static int serve(int sock) {
    static char buf[MAX_REQUEST];
    char *argv[MAX_REQUEST / 2];
    char *views[MAX_VIEWS];
    for (int k = 0; k < 3; k++)
        if (lstat(cleaned[k], &cleaned_as[k]) != 0) return 1;
    umask(022);
    /* never the kernel's choice at a memory cap, where the system lets it say so */
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd >= 0 && write(fd, "-1000", 5) != 5) { /* some containers refuse it: the cap still holds */ }
    if (fd >= 0) close(fd);
    for (;;) {
        if (send_reply(sock, "ready", -1) != 0) return 1; /* first, and after each cleanup */
        int fds[3];
        ssize_t n = read_request(sock, buf, fds);
        if (n <= 0) return n == 0 ? 0 : 1;
        int argc = 0, nviews = 0;
        for (char *s = buf; s < buf + n; s += strlen(s) + 1) argv[argc++] = s;
        argv[argc] = NULL;
        char reply[128];
        const char *step = NULL;
        if (fds[2] < 0) {
            errno = EINVAL;
            step = "usage";
        }
        for (int k = 0; step == NULL && k + 1 < argc && strcmp(argv[k], "--") != 0; k++)
            if (strcmp(argv[k], "--view") == 0) {
                if (nviews == MAX_VIEWS) {
                    errno = E2BIG;
                    step = "view";
                } else {
                    views[nviews++] = argv[k + 1];
                }
                k++;
            }
        /* another run's views go (a failure ends the sandbox: never a run beside them) */
        if (step == NULL && keep_views(views, nviews) != 0) return 1;
        for (int k = 0; step == NULL && k < nviews; k++)
            if (mount_view(views[k]) != 0) step = "view";
        pid_t pid = -1;
        if (step == NULL && (pid = fork()) < 0) step = "fork";
        if (pid == 0) child(argc, argv, fds);
        int e = errno;
        for (int k = 0; k < 3; k++)
            if (fds[k] >= 0) close(fds[k]);
        int pidfd = -1;
        if (pid > 0 && (pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0) {
            e = errno;
            step = "pidfd";
        }
        if (step != NULL)
            snprintf(reply, sizeof reply, "fail %s:%d", step, e);
        else
            snprintf(reply, sizeof reply, "run");
        int status = 0;
        struct rusage usage = {0};
        if (send_reply(sock, reply, pidfd) != 0) return 1;
        if (pidfd >= 0) {
            close(pidfd);
            char go[8];
            if (recv(sock, go, sizeof go, 0) <= 0) return 0; /* the grader is gone */
            pid_t got;
            int st;
            struct rusage ru;
            while ((got = wait4(-1, &st, 0, &ru)) != pid) /* orphans reaped on the way */
                if (got < 0 && errno != EINTR) break;
            if (got == pid) status = st, usage = ru;
        }
        kill_the_rest();
        if (pidfd >= 0) {
            snprintf(reply, sizeof reply, "exit %d %lld %lld", status,
                     (long long)usage.ru_utime.tv_sec * 1000000 + usage.ru_utime.tv_usec,
                     (long long)usage.ru_stime.tv_sec * 1000000 + usage.ru_stime.tv_usec);
            if (send_reply(sock, reply, -1) != 0) return 1;
        }
        /* the views stay mounted (read-only: nothing of this run in them) for the next request */
        for (int k = 0; k < 3; k++)
            if (clean_folder(cleaned[k], &cleaned_as[k]) != 0) return 1; /* never a run in a dirty sandbox */
    }
}

int main(int argc, char **argv) {
    int i = 1;
    if (argc == 7 && strcmp(argv[1], "--serve") == 0 && strcmp(argv[3], "--host") == 0 &&
        strcmp(argv[5], "--work") == 0) {
        host_root = argv[4];
        work_dir = argv[6];
        cleaned[0] = "/tmp";
        cleaned[1] = "/dev/shm";
        cleaned[2] = work_dir;
        int sock = atoi(argv[2]);
        if (fcntl(sock, F_SETFD, FD_CLOEXEC) != 0) return 1;
        signal(SIGPIPE, SIG_IGN);
        return serve(sock);
    }
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
    setup_and_exec(argc, argv, i);
    return 127;
}
