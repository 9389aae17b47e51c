/* `nvidia-smi topo -m` text -> topology tree. What is read and refused: gpusched/topotext.h. */
#include "gpusched/topotext.h"

#include "gpusched/diag.h"
#include "gpusched/topo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TOK_MAX  (GS_TOPO_CPUS_MAX)
#define TOKS_MAX (GS_GPUS_MAX + GS_TOPO_NICS_MAX + 8) /* device cells and affinity columns */

/* One whitespace-separated word of a line, ANSI escapes taken out, and where it starts. */
struct tok {
    char s[TOK_MAX];
    int col; /* 1-based byte column of its first byte in the raw line */
};

struct line {
    const char *p;
    size_t len;
    int no; /* 1-based */
    struct tok t[TOKS_MAX];
    int n;
    int overflow; /* 1: more words than TOKS_MAX; 2: a word longer than TOK_MAX - 1 */
    int over_col;
};

enum aff { AFF_CPU, AFF_NUMA, AFF_GPU_NUMA };

struct parser {
    const char *path;
    struct gs_diag *d;
    struct gs_topo *t;
    int ndev;                         /* device columns: GPUs then NICs, in header order */
    int dev_gpu[TOKS_MAX];            /* per device column: GPU index, or -1 - NIC index */
    int naff, aff[3];                 /* affinity columns in header order */
    int row_seen[TOKS_MAX];           /* per device column: its row was read */
    uint8_t cell[TOKS_MAX][TOKS_MAX]; /* cell[row dev][col dev], 0 = not read */
    uint8_t nv[TOKS_MAX][TOKS_MAX];
    char nic_col[GS_TOPO_NICS_MAX][GS_TOPO_NAME_MAX]; /* NIC columns as the header names them */
    int legend_line[GS_TOPO_NICS_MAX];                /* line of the NIC's legend entry, 0 none */
    int cell_line[TOKS_MAX][TOKS_MAX], cell_col[TOKS_MAX][TOKS_MAX];
};

static int err(struct parser *P, int line, int col, const char *fmt, const char *a, const char *b)
{
    char what[2 * TOK_MAX + 256]; /* two words and the text: the message keeps what it can */
    snprintf(what, sizeof(what), fmt, a, b);
    return gs_diag_error(P->d, "%s:%d:%d: %s", P->path, line, col, what);
}

/* Skips the ANSI escape at @p (ESC [ params final, or ESC and one byte); returns bytes taken. */
static size_t escape_len(const char *p, size_t left)
{
    size_t k = 1;
    if (left > 1 && p[1] == '[') {
        k = 2;
        while (k < left && !(p[k] >= 0x40 && p[k] <= 0x7e))
            k++;
        return k < left ? k + 1 : k;
    }
    return left > 1 ? 2 : 1;
}

static void tokenize(struct line *L)
{
    L->n = 0;
    L->overflow = 0;
    size_t i = 0;
    while (i < L->len) {
        char ch = L->p[i];
        if (ch == '\x1b') {
            i += escape_len(L->p + i, L->len - i);
            continue;
        }
        if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f') {
            i++;
            continue;
        }
        if (L->n == TOKS_MAX) {
            L->overflow = 1;
            L->over_col = (int)i + 1;
            return;
        }
        struct tok *t = &L->t[L->n++];
        size_t k = 0;
        t->col = (int)i + 1;
        while (i < L->len && L->p[i] != ' ' && L->p[i] != '\t' && L->p[i] != '\r') {
            if (L->p[i] == '\x1b') {
                i += escape_len(L->p + i, L->len - i);
                continue;
            }
            if (k + 1 >= TOK_MAX) {
                L->overflow = 2;
                L->over_col = t->col;
                return;
            }
            t->s[k++] = L->p[i++];
        }
        t->s[k] = '\0';
        if (k == 0) /* an escape alone */
            L->n--;
    }
}

/* "GPU12" -> 12, past GS_GPUS_MAX held at 1000 (a GPU column still, refused as one); -1 when
 * @s is not GPU<digits>. */
