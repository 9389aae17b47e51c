/* gRPC C core server and client for protobuf-c messages over unix sockets. See grpcio.h. */
#include "grpcio.h"

#include "gpusched/diag.h"

#include <errno.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EPS_MAX 16

/* One call on the server: a pending request, then a unary answer or an open stream. */
struct call {
    struct gs_grpc_server *s;
    int ep;
    enum { C_WAIT, C_READ, C_WATCH, C_FINISH } state;
    int busy;      /* a batch of ops in flight (tag: the call) */
    int closed;    /* the RECV_CLOSE_ON_SERVER op completed (tag: &closed) */
    int cancelled; /* filled by that op */
    int done;      /* status sent */
    long gen;      /* stream: the notify generation last sent */
    const struct gs_grpc_method *m;
    grpc_call *call;
    grpc_call_details details;
    grpc_metadata_array md;
    grpc_byte_buffer *recv, *send;
    grpc_slice status_msg;
    int has_status_msg;
    struct call *next;
};

struct gs_grpc_server {
    const struct gs_grpc_method *methods;
    int nmethods;
    void *ud;
    grpc_completion_queue *cq;
    grpc_server *srv[EPS_MAX];
    int neps;
    struct call *calls; /* every live call */
    int ncalls;
    atomic_long gen;
    int started;
};

static void init_once(void)
{
    grpc_init(); /* reference-counted by gRPC; each is matched by a grpc_shutdown() */
}

static gpr_timespec after_ms(int ms)
{
    return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

int gs_grpc_pack(const ProtobufCMessage *m, uint8_t **out, size_t *len)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *b = malloc(n ? n : 1);
    if (!b)
        return -ENOMEM;
    protobuf_c_message_pack(m, b);
    *out = b;
    *len = n;
    return 0;
}

static grpc_byte_buffer *to_bb(const uint8_t *buf, size_t len)
{
    grpc_slice sl = grpc_slice_from_copied_buffer((const char *)buf, len);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&sl, 1);
    grpc_slice_unref(sl);
    return bb;
}

/* The message in @bb (consumed), unpacked; NULL when too large or malformed. */
static ProtobufCMessage *from_bb(grpc_byte_buffer *bb, const ProtobufCMessageDescriptor *desc)
{
    if (!bb)
        return NULL;
    ProtobufCMessage *m = NULL;
    if (grpc_byte_buffer_length(bb) <= GS_GRPC_MSG_MAX) {
        grpc_byte_buffer_reader r;
        if (grpc_byte_buffer_reader_init(&r, bb)) {
            grpc_slice all = grpc_byte_buffer_reader_readall(&r);
            m = protobuf_c_message_unpack(desc, NULL, GRPC_SLICE_LENGTH(all),
                                          GRPC_SLICE_START_PTR(all));
            grpc_slice_unref(all);
            grpc_byte_buffer_reader_destroy(&r);
        }
    }
    grpc_byte_buffer_destroy(bb);
    return m;
}

int gs_grpc_server_new(const struct gs_grpc_method *methods, int n, void *ud,
                       struct gs_grpc_server **out)
{
    struct gs_grpc_server *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    init_once();
    s->methods = methods;
    s->nmethods = n;
    s->ud = ud;
    s->cq = grpc_completion_queue_create_for_next(NULL);
    *out = s;
    return 0;
}

int gs_grpc_server_listen(struct gs_grpc_server *s, const char *path, struct gs_diag *d)
{
    char addr[300];
    if (s->neps == EPS_MAX || s->started)
        return gs_diag_error(d, "%s: no more sockets on this server", path);
    if (snprintf(addr, sizeof(addr), "unix:%s", path) >= (int)sizeof(addr))
        return gs_diag_error(d, "%s: socket path too long", path);
    unlink(path); /* a socket left by an earlier run, as kubelet's own plugins do */
    grpc_server *srv = grpc_server_create(NULL, NULL);
    grpc_server_register_completion_queue(srv, s->cq, NULL);
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    int port = grpc_server_add_http2_port(srv, addr, creds);
    grpc_server_credentials_release(creds);
    if (!port) {
        grpc_server_destroy(srv);
        return gs_diag_error_code(d, -EADDRINUSE, "%s: cannot listen", path);
    }
    s->srv[s->neps] = srv;
    return s->neps++;
}

