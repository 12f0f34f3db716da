/*
 * grader._gomoku_native: an exact Gomoku (m,n,k on a square board) solver as a CPython extension.
 *
 * A position is two bitboards, black's stones and white's (point 0 = A1 = bit 0, row-major
 * from row 1, as grader.games.gomoku numbers them); the side to move follows from the counts
 * (black moves first). Values are for the side to move: +1 a forced win, 0 a draw, -1 a
 * forced loss. Boards of 4x4 to MAX_SIZE x MAX_SIZE, any k from 3 to the size, with or
 * without overlines (overline = 0: only a line of exactly k wins).
 *
 * A *window* is a run of k points in a line. It is *live* for a side while it holds none of
 * the other side's stones (and, without overlines, none of the side's own stones just
 * outside it): only a live window can still become that side's winning line. Each window's
 * stones of each colour (and, without overlines, on its two flanks) are counted as stones are
 * played, and so the live windows of each side.
 *
 * Two searches, to the end of the game (no depth, no evaluation: every value stored is exact
 * or an exact bound), share the rules, the move ordering and the table: a fail-soft negamax
 * alpha-beta over the three values, and df-pn (below), each question of which is whether one
 * side wins. value() lets them take turns in laps that double each round until one settles
 * the position (alpha-beta is by far the faster on draws, df-pn on wins). At each node, in
 * order, only rules that hold for both sides:
 *   - a full board is a draw; a winning point of the side to move (a live window holding
 *     k - 1 of its stones) wins;
 *   - two winning points of the opponent lose (one move blocks one);
 *   - a side whose live windows weigh under 1/2 with it to move, under 1 with the other side
 *     to move, each 2**-(its empty points), cannot complete one (Erdos-Selfridge: the other
 *     side, taking the point of most weight each move, keeps the weight from growing): a
 *     bound; both such, or no live window at all (a *dead board*), a draw;
 *   - a *double* of the side to move (a move making two winning points) wins, the opponent
 *     having no winning point to play first;
 *   - a side whose live windows the other side can pair off (disjoint pairs of empty points,
 *     a pair in each window, answered one by the other) cannot complete one: a bound;
 *   - one winning point of the opponent: it is the only move (any other loses at once);
 *   - against the opponent's doubles, only the moves that break every one of them (the
 *     double's point or a point of a window that makes it) or that make a winning point of
 *     one's own are searched: any other lets the opponent play a double, which wins;
 *   - otherwise the points of live windows (and, without overlines, their flanks); the other
 *     empty points can never matter again, so they are one move (a pass): the lowest is
 *     searched for all of them.
 * Moves are ordered by the table's move, then the live windows through each point weighted
 * by the stones they hold (one's own first). A transposition table keeps bounds (and df-pn's
 * numbers) under the board's eight symmetries: its key is the least of the eight images of
 * the position (the whole position, so no two positions ever share an entry), in 4-entry
 * buckets replaced by the least work. The table is kept across calls.
 *
 * While it runs the search releases the GIL and every POLL_SECONDS takes it to run signal
 * handlers and the call's should_stop() callable; a stop (or the call's node limit) unwinds
 * with longjmp, so only completed results are ever stored in the table.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64;

#if defined(__SIZEOF_INT128__)
typedef unsigned __int128 bb;
#define MAX_POINTS 128
#define MAX_SIZE 11
static inline int bb_count(bb x) { return __builtin_popcountll((u64)x) + __builtin_popcountll((u64)(x >> 64)); }
static inline int bb_first(bb x)
{
    return (u64)x ? __builtin_ctzll((u64)x) : 64 + __builtin_ctzll((u64)(x >> 64));
}
static inline u64 bb_lo(bb x) { return (u64)x; }
static inline u64 bb_hi(bb x) { return (u64)(x >> 64); }
static inline bb bb_make(u64 lo, u64 hi) { return ((bb)hi << 64) | lo; }
#else
typedef uint64_t bb;
#define MAX_POINTS 64
#define MAX_SIZE 8
static inline int bb_count(bb x) { return __builtin_popcountll(x); }
static inline int bb_first(bb x) { return __builtin_ctzll(x); }
static inline u64 bb_lo(bb x) { return x; }
static inline u64 bb_hi(bb x) { (void)x; return 0; }
static inline bb bb_make(u64 lo, u64 hi) { (void)hi; return lo; }
#endif

#define BIT(x) ((bb)1 << (x))
#define MIN_SIZE 4
#define MIN_K 3
#define MAX_WINDOWS (4 * MAX_POINTS)
#define MAX_THROUGH (4 * MAX_SIZE) /* windows through one point: k in each of 4 directions */
#define POLL_NODES 4096            /* look at the clock this often... */
#define POLL_SECONDS 0.02          /* ...and take the GIL for signals and should_stop() this often */
#define BUCKET 4                   /* table entries per bucket */
#define USED_MIN 14                /* a new table uses its first 2**USED_MIN entries... */
#define NO_MOVE 255

/* --- the board's geometry -------------------------------------------------------- */

typedef struct {
    int size, k, overline, n, nw;
    bb full;
    bb wmask[MAX_WINDOWS];  /* the points of each window */
    bb wflank[MAX_WINDOWS]; /* the points just outside it (without overlines; else 0) */
    uint8_t nthrough[MAX_POINTS];
    uint16_t through[MAX_POINTS][MAX_THROUGH]; /* the windows through each point */
    uint8_t nflanked[MAX_POINTS];
    uint16_t flanked[MAX_POINTS][8]; /* the windows each point flanks (without overlines) */
    int16_t next[MAX_WINDOWS];       /* the window one point further along the same line (-1: none) */
    uint8_t sym[8][MAX_POINTS];      /* each point's image under the 8 symmetries */
    uint8_t inv[8][MAX_POINTS];      /* and back */
} Geom;