static int gpu_name(const char *s)
{
    if (strncmp(s, "GPU", 3) != 0 || !s[3])
        return -1;
    int v = 0;
    for (const char *p = s + 3; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v > 100 ? 1000 : v * 10 + (*p - '0');
    }
    return v;
}

static int is_word(const struct line *L, int i, const char *w)
{
    return i < L->n && strcmp(L->t[i].s, w) == 0;
}

/* A NIC column name: NIC<digits>, or a device name as nvidia-smi prints it (mlx5_0, ib0). */
static int nic_name_ok(const char *s)
{
    if (!*s || strlen(s) >= GS_TOPO_NAME_MAX)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-' || *p == '.' || *p == ':'))
            return 0;
    return 1;
}

/*
 * One affinity column of the header at @k. Each kind comes once, so at most the three of aff[]:
 * a repeat is refused before it is written, as a second copy would overwrite the first's values.
 */
static int add_aff(struct parser *P, const struct line *L, const struct tok *k, enum aff kind)
{
    static const char *const names[] = {"CPU Affinity", "NUMA Affinity", "GPU NUMA ID"};
    for (int a = 0; a < P->naff; a++)
        if (P->aff[a] == (int)kind)
            return err(P, L->no, k->col, "header: a second \"%s\" column%s", names[kind], "");
    if (P->naff == (int)(sizeof(P->aff) / sizeof(P->aff[0])))
        return err(P, L->no, k->col, "header: a fourth affinity column%s%s", "", "");
    P->aff[P->naff++] = kind;
    return 0;
}

/* A NIC column named @k: a new name, so that each row and legend entry names one column. */
static int add_nic(struct parser *P, const struct line *L, const struct tok *k)
{
    struct gs_topo *t = P->t;
    if (t->nnics == GS_TOPO_NICS_MAX)
        return err(P, L->no, k->col, "header: %s: more than 32 NICs%s", k->s, "");
    for (int i = 0; i < t->nnics; i++)
        if (strcmp(t->nic[i], k->s) == 0)
            return err(P, L->no, k->col, "header: NIC %s named twice%s", k->s, "");
    memcpy(t->nic[t->nnics], k->s, strlen(k->s) + 1); /* < GS_TOPO_NAME_MAX bytes */
    memcpy(P->nic_col[t->nnics], k->s, strlen(k->s) + 1);
    P->dev_gpu[P->ndev++] = -1 - t->nnics++;
    return 0;
}

static int header(struct parser *P, const struct line *L)
{
    struct gs_topo *t = P->t;
    for (int i = 0; i < L->n; i++) {
        const struct tok *k = &L->t[i];
        int rc = 0;
        if (is_word(L, i, "CPU") && is_word(L, i + 1, "Affinity")) {
            rc = add_aff(P, L, k, AFF_CPU);
            i++;
        } else if (is_word(L, i, "NUMA") && is_word(L, i + 1, "Affinity")) {
            rc = add_aff(P, L, k, AFF_NUMA);
            i++;
        } else if (is_word(L, i, "GPU") && is_word(L, i + 1, "NUMA") && is_word(L, i + 2, "ID")) {
            rc = add_aff(P, L, k, AFF_GPU_NUMA);
            i += 2;
        } else if (P->naff > 0) {
            return err(P, L->no, k->col, "header: \"%s\" after the affinity columns%s", k->s, "");
        } else if (gpu_name(k->s) >= 0) {
            if (gpu_name(k->s) >= GS_GPUS_MAX || t->ngpus == GS_GPUS_MAX)
                return err(P, L->no, k->col, "header: %s: more GPUs than the 16 a node holds%s",
                           k->s, "");
            if (gpu_name(k->s) != t->ngpus || t->nnics > 0)
                return err(P, L->no, k->col,
                           "header: %s out of order (GPU columns come first, "
                           "GPU0, GPU1, ...)%s",
                           k->s, "");
            P->dev_gpu[P->ndev++] = t->ngpus++;
        } else if (nic_name_ok(k->s)) {
            rc = add_nic(P, L, k);
        } else {
            return err(P, L->no, k->col, "header: \"%s\" is not a device column%s", k->s, "");
        }
        if (rc)
            return rc;
    }
    if (P->naff > 0 && P->aff[0] != AFF_CPU)
        return err(P, L->no, 1, "header: affinity columns out of order%s%s", "", "");
    return 0;
}