static int request(struct gs_grpc_server *s, int ep)
{
    struct call *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->s = s;
    c->ep = ep;
    grpc_call_details_init(&c->details);
    grpc_metadata_array_init(&c->md);
    c->next = s->calls;
    s->calls = c;
    s->ncalls++;
    c->busy = 1;
    if (grpc_server_request_call(s->srv[ep], &c->call, &c->details, &c->md, s->cq, s->cq, c) !=
        GRPC_CALL_OK)
        return -EIO;
    return 0;
}

static void call_free(struct call *c)
{
    struct gs_grpc_server *s = c->s;
    for (struct call **p = &s->calls; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    s->ncalls--;
    if (c->call)
        grpc_call_unref(c->call);
    if (c->recv)
        grpc_byte_buffer_destroy(c->recv);
    if (c->send)
        grpc_byte_buffer_destroy(c->send);
    if (c->has_status_msg)
        grpc_slice_unref(c->status_msg);
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->md);
    free(c);
}

static void start(struct call *c, grpc_op *ops, size_t n)
{
    c->busy = 1;
    if (grpc_call_start_batch(c->call, ops, n, c, NULL) != GRPC_CALL_OK)
        c->busy = 0;
}

/* Send @status (and @msg) and end the call; a message first when @bb. */
static void finish(struct call *c, grpc_byte_buffer *bb, int status, const char *msg)
{
    grpc_op ops[2];
    size_t n = 0;
    memset(ops, 0, sizeof(ops));
    if (bb) {
        c->send = bb;
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = bb;
    }
    c->status_msg = grpc_slice_from_copied_string(msg ? msg : "");
    c->has_status_msg = 1;
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = (grpc_status_code)status;
    ops[n++].data.send_status_from_server.status_details = &c->status_msg;
    c->state = C_FINISH;
    c->done = 1;
    start(c, ops, n);
}

/* Run the handler and send its answer: the unary reply, or the stream's next message. */
static void answer(struct call *c, const ProtobufCMessage *req)
{
    uint8_t *out = NULL;
    size_t len = 0;
    char err[256] = "";
    int st = c->m->fn(c->s->ud, c->ep, req, &out, &len, err, sizeof(err));
    grpc_byte_buffer *bb = st == 0 ? to_bb(out, len) : NULL;
    free(out);
    if (st != 0 || !c->m->stream) {
        finish(c, bb, st, err);
        return;
    }
    grpc_op op;
    memset(&op, 0, sizeof(op));
    if (c->send)
        grpc_byte_buffer_destroy(c->send);
    c->send = bb;
    op.op = GRPC_OP_SEND_MESSAGE;
    op.data.send_message.send_message = bb;
    c->state = C_WATCH;
    start(c, &op, 1);
}

static const struct gs_grpc_method *method_of(const struct gs_grpc_server *s, grpc_slice path)
{
    for (int i = 0; i < s->nmethods; i++)
        if (strlen(s->methods[i].path) == GRPC_SLICE_LENGTH(path) &&
            !memcmp(s->methods[i].path, GRPC_SLICE_START_PTR(path), GRPC_SLICE_LENGTH(path)))
            return &s->methods[i];
    return NULL;
}