static void geom_init(Geom *g, int size, int k, int overline)
{
    static const int steps[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    memset(g, 0, sizeof *g);
    g->size = size;
    g->k = k;
    g->overline = overline;
    g->n = size * size;
    g->full = g->n == (int)(8 * sizeof(bb)) ? ~(bb)0 : BIT(g->n) - 1;
    for (int r = 0; r < size; r++)
        for (int col = 0; col < size; col++)
            for (int d = 0; d < 4; d++) {
                int dr = steps[d][0], dc = steps[d][1];
                int er = r + dr * (k - 1), ec = col + dc * (k - 1);
                if (er < 0 || er >= size || ec < 0 || ec >= size)
                    continue;
                int w = g->nw++;
                for (int i = 0; i < k; i++) {
                    int x = (r + dr * i) * size + col + dc * i;
                    g->wmask[w] |= BIT(x);
                    g->through[x][g->nthrough[x]++] = (uint16_t)w;
                }
                if (!overline) {
                    int ends[2][2] = {{r - dr, col - dc}, {er + dr, ec + dc}};
                    for (int e = 0; e < 2; e++) {
                        int fr = ends[e][0], fc = ends[e][1];
                        if (fr < 0 || fr >= size || fc < 0 || fc >= size)
                            continue;
                        int x = fr * size + fc;
                        g->wflank[w] |= BIT(x);
                        g->flanked[x][g->nflanked[x]++] = (uint16_t)w;
                    }
                }
            }
    for (int w = 0; w < g->nw; w++) { /* the next window of a line: its points but the first, and one more */
        bb rest = g->wmask[w] & ~BIT(bb_first(g->wmask[w]));
        g->next[w] = -1;
        for (int v = w + 1; v < g->nw && g->next[w] < 0; v++)
            if ((g->wmask[v] & rest) == rest && bb_count(g->wmask[v] & g->wmask[w]) == k - 1)
                g->next[w] = (int16_t)v;
    }
    for (int x = 0; x < g->n; x++) {
        int r = x / size, col = x % size, m = size - 1;
        int img[8][2] = {{r, col}, {col, m - r}, {m - r, m - col}, {m - col, r},
                         {r, m - col}, {m - r, col}, {col, r}, {m - col, m - r}};
        for (int s = 0; s < 8; s++) {
            int y = img[s][0] * size + img[s][1];
            g->sym[s][x] = (uint8_t)y;
            g->inv[s][y] = (uint8_t)x;
        }
    }
}

/* --- the table ---------------------------------------------------------------------- */

typedef struct {
    u64 key[4];    /* the canonical position: black's stones (lo, hi), white's (lo, hi) */
    uint32_t work; /* nodes its search took: the entry least worth keeping goes first */
    int8_t lo, hi; /* bounds on the value for the side to move */
    uint8_t move;  /* a best move, in the canonical position's points (NO_MOVE: none) */
    uint8_t used;
    uint32_t phi[2], delta[2]; /* df-pn's numbers for each question (0, 0: none yet) */
} Entry;

typedef struct {
    u64 key[4];
    int sym; /* the symmetry taking the position to its canonical image */
    u64 hash;
} Key;

/* --- a search ------------------------------------------------------------------------ */

typedef struct SolverObject SolverObject;

typedef struct {
    const Geom *g;
    Entry *table;
    u64 mask; /* bucket index mask (entries / BUCKET - 1) */
    bb stone[2];
    bb image[8][2]; /* the stones under each symmetry */
    uint8_t cnt[2][MAX_WINDOWS];
    uint8_t fl[2][MAX_WINDOWS];
    int live[2]; /* live windows of each side */
    int turn;
    uint32_t stamp;
    uint32_t seen[MAX_POINTS];
    uint8_t partner[MAX_POINTS];
    u64 nodes, next_poll, max_nodes;
    double last_poll;
    PyThreadState *thread;
    PyObject *should_stop;
    SolverObject *owner;
    unsigned long long owner_nodes;
    int limited; /* set when the node limit ended the search */
    jmp_buf abort;
    bb root[2];   /* the position asked about (black's, white's stones) */
    u64 lap_end;  /* the node count that ends the current lap (0: none) */
    u64 first_lap;
    jmp_buf lap;  /* longjmp here, the GIL released, to end a lap */
} Ctx;

struct SolverObject {
    PyObject_HEAD
    Geom geom;
    Entry *table;
    int bits, used;
    unsigned long long nodes;
    PyThread_type_lock lock;
    unsigned long holder;
    Ctx *ctx; /* the state of a search, reused */
};

static PyObject *Cancelled;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void poll(Ctx *c)
{
    double t;
    c->next_poll = c->nodes + POLL_NODES;
    if (c->lap_end) {
        if (c->nodes >= c->lap_end)
            longjmp(c->lap, 1);
        if (c->lap_end < c->next_poll)
            c->next_poll = c->lap_end;
    }
    if (c->max_nodes && c->nodes >= c->max_nodes) {
        c->limited = 1;
        PyEval_RestoreThread(c->thread);
        longjmp(c->abort, 1);
    }
    t = now();
    if (t - c->last_poll < POLL_SECONDS)
        return;
    c->last_poll = t;
    PyEval_RestoreThread(c->thread);
    c->owner->nodes = c->owner_nodes + c->nodes;
    int stop = PyErr_CheckSignals() != 0;
    if (!stop && c->should_stop) {
        PyObject *r = PyObject_CallNoArgs(c->should_stop);
        int truth = r ? PyObject_IsTrue(r) : -1;
        Py_XDECREF(r);
        if (truth > 0)
            PyErr_SetString(Cancelled, "search stopped by should_stop()");
        stop = truth != 0;
    }
    if (stop)
        longjmp(c->abort, 1);
    c->thread = PyEval_SaveThread();
}

static inline int live_for(const Ctx *c, int w, int a)
{
    return !c->cnt[a ^ 1][w] && (c->g->overline || !c->fl[a][w]);
}

static void play(Ctx *c, int x, int a)
{
    const Geom *g = c->g;
    int o = a ^ 1;
    c->stone[a] |= BIT(x);
    for (int s = 0; s < 8; s++)
        c->image[s][a] |= BIT(g->sym[s][x]);
    for (int i = 0; i < g->nthrough[x]; i++) {
        int w = g->through[x][i];
        if (!c->cnt[a][w] && (g->overline || !c->fl[o][w]))
            c->live[o]--;
        c->cnt[a][w]++;
    }
    for (int i = 0; i < g->nflanked[x]; i++) {
        int w = g->flanked[x][i];
        if (!c->fl[a][w] && !c->cnt[o][w])
            c->live[a]--;
        c->fl[a][w]++;
    }
    c->turn = o;
}

static void undo(Ctx *c, int x, int a)
{
    const Geom *g = c->g;
    int o = a ^ 1;
    c->stone[a] &= ~BIT(x);
    for (int s = 0; s < 8; s++)
        c->image[s][a] &= ~BIT(g->sym[s][x]);
    for (int i = 0; i < g->nthrough[x]; i++) {
        int w = g->through[x][i];
        c->cnt[a][w]--;
        if (!c->cnt[a][w] && (g->overline || !c->fl[o][w]))
            c->live[o]++;
    }
    for (int i = 0; i < g->nflanked[x]; i++) {
        int w = g->flanked[x][i];
        c->fl[a][w]--;
        if (!c->fl[a][w] && !c->cnt[o][w])
            c->live[a]++;
    }
    c->turn = a;
}

/* Set up the counts for the stones of both sides (on an empty context). */
static void setup(Ctx *c, bb black, bb white)
{
    const Geom *g = c->g;
    c->stone[0] = c->stone[1] = 0;
    memset(c->image, 0, sizeof c->image);
    memset(c->cnt, 0, sizeof c->cnt);
    memset(c->fl, 0, sizeof c->fl);
    c->live[0] = c->live[1] = g->nw;
    for (bb s = black; s; s &= s - 1)
        play(c, bb_first(s), 0);
    for (bb s = white; s; s &= s - 1)
        play(c, bb_first(s), 1);
    c->turn = bb_count(black) == bb_count(white) ? 0 : 1;
}

/* Whether side a has a winning line on the board (k in a row, exactly k without overlines). */
static int has_line(const Ctx *c, int a)
{
    for (int w = 0; w < c->g->nw; w++)
        if (c->cnt[a][w] == c->g->k && (c->g->overline || !c->fl[a][w]))
            return 1;
    return 0;
}

typedef struct {
    u64 phi[2]; /* each side's live windows, weighted 2**(its stones in them) */
    bb win[2];  /* the points where each side makes its line at once */
    bb four[2]; /* the points that make a winning point */
    bb dbl[2];  /* the points that make two winning points */
} Threats;

static void analyse(Ctx *c, bb empty, Threats *t)
{
    const Geom *g = c->g;
    int k = g->k;
    memset(t, 0, sizeof *t);
    for (int a = 0; a < 2; a++) {
        uint32_t stamp = ++c->stamp;
        if (!c->live[a])
            continue;
        for (int w = 0; w < g->nw; w++) {
            int n = c->cnt[a][w];
            if (!live_for(c, w, a))
                continue;
            t->phi[a] += (u64)1 << n;
            if (n < k - 2)
                continue;
            bb e = g->wmask[w] & empty;
            if (n == k - 1) {
                t->win[a] |= e;
                continue;
            }
            t->four[a] |= e;
            int x = bb_first(e), y = bb_first(e & (e - 1));
            for (int j = 0; j < 2; j++) {
                int p = j ? y : x, q = j ? x : y;
                if (c->seen[p] != stamp) {
                    c->seen[p] = stamp;
                    c->partner[p] = (uint8_t)q;
                } else if (c->partner[p] != q)
                    t->dbl[a] |= BIT(p);
            }
        }
    }
}

/* The points where a stone breaks every double of side a (each double's point and the
 * windows through it that make it), empty points only. */
static bb defence(const Ctx *c, int a, bb doubles, bb empty)
{
    const Geom *g = c->g;
    bb common = empty;
    for (; doubles && common; doubles &= doubles - 1) {
        int x = bb_first(doubles);
        bb zone = BIT(x);
        for (int i = 0; i < g->nthrough[x]; i++) {
            int w = g->through[x][i];
            if (c->cnt[a][w] == g->k - 2 && live_for(c, w, a))
                zone |= g->wmask[w];
        }
        common &= zone;
    }
    return common;
}

/* One more point for slot s (of the run of windows whose points are runs[s / 2]) by an
 * augmenting path (Kuhn's algorithm). */
static int augment(Ctx *c, int s, const bb *runs, int16_t *owner, uint32_t stamp)
{
    for (bb m = runs[s >> 1]; m; m &= m - 1) { /* a free point first */
        int x = bb_first(m);
        if (owner[x] < 0) {
            owner[x] = (int16_t)s;
            return 1;
        }
    }
    for (bb m = runs[s >> 1]; m; m &= m - 1) {
        int x = bb_first(m);
        if (c->seen[x] == stamp)
            continue;
        c->seen[x] = stamp;
        if (augment(c, owner[x], runs, owner, stamp)) {
            owner[x] = (int16_t)s;
            return 1;
        }
    }
    return 0;
}

/* Whether the other side has a pairing strategy against side a: disjoint pairs of empty
 * points, each window live for a holding one pair whole. Each stone of a on one point of a
 * pair is answered on the other, so every such window gets a stone of the other side before a
 * can fill it, and a never has a winning point to force another answer: a never completes a
 * line, whoever is to move. The live windows of a line are taken in runs, as long as the
 * points they share hold two empty ones (one pair serves them all); the pairs are a matching
 * of two slots of each run to those points. */
static int paired(Ctx *c, int a, bb empty)
{
    const Geom *g = c->g;
    int count = 0;
    int16_t owner[MAX_POINTS];
    uint8_t done[MAX_WINDOWS];
    bb runs[MAX_WINDOWS], points = 0;
    memset(done, 0, (size_t)g->nw);
    for (int w = 0; w < g->nw; w++) {
        bb shared;
        if (done[w] || !live_for(c, w, a))
            continue;
        shared = g->wmask[w] & empty;
        for (int v = g->next[w]; v >= 0 && live_for(c, v, a) && bb_count(shared & g->wmask[v]) >= 2; v = g->next[v]) {
            shared &= g->wmask[v];
            done[v] = 1;
        }
        runs[count++] = shared;
        points |= shared;
    }
    if (2 * count > bb_count(points))
        return 0;
    memset(owner, 0xff, sizeof owner);
    for (int s = 0; s < 2 * count; s++)
        if (!augment(c, s, runs, owner, ++c->stamp))
            return 0;
    return 1;
}

/* The points of live windows, and (without overlines) their flanks. */
static bb relevant(const Ctx *c)
{
    const Geom *g = c->g;
    bb r = 0;
    for (int w = 0; w < g->nw; w++)
        if (live_for(c, w, 0) || live_for(c, w, 1))
            r |= g->wmask[w] | g->wflank[w];
    return r;
}

static inline u64 mix(u64 h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static void canonical(const Ctx *c, Key *key)
{
    int best = 0;
    for (int s = 1; s < 8; s++) {
        bb b = c->image[s][0], w = c->image[s][1], bb0 = c->image[best][0];
        if (b < bb0 || (b == bb0 && w < c->image[best][1]))
            best = s;
    }
    key->sym = best;
    key->key[0] = bb_lo(c->image[best][0]);
    key->key[1] = bb_hi(c->image[best][0]);
    key->key[2] = bb_lo(c->image[best][1]);
    key->key[3] = bb_hi(c->image[best][1]);
    key->hash = mix(key->key[0] * 0x9E3779B97F4A7C15ULL ^ mix(key->key[1] + 0x632BE59BD9B4E019ULL) ^
                    mix(key->key[2] * 0xD6E8FEB86659FD93ULL + 1) ^ mix(key->key[3] + 7));
}

static Entry *probe(const Ctx *c, const Key *key)
{
    Entry *b = c->table + (key->hash & c->mask) * BUCKET;
    for (int i = 0; i < BUCKET; i++)
        if (b[i].used && !memcmp(b[i].key, key->key, sizeof key->key))
            return &b[i];
    return NULL;
}

/* Store bounds on a position's value (and a best move): its entry. */
static Entry *store(Ctx *c, const Key *key, int lo, int hi, int move, u64 work)
{
    Entry *b = c->table + (key->hash & c->mask) * BUCKET, *e = NULL;
    for (int i = 0; i < BUCKET && !e; i++)
        if (b[i].used && !memcmp(b[i].key, key->key, sizeof key->key))
            e = &b[i];
    if (e) { /* both old and new bounds hold: keep their intersection */
        if (lo > e->lo)
            e->lo = (int8_t)lo;
        if (hi < e->hi)
            e->hi = (int8_t)hi;
    } else {
        e = &b[0];
        for (int i = 0; i < BUCKET; i++) {
            if (!b[i].used) {
                e = &b[i];
                break;
            }
            if (b[i].work < e->work)
                e = &b[i];
        }
        memcpy(e->key, key->key, sizeof key->key);
        e->lo = (int8_t)lo;
        e->hi = (int8_t)hi;
        e->used = 1;
        e->move = NO_MOVE;
        e->work = 0;
        e->phi[0] = e->phi[1] = e->delta[0] = e->delta[1] = 0;
    }
    if (move >= 0)
        e->move = c->g->sym[key->sym][move];
    work += e->work;
    e->work = work > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)work;
    return e;
}

/* Move ordering: the live windows through x, weighted by the stones they hold. */
static inline int score(const Ctx *c, int x, int me)
{
    static const int own[] = {1, 6, 36, 216, 1296, 7776, 46656, 279936, 1679616, 10077696, 60466176};
    static const int other[] = {1, 5, 25, 125, 625, 3125, 15625, 78125, 390625, 1953125, 9765625};
    const Geom *g = c->g;
    int s = 0, you = me ^ 1;
    for (int i = 0; i < g->nthrough[x]; i++) {
        int w = g->through[x][i];
        if (live_for(c, w, me))
            s += own[c->cnt[me][w]];
        if (live_for(c, w, you))
            s += other[c->cnt[you][w]];
    }
    return s;
}

/* What the rules and the table say of the position set up in c, before any move is tried:
 * bounds on its value (lo == hi: settled) and, when unsettled, the moves worth trying. */
typedef struct {
    int lo, hi;
    bb moves;
    int hint; /* the table's best move (-1: none) */
    Key key;
} Node;

static void examine(Ctx *c, Node *n)
{
    const Geom *g = c->g;
    int me = c->turn, you = me ^ 1;
    bb empty = g->full & ~(c->stone[0] | c->stone[1]);
    Threats t;
    Entry *e;

    n->hint = -1;
    n->moves = 0;
    if (!empty) {
        n->lo = n->hi = 0;
        return;
    }
    analyse(c, empty, &t);
    if (t.win[me]) {
        n->lo = n->hi = 1;
        return;
    }
    if (bb_count(t.win[you]) >= 2) {
        n->lo = n->hi = -1;
        return;
    }
    /* Erdos-Selfridge: a side whose live windows weigh under 1/2 with it to move (under 1
     * with the other side to move), each 2**-(its empty points), cannot complete one (a dead
     * board, no live window at all, is the case of weight 0) */
    n->lo = t.phi[you] >= ((u64)1 << g->k) ? -1 : 0;
    n->hi = 2 * t.phi[me] >= ((u64)1 << g->k) ? 1 : 0;
    if (n->lo == n->hi)
        return;
    if (!t.win[you] && t.dbl[me]) {
        n->lo = n->hi = 1;
        return;
    }
    canonical(c, &n->key);
    e = probe(c, &n->key);
    if (e) {
        if (e->lo > n->lo)
            n->lo = e->lo;
        if (e->hi < n->hi)
            n->hi = e->hi;
        if (n->lo == n->hi)
            return;
        if (e->move != NO_MOVE)
            n->hint = g->inv[n->key.sym][e->move];
    }
    if (n->hi > 0 && paired(c, me, empty))
        n->hi = 0;
    if (n->lo < 0 && !t.win[you] && paired(c, you, empty))
        n->lo = 0;
    if (n->lo == n->hi) {
        store(c, &n->key, n->lo, n->hi, -1, 1);
        return;
    }
    if (t.win[you])
        n->moves = t.win[you];
    else if (t.dbl[you]) {
        n->moves = defence(c, you, t.dbl[you], empty) | t.four[me];
        if (!n->moves) {
            n->lo = n->hi = -1;
            store(c, &n->key, -1, -1, -1, 1);
        }
    } else {
        bb r = relevant(c) & empty, rest = empty & ~r;
        n->moves = r | (rest ? BIT(bb_first(rest)) : 0);
    }
}

/* The moves of n, best first: the table's move, then by score. */
static int order(const Ctx *c, const Node *n, int *list)
{
    int count = 0, sc[MAX_POINTS];
    for (bb m = n->moves; m; m &= m - 1) {
        int x = bb_first(m), s = x == n->hint ? 1 << 30 : score(c, x, c->turn), i = count++;
        while (i > 0 && sc[i - 1] < s) {
            sc[i] = sc[i - 1];
            list[i] = list[i - 1];
            i--;
        }
        sc[i] = s;
        list[i] = x;
    }
    return count;
}

/* Fail-soft alpha-beta: the value within (alpha, beta). */
static int search(Ctx *c, int alpha, int beta)
{
    int me = c->turn, count, best = -2, best_move = -1, a, list[MAX_POINTS];
    u64 nodes0 = c->nodes;
    Node n;

    if (++c->nodes >= c->next_poll)
        poll(c);
    examine(c, &n);
    if (n.lo == n.hi || n.lo >= beta)
        return n.lo;
    if (n.hi <= alpha)
        return n.hi;
    if (n.lo > alpha)
        alpha = n.lo;
    if (n.hi < beta)
        beta = n.hi;
    count = order(c, &n, list);
    a = alpha;
    for (int i = 0; i < count; i++) {
        int x = list[i], v;
        play(c, x, me);
        v = -search(c, -beta, -a);
        undo(c, x, me);
        if (v > best) {
            best = v;
            best_move = x;
            if (v > a) {
                a = v;
                if (a >= beta)
                    break;
            }
        }
    }
    if (best <= alpha)
        store(c, &n.key, n.lo, best, best_move, c->nodes - nodes0);
    else if (best >= beta)
        store(c, &n.key, best, n.hi, best_move, c->nodes - nodes0);
    else
        store(c, &n.key, best, best, best_move, c->nodes - nodes0);
    return best;
}

/* --- depth-first proof-number search (df-pn) ------------------------------------------
 *
 * Each question is whether one side (the attacker) wins. At a node the mover's goal is, for
 * question q = 0, that the mover wins (value 1), and for q = 1, that the other side does not
 * (value >= 0): a child of a q node is a (1 - q) node. phi is the proof number of the mover's
 * goal, delta its disproof number; phi(n) = min delta(child), delta(n) = sum phi(child). Each
 * node proved or disproved is stored in the table as a bound on its value, for both questions
 * and for the alpha-beta search alike; the numbers of unsettled nodes are kept beside them.
 * Thresholds as Nagai's df-pn, with the 1 + 1/4 trick of Pawlewicz and Lew on the second-best
 * child. */

#define PN_INF 0x3FFFFFFFu
#define PN_MAX (PN_INF - 1)

static inline uint32_t pn_add(uint32_t a, uint32_t b)
{
    if (a == PN_INF || b == PN_INF)
        return PN_INF;
    return a + b >= PN_MAX ? PN_MAX : a + b;
}

static inline int goal_met(int q, int lo) { return lo >= 1 - q; }
static inline int goal_failed(int q, int hi) { return hi < 1 - q; }

static void store_pn(Ctx *c, const Key *key, int q, uint32_t phi, uint32_t delta, int move, u64 work)
{
    Entry *e = store(c, key, -1, 1, move, work);
    e->phi[q] = phi;
    e->delta[q] = delta;
}

static void mid(Ctx *c, int q, uint32_t thphi, uint32_t thdelta, uint32_t *phi_out, uint32_t *delta_out)
{
    int me = c->turn, count, list[MAX_POINTS];
    uint32_t cphi[MAX_POINTS], cdelta[MAX_POINTS], phi = 0, delta = 0;
    u64 nodes0 = c->nodes;
    Node n;

    if (++c->nodes >= c->next_poll)
        poll(c);
    examine(c, &n);
    if (goal_met(q, n.lo)) {
        *phi_out = 0, *delta_out = PN_INF;
        return;
    }
    if (goal_failed(q, n.hi)) {
        *phi_out = PN_INF, *delta_out = 0;
        return;
    }
    count = order(c, &n, list);
    for (int i = 0; i < count; i++) { /* the children's numbers, as far as the table knows them */
        Key key;
        Entry *e;
        cphi[i] = cdelta[i] = 1;
        play(c, list[i], me);
        canonical(c, &key);
        e = probe(c, &key);
        if (e) {
            if (goal_met(1 - q, e->lo))
                cphi[i] = 0, cdelta[i] = PN_INF;
            else if (goal_failed(1 - q, e->hi))
                cphi[i] = PN_INF, cdelta[i] = 0;
            else if (e->phi[1 - q])
                cphi[i] = e->phi[1 - q], cdelta[i] = e->delta[1 - q];
        }
        undo(c, list[i], me);
    }
    for (;;) {
        int best = 0;
        uint32_t second = PN_INF, tphi, tdelta;
        phi = PN_INF;
        delta = 0;
        for (int i = 0; i < count; i++) {
            delta = pn_add(delta, cphi[i]);
            if (cdelta[i] < phi) {
                second = phi;
                phi = cdelta[i];
                best = i;
            } else if (cdelta[i] < second)
                second = cdelta[i];
        }
        if (phi >= thphi || delta >= thdelta)
            break;
        tphi = thdelta == PN_INF ? PN_INF : thdelta - delta + cphi[best];
        tdelta = second == PN_INF ? PN_INF : pn_add(second, second / 4 + 1);
        if (tdelta > thphi)
            tdelta = thphi;
        play(c, list[best], me);
        mid(c, 1 - q, tphi, tdelta, &cphi[best], &cdelta[best]);
        undo(c, list[best], me);
    }
    if (phi == 0)
        store(c, &n.key, q ? 0 : 1, 1, -1, c->nodes - nodes0);
    else if (delta == 0)
        store(c, &n.key, -1, q ? -1 : 0, -1, c->nodes - nodes0);
    else
        store_pn(c, &n.key, q, phi, delta, -1, c->nodes - nodes0);
    *phi_out = phi;
    *delta_out = delta;
}

/* Whether the mover's goal under question q holds (1) or not (0), by df-pn to the end. */
static int prove(Ctx *c, int q)
{
    uint32_t phi, delta;
    mid(c, q, PN_INF, PN_INF, &phi, &delta);
    return phi == 0;
}

/* The value within (alpha, beta) by df-pn, as search() gives it: one question per bound the
 * window asks about. */
static int dfpn_value(Ctx *c, int alpha, int beta)
{
    if (beta > 0) { /* is it a win? */
        if (prove(c, 0))
            return 1;
        if (alpha >= 0)
            return 0; /* at most a draw */
    }
    return prove(c, 1) ? 0 : -1; /* does the opponent win? */
}

enum { BOTH, ALPHA_BETA, DFPN };

static void start_lap(Ctx *c, u64 nodes)
{
    c->lap_end = c->nodes + nodes;
    if (c->lap_end < c->next_poll)
        c->next_poll = c->lap_end;
}
#define LAP_NODES 16384 /* df-pn's first lap, doubled each round... */
#define AB_RATIO 8      /* ...alpha-beta's this many times longer (its nodes are that much cheaper) */

/* The value of the position set up in c (the game not over) within (alpha, beta). BOTH:
 * alpha-beta and df-pn take turns, in laps twice as long each round, until one settles it
 * (alpha-beta is the faster on draws, df-pn on wins, by far); what each settles stays in the
 * table for the other. */
static int root_value(Ctx *c, int alpha, int beta, int method)
{
    volatile u64 lap = c->first_lap;
    int v;
    if (has_line(c, c->turn ^ 1))
        return -1; /* the side that just moved has its line */
    if (method == ALPHA_BETA)
        return search(c, alpha, beta);
    if (method == DFPN)
        return dfpn_value(c, alpha, beta);
    for (;; lap *= 2) {
        if (!setjmp(c->lap)) {
            start_lap(c, AB_RATIO * lap);
            v = search(c, alpha, beta);
            c->lap_end = 0;
            return v;
        }
        setup(c, c->root[0], c->root[1]);
        if (!setjmp(c->lap)) {
            start_lap(c, lap);
            v = dfpn_value(c, alpha, beta);
            c->lap_end = 0;
            return v;
        }
        setup(c, c->root[0], c->root[1]);
    }
}

/* --- Python interface --------------------------------------------------------------- */

static void *table_alloc(size_t size) { return calloc(size, 1); }

static PyObject *Solver_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"size", "k", "overline", "table_bits", NULL};
    int size, k, overline, bits = 20;
    SolverObject *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "iip|i:Solver", kwlist, &size, &k, &overline, &bits))
        return NULL;
    if (size < MIN_SIZE || size > MAX_SIZE) {
        PyErr_Format(PyExc_ValueError, "size must be in %d..%d, not %d", MIN_SIZE, MAX_SIZE, size);
        return NULL;
    }
    if (k < MIN_K || k > size) {
        PyErr_Format(PyExc_ValueError, "k must be in %d..%d (the size), not %d", MIN_K, size, k);
        return NULL;
    }
    if (bits < 8 || bits > 30) {
        PyErr_Format(PyExc_ValueError, "table_bits must be in 8..30, not %d", bits);
        return NULL;
    }
    self = (SolverObject *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    geom_init(&self->geom, size, k, overline);
    self->bits = bits;
    self->used = bits < USED_MIN ? bits : USED_MIN;
    self->table = table_alloc(((size_t)1 << bits) * sizeof(Entry));
    self->ctx = calloc(1, sizeof(Ctx));
    self->lock = PyThread_allocate_lock();
    if (!self->table || !self->lock || !self->ctx) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static void Solver_dealloc(SolverObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    free(self->table);
    free(self->ctx);
    if (self->lock)
        PyThread_free_lock(self->lock);
    type->tp_free(self);
    Py_DECREF(type);
}

static int lock_solver(SolverObject *self)
{
    if (self->holder == PyThread_get_thread_ident()) {
        PyErr_SetString(PyExc_RuntimeError, "this Solver is busy in a search on this thread");
        return -1;
    }
    while (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        PyLockStatus got;
        Py_BEGIN_ALLOW_THREADS
        got = PyThread_acquire_lock_timed(self->lock, (PY_TIMEOUT_T)(POLL_SECONDS * 1e6), 0);
        Py_END_ALLOW_THREADS
        if (got == PY_LOCK_ACQUIRED)
            break;
        if (PyErr_CheckSignals())
            return -1;
    }
    self->holder = PyThread_get_thread_ident();
    return 0;
}

static void unlock_solver(SolverObject *self)
{
    self->holder = 0;
    PyThread_release_lock(self->lock);
}

/* A board argument: an int bitboard of the board's points. */
static int to_board(SolverObject *self, PyObject *obj, const char *name, bb *out)
{
    PyObject *zero, *shift, *high;
    u64 lo, hi;
    int negative;
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int bitboard, not %.100s", name, Py_TYPE(obj)->tp_name);
        return -1;
    }
    zero = PyLong_FromLong(0);
    negative = zero ? PyObject_RichCompareBool(obj, zero, Py_LT) : -1;
    Py_XDECREF(zero);
    if (negative < 0)
        return -1;
    if (negative)
        goto bad;
    lo = PyLong_AsUnsignedLongLongMask(obj);
    shift = PyLong_FromLong(64);
    high = shift ? PyNumber_Rshift(obj, shift) : NULL;
    Py_XDECREF(shift);
    if (!high)
        return -1;
    hi = PyLong_AsUnsignedLongLong(high);
    Py_DECREF(high);
    if (hi == (u64)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        goto bad;
    }
    if (MAX_POINTS == 64 && hi)
        goto bad;
    *out = bb_make(lo, hi);
    if (*out & ~self->geom.full)
        goto bad;
    return 0;
bad:
    PyErr_Format(PyExc_ValueError, "%s must be a bitboard of the %dx%d board's points (0 <= it < 2**%d)", name,
                 self->geom.size, self->geom.size, self->geom.n);
    return -1;
}

