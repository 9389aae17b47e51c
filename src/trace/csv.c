#include "csv.h"
#include "../config/yamlutil.h"

#include "gpusched/diag.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int split(struct csv *c)
{
    int n = 0;
    char *p = c->buf;
    for (;;) {
        if (n == CSV_COLS_MAX)
            return -1;
        c->field[n] = p;
        c->col[n] = (int)(p - c->buf) + 1;
        n++;
        char *comma = strchr(p, ',');
        if (!comma)
            break;
        *comma = '\0';
        p = comma + 1;
    }
    return n;
}

/*
 * Read one line into buf without its end of line, a byte at a time so that the cap holds and a
 * NUL byte is seen. Return: 1, 0 at end of file, -EINVAL (too long, NUL), -EIO.
 */
static int read_line(struct csv *c, struct gs_diag *d)
{
    size_t len = 0;
    int ch;
    while ((ch = getc(c->f)) != EOF && ch != '\n') {
        if (len == CSV_LINE_MAX - 1)
            return gs_diag_error(d, "%s:%lu:1: line longer than %d bytes", c->path, c->line + 1,
                                 CSV_LINE_MAX - 1);
        if (ch == '\0')
            return gs_diag_error(d, "%s:%lu:%zu: NUL byte in line", c->path, c->line + 1, len + 1);
        c->buf[len++] = (char)ch;
    }
    if (ch == EOF && ferror(c->f))
        return gs_diag_error(d, "%s: cannot read: %s", c->path, strerror(errno));
    if (ch == EOF && len == 0)
        return 0;
    c->line++;
    if (len && c->buf[len - 1] == '\r')
        len--;
    c->buf[len] = '\0';
    return 1;
}