/* A batch of call @c completed. */
static void step(struct call *c, int ok)
{
    struct gs_grpc_server *s = c->s;
    c->busy = 0;
    if (c->state == C_WAIT) { /* a new call: read its request, watch for its end */
        if (!ok) {
            c->done = c->closed = 1;
            return;
        }
        request(s, c->ep);
        grpc_op ops[2], cl;
        memset(ops, 0, sizeof(ops));
        memset(&cl, 0, sizeof(cl));
        cl.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        cl.data.recv_close_on_server.cancelled = &c->cancelled;
        grpc_call_start_batch(c->call, &cl, 1, &c->closed, NULL);
        ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
        ops[1].op = GRPC_OP_RECV_MESSAGE;
        ops[1].data.recv_message.recv_message = &c->recv;
        c->state = C_READ;
        start(c, ops, 2);
        return;
    }
    if (c->state == C_READ) {
        c->m = method_of(s, c->details.method);
        grpc_byte_buffer *bb = c->recv;
        c->recv = NULL;
        if (!c->m) {
            if (bb)
                grpc_byte_buffer_destroy(bb);
            finish(c, NULL, GRPC_STATUS_UNIMPLEMENTED, "no such method");
            return;
        }
        if (bb && grpc_byte_buffer_length(bb) > GS_GRPC_MSG_MAX) {
            grpc_byte_buffer_destroy(bb);
            finish(c, NULL, GRPC_STATUS_RESOURCE_EXHAUSTED, "request larger than 4 MiB");
            return;
        }
        ProtobufCMessage *req = ok ? from_bb(bb, c->m->req) : NULL;
        if (!ok && bb)
            grpc_byte_buffer_destroy(bb);
        if (!req) {
            finish(c, NULL, GRPC_STATUS_INVALID_ARGUMENT, "the request does not unpack");
            return;
        }
        c->gen = atomic_load(&s->gen);
        answer(c, req);
        protobuf_c_message_free_unpacked(req, NULL);
    }
    /* C_WATCH: a stream message went out; C_FINISH: the status went out */
}

/* Streams whose last message predates a notify get the next one. */
static void push(struct gs_grpc_server *s)
{
    long gen = atomic_load(&s->gen);
    for (struct call *c = s->calls; c; c = c->next)
        if (c->state == C_WATCH && !c->busy && !c->closed && c->gen != gen) {
            ProtobufCMessage *req = NULL; /* a stream's handler takes no request after the first */
            c->gen = gen;
            answer(c, req);
        }
}

static void reap(struct gs_grpc_server *s)
{
    for (struct call *c = s->calls, *next; c; c = next) {
        next = c->next;
        if (c->state != C_WAIT && c->closed && !c->busy)
            call_free(c);
    }
}

int gs_grpc_server_run(struct gs_grpc_server *s, volatile int *stop)
{
    if (!s->started) {
        for (int e = 0; e < s->neps; e++) {
            grpc_server_start(s->srv[e]);
            request(s, e);
        }
        s->started = 1;
    }
    while (!*stop) {
        grpc_event ev = grpc_completion_queue_next(s->cq, after_ms(100), NULL);
        if (ev.type == GRPC_OP_COMPLETE) {
            int found = 0;
            for (struct call *c = s->calls; c && !found; c = c->next)
                if (ev.tag == c) {
                    step(c, ev.success);
                    found = 1;
                } else if (ev.tag == &c->closed) {
                    c->closed = 1;
                    found = 1;
                }
        }
        push(s);
        reap(s);
    }
    return 0;
}

void gs_grpc_server_notify(struct gs_grpc_server *s)
{
    atomic_fetch_add(&s->gen, 1);
}