/* A matrix cell: its class (and NVLink count in @nv); 0 when @s is no cell. */
static int cell_of(const char *s, uint8_t *nv)
{
    static const struct {
        const char *s;
        enum gs_link l;
    } names[] = {{"X", GS_LINK_SELF},    {"SYS", GS_LINK_SYS}, {"SOC", GS_LINK_SYS},
                 {"NODE", GS_LINK_NODE}, {"PHB", GS_LINK_PHB}, {"PXB", GS_LINK_PXB},
                 {"PIX", GS_LINK_PIX}};
    *nv = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(s, names[i].s) == 0)
            return names[i].l;
    if (strncmp(s, "NV", 2) != 0 || !s[2] || strlen(s) > 4)
        return 0;
    int v = 0;
    for (const char *p = s + 2; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        v = v * 10 + (*p - '0');
    }
    if (v < 1)
        return 0;
    *nv = (uint8_t)v;
    return GS_LINK_NV;
}

/*
 * A CPU or NUMA list as the kernel prints it: "0-11,24-35", "3", "6-7"; its lowest number, and its
 * highest into @highest when not NULL. Return: 0; -1 when @s is no such list.
 */
static int id_list(const char *s, int *lowest, int *highest)
{
    int low = -1, high = -1;
    const char *p = s;
    while (*p) {
        long a = 0, b;
        int digits = 0;
        for (; *p >= '0' && *p <= '9' && digits < 7; p++, digits++)
            a = a * 10 + (*p - '0');
        if (!digits)
            return -1;
        b = a;
        if (*p == '-') {
            p++;
            b = 0;
            for (digits = 0; *p >= '0' && *p <= '9' && digits < 7; p++, digits++)
                b = b * 10 + (*p - '0');
            if (!digits || b < a)
                return -1;
        }
        if (low < 0 || a < low)
            low = (int)a;
        if (b > high)
            high = (int)b;
        if (*p == ',' && p[1])
            p++;
        else if (*p)
            return -1;
    }
    if (low < 0)
        return -1;
    *lowest = low;
    if (highest)
        *highest = high;
    return 0;
}

/* A NUMA node past what Linux can number (GS_TOPO_NUMA_MAX): no machine prints one. */
static int numa_over(struct parser *P, const struct line *L, const struct tok *k, const char *col)
{
    char what[TOK_MAX + 64];
    snprintf(what, sizeof(what), "%s \"%s\": a NUMA node past %d", col, k->s, GS_TOPO_NUMA_MAX - 1);
    return err(P, L->no, k->col, "%s%s", what, "");
}

static int affinity(struct parser *P, const struct line *L, int i, enum aff kind, int g)
{
    const struct tok *k = &L->t[i];
    struct gs_topo_gpu *gpu = &P->t->gpu[g];
    int low;
    if (strcmp(k->s, "N/A") == 0)
        return 0;
    if (kind == AFF_GPU_NUMA) {
        if (id_list(k->s, &low, NULL) || strchr(k->s, ',') || strchr(k->s, '-'))
            return err(P, L->no, k->col, "GPU NUMA ID \"%s\" is neither a number nor N/A%s", k->s,
                       "");
        if (low >= GS_TOPO_NUMA_MAX)
            return numa_over(P, L, k, "GPU NUMA ID");
        gpu->gpu_numa = low;
        return 0;
    }
    int high;
    if (id_list(k->s, &low, &high))
        return err(P, L->no, k->col, "%s \"%s\" is not a list like 0-11,24-35",
                   kind == AFF_CPU ? "CPU Affinity" : "NUMA Affinity", k->s);
    if (kind == AFF_NUMA && high >= GS_TOPO_NUMA_MAX)
        return numa_over(P, L, k, "NUMA Affinity");
    if (kind == AFF_CPU) {
        snprintf(gpu->cpus, sizeof(gpu->cpus), "%s", k->s);
    } else {
        snprintf(gpu->numa_list, sizeof(gpu->numa_list), "%s", k->s);
        gpu->numa = low;
    }
    return 0;
}

