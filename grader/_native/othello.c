/*
 * grader._othello_native: an exact Othello endgame solver as a CPython extension.
 *
 * Boards are two 64-bit bitboards (the side to move, its opponent); square 0 = a1 = bit 0,
 * 7 = h1, 63 = h8, as in grader/board.py. Values are final disc differences for the side to
 * move under perfect play, scored with either rule of grader.board.final_score. Move
 * generation and flips run 4 lines at once on CPUs with AVX2, flips by a leading-zero count
 * per line on CPUs with AVX-512 VL and CD (GCC and Clang on x86-64, chosen at import: _paths),
 * else in plain C99.
 *
 * The search is a fail-soft negamax alpha-beta: a principal-variation search on full windows
 * (only along the principal line) and a separate null-window search everywhere else. From
 * the leaves up:
 *   - the last empty square: flips counted per line from a table, no move made;
 *   - 2, 3 and 4 empties: unrolled solvers, squares in odd quadrants first (parity);
 *   - up to SHALLOW_MAX empties: no ordering scores, the moves tried in a fixed priority
 *     order (corners first, X-squares last), odd quadrants first;
 *   - above that: ordered moves, the table's move first, then fewest opponent replies
 *     (fastest first; up to EARLY_MAX empties a move leaving at most one reply is searched as
 *     soon as it is seen), corner stability, potential mobility and parity; from SORT0_MIN empties
 *     a pattern evaluation (weights fitted by bench/fit_eval.py, eval_weights.h) searched 0-2
 *     plies deep on each child;
 *   - from TABLE_MIN empties: a transposition table of exact bounds and best moves in 4-entry
 *     buckets, aged per search call, kept across calls (its first 2**USED_MIN entries at first,
 *     more as larger positions come: a small search touches few pages); from ETC_MIN, enhanced
 *     transposition cutoff; stability cutoff (stable discs bound the final score) above
 *     Edax's thresholds less STAB_SHIFT;
 *   - at the root, from ID_MIN empties: iterative deepening on the evaluation, then from
 *     SEL_MIN a selective (probcut) search, both storing only move hints, before the exact
 *     search: the table holds good moves before the exact pass starts. Values never depend
 *     on the evaluation, only the speed does;
 *   - solve() finds the value and every optimal move in one pass (root_solve): the first
 *     move exactly, each other one by a null-window test of whether it reaches the best so
 *     far, re-searched only when it does; optimal_moves() tests each move against a value
 *     already known.
 * While it runs the search releases the GIL and every POLL_SECONDS re-acquires it to run
 * signal handlers and an optional should_stop() callable; a stop unwinds with longjmp,
 * so only completed results are ever stored in the table.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define HAVE_AVX2_PATH 1
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

typedef uint64_t u64;

#define BIT(sq) (1ULL << (sq))
#define popcount(x) __builtin_popcountll(x)
#define first_square(x) __builtin_ctzll(x)

#define INF 100           /* beyond every value */
#ifndef SHALLOW_MAX
#define SHALLOW_MAX 6 /* at or below: list of empties, no ordering scores, no table */
#endif
#ifndef TABLE_MIN
#define TABLE_MIN 9 /* from this many empties: transposition table */
#endif
#ifndef ETC_MIN
#define ETC_MIN 10 /* from this many empties: enhanced transposition cutoff */
#endif
#ifndef EARLY_MAX
#define EARLY_MAX 9 /* up to this many empties: moves that leave few replies searched at once */
#endif
#define EARLY_REPLIES 1 /* ...at most this many (weighted: a corner counts twice) */
#ifndef PARITY_MAX
#define PARITY_MAX 14 /* up to this many empties: parity breaks ties in move ordering */
#endif
#ifndef SORT0_MIN
#define SORT0_MIN 12 /* from this many empties: the evaluation of each child orders moves */
#endif
#ifndef SORT1_MIN
#define SORT1_MIN 16 /* ...a 1-ply search on it */
#endif
#ifndef SORT2_MIN
#define SORT2_MIN 19 /* ...a 2-ply search on it */
#endif
#ifndef ID_MIN
#define ID_MIN 18 /* from this many empties, iterative deepening on the evaluation first... */
#endif
#ifndef ID_GAP
#define ID_GAP 10 /* ...to this many plies short of the end */
#endif
#ifndef ID_MAX_DEPTH
#define ID_MAX_DEPTH 10 /* ...and no deeper than this */
#endif
#ifndef SEL_MIN
#define SEL_MIN 20 /* from this many empties, a selective search first... */
#endif
#ifndef SEL_EXACT
#define SEL_EXACT 14 /* ...exact from this many empties down */
#endif
#ifndef SEL_MARGIN
#define SEL_MARGIN 12 /* ...cutting nodes this many discs outside the window */
#endif
#ifndef ASPIRATION
#define ASPIRATION 4 /* half-width of the root's first window around the selective search's guess */
#endif
#ifndef AGE_BONUS
#define AGE_BONUS 256 /* table replacement: an entry written by this search counts as this much deeper */
#endif
#ifndef W_EVAL
#define W_EVAL 96 /* weight of the evaluation (quarter-discs) against W_MOBILITY per move */
#endif
#ifndef USED_MIN
#define USED_MIN 12 /* a solver's table is used from its first 2**USED_MIN entries, enough up
                       to 12 empties, one more bit per further empty of its largest search
                       so far: a small search touches few pages (each costs a fault and
                       zeroing), with as few nodes as a whole table gives */
#endif
#ifndef STAB_SHIFT
#define STAB_SHIFT 8 /* the stability cutoff is tried this much below Edax's thresholds */
#endif
#define MAX_MOVES 64
#define POLL_NODES 16384  /* look at the clock this often... */
#define POLL_SECONDS 0.02 /* ...and take the GIL for signals and should_stop() this often */

static const u64 NOT_A = 0xFEFEFEFEFEFEFEFEULL; /* every square but the a-file */
static const u64 NOT_H = 0x7F7F7F7F7F7F7F7FULL; /* every square but the h-file */
static const u64 ALL = ~0ULL;
static const u64 CORNERS = 0x8100000000000081ULL;
static const u64 EDGES = 0xFF818181818181FFULL;
static const u64 FILES_AH = 0x8181818181818181ULL;
static const u64 RANKS_18 = 0xFF000000000000FFULL;
static const u64 QUADRANTS[4] = {0x000000000F0F0F0FULL, 0x00000000F0F0F0F0ULL,
                                 0x0F0F0F0F00000000ULL, 0xF0F0F0F000000000ULL};

/* --- tables built at import ------------------------------------------------ */

static u64 RAYS[64][8];   /* from each square, the 8 rays: 4 towards higher squares, then 4 lower */
static u64 NEIGHBOURS[64];
static uint8_t QUADRANT_ID[64]; /* its bit among 4, for parity kept as a 4-bit mask */
static u64 DIAG9[64], DIAG7[64]; /* the diagonal (a1-h8 way) and antidiagonal through each square */
/* With one empty square left, every other square is taken: the discs flipped along a line
 * depend only on the empty square's place in the line and on which squares are the mover's. */
static uint8_t LINE_FLIPS[8][256];

static u64 SQUARE_CLASSES[10]; /* the squares of each class, best first, for the last empties */

/* Classes of squares for the last empties' fixed order: corners first, X-squares last. */
static const char *SQUARE_CLASS = "08633680"
                                  "89455498"
                                  "64122146"
                                  "35177153"
                                  "35177153"
                                  "64122146"
                                  "89455498"
                                  "08633680";

static uint16_t BASE3[512];
static u64 PARITY_MASK[16]; /* the union of the quadrants of each bit set */

static void init_tables(void)
{
    for (int m = 0; m < 512; m++) {
        int v = 0;
        for (int b = 8; b >= 0; b--)
            v = 3 * v + (m >> b & 1);
        BASE3[m] = (uint16_t)v;
    }
    for (int sq = 0; sq < 64; sq++)
        SQUARE_CLASSES[SQUARE_CLASS[sq] - '0'] |= BIT(sq);
    for (int p = 0; p < 16; p++)
        for (int q = 0; q < 4; q++)
            if (p >> q & 1)
                PARITY_MASK[p] |= QUADRANTS[q];
    /* directions: 4 towards higher squares (+1, +7, +8, +9), then 4 towards lower ones */
    static const int dr[8] = {0, 1, 1, 1, 0, -1, -1, -1};
    static const int dc[8] = {1, -1, 0, 1, -1, 1, 0, -1};
    for (int sq = 0; sq < 64; sq++) {
        int r = sq / 8, c = sq % 8;
        NEIGHBOURS[sq] = 0;
        for (int d = 0; d < 8; d++) {
            u64 ray = 0;
            for (int rr = r + dr[d], cc = c + dc[d]; rr >= 0 && rr < 8 && cc >= 0 && cc < 8;
                 rr += dr[d], cc += dc[d])
                ray |= BIT(rr * 8 + cc);
            RAYS[sq][d] = ray;
            if (r + dr[d] >= 0 && r + dr[d] < 8 && c + dc[d] >= 0 && c + dc[d] < 8)
                NEIGHBOURS[sq] |= BIT((r + dr[d]) * 8 + c + dc[d]);
        }
        QUADRANT_ID[sq] = (uint8_t)(1 << ((r / 4) * 2 + c / 4));
        DIAG9[sq] = RAYS[sq][3] | RAYS[sq][7] | BIT(sq);
        DIAG7[sq] = RAYS[sq][1] | RAYS[sq][5] | BIT(sq);
    }
    for (int place = 0; place < 8; place++) {
        for (int line = 0; line < 256; line++) { /* a run flips when a mover's disc ends it */
            int count = 0;
            for (int step = -1; step <= 1; step += 2) {
                int k = place + step, run = 0;
                while (k >= 0 && k < 8 && !(line >> k & 1))
                    k += step, run++;
                if (k >= 0 && k < 8)
                    count += run;
            }
            LINE_FLIPS[place][line] = (uint8_t)count;
        }
    }
}

/* --- move generation and flips ---------------------------------------------- */

/* Moves along one axis (step s, both ways) over runs of `mask` discs flanked by the player:
 * a fill that doubles its reach (1, 2, 4 squares) covers the longest run of 6. */