void gs_grpc_server_free(struct gs_grpc_server *s)
{
    if (!s)
        return;
    for (int e = 0; e < s->neps; e++) {
        grpc_server_shutdown_and_notify(s->srv[e], s->cq, &s->srv[e]);
        grpc_server_cancel_all_calls(s->srv[e]);
    }
    int left = s->neps;
    while (left > 0 || (s->started && s->calls)) {
        grpc_event ev = grpc_completion_queue_next(s->cq, after_ms(1000), NULL);
        if (ev.type != GRPC_OP_COMPLETE)
            break;
        int mine = 0;
        for (int e = 0; e < s->neps; e++)
            if (ev.tag == &s->srv[e]) {
                left--;
                mine = 1;
            }
        for (struct call *c = s->calls; c && !mine; c = c->next)
            if (ev.tag == c) {
                c->busy = 0;
                if (c->state == C_WAIT)
                    c->closed = 1, c->state = C_FINISH;
                mine = 1;
            } else if (ev.tag == &c->closed) {
                c->closed = 1;
                mine = 1;
            }
        for (struct call *c = s->calls, *next; c; c = next) {
            next = c->next;
            if (c->closed && !c->busy)
                call_free(c);
        }
    }
    for (int e = 0; e < s->neps; e++)
        grpc_server_destroy(s->srv[e]);
    grpc_completion_queue_shutdown(s->cq);
    while (grpc_completion_queue_next(s->cq, after_ms(1000), NULL).type != GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(s->cq);
    while (s->calls)
        call_free(s->calls);
    free(s);
    grpc_shutdown();
}

/* ---- client ---- */

struct gs_grpc_stream {
    grpc_channel *ch;
    grpc_completion_queue *cq;
    grpc_call *call;
    grpc_metadata_array md, trailing;
    grpc_status_code status;
    grpc_slice details;
    grpc_byte_buffer *send;
};

static int open_call(const char *path, const char *method, int timeout_ms,
                     struct gs_grpc_stream *st)
{
    char addr[300];
    if (snprintf(addr, sizeof(addr), "unix:%s", path) >= (int)sizeof(addr))
        return -EINVAL;
    init_once();
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    st->ch = grpc_channel_create(addr, creds, NULL);
    grpc_channel_credentials_release(creds);
    st->cq = grpc_completion_queue_create_for_pluck(NULL);
    grpc_slice m = grpc_slice_from_copied_string(method);
    gpr_timespec deadline =
        timeout_ms < 0 ? gpr_inf_future(GPR_CLOCK_MONOTONIC) : after_ms(timeout_ms);
    st->call = grpc_channel_create_call(st->ch, NULL, GRPC_PROPAGATE_DEFAULTS, st->cq, m, NULL,
                                        deadline, NULL);
    grpc_slice_unref(m);
    grpc_metadata_array_init(&st->md);
    grpc_metadata_array_init(&st->trailing);
    st->details = grpc_empty_slice();
    return 0;
}

static void close_call(struct gs_grpc_stream *st)
{
    grpc_call_unref(st->call);
    grpc_completion_queue_shutdown(st->cq);
    while (
        grpc_completion_queue_pluck(st->cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
        GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(st->cq);
    grpc_channel_destroy(st->ch);
    grpc_metadata_array_destroy(&st->md);
    grpc_metadata_array_destroy(&st->trailing);
    grpc_slice_unref(st->details);
    if (st->send)
        grpc_byte_buffer_destroy(st->send);
    grpc_shutdown();
}

/* The first ops of every call: metadata (waiting for the server to be ready), request, close. */
static size_t first_ops(grpc_op *ops, struct gs_grpc_stream *st, const ProtobufCMessage *req)
{
    uint8_t *buf;
    size_t len;
    if (gs_grpc_pack(req, &buf, &len))
        return 0;
    st->send = to_bb(buf, len);
    free(buf);
    memset(ops, 0, 4 * sizeof(*ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = st->send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &st->md;
    return 4;
}

static int status_error(struct gs_grpc_stream *st, const char *method, struct gs_diag *d)
{
    if (st->status == GRPC_STATUS_DEADLINE_EXCEEDED)
        return gs_diag_error_code(d, -ETIMEDOUT, "%s: no answer in time", method);
    return gs_diag_error_code(d, (int)st->status, "%s: %.*s (gRPC status %d)", method,
                              (int)GRPC_SLICE_LENGTH(st->details),
                              (const char *)GRPC_SLICE_START_PTR(st->details), (int)st->status);
}

int gs_grpc_call(const char *path, const char *method, const ProtobufCMessage *req,
                 const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                 int timeout_ms, struct gs_diag *d)
{
    struct gs_grpc_stream st;
    grpc_op ops[6];
    grpc_byte_buffer *bb = NULL;
    memset(&st, 0, sizeof(st));
    memset(ops, 0, sizeof(ops));
    if (open_call(path, method, timeout_ms, &st))
        return gs_diag_error(d, "%s: socket path too long", path);
    size_t n = first_ops(ops, &st, req);
    if (!n) {
        close_call(&st);
        return gs_diag_error_code(d, -ENOMEM, "out of memory");
    }
    ops[n].op = GRPC_OP_RECV_MESSAGE;
    ops[n++].data.recv_message.recv_message = &bb;
    ops[n].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[n].data.recv_status_on_client.trailing_metadata = &st.trailing;
    ops[n].data.recv_status_on_client.status = &st.status;
    ops[n++].data.recv_status_on_client.status_details = &st.details;
    int rc = 0;
    grpc_call_error ce = grpc_call_start_batch(st.call, ops, n, &st, NULL);
    if (ce != GRPC_CALL_OK)
        rc = gs_diag_error_code(d, -EIO, "%s: cannot start the call (%d)", method, (int)ce);
    else
        grpc_completion_queue_pluck(st.cq, &st, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (!rc && st.status != GRPC_STATUS_OK)
        rc = status_error(&st, method, d);
    if (!rc && !(*resp = from_bb(bb, resp_desc)))
        rc = gs_diag_error_code(d, -EPROTO, "%s: the answer does not unpack", method);
    else if (rc && bb)
        grpc_byte_buffer_destroy(bb);
    close_call(&st);
    return rc;
}

int gs_grpc_stream_open(const char *path, const char *method, const ProtobufCMessage *req,
                        struct gs_grpc_stream **out, int timeout_ms, struct gs_diag *d)
{
    struct gs_grpc_stream *st = calloc(1, sizeof(*st));
    grpc_op ops[4];
    if (!st)
        return gs_diag_error_code(d, -ENOMEM, "out of memory");
    if (open_call(path, method, -1, st)) {
        free(st);
        return gs_diag_error(d, "%s: socket path too long", path);
    }
    size_t n = first_ops(ops, st, req);
    grpc_event ev = {0};
    if (n && grpc_call_start_batch(st->call, ops, n, st, NULL) == GRPC_CALL_OK)
        ev = grpc_completion_queue_pluck(st->cq, st, after_ms(timeout_ms), NULL);
    if (ev.type != GRPC_OP_COMPLETE || !ev.success) {
        gs_grpc_stream_close(st);
        return gs_diag_error_code(d, -ETIMEDOUT, "%s: %s: the stream did not open", path, method);
    }
    *out = st;
    return 0;
}

int gs_grpc_stream_next(struct gs_grpc_stream *st, const ProtobufCMessageDescriptor *desc,
                        ProtobufCMessage **msg, int timeout_ms, struct gs_diag *d)
{
    grpc_byte_buffer *bb = NULL;
    grpc_op op;
    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &bb;
    if (grpc_call_start_batch(st->call, &op, 1, &bb, NULL) != GRPC_CALL_OK)
        return gs_diag_error_code(d, -EIO, "stream: cannot read");
    grpc_event ev = grpc_completion_queue_pluck(st->cq, &bb, after_ms(timeout_ms), NULL);
    if (ev.type == GRPC_QUEUE_TIMEOUT) {
        /* the read stays pending; cancel it so the call can be closed */
        grpc_call_cancel(st->call, NULL);
        grpc_completion_queue_pluck(st->cq, &bb, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (bb)
            grpc_byte_buffer_destroy(bb);
        return gs_diag_error_code(d, -ETIMEDOUT, "stream: no message in %d ms", timeout_ms);
    }
    if (!bb)
        return gs_diag_error_code(d, -ECONNRESET, "stream: ended");
    *msg = from_bb(bb, desc);
    return *msg ? 0 : gs_diag_error_code(d, -EPROTO, "stream: a message does not unpack");
}

void gs_grpc_stream_close(struct gs_grpc_stream *st)
{
    if (!st)
        return;
    grpc_op op;
    memset(&op, 0, sizeof(op));
    grpc_call_cancel(st->call, NULL);
    op.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    op.data.recv_status_on_client.trailing_metadata = &st->trailing;
    op.data.recv_status_on_client.status = &st->status;
    op.data.recv_status_on_client.status_details = &st->details;
    if (grpc_call_start_batch(st->call, &op, 1, &op, NULL) == GRPC_CALL_OK)
        grpc_completion_queue_pluck(st->cq, &op, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    close_call(st);
    free(st);
}
