#ifndef CMICROHTTPD_H
#define CMICROHTTPD_H

#include <sys/types.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdarg.h>
#include <microhttpd.h>

/// Settings for CMicroHTTPD_start_daemon; plain values so Swift can fill them in.
typedef struct {
    unsigned int flags;            ///< MHD_FLAG bits (internal thread, epoll, ...).
    const struct sockaddr *address; ///< Address to bind (IPv4 or IPv6), port included.
    unsigned int thread_pool_size; ///< Worker threads, each with its own epoll set.
    unsigned int connection_timeout_seconds; ///< Idle connections are closed after this.
    unsigned int connection_limit; ///< Most connections open at once.
    size_t connection_memory_limit; ///< Per-connection buffer for headers (431 beyond).
    unsigned int listen_backlog;   ///< listen(2) backlog.
    unsigned int per_ip_connection_limit; ///< Most connections from one IP address (0: no limit).
    MHD_NotifyConnectionCallback notify_connection; ///< Called when a connection opens and closes (may be NULL).
} CMicroHTTPD_Settings;

/// Starts a daemon with the given access handler and completion callback.
///
/// Exists because MHD_start_daemon is variadic, which Swift cannot call: this wrapper
/// passes every option through MHD_OPTION_ARRAY, and installs an unescape callback that
/// leaves the URL untouched so that the router percent-decodes each path segment exactly
/// once (MHD's default decodes `%2F` into `/` before we can see it), and a logger that writes
/// libmicrohttpd's messages as `CMicroHTTPD_log_line` makes them, a bind failure left out.
struct MHD_Daemon *CMicroHTTPD_start_daemon(const CMicroHTTPD_Settings *settings,
                                            MHD_AccessHandlerCallback handler,
                                            MHD_RequestCompletedCallback completed,
                                            void *context);

/// libmicrohttpd's message as the line the daemon's logger writes: `feed-server: libmicrohttpd: `,
/// the message without its trailing newline, every control byte, DEL and byte from 0x80 up as
/// `%XX` (a message may quote what a client sent), cut to fit, then one newline. Returns the
/// line's length (no NUL is written), 0 when `capacity` cannot hold the prefix.
size_t CMicroHTTPD_log_line(const char *message, char *line, size_t capacity);

/// The port the daemon listens on (useful after binding port 0).
///
/// Exists because MHD_get_daemon_info is variadic.
uint16_t CMicroHTTPD_bound_port(struct MHD_Daemon *daemon);

/// The socket of a connection, so a watchdog can shut it down (`shutdown(2)`) when its client
/// is too slow: libmicrohttpd then sees the socket fail and closes the connection itself.
///
/// Exists because MHD_get_connection_info is variadic.
int CMicroHTTPD_connection_fd(struct MHD_Connection *connection);

/// Corks (`on` non-zero) or uncorks a connection's socket (`TCP_CORK`); non-zero on success.
///
/// Exists because libmicrohttpd 0.9.75 sends a file response's header on its own, pushed, before
/// the first `sendfile` ("the client may react on the header alone"): the client then takes a
/// segment and a wake-up for ~300 bytes on every asset. Corked from the queueing of such a
/// response to its completion (which libmicrohttpd reports once the last byte is handed to the
/// kernel), the header leaves with the file's first bytes, as nginx's `tcp_nopush` sends it; the
/// uncork pushes the rest at once. Two cases still send the header alone, as without this:
/// the first answer on a connection (libmicrohttpd sets `TCP_NODELAY` after its first send, and
/// setting it pushes what the cork holds), and files sent in several `sendfile` calls (over
/// 128 KiB), for which libmicrohttpd keeps its own idea of the cork and may lift ours. Nothing
/// can stay corked: every answer ends with the uncork (a closing socket sends what it holds).
int CMicroHTTPD_set_cork(struct MHD_Connection *connection, int on);

/// Writes the client's IP address as text into `buffer` (`size` bytes, NUL-terminated); non-zero
/// on success.
///
/// Exists because MHD_get_connection_info is variadic and the address is a `sockaddr` to format.
int CMicroHTTPD_client_address(struct MHD_Connection *connection, char *buffer, size_t size);