/* The device column whose row @L is, -1 when its first word names none. */
static int row_dev(const struct parser *P, const struct line *L)
{
    int g = gpu_name(L->t[0].s);
    for (int c = 0; c < P->ndev; c++)
        if (P->dev_gpu[c] >= 0 ? P->dev_gpu[c] == g
                               : strcmp(P->t->nic[-1 - P->dev_gpu[c]], L->t[0].s) == 0)
            return c;
    return -1;
}

static int row(struct parser *P, const struct line *L, int *next_gpu)
{
    int r = row_dev(P, L);
    if (r < 0)
        return err(P, L->no, L->t[0].col, "row \"%s\" names no device of the header%s", L->t[0].s,
                   "");
    int g = P->dev_gpu[r];
    if (P->row_seen[r])
        return err(P, L->no, L->t[0].col, "row %s appears twice%s", L->t[0].s, "");
    if (g >= 0 && g != *next_gpu)
        return err(P, L->no, L->t[0].col,
                   "row %s out of order (GPU rows come first, in "
                   "order)%s",
                   L->t[0].s, "");
    int cells = L->n - 1, end = L->n > 1 ? L->t[L->n - 1].col + (int)strlen(L->t[L->n - 1].s)
                                         : L->t[0].col + (int)strlen(L->t[0].s);
    int want_aff = g >= 0 ? P->naff : 0;
    if (cells < P->ndev ||
        (cells != P->ndev + want_aff && !(g < 0 && cells == P->ndev + P->naff))) {
        char got[64];
        snprintf(got, sizeof(got), "%d fields; the header asks %d", cells, P->ndev + want_aff);
        return err(P, L->no, end, "row %s has %s", L->t[0].s, got);
    }
    for (int c = 0; c < P->ndev; c++) {
        const struct tok *k = &L->t[1 + c];
        int l = cell_of(k->s, &P->nv[r][c]);
        if (!l)
            return err(P, L->no, k->col,
                       "\"%s\" is not a link (X, SYS, NODE, PHB, PXB, PIX, "
                       "NV#)%s",
                       k->s, "");
        if ((l == GS_LINK_SELF) != (c == r))
            return err(P, L->no, k->col,
                       c == r ? "row %s: its own column must be X, not %s"
                              : "row %s: X off the diagonal%s",
                       L->t[0].s, c == r ? k->s : "");
        if (l == GS_LINK_NV && P->nv[r][c] > GS_TOPO_NVLINK_MAX) { /* gpuschedd refused it */
            char max[8];
            snprintf(max, sizeof(max), "%d", GS_TOPO_NVLINK_MAX);
            return err(P, L->no, k->col, "%s: more NVLinks than the %s a card has", k->s, max);
        }
        if (l == GS_LINK_NV && (g < 0 || P->dev_gpu[c] < 0))
            return err(P, L->no, k->col, "%s: NVLink to a NIC%s", k->s, "");
        P->cell[r][c] = (uint8_t)l;
        P->cell_line[r][c] = L->no;
        P->cell_col[r][c] = k->col;
    }
    for (int a = 0; g >= 0 && a < P->naff; a++) {
        int rc = affinity(P, L, 1 + P->ndev + a, P->aff[a], g);
        if (rc)
            return rc;
    }
    P->row_seen[r] = 1;
    if (g >= 0)
        (*next_gpu)++;
    return 0;
}