static int run_search(Ctx *c, int alpha, int beta, int method, int *out)
{
    if (setjmp(c->abort))
        return -1;
    *out = root_value(c, alpha, beta, method);
    return 0;
}

static PyObject *Solver_value(SolverObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"black",     "white",  "alpha",    "beta", "should_stop",
                             "max_nodes", "method", "lap_nodes", NULL};
    PyObject *bo, *wo, *should_stop = Py_None;
    const char *how = "auto";
    int alpha = -1, beta = 1, failed, value = 0, limited, method;
    unsigned long long max_nodes = 0, lap_nodes = LAP_NODES;
    bb black, white;
    Ctx *c;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|iiOKsK:value", kwlist, &bo, &wo, &alpha, &beta, &should_stop,
                                     &max_nodes, &how, &lap_nodes) ||
        to_board(self, bo, "black", &black) < 0 || to_board(self, wo, "white", &white) < 0)
        return NULL;
    if (black & white) {
        PyErr_SetString(PyExc_ValueError, "black and white have a stone on the same point");
        return NULL;
    }
    if (bb_count(black) != bb_count(white) && bb_count(black) != bb_count(white) + 1) {
        PyErr_Format(PyExc_ValueError, "%d black and %d white stones cannot arise in play (black moves first)",
                     bb_count(black), bb_count(white));
        return NULL;
    }
    if (alpha < -1 || beta > 1 || alpha >= beta) {
        PyErr_Format(PyExc_ValueError, "the window must be -1 <= alpha < beta <= 1, not (%d, %d)", alpha, beta);
        return NULL;
    }
    if (should_stop != Py_None && !PyCallable_Check(should_stop)) {
        PyErr_SetString(PyExc_TypeError, "should_stop must be a callable or None");
        return NULL;
    }
    if (!strcmp(how, "auto"))
        method = BOTH;
    else if (!strcmp(how, "alphabeta"))
        method = ALPHA_BETA;
    else if (!strcmp(how, "dfpn"))
        method = DFPN;
    else {
        PyErr_Format(PyExc_ValueError, "method must be 'auto', 'alphabeta' or 'dfpn', not '%.50s'", how);
        return NULL;
    }
    if (lock_solver(self) < 0)
        return NULL;
    c = self->ctx;
    if (self->used < self->bits) { /* a bigger search: use more of the table */
        int want = USED_MIN + (self->geom.n - bb_count(black | white)) / 3;
        if (want > self->used)
            self->used = want < self->bits ? want : self->bits;
    }
    c->g = &self->geom;
    c->table = self->table;
    c->mask = (((u64)1 << self->used) / BUCKET) - 1;
    setup(c, black, white);
    c->root[0] = black;
    c->root[1] = white;
    c->lap_end = 0;
    c->first_lap = lap_nodes ? lap_nodes : 1;
    c->nodes = 0;
    c->next_poll = POLL_NODES;
    c->max_nodes = max_nodes;
    c->limited = 0;
    c->last_poll = now();
    c->should_stop = should_stop == Py_None ? NULL : should_stop;
    c->owner = self;
    c->owner_nodes = self->nodes;
    c->thread = PyEval_SaveThread();
    failed = run_search(c, alpha, beta, method, &value);
    if (!failed)
        PyEval_RestoreThread(c->thread);
    self->nodes = c->owner_nodes + c->nodes;
    limited = c->limited;
    unlock_solver(self);
    if (failed && limited)
        Py_RETURN_NONE;
    if (failed)
        return NULL;
    return PyLong_FromLong(value);
}