int csv_open(struct csv *c, const char *path, struct gs_diag *d)
{
    struct stat sb;
    memset(c, 0, sizeof(*c));
    c->path = path;
    if (!*path)
        return gs_diag_error(d, "empty file name");
    c->f = fopen(path, "r");
    if (!c->f)
        return gs_diag_error_code(d, errno == ENOENT ? -ENOENT : -EIO, "%s: cannot open: %s", path,
                                  strerror(errno));
    if (fstat(fileno(c->f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        csv_close(c);
        return gs_diag_error(d, "%s: is a directory, expected a CSV file", path);
    }
    int rc = read_line(c, d);
    if (rc <= 0) {
        if (rc == 0)
            rc = gs_diag_error(d, "%s:1:1: empty file, expected a header line", path);
        csv_close(c);
        return rc;
    }
    c->ncols = split(c);
    if (c->ncols < 0) {
        csv_close(c);
        return gs_diag_error(d, "%s:1:1: more than %d columns", path, CSV_COLS_MAX);
    }
    if (strncmp(c->field[0], "\xef\xbb\xbf", 3) == 0) /* a UTF-8 byte-order mark */
        c->field[0] += 3;
    for (int i = 0; i < c->ncols; i++) {
        if (c->field[i][0] == '"' || strlen(c->field[i]) >= sizeof(c->header[i]) ||
            csv_find(c, c->field[i]) >= 0) {
            const char *why = c->field[i][0] == '"'           ? "quoted names are not supported"
                              : csv_find(c, c->field[i]) >= 0 ? "a duplicate column name"
                                                              : "a column name too long";
            int col = c->col[i];
            csv_close(c);
            return gs_diag_error(d, "%s:1:%d: %s", path, col, why);
        }
        snprintf(c->header[i], sizeof(c->header[i]), "%s", c->field[i]);
        c->ncols_named = i + 1;
    }
    return 0;
}

void csv_close(struct csv *c)
{
    if (c->f)
        fclose(c->f);
    c->f = NULL;
}

int csv_find(const struct csv *c, const char *name)
{
    for (int i = 0; i < c->ncols_named; i++)
        if (strcmp(c->header[i], name) == 0)
            return i;
    return -1;
}

int csv_need(const struct csv *c, const char *name, struct gs_diag *d)
{
    int i = csv_find(c, name);
    if (i < 0)
        return gs_diag_error(d, "%s:1:1: missing column \"%s\"", c->path, name);
    return i;
}

static int listed(const char *const *list, const char *name)
{
    for (; list && *list; list++)
        if (strcmp(*list, name) == 0)
            return 1;
    return 0;
}

/* Append the first @n names of @list (n < 0: up to its NULL) to @buf as ", a, b". */
static void list_names(char *buf, size_t cap, const char *const *list, int n)
{
    for (int i = 0; list && (n < 0 ? list[i] != NULL : i < n); i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", list[i]);
    }
}

int csv_columns(const struct csv *c, const char *const *need, int n, const char *const *optional,
                const char *const *unread, int *col, struct gs_diag *d)
{
    /* an unknown column first: it is most often the misspelling of the one found missing */
    for (int i = 0; i < c->ncols_named; i++) {
        const char *h = c->header[i];
        int known = listed(optional, h) || listed(unread, h);
        for (int k = 0; k < n && !known; k++)
            known = strcmp(need[k], h) == 0;
        if (known)
            continue;
        int near = gs__nearest(h, need, n); /* a needed column the header lacks, misspelt */
        if (near >= 0 && csv_find(c, need[near]) < 0)
            return gs_diag_error(d, "%s:1:%d: unknown column \"%s\" (did you mean \"%s\"?)",
                                 c->path, c->col[i], h, need[near]);
        char names[1024] = "";
        list_names(names, sizeof(names), need, n);
        list_names(names, sizeof(names), optional, -1);
        list_names(names, sizeof(names), unread, -1);
        return gs_diag_error(d, "%s:1:%d: unknown column \"%s\" (the format's columns: %s)",
                             c->path, c->col[i], h, names);
    }
    for (int i = 0; i < n; i++)
        if ((col[i] = csv_need(c, need[i], d)) < 0)
            return col[i];
    for (int i = 0; optional && optional[i]; i++)
        col[n + i] = csv_find(c, optional[i]);
    return 0;
}

int csv_next(struct csv *c, struct gs_diag *d)
{
    for (;;) {
        int rc = read_line(c, d);
        if (rc <= 0)
            return rc;
        if (c->buf[0] == '\0')
            continue; /* a blank line carries no record */
        if (c->line > CSV_ROWS_MAX)
            return gs_diag_error(d, "%s:%lu:1: more than %d rows", c->path, c->line, CSV_ROWS_MAX);
        int n = split(c);
        for (int i = 0; i < n; i++)
            if (strchr(c->field[i], '"')) /* "a,b" would read as two fields */
                return gs_diag_error(d,
                                     "%s:%lu:%d: a quote: quoted fields are not supported (plain "
                                     "comma-separated values)",
                                     c->path, c->line, c->col[i]);
        if (n != c->ncols)
            return gs_diag_error(d, "%s:%lu:1: %d columns, the header has %d", c->path, c->line,
                                 n < 0 ? CSV_COLS_MAX + 1 : n, c->ncols);
        c->rows++;
        return 1;
    }
}

int csv_error(const struct csv *c, int i, struct gs_diag *d, const char *fmt, ...)
{
    char msg[GS_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* the message escapes what the field holds, as every message does (gs_text_escape()) */
    return gs_diag_error(d, "%s:%lu:%d: %s: %s", c->path, c->line, c->col[i], c->header[i], msg);
}

int csv_real(struct csv *c, int i, const char *what, double *out, struct gs_diag *d)
{
    const char *s = c->field[i];
    char *end;
    double v = 0;
    /* decimal only: strtod() alone would also take "0x10", "inf", " 5" and "+5" */
    int ok = (*s == '-' || *s == '.' || (*s >= '0' && *s <= '9')) &&
             strspn(s, "0123456789.eE+-") == strlen(s);
    if (ok) {
        errno = 0;
        v = strtod(s, &end);
        ok = *end == '\0' && !errno && isfinite(v);
    }
    if (!ok)
        return csv_error(c, i, d, "\"%s\" is not %s", s, what);
    *out = v;
    return 0;
}

int csv_uint(struct csv *c, int i, int64_t max, int64_t *out, struct gs_diag *d)
{
    const char *s = c->field[i];
    int64_t v = 0;
    if (*s == '-')
        return csv_error(c, i, d, "\"%s\" is negative", s);
    if (!*s)
        return csv_error(c, i, d, "empty, expected a number");
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return csv_error(c, i, d, "\"%s\" is not a whole number", s);
        if (v > (max - (*p - '0')) / 10) /* v * 10 + digit > max, without overflow */
            return csv_error(c, i, d, "%s exceeds %lld", s, (long long)max);
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return 0;
}
