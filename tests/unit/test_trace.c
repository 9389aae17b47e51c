/*
 * Trace readers: node lists, pod lists and arrival sequences of the Alibaba GPU trace format.
 * Good input is read with its values; every bad input is refused with the file:line:column of the
 * problem and the column's name. Small CSV files are written to a fresh directory under /tmp.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/diag.h"
#include "gpusched/trace.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NODES_HEADER "sn,cpu_milli,memory_mib,gpu,model\n"
#define PODS_HEADER  "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"

static char tmpdir[64];

static int setup_dir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/gs_test_trace.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    DIR *dir = opendir(tmpdir);
    if (!dir)
        return -1;
    struct dirent *e;
    char path[512];
    while ((e = readdir(dir)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", tmpdir, e->d_name);
        unlink(path);
    }
    closedir(dir);
    return rmdir(tmpdir);
}

/* Write @len bytes of @text to @name in the temporary directory; @path gets the file's path. */
static void write_bytes(const char *name, const char *text, size_t len, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void write_text(const char *name, const char *text, char *path, size_t cap)
{
    write_bytes(name, text, strlen(text), path, cap);
}

/* The error text holds the expected piece (printf-style) and is one line. */
static void expect_msg(const struct gs_diag *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void expect_msg(const struct gs_diag *d, const char *fmt, ...)
{
    char want[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(want, sizeof(want), fmt, ap);
    va_end(ap);
    if (!strstr(d->msg, want)) {
        print_error("expected the message to contain\n  \"%s\"\nbut it is\n  \"%s\"\n", want,
                    d->msg);
        fail();
    }
    assert_null(strchr(d->msg, '\n'));
}

static int model(const char *name)
{
    int m = gs_catalog_find(name, -1);
    assert_true(m >= 0);
    return m;
}

/* Read @text as a node list that must be refused with -EINVAL and a message with @want. */
static void nodes_refused(const char *text, const char *want_fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void nodes_refused(const char *text, const char *want_fmt, ...)
{
    char path[256], want[1024];
    struct gs_trace_node *v = NULL;
    size_t n = 0;
    struct gs_diag d;
    gs_diag_init(&d);
    write_text("bad_nodes.csv", text, path, sizeof(path));
    va_list ap;
    va_start(ap, want_fmt);
    vsnprintf(want, sizeof(want), want_fmt, ap);
    va_end(ap);
    int rc = gs_trace_read_nodes(path, &v, &n, &d);
    if (rc != -EINVAL)
        print_error("rc %d, message \"%s\"\n", rc, d.msg);
    assert_int_equal(rc, -EINVAL);
    expect_msg(&d, "%s%s", path, want);
}

static void pods_refused(const char *text, const char *want_fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void pods_refused(const char *text, const char *want_fmt, ...)
{
    char path[256], want[1024];
    struct gs_trace_pod *v = NULL;
    size_t n = 0;
    struct gs_diag d;
    gs_diag_init(&d);
    write_text("bad_pods.csv", text, path, sizeof(path));
    va_list ap;
    va_start(ap, want_fmt);
    vsnprintf(want, sizeof(want), want_fmt, ap);
    va_end(ap);
    int rc = gs_trace_read_pods(path, &v, &n, &d);
    if (rc != -EINVAL)
        print_error("rc %d, message \"%s\"\n", rc, d.msg);
    assert_int_equal(rc, -EINVAL);
    expect_msg(&d, "%s%s", path, want);
}

static void test_nodes_good(void **state)
{
    (void)state;
    char path[256];
    struct gs_trace_node *v = NULL;
    size_t n = 0;
    struct gs_diag d;
    gs_diag_init(&d);
    /* CRLF endings, blank lines (LF and CRLF), a last line without an end of line */
    write_text("nodes.csv",
               "sn,cpu_milli,memory_mib,gpu,model\r\n"
               "n1,64000,262144,2,P100\r\n"
               "\r\n"
               "n2,32000,131072,0,\r\n"
               "\n"
               "n3,96000,393216,8,G2\r\n"
               "n4,8000,16384,0,nan\n"
               "n5,128000,1048576,16,v100-sxm2-32gb",
               path, sizeof(path));
    assert_int_equal(gs_trace_read_nodes(path, &v, &n, &d), 0);
    assert_string_equal(d.msg, "");
    assert_int_equal(n, 5);
    assert_string_equal(v[0].name, "n1");
    assert_int_equal(v[0].cpu_milli, 64000);
    assert_int_equal(v[0].memory_mib, 262144);
    assert_int_equal(v[0].gpus, 2);
    assert_int_equal(v[0].model, model("P100"));
    assert_string_equal(v[1].name, "n2");
    assert_int_equal(v[1].gpus, 0);
    assert_int_equal(v[1].model, -1);
    assert_string_equal(v[2].name, "n3");
    assert_int_equal(v[2].cpu_milli, 96000);
    assert_int_equal(v[2].gpus, 8);
    assert_int_equal(v[2].model, model("G2"));
    assert_int_equal(v[3].model, -1);
    assert_string_equal(v[4].name, "n5");
    assert_int_equal(v[4].gpus, 16);
    assert_int_equal(v[4].memory_mib, 1048576);
    assert_int_equal(v[4].model, model("V100M32"));
    free(v);
}

static void test_nodes_columns_by_name(void **state)
{
    (void)state;
    char path[256];
    struct gs_trace_node *v = NULL;
    size_t n = 0;
    struct gs_diag d;
    gs_diag_init(&d);
    write_text("nodes_order.csv",
               "model,gpu,sn,memory_mib,cpu_milli\n"
               "T4,4,node-a,65536,16000\n"
               "A10,1,node-b,131072,32000\n",
               path, sizeof(path));
    assert_int_equal(gs_trace_read_nodes(path, &v, &n, &d), 0);
    assert_int_equal(n, 2);
    assert_string_equal(v[0].name, "node-a");
    assert_int_equal(v[0].model, model("T4"));
    assert_int_equal(v[0].gpus, 4);
    assert_int_equal(v[0].cpu_milli, 16000);
    assert_int_equal(v[0].memory_mib, 65536);
    assert_string_equal(v[1].name, "node-b");
    assert_int_equal(v[1].model, model("A10"));
    assert_int_equal(v[1].gpus, 1);
    assert_int_equal(v[1].cpu_milli, 32000);
    assert_int_equal(v[1].memory_mib, 131072);
    free(v);

    /* errors name the column found by name and its byte column in this order */
    nodes_refused("model,gpu,sn,memory_mib,cpu_milli\n"
                  "T4,4,node-a,65536,16k\n",
                  ":2:19: cpu_milli: \"16k\" is not a whole number");
}

static void test_pods_good(void **state)
{
    (void)state;
    char path[256];
    struct gs_trace_pod *v = NULL;
    size_t n = 0;
    struct gs_diag d;
    gs_diag_init(&d);
    write_text("pods.csv",
               "qos,gpu_spec,name,num_gpu,pod_phase,gpu_milli,memory_mib,cpu_milli\r\n"
               "LS,V100M16|V100M32,p1,1,a,500,16384,12000\r\n"
               "\r\n"
               "BE,,p2,0,b,0,2048,4000\r\n"
               "LS,nan,p3,4,c,1000,65536,32000\n"
               "\n"
               "LS,T4,p4,1,d,1000,0,0\n",
               path, sizeof(path));
    assert_int_equal(gs_trace_read_pods(path, &v, &n, &d), 0);
    assert_string_equal(d.msg, "");
    assert_int_equal(n, 4);
    assert_string_equal(v[0].name, "p1");
    assert_int_equal(v[0].req.cpu_milli, 12000);
    assert_int_equal(v[0].req.memory_mib, 16384);
    assert_int_equal(v[0].req.num_gpu, 1);
    assert_int_equal(v[0].req.gpu_milli, 500);
    assert_int_equal(v[0].req.model_mask, (1u << model("V100M16")) | (1u << model("V100M32")));
    assert_string_equal(v[1].name, "p2");
    assert_int_equal(v[1].req.num_gpu, 0);
    assert_int_equal(v[1].req.gpu_milli, 0);
    assert_int_equal(v[1].req.model_mask, 0);
    assert_int_equal(v[1].req.cpu_milli, 4000);
    assert_int_equal(v[1].req.memory_mib, 2048);
    assert_string_equal(v[2].name, "p3");
    assert_int_equal(v[2].req.num_gpu, 4);
    assert_int_equal(v[2].req.gpu_milli, 1000);
    assert_int_equal(v[2].req.model_mask, 0);
    assert_string_equal(v[3].name, "p4");
    assert_int_equal(v[3].req.model_mask, 1u << model("T4"));
    assert_int_equal(v[3].req.cpu_milli, 0);
    free(v);
}

static void test_nodes_bad_rows(void **state)
{
    (void)state;
    /* wrong column count: too few and too many */
    nodes_refused(NODES_HEADER "n1,64000,262144,2,P100\n"
                               "n2,64000,262144,2\n",
                  ":3:1: ");
    nodes_refused(NODES_HEADER "n1,64000,262144,2,P100,extra\n", ":2:1: ");
    /* non-numeric, negative, over the limit; the byte column of the field */
    nodes_refused(NODES_HEADER "n1,12a,262144,2,P100\n", ":2:4: cpu_milli: \"12a\"");
    nodes_refused(NODES_HEADER "n1,64000,262144,2,P100\n"
                               "node-22,64000,1.5,2,P100\n",
                  ":3:15: memory_mib: \"1.5\"");
    nodes_refused(NODES_HEADER "n1,64000,262144, 2,P100\n", ":2:17: gpu: ");
    nodes_refused(NODES_HEADER "n1,64000,-262144,2,P100\n", ":2:10: memory_mib: ");
    nodes_refused(NODES_HEADER "n1,-1,262144,2,P100\n", ":2:4: cpu_milli: \"-1\" is negative");
    nodes_refused(NODES_HEADER "n1,64000,262144,17,P100\n", ":2:17: gpu: 17 exceeds 16");
    nodes_refused(NODES_HEADER "n1,99999999999999999999999,262144,2,P100\n", ":2:4: cpu_milli: ");
    nodes_refused(NODES_HEADER "n1,64000,,2,P100\n", ":2:10: memory_mib: empty");
    /* models */
    nodes_refused(NODES_HEADER "n1,64000,262144,2,K80\n",
                  ":2:19: model: unknown GPU model \"K80\"");
    nodes_refused(NODES_HEADER "n1,64000,262144,0,K80\n",
                  ":2:19: model: unknown GPU model \"K80\"");
    nodes_refused(NODES_HEADER "n1,64000,262144,2,\n", ":2:19: model: ");
    nodes_refused(NODES_HEADER "n1,64000,262144,2,nan\n", ":2:19: model: ");
    /* a node needs CPU and memory */
    nodes_refused(NODES_HEADER "n1,0,262144,2,P100\n", ":2:4: cpu_milli: ");
    nodes_refused(NODES_HEADER "n1,64000,0,2,P100\n", ":2:10: memory_mib: ");
    /* names: empty, too long, duplicate */
    nodes_refused(NODES_HEADER ",64000,262144,2,P100\n", ":2:1: sn: ");
    nodes_refused(NODES_HEADER
                  "n0123456789012345678901234567890123456789012345678901234567890123,1,1,0,\n",
                  ":2:1: sn: ");
    nodes_refused(NODES_HEADER "n1,64000,262144,2,P100\n"
                               "n2,64000,262144,2,P100\n"
                               "\n"
                               "n1,32000,262144,0,\n",
                  ":5:1: sn: duplicate node \"n1\"");
}

static void test_nodes_bad_files(void **state)
{
    (void)state;
    char path[256];
    struct gs_trace_node *v = NULL;
    size_t n = 0;
    struct gs_diag d;

    nodes_refused("sn,cpu_milli,memory_mib,gpu\nn1,64000,262144,0\n",
                  ":1:1: missing column \"model\"");
    /* a column the header lacks, written otherwise: what it has is named, with what it means */
    nodes_refused("sn,cpu,memory_mib,gpu,model\nn1,64000,262144,0,\n",
                  ":1:4: unknown column \"cpu\" (the format's columns: sn, cpu_milli,");
    nodes_refused("sn,cpu_mili,memory_mib,gpu,model\nn1,64000,262144,0,\n",
                  ":1:4: unknown column \"cpu_mili\" (did you mean \"cpu_milli\"?)");
    /* a column the format lacks would be taken in and never read */
    nodes_refused("sn,cpu_milli,memory_mib,gpu,model,pods\nn1,64000,262144,0,,110\n",
                  ":1:35: unknown column \"pods\" (the format's columns: sn, cpu_milli, "
                  "memory_mib, gpu, model)");
    nodes_refused("", ":1:1: empty file");
    nodes_refused(NODES_HEADER, ": no nodes");
    nodes_refused(NODES_HEADER "\n\r\n\n", ": no nodes");

    gs_diag_init(&d);
    snprintf(path, sizeof(path), "%s/no_such_file.csv", tmpdir);
    assert_int_equal(gs_trace_read_nodes(path, &v, &n, &d), -ENOENT);
    expect_msg(&d, "%s: ", path);
}

/* A node row padded with leading zeros in cpu_milli to exactly @len bytes. */
static char *padded_node_line(size_t len)
{
    const char *head = "n1,", *tail = "64000,262144,2,P100";
    size_t zeros = len - strlen(head) - strlen(tail);
    char *s = malloc(strlen(NODES_HEADER) + len + 2);
    assert_non_null(s);
    char *p = s + sprintf(s, "%s%s", NODES_HEADER, head);
    memset(p, '0', zeros);
    p += zeros;
    p += sprintf(p, "%s\n", tail);
    assert_int_equal((size_t)(p - s), strlen(NODES_HEADER) + len + 1);
    return s;
}

static void test_long_line(void **state)
{
    (void)state;
    char path[256];
    struct gs_trace_node *v = NULL;
    size_t n = 0;
    struct gs_diag d;

    /* over the limit: refused at the line, not split into two records */
    char *text = padded_node_line(5000);
    nodes_refused(text, ":2:1: line longer than 4095 bytes");
    free(text);
    text = padded_node_line(4096);
    nodes_refused(text, ":2:1: line longer than 4095 bytes");
    free(text);

    /* the limit itself: a 4095-byte line is read */
    text = padded_node_line(4095);
    write_text("long_ok.csv", text, path, sizeof(path));
    free(text);
    gs_diag_init(&d);
    int rc = gs_trace_read_nodes(path, &v, &n, &d);
    if (rc)
        print_error("a 4095-byte line: rc %d \"%s\"\n", rc, d.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(n, 1);
    assert_int_equal(v[0].cpu_milli, 64000);
    free(v);
}

static void test_nul_byte(void **state)
{
    (void)state;
    static const char mid[] = NODES_HEADER "n1,64\0"
                                           "000,262144,2,P100\n";
    static const char last[] = NODES_HEADER "n1,64000,262144,2,P100\0junk";
    char path[256];
    struct gs_trace_node *v = NULL;
    size_t n = 0;
    struct gs_diag d;

    gs_diag_init(&d);
    write_bytes("nul_mid.csv", mid, sizeof(mid) - 1, path, sizeof(path));
    assert_int_equal(gs_trace_read_nodes(path, &v, &n, &d), -EINVAL);
    expect_msg(&d, "%s:2:6: NUL byte", path); /* the byte column of the NUL */

    /* on the last line, without an end of line: not silently cut at the NUL */
    gs_diag_init(&d);
    v = NULL;
    write_bytes("nul_last.csv", last, sizeof(last) - 1, path, sizeof(path));
    int rc = gs_trace_read_nodes(path, &v, &n, &d);
    if (rc == 0)
        free(v);
    assert_int_equal(rc, -EINVAL);
    expect_msg(&d, "%s:2:23: NUL byte", path);
}

static void test_pods_bad(void **state)
{
    (void)state;
    pods_refused(PODS_HEADER "p1,1000,1024,1,500,|T4|\n", ":2:20: gpu_spec: an empty model name");
    pods_refused(PODS_HEADER "p1,1000,1024,1,500,T4|\n", ":2:20: gpu_spec: an empty model name");
    pods_refused(PODS_HEADER "p1,1000,1024,0,0,T4\n", ":2:18: gpu_spec: a GPU model for a pod");
    pods_refused(PODS_HEADER "p\xff,1000,1024,1,500,\n",
                 ":2:1: name: a name must be plain text (UTF-8");
    pods_refused("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,name\n",
                 ":1:54: a duplicate column name");
    nodes_refused(PODS_HEADER "p1,1000,1024,1,1000,\n",
                  ":1:1: unknown column \"name\" (the format's columns: sn, cpu_milli,");
    pods_refused("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1,1,0,0\n",
                 ":1:1: missing column \"gpu_spec\"");
    pods_refused("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,priority\np1,1,1,0,0,\n",
                 ":1:54: unknown column \"priority\" (the format's columns: name, cpu_milli, "
                 "memory_mib, num_gpu, gpu_milli, gpu_spec, qos, pod_phase, creation_time, "
                 "deletion_time, scheduled_time)");
    pods_refused("", ":1:1: empty file");
    pods_refused(PODS_HEADER, ": no pods");
    pods_refused(PODS_HEADER "p1,1000,1024,1,1000\n", ":2:1: ");
    pods_refused(PODS_HEADER "p1,1000,1024,1,1000,,\n", ":2:1: ");
    pods_refused(PODS_HEADER "p1,1000,1024,1,1000,\n"
                             "p2,x,1024,1,1000,\n",
                 ":3:4: cpu_milli: \"x\"");
    pods_refused(PODS_HEADER "p1,1000,-1024,1,1000,\n", ":2:9: memory_mib: \"-1024\" is negative");
    pods_refused(PODS_HEADER "p1,1000,1024,17,1000,\n", ":2:14: num_gpu: 17 exceeds 16");
    /* GPU share rules */
    pods_refused(PODS_HEADER "p1,1000,1024,1,1001,\n", ":2:16: gpu_milli: 1001 exceeds 1000");
    pods_refused(PODS_HEADER "p1,1000,1024,2,500,\n", ":2:16: gpu_milli: ");
    pods_refused(PODS_HEADER "p1,1000,1024,0,300,\n", ":2:16: gpu_milli: ");
    pods_refused(PODS_HEADER "p1,1000,1024,2,0,\n", ":2:16: gpu_milli: ");
    /* models in gpu_spec */
    pods_refused(PODS_HEADER "p1,1000,1024,1,1000,K80\n",
                 ":2:21: gpu_spec: unknown GPU model \"K80\"");
    pods_refused(PODS_HEADER "p1,1000,1024,1,1000,V100M16|K80|T4\n",
                 ":2:21: gpu_spec: unknown GPU model \"K80\"");
    /* names */
    pods_refused(PODS_HEADER ",1000,1024,1,1000,\n", ":2:1: name: ");
    pods_refused(PODS_HEADER "p1,1000,1024,1,1000,\n"
                             "p2,1000,1024,1,1000,\n"
                             "p1,1000,1024,1,500,\n",
                 ":4:1: name: duplicate pod \"p1\"");

    char path[256];
    struct gs_trace_pod *v = NULL;
    size_t n = 0;
    struct gs_diag d;
    gs_diag_init(&d);
    snprintf(path, sizeof(path), "%s/no_pods_here.csv", tmpdir);
    assert_int_equal(gs_trace_read_pods(path, &v, &n, &d), -ENOENT);
    expect_msg(&d, "%s: ", path);
}

/* Small node and pod lists for the sequence reader. */
static void small_lists(struct gs_trace_node **nodes, size_t *nn, struct gs_trace_pod **pods,
                        size_t *np)
{
    char path[256];
    struct gs_diag d;
    gs_diag_init(&d);
    write_text("seq_nodes.csv",
               NODES_HEADER "n1,64000,262144,2,P100\n"
                            "n2,32000,131072,4,T4\n"
                            "n3,96000,393216,8,G2\n",
               path, sizeof(path));
    assert_int_equal(gs_trace_read_nodes(path, nodes, nn, &d), 0);
    write_text("seq_pods.csv",
               PODS_HEADER "p1,1000,1024,1,1000,\n"
                           "p2,2000,2048,1,500,T4\n"
                           "p3,3000,3072,0,0,\n"
                           "p4,4000,4096,2,1000,\n",
               path, sizeof(path));
    assert_int_equal(gs_trace_read_pods(path, pods, np, &d), 0);
    assert_int_equal(*nn, 3);
    assert_int_equal(*np, 4);
}

static void test_sequence_good(void **state)
{
    (void)state;
    struct gs_trace_node *nodes;
    struct gs_trace_pod *pods;
    size_t nn, np;
    struct gs_sequence seq;
    struct gs_diag d;
    char path[256];
    small_lists(&nodes, &nn, &pods, &np);
    gs_diag_init(&d);
    write_text("seq.csv",
               "seq,pod,peer_FGD,peer_Random\r\n"
               "0,p3,n3,\r\n"
               "1,p1,,n1\r\n"
               "\r\n"
               "2,p4,n2,n2\r\n"
               "3,p2,n1,n3\r\n",
               path, sizeof(path));
    assert_int_equal(gs_trace_read_sequence(path, pods, np, nodes, nn, &seq, &d), 0);
    assert_int_equal(seq.n, 4);
    assert_int_equal(seq.pod[0], 2);
    assert_int_equal(seq.pod[1], 0);
    assert_int_equal(seq.pod[2], 3);
    assert_int_equal(seq.pod[3], 1);
    assert_int_equal(seq.npeers, 2);
    assert_string_equal(seq.peer_policy[0], "FGD");
    assert_string_equal(seq.peer_policy[1], "Random");
    static const int32_t want[4][2] = {{2, -1}, {-1, 0}, {1, 1}, {0, 2}};
    for (size_t i = 0; i < 4; i++)
        for (int k = 0; k < 2; k++)
            assert_int_equal(seq.peer[i * 2 + (size_t)k], want[i][k]);
    gs_sequence_free(&seq);
    assert_null(seq.pod);
    gs_sequence_free(&seq); /* twice is harmless */
    gs_sequence_free(NULL);

    /* no peer columns */
    gs_diag_init(&d);
    write_text("seq_plain.csv", "pod\np4\np4\np1\n", path, sizeof(path));
    assert_int_equal(gs_trace_read_sequence(path, pods, np, nodes, nn, &seq, &d), 0);
    assert_int_equal(seq.n, 3);
    assert_int_equal(seq.npeers, 0);
    assert_int_equal(seq.pod[0], 3);
    assert_int_equal(seq.pod[2], 0);
    gs_sequence_free(&seq);
    free(nodes);
    free(pods);
}

static void sequence_refused(const char *text, const struct gs_trace_pod *pods, size_t np,
                             const struct gs_trace_node *nodes, size_t nn, const char *want)
{
    char path[256];
    struct gs_sequence seq;
    struct gs_diag d;
    gs_diag_init(&d);
    write_text("bad_seq.csv", text, path, sizeof(path));
    int rc = gs_trace_read_sequence(path, pods, np, nodes, nn, &seq, &d);
    if (rc != -EINVAL)
        print_error("rc %d, message \"%s\"\n", rc, d.msg);
    assert_int_equal(rc, -EINVAL);
    expect_msg(&d, "%s%s", path, want);
    assert_null(seq.pod);
    assert_null(seq.peer);
}

static void test_sequence_bad(void **state)
{
    (void)state;
    struct gs_trace_node *nodes;
    struct gs_trace_pod *pods;
    size_t nn, np;
    small_lists(&nodes, &nn, &pods, &np);
    sequence_refused("seq,pod,peer_FGD\n0,p1,n1\n1,p9,n2\n", pods, np, nodes, nn,
                     ":3:3: pod: pod \"p9\" is not in the pod list");
    sequence_refused("seq,pod,peer_FGD\n0,p1,n1\n1,p2,\n2,p3,n7\n", pods, np, nodes, nn,
                     ":4:6: peer_FGD: node \"n7\" is not in the node list");
    sequence_refused("seq,pod\n0,\n", pods, np, nodes, nn, ":2:3: pod: ");
    sequence_refused("seq,pods\n0,p1\n", pods, np, nodes, nn, ":1:1: missing column \"pod\"");
    sequence_refused("pod,peer_FGD\np1,n1,x\n", pods, np, nodes, nn, ":2:1: ");
    sequence_refused("pod,peer_FGD\n", pods, np, nodes, nn, ": no pods");
    sequence_refused("", pods, np, nodes, nn, ":1:1: empty file");
    /* a column read as nothing, and a seq out of order, were taken without a word */
    sequence_refused("seq,pod,extra\n0,p1,a\n", pods, np, nodes, nn,
                     ":1:9: column \"extra\" is not read");
    sequence_refused("pod,peer_Foo\np1,n1\n", pods, np, nodes, nn,
                     ":1:5: column peer_Foo names no policy");
    /* one policy's column twice, in another case: one would be dropped */
    sequence_refused("pod,peer_FGD,peer_fgd\np1,n1,n1\n", pods, np, nodes, nn,
                     ":1:14: column peer_fgd: a second peer_ column of policy FGD");
    /* a place past 64 bits is refused, not wrapped */
    sequence_refused("seq,pod,peer_FGD\n99999999999999999999,p1,n1\n", pods, np, nodes, nn,
                     ":2:1: seq: 99999999999999999999 exceeds 9223372036854775807");
    sequence_refused("seq,pod\nx,p1\n", pods, np, nodes, nn, ":2:1: seq: ");
    sequence_refused("seq,pod\n0,p1\n2,p2\n", pods, np, nodes, nn,
                     ":3:1: seq: 2 is not this row's place in the order, 1");

    char path[256];
    struct gs_sequence seq;
    struct gs_diag d;
    gs_diag_init(&d);
    snprintf(path, sizeof(path), "%s/no_seq.csv", tmpdir);
    assert_int_equal(gs_trace_read_sequence(path, pods, np, nodes, nn, &seq, &d), -ENOENT);
    expect_msg(&d, "%s: ", path);
    free(nodes);
    free(pods);
}

static void test_build_cluster(void **state)
{
    (void)state;
    char path[256];
    struct gs_trace_node *v = NULL;
    size_t n = 0;
    struct gs_cluster *c = NULL;
    struct gs_diag d;
    gs_diag_init(&d);
    write_text("cpu_only.csv", NODES_HEADER "c1,32000,262144,0,\nc2,32000,262144,0,nan\n", path,
               sizeof(path));
    assert_int_equal(gs_trace_read_nodes(path, &v, &n, &d), 0);
    assert_int_equal(n, 2);
    assert_int_equal(gs_trace_build_cluster(v, n, &c, &d), -EINVAL);
    assert_null(c);
    expect_msg(&d, "no GPU");
    free(v);

    gs_diag_init(&d);
    write_text("mixed.csv", NODES_HEADER "c1,32000,262144,0,\ng1,64000,262144,8,V100M32\n", path,
               sizeof(path));
    assert_int_equal(gs_trace_read_nodes(path, &v, &n, &d), 0);
    assert_int_equal(gs_trace_build_cluster(v, n, &c, &d), 0);
    assert_int_equal(gs_cluster_node_count(c), 2);
    assert_int_equal(gs_cluster_gpu_count(c), 8);
    assert_int_equal(gs_cluster_find(c, "g1"), 1);
    assert_int_equal(gs_cluster_model_mask(c), 1u << model("V100M32"));
    gs_cluster_free(c);
    free(v);
}

static int64_t gpu_sum(const struct gs_trace_node *v, size_t n)
{
    int64_t g = 0;
    for (size_t i = 0; i < n; i++)
        g += v[i].gpus;
    return g;
}

static void test_bundled_alibaba(void **state)
{
    (void)state;
    struct gs_trace_node *v = NULL;
    struct gs_trace_pod *p = NULL;
    size_t n = 0, np = 0;
    struct gs_cluster *c = NULL;
    struct gs_diag d;
    gs_diag_init(&d);
    int rc = gs_trace_read_nodes("data/alibaba-gpu-v2023/openb_node_list_gpu_node.csv", &v, &n, &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(n, 1213);
    assert_int_equal(gpu_sum(v, n), 6212);
    assert_int_equal(gs_trace_build_cluster(v, n, &c, &d), 0);
    assert_int_equal(gs_cluster_node_count(c), 1213);
    assert_int_equal(gs_cluster_gpu_count(c), 6212);
    gs_cluster_free(c);
    free(v);

    rc = gs_trace_read_nodes("data/alibaba-gpu-v2023/openb_node_list_all_node.csv", &v, &n, &d);
    assert_int_equal(rc, 0);
    assert_int_equal(n, 1523);
    assert_int_equal(gpu_sum(v, n), 6212);
    free(v);

    rc = gs_trace_read_pods("data/alibaba-gpu-v2023/openb_pod_list_default.csv", &p, &np, &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(np, 8152);
    assert_string_equal(p[0].name, "openb-pod-0000");
    assert_int_equal(p[0].req.cpu_milli, 12000);
    assert_int_equal(p[0].req.num_gpu, 1);
    assert_int_equal(p[0].req.gpu_milli, 1000);
    assert_string_equal(p[1].name, "openb-pod-0001");
    assert_int_equal(p[1].req.gpu_milli, 460);
    free(p);
}

static void test_bundled_fgd_reference(void **state)
{
    (void)state;
    struct gs_trace_node *v = NULL;
    struct gs_trace_pod *p = NULL;
    size_t n = 0, np = 0;
    struct gs_sequence seq;
    struct gs_diag d;
    gs_diag_init(&d);
    int rc = gs_trace_read_nodes("data/fgd-reference/openb-eighth/nodes.csv", &v, &n, &d);
    assert_int_equal(rc, 0);
    assert_int_equal(n, 152);
    assert_int_equal(gpu_sum(v, n), 773);
    rc = gs_trace_read_pods("data/alibaba-gpu-v2023/openb_pod_list_default.csv", &p, &np, &d);
    assert_int_equal(rc, 0);
    rc = gs_trace_read_sequence("data/fgd-reference/openb-eighth/sequence.csv", p, np, v, n, &seq,
                                &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(seq.n, 1366);
    assert_int_equal(seq.npeers, 6);
    static const char *const policies[] = {"Random",     "DotProd", "GpuClustering",
                                           "GpuPacking", "BestFit", "FGD"};
    for (int k = 0; k < 6; k++)
        assert_string_equal(seq.peer_policy[k], policies[k]);
    /* the first row: openb-pod-4463 -> peers named in the file */
    assert_string_equal(p[seq.pod[0]].name, "openb-pod-4463");
    assert_string_equal(v[seq.peer[0]].name, "openb-node-1079");
    assert_string_equal(v[seq.peer[5]].name, "openb-node-0806");
    for (size_t i = 0; i < seq.n; i++) {
        assert_true(seq.pod[i] < np);
        for (int k = 0; k < seq.npeers; k++)
            assert_true(seq.peer[i * 6 + (size_t)k] >= -1 &&
                        seq.peer[i * 6 + (size_t)k] < (int32_t)n);
    }
    gs_sequence_free(&seq);
    free(p);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes_good),
        cmocka_unit_test(test_nodes_columns_by_name),
        cmocka_unit_test(test_pods_good),
        cmocka_unit_test(test_nodes_bad_rows),
        cmocka_unit_test(test_nodes_bad_files),
        cmocka_unit_test(test_long_line),
        cmocka_unit_test(test_nul_byte),
        cmocka_unit_test(test_pods_bad),
        cmocka_unit_test(test_sequence_good),
        cmocka_unit_test(test_sequence_bad),
        cmocka_unit_test(test_build_cluster),
        cmocka_unit_test(test_bundled_alibaba),
        cmocka_unit_test(test_bundled_fgd_reference),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