static inline u64 axis_moves(u64 P, u64 mask, int s)
{
    u64 f = mask & (P << s), pre = mask & (mask << s), moves;
    f |= mask & (f << s);
    f |= pre & (f << 2 * s);
    f |= pre & (f << 2 * s);
    moves = f << s;
    f = mask & (P >> s);
    pre = mask & (mask >> s);
    f |= mask & (f >> s);
    f |= pre & (f >> 2 * s);
    f |= pre & (f >> 2 * s);
    return moves | (f >> s);
}

/* Squares where P may move. Sideways runs exclude the a- and h-files so nothing wraps. */
static u64 get_moves_portable(u64 P, u64 O)
{
    u64 inner = O & 0x7E7E7E7E7E7E7E7EULL;
    return (axis_moves(P, inner, 1) | axis_moves(P, O, 8) | axis_moves(P, inner, 7) |
            axis_moves(P, inner, 9)) & ~(P | O);
}

#ifdef HAVE_AVX2_PATH
typedef u64 v4u __attribute__((vector_size(32)));
typedef u64 v4u_any __attribute__((vector_size(32), aligned(8))); /* loaded from any u64[4] */

/* get_moves_portable() on the 4 axes at once, for CPUs with AVX2 (chosen at import). */
__attribute__((target("avx2"))) static u64 get_moves_avx2(u64 P, u64 O)
{
    const u64 inner = O & 0x7E7E7E7E7E7E7E7EULL;
    const v4u s = {1, 8, 7, 9}, s2 = {2, 16, 14, 18};
    const v4u pp = {P, P, P, P}, mask = {inner, O, inner, inner};
    v4u f = mask & (pp << s), pre = mask & (mask << s), g, pre2;
    f |= mask & (f << s);
    f |= pre & (f << s2);
    f |= pre & (f << s2);
    g = mask & (pp >> s);
    pre2 = mask & (mask >> s);
    g |= mask & (g >> s);
    g |= pre2 & (g >> s2);
    g |= pre2 & (g >> s2);
    f = (f << s) | (g >> s);
    return (f[0] | f[1] | f[2] | f[3]) & ~(P | O);
}
#endif

static u64 (*get_moves)(u64, u64) = get_moves_portable; /* or get_moves_avx2, set at import */

/* Discs of O flipped when P plays sq (0: not a legal move there), ray by ray: the first
 * square along a ray not holding O's disc ends the run of O's discs next to sq; when it
 * holds P's disc, the run is flipped. On the rays towards higher squares it is the lowest
 * such square (x & -x), on the others the highest (a leading-zero count); bit 0 stands in
 * for "none" there, harmlessly (it is then O's or off the ray, never P's on the ray). */
static inline u64 flips_portable(int sq, u64 P, u64 O)
{
    const u64 *ray = RAYS[sq];
    u64 nO = ~O, out = 0;
    for (int d = 0; d < 4; d++) {
        u64 x = ray[d] & nO, t = x & (0 - x) & P;
        out |= (t - (t != 0)) & ray[d];
    }
    for (int d = 4; d < 8; d++) {
        u64 x = (ray[d] & nO) | 1, t = (0x8000000000000000ULL >> __builtin_clzll(x)) & P & ray[d];
        out |= (0 - (t << 1)) & ray[d];
    }
    return out;
}

#ifdef HAVE_AVX2_PATH
/* flips_portable() on the 8 rays at once, for CPUs with AVX2: from sq, the run of O's discs
 * along each ray, doubling its reach as get_moves() does, kept where P's disc ends it. */
__attribute__((target("avx2"))) static u64 flips_avx2(int sq, u64 P, u64 O)
{
    const u64 inner = O & 0x7E7E7E7E7E7E7E7EULL, b = BIT(sq);
    const v4u s = {1, 8, 7, 9}, s2 = {2, 16, 14, 18};
    const v4u pp = {P, P, P, P}, bb = {b, b, b, b}, mask = {inner, O, inner, inner};
    v4u f = mask & (bb << s), pre = mask & (mask << s), g, pre2;
    f |= mask & (f << s);
    f |= pre & (f << s2);
    f |= pre & (f << s2);
    f &= (v4u)(((f << s) & pp) != 0);
    g = mask & (bb >> s);
    pre2 = mask & (mask >> s);
    g |= mask & (g >> s);
    g |= pre2 & (g >> s2);
    g |= pre2 & (g >> s2);
    g &= (v4u)(((g >> s) & pp) != 0);
    f |= g;
    return f[0] | f[1] | f[2] | f[3];
}

/* flips_portable() with the 8 rays in two vectors, for CPUs with AVX-512 VL and CD (a
 * leading-zero count per lane): the 4 rays up at once, then the 4 rays down. */
__attribute__((target("avx2,avx512vl,avx512cd"))) static u64 flips_avx512(int sq, u64 P, u64 O)
{
    const v4u up = *(const v4u_any *)RAYS[sq], down = *(const v4u_any *)(RAYS[sq] + 4);
    const v4u pp = {P, P, P, P}, nO = {~O, ~O, ~O, ~O}, one = {1, 1, 1, 1}, top = one << 63;
    v4u x = up & nO, t = x & (0 - x) & pp, out = (t + (v4u)(t != 0)) & up;
    x = (down & nO) | one;
    t = (top >> (v4u)_mm256_lzcnt_epi64((__m256i)x)) & pp & down;
    out |= (0 - (t << 1)) & down;
    return out[0] | out[1] | out[2] | out[3];
}

/* Chosen at import: a call through a pointer costs less than the scalar rays. */
static u64 (*flips)(int, u64, u64) = flips_portable;
#else
#define flips flips_portable
#endif

/* --- scores and bounds ------------------------------------------------------ */

static int final_score(u64 P, u64 O, int wte)
{
    int p = popcount(P), o = popcount(O), diff = p - o, empties = 64 - p - o;
    if (wte && diff)
        return diff > 0 ? diff + empties : diff - empties;
    return diff;
}

/* Squares whose line along one axis (step s) holds an empty square: the empties spread both
 * ways, 1 then 2 then 4 steps; `up`/`down` are the squares a +s/-s step may land on. */
static u64 lines_with_empty(u64 e, int s, u64 up, u64 down)
{
    u64 up2 = up & (up << s), up4 = up2 & (up2 << 2 * s);
    u64 down2 = down & (down >> s), down4 = down2 & (down2 >> 2 * s);
    u64 a = e, b = e;
    a |= (a << s) & up;
    a |= (a << 2 * s) & up2;
    a |= (a << 4 * s) & up4;
    b |= (b >> s) & down;
    b |= (b >> 2 * s) & down2;
    b |= (b >> 4 * s) & down4;
    return a | b;
}

/* Discs of P that can never be flipped. A disc cannot be flipped along an axis when its line
 * on that axis is full, or when a neighbour on that axis is the board's edge or a stable disc
 * of the same colour; stable discs are those safe on all 4 axes, grown until nothing changes. */
static u64 stable_discs(u64 P, u64 O)
{
    u64 e = ~(P | O), s = 0, prev;
    u64 h = ~lines_with_empty(e, 1, NOT_A, NOT_H) | FILES_AH;
    u64 v = ~lines_with_empty(e, 8, ALL, ALL) | RANKS_18;
    u64 d9 = ~lines_with_empty(e, 9, NOT_A, NOT_H) | EDGES;
    u64 d7 = ~lines_with_empty(e, 7, NOT_H, NOT_A) | EDGES;
    do {
        prev = s;
        s = P & (h | ((s << 1) & NOT_A) | ((s >> 1) & NOT_H)) & (v | (s << 8) | (s >> 8)) &
            (d9 | ((s << 9) & NOT_A) | ((s >> 9) & NOT_H)) &
            (d7 | ((s << 7) & NOT_H) | ((s >> 7) & NOT_A));
    } while (s != prev);
    return s;
}

/* The union of the quadrants holding an odd number of empty squares. */
static u64 odd_quadrants(u64 empties)
{
    u64 odd = 0;
    for (int q = 0; q < 4; q++)
        if (popcount(empties & QUADRANTS[q]) & 1)
            odd |= QUADRANTS[q];
    return odd;
}

/* The stability cutoff rarely succeeds unless alpha is high: with n empties, try it only
 * from alpha >= STABILITY_MIN[n] - STAB_SHIFT (the figures Edax uses, lowered: FFO #45
 * searches 13% fewer nodes in about the same time; a cheap filter, not a proof). */
static const int8_t STABILITY_MIN[65] = {99, 99, 99, 99, 6,  8,  10, 12, 14, 16, 20, 22, 24,
                                         26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 46, 48, 48,
                                         50, 50, 52, 52, 54, 54, 56, 56, 58, 58, 60, 60, 62,
                                         62, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
                                         64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64};

/* --- transposition table ---------------------------------------------------- */

typedef struct {
    u64 P, O;            /* the full position: no false hits */
    int8_t lower, upper; /* bounds on its exact value (when `exact`) */
    int8_t move;         /* best move found, -1 for none */
    uint8_t depth;       /* work done: empties for an exact entry, plies for an ordering one */
    uint8_t exact;       /* 1: the bounds are exact-value bounds; 0: only the move is a hint */
    uint8_t date;        /* the search (call) that last wrote it: older entries go first */
} Entry;                 /* all zero: unused (the search never meets a board without discs) */

#define WAYS 4 /* a position lives in any entry of its 4-entry bucket */

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

static inline Entry *bucket(Entry *table, u64 mask, u64 P, u64 O)
{
    u64 h = P * 0x9E3779B97F4A7C15ULL + O * 0xC2B2AE3D27D4EB4FULL;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 29;
    return table + (h & mask & ~(u64)(WAYS - 1));
}
/* --- search ----------------------------------------------------------------- */

typedef struct SolverObject SolverObject;

typedef struct {
    Entry *table;
    u64 mask;
    int wte; /* winner takes the empties */
    u64 nodes, next_poll;
    double last_poll;
    PyThreadState *thread; /* saved while the GIL is released */
    PyObject *should_stop;
    SolverObject *owner;
    unsigned long long owner_nodes; /* owner's node count when the search began */
    uint8_t date;                   /* this search's mark on the table entries it writes */
    jmp_buf abort;                  /* longjmp here, holding the GIL, to abandon the search */
} Ctx;

