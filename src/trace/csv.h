/* A strict reader of plain comma-separated files (no quoting), for the trace formats. */
#ifndef GS_CSV_H
#define GS_CSV_H

#include <stdint.h>
#include <stdio.h>

#define CSV_LINE_MAX 4096
#define CSV_COLS_MAX 64
#define CSV_ROWS_MAX 10000000

struct gs_diag;

struct csv {
    FILE *f;
    const char *path;
    unsigned long line;
    char buf[CSV_LINE_MAX];
    int ncols;                 /* columns of the header */
    int ncols_named;           /* header names checked so far */
    unsigned long rows;        /* data rows read */
    char *field[CSV_COLS_MAX]; /* fields of the current row */
    int col[CSV_COLS_MAX];     /* 1-based byte column of each field */
    char header[CSV_COLS_MAX][48];
};

/* Open @path and read its header. Return: 0; -ENOENT/-EIO/-EINVAL with @d set. */
int csv_open(struct csv *c, const char *path, struct gs_diag *d);
void csv_close(struct csv *c);

/* The header column named @name, or -1; csv_need() sets @d when it is missing. */
int csv_find(const struct csv *c, const char *name);
int csv_need(const struct csv *c, const char *name, struct gs_diag *d);

/*
 * csv_columns() - find the @n columns @need into @col[0..n-1] (-1 for a name in @optional that
 * the header lacks: @col holds @n + the count of @optional entries), and refuse a header column
 * named neither there nor in @unread. @optional and @unread are NULL-terminated lists or NULL:
 * the optional columns this reader uses, and the format's columns it does not use (documented as
 * unread). A column in none of them would be data taken in and never read, so it is refused.
 * Return: 0; -EINVAL with @d ("path:1:col: ...").
 */
int csv_columns(const struct csv *c, const char *const *need, int n, const char *const *optional,
                const char *const *unread, int *col, struct gs_diag *d);

/* Next row. Return: 1 row read; 0 at end of file; -EINVAL with @d (wrong column count, long line,
 * a '"' in a field: quoting is not read, so "a,b" would split). */
int csv_next(struct csv *c, struct gs_diag *d);

/* Parse column @i of the current row as an integer in [0, max]. Return: 0; -EINVAL with @d. */
int csv_uint(struct csv *c, int i, int64_t max, int64_t *out, struct gs_diag *d);

/* Parse column @i of the current row as a finite decimal number ("12", "-0.5", "1e3"), into
 * *@out; @what names what was expected ("a number of seconds"). Return: 0; -EINVAL with @d. */
int csv_real(struct csv *c, int i, const char *what, double *out, struct gs_diag *d);

/* Column @i of the current row as the trace's gpu_spec: GPU models by catalog name or alias
 * between bars ("V100M16|V100M32"), "" or "nan" for any; *@mask a bit per catalog model (0:
 * any). Return: 0; -EINVAL with @d (an empty or unknown name). In alibaba.c, the format's own. */
int csv_gpu_spec(struct csv *c, int i, uint32_t *mask, struct gs_diag *d);

/* Report an error about column @i of the current row: "path:line:col: <column>: ...". */
int csv_error(const struct csv *c, int i, struct gs_diag *d, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