/* Both ends of every pair read alike; fill @t's matrices from the cells. */
static int check_and_fill(struct parser *P)
{
    struct gs_topo *t = P->t;
    for (int r = 0; r < P->ndev; r++)
        for (int c = 0; c < P->ndev; c++) {
            if (!P->row_seen[r] || !P->row_seen[c] || r >= c)
                continue;
            if (P->cell[r][c] != P->cell[c][r] || P->nv[r][c] != P->nv[c][r]) {
                char what[160];
                snprintf(what, sizeof(what),
                         "%s%.0d, but the other end (line %d, column %d) reads %s%.0d",
                         gs_link_name(P->cell[c][r]), P->nv[c][r], P->cell_line[r][c],
                         P->cell_col[r][c], gs_link_name(P->cell[r][c]), P->nv[r][c]);
                return err(P, P->cell_line[c][r], P->cell_col[c][r], "pair reads %s%s", what, "");
            }
        }
    for (int r = 0; r < P->ndev; r++) {
        if (!P->row_seen[r])
            continue;
        for (int c = 0; c < P->ndev; c++) {
            int a = P->dev_gpu[r], b = P->dev_gpu[c];
            if (a >= 0 && b >= 0) {
                t->link[a][b] = P->cell[r][c];
                t->nvlinks[a][b] = P->nv[r][c];
            } else if (a >= 0 && b < 0) {
                t->nic_link[-1 - b][a] = P->cell[r][c];
            }
        }
    }
    return 0;
}

/*
 * A "NIC Legend" entry "NIC0: mlx5_0" renames the header's column NIC0. One entry per column,
 * naming a column the header has, to a name no other NIC has: rows and the tree name NICs by it.
 */
static int nic_legend(struct parser *P, const struct line *L)
{
    const struct tok *k = &L->t[0], *v = &L->t[1];
    size_t n = strlen(k->s);
    if (L->n == 1 && n >= 5 && k->s[n - 1] == ':' && strncmp(k->s, "NIC", 3) == 0)
        return err(P, L->no, k->col + (int)n, "NIC Legend: %s names no device%s", k->s,
                   ""); /* the column would keep its NICn name unsaid */
    if (L->n != 2 || n < 5 || k->s[n - 1] != ':' || strncmp(k->s, "NIC", 3) != 0)
        return 0;
    char col[TOK_MAX], first[32];
    snprintf(col, sizeof(col), "%.*s", (int)n - 1, k->s);
    int c = 0;
    while (c < P->t->nnics && strcmp(P->nic_col[c], col) != 0)
        c++;
    if (c == P->t->nnics)
        return err(P, L->no, k->col, "NIC Legend: %s is no NIC column of the header%s", col, "");
    if (P->legend_line[c]) {
        snprintf(first, sizeof(first), "%d", P->legend_line[c]);
        return err(P, L->no, k->col, "NIC Legend: a second entry for %s (the first is on line %s)",
                   col, first);
    }
    if (!nic_name_ok(v->s))
        return err(P, L->no, v->col, "NIC Legend: \"%s\" is not a device name%s", v->s, "");
    for (int i = 0; i < P->t->nnics; i++)
        if (i != c && strcmp(P->t->nic[i], v->s) == 0)
            return err(P, L->no, v->col, "NIC Legend: %s names two NICs%s", v->s, "");
    memcpy(P->t->nic[c], v->s, strlen(v->s) + 1);
    P->legend_line[c] = L->no;
    return 0;
}