struct SolverObject {
    PyObject_HEAD
    Entry *table;
    u64 mask;
    int wte, bits;
    int used; /* log2 of the entries in use (the first ones: the rest never touched), <= bits */
    unsigned long long nodes;
    PyObject *should_stop;
    PyThread_type_lock lock; /* one search at a time on this table */
    unsigned long holder;    /* the thread holding the lock, 0 for none */
    uint8_t date;            /* counts searches, to age the table's entries */
};

static PyObject *Cancelled;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Every POLL_SECONDS: take the GIL, run signal handlers and should_stop(); abandon on a stop. */
static void poll(Ctx *c)
{
    double t = now();
    c->next_poll = c->nodes + POLL_NODES;
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

/* Discs flipped by playing x, the last empty square, with P's discs being P: on the row and
 * the column and both diagonals through x, gather P's squares into a byte and count. Off-board
 * places of a short diagonal read as 0 and lie beyond its ends, where no run can finish. */
static inline int count_last_flips(int x, u64 P)
{
    int r = x >> 3, c = x & 7;
    unsigned row = (unsigned)(P >> (8 * r)) & 0xFF;
    unsigned col = (unsigned)((((P >> c) & 0x0101010101010101ULL) * 0x0102040810204080ULL) >> 56);
    unsigned d9 = (unsigned)(((P & DIAG9[x]) * 0x0101010101010101ULL) >> 56);
    unsigned d7 = (unsigned)(((P & DIAG7[x]) * 0x0101010101010101ULL) >> 56);
    return LINE_FLIPS[c][row] + LINE_FLIPS[r][col] + LINE_FLIPS[c][d9] + LINE_FLIPS[c][d7];
}

/* The last empty square x: P plays it, or else O does, or else the game ends with it empty. */
static int solve1(Ctx *c, u64 P, int x)
{
    int p = popcount(P), n;
    c->nodes++;
    if ((n = count_last_flips(x, P)))
        return 2 * (p + n) - 62; /* P ends with p + n + 1 discs of 64 */
    if ((n = count_last_flips(x, ~P & ~BIT(x))))
        return 2 * (p - n) - 64; /* P ends with p - n discs of 64 */
    p = 2 * p - 63;              /* 63 discs: never a draw */
    return c->wte ? (p > 0 ? p + 1 : p - 1) : p;
}

static int solve2(Ctx *c, u64 P, u64 O, int alpha, int beta, int x1, int x2)
{
    int best = -INF, v;
    u64 f;
    c->nodes++;
    if ((NEIGHBOURS[x1] & O) && (f = flips(x1, P, O))) {
        best = -solve1(c, O ^ f, x2);
        if (best >= beta)
            return best;
    }
    if ((NEIGHBOURS[x2] & O) && (f = flips(x2, P, O))) {
        v = -solve1(c, O ^ f, x1);
        if (v > best)
            best = v;
    }
    if (best > -INF)
        return best;
    if (((NEIGHBOURS[x1] & P) && flips(x1, O, P)) || ((NEIGHBOURS[x2] & P) && flips(x2, O, P)))
        return -solve2(c, O, P, -beta, -alpha, x1, x2); /* P passes */
    return final_score(P, O, c->wte);
}

/* Three empties, tried in the order given (the caller puts odd-quadrant squares first). */
static int solve3(Ctx *c, u64 P, u64 O, int alpha, int beta, int x1, int x2, int x3)
{
    int best = -INF, v;
    u64 f;
    c->nodes++;
    if ((NEIGHBOURS[x1] & O) && (f = flips(x1, P, O))) {
        best = -solve2(c, O ^ f, P | f | BIT(x1), -beta, -alpha, x2, x3);
        if (best >= beta)
            return best;
        if (best > alpha)
            alpha = best;
    }
    if ((NEIGHBOURS[x2] & O) && (f = flips(x2, P, O))) {
        v = -solve2(c, O ^ f, P | f | BIT(x2), -beta, -alpha, x1, x3);
        if (v >= beta)
            return v;
        if (v > best) {
            best = v;
            if (v > alpha)
                alpha = v;
        }
    }
    if ((NEIGHBOURS[x3] & O) && (f = flips(x3, P, O))) {
        v = -solve2(c, O ^ f, P | f | BIT(x3), -beta, -alpha, x1, x2);
        if (v > best)
            best = v;
    }
    if (best > -INF)
        return best;
    if (((NEIGHBOURS[x1] & P) && flips(x1, O, P)) || ((NEIGHBOURS[x2] & P) && flips(x2, O, P)) ||
        ((NEIGHBOURS[x3] & P) && flips(x3, O, P)))
        return -solve3(c, O, P, -beta, -alpha, x1, x2, x3); /* P passes */
    return final_score(P, O, c->wte);
}

/* Four empties, tried in the order given (the caller puts odd-quadrant squares first). */
static int solve4(Ctx *c, u64 P, u64 O, int alpha, int beta, int x1, int x2, int x3, int x4)
{
    int best = -INF, v;
    u64 f;
    c->nodes++;
    if (alpha >= STABILITY_MIN[4] && alpha >= 64 - 2 * popcount(O)) { /* see stability_cut() */
        int bound = 64 - 2 * popcount(stable_discs(O, P));
        if (bound <= alpha)
            return bound;
    }
    if ((NEIGHBOURS[x1] & O) && (f = flips(x1, P, O))) {
        best = -solve3(c, O ^ f, P | f | BIT(x1), -beta, -alpha, x2, x3, x4);
        if (best >= beta)
            return best;
        if (best > alpha)
            alpha = best;
    }
    if ((NEIGHBOURS[x2] & O) && (f = flips(x2, P, O))) {
        v = -solve3(c, O ^ f, P | f | BIT(x2), -beta, -alpha, x1, x3, x4);
        if (v >= beta)
            return v;
        if (v > best) {
            best = v;
            if (v > alpha)
                alpha = v;
        }
    }
    if ((NEIGHBOURS[x3] & O) && (f = flips(x3, P, O))) {
        v = -solve3(c, O ^ f, P | f | BIT(x3), -beta, -alpha, x1, x2, x4);
        if (v >= beta)
            return v;
        if (v > best) {
            best = v;
            if (v > alpha)
                alpha = v;
        }
    }
    if ((NEIGHBOURS[x4] & O) && (f = flips(x4, P, O))) {
        v = -solve3(c, O ^ f, P | f | BIT(x4), -beta, -alpha, x1, x2, x3);
        if (v > best)
            best = v;
    }
    if (best > -INF)
        return best;
    if (((NEIGHBOURS[x1] & P) && flips(x1, O, P)) || ((NEIGHBOURS[x2] & P) && flips(x2, O, P)) ||
        ((NEIGHBOURS[x3] & P) && flips(x3, O, P)) || ((NEIGHBOURS[x4] & P) && flips(x4, O, P)))
        return -solve4(c, O, P, -beta, -alpha, x1, x2, x3, x4); /* P passes */
    return final_score(P, O, c->wte);
}

/* The k (3 or 4) empties of E, listed in `sq` among others, in sq's order but with those
 * in quadrants holding an odd number of empties first: the last move of an odd region
 * tends to be ours (parity). Then solved. */
static int solve_parity(Ctx *c, u64 P, u64 O, int alpha, int beta, u64 E, const uint8_t *sq, int total, int k,
                        unsigned parity)
{
    int x[4], odd = 0, even = 0, y[4];
    for (int i = 0; i < total; i++)
        if (E & BIT(sq[i])) {
            if (parity & QUADRANT_ID[sq[i]])
                x[odd++] = sq[i];
            else
                y[even++] = sq[i];
        }
    for (int i = 0; i < even; i++)
        x[odd + i] = y[i];
    if (k == 3)
        return solve3(c, P, O, alpha, beta, x[0], x[1], x[2]);
    return solve4(c, P, O, alpha, beta, x[0], x[1], x[2], x[3]);
}

/* 5..SHALLOW_MAX empties, without ordering scores or table: the moves, among the empty squares
 * `sq` (in a fixed priority order, corners first, X-squares last; some may be filled by now),
 * are tried in the quadrants holding an odd number of empties first (parity). */
static int solve_shallow(Ctx *c, u64 P, u64 O, int alpha, int beta, int n, const uint8_t *sq, int total,
                         unsigned parity)
{
    u64 E = ~(P | O);
    int best = -INF;
    c->nodes++;
    /* see stability_cut() */
    if (alpha >= STABILITY_MIN[n] - STAB_SHIFT && alpha >= 64 - 2 * popcount(O)) {
        int bound = 64 - 2 * popcount(stable_discs(O, P));
        if (bound <= alpha)
            return bound;
    }
    u64 moves = get_moves(P, O);
    if (!moves) {
        if (get_moves(O, P))
            return -solve_shallow(c, O, P, -beta, -alpha, n, sq, total, parity); /* P passes */
        return final_score(P, O, c->wte);
    }
    u64 odd = moves & PARITY_MASK[parity];
    for (int pass = 0; pass < 2; pass++) { /* odd quadrants first, then the others */
        u64 these = pass ? moves & ~odd : odd;
        for (int i = 0; these && i < total; i++) {
            int x = sq[i], v;
            u64 f, np, no;
            if (!(these & BIT(x)))
                continue;
            these ^= BIT(x);
            f = flips(x, P, O);
            np = O ^ f;
            no = P | f | BIT(x);
            if (n == 5)
                v = -solve_parity(c, np, no, -beta, -alpha, E ^ BIT(x), sq, total, 4, parity ^ QUADRANT_ID[x]);
            else
                v = -solve_shallow(c, np, no, -beta, -alpha, n - 1, sq, total, parity ^ QUADRANT_ID[x]);
            if (v > best) {
                best = v;
                if (v > alpha) {
                    alpha = v;
                    if (v >= beta)
                        return v;
                }
            }
        }
    }
    return best;
}

/* The small solvers' entry (0..SHALLOW_MAX empties). */
static int solve_few(Ctx *c, u64 P, u64 O, int alpha, int beta, int n)
{
    u64 E = ~(P | O);
    uint8_t sq[SHALLOW_MAX];
    int total = 0;
    unsigned parity = 0; /* bit q: quadrant q holds an odd number of empties */
    if (n == 0) {
        c->nodes++;
        return final_score(P, O, c->wte);
    }
    if (n == 1)
        return solve1(c, P, first_square(E));
    if (n == 2)
        return solve2(c, P, O, alpha, beta, first_square(E), first_square(E & (E - 1)));
    for (int k = 0; k < 10; k++)
        for (u64 m = E & SQUARE_CLASSES[k]; m; m &= m - 1)
            sq[total++] = (uint8_t)first_square(m);
    for (int i = 0; i < total; i++)
        parity ^= QUADRANT_ID[sq[i]];
    if (n <= 4)
        return solve_parity(c, P, O, alpha, beta, E, sq, total, n, parity);
    return solve_shallow(c, P, O, alpha, beta, n, sq, total, parity);
}

/* --- move ordering ------------------------------------------------------------ */

typedef struct {
    u64 flipped;
    u64 replies; /* the child's legal moves, or MOVES_UNKNOWN */
    int sq, score; /* higher score: tried earlier */
} Move;

#define MOVES_UNKNOWN (~0ULL) /* never a position's moves: its discs are not empty */

/* Empty squares next to discs of `b`: where the other side may one day move. */
static u64 adjacent_empties(u64 b, u64 E)
{
    u64 a = ((b << 1) & NOT_A) | ((b >> 1) & NOT_H) | (b << 8) | (b >> 8) | ((b << 9) & NOT_A) |
            ((b >> 9) & NOT_H) | ((b << 7) & NOT_H) | ((b >> 7) & NOT_A);
    return a & E;
}

/* Mobility with moves to corners counted twice. */
static inline int weighted_mobility(u64 moves)
{
    return popcount(moves) + popcount(moves & CORNERS);
}

/* P's corners and the edge squares next to its corners: discs that are (nearly always) stable. */
static inline int corner_stability(u64 P)
{
    u64 s = (((0x0100000000000001ULL & P) << 1) | ((0x8000000000000080ULL & P) >> 1) |
             ((0x0000000000000081ULL & P) << 8) | ((0x8100000000000000ULL & P) >> 8) | CORNERS) &
            P;
    return popcount(s);
}

/* --- pattern evaluation ----------------------------------------------------------- */

/* A linear evaluation over patterns (fitted by bench/fit_eval.py on exact values of endgame
 * positions from random and evaluation-played games, shipped in eval_weights.h): each
 * pattern's squares read as a base-3 number (0 empty, 1 P's, 2 O's) index a table of
 * weights. The patterns are taken at the a1 corner of each of the board's 8 symmetric
 * images, so one table serves every corner and edge, in both directions. */
#define N_EDGE 19683   /* a1..h1 and b2 */
#define N_CORNER 19683 /* a1..c3 */
#define N_LINE 6561    /* a line of 8 */
#define OFF_EDGE 0
#define OFF_CORNER (OFF_EDGE + N_EDGE)
#define OFF_ROW2 (OFF_CORNER + N_CORNER)
#define OFF_ROW3 (OFF_ROW2 + N_LINE)
#define OFF_ROW4 (OFF_ROW3 + N_LINE)
#define OFF_DIAG (OFF_ROW4 + N_LINE)
#define OFF_MOBILITY (OFF_DIAG + N_LINE) /* mobility difference + 40 */
#define OFF_POTENTIAL (OFF_MOBILITY + 81) /* potential mobility difference + 64 */
#define N_WEIGHTS (OFF_POTENTIAL + 129)
#define N_FEATURES (8 * 6 + 2)
#define EVAL_SCALE 32 /* weights per disc */

#include "eval_weights.h" /* static const int16_t EVAL_WEIGHTS[N_WEIGHTS] */


static inline u64 flip_vertical(u64 b)
{
    b = ((b >> 8) & 0x00FF00FF00FF00FFULL) | ((b & 0x00FF00FF00FF00FFULL) << 8);
    b = ((b >> 16) & 0x0000FFFF0000FFFFULL) | ((b & 0x0000FFFF0000FFFFULL) << 16);
    return (b >> 32) | (b << 32);
}

static inline u64 flip_horizontal(u64 b)
{
    b = ((b >> 1) & 0x5555555555555555ULL) | ((b & 0x5555555555555555ULL) << 1);
    b = ((b >> 2) & 0x3333333333333333ULL) | ((b & 0x3333333333333333ULL) << 2);
    return ((b >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((b & 0x0F0F0F0F0F0F0F0FULL) << 4);
}

static inline u64 transpose(u64 b) /* square (row, col) -> (col, row) */
{
    u64 t;
    t = 0x0F0F0F0F00000000ULL & (b ^ (b << 28));
    b ^= t ^ (t >> 28);
    t = 0x3333000033330000ULL & (b ^ (b << 14));
    b ^= t ^ (t >> 14);
    t = 0x5500550055005500ULL & (b ^ (b << 7));
    b ^= t ^ (t >> 7);
    return b;
}

static inline int ternary(unsigned p, unsigned o)
{
    return BASE3[p] + 2 * BASE3[o];
}

/* The 6 pattern indices at the a1 corner of one image (P, O), into out[0..5]. */
static inline void corner_patterns(u64 P, u64 O, int *out)
{
    unsigned pe = (unsigned)(P & 0xFF) | (unsigned)((P >> 9) & 1) << 8;
    unsigned oe = (unsigned)(O & 0xFF) | (unsigned)((O >> 9) & 1) << 8;
    unsigned pc = (unsigned)((P & 7) | ((P >> 5) & 0x38) | ((P >> 10) & 0x1C0));
    unsigned oc = (unsigned)((O & 7) | ((O >> 5) & 0x38) | ((O >> 10) & 0x1C0));
    unsigned pd = (unsigned)(((P & 0x8040201008040201ULL) * 0x0101010101010101ULL) >> 56);
    unsigned od = (unsigned)(((O & 0x8040201008040201ULL) * 0x0101010101010101ULL) >> 56);
    out[0] = OFF_EDGE + ternary(pe, oe);
    out[1] = OFF_CORNER + ternary(pc, oc);
    out[2] = OFF_ROW2 + ternary((unsigned)(P >> 8) & 0xFF, (unsigned)(O >> 8) & 0xFF);
    out[3] = OFF_ROW3 + ternary((unsigned)(P >> 16) & 0xFF, (unsigned)(O >> 16) & 0xFF);
    out[4] = OFF_ROW4 + ternary((unsigned)(P >> 24) & 0xFF, (unsigned)(O >> 24) & 0xFF);
    out[5] = OFF_DIAG + ternary(pd, od);
}

static u64 adjacent_empties(u64 b, u64 E);

/* Every feature's index into EVAL_WEIGHTS, from P's view (N_FEATURES of them); `moves` are
 * P's legal moves. */
static void features(u64 P, u64 O, u64 moves, int *out)
{
    u64 E = ~(P | O);
    u64 p[8], o[8];
    int mob = popcount(moves) - popcount(get_moves(O, P));
    int pot = popcount(adjacent_empties(O, E)) - popcount(adjacent_empties(P, E));
    p[0] = P, o[0] = O;
    p[1] = flip_vertical(P), o[1] = flip_vertical(O);
    p[2] = flip_horizontal(P), o[2] = flip_horizontal(O);
    p[3] = flip_horizontal(p[1]), o[3] = flip_horizontal(o[1]);
    for (int i = 0; i < 4; i++)
        p[4 + i] = transpose(p[i]), o[4 + i] = transpose(o[i]);
    for (int i = 0; i < 8; i++)
        corner_patterns(p[i], o[i], out + 6 * i);
    mob = mob < -40 ? -40 : mob > 40 ? 40 : mob;
    out[48] = OFF_MOBILITY + 40 + mob;
    out[49] = OFF_POTENTIAL + 64 + pot;
}

/* The pattern evaluation of (P, O) for P, in quarter-discs; `moves` are P's legal moves. */
static int pattern_eval(u64 P, u64 O, u64 moves)
{
    int idx[N_FEATURES], sum = 0;
    features(P, O, moves, idx);
    for (int i = 0; i < N_FEATURES; i++)
        sum += EVAL_WEIGHTS[idx[i]];
    return sum / (EVAL_SCALE / 4);
}

#define EVAL_INF 30000

/* Depth-limited alpha-beta on the evaluation, for ordering moves only; `moves` are P's legal
 * moves when known, else MOVES_UNKNOWN. */
static int midgame(Ctx *c, u64 P, u64 O, int alpha, int beta, int depth, u64 moves)
{
    int best = -EVAL_INF;
    c->nodes++;
    if (moves == MOVES_UNKNOWN)
        moves = get_moves(P, O);
    if (depth == 0)
        return pattern_eval(P, O, moves);
    if (!moves) {
        if (!get_moves(O, P))
            return 256 * final_score(P, O, c->wte);
        return -midgame(c, O, P, -beta, -alpha, depth, MOVES_UNKNOWN);
    }
    for (; moves; moves &= moves - 1) {
        int x = first_square(moves);
        u64 f = flips(x, P, O);
        int v = -midgame(c, O ^ f, P | f | BIT(x), -beta, -alpha, depth - 1, MOVES_UNKNOWN);
        if (v > best) {
            best = v;
            if (v > alpha) {
                alpha = v;
                if (v >= beta)
                    break;
            }
        }
    }
    return best;
}

#define W_HINT (1 << 30)
#define W_WIPEOUT (1 << 29)
#ifndef W_MOBILITY
#define W_MOBILITY 1024
#endif
#ifndef W_CORNER_STABILITY
#define W_CORNER_STABILITY 64
#endif
#ifndef W_POTENTIAL
#define W_POTENTIAL 16
#endif
#ifndef W_PARITY
#define W_PARITY 4
#endif

/* The ordering score of P's move x (empties E before it), leaving the opponent `replies`:
 * fewest replies first (fastest first), then corner stability, potential mobility, parity. */
static inline int move_score(u64 no, u64 replies, u64 E, int x, u64 odd)
{
    int score = -W_MOBILITY * weighted_mobility(replies) + W_CORNER_STABILITY * corner_stability(no) -
                W_POTENTIAL * popcount(adjacent_empties(no, E & ~BIT(x)));
    return odd & BIT(x) ? score + W_PARITY : score;
}

/* The moves of P (bitboard `moves`) with their flips and ordering scores: the table's move,
 * then move_score(), with an evaluation at deep nodes. */
static int list_moves(Ctx *c, u64 P, u64 O, u64 moves, int hint, int n, Move *list)
{
    int count = 0, sort_depth = n >= SORT2_MIN ? 2 : n >= SORT1_MIN ? 1 : n >= SORT0_MIN ? 0 : -1;
    u64 E = ~(P | O), odd = n <= PARITY_MAX ? odd_quadrants(E) : 0;
    for (; moves; moves &= moves - 1) {
        Move *m = &list[count++];
        int x = first_square(moves);
        u64 f = flips(x, P, O), np = O ^ f, no = P | f | BIT(x);
        m->sq = x;
        m->flipped = f;
        m->replies = MOVES_UNKNOWN;
        if (n > TABLE_MIN) { /* the child's bucket, from memory while its siblings are scored */
            const char *b = (const char *)bucket(c->table, c->mask, np, no);
            PREFETCH(b);
            PREFETCH(b + WAYS * sizeof(Entry) - 1);
        }
        if (x == hint) {
            m->score = W_HINT;
            continue;
        }
        if (!np) {
            m->score = W_WIPEOUT;
            continue;
        }
        m->replies = get_moves(np, no);
        m->score = move_score(no, m->replies, E, x, odd);
        if (sort_depth >= 0)
            m->score -= W_EVAL * midgame(c, np, no, -EVAL_INF, EVAL_INF, sort_depth, m->replies);
    }
    return count;
}

/* Move the best-scored move of list[i..count) to list[i] (one selection-sort step: a cutoff
 * often comes before the list is sorted). */
static inline Move next_move(Move *list, int i, int count)
{
    int k = i;
    for (int j = i + 1; j < count; j++)
        if (list[j].score > list[k].score)
            k = j;
    Move m = list[k];
    list[k] = list[i];
    list[i] = m;
    return m;
}

/* --- transposition table use ---------------------------------------------------- */

static inline Entry *probe(Ctx *c, u64 P, u64 O)
{
    Entry *b = bucket(c->table, c->mask, P, O);
    for (int i = 0; i < WAYS; i++)
        if (b[i].P == P && b[i].O == O)
            return &b[i];
    return NULL;
}

/* Record that the value of (P, O), searched within (alpha, beta), is v (fail-soft), best
 * move `move`. Replaces, when the position is not there, the entry of an older search or
 * else the one with the least work behind it. */
static inline void store(Ctx *c, u64 P, u64 O, int n, int alpha, int beta, int v, int move)
{
    Entry *b = bucket(c->table, c->mask, P, O), *e = NULL;
    int lower = -64, upper = 64;
    if (v <= alpha)
        upper = v;
    else if (v >= beta)
        lower = v;
    else
        lower = upper = v;
    for (int i = 0; i < WAYS; i++)
        if (b[i].P == P && b[i].O == O) {
            e = &b[i];
            break;
        }
    if (!e) {
        int worst = 1 << 30;
        for (int i = 0; i < WAYS; i++) {
            int keep = (b[i].date == c->date) * AGE_BONUS + b[i].depth + 128 * b[i].exact;
            if (keep < worst)
                worst = keep, e = &b[i];
        }
        e->P = P;
        e->O = O;
        e->move = -1;
        e->exact = 0;
    }
    if (!e->exact) {
        e->exact = 1;
        e->lower = -64;
        e->upper = 64;
    }
    /* both old and new bounds hold: keep their intersection */
    if (lower > e->lower)
        e->lower = (int8_t)lower;
    if (upper < e->upper)
        e->upper = (int8_t)upper;
    if (move >= 0 && (v > alpha || e->move < 0))
        e->move = (int8_t)move;
    e->depth = (uint8_t)n;
    e->date = c->date;
}

/* --- exact search --------------------------------------------------------------- */

static int nws_moves(Ctx *c, u64 P, u64 O, int alpha, int n, u64 moves);
#define nws(c, P, O, alpha, n) nws_moves(c, P, O, alpha, n, MOVES_UNKNOWN)

/* Stability cutoff: O's stable discs stay O's, so P ends with at most 64 - 2 * stable
 * (true under both rules); P's stable discs likewise give a lower bound. 1: cut, *v set. */
static inline int stability_cut(u64 P, u64 O, int n, int alpha, int beta, int *v)
{
    if (alpha >= STABILITY_MIN[n] - STAB_SHIFT && alpha >= 64 - 2 * popcount(O)) {
        int bound = 64 - 2 * popcount(stable_discs(O, P));
        if (bound <= alpha)
            return *v = bound, 1;
    }
    if (beta <= STAB_SHIFT - STABILITY_MIN[n] && beta <= 2 * popcount(P) - 64) {
        int bound = 2 * popcount(stable_discs(P, O)) - 64;
        if (bound >= beta)
            return *v = bound, 1;
    }
    return 0;
}

/* At null-window nodes of up to EARLY_MAX empties, as Egaroucid does: the table's move is
 * searched before the other moves are scored, and a move leaving the opponent at most
 * EARLY_REPLIES (weighted) replies as soon as it is scored: a cut there saves scoring the
 * rest. The moves left, scored, go to `list`; returns their count, or -1 after a cut. */
static int search_early(Ctx *c, u64 P, u64 O, u64 moves, int hint, int n, int alpha, int *best,
                        int *best_move, Move *list)
{
    int count = 0, v;
    u64 E = ~(P | O), odd = odd_quadrants(E);
    if (hint >= 0 && (moves & BIT(hint))) {
        u64 f = flips(hint, P, O);
        *best = -nws(c, O ^ f, P | f | BIT(hint), -alpha - 1, n - 1);
        *best_move = hint;
        if (*best > alpha)
            return -1;
        moves ^= BIT(hint);
    }
    for (; moves; moves &= moves - 1) {
        Move *m = &list[count];
        int x = first_square(moves);
        u64 f = flips(x, P, O), np = O ^ f, no = P | f | BIT(x);
        m->sq = x;
        m->flipped = f;
        m->replies = MOVES_UNKNOWN;
        if (!np) {
            m->score = W_WIPEOUT;
            count++;
            continue;
        }
        m->replies = get_moves(np, no);
        if (weighted_mobility(m->replies) <= EARLY_REPLIES) {
            v = -nws_moves(c, np, no, -alpha - 1, n - 1, m->replies);
            if (v > *best) {
                *best = v;
                *best_move = x;
                if (v > alpha)
                    return -1;
            }
            continue;
        }
        m->score = move_score(no, m->replies, E, x, odd);
        count++;
    }
    return count;
}

/* Null-window search: fail-soft value of (P, O) with n empties against alpha (beta = alpha + 1);
 * `moves` are P's legal moves when known, else MOVES_UNKNOWN. */
static int nws_moves(Ctx *c, u64 P, u64 O, int alpha, int n, u64 moves)
{
    Move list[MAX_MOVES];
    int hint = -1, count, best = -INF, best_move = -1, v;

    if (n <= SHALLOW_MAX)
        return solve_few(c, P, O, alpha, alpha + 1, n);
    if (++c->nodes >= c->next_poll)
        poll(c);
    if (stability_cut(P, O, n, alpha, alpha + 1, &v))
        return v;
    if (n >= TABLE_MIN) {
        const Entry *e = probe(c, P, O);
        if (e) {
            if (e->exact) {
                if (e->lower > alpha)
                    return e->lower;
                if (e->upper <= alpha)
                    return e->upper;
            }
            hint = e->move;
        }
    }
    if (moves == MOVES_UNKNOWN)
        moves = get_moves(P, O);
    if (!moves) {
        if (!get_moves(O, P))
            return final_score(P, O, c->wte);
        return -nws(c, O, P, -alpha - 1, n); /* P passes */
    }
    if (n <= EARLY_MAX)
        count = search_early(c, P, O, moves, hint, n, alpha, &best, &best_move, list);
    else
        count = list_moves(c, P, O, moves, hint, n, list);
    if (n - 1 >= TABLE_MIN && n >= ETC_MIN) { /* enhanced transposition cutoff */
        for (int i = 0; i < count; i++) {
            const Entry *e = probe(c, O ^ list[i].flipped, P | list[i].flipped | BIT(list[i].sq));
            if (e && e->exact && -e->upper > alpha)
                return -e->upper;
        }
    }
    for (int i = 0; i < count; i++) {
        Move m = next_move(list, i, count);
        v = -nws_moves(c, O ^ m.flipped, P | m.flipped | BIT(m.sq), -alpha - 1, n - 1, m.replies);
        if (v > best) {
            best = v;
            best_move = m.sq;
            if (v > alpha)
                break;
        }
    }
    if (n >= TABLE_MIN)
        store(c, P, O, n, alpha, alpha + 1, best, best_move);
    return best;
}

/* Principal-variation search: fail-soft value of (P, O) with n empties within (alpha, beta);
 * the first move with the full window, the others proved no better by a null window. */
static int pvs(Ctx *c, u64 P, u64 O, int alpha, int beta, int n)
{
    Move list[MAX_MOVES];
    int hint = -1, count, best = -INF, best_move = -1, a0, v;
    u64 moves;

    if (n <= SHALLOW_MAX)
        return solve_few(c, P, O, alpha, beta, n);
    if (++c->nodes >= c->next_poll)
        poll(c);
    if (stability_cut(P, O, n, alpha, beta, &v))
        return v;
    if (n >= TABLE_MIN) {
        const Entry *e = probe(c, P, O);
        if (e) {
            if (e->exact) {
                if (e->lower >= beta || e->lower == e->upper)
                    return e->lower;
                if (e->upper <= alpha)
                    return e->upper;
                if (e->lower > alpha)
                    alpha = e->lower;
                if (e->upper < beta)
                    beta = e->upper;
            }
            hint = e->move;
        }
    }
    moves = get_moves(P, O);
    if (!moves) {
        if (!get_moves(O, P))
            return final_score(P, O, c->wte);
        return -pvs(c, O, P, -beta, -alpha, n); /* P passes */
    }
    count = list_moves(c, P, O, moves, hint, n, list);
    a0 = alpha;
    for (int i = 0; i < count; i++) {
        Move m = next_move(list, i, count);
        u64 np = O ^ m.flipped, no = P | m.flipped | BIT(m.sq);
        if (i == 0) {
            v = -pvs(c, np, no, -beta, -alpha, n - 1);
        } else {
            v = -nws(c, np, no, -alpha - 1, n - 1);
            if (alpha < v && v < beta)
                v = -pvs(c, np, no, -beta, -v, n - 1);
        }
        if (v > best) {
            best = v;
            best_move = m.sq;
            if (v > alpha) {
                alpha = v;
                if (v >= beta)
                    break;
            }
        }
    }
    if (n >= TABLE_MIN)
        store(c, P, O, n, a0, beta, best, best_move);
    return best;
}

/* --- iterative deepening on the evaluation, before the exact search ------------------- */

/* Record `move` as the best move of (P, O) found by a search on the evaluation: a hint for
 * later searches, without bounds (an exact entry keeps its own move). */
static void store_hint(Ctx *c, u64 P, u64 O, int depth, int move)
{
    Entry *b = bucket(c->table, c->mask, P, O), *e = NULL;
    int worst = 1 << 30;
    for (int i = 0; i < WAYS; i++)
        if (b[i].P == P && b[i].O == O) {
            if (!b[i].exact || b[i].move < 0)
                b[i].move = (int8_t)move;
            b[i].date = c->date;
            return;
        }
    for (int i = 0; i < WAYS; i++) {
        int keep = (b[i].date == c->date) * 256 + b[i].depth + 128 * b[i].exact;
        if (keep < worst)
            worst = keep, e = &b[i];
    }
    e->P = P;
    e->O = O;
    e->lower = -64;
    e->upper = 64;
    e->move = (int8_t)move;
    e->depth = (uint8_t)depth;
    e->exact = 0;
    e->date = c->date;
}

/* Alpha-beta on the evaluation to `depth` plies, ordered as the exact search orders (the
 * table's moves first), storing its best moves as hints. */
static int midgame_id(Ctx *c, u64 P, u64 O, int alpha, int beta, int depth, int n)
{
    Move list[MAX_MOVES];
    int hint = -1, count, best = -EVAL_INF, best_move = -1;
    u64 moves;
    if (depth <= 2)
        return midgame(c, P, O, alpha, beta, depth, MOVES_UNKNOWN);
    if (++c->nodes >= c->next_poll)
        poll(c);
    const Entry *e = probe(c, P, O);
    if (e)
        hint = e->move;
    moves = get_moves(P, O);
    if (!moves) {
        if (!get_moves(O, P))
            return 256 * final_score(P, O, c->wte);
        return -midgame_id(c, O, P, -beta, -alpha, depth, n);
    }
    count = list_moves(c, P, O, moves, hint, n < SORT2_MIN ? n : SORT2_MIN - 1, list);
    for (int i = 0; i < count; i++) {
        Move m = next_move(list, i, count);
        int v = -midgame_id(c, O ^ m.flipped, P | m.flipped | BIT(m.sq), -beta, -alpha, depth - 1, n - 1);
        if (v > best) {
            best = v;
            best_move = m.sq;
            if (v > alpha) {
                alpha = v;
                if (v >= beta)
                    break;
            }
        }
    }
    store_hint(c, P, O, depth, best_move);
    return best;
}

/* A selective search before the exact one, as Edax does with probcut: nodes whose 2-ply
 * evaluation search lies far outside the window are cut at once, the rest is searched like
 * the exact search, which takes over at SEL_EXACT empties. It stores only move hints (its
 * values are guesses), so the exact search that follows finds good moves first everywhere
 * the selective one went; its exact subtrees leave exact entries, as always. */
static int selective(Ctx *c, u64 P, u64 O, int alpha, int beta, int n, int margin)
{
    Move list[MAX_MOVES];
    int hint = -1, count, best = -INF, best_move = -1, v;
    u64 moves;
    if (n <= SEL_EXACT)
        return beta == alpha + 1 ? nws(c, P, O, alpha, n) : pvs(c, P, O, alpha, beta, n);
    if (++c->nodes >= c->next_poll)
        poll(c);
    const Entry *e = probe(c, P, O);
    if (e) {
        if (e->exact && (e->lower >= beta || e->lower == e->upper))
            return e->lower;
        if (e->exact && e->upper <= alpha)
            return e->upper;
        hint = e->move;
    }
    moves = get_moves(P, O);
    if (!moves) {
        if (!get_moves(O, P))
            return final_score(P, O, c->wte);
        return -selective(c, O, P, -beta, -alpha, n, margin);
    }
    v = midgame(c, P, O, -EVAL_INF, EVAL_INF, 2, moves) / 4; /* quarter-discs to discs */
    if (v - margin >= beta)
        return beta;
    if (v + margin <= alpha)
        return alpha;
    count = list_moves(c, P, O, moves, hint, n, list);
    for (int i = 0; i < count; i++) {
        Move m = next_move(list, i, count);
        u64 np = O ^ m.flipped, no = P | m.flipped | BIT(m.sq);
        if (i == 0) {
            v = -selective(c, np, no, -beta, -alpha, n - 1, margin);
        } else {
            v = -selective(c, np, no, -alpha - 1, -alpha, n - 1, margin);
            if (alpha < v && v < beta)
                v = -selective(c, np, no, -beta, -v, n - 1, margin);
        }
        if (v > best) {
            best = v;
            best_move = m.sq;
            if (v > alpha) {
                alpha = v;
                if (v >= beta)
                    break;
            }
        }
    }
    store_hint(c, P, O, n, best_move);
    return best;
}

/* Value of (P, O) within (alpha, beta), given a guess: first a narrow window around the
 * guess, widened on the side it fails. */
static int aspiration(Ctx *c, u64 P, u64 O, int alpha, int beta, int n, int guess)
{
    if (beta - alpha > 2 * ASPIRATION && alpha < guess && guess < beta) {
        int lo = guess - ASPIRATION > alpha ? guess - ASPIRATION : alpha;
        int hi = guess + ASPIRATION < beta ? guess + ASPIRATION : beta;
        int v = pvs(c, P, O, lo, hi, n);
        if (v <= lo && lo > alpha) /* the value is at most v */
            v = pvs(c, P, O, alpha, v + 1, n);
        else if (v >= hi && hi < beta) /* at least v */
            v = pvs(c, P, O, v - 1, beta, n);
        return v;
    }
    if (beta == alpha + 1)
        return nws(c, P, O, alpha, n);
    return pvs(c, P, O, alpha, beta, n);
}

/* Value of (P, O) within (alpha, beta); bounds beyond [-64, 64] are trivially met. */
static int root_search(Ctx *c, u64 P, u64 O, int alpha, int beta)
{
    int n = 64 - popcount(P | O);
    if (alpha >= 64)
        return 64; /* an upper bound no value exceeds */
    if (beta <= -64)
        return -64;
    if (alpha < -65)
        alpha = -65;
    if (beta > 65)
        beta = 65;
    if (!get_moves(P, O) && !get_moves(O, P)) /* the game is over (a board without discs too) */
        return final_score(P, O, c->wte);
    if (n >= TABLE_MIN) { /* known already (a repeated call): no preparation */
        const Entry *e = probe(c, P, O);
        if (e && e->exact) {
            if (e->lower >= beta || e->lower == e->upper)
                return e->lower;
            if (e->upper <= alpha)
                return e->upper;
        }
    }
    if (n >= ID_MIN) /* fill the table with good moves first */
        for (int depth = 4; depth <= n - ID_GAP && depth <= ID_MAX_DEPTH; depth += 2)
            midgame_id(c, P, O, -EVAL_INF, EVAL_INF, depth, n);
    if (n >= SEL_MIN)
        return aspiration(c, P, O, alpha, beta, n, selective(c, P, O, alpha, beta, n, SEL_MARGIN));
    if (beta == alpha + 1)
        return nws(c, P, O, alpha, n);
    return pvs(c, P, O, alpha, beta, n);
}

/* Bit sq set for every move of P reaching the value v of (P, O): a null-window test on each
 * child (its value is at least -v; the move is optimal when it is at most -v). No evaluation
 * search first: the value's own search has left the table full of good moves. */
static u64 optimal_moves(Ctx *c, u64 P, u64 O, int v)
{
    Move list[MAX_MOVES];
    u64 moves = get_moves(P, O), optimal = 0;
    int n = 64 - popcount(P | O), count, hint = -1;
    if (!moves)
        return 0;
    if (n >= TABLE_MIN) {
        const Entry *e = probe(c, P, O);
        if (e)
            hint = e->move;
    }
    count = list_moves(c, P, O, moves, hint, n, list);
    for (int i = 0; i < count; i++) {
        Move m = next_move(list, i, count);
        u64 np = O ^ m.flipped, no = P | m.flipped | BIT(m.sq);
        if (nws(c, np, no, -v, n - 1) <= -v)
            optimal |= BIT(m.sq);
    }
    return optimal;
}

/* The exact value of (P, O) and, in *optimal, every move reaching it, in one pass: the root's
 * first move gets the exact value, each other one a null-window test of whether it reaches
 * the best so far (not only whether it beats it), and an exact search when it beats it.
 * *known is 0 when the table held the value already and the moves were not looked at. */
static int root_solve(Ctx *c, u64 P, u64 O, u64 *optimal, int *known)
{
    Move list[MAX_MOVES];
    int n = 64 - popcount(P | O), count, hint = -1, best = -INF, best_move = -1, guess = INF;
    u64 moves = get_moves(P, O);
    *optimal = 0;
    *known = 1;
    if (!moves) /* a pass or the end: no moves */
        return root_search(c, P, O, -64, 64);
    if (n >= TABLE_MIN) {
        const Entry *e = probe(c, P, O);
        if (e && e->exact && e->lower == e->upper) {
            *known = 0;
            return e->lower;
        }
    }
    if (n >= ID_MIN)
        for (int depth = 4; depth <= n - ID_GAP && depth <= ID_MAX_DEPTH; depth += 2)
            midgame_id(c, P, O, -EVAL_INF, EVAL_INF, depth, n);
    if (n >= SEL_MIN)
        guess = selective(c, P, O, -64, 64, n, SEL_MARGIN);
    if (n >= TABLE_MIN) {
        const Entry *e = probe(c, P, O);
        if (e)
            hint = e->move;
    }
    count = list_moves(c, P, O, moves, hint, n, list);
    for (int i = 0; i < count; i++) {
        Move m = next_move(list, i, count);
        u64 np = O ^ m.flipped, no = P | m.flipped | BIT(m.sq);
        int v;
        if (i == 0) {
            v = -(guess == INF ? pvs(c, np, no, -65, 65, n - 1)
                               : aspiration(c, np, no, -65, 65, n - 1, -guess));
        } else {
            v = -nws(c, np, no, -best, n - 1); /* v >= best: at least as good as the best */
            if (v >= best && -nws(c, np, no, -best - 1, n - 1) > best) /* better: by how much */
                v = -pvs(c, np, no, -65, -best - 1, n - 1);
            else if (v >= best) /* as good */
                v = best;
        }
        if (v > best) {
            best = v;
            best_move = m.sq;
            *optimal = BIT(m.sq);
        } else if (v == best) {
            *optimal |= BIT(m.sq);
        }
    }
    if (n >= TABLE_MIN)
        store(c, P, O, n, -65, 65, best, best_move);
    return best;
}

/* Runs the search (the GIL already released): 0 with the result in out, the GIL still
 * released; -1 when abandoned, with the GIL held and an exception set. `mode` 0: out[0] is
 * root_search()'s value; 1: out[0] the bitboard of optimal_moves() for the value alpha; 2:
 * root_solve(), out[1] the value and out[0] the optimal moves (all ones: not known). setjmp
 * lives in this small function so that the caller's locals stay determinate after a longjmp. */
static int run_search(Ctx *c, u64 P, u64 O, int alpha, int beta, int mode, u64 *out)
{
    if (setjmp(c->abort))
        return -1;
    if (mode == 1) {
        *out = optimal_moves(c, P, O, alpha);
    } else if (mode == 2) {
        int known;
        out[1] = (u64)(int64_t)root_solve(c, P, O, out, &known);
        if (!known)
            out[0] = ~0ULL;
    } else
        *out = (u64)(int64_t)root_search(c, P, O, alpha, beta);
    return 0;
}

/* --- Python interface --------------------------------------------------------- */

/* A bitboard argument: an int in [0, 2**64). */
static int to_bitboard(PyObject *obj, const char *name, u64 *out)
{
    unsigned long long v;
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int bitboard, not %.100s", name,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    v = PyLong_AsUnsignedLongLong(obj);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) { /* negative, or 2**64 or more */
        PyObject *zero = PyLong_FromLong(0);
        int negative;
        PyErr_Clear();
        negative = zero ? PyObject_RichCompareBool(obj, zero, Py_LT) : -1;
        Py_XDECREF(zero);
        if (negative < 0)
            return -1;
        PyErr_Format(negative ? PyExc_ValueError : PyExc_OverflowError,
                     "%s must be a bitboard in [0, 2**64), not %s", name,
                     negative ? "negative" : "2**64 or more");
        return -1;
    }
    *out = v;
    return 0;
}

static int to_position(PyObject *po, PyObject *oo, u64 *P, u64 *O)
{
    if (to_bitboard(po, "player", P) < 0 || to_bitboard(oo, "opponent", O) < 0)
        return -1;
    if (*P & *O) {
        PyErr_SetString(PyExc_ValueError, "player and opponent bitboards overlap");
        return -1;
    }
    return 0;
}

/* The paths of move generation and flips, slowest first; this CPU runs the first n_paths of
 * them, and the last of those is used. */
static const char *PATH_NAMES[] = {"portable", "avx2", "avx512"};
#ifdef HAVE_AVX2_PATH
static u64 (*const MOVES_BY[])(u64, u64) = {get_moves_portable, get_moves_avx2, get_moves_avx2};
static u64 (*const FLIPS_BY[])(int, u64, u64) = {flips_portable, flips_avx2, flips_avx512};
#else
static u64 (*const MOVES_BY[])(u64, u64) = {get_moves_portable};
static u64 (*const FLIPS_BY[])(int, u64, u64) = {flips_portable};
#endif
static int n_paths = 1;

/* Selects the fastest paths this CPU runs (at import). */
static void choose_paths(void)
{
#ifdef HAVE_AVX2_PATH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        n_paths = 2;
        if (__builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd"))
            n_paths = 3;
    }
    get_moves = MOVES_BY[n_paths - 1];
    flips = FLIPS_BY[n_paths - 1];
#endif
}

/* The index of the path `name` if this CPU runs it, else -1 with ValueError set. */
static int path_arg(const char *name)
{
    for (int i = 0; i < n_paths; i++)
        if (strcmp(name, PATH_NAMES[i]) == 0)
            return i;
    PyErr_Format(PyExc_ValueError, "no path '%s' on this CPU (see _paths)", name);
    return -1;
}

static PyObject *moves_call(u64 (*moves)(u64, u64), PyObject *po, PyObject *oo)
{
    u64 P, O;
    if (to_position(po, oo, &P, &O) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(moves(P, O));
}

static PyObject *flips_call(u64 (*flip)(int, u64, u64), int sq, PyObject *po, PyObject *oo)
{
    u64 P, O;
    if (to_position(po, oo, &P, &O) < 0)
        return NULL;
    if (sq < 0 || sq > 63) {
        PyErr_Format(PyExc_ValueError, "square must be in 0..63, not %d", sq);
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(flip(sq, P, O));
}

static PyObject *py_legal_moves(PyObject *mod, PyObject *args)
{
    PyObject *po, *oo;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO:legal_moves", &po, &oo))
        return NULL;
    return moves_call(get_moves, po, oo);
}

static PyObject *py_moves_by(PyObject *mod, PyObject *args)
{
    PyObject *po, *oo;
    const char *name;
    int path;
    (void)mod;
    if (!PyArg_ParseTuple(args, "sOO:_moves_by", &name, &po, &oo) || (path = path_arg(name)) < 0)
        return NULL;
    return moves_call(MOVES_BY[path], po, oo);
}

static PyObject *py_flips(PyObject *mod, PyObject *args)
{
    PyObject *po, *oo;
    int sq;
    (void)mod;
    if (!PyArg_ParseTuple(args, "iOO:flips", &sq, &po, &oo))
        return NULL;
    return flips_call(flips, sq, po, oo);
}

static PyObject *py_flips_by(PyObject *mod, PyObject *args)
{
    PyObject *po, *oo;
    const char *name;
    int sq, path;
    (void)mod;
    if (!PyArg_ParseTuple(args, "siOO:_flips_by", &name, &sq, &po, &oo) || (path = path_arg(name)) < 0)
        return NULL;
    return flips_call(FLIPS_BY[path], sq, po, oo);
}

static PyObject *py_features(PyObject *mod, PyObject *args)
{
    PyObject *po, *oo, *out;
    int idx[N_FEATURES];
    u64 P, O;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO:_features", &po, &oo) || to_position(po, oo, &P, &O) < 0)
        return NULL;
    features(P, O, get_moves(P, O), idx);
    out = PyTuple_New(N_FEATURES);
    for (int i = 0; out && i < N_FEATURES; i++) {
        PyObject *v = PyLong_FromLong(idx[i]);
        if (!v) {
            Py_CLEAR(out);
            break;
        }
        PyTuple_SET_ITEM(out, i, v);
    }
    return out;
}

static PyObject *py_evaluate(PyObject *mod, PyObject *args)
{
    PyObject *po, *oo;
    u64 P, O;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO:_evaluate", &po, &oo) || to_position(po, oo, &P, &O) < 0)
        return NULL;
    return PyLong_FromLong(pattern_eval(P, O, get_moves(P, O)));
}

/* A zeroed table of `size` bytes. On Linux, from mmap, with transparent huge pages asked for
 * beyond its first 2 MiB (a large search touches the whole table at random: 4 KiB pages would
 * miss the TLB on nearly every probe; a small search stays in the first pages). */
static void *table_alloc(size_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    const size_t huge = (size_t)2 << 20;
    if (p == MAP_FAILED)
        return NULL;
    if (size > 2 * huge) {
        uintptr_t start = ((uintptr_t)p + 2 * huge - 1) & ~(uintptr_t)(huge - 1);
        madvise((void *)start, (uintptr_t)p + size - start, MADV_HUGEPAGE);
    }
    return p;
#else
    return calloc(size, 1);
#endif
}

static void table_free(void *p, size_t size)
{
    if (!p)
        return;
#if defined(__linux__) && defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
    munmap(p, size);
#else
    (void)size;
    free(p);
#endif
}

static PyObject *Solver_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"winner_takes_empties", "table_bits", "should_stop", NULL};
    PyObject *wte, *should_stop = Py_None;
    int bits = 22;
    SolverObject *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!|iO:Solver", kwlist, &PyBool_Type, &wte,
                                     &bits, &should_stop))
        return NULL;
    if (bits < 4 || bits > 30) {
        PyErr_Format(PyExc_ValueError, "table_bits must be in 4..30, not %d", bits);
        return NULL;
    }
    if (should_stop != Py_None && !PyCallable_Check(should_stop)) {
        PyErr_SetString(PyExc_TypeError, "should_stop must be a callable or None");
        return NULL;
    }
    self = (SolverObject *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->wte = wte == Py_True;
    self->bits = bits;
    self->used = bits < USED_MIN ? bits : USED_MIN;
    self->mask = (1ULL << self->used) - 1;
    self->should_stop = should_stop == Py_None ? NULL : Py_NewRef(should_stop);
    self->table = table_alloc(((size_t)1 << bits) * sizeof(Entry));
    self->lock = PyThread_allocate_lock();
    if (!self->table || !self->lock) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static int Solver_traverse(SolverObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->should_stop);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int Solver_clear_refs(SolverObject *self)
{
    Py_CLEAR(self->should_stop);
    return 0;
}

static void Solver_dealloc(SolverObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Solver_clear_refs(self);
    table_free(self->table, ((size_t)1 << self->bits) * sizeof(Entry));
    if (self->lock)
        PyThread_free_lock(self->lock);
    type->tp_free(self);
    Py_DECREF(type);
}

/* Take the object's lock without holding the GIL, waking to run signal handlers. A call
 * from should_stop() during this object's own search would wait forever: it is refused. */
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

/* The squares of a bitboard, rising, as a list of ints. */
static PyObject *squares_list(u64 b)
{
    PyObject *list = PyList_New(0);
    for (; list && b; b &= b - 1) {
        PyObject *sq = PyLong_FromLong(first_square(b));
        if (!sq || PyList_Append(list, sq) < 0) {
            Py_XDECREF(sq);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(sq);
    }
    return list;
}

/* One search on self's table, under its lock, with the GIL released while it runs: 0 with
 * run_search()'s result in *out, -1 with an exception set. */
static int run_locked(SolverObject *self, u64 P, u64 O, int alpha, int beta, int mode, u64 *out)
{
    int failed;
    Ctx c;
    if (lock_solver(self) < 0)
        return -1;
    if (self->used < self->bits) { /* a bigger search: use more of the table */
        int want = USED_MIN + (64 - popcount(P | O) - 12);
        if (want > self->used) {
            self->used = want < self->bits ? want : self->bits;
            self->mask = (1ULL << self->used) - 1;
        }
    }
    memset(&c, 0, sizeof c);
    c.table = self->table;
    c.mask = self->mask;
    c.wte = self->wte;
    c.next_poll = POLL_NODES;
    c.last_poll = now();
    c.should_stop = self->should_stop;
    Py_XINCREF(c.should_stop);
    c.owner = self;
    c.owner_nodes = self->nodes;
    c.date = ++self->date;
    c.thread = PyEval_SaveThread();
    failed = run_search(&c, P, O, alpha, beta, mode, out);
    if (!failed)
        PyEval_RestoreThread(c.thread);
    self->nodes = c.owner_nodes + c.nodes;
    Py_XDECREF(c.should_stop);
    unlock_solver(self);
    return failed ? -1 : 0;
}

static PyObject *Solver_search(SolverObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"player", "opponent", "alpha", "beta", NULL};
    PyObject *po, *oo;
    long alpha = -64, beta = 64;
    u64 P, O, out;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|ll:search", kwlist, &po, &oo, &alpha, &beta) ||
        to_position(po, oo, &P, &O) < 0)
        return NULL;
    if (alpha >= beta) {
        PyErr_Format(PyExc_ValueError, "empty window: alpha (%ld) must be below beta (%ld)", alpha,
                     beta);
        return NULL;
    }
    alpha = alpha < -INF ? -INF : alpha > INF ? INF : alpha;
    beta = beta < -INF ? -INF : beta > INF ? INF : beta;
    if (run_locked(self, P, O, (int)alpha, (int)beta, 0, &out) < 0)
        return NULL;
    return PyLong_FromLong((long)(int64_t)out);
}

static PyObject *Solver_optimal_moves(SolverObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"player", "opponent", "value", NULL};
    PyObject *po, *oo;
    long value;
    u64 P, O, out;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOl:optimal_moves", kwlist, &po, &oo, &value) ||
        to_position(po, oo, &P, &O) < 0)
        return NULL;
    if (value < -64 || value > 64) {
        PyErr_Format(PyExc_ValueError, "value must be in -64..64, not %ld", value);
        return NULL;
    }
    if (run_locked(self, P, O, (int)value, 0, 1, &out) < 0)
        return NULL;
    return squares_list(out);
}