static PyObject *Solver_clear(SolverObject *self, PyObject *unused)
{
    (void)unused;
    if (lock_solver(self) < 0)
        return NULL;
    memset(self->table, 0, ((size_t)1 << self->used) * sizeof(Entry)); /* the rest was never used */
    self->used = self->bits < USED_MIN ? self->bits : USED_MIN;
    unlock_solver(self);
    Py_RETURN_NONE;
}

static PyObject *Solver_get_nodes(SolverObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(self->nodes);
}

static PyObject *Solver_get_size(SolverObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(self->geom.size);
}

static PyMethodDef Solver_methods[] = {
    {"value", (PyCFunction)(void (*)(void))Solver_value, METH_VARARGS | METH_KEYWORDS,
     "value(black, white, alpha=-1, beta=1, should_stop=None, max_nodes=0, method='auto',\n"
     "      lap_nodes=16384) -> int | None\n\n"
     "The value for the side to move (black when the stones are as many, else white): 1 a\n"
     "forced win, 0 a draw, -1 a forced loss; fail-soft within (alpha, beta): a value <= alpha\n"
     "is an upper bound, one >= beta a lower bound. None when max_nodes (0: no limit) nodes\n"
     "did not settle it. method: 'alphabeta' or 'dfpn' alone, or 'auto', the two taking turns\n"
     "(df-pn's first lap lap_nodes, alpha-beta's 8 times that, doubled each round). Releases\n"
     "the GIL; should_stop, if given, is called about every 20 ms: a true result abandons the\n"
     "search with Cancelled (Ctrl-C with KeyboardInterrupt)."},
    {"clear", (PyCFunction)Solver_clear, METH_NOARGS, "clear() -> None\n\nEmpty the table."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Solver_getset[] = {
    {"nodes", (getter)Solver_get_nodes, NULL, "nodes searched by this solver", NULL},
    {"size", (getter)Solver_get_size, NULL, "the board's side", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot Solver_slots[] = {
    {Py_tp_doc, "Solver(size: int, k: int, overline: bool, table_bits: int = 20)\n\n"
                "Exact Gomoku solver on a size x size board, k in a row (more only with overline),\n"
                "with its own transposition table (2**table_bits entries of 56 bytes, kept across\n"
                "calls; a small search uses only its first few). Calls on one object are\n"
                "serialized by a lock; separate objects run in parallel."},
    {Py_tp_new, Solver_new},
    {Py_tp_dealloc, Solver_dealloc},
    {Py_tp_methods, Solver_methods},
    {Py_tp_getset, Solver_getset},
    {0, NULL}};

static PyType_Spec Solver_spec = {"grader._gomoku_native.Solver", sizeof(SolverObject), 0, Py_TPFLAGS_DEFAULT,
                                  Solver_slots};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "grader._gomoku_native",
    "Exact Gomoku solver in C (optional; grader.games.gomoku_native wraps it).", -1, NULL, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__gomoku_native(void)
{
    PyObject *m = PyModule_Create(&module_def), *type;
    if (!m)
        return NULL;
    Cancelled = PyErr_NewExceptionWithDoc("grader._gomoku_native.Cancelled",
                                          "A search abandoned because should_stop() returned true.", NULL, NULL);
    type = PyType_FromSpec(&Solver_spec);
    if (!Cancelled || !type || PyModule_AddObjectRef(m, "Cancelled", Cancelled) < 0 ||
        PyModule_AddObjectRef(m, "Solver", type) < 0 || PyModule_AddIntConstant(m, "MAX_SIZE", MAX_SIZE) < 0 ||
        PyModule_AddIntConstant(m, "MIN_SIZE", MIN_SIZE) < 0) {
        Py_XDECREF(type);
        Py_DECREF(m);
        return NULL;
    }
    Py_DECREF(type);
    return m;
}