/* Walks the lines of @buf: before the header, the matrix, then what follows. */
static int parse(struct parser *P, const char *buf, size_t len)
{
    enum { BEFORE, MATRIX, AFTER } state = BEFORE;
    struct line *L = malloc(sizeof(*L));
    int rc = 0, next_gpu = 0, in_nic_legend = 0, last_line = 0;
    if (!L)
        return gs_diag_error_code(P->d, -ENOMEM, "%s: out of memory", P->path);
    size_t pos = 0;
    for (int no = 1; !rc && pos < len; no++) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        L->p = buf + pos;
        L->len = nl ? (size_t)(nl - L->p) : len - pos;
        L->no = last_line = no;
        pos += L->len + (nl ? 1 : 0);
        const char *nul = memchr(L->p, '\0', L->len);
        if (nul) { /* text has none; the words after it would be lost to C strings */
            rc = err(P, no, (int)(nul - L->p) + 1, "a NUL byte: not text%s%s", "", "");
            break;
        }
        tokenize(L);
        if (L->overflow) {
            char most[16];
            snprintf(most, sizeof(most), "%d", L->overflow == 1 ? TOKS_MAX : TOK_MAX - 1);
            rc = err(P, no, L->over_col,
                     L->overflow == 1 ? "more than %s words: too many for a topology matrix%s"
                                      : "a word longer than %s bytes: too long for a topology "
                                        "matrix%s",
                     most, "");
            break;
        }
        if (state == BEFORE) {
            if (L->n > 0 && gpu_name(L->t[0].s) >= 0 && (rc = header(P, L)) == 0)
                state = MATRIX;
        } else if (state == MATRIX) {
            if (L->n == 0 || strcmp(L->t[0].s, "Legend:") == 0)
                state = AFTER;
            else
                rc = row(P, L, &next_gpu);
        } else if (L->n > 0) {
            if (strcmp(L->t[0].s, "NIC") == 0 && is_word(L, 1, "Legend:"))
                in_nic_legend = 1;
            else if (strcmp(L->t[0].s, "Legend:") == 0 || strcmp(L->t[0].s, "GPU0") == 0)
                in_nic_legend = 0;
            else if (in_nic_legend)
                rc = nic_legend(P, L);
        }
    }
    free(L);
    if (rc)
        return rc;
    if (state == BEFORE)
        return gs_diag_error(P->d,
                             "%s:1:1: no `nvidia-smi topo -m` matrix (a header row starting "
                             "with GPU0)",
                             P->path);
    if (next_gpu < P->t->ngpus)
        return gs_diag_error(P->d, "%s:%d:1: the matrix ends before the row of GPU%d", P->path,
                             last_line, next_gpu);
    return check_and_fill(P);
}

int gs_topo_parse_text(const char *path, const char *buf, size_t len, struct gs_topo *out,
                       struct gs_diag *d)
{
    if (len > GS_TOPOTEXT_MAX_BYTES)
        return gs_diag_error_code(d, -E2BIG, "%s: %zu bytes; a topology matrix is at most %zu",
                                  path, len, GS_TOPOTEXT_MAX_BYTES);
    struct parser *P = calloc(1, sizeof(*P));
    if (!P)
        return gs_diag_error_code(d, -ENOMEM, "%s: out of memory", path);
    P->path = path;
    P->d = d;
    P->t = out;
    gs_topo_init(out);
    if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) { /* a UTF-8 byte-order mark, as an
                                                            * editor may save the text */
        buf += 3;
        len -= 3;
    }
    int rc = parse(P, buf, len);
    free(P);
    if (!rc)
        gs_topo_derive(out);
    return rc;
}

int gs_topo_load(const char *path, struct gs_topo *out, struct gs_diag *d)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    struct stat sb;
    if (!f)
        return gs_diag_error_code(d, -errno, "%s: %s", path, strerror(errno));
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) { /* bad input, not an I/O failure */
        fclose(f);
        return gs_diag_error(d, "%s: a directory, not a file", path);
    }
    char *buf = malloc(GS_TOPOTEXT_MAX_BYTES + 1);
    size_t n = buf ? fread(buf, 1, GS_TOPOTEXT_MAX_BYTES + 1, f) : 0;
    int bad = buf && ferror(f);
    if (f != stdin)
        fclose(f);
    int rc;
    if (!buf)
        rc = gs_diag_error_code(d, -ENOMEM, "%s: out of memory", path);
    else if (bad)
        rc = gs_diag_error_code(d, -EIO, "%s: read error", path);
    else
        rc = gs_topo_parse_text(path, buf, n, out, d);
    free(buf);
    return rc;
}