static PyObject *Solver_solve(SolverObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"player", "opponent", NULL};
    PyObject *po, *oo, *list;
    u64 P, O, out[2];
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO:solve", kwlist, &po, &oo) ||
        to_position(po, oo, &P, &O) < 0)
        return NULL;
    if (run_locked(self, P, O, 0, 0, 2, out) < 0)
        return NULL;
    if (out[0] == ~0ULL)
        return Py_BuildValue("(lO)", (long)(int64_t)out[1], Py_None);
    list = squares_list(out[0]);
    return list ? Py_BuildValue("(lN)", (long)(int64_t)out[1], list) : NULL;
}

static PyObject *Solver_clear(SolverObject *self, PyObject *unused)
{
    (void)unused;
    if (lock_solver(self) < 0)
        return NULL;
    memset(self->table, 0, ((size_t)self->mask + 1) * sizeof(Entry)); /* the rest is unused */
    self->used = self->bits < USED_MIN ? self->bits : USED_MIN;
    self->mask = (1ULL << self->used) - 1;
    unlock_solver(self);
    Py_RETURN_NONE;
}

static PyObject *Solver_get_nodes(SolverObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(self->nodes);
}

static PyObject *Solver_get_wte(SolverObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->wte);
}

static PyObject *Solver_get_bits(SolverObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(self->bits);
}

