/*
 * gRPC over unix sockets with Debian's gRPC C core (grpc/grpc.h) and protobuf-c messages: a server
 * that answers unary methods and server streams on one or more sockets from one thread, and a
 * client for unary calls and for reading a server stream. The kubelet device plugin (plugin.c)
 * and the fake kubelet of the tests are both built on it.
 *
 * Invariants: every message received is capped at GS_GRPC_MSG_MAX bytes (larger ones fail the call
 * with RESOURCE_EXHAUSTED); calls on a server at most GS_GRPC_CALLS_MAX at once (more wait in
 * gRPC's queue). A server runs its handlers on the thread that calls gs_grpc_server_run(); only
 * gs_grpc_server_notify() and the stop flag may be touched from other threads.
 */
#ifndef GS_NODE_GRPCIO_H
#define GS_NODE_GRPCIO_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

struct gs_diag;
struct gs_grpc_server;
struct gs_grpc_stream;

#define GS_GRPC_MSG_MAX   (4u << 20)
#define GS_GRPC_CALLS_MAX 256

/*
 * A method's handler: @req (unpacked, owned by the server) to a packed response in *@out (malloc'd,
 * freed by the server) of *@len bytes. @ep: the endpoint (socket) the call came on.
 * Return: 0 (OK), or a gRPC status code (grpc_status_code) with @err set to its message.
 * A stream's handler is called when the stream opens and after each gs_grpc_server_notify(); each
 * answer is sent as the stream's next message.
 */
typedef int (*gs_grpc_fn)(void *ud, int ep, const ProtobufCMessage *req, uint8_t **out, size_t *len,
                          char *err, size_t errlen);

struct gs_grpc_method {
    const char *path; /* "/v1beta1.DevicePlugin/Allocate" */
    const ProtobufCMessageDescriptor *req;
    int stream; /* 1: server streaming */
    gs_grpc_fn fn;
};

/*
 * gs_grpc_server_new() - a server of @n @methods (the array is borrowed for its life).
 * Return: 0 and *@out; -ENOMEM.
 */
int gs_grpc_server_new(const struct gs_grpc_method *methods, int n, void *ud,
                       struct gs_grpc_server **out);

/*
 * gs_grpc_server_listen() - serve on unix socket @path (an old socket file there is removed).
 * Before gs_grpc_server_run(). Return: the endpoint index (>= 0); -EADDRINUSE / -EINVAL with @d.
 */
int gs_grpc_server_listen(struct gs_grpc_server *s, const char *path, struct gs_diag *d);

/* gs_grpc_server_run() - serve until *@stop is set (checked every 100 ms). Return: 0. */
int gs_grpc_server_run(struct gs_grpc_server *s, volatile int *stop);

/* gs_grpc_server_notify() - every open stream gets its handler's next answer. Any thread. */
void gs_grpc_server_notify(struct gs_grpc_server *s);

/* gs_grpc_server_free() - close every call and socket; NULL allowed. */
void gs_grpc_server_free(struct gs_grpc_server *s);

/* gs_grpc_pack() - @m packed into a malloc'd buffer. Return: 0 and *@out, *@len; -ENOMEM. */
int gs_grpc_pack(const ProtobufCMessage *m, uint8_t **out, size_t *len);

/*
 * gs_grpc_call() - a unary call of @method on the server at unix socket @path, waiting up to
 * @timeout_ms for it to be ready and answer. *@resp: the unpacked answer (free it with
 * protobuf_c_message_free_unpacked(*@resp, NULL)).
 * Return: 0; a positive gRPC status code with @d holding the server's message; -ETIMEDOUT;
 * -EPROTO for an answer that does not unpack; -ENOMEM.
 */
int gs_grpc_call(const char *path, const char *method, const ProtobufCMessage *req,
                 const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                 int timeout_ms, struct gs_diag *d);

/* A server stream, read message by message. */
int gs_grpc_stream_open(const char *path, const char *method, const ProtobufCMessage *req,
                        struct gs_grpc_stream **out, int timeout_ms, struct gs_diag *d);
/* Return: 0 and *@msg; -ETIMEDOUT; -ECONNRESET when the stream ended; -EPROTO. */
int gs_grpc_stream_next(struct gs_grpc_stream *st, const ProtobufCMessageDescriptor *desc,
                        ProtobufCMessage **msg, int timeout_ms, struct gs_diag *d);
void gs_grpc_stream_close(struct gs_grpc_stream *st);

#endif