/// The client's address as libmicrohttpd holds it (NULL when it has none), valid while the
/// connection lives: read in place on every answer, so nothing is formatted until asked.
///
/// Exists because MHD_get_connection_info is variadic.
const struct sockaddr *CMicroHTTPD_client_sockaddr(struct MHD_Connection *connection);

/// The per-connection slot set by the notify-connection callback (`socket_context`).
///
/// Exists because MHD_get_connection_info is variadic.
void *CMicroHTTPD_connection_context(struct MHD_Connection *connection);

/// The most query arguments a request may have (fewer when its URL leaves the connection's
/// memory too little room for them); past it the query is emptied before libmicrohttpd parses it
/// and the request's slot starts out as a marker that CMicroHTTPD_query_refused recognises.
#define CMicroHTTPD_MAX_QUERY_ARGUMENTS 64

/// Whether a request slot holds the marker of a refused query (the slot is then no state of ours).
///
/// Exists because libmicrohttpd 0.9.75 runs out of connection memory on a few hundred query
/// arguments and then hangs the connection without an answer; see shim.c.
bool CMicroHTTPD_query_refused(const void *request_slot);

/// The listening socket, so the owner can stop accepting before a graceful shutdown.
///
/// Exists because MHD_get_daemon_info is variadic.
int CMicroHTTPD_listen_fd(struct MHD_Daemon *daemon);

/// How a request's framing fields conflict (RFC 9112 §6.3), from CMicroHTTPD_read_head.
typedef enum {
    CMicroHTTPD_FRAMING_CLEAR = 0,            ///< At most one length, or chunked alone.
    CMicroHTTPD_FRAMING_DIFFERENT_LENGTHS = 1, ///< Content-Length given with different values.
    CMicroHTTPD_FRAMING_LENGTH_AND_CODING = 2, ///< Content-Length beside Transfer-Encoding.
    CMicroHTTPD_FRAMING_FOLDED = 3,           ///< A field folded onto a second line (any field: a fold can build a framing field's name).
} CMicroHTTPD_Framing;

/// What the request handler reads from a request head, found in one pass over its fields.
/// Each value points into libmicrohttpd's parsed request (valid during the handler call).
typedef struct {
    CMicroHTTPD_Framing framing;      ///< How the framing fields conflict, if they do.
    const char *content_length;      ///< The first Content-Length (NULL: none).
    const char *transfer_encoding;   ///< The first Transfer-Encoding (NULL: none).
    int transfer_encodings;          ///< How many Transfer-Encoding fields there are (RFC 9110 §5.3: one list).
    const char *if_none_match;       ///< The first If-None-Match (NULL: none).
    const char *request_id;          ///< The first X-Request-Id (NULL: none).
    const char *content_type;        ///< The first Content-Type (NULL: none).
    const char *expect;              ///< The first Expect (NULL: none).
    const char *origin;              ///< The first Origin (NULL: none).
    int has_query;                   ///< Non-zero when the URL has at least one query argument.
} CMicroHTTPD_RequestHead;

/// Reads a request head's framing, conditional, request-id, content-type, expect and origin fields and
/// whether it has a query, and looks at every Content-Length and Transfer-Encoding field for a
/// conflict.
///
/// Decides: `framing` (a conflict, or a fold anywhere in the head). Everything else is reported
/// as found; the Swift side judges it.
///
/// Exists because it runs on every request: one C iterator over libmicrohttpd's parsed fields
/// (`MHD_get_connection_values`) costs no allocation and replaces a lookup per field, each of
/// which walks the whole list again. It also spots any folded field (obs-fold): 0.9.75 appends
/// the continuation to the field's *name* (`Transfer-Encoding:` CRLF ` chunked` becomes
/// `Transfer-Encodingchunked`, `Content: 5` CRLF ` -Length` becomes `Content-Length`), where a
/// proxy that unfolds it reads another field. A value is the first field of its name
/// (case-insensitive), as `MHD_lookup_connection_value` finds it.
void CMicroHTTPD_read_head(struct MHD_Connection *connection, CMicroHTTPD_RequestHead *head);

#endif