static PyMethodDef Solver_methods[] = {
    {"search", (PyCFunction)(void (*)(void))Solver_search, METH_VARARGS | METH_KEYWORDS,
     "search(player, opponent, alpha=-64, beta=64) -> int\n\n"
     "Fail-soft negamax value of the position for the side to move (player) within\n"
     "(alpha, beta): a value strictly inside is exact, one <= alpha an upper bound, one >=\n"
     "beta a lower bound. Releases the GIL; raises KeyboardInterrupt (or whatever a signal\n"
     "handler raises) or Cancelled (should_stop() returned true) when abandoned."},
    {"optimal_moves", (PyCFunction)(void (*)(void))Solver_optimal_moves,
     METH_VARARGS | METH_KEYWORDS,
     "optimal_moves(player, opponent, value) -> list\n\n"
     "The legal moves of player (squares, rising) reaching value, the position's exact value\n"
     "(search() gives it): a null-window test on each child. Empty when player must pass.\n"
     "Releases the GIL and stops as search() does."},
    {"solve", (PyCFunction)(void (*)(void))Solver_solve, METH_VARARGS | METH_KEYWORDS,
     "solve(player, opponent) -> (int, list | None)\n\n"
     "The exact value of the position and every legal move of player reaching it (squares,\n"
     "rising; empty when player must pass), found in one search; None instead of the moves\n"
     "when the table knew the value already (optimal_moves() gives them). Releases the GIL\n"
     "and stops as search() does."},
    {"clear", (PyCFunction)Solver_clear, METH_NOARGS, "clear() -> None\n\nEmpty the table."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Solver_getset[] = {
    {"nodes", (getter)Solver_get_nodes, NULL, "nodes searched by this solver", NULL},
    {"winner_takes_empties", (getter)Solver_get_wte, NULL, "the scoring rule", NULL},
    {"table_bits", (getter)Solver_get_bits, NULL, "log2 of the table's entries", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot Solver_slots[] = {
    {Py_tp_doc,
     "Solver(winner_takes_empties: bool, table_bits: int = 22, should_stop=None)\n\n"
     "Exact endgame solver with its own transposition table (2**table_bits entries of 24\n"
     "bytes, kept across calls; a small search uses only its first few thousand).\n"
     "should_stop, if given, is called with no arguments about every 20 ms during a\n"
     "search; a true result abandons the search with Cancelled.\n"
     "Calls on one object are serialized by a lock; separate objects run in parallel."},
    {Py_tp_new, Solver_new},
    {Py_tp_dealloc, Solver_dealloc},
    {Py_tp_traverse, Solver_traverse},
    {Py_tp_clear, Solver_clear_refs},
    {Py_tp_methods, Solver_methods},
    {Py_tp_getset, Solver_getset},
    {0, NULL}};

static PyType_Spec Solver_spec = {"grader._othello_native.Solver", sizeof(SolverObject), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, Solver_slots};

static PyMethodDef module_methods[] = {
    {"legal_moves", py_legal_moves, METH_VARARGS,
     "legal_moves(player, opponent) -> int\n\nBitboard of the squares where player may move."},
    {"_moves_by", py_moves_by, METH_VARARGS,
     "_moves_by(path, player, opponent) -> int\n\nlegal_moves() by one of the paths in _paths."},
    {"_flips_by", py_flips_by, METH_VARARGS,
     "_flips_by(path, square, player, opponent) -> int\n\nflips() by one of the paths in _paths."},
    {"flips", py_flips, METH_VARARGS,
     "flips(square, player, opponent) -> int\n\n"
     "Discs of opponent flipped by player moving to square (0: not a legal move)."},
    {"_features", py_features, METH_VARARGS,
     "_features(player, opponent) -> tuple\n\n"
     "The evaluation's feature indices (for fitting its weights: bench/fit_eval.py)."},
    {"_evaluate", py_evaluate, METH_VARARGS,
     "_evaluate(player, opponent) -> int\n\nThe move-ordering evaluation, in quarter-discs."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "grader._othello_native",
    "Exact Othello endgame solver in C (optional; grader.native_solver wraps it).", -1,
    module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__othello_native(void)
{
    PyObject *m, *type, *paths;
    init_tables();
    choose_paths();
    m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    Cancelled = PyErr_NewExceptionWithDoc("grader._othello_native.Cancelled",
                                          "A search abandoned because should_stop() returned true.",
                                          NULL, NULL);
    type = PyType_FromSpec(&Solver_spec);
    paths = PyTuple_New(n_paths);
    for (int i = 0; paths && i < n_paths; i++) {
        PyObject *name = PyUnicode_FromString(PATH_NAMES[i]);
        if (!name)
            Py_CLEAR(paths);
        else
            PyTuple_SET_ITEM(paths, i, name);
    }
    if (!Cancelled || !type || !paths || PyModule_AddObjectRef(m, "Cancelled", Cancelled) < 0 ||
        PyModule_AddObjectRef(m, "Solver", type) < 0 || PyModule_AddObjectRef(m, "_paths", paths) < 0) {
        Py_XDECREF(type);
        Py_XDECREF(paths);
        Py_DECREF(m);
        return NULL;
    }
    Py_DECREF(type);
    Py_DECREF(paths);
    return m;
}
